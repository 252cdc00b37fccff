// Issue 23 item 4: the read and write rules of the internal topics' records.
// Every record a reader skips is one a writer refuses (or, for statuses,
// makes safe); nothing deep, huge or not UTF-8 is ever built or written.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "common/json_bounds.h"
#include "common/names.h"
#include "worker/storage/json_compact.h"
#include "worker/storage/records.h"

using namespace kc::storage;

namespace {

/// `depth` nested arrays around 1: "[[1]]" for 2.
std::string nested(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

/// An ordered tree of `depth` nested objects {"a":{"a":...}}.
OrderedJson nested_object(std::size_t depth) {
  OrderedJson v = 1;
  for (std::size_t i = 0; i < depth; ++i) {
    OrderedJson o = OrderedJson::object();
    o["a"] = std::move(v);
    v = std::move(o);
  }
  return v;
}

const std::string kBadUtf8 = "poison\xFE";

}  // namespace

TEST_CASE("stored connector names: any valid UTF-8 a REST path can address", "[worker][records][hostile]") {
  CHECK(stored_connector_name_error(kBadUtf8) == "connector name is not valid UTF-8");
  CHECK(stored_connector_name_error("\xC0\xAF"));  // overlong '/'
  CHECK(stored_connector_name_error(""));
  CHECK(stored_connector_name_error("."));
  CHECK(stored_connector_name_error(".."));
  // Odd but readable (and deletable): these were accepted by older versions.
  for (const std::string& name : std::vector<std::string>{"a b", "a/b", "%41", "\xC3\xBCnicode", "tab\there",
                                                          "ctl\x01", " ", std::string(5000, 'x')})
    CHECK_FALSE(stored_connector_name_error(name));
  // A new connector follows the stricter rule.
  CHECK(kc::connector_name_error("ctl\x01"));
  CHECK(kc::connector_name_error(std::string(5000, 'x')));
}

TEST_CASE("config records every reader skips, and the ones it reads", "[worker][records][hostile]") {
  const std::string props = R"({"properties":{"connector.class":"X"}})";
  // Keys.
  CHECK(config_record_error("connector-" + kBadUtf8, props) == "connector name is not valid UTF-8");
  CHECK(config_record_error("target-state-" + kBadUtf8, encode_target_state(TargetState::Paused)));
  CHECK(config_record_error("task-" + kBadUtf8 + "-0", props));
  CHECK(config_record_error("commit-" + kBadUtf8, std::nullopt));  // tombstones too
  CHECK(config_record_error("whatever", props) == "unknown key");
  CHECK(config_record_error("session-key", std::nullopt));
  // Values.
  CHECK(config_record_error("connector-c", std::string("not json")));
  CHECK(config_record_error("connector-c", std::string("{\"properties\":{\"password\":\"\xFF\"}}")));
  auto deep = config_record_error("connector-c", R"({"properties":)" + nested(100000) + "}");
  REQUIRE(deep);
  CHECK(deep->find("deeper than 64 levels") != std::string::npos);
  CHECK(config_record_error("connector-c", std::string(R"({"properties":[1,2]})")));
  CHECK(config_record_error("connector-c", std::string(R"({"properties":"x"})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":-1})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":2147483648})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":18446744073709551615})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":1e30})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":1e999})")));
  CHECK(config_record_error("commit-c", std::string(R"({"tasks":"2"})")));
  CHECK(config_record_error("tasks-fencing-c", std::string(R"({"task-count":2147483648})")));
  CHECK(config_record_error("target-state-c", std::string(R"({"state":5})")));
  CHECK(config_record_error("restart-connector-c", nested(65)));
  CHECK(config_record_error("session-key", std::string(R"({"key":"a","algorithm":"b","creation-timestamp":18446744073709551615})")));
  // Good records; a count of 2^31-1 is readable: it makes its connector
  // inconsistent, it is not a parse error.
  CHECK_FALSE(config_record_error("connector-a b/%41", props));
  CHECK_FALSE(config_record_error("commit-c", encode_commit(2147483647)));
  CHECK_FALSE(config_record_error("connector-c", std::nullopt));
  CHECK_FALSE(config_record_error("connector-c", R"({"properties":{"n":)" + nested(62) + "}}"));
  CHECK_FALSE(config_record_error("session-key", encode_session_key({"a2V5", "HmacSHA256", 1})));
}

