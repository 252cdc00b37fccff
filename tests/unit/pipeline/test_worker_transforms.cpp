// Transforms (KIP-66) and predicates (KIP-585) in the running task loops,
// through the Worker against librdkafka's mock cluster: a source connector's
// chain rewrites and routes its records before the converters; a sink
// connector's chain filters by a header predicate after them; a transform
// that fails is a TRANSFORMATION-stage error (tolerated → dead letter queue).
// Also the validation of transforms.* / predicates.* keys, per key.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using kc::test::eventually;
using kc::test::lines_of;
using kc::test::header;
using kc::test::read_all;

std::string this_year() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return std::to_string(1900 + tm.tm_year);
}

}  // namespace

TEST_CASE("source and sink transform chains with predicates run in the task loops", "[worker][transforms]") {
  const std::string routed = "seq-" + this_year();
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {routed, 1}});
  OffsetBackingStore::Options oo;
  oo.client = m->client_props();
  auto offsets = OffsetBackingStore::open(oo);
  REQUIRE(offsets);
  auto dir = std::filesystem::temp_directory_path() / ("kc-transforms-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);  // left by a failed earlier run of this case
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.txt";

  WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  o.value_converter = "org.apache.kafka.connect.json.JsonConverter";
  // The chains run on the task thread either way; with producer.shared
  // only the send goes to the worker's one producer.
  o.producer_shared = GENERATE(false, true);
  INFO("producer.shared=" << o.producer_shared);
  kc::test::TaskStates states;
  Worker w(o, offsets->get(), &states);

  // Source "a": add a field, cast `seq` to a string, route by year, mark
  // with a header. Source "b": only the routing (no header).
  const std::string insert = "org.apache.kafka.connect.transforms.InsertField$Value";
  const kconn::ConfigMap a{{"connector.class", "SequenceSource"},
                           {"topic", "seq"},
                           {"throughput", "200"},
                           {"transforms", "insert, cast,route,mark"},
                           {"transforms.insert.type", insert},
                           {"transforms.insert.static.field", "origin"},
                           {"transforms.insert.static.value", "kconnectd"},
                           {"transforms.cast.type", "Cast$Value"},
                           {"transforms.cast.spec", "seq:string"},
                           {"transforms.route.type", "org.apache.kafka.connect.transforms.TimestampRouter"},
                           {"transforms.route.topic.format", "${topic}-${timestamp}"},
                           {"transforms.route.timestamp.format", "yyyy"},
                           {"transforms.mark.type", "InsertHeader"},
                           {"transforms.mark.header", "via"},
                           {"transforms.mark.value.literal", "a"}};
  const kconn::ConfigMap b{{"connector.class", "SequenceSource"},
                           {"topic", "seq"},
                           {"throughput", "200"},
                           {"transforms", "route"},
                           {"transforms.route.type", "TimestampRouter"},
                           {"transforms.route.topic.format", "${topic}-${timestamp}"},
                           {"transforms.route.timestamp.format", "yyyy"}};
  // The sink drops records without the header (negated HasHeaderKey), then
  // removes `task` from what is left.
  const kconn::ConfigMap sink{{"connector.class", "FileStreamSink"},
                              {"topics", routed},
                              {"file", file.string()},
                              {"transforms", "unmarked,trim"},
                              {"transforms.unmarked.type", "Filter"},
                              {"transforms.unmarked.predicate", "has_via"},
                              {"transforms.unmarked.negate", "true"},
                              {"transforms.trim.type", "ReplaceField$Value"},
                              {"transforms.trim.exclude", "task"},
                              {"predicates", "has_via"},
                              {"predicates.has_via.type", "HasHeaderKey"},
                              {"predicates.has_via.name", "via"}};
  REQUIRE(w.start_task(ConnectorTaskId{"a", 0}, a, a, TargetState::Started));
  REQUIRE(w.start_task(ConnectorTaskId{"b", 0}, b, b, TargetState::Started));
  REQUIRE(w.start_task(ConnectorTaskId{"snk", 0}, sink, sink, TargetState::Started));
  REQUIRE(eventually([&] { return lines_of(file).size() >= 20; }, 30000));
  // Both sources wrote to the routed topic, in their converted form.
  std::vector<TopicReader::Record> topic;
  REQUIRE(eventually(
      [&] {
        topic = read_all(*m, routed);
        bool has_b = false;
        for (const auto& r : topic) has_b = has_b || header(r, "via") == "<missing>";
        return has_b;
      },
      30000));
  w.stop_all();

  // Only "a"'s records reach the file, in order, rewritten by both chains.
  const auto lines = lines_of(file);
  REQUIRE(lines.size() >= 20);
  for (size_t i = 0; i < lines.size(); ++i)
    CHECK(lines[i] == "Struct{seq=" + std::to_string(i) + ",origin=kconnectd}");
  const std::string a0 =
      R"({"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"task"},)"
      R"({"type":"string","optional":false,"field":"seq"},{"type":"string","optional":true,"field":"origin"}],)"
      R"("optional":false,"name":"kconnectd.Sequence"},"payload":{"task":"a-0","seq":"0","origin":"kconnectd"}})";
  bool found_a0 = false;
  for (const auto& r : topic) {
    if (header(r, "via") == "a") found_a0 = found_a0 || r.value == std::optional<std::string>(a0);
    else CHECK(r.value.value_or("").find(R"("task":"b-0")") != std::string::npos);
  }
  CHECK(found_a0);
  CHECK(states.state(ConnectorTaskId{"a", 0}) != StatusState::Failed);
  CHECK(states.state(ConnectorTaskId{"snk", 0}) != StatusState::Failed);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a failing transform is a TRANSFORMATION error: tolerated records go to the dead letter queue",
          "[worker][transforms]") {
  auto m = kc::test::start_mock_cluster(1, {{"in", 1}, {"dlq", 1}});
  {
    auto p = Producer::create(m->client_props());
    REQUIRE(p);
    REQUIRE((*p)->send_and_wait("in", {{"k0", std::string("12")}, {"k1", std::string("twelve")}, {"k2", std::string("7")}},
                                20000));
  }
  auto dir = std::filesystem::temp_directory_path() / ("kc-transforms-dlq-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.txt";
  WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  kc::test::TaskStates states;
  Worker w(o, nullptr, &states);
  kconn::ConfigMap config{{"connector.class", "FileStreamSink"},
                          {"topics", "in"},
                          {"file", file.string()},
                          {"transforms", "num"},
                          {"transforms.num.type", "Cast$Value"},
                          {"transforms.num.spec", "int32"},
                          {"errors.tolerance", "all"},
                          {"errors.deadletterqueue.topic.name", "dlq"},
                          {"errors.deadletterqueue.topic.replication.factor", "1"},
                          {"errors.deadletterqueue.context.headers.enable", "true"}};
  REQUIRE(w.start_task(ConnectorTaskId{"snk", 0}, config, config, TargetState::Started));
  REQUIRE(eventually([&] { return lines_of(file).size() >= 2; }, 30000));
  std::vector<TopicReader::Record> dlq;
  REQUIRE(eventually(
      [&] {
        dlq = read_all(*m, "dlq");
        return !dlq.empty();
      },
      30000));
  CHECK(lines_of(file) == std::vector<std::string>{"12", "7"});
  REQUIRE(dlq.size() == 1);
  CHECK(dlq[0].value == std::optional<std::string>("twelve"));
  CHECK(header(dlq[0], "__connect.errors.stage") == "TRANSFORMATION");
  CHECK(header(dlq[0], "__connect.errors.class.name") == "org.apache.kafka.connect.transforms.Cast$Value");
  CHECK(header(dlq[0], "__connect.errors.offset") == "1");
  CHECK(states.state(ConnectorTaskId{"snk", 0}) == StatusState::Running);
  w.stop_all();

  // With the default tolerance the same failure fails the task.
  std::filesystem::remove(file);
  config.erase("errors.tolerance");
  Worker strict(o, nullptr, &states);
  REQUIRE(strict.start_task(ConnectorTaskId{"strict", 0}, config, config, TargetState::Started));
  REQUIRE(eventually([&] { return states.state(ConnectorTaskId{"strict", 0}) == StatusState::Failed; }, 30000));
  const auto trace = states.trace(ConnectorTaskId{"strict", 0});
  CHECK(trace.find("Tolerance exceeded in error handler") != std::string::npos);
  CHECK(trace.find("TRANSFORMATION") != std::string::npos);
  strict.stop_all();
  std::filesystem::remove_all(dir);
}

TEST_CASE("validation reports transforms.* and predicates.* errors per key, in Connect's groups",
          "[worker][transforms]") {
  const auto& reg = kconn::PluginRegistry::builtin();
  const kconn::ConfigMap config{{"name", "s"},
                                {"connector.class", "FileStreamSink"},
                                {"topics", "in"},
                                {"transforms", "ins,nope,route"},
                                {"transforms.ins.type", "InsertField$Value"},
                                {"transforms.ins.static.field", "f"},
                                {"transforms.ins.static.value", "v"},
                                {"transforms.ins.predicate", "missing"},
                                {"transforms.nope.type", "com.example.Nope"},
                                {"transforms.route.type", "RegexRouter"},
                                {"transforms.route.regex", "("},
                                {"transforms.route.replacement", "x"},
                                {"predicates", "tomb"},
                                {"predicates.tomb.type", "RecordIsTombstone"}};
  auto v = reg.validate(config);
  auto errors_of = [&](const std::string& key) {
    for (const auto& e : v.configs)
      if (e.definition.name == key) return e.value.errors;
    return std::vector<std::string>{"<no such key>"};
  };
  CHECK(errors_of("transforms.ins.predicate") ==
        std::vector<std::string>{"Invalid value missing for configuration transforms.ins.predicate: Predicate alias "
                                 "missing not found in predicates"});
  CHECK(errors_of("transforms.nope.type") ==
        std::vector<std::string>{"Invalid value com.example.Nope for configuration transforms.nope.type: Class "
                                 "com.example.Nope could not be found."});
  REQUIRE(errors_of("transforms.route.regex").size() == 1);
  CHECK(errors_of("transforms.route.regex")[0].rfind("Invalid value ( for configuration transforms.route.regex", 0) == 0);
  CHECK(errors_of("transforms.route.replacement").empty());
  CHECK(errors_of("predicates.tomb.type").empty());
  CHECK(v.error_count == 3);
  const std::vector<std::string> groups{"Common",          "Transforms",          "Predicates",
                                        "Transforms: ins", "Transforms: nope",    "Transforms: route",
                                        "Predicates: tomb", "Error Handling"};
  REQUIRE(v.groups.size() >= groups.size());
  CHECK(std::vector<std::string>(v.groups.begin(), v.groups.begin() + groups.size()) == groups);

  // The connector's own converters are checked with their sub-configs.
  auto conv = reg.validate({{"name", "s"},
                            {"connector.class", "FileStreamSink"},
                            {"topics", "in"},
                            {"key.converter", "com.example.Nope"},
                            {"value.converter", "JsonConverter"},
                            {"value.converter.schemas.enable", "maybe"},
                            {"header.converter", "SimpleHeaderConverter"}});
  auto conv_errors = [&](const std::string& key) {
    for (const auto& e : conv.configs)
      if (e.definition.name == key) return e.value.errors;
    return std::vector<std::string>{"<no such key>"};
  };
  CHECK(conv_errors("key.converter") ==
        std::vector<std::string>{"Invalid value com.example.Nope for configuration key.converter: Class "
                                 "com.example.Nope could not be found."});
  REQUIRE(conv_errors("value.converter").size() == 1);
  CHECK(conv_errors("value.converter")[0].find("schemas.enable") != std::string::npos);
  CHECK(conv_errors("header.converter").empty());
  CHECK(conv.error_count == 2);

  // A valid chain validates clean.
  auto ok = reg.validate({{"name", "s"},
                          {"connector.class", "FileStreamSink"},
                          {"topics", "in"},
                          {"transforms", "ins"},
                          {"transforms.ins.type", "InsertField$Value"},
                          {"transforms.ins.static.field", "f"},
                          {"transforms.ins.static.value", "v"}});
  for (const auto& e : ok.configs) CHECK(e.value.errors == std::vector<std::string>{});
  CHECK(ok.error_count == 0);
}
