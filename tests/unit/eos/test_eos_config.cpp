// Connector config checks of exactly-once source support (KIP-618), with
// Connect's keys, defaults and messages (SourceConnectorConfig and
// DistributedHerder.validateSourceConnectorConfig).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"
#include "worker/herder/plugin_config.h"

using namespace kc::connectors;

namespace {

const ConfigEntry* entry(const ConfigValidation& v, const std::string& key) {
  auto it = std::find_if(v.configs.begin(), v.configs.end(),
                         [&](const ConfigEntry& e) { return e.definition.name == key; });
  return it == v.configs.end() ? nullptr : &*it;
}

std::vector<std::string> errors_of(const ConfigValidation& v, const std::string& key) {
  const auto* e = entry(v, key);
  REQUIRE(e != nullptr);
  return e->value.errors;
}

ConfigMap sequence(ConfigMap extra = {}) {
  ConfigMap c{{"name", "seq"}, {"connector.class", "SequenceSource"}, {"topic", "t"}, {"tasks.max", "1"}};
  for (auto& [k, v] : extra) c[k] = v;
  return c;
}

const ValidateContext kEnabled{true};
const ValidateContext kDisabled{false};

/// A source connector that says nothing about exactly once (Connect's null)
/// or whose declaration throws.
class SilentSource : public Connector {
 public:
  explicit SilentSource(bool throws) : throws_(throws) {}
  ConnectorType type() const override { return ConnectorType::Source; }
  void start(const ConfigMap&) override {}
  std::vector<ConfigMap> task_configs(int) override { return {}; }
  void stop() override {}
  ExactlyOnceSupport exactly_once_support(const ConfigMap& c) override {
    if (throws_) throw ConnectError("  cannot tell  ");
    return Connector::exactly_once_support(c);
  }

 private:
  bool throws_;
};

const PluginRegistry& silent_registry() {
  static PluginRegistry r;
  if (r.find("test.SilentSourceConnector")) return r;
  r.add({"test.SilentSourceConnector", ConnectorType::Source, kBuiltinPluginVersion,
         [] { return std::make_unique<SilentSource>(false); }, {}, {}});
  r.add({"test.ThrowingSourceConnector", ConnectorType::Source, kBuiltinPluginVersion,
         [] { return std::make_unique<SilentSource>(true); }, {}, {}});
  return r;
}

}  // namespace

TEST_CASE("a source connector validates Connect's exactly-once keys with their defaults and groups") {
  auto v = PluginRegistry::builtin().validate(sequence(), kEnabled);
  CHECK(v.error_count == 0);
  const auto* eos = entry(v, "exactly.once.support");
  REQUIRE(eos);
  CHECK(eos->definition.default_value == std::optional<std::string>("requested"));
  CHECK(eos->definition.group == "Exactly Once Support");
  CHECK(eos->definition.order_in_group == 2);
  CHECK(entry(v, "transaction.boundary")->definition.default_value == std::optional<std::string>("poll"));
  CHECK(entry(v, "transaction.boundary")->definition.order_in_group == 3);
  CHECK_FALSE(entry(v, "transaction.boundary.interval.ms")->definition.default_value.has_value());
  CHECK(entry(v, "transaction.boundary.interval.ms")->definition.type == ConfigType::Long);
  CHECK(entry(v, "offsets.storage.topic")->definition.group == "offsets.topic");
  CHECK(std::find(v.groups.begin(), v.groups.end(), "Exactly Once Support") != v.groups.end());
  // The keys come after the error handling keys and before the plugin's own (Connect's order).
  auto pos = [&](const std::string& k) { return entry(v, k) - v.configs.data(); };
  CHECK(pos("errors.tolerance") < pos("exactly.once.support"));
  CHECK(pos("offsets.storage.topic") < pos("topic"));
}

TEST_CASE("a sink connector has no exactly-once source keys") {
  ConfigMap sink{{"name", "s"}, {"connector.class", kFileStreamSinkClass}, {"topics", "t"}, {"file", "/tmp/x"}};
  auto v = PluginRegistry::builtin().validate(sink, kEnabled);
  CHECK(entry(v, "exactly.once.support") == nullptr);
  CHECK(entry(v, "transaction.boundary") == nullptr);
}

TEST_CASE("exactly.once.support=required needs the worker's exactly-once support") {
  auto v = PluginRegistry::builtin().validate(sequence({{"exactly.once.support", "required"}}), kDisabled);
  CHECK(errors_of(v, "exactly.once.support") ==
        std::vector<std::string>{"This worker does not have exactly-once source support enabled."});
  CHECK(v.error_count == 1);
  CHECK(PluginRegistry::builtin().validate(sequence({{"exactly.once.support", "required"}}), kEnabled).error_count ==
        0);
  // Parsed as Connect does: case-insensitive, blanks trimmed.
  CHECK(PluginRegistry::builtin().validate(sequence({{"exactly.once.support", " REQUIRED "}}), kEnabled).error_count ==
        0);
  // "requested" never needs the worker's support.
  CHECK(PluginRegistry::builtin().validate(sequence({{"exactly.once.support", "requested"}}), kDisabled).error_count ==
        0);
}

