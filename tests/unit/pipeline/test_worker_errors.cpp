// Error handling in the record pipeline (KIP-298, KIP-610) and record
// headers, through the Worker against librdkafka's mock cluster: a sink with
// errors.tolerance=all sends records that fail conversion to the dead letter
// queue with Connect's context headers while the good ones reach the file;
// with the default tolerance the first failure fails the task; a source
// record's headers reach Kafka through the header converter.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "worker/plugins/registry.h"
#include "worker/runtime/error_handling.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::ErrorHandlingConfig;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;
namespace data = kc::data;

namespace {

using kc::test::eventually;
using kc::test::lines_of;
using kc::test::header;
using kc::test::read_all;

using Clock = std::chrono::steady_clock;

std::unique_ptr<MockCluster> cluster() {
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"in", 1}, {"dlq", 1}, {"out", 1}});
  return m;
}

WorkerOptions options(const MockCluster& m, std::shared_ptr<kc::metrics::WorkerMetrics> metrics = nullptr) {
  WorkerOptions o = kc::test::mock_worker_options(m, 100);
  o.value_converter = "org.apache.kafka.connect.json.JsonConverter";
  o.metrics = std::move(metrics);
  return o;
}

std::string envelope(const std::string& s) {
  return R"({"schema":{"type":"string","optional":false},"payload":")" + s + R"("})";
}

/// The value of the Prometheus sample `name{connector="snk",task="0"}`.
double sample(const std::string& text, const std::string& name) {
  const std::string head = name + "{connector=\"snk\",task=\"0\"} ";
  auto at = text.find(head);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + head.size()));
}

}  // namespace

TEST_CASE("errors.* settings: defaults, values and Connect's messages", "[worker][errors]") {
  auto d = ErrorHandlingConfig::parse({}, true);
  REQUIRE(d);
  CHECK_FALSE(d->tolerate_all);
  CHECK(d->retry_timeout_ms == 0);
  CHECK(d->retry_delay_max_ms == 60000);
  CHECK(d->dlq_topic.empty());
  CHECK(d->dlq_replication_factor == 3);

  auto all = ErrorHandlingConfig::parse({{"errors.tolerance", "ALL"},
                                         {"errors.deadletterqueue.topic.name", "dlq"},
                                         {"errors.deadletterqueue.context.headers.enable", "true"},
                                         {"errors.retry.timeout", "-1"}},
                                        true);
  REQUIRE(all);
  CHECK(all->tolerate_all);
  CHECK(all->dlq_topic == "dlq");
  CHECK(all->dlq_context_headers);
  CHECK(all->retry_timeout_ms == -1);
  // A source connector has no dead letter queue.
  CHECK(ErrorHandlingConfig::parse({{"errors.deadletterqueue.topic.name", "dlq"}}, false)->dlq_topic.empty());

  auto errs = ErrorHandlingConfig::validate({{"errors.tolerance", "some"},
                                             {"errors.retry.timeout", "soon"},
                                             {"errors.log.enable", "yes"},
                                             {"topics", "in,dlq"},
                                             {"errors.deadletterqueue.topic.name", "dlq"}},
                                            true);
  CHECK(errs.at("errors.tolerance") ==
        "Invalid value some for configuration errors.tolerance: String must be one of: none, all");
  CHECK(errs.at("errors.retry.timeout") ==
        "Invalid value soon for configuration errors.retry.timeout: Not a number of type LONG");
  CHECK(errs.at("errors.log.enable") ==
        "Invalid value yes for configuration errors.log.enable: Expected value to be either true or false");
  CHECK(errs.at("errors.deadletterqueue.topic.name") ==
        "The DLQ topic 'dlq' may not be included in the list of topics ('topics=in,dlq') consumed by the connector");
  auto bad = ErrorHandlingConfig::parse({{"errors.tolerance", "some"}}, true);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "errors.tolerance");
}

TEST_CASE("a retriable failure is retried within errors.retry.timeout, others are not", "[worker][errors]") {
  ErrorHandlingConfig c;
  c.tolerate_all = true;
  c.retry_timeout_ms = 2000;
  c.retry_delay_max_ms = 300;
  kc::runtime::ErrorHandler h(c, ConnectorTaskId{"snk", 0}, nullptr, {});
  int calls = 0;
  auto r = h.execute<int>(kc::runtime::Stage::TRANSFORMATION, "x.Retrying", [&]() -> kc::Result<int> {
    if (++calls < 3) throw kconn::RetriableError("not yet");
    return 7;
  });
  CHECK(calls == 3);
  REQUIRE(r);
  CHECK(*r == 7);
  calls = 0;
  auto data_error = h.execute<int>(kc::runtime::Stage::VALUE_CONVERTER, "x.Conv", [&]() -> kc::Result<int> {
    ++calls;
    return kc::Error{"", "bad bytes"};
  });
  CHECK(calls == 1);  // a DataException is never retried
  CHECK_FALSE(data_error);  // tolerated: skipped
  c.tolerate_all = false;
  kc::runtime::ErrorHandler strict(c, ConnectorTaskId{"snk", 0}, nullptr, {});
  CHECK_THROWS_AS(strict.execute<int>(kc::runtime::Stage::VALUE_CONVERTER, "x.Conv",
                                      []() -> kc::Result<int> { return kc::Error{"", "bad bytes"}; }),
                  kc::runtime::ToleranceExceeded);
}