TEST_CASE("config maps with invalid UTF-8 are named by key, never by value", "[worker][records][hostile]") {
  CHECK_FALSE(config_map_error({{"a", "b"}, {"\xC3\xBC", "\xE2\x82\xAC"}}));
  auto e = config_map_error({{"connection.password", "secret\xFF"}});
  REQUIRE(e);
  CHECK(e->find("connection.password") != std::string::npos);
  CHECK(e->find("secret") == std::string::npos);
  CHECK(config_map_error({{"k\xFF", "v"}}) == "config key 'k\\xFF' is not valid UTF-8");
}

TEST_CASE("compact JSON refuses to write deeper than every reader reads", "[worker][records][hostile]") {
  CHECK(to_compact_json(nested_object(64)).size() > 0);
  CHECK_THROWS_AS(to_compact_json(nested_object(65)), kc::JsonTooDeep);
  OrderedJson arr = OrderedJson::array();
  for (int i = 0; i < 64; ++i) arr = OrderedJson::array({arr});
  CHECK_THROWS_AS(to_compact_json(arr), kc::JsonTooDeep);  // 65 levels of arrays
}

TEST_CASE("offset records: refused when unreadable, skipped when read", "[worker][records][hostile][offsets]") {
  const OrderedJson part = {{"file", "/tmp/x"}};
  const OrderedJson off = {{"position", 3}};
  auto good = encode_offset_record("c", part, off);
  REQUIRE(good);
  CHECK(good->key == R"(["c",{"file":"/tmp/x"}])");
  CHECK(*good->value == R"({"position":3})");
  auto tomb = encode_offset_record("c", part, std::nullopt);
  REQUIRE(tomb);
  CHECK_FALSE(tomb->value);

  auto refused = [](const kc::Result<OffsetRecord>& r, const std::string& words) {
    INFO(words);
    REQUIRE_FALSE(r);
    CHECK(is_unreadable_record_error(r.error()));
    CHECK(r.error().message.find(words) != std::string::npos);
  };
  refused(encode_offset_record(kBadUtf8, part, off), "not valid UTF-8");
  refused(encode_offset_record("c", OrderedJson::array({1}), off), "must be a JSON object");
  refused(encode_offset_record("c", nested_object(64), off), "deeper than 64");  // + the key's array
  CHECK(encode_offset_record("c", nested_object(63), off));
  refused(encode_offset_record("c", part, nested_object(65)), "deeper than 64");
  CHECK(encode_offset_record("c", part, nested_object(64)));
  refused(encode_offset_record("c", {{"file", "x\xFF"}}, off), "partition holds a string that is not valid UTF-8");
  refused(encode_offset_record("c", part, OrderedJson{{"gtid", "secret\xFF"}}), "offset holds a string");
  refused(encode_offset_record("c", {{"file", std::string(kMaxOffsetKeyBytes, 'x')}}, off), "the limit is 65536");
  refused(encode_offset_record("c", part, OrderedJson{{"g", std::string(kMaxOffsetValueBytes, 'x')}}),
          "the limit is 524288");
  // JSON has no NaN or infinity: written as null, the key would name another partition.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  refused(encode_offset_record("c", {{"file", "x"}, {"n", nan}}, off), "partition holds a NaN or infinite");
  refused(encode_offset_record("c", {{"file", OrderedJson::array({1, inf})}}, off), "partition holds a NaN");
  refused(encode_offset_record("c", part, OrderedJson{{"pos", -inf}}), "offset holds a NaN or infinite");
  CHECK(encode_offset_record("c", {{"n", 1.5}}, OrderedJson{{"pos", 2.25}}));
  // No message quotes a value.
  auto r = encode_offset_record("c", part, OrderedJson{{"gtid", "secret\xFF"}});
  CHECK(r.error().message.find("secret") == std::string::npos);

  // Reading: depth is checked while parsing, before a deeper tree exists.
  CHECK_FALSE(decode_offset_key("[\"c\"," + nested(100000) + "]"));
  CHECK_FALSE(decode_offset_value(nested(100000)));
  CHECK(decode_offset_value(nested(64)));
  CHECK_FALSE(decode_offset_value("{\"a\":\"\xFF\"}"));
  CHECK_FALSE(decode_offset_key(R"(["c",[1]])"));
  CHECK_FALSE(decode_offset_key("not json"));
  CHECK(decode_offset_key(good->key));
}

