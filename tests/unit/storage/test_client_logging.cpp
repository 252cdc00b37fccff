// Issue 27 item 2: librdkafka's lines through spdlog (same sinks and
// log.format, logger librdkafka.<kind>), /admin/loggers' level registry,
// and the `debug` contexts a DEBUG librdkafka.<kind> logger turns on.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "worker/metrics/log_context.h"
#include "worker/metrics/log_levels.h"
#include "worker/storage/broker_check.h"
#include "worker/storage/client_logging.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/mock_cluster.h"

#include <librdkafka/rdkafka_mock.h>

using kc::metrics::KafkaClientKind;
using kc::metrics::LoggerLevels;

namespace {

/// Makes an ostream logger the default one while it lives; JSON lines.
class JsonCapture {
 public:
  JsonCapture() : prev_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("", sink_);
    spdlog::set_default_logger(logger);
    REQUIRE(kc::metrics::configure_logging("info", "json"));
  }
  ~JsonCapture() {
    (void)kc::metrics::configure_logging("info", "text");
    spdlog::set_default_logger(prev_);
    LoggerLevels::instance().reset(spdlog::level::info);
  }
  /// Every line so far, each parsed (a line that is not JSON fails the test).
  std::vector<nlohmann::json> lines() {
    std::vector<nlohmann::json> out;
    for (std::string line : sink_->last_formatted()) {
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
      INFO(line);
      REQUIRE(nlohmann::json::accept(line));
      out.push_back(nlohmann::json::parse(line));
    }
    return out;
  }
 private:
  /// Thread-safe: librdkafka's threads write while the test reads.
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_ =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(20000);
  std::shared_ptr<spdlog::logger> prev_;
};

}  // namespace

TEST_CASE("log4j level names parse case-insensitively and print as Connect shows them", "[storage][loggers]") {
  CHECK(kc::metrics::parse_log4j_level("debug") == spdlog::level::debug);
  CHECK(kc::metrics::parse_log4j_level("WARN") == spdlog::level::warn);
  CHECK(kc::metrics::parse_log4j_level("Fatal") == spdlog::level::critical);
  CHECK(kc::metrics::parse_log4j_level("off") == spdlog::level::off);
  CHECK_FALSE(kc::metrics::parse_log4j_level("LOUD"));
  CHECK_FALSE(kc::metrics::parse_log4j_level(""));
  CHECK(std::string(kc::metrics::log4j_level_name(spdlog::level::err)) == "ERROR");
  CHECK(std::string(kc::metrics::log4j_level_name(spdlog::level::critical)) == "FATAL");
  CHECK(kc::storage::syslog_to_spdlog(0) == spdlog::level::critical);
  CHECK(kc::storage::syslog_to_spdlog(3) == spdlog::level::err);
  CHECK(kc::storage::syslog_to_spdlog(4) == spdlog::level::warn);
  CHECK(kc::storage::syslog_to_spdlog(5) == spdlog::level::info);
  CHECK(kc::storage::syslog_to_spdlog(6) == spdlog::level::info);
  CHECK(kc::storage::syslog_to_spdlog(7) == spdlog::level::debug);
}