TEST_CASE("a stop requested during the retry backoff ends it: no further attempt, the record fails",
          "[worker][errors]") {
  // Retried forever: only the stop ends it. The old backoff slept its
  // 300 ms out and then attempted once more before it saw the stop.
  ErrorHandlingConfig c;
  c.retry_timeout_ms = -1;
  std::stop_source stop;
  kc::runtime::ErrorHandler h(c, ConnectorTaskId{"snk", 0}, nullptr, stop.get_token());
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  auto op = [&]() -> kc::Result<int> {
    {
      std::lock_guard lk(mu);
      ++calls;
    }
    cv.notify_all();
    throw kconn::RetriableError("not yet");
  };
  std::thread stopper([&] {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return calls >= 1; });
    stop.request_stop();  // before or during the first backoff
  });
  CHECK_THROWS_AS(h.execute<int>(kc::runtime::Stage::TRANSFORMATION, "x.Retrying", op),
                  kc::runtime::ToleranceExceeded);
  stopper.join();
  std::lock_guard lk(mu);
  CHECK(calls == 1);
}

TEST_CASE("errors.tolerance=all: records that fail conversion go to the dead letter queue with Connect's headers, "
          "the good ones reach the file",
          "[worker][errors]") {
  auto m = cluster();
  {
    auto p = Producer::create(m->client_props());
    REQUIRE(p);
    std::vector<std::pair<std::string, std::optional<std::string>>> records;
    for (int i = 0; i < 8; ++i) {
      records.emplace_back("k" + std::to_string(i), envelope("good-" + std::to_string(i)));
      if (i == 2) records.emplace_back("bad-a", std::string("{not json"));
      if (i == 5) records.emplace_back("bad-b", std::string(R"({"payload":"no schema"})"));
    }
    REQUIRE((*p)->send_and_wait("in", records, 20000));
  }
  auto dir = std::filesystem::temp_directory_path() / ("kc-errors-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.txt";
  auto metrics = std::make_shared<kc::metrics::WorkerMetrics>();
  kc::test::TaskStates states;
  Worker w(options(*m, metrics), nullptr, &states);
  const kconn::ConfigMap config{{"connector.class", "FileStreamSink"},
                                {"topics", "in"},
                                {"file", file.string()},
                                {"errors.tolerance", "all"},
                                {"errors.log.enable", "true"},
                                {"errors.log.include.messages", "true"},
                                {"errors.deadletterqueue.topic.name", "dlq"},
                                {"errors.deadletterqueue.topic.replication.factor", "1"},
                                {"errors.deadletterqueue.context.headers.enable", "true"}};
  const ConnectorTaskId id{"snk", 0};
  REQUIRE(w.start_task(id, config, config, TargetState::Started));
  REQUIRE(eventually([&] { return lines_of(file).size() >= 8; }, 30000));
  std::vector<TopicReader::Record> dlq;
  REQUIRE(eventually(
      [&] {
        dlq = read_all(*m, "dlq");
        return dlq.size() >= 2;
      },
      30000));
  CHECK(states.state() == StatusState::Running);

  std::vector<std::string> want;
  for (int i = 0; i < 8; ++i) want.push_back("good-" + std::to_string(i));
  CHECK(lines_of(file) == want);

  REQUIRE(dlq.size() == 2);
  // The original key, value and offsets, and the failure's context.
  CHECK(dlq[0].key == std::optional<std::string>("bad-a"));
  CHECK(dlq[0].value == std::optional<std::string>("{not json"));
  CHECK(header(dlq[0], "__connect.errors.offset") == "3");
  CHECK(dlq[1].key == std::optional<std::string>("bad-b"));
  CHECK(header(dlq[1], "__connect.errors.offset") == "7");
  for (const auto& r : dlq) {
    CHECK(header(r, "__connect.errors.topic") == "in");
    CHECK(header(r, "__connect.errors.partition") == "0");
    CHECK(header(r, "__connect.errors.connector.name") == "snk");
    CHECK(header(r, "__connect.errors.task.id") == "0");
    CHECK(header(r, "__connect.errors.stage") == "VALUE_CONVERTER");
    CHECK(header(r, "__connect.errors.class.name") == "org.apache.kafka.connect.json.JsonConverter");
    CHECK(header(r, "__connect.errors.exception.class.name") == "org.apache.kafka.connect.errors.DataException");
    CHECK(header(r, "__connect.errors.exception.message").size() > 10);
    CHECK(header(r, "__connect.errors.exception.stacktrace")
              .rfind("org.apache.kafka.connect.errors.DataException: ", 0) == 0);
  }
  const auto text = metrics->render();
  CHECK(sample(text, "kconnectd_task_error_records_skipped_total") == 2);
  CHECK(sample(text, "kconnectd_task_error_record_errors_total") == 2);
  CHECK(sample(text, "kconnectd_task_error_record_failures_total") == 2);
  CHECK(sample(text, "kconnectd_task_error_errors_logged_total") == 2);
  CHECK(sample(text, "kconnectd_task_error_deadletterqueue_produce_requests_total") == 2);
  CHECK(sample(text, "kconnectd_task_error_deadletterqueue_produce_failures_total") == 0);
  CHECK(sample(text, "kconnectd_task_error_last_error_timestamp_seconds") > 1.7e9);
  w.stop_all();
  std::filesystem::remove_all(dir);
}

TEST_CASE("errors.tolerance=none (the default): the first conversion failure fails the task", "[worker][errors]") {
  auto m = cluster();
  {
    auto p = Producer::create(m->client_props());
    REQUIRE(p);
    REQUIRE((*p)->send_and_wait("in", {{"k0", envelope("good")}, {"k1", std::string("{not json")}}, 20000));
  }
  auto dir = std::filesystem::temp_directory_path() / ("kc-errors-none-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.txt";
  kc::test::TaskStates states;
  Worker w(options(*m), nullptr, &states);
  const kconn::ConfigMap config{{"connector.class", "FileStreamSink"}, {"topics", "in"}, {"file", file.string()}};
  REQUIRE(w.start_task(ConnectorTaskId{"snk", 0}, config, config, TargetState::Started));
  REQUIRE(eventually([&] { return states.state() == StatusState::Failed; }, 30000));
  CHECK(states.last_trace().find("Tolerance exceeded in error handler") != std::string::npos);
  CHECK(states.last_trace().find("VALUE_CONVERTER") != std::string::npos);
  CHECK(read_all(*m, "dlq").empty());
  w.stop_all();
  std::filesystem::remove_all(dir);
}

namespace {

/// Writes one record "h-<n>" per poll with two headers: a string and an int.
class HeaderSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap&, kconn::SourceTaskContext&) override {}
  std::vector<kconn::SourceRecord> poll() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (next_ >= 3) return {};
    kconn::SourceRecord r;
    r.topic = "out";
    r.source_partition = kconn::OrderedJson{{"task", 0}};
    r.source_offset = kconn::OrderedJson{{"seq", next_}};
    r.value = kconn::Data::string("h-" + std::to_string(next_));
    r.headers.add("origin", data::STRING_SCHEMA(), data::Value("test"));
    r.headers.add("seq", data::INT32_SCHEMA(), data::Value(static_cast<int32_t>(next_)));
    ++next_;
    return {std::move(r)};
  }
  void stop() override {}

 private:
  int64_t next_ = 0;
};

}  // namespace