TEST_CASE("the built-in sources declare their exactly-once support") {
  ConfigMap file{{"name", "f"}, {"connector.class", "FileStreamSource"}, {"topic", "t"}, {"file", "/tmp/in.txt"},
                 {"exactly.once.support", "required"}};
  auto v = PluginRegistry::builtin().validate(file, kEnabled);
  CHECK(v.error_count == 0);
  CHECK(entry(v, "exactly.once.support")->value.recommended_values == std::vector<std::string>{"requested", "required"});
  // No file (stdin in Connect): not exactly once.
  file.erase("file");
  v = PluginRegistry::builtin().validate(file, kEnabled);
  CHECK(errors_of(v, "exactly.once.support") ==
        std::vector<std::string>{"The connector does not support exactly-once semantics with the provided configuration."});
  CHECK(entry(v, "exactly.once.support")->value.recommended_values == std::vector<std::string>{"requested"});
  CHECK(entry(PluginRegistry::builtin().validate(sequence(), kEnabled), "exactly.once.support")->value.recommended_values ==
        std::vector<std::string>{"requested", "required"});
}

TEST_CASE("a connector that does not declare its support cannot require exactly once") {
  const auto& r = silent_registry();
  ConfigMap c{{"name", "x"}, {"connector.class", "test.SilentSourceConnector"}, {"exactly.once.support", "required"}};
  auto errs = errors_of(r.validate(c, kEnabled), "exactly.once.support");
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].rfind("The connector does not implement the API required for preflight validation of exactly-once "
                      "source support.",
                      0) == 0);
  CHECK(errs[0].find("the value \"requested\" for this property") != std::string::npos);
  c["connector.class"] = "test.ThrowingSourceConnector";
  CHECK(errors_of(r.validate(c, kEnabled), "exactly.once.support") ==
        std::vector<std::string>{"An unexpected error occurred during validation: cannot tell"});
  // Both reasons at once when the worker is not enabled either.
  c["connector.class"] = "test.SilentSourceConnector";
  CHECK(errors_of(r.validate(c, kDisabled), "exactly.once.support").size() == 2);
}

TEST_CASE("transaction.boundary=connector needs a connector that defines its own transactions") {
  auto v = PluginRegistry::builtin().validate(sequence({{"transaction.boundary", "connector"}}), kEnabled);
  CHECK(errors_of(v, "transaction.boundary") ==
        std::vector<std::string>{"The connector does not support connector-defined transaction boundaries with the "
                                 "given configuration. Please reconfigure it to use a different transaction boundary "
                                 "definition."});
  CHECK(PluginRegistry::builtin().validate(sequence({{"transaction.boundary", "Interval"}}), kEnabled).error_count == 0);
  // As Connect: an interval with another boundary is accepted and has no effect.
  CHECK(PluginRegistry::builtin()
            .validate(sequence({{"transaction.boundary", "poll"}, {"transaction.boundary.interval.ms", "500"}}), kEnabled)
            .error_count == 0);
}

TEST_CASE("bad exactly-once values get Connect's per-key messages") {
  auto v = PluginRegistry::builtin().validate(sequence({{"exactly.once.support", "maybe"},
                                                        {"transaction.boundary", "sometimes"},
                                                        {"transaction.boundary.interval.ms", "-1"},
                                                        {"offsets.storage.topic", " "}}),
                                              kEnabled);
  CHECK(errors_of(v, "exactly.once.support") ==
        std::vector<std::string>{"Invalid value maybe for configuration exactly.once.support: String must be one of "
                                 "(case insensitive): requested, required"});
  CHECK(errors_of(v, "transaction.boundary") ==
        std::vector<std::string>{"Invalid value sometimes for configuration transaction.boundary: String must be one "
                                 "of (case insensitive): poll, interval, connector"});
  CHECK(errors_of(v, "transaction.boundary.interval.ms") ==
        std::vector<std::string>{"Invalid value -1 for configuration transaction.boundary.interval.ms: Value must be "
                                 "at least 0"});
  CHECK(errors_of(v, "offsets.storage.topic") ==
        std::vector<std::string>{"Invalid value   for configuration offsets.storage.topic: String must be non-empty"});
  CHECK(v.error_count == 4);
  // The create/update check rejects the same config with Connect's summary.
  auto rejected = kc::herder::reject_invalid_config(PluginRegistry::builtin(), nullptr,
                                                    sequence({{"exactly.once.support", "required"}}),
                                                    kc::runtime::ClientOverridePolicy::All, kDisabled);
  REQUIRE(rejected);
  CHECK(rejected->message.find("This worker does not have exactly-once source support enabled.") != std::string::npos);
}

TEST_CASE("GET /connector-plugins/{p}/config lists the exactly-once keys of source connectors") {
  auto names = [](const std::string& plugin) {
    auto r = kc::herder::plugin_config(PluginRegistry::builtin(), plugin);
    REQUIRE(r);
    std::vector<std::string> out;
    for (const auto& k : r.value()) out.push_back(k.name);
    return out;
  };
  auto seq = names("SequenceSource");
  CHECK(std::count(seq.begin(), seq.end(), "exactly.once.support") == 1);
  CHECK(std::count(seq.begin(), seq.end(), "transaction.boundary.interval.ms") == 1);
  CHECK(seq.front() == "topic");  // the plugin's own keys first
  auto sink = names("FileStreamSink");
  CHECK(std::count(sink.begin(), sink.end(), "exactly.once.support") == 0);
}