TEST_CASE("logger levels: inheritance, namespace sets, last_modified, librdkafka kinds", "[storage][loggers]") {
  LoggerLevels l;
  l.reset(spdlog::level::debug);
  auto all = l.all();
  REQUIRE(all.size() == 2);
  CHECK(all.at("root").level == spdlog::level::debug);
  CHECK_FALSE(all.at("root").last_modified_ms);
  // log.level=DEBUG alone leaves librdkafka at INFO (no debug contexts).
  CHECK(all.at("librdkafka").level == spdlog::level::info);
  CHECK_FALSE(l.librdkafka_debug(KafkaClientKind::Producer));
  CHECK(l.get("librdkafka.consumer")->level == spdlog::level::info);
  CHECK_FALSE(l.get("librdkafka.consumer")->last_modified_ms);
  CHECK_FALSE(l.get("org.example.Nope"));

  auto changed = l.set("librdkafka", spdlog::level::debug, 1000);
  CHECK(changed == std::vector<std::string>{"librdkafka", "librdkafka.admin", "librdkafka.consumer",
                                            "librdkafka.producer"});
  CHECK(l.librdkafka_debug(KafkaClientKind::Admin));
  CHECK(l.get("librdkafka.admin")->last_modified_ms == 1000);

  CHECK(l.set("librdkafka.admin", spdlog::level::warn, 2000) == std::vector<std::string>{"librdkafka.admin"});
  CHECK(l.librdkafka_level(KafkaClientKind::Admin) == spdlog::level::warn);
  CHECK(l.librdkafka_level(KafkaClientKind::Producer) == spdlog::level::debug);

  // A new name is created (Connect does too) and listed.
  CHECK(l.set("org.example", spdlog::level::trace, 3000) == std::vector<std::string>{"org.example"});
  CHECK(l.all().at("org.example").last_modified_ms == 3000);
  // root sets every known logger.
  CHECK(l.set("root", spdlog::level::err, 4000).size() == 6);
  CHECK(l.librdkafka_level(KafkaClientKind::Consumer) == spdlog::level::err);
  CHECK(l.get("org.example")->level == spdlog::level::err);
}

TEST_CASE("librdkafka lines reach the default logger's sinks as JSON, filtered by librdkafka.<kind>",
          "[storage][loggers][log]") {
  JsonCapture cap;
  auto& levels = LoggerLevels::instance();
  levels.reset(spdlog::level::info);
  kc::storage::log_librdkafka_line(KafkaClientKind::Producer, spdlog::level::debug, "p#producer-1", "MSG", "dropped");
  kc::storage::log_librdkafka_line(KafkaClientKind::Consumer, spdlog::level::warn, "c#consumer-2", "FAIL",
                                   "with \"quotes\"\nand a newline");
  // DEBUG on librdkafka.producer passes its debug lines while root stays INFO.
  levels.set("librdkafka.producer", spdlog::level::debug, 1);
  kc::storage::log_librdkafka_line(KafkaClientKind::Producer, spdlog::level::debug, "p#producer-1", "MSG", "kept");
  spdlog::debug("root stays at info");
  auto lines = cap.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["logger"] == "librdkafka.consumer");
  CHECK(lines[0]["level"] == "warning");
  CHECK(lines[0]["msg"] == "c#consumer-2: FAIL: with \"quotes\"\nand a newline");
  CHECK(lines[1]["logger"] == "librdkafka.producer");
  CHECK(lines[1]["level"] == "debug");
  CHECK(lines[1]["msg"] == "p#producer-1: MSG: kept");
  spdlog::info("own line");
  CHECK(cap.lines().back()["logger"] == "kconnectd");
}

TEST_CASE("a real client's lines (and its debug contexts when asked) go through spdlog", "[storage][loggers][log]") {
  JsonCapture cap;
  auto& levels = LoggerLevels::instance();
  levels.reset(spdlog::level::info);
  auto has = [&](const std::string& logger, const std::string& level, const std::string& part) {
    for (const auto& j : cap.lines())
      if (j["logger"] == logger && (level.empty() || j["level"] == level) &&
          j["msg"].get<std::string>().find(part) != std::string::npos)
        return true;
    return false;
  };
  auto wait = [&](auto pred) {
    for (int i = 0; i < 100 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return pred();
  };
  {
    // Nothing listens on port 1: librdkafka reports the refused connection.
    auto p = kc::storage::make_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", "127.0.0.1:1"},
                                                          {"client.id", "connector-producer-logtest-0"}});
    REQUIRE(p);
    CHECK(wait([&] { return has("librdkafka.producer", "", "connector-producer-logtest-0#producer"); }));
    CHECK_FALSE(has("librdkafka.producer", "debug", ""));
  }
  levels.set("librdkafka.consumer", spdlog::level::debug, 1);
  {
    auto c = kc::storage::make_client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", "127.0.0.1:1"},
                                                          {"group.id", "g"},
                                                          {"client.id", "connector-consumer-logtest-0"}});
    REQUIRE(c);
    CHECK(wait([&] { return has("librdkafka.consumer", "debug", "connector-consumer-logtest-0#consumer"); }));
  }
  // Every line of the run, librdkafka's included, is JSON (lines() checks).
  CHECK_FALSE(cap.lines().empty());
}