TEST_CASE("a source record's headers reach Kafka through the header converter", "[worker][errors]") {
  auto m = cluster();
  OffsetBackingStore::Options oo;
  oo.client = m->client_props();
  auto offsets = OffsetBackingStore::open(oo);
  REQUIRE(offsets);
  kconn::PluginRegistry reg;
  kc::test::add_one_task_plugin<HeaderSourceTask>(reg, "test.HeaderSourceConnector");
  kc::test::TaskStates states;
  auto o = options(*m);
  o.value_converter = "org.apache.kafka.connect.storage.StringConverter";
  o.producer_shared = GENERATE(false, true);  // headers pass through the shared producer too
  INFO("producer.shared=" << o.producer_shared);
  Worker w(o, offsets->get(), &states, &reg);
  const kconn::ConfigMap config{{"connector.class", "test.HeaderSourceConnector"}};
  REQUIRE(w.start_task(ConnectorTaskId{"src", 0}, config, config, TargetState::Started));
  std::vector<TopicReader::Record> out;
  REQUIRE(eventually(
      [&] {
        out = read_all(*m, "out");
        return out.size() >= 3;
      },
      30000));
  w.stop_all();
  REQUIRE(out.size() == 3);
  for (size_t i = 0; i < out.size(); ++i) {
    CHECK(out[i].value == std::optional<std::string>("h-" + std::to_string(i)));
    REQUIRE(out[i].headers.size() == 2);
    CHECK(out[i].headers[0] == std::pair<std::string, std::optional<std::string>>("origin", "test"));
    CHECK(out[i].headers[1] == std::pair<std::string, std::optional<std::string>>("seq", std::to_string(i)));
  }
}
