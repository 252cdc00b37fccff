// libFuzzer target: ConnectorConfig::parse (worker/runtime/connector_config.h),
// the one reader of a connector's string map, on a fuzzed config.
//
// Input: byte 0 picks the worker's side (bit 0 exactly.once.source.support,
// bits 1-2 the client override policy, bit 3 tasks.max.limit 4 instead of
// the default); the rest is `key=value` lines (at most kMaxEntries, keys
// and values cut at kMaxLength bytes). A key written `$key` came from a
// config provider: the raw map holds a placeholder, the resolved map the
// value. parse's contract: it never throws and never fails as a whole,
// each part keeps its own error. Checked besides: the parts hold what the
// map says (tasks within 1..limit unless tasks_error, the chain only when
// `transforms` is set, sink-only and source-only fields), and secret_values
// are values of the config, longest first, never shorter than the scrub
// minimum.
#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "common/strings.h"
#include "tests/fuzz/fuzz_input.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/connector_config.h"

namespace {

using namespace kc;
using connectors::ConfigMap;

constexpr size_t kMaxEntries = 64;   ///< configs are small; more adds no paths
constexpr size_t kMaxLength = 512;   ///< per key and per value

/// The connector config the input describes (see file comment).
struct FuzzConfig {
  ConfigMap raw, resolved;
  std::set<std::string> resolved_keys;
};

FuzzConfig decode(std::string_view in) {
  FuzzConfig out;
  while (!in.empty() && out.resolved.size() < kMaxEntries) {
    std::string_view line = fuzz::take_until(in, '\n', in);
    if (line.data() == in.data() && line.size() == in.size()) in = {};  // the last line
    auto eq = line.find('=');
    std::string_view key = line.substr(0, std::min(eq, kMaxLength));
    std::string_view value = eq == std::string_view::npos ? std::string_view{} : line.substr(eq + 1);
    value = value.substr(0, std::min(value.size(), kMaxLength));
    const bool provided = key.starts_with('$');
    if (provided) key.remove_prefix(1);
    std::string k(key);
    out.resolved[k] = std::string(value);
    if (provided) {
      out.raw[k] = "${fuzz:" + k + "}";
      out.resolved_keys.insert(k);
    } else {
      out.raw[k] = std::string(value);
      out.resolved_keys.erase(k);
    }
  }
  return out;
}

std::string value_of(const ConfigMap& c, const std::string& k) {
  auto it = c.find(k);
  return it == c.end() ? std::string() : it->second;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const FuzzConfig fc = decode(fuzz::as_text(data + 1, size - 1));

  runtime::ConnectorConfigInputs in;
  in.exactly_once_source = (flags & 1) != 0;
  in.client_override_policy = static_cast<runtime::ClientOverridePolicy>((flags >> 1) % 3);
  if (flags & 8) in.tasks_max_limit = 4;
  in.key_converter = {"org.apache.kafka.connect.json.JsonConverter", {{"schemas.enable", "false"}}};
  in.value_converter = in.key_converter;
  in.header_converter = {"org.apache.kafka.connect.storage.SimpleHeaderConverter", {}};
  in.worker_consumer = {{"group.id", "worker-group"}};
  in.worker_offsets_topic = "connect-offsets";

  const auto& registry = connectors::PluginRegistry::builtin();
  // The contract: no exception escapes (libFuzzer reports an escaped one as a crash).
  const auto c = runtime::ConnectorConfig::parse("fuzzed", fc.raw, fc.resolved, fc.resolved_keys, registry, in);

  KC_FUZZ_CHECK(c.raw == fc.raw && c.values == fc.resolved && c.resolved_keys == fc.resolved_keys);
  KC_FUZZ_CHECK(c.connector_class == value_of(fc.resolved, "connector.class"));
  if (!c.tasks_error) KC_FUZZ_CHECK(c.tasks.max_tasks >= 1 && c.tasks.max_tasks <= in.tasks_max_limit);
  KC_FUZZ_CHECK(c.transform_chain.empty() == kc::trim(value_of(fc.resolved, "transforms")).empty());
  for (const auto& [k, v] : c.transform_chain) KC_FUZZ_CHECK(value_of(fc.resolved, k) == v);
  if (c.type == connectors::ConnectorType::Sink) {
    KC_FUZZ_CHECK(!c.offsets_topic && c.transaction_boundary.empty());
  } else {
    KC_FUZZ_CHECK(c.sink_group_id.empty() && c.sink_topics.empty());
    KC_FUZZ_CHECK(!c.offsets_topic || (in.exactly_once_source && *c.offsets_topic != in.worker_offsets_topic));
  }
  for (size_t i = 0; i < c.secret_values.size(); ++i) {
    KC_FUZZ_CHECK(c.secret_values[i].size() >= secrets::kMinScrubLength);
    KC_FUZZ_CHECK(i == 0 || c.secret_values[i - 1].size() >= c.secret_values[i].size());
  }
  for (const auto& k : fc.resolved_keys) {
    const auto& v = fc.resolved.at(k);
    if (v.size() >= secrets::kMinScrubLength)
      KC_FUZZ_CHECK(std::find(c.secret_values.begin(), c.secret_values.end(), v) != c.secret_values.end());
  }
  // A task's view: the connector's secrets plus the task config's own.
  const auto task = c.task_secret_values(fc.resolved, fc.resolved_keys);
  KC_FUZZ_CHECK(task.size() >= c.secret_values.size());
  return 0;
}
