// PluginRegistry::validate (PUT /connector-plugins/{p}/config/validate and
// the create/update check): every error of every key in one ConfigInfos,
// Connect's "Connector configuration is invalid and contains the following
// N error(s)" text listing them all, and tasks.max from 1 to the worker's
// tasks.max.limit (ValidateContext).
#include <catch2/catch.hpp>

#include <string>

#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"
#include "worker/plugins/registry.h"

using namespace kc::connectors;

namespace {

const std::vector<std::string>& errors_of(const ConfigValidation& v, const std::string& key) {
  static const std::vector<std::string> none;
  for (const auto& c : v.configs)
    if (c.definition.name == key) return c.value.errors;
  return none;
}

ConfigMap source(std::string tasks_max) {
  return {{"name", "s"},
          {"connector.class", "FileStreamSource"},
          {"file", "/tmp/in.txt"},
          {"topic", "t"},
          {"tasks.max", std::move(tasks_max)}};
}

}  // namespace

TEST_CASE("tasks.max: an integer from 1 to the worker's tasks.max.limit", "[config][validate]") {
  const auto& reg = PluginRegistry::builtin();
  ValidateContext ctx;
  ctx.tasks_max_limit = 50;
  CHECK(reg.validate(source("1"), ctx).error_count == 0);
  CHECK(reg.validate(source("50"), ctx).error_count == 0);

  auto above = reg.validate(source("51"), ctx);
  CHECK(above.error_count == 1);
  CHECK(errors_of(above, "tasks.max") == std::vector<std::string>{
                                             "Invalid value 51 for configuration tasks.max: Value must be no more "
                                             "than 50 (the worker's tasks.max.limit)"});
  // The 1e9: refused by the default limit (1000) too.
  CHECK(errors_of(reg.validate(source("1000000000")), "tasks.max") ==
        std::vector<std::string>{"Invalid value 1000000000 for configuration tasks.max: Value must be no more than "
                                 "1000 (the worker's tasks.max.limit)"});
  CHECK(errors_of(reg.validate(source("0"), ctx), "tasks.max") ==
        std::vector<std::string>{"Invalid value 0 for configuration tasks.max: Value must be at least 1"});
  for (const char* not_int : {"abc", "1.5", "1e999", "99999999999", ""}) {
    INFO(not_int);
    auto v = reg.validate(source(not_int), ctx);
    REQUIRE(errors_of(v, "tasks.max").size() == 1);
    CHECK(errors_of(v, "tasks.max")[0].find("for configuration tasks.max: Not a number of type INT") !=
          std::string::npos);
  }
  // An unknown connector class: the common keys, tasks.max included, still checked.
  auto unknown = source("51");
  unknown["connector.class"] = "NoSuchConnector";
  auto v = reg.validate(unknown, ctx);
  CHECK(errors_of(v, "tasks.max").size() == 1);
  CHECK(errors_of(v, "connector.class").size() == 1);
  CHECK(v.error_count == 2);
}

TEST_CASE("tasks.max: create-time validation and the runtime apply one rule with one message",
          "[config][validate]") {
  // Both call connectors::tasks_max_value; the runtime (parse_tasks_max, used
  // by the herder's leader and runtime::Worker) used to refuse " 2 ", which
  // validation (trimming, as Connect's ConfigDef does) had accepted.
  const auto& reg = PluginRegistry::builtin();
  ValidateContext ctx;
  ctx.tasks_max_limit = 50;
  for (const char* value : {"1", " 2 ", "50", "51", "1000000000", "0", "-3", "abc", "1.5", "99999999999", ""}) {
    INFO("tasks.max='" << value << "'");
    const auto created = errors_of(reg.validate(source(value), ctx), "tasks.max");
    const auto run = parse_tasks_max({{"tasks.max", value}}, ctx.tasks_max_limit);
    if (run) {
      CHECK(created.empty());
    } else {
      REQUIRE(created.size() == 1);
      CHECK(created[0] == run.error().message);
      CHECK(run.error().message == tasks_max_value(value, ctx.tasks_max_limit).error().message);
    }
  }
  auto spaced = parse_tasks_max({{"tasks.max", " 2 "}}, 50);
  REQUIRE(spaced);
  CHECK(spaced->max_tasks == 2);
}

TEST_CASE("validate: every error of every key at once, and the create/update text lists them all",
          "[config][validate]") {
  const auto& reg = PluginRegistry::builtin();
  ConfigMap c = source("5000");
  c.erase("name");                       // missing required
  c["key.converter"] = "NoSuchConverter";  // unknown class
  c["errors.tolerance"] = "sometimes";   // not one of none|all
  c["errors.log.enable"] = "maybe";      // not a boolean
  auto v = reg.validate(c);
  CHECK(errors_of(v, "name").size() == 1);
  CHECK(errors_of(v, "tasks.max").size() == 1);
  CHECK(errors_of(v, "key.converter").size() == 1);
  CHECK(errors_of(v, "errors.tolerance").size() == 1);
  CHECK(errors_of(v, "errors.log.enable").size() == 1);
  CHECK(v.error_count == 5);
  const std::string text = v.invalid_message();
  CHECK(text.starts_with("Connector configuration is invalid and contains the following 5 error(s):\n"));
  for (const char* key : {"name", "tasks.max", "key.converter", "errors.tolerance", "errors.log.enable"}) {
    INFO(key);
    CHECK(text.find(errors_of(v, key).at(0)) != std::string::npos);
  }
  CHECK(text.ends_with("`/connector-plugins/{connectorType}/config/validate`"));
}

TEST_CASE("validate: a rule's error on a key no definition has still counts", "[config][validate]") {
  ConfigDefs defs{config_key("a", ConfigType::String, false, std::nullopt, ConfigImportance::Low, "a")};
  ConfigRule rule = [](const ConfigMap&, ConfigErrors& e) { e["undeclared.password"].push_back("bad combination"); };
  auto v = validate_config("X", defs, rule, {{"a", "1"}, {"undeclared.password", "s3cret"}});
  CHECK(v.error_count == 1);
  REQUIRE(v.configs.size() == 2);
  CHECK(v.configs[1].definition.name == "undeclared.password");
  CHECK(v.configs[1].value.errors == std::vector<std::string>{"bad combination"});
  CHECK(v.configs[1].value.value == std::string("[hidden]"));
  CHECK(v.invalid_message().find("bad combination") != std::string::npos);
}