TEST_CASE("status values are made storable, never refused", "[worker][records][hostile][status]") {
  CHECK(to_valid_utf8("ok \xC3\xBC") == "ok \xC3\xBC");
  CHECK(to_valid_utf8("a\xFF" "b\xC3") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");

  StatusValue v{StatusState::Failed, std::string("boom \xFE\xFF end"), "w\xFF:8083", 7};
  auto safe = storable_status(v);
  CHECK(*safe.trace == "boom \xEF\xBF\xBD\xEF\xBF\xBD end");
  CHECK(safe.worker_id == "w\xEF\xBF\xBD:8083");
  auto back = decode_status(encode_status(v));  // encode_status makes it storable itself
  REQUIRE(back);
  CHECK(*back == safe);

  // A huge trace keeps its head, cut on a character boundary, with a note,
  // within the bound; storing it again changes nothing.
  for (int shift = 0; shift < 3; ++shift) {
    std::string huge = "ConnectException: " + std::string(shift, 'x');
    for (int i = 0; i < 100000; ++i) huge += "\xE2\x82\xAC";  // 3-byte characters across the cut
    v.trace = huge;
    safe = storable_status(v);
    REQUIRE(safe.trace);
    CHECK(safe.trace->rfind("ConnectException: ", 0) == 0);
    CHECK(safe.trace->size() <= kMaxStatusTraceBytes);
    CHECK(safe.trace->size() > kMaxStatusTraceBytes - 100);
    CHECK(kc::is_valid_utf8(*safe.trace));
    CHECK(safe.trace->find("[trace cut: " + std::to_string(huge.size()) + " bytes in all]") != std::string::npos);
    CHECK(storable_status(safe) == safe);
    CHECK(decode_status(encode_status(v)).value() == safe);
  }

  // Reading: absurd numbers and unknown states are skipped, never echoed.
  CHECK_FALSE(decode_status(R"({"state":"RUNNING","trace":null,"worker_id":"w","generation":1099511627776})"));
  CHECK_FALSE(decode_status(R"({"state":"RUNNING","generation":1.5})"));
  auto unknown = decode_status(R"({"state":"hunter2"})");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().to_string().find("hunter2") == std::string::npos);
  CHECK_FALSE(decode_status(nested(70)));
  CHECK_FALSE(decode_topic_status(R"({"topic":{"name":"t","connector":"c","task":4294967296}})"));
}

TEST_CASE("status records every reader skips", "[worker][records][hostile][status]") {
  const auto good = encode_status({StatusState::Running, std::nullopt, "w:1", 1});
  auto c = decode_status_record("status-connector-a b", good);
  REQUIRE(c);
  CHECK(*c->connector == "a b");
  auto t = decode_status_record("status-task-a-b-3", std::nullopt);
  REQUIRE(t);
  CHECK(*t->task == kc::connect::ConnectorTaskId{"a-b", 3});
  CHECK_FALSE(t->status);
  auto topic = decode_status_record(topic_status_key("t", "c"), encode_topic_status({"t", "c", 0, 5}));
  REQUIRE(topic);
  CHECK(topic->topic_status->discover_timestamp_ms == 5);

  CHECK_FALSE(decode_status_record("status-connector-" + kBadUtf8, good));
  CHECK_FALSE(decode_status_record("status-task-" + kBadUtf8 + "-0", std::nullopt));
  CHECK_FALSE(decode_status_record("status-connector-", good));
  CHECK_FALSE(decode_status_record("status-topic-t\xFF:connector-c", std::nullopt));
  CHECK_FALSE(decode_status_record("status-whatever", good));
  CHECK_FALSE(decode_status_record("status-connector-c", std::string("{")));
}

TEST_CASE("keys in log lines are printable and short", "[worker][records][hostile]") {
  CHECK(printable_key("connector-a b") == "connector-a b");
  CHECK(printable_key("connector-\xC3\xBC") == "connector-\xC3\xBC");
  CHECK(printable_key("connector-poison\xFE") == "connector-poison\\xFE");
  CHECK(printable_key("a\x01\\b\n") == "a\\x01\\x5Cb\\x0A");
  CHECK(printable_key("c1 \xC2\x85") == "c1 \\xC2\\x85");
  auto long_key = printable_key(std::string(5000, 'k'));
  CHECK(long_key == std::string(200, 'k') + "... (5000 bytes)");
}