TEST_CASE("a client made with an observer: its one error callback logs each report and records it",
          "[storage][loggers][log][broker_check]") {
  JsonCapture cap;
  LoggerLevels::instance().reset(spdlog::level::info);
  kc::storage::ClientErrorObserver obs(kc::storage::ClientProps{{"bootstrap.servers", "127.0.0.1:1"}});
  int owner = 0;
  obs.set_owner(&owner);
  // Nothing listens on port 1: librdkafka reports the refused connection.
  auto p = kc::storage::make_client(RD_KAFKA_PRODUCER,
                                    {{"bootstrap.servers", "127.0.0.1:1"}, {"client.id", "observed-producer"}}, {},
                                    {}, std::nullopt, &obs);
  REQUIRE(p);
  // The conf opaque is the observer; the owner's state hangs on it.
  CHECK(rd_kafka_opaque(p->get()) == &obs);
  CHECK(static_cast<kc::storage::ClientErrorObserver*>(rd_kafka_opaque(p->get()))->owner() == &owner);
  for (int i = 0; i < 100 && obs.observation().events.empty(); ++i) rd_kafka_poll(p->get(), 50);
  const auto events = obs.observation().events;
  REQUIRE_FALSE(events.empty());
  // Each recorded report was logged by the same callback, as the error
  // line of librdkafka.producer under the client's name; the refused
  // connection is transient, so nothing is fatal.
  for (const auto& e : events) {
    INFO(e.text);
    int lines = 0;
    for (const auto& j : cap.lines()) {
      const auto msg = j["msg"].get<std::string>();
      if (j["logger"] == "librdkafka.producer" && msg.find("observed-producer#producer") == 0 &&
          msg.find(": ERROR: ") != std::string::npos && msg.find(e.text) != std::string::npos)
        ++lines;
    }
    CHECK(lines >= 1);
  }
  CHECK_FALSE(obs.fatal());
}

TEST_CASE("an internal topic whose ACL is removed while the worker runs: one error line per cause, no crash",
          "[storage][loggers][log][broker_check]") {
  JsonCapture cap;
  LoggerLevels::instance().reset(spdlog::level::info);
  auto started = kc::storage::MockCluster::start(1);
  REQUIRE(started);
  auto c = std::move(started).value();
  REQUIRE(c->create_topic("acl-status", 1));
  kc::storage::TopicSpec spec{"acl-status", 1, 1, {}};
  auto topic = kc::storage::open_internal_topic({{"bootstrap.servers", c->bootstrap_servers()}}, spec, "acl-test",
                                                {{"acks", "all"}, {"retries", "0"}}, {}, 10000);
  REQUIRE(topic);
  auto& producer = *topic->producer;
  REQUIRE(producer.errors());
  REQUIRE(producer.send_and_wait("acl-status", {{"k", std::string("before")}}, 10000));
  // The ACL goes away: every Produce is denied from now on.
  rd_kafka_mock_push_request_errors(c->handle(), 0 /* Produce */, 3, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(producer.send_and_wait("acl-status", {{"k", std::string("denied")}}, 10000));
  auto v = producer.errors()->fatal();
  REQUIRE(v);
  CHECK(v->cause == kc::storage::BrokerCheckCause::NotAuthorized);
  int lines = 0;
  for (const auto& j : cap.lines()) {
    const auto msg = j["msg"].get<std::string>();
    if (j["level"] == "error" && msg.find("acl-status: not authorized") == 0) {
      ++lines;
      CHECK_THAT(msg, Catch::Contains("TOPIC_AUTHORIZATION_FAILED") &&
                          Catch::Contains("Describe, Read and Write on topic acl-status"));
    }
  }
  CHECK(lines == 1);
}
