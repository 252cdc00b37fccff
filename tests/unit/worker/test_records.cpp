// Internal topic record formats (connect-reference.md section 5).
#include <catch2/catch.hpp>

#include "worker/storage/json_compact.h"
#include "worker/storage/records.h"

using namespace kc::storage;

TEST_CASE("config keys parse by prefix, task numbers after the last dash", "[worker][records]") {
  auto k = parse_config_key("task-my-conn-12");
  CHECK(k.kind == ConfigKeyKind::Task);
  CHECK(k.name == "my-conn");
  CHECK(k.task == 12);
  CHECK(parse_config_key("connector-a-b").kind == ConfigKeyKind::Connector);
  CHECK(parse_config_key("connector-a-b").name == "a-b");
  CHECK(parse_config_key("commit-x").kind == ConfigKeyKind::Commit);
  CHECK(parse_config_key("target-state-x").kind == ConfigKeyKind::TargetState);
  CHECK(parse_config_key("tasks-fencing-x").kind == ConfigKeyKind::TasksFencing);
  CHECK(parse_config_key("session-key").kind == ConfigKeyKind::SessionKey);
  CHECK(parse_config_key("restart-connector-x").kind == ConfigKeyKind::RestartConnector);
  CHECK(parse_config_key("task-bad-x").kind == ConfigKeyKind::Unknown);
  CHECK(parse_config_key("whatever").kind == ConfigKeyKind::Unknown);
  CHECK(task_config_key({"c-1", 3}) == "task-c-1-3");
}

TEST_CASE("connector names a REST path cannot address", "[worker][records]") {
  CHECK_FALSE(addressable_connector_name(""));
  CHECK_FALSE(addressable_connector_name("."));
  CHECK_FALSE(addressable_connector_name(".."));
  // Percent-encoding reaches these, so they stay.
  CHECK(addressable_connector_name("c"));
  CHECK(addressable_connector_name("..."));
  CHECK(addressable_connector_name(".c"));
  CHECK(addressable_connector_name("a/b"));
  CHECK(addressable_connector_name(" "));
  CHECK(addressable_connector_name("my conn"));
  // The empty name is what the bare prefixes carry.
  CHECK(parse_config_key("connector-").kind == ConfigKeyKind::Connector);
  CHECK(parse_config_key("connector-").name.empty());
  CHECK(parse_config_key("target-state-").name.empty());
  CHECK(parse_config_key("task--0").kind == ConfigKeyKind::Unknown);
}

TEST_CASE("config values have Connect's JSON shapes", "[worker][records]") {
  CHECK(encode_properties({{"b", "2"}, {"a", "1"}}) == R"({"properties":{"a":"1","b":"2"}})");
  auto p = decode_properties(R"({"properties":{"x":"y","n":5}})");
  REQUIRE(p);
  CHECK(p->at("x") == "y");
  CHECK(p->at("n") == "5");
  CHECK_FALSE(decode_properties("{}"));
  CHECK_FALSE(decode_properties("not json"));

  CHECK(encode_commit(3) == R"({"tasks":3})");
  CHECK(*decode_commit(R"({"tasks":3})") == 3);
  CHECK_FALSE(decode_commit(R"({"tasks":"3"})"));

  CHECK(encode_target_state(TargetState::Started) == R"({"state":"STARTED","state.v2":"STARTED"})");
  CHECK(encode_target_state(TargetState::Stopped) == R"({"state":"PAUSED","state.v2":"STOPPED"})");
  CHECK(*decode_target_state(R"({"state":"PAUSED","state.v2":"STOPPED"})") == TargetState::Stopped);
  CHECK(*decode_target_state(R"({"state":"PAUSED"})") == TargetState::Paused);
  CHECK_FALSE(decode_target_state(R"({"state":"NOPE"})"));
}

TEST_CASE("offset keys are byte-identical to Connect's", "[worker][records]") {
  OrderedJson part = {{"filename", "/tmp/in.txt"}};
  CHECK(encode_offset_key("file-source", part) == R"(["file-source",{"filename":"/tmp/in.txt"}])");
  // Member order is insertion order, not sorted.
  OrderedJson p2 = OrderedJson::object();
  p2["z"] = 1;
  p2["a"] = "x";
  CHECK(encode_offset_key("c", p2) == R"(["c",{"z":1,"a":"x"}])");
  auto k = decode_offset_key(R"(["c",{"z":1,"a":"x"}])");
  REQUIRE(k);
  CHECK(k->connector == "c");
  CHECK(encode_offset_key(k->connector, k->partition) == R"(["c",{"z":1,"a":"x"}])");
  CHECK_FALSE(decode_offset_key(R"(["c",null])"));
  CHECK_FALSE(decode_offset_key(R"(["c"])"));
  CHECK_FALSE(decode_offset_key(R"({"c":1})"));
}

TEST_CASE("compact JSON escapes like Jackson", "[worker][records]") {
  OrderedJson s = std::string("a\"b\\c\n\x01/\xc3\xa9");
  CHECK(to_compact_json(s) == "\"a\\\"b\\\\c\\n\\u0001/\xc3\xa9\"");
  OrderedJson arr = {1, -2, true, nullptr, "x"};
  CHECK(to_compact_json(arr) == R"([1,-2,true,null,"x"])");
}

TEST_CASE("status values and keys", "[worker][records]") {
  StatusValue v{StatusState::Running, std::nullopt, "w1:8083", 7};
  CHECK(encode_status(v) == R"({"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":7})");
  auto d = decode_status(encode_status(v));
  REQUIRE(d);
  CHECK(*d == v);
  StatusValue f{StatusState::Failed, std::string("boom\n\tat x"), "w2", 3};
  CHECK(*decode_status(encode_status(f)) == f);
  CHECK_FALSE(decode_status(R"({"state":"WHAT"})"));

  CHECK(connector_status_key("c") == "status-connector-c");
  CHECK(task_status_key({"my-c", 2}) == "status-task-my-c-2");
  auto k = parse_status_key("status-task-my-c-2");
  REQUIRE(k);
  REQUIRE(k->task);
  CHECK(k->task->connector == "my-c");
  CHECK(k->task->task == 2);
  CHECK(parse_status_key("status-connector-c")->connector == "c");
  CHECK_FALSE(parse_status_key("status-topic-t:connector-c"));
}
