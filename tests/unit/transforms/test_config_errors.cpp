// Each transformation and predicate refuses a bad config with Connect's
// ConfigException text, reported under its full connector config key
// (transforms.<alias>.<key> / predicates.<alias>.<key>) by the chain.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "worker/transforms/builtin_util.h"
#include "worker/transforms/chain.h"

using kc::transforms::Config;
using kc::transforms::ConfigError;
using kc::transforms::TransformChain;

namespace {

struct Case {
  std::string type;    ///< transforms.t.type
  Config config;       ///< the transform's own keys (no prefix)
  std::string key;     ///< the full key the error is reported under
  std::string message; ///< Connect's message
};

std::vector<ConfigError> errors_of(const std::string& type, const Config& own) {
  Config c{{"transforms", "t"}, {"transforms.t.type", type}};
  for (const auto& [k, v] : own) c["transforms.t." + k] = v;
  std::vector<ConfigError> errors;
  auto chain = TransformChain::build(c, &errors);
  if (chain) return {};
  return errors;
}

std::string missing(const std::string& key) {
  return "Missing required configuration \"" + key + "\" which has no default value.";
}

}  // namespace

TEST_CASE("every transformation refuses a bad config with Connect's message", "[transforms][config]") {
  const std::vector<Case> cases = {
      {"Cast$Value", {}, "transforms.t.spec", missing("spec")},
      {"Cast$Key", {{"spec", "a:int"}}, "transforms.t.spec",
       // Connect's own (odd) wording: the enum lookup's exception as the "value".
       "Invalid value java.lang.IllegalArgumentException: No enum constant "
       "org.apache.kafka.connect.data.Schema.Type.INT for configuration Invalid type found in casting spec: int"},
      {"DropHeaders", {}, "transforms.t.headers", missing("headers")},
      {"ExtractField$Value", {}, "transforms.t.field", missing("field")},
      {"ExtractField$Key", {}, "transforms.t.field", missing("field")},
      {"HeaderFrom$Value", {{"fields", "a"}, {"headers", "h"}}, "transforms.t.operation", missing("operation")},
      {"HoistField$Value", {}, "transforms.t.field", missing("field")},
      {"InsertField$Value", {}, "transforms.t.type", "No field insertion configured"},
      {"InsertHeader", {{"value.literal", "v"}}, "transforms.t.header", missing("header")},
      {"MaskField$Value", {}, "transforms.t.fields", missing("fields")},
      {"RegexRouter", {{"replacement", "x"}}, "transforms.t.regex", missing("regex")},
      {"ReplaceField$Value", {{"renames", "a"}}, "transforms.t.renames",
       "Invalid value [a] for configuration renames: Invalid rename mapping: a"},
      {"SetSchemaMetadata$Value", {{"schema.version", "two"}}, "transforms.t.schema.version",
       "Invalid value two for configuration schema.version: Not a number of type INT"},
      {"TimestampConverter$Value", {}, "transforms.t.target.type", missing("target.type")},
      {"TimestampConverter$Value", {{"target.type", "epoch"}}, "transforms.t.target.type",
       "Invalid value epoch for configuration target.type: String must be one of: string, unix, Date, Time, "
       "Timestamp"},
      {"ValueToKey", {}, "transforms.t.fields", missing("fields")},
  };
  for (const auto& c : cases) {
    INFO(c.type);
    auto errors = errors_of(c.type, c.config);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].key == c.key);
    CHECK(errors[0].message.rfind(c.message, 0) == 0);
  }
  // Flatten, Filter and TimestampRouter have defaults for every key.
  for (const char* t : {"Flatten$Value", "Filter", "TimestampRouter"}) CHECK(errors_of(t, {}).empty());
}

TEST_CASE("every predicate refuses a bad config, chain keys are checked", "[transforms][config]") {
  auto build = [](const Config& c) {
    std::vector<ConfigError> errors;
    (void)TransformChain::build(c, &errors);
    return errors;
  };
  auto with_predicate = [](const std::string& type, const Config& own) {
    Config c{{"transforms", "t"}, {"transforms.t.type", "Filter"}, {"transforms.t.predicate", "p"},
             {"predicates", "p"}, {"predicates.p.type", type}};
    for (const auto& [k, v] : own) c["predicates.p." + k] = v;
    return c;
  };
  auto e = build(with_predicate("TopicNameMatches", {}));
  REQUIRE(e.size() >= 1);
  CHECK(e[0].key == "predicates.p.pattern");
  CHECK(e[0].message == missing("pattern"));
  e = build(with_predicate("HasHeaderKey", {}));
  REQUIRE(e.size() >= 1);
  CHECK(e[0].key == "predicates.p.name");
  CHECK(build(with_predicate("RecordIsTombstone", {})).empty());

  e = build({{"transforms", "t,t"}, {"transforms.t.type", "Filter"}});
  REQUIRE_FALSE(e.empty());
  CHECK(e[0].key == "transforms");
  CHECK(e[0].message == "Invalid value [t, t] for configuration transforms: Duplicate alias provided.");
  e = build({{"transforms", "t"}});
  REQUIRE(e.size() == 1);
  CHECK(e[0].key == "transforms.t.type");
  CHECK(e[0].message == missing("transforms.t.type"));
  e = build({{"transforms", "t"}, {"transforms.t.type", "Filter"}, {"transforms.t.negate", "maybe"}});
  REQUIRE(e.size() == 1);
  CHECK(e[0].key == "transforms.t.negate");
  // A predicate class given as a transformation is not found.
  e = build({{"transforms", "t"}, {"transforms.t.type", "HasHeaderKey"}});
  REQUIRE(e.size() == 1);
  CHECK(e[0].message == "Invalid value HasHeaderKey for configuration transforms.t.type: Class HasHeaderKey could not "
                        "be found.");
}

TEST_CASE("InsertHeader's value.literal nested past 64 levels stays a string instead of overflowing the stack",
          "[transforms][hostile]") {
  // Values.parseString's array/map literals were read recursively with no
  // bound: a 500,000-deep "[[[...]]]" crashed configure (and kconnectd transform).
  using kc::transforms::detail::parse_literal;
  auto nested = [](std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); };
  for (std::size_t depth : {65u, 500000u}) {
    const std::string text = nested(depth);
    auto v = parse_literal(text);
    CHECK(v.value == kc::data::Value(text));
    CHECK(v.schema == kc::data::STRING_SCHEMA());
  }
  auto ok = parse_literal(nested(64));
  CHECK(ok.value.is<kc::data::Array>());
  auto maps = [](std::size_t depth) {
    std::string s;
    for (std::size_t i = 0; i < depth; ++i) s += "{a:";
    return s + "1" + std::string(depth, '}');
  };
  CHECK(parse_literal(maps(64)).value.is<kc::data::Map>());
  CHECK(parse_literal(maps(65)).value == kc::data::Value(maps(65)));
}
