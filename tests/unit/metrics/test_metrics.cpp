// Unit tests of worker/metrics: Registry rendering, escaping, counters and
// gauges, WorkerMetrics families, promtool validation, log patterns.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "worker/metrics/log_context.h"
#include "worker/metrics/registry.h"
#include "worker/metrics/worker_metrics.h"

using namespace kc::metrics;

namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

/// Runs `cmd` through the shell; returns (exit status, combined output).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

bool have_promtool() { return run("command -v promtool").first == 0; }

/// `promtool check metrics` on `text`; returns (exit status, output).
std::pair<int, std::string> promtool_check(const std::string& text) {
  char path[] = "/tmp/kc-metrics-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  {
    std::ofstream f(path);
    f << text;
  }
  auto r = run(std::string("promtool check metrics < ") + path);
  std::remove(path);
  ::close(fd);
  return r;
}

/// A WorkerMetrics populated the way a running worker populates it.
void populate_like_live_worker(WorkerMetrics& m) {
  m.record_join(12.5);
  m.record_join(40);
  m.record_sync(3);
  m.record_heartbeat(1);
  m.record_heartbeat(2);
  m.record_failed_rebalance();
  m.rebalance_started();
  m.assignment_received(7, "sessioned", "http://w1:8083/");
  m.set_assigned(2, 3);
  m.rebalance_completed(35);
  m.set_running(2, 3);
  m.connector_startup_attempt();
  m.connector_startup_result(true);
  m.connector_startup_attempt();
  m.connector_startup_result(true);
  for (int i = 0; i < 3; ++i) m.task_startup_attempt();
  m.task_startup_result(true);
  m.task_startup_result(true);
  m.task_startup_result(false);
  auto s = m.task("file-source", 0, true);
  s->set_state(TaskState::Running);
  s->source_polled(100);
  s->source_written(100);
  s->offset_commit(true);
  auto k = m.task("sink \"quoted\"\\path\nnl", 1, false);
  k->set_state(TaskState::Failed);
  k->sink_read(50);
  k->sink_sent(49);
  k->offset_commit(false);
}

}  // namespace

TEST_CASE("registry renders HELP, TYPE, prefix and samples sorted by family", "[metrics]") {
  Registry r;
  r.counter("b_events_total", "Events seen.")->inc(3);
  r.gauge("a_level", "A level.", {{"connector", "c1"}})->set(2.5);
  const std::string out = r.render();
  CHECK(out ==
        "# HELP kconnectd_a_level A level.\n"
        "# TYPE kconnectd_a_level gauge\n"
        "kconnectd_a_level{connector=\"c1\"} 2.5\n"
        "# HELP kconnectd_b_events_total Events seen.\n"
        "# TYPE kconnectd_b_events_total counter\n"
        "kconnectd_b_events_total 3\n");
}

TEST_CASE("label values and help text are escaped", "[metrics]") {
  CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(escape_help("x\\y\nz \"q\"") == "x\\\\y\\nz \"q\"");
  Registry r;
  r.gauge("g", "line1\nline2", {{"connector", "we\"ird\\name\n"}, {"task", "0"}})->set(1);
  const std::string out = r.render();
  CHECK(contains(out, "# HELP kconnectd_g line1\\nline2\n"));
  CHECK(contains(out, "kconnectd_g{connector=\"we\\\"ird\\\\name\\n\",task=\"0\"} 1\n"));
}

TEST_CASE("counters only go up and are thread-safe", "[metrics]") {
  Registry r;
  auto c = r.counter("x_total", "x");
  c->inc();
  c->inc(2);
  c->inc(-5);  // ignored
  c->inc(std::nan(""));
  CHECK(c->value() == 3);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c->inc();
    });
  for (auto& t : ts) t.join();
  CHECK(c->value() == 40003);
  // The same name + labels gives the same series.
  CHECK(r.counter("x_total", "ignored") == c);
  CHECK(r.series_count("x_total") == 1);
}

TEST_CASE("gauges go up and down, callback gauges are evaluated at render", "[metrics]") {
  Registry r;
  auto g = r.gauge("level", "l");
  g->set(5);
  g->add(-7);
  CHECK(g->value() == -2);
  double v = 1.5;
  r.gauge_fn("cb", "c", {}, [&v] { return v; });
  CHECK(contains(r.render(), "kconnectd_cb 1.5\n"));
  v = 4;
  CHECK(contains(r.render(), "kconnectd_cb 4\n"));
}

TEST_CASE("values: integers, decimals, infinities, NaN", "[metrics]") {
  CHECK(format_value(0) == "0");
  CHECK(format_value(-1) == "-1");
  CHECK(format_value(1234567) == "1234567");
  CHECK(format_value(0.25) == "0.25");
  CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_value(std::nan("")) == "NaN");
  CHECK(format_value(1e20) == "1e+20");
}

TEST_CASE("invalid names and mixed types are rejected at registration", "[metrics]") {
  Registry r;
  CHECK_THROWS_AS(r.gauge("bad-name", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.gauge("ok", "x", {{"bad label", "v"}}), std::invalid_argument);
  CHECK_THROWS_AS(r.gauge("ok", "x", {{"__reserved", "v"}}), std::invalid_argument);
  CHECK_THROWS_AS(r.gauge("ok", "x", {{"a", "1"}, {"a", "2"}}), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("no_suffix", "x"), std::invalid_argument);
  r.counter("c_total", "x");
  CHECK_THROWS_AS(r.gauge("c_total", "x"), std::logic_error);
}

TEST_CASE("series removal by labels", "[metrics]") {
  Registry r;
  auto a = r.counter("t_total", "t", {{"connector", "c"}, {"task", "0"}});
  r.counter("t_total", "t", {{"connector", "c"}, {"task", "1"}});
  r.gauge("s", "s", {{"connector", "c"}, {"task", "0"}, {"state", "running"}});
  CHECK(r.remove_matching({{"connector", "c"}, {"task", "0"}}) == 2);
  CHECK(r.series_count("t_total") == 1);
  CHECK(r.series_count("s") == 0);
  a->inc();  // a removed handle stays usable
  CHECK(!contains(r.render(), "task=\"0\""));
  r.remove("t_total", {{"connector", "c"}, {"task", "1"}});
  CHECK(r.series_count("t_total") == 0);
  CHECK(contains(r.render(), "# TYPE kconnectd_t_total counter\n"));
}

TEST_CASE("WorkerMetrics exposes Connect's coordinator, rebalance and worker metrics", "[metrics]") {
  int64_t now = 1'000'000;
  WorkerMetrics m([&now] { return now; });
  std::string out = m.render();
  CHECK(contains(out, "kconnectd_coordinator_last_heartbeat_seconds_ago -1\n"));
  CHECK(contains(out, "kconnectd_rebalance_time_since_last_seconds +Inf\n"));
  CHECK(contains(out, "kconnectd_rebalance_epoch -1\n"));
  CHECK(contains(out, "kconnectd_rebalancing 0\n"));
  populate_like_live_worker(m);
  now += 2500;
  out = m.render();
  CHECK(contains(out, "kconnectd_coordinator_join_time_avg_seconds 0.02625\n"));
  CHECK(contains(out, "kconnectd_coordinator_join_time_max_seconds 0.04\n"));
  CHECK(contains(out, "kconnectd_coordinator_joins_total 2\n"));
  CHECK(contains(out, "kconnectd_coordinator_sync_time_max_seconds 0.003\n"));
  CHECK(contains(out, "kconnectd_coordinator_heartbeats_total 2\n"));
  CHECK(contains(out, "kconnectd_coordinator_last_heartbeat_seconds_ago 2.5\n"));
  CHECK(contains(out, "kconnectd_coordinator_failed_rebalances_total 1\n"));
  CHECK(contains(out, "kconnectd_coordinator_assigned_connectors 2\n"));
  CHECK(contains(out, "kconnectd_coordinator_assigned_tasks 3\n"));
  CHECK(contains(out, "kconnectd_rebalance_completed_total 1\n"));
  CHECK(contains(out, "kconnectd_rebalance_time_avg_seconds 0.035\n"));
  CHECK(contains(out, "kconnectd_rebalance_time_since_last_seconds 2.5\n"));
  CHECK(contains(out, "kconnectd_rebalance_epoch 7\n"));
  CHECK(contains(out, "kconnectd_rebalancing 0\n"));
  CHECK(contains(out, "kconnectd_rebalance_protocol_info{protocol=\"SESSIONED\"} 1\n"));
  CHECK(contains(out, "kconnectd_rebalance_leader_info{leader_url=\"http://w1:8083/\"} 1\n"));
  CHECK(contains(out, "kconnectd_worker_connectors_running 2\n"));
  CHECK(contains(out, "kconnectd_worker_tasks_running 3\n"));
  CHECK(contains(out, "kconnectd_worker_task_startup_attempts_total 3\n"));
  CHECK(contains(out, "kconnectd_worker_task_startup_success_total 2\n"));
  CHECK(contains(out, "kconnectd_worker_task_startup_failure_total 1\n"));
  CHECK(contains(out, "kconnectd_worker_connector_startup_success_total 2\n"));
  CHECK(contains(out, "kconnectd_task_status{connector=\"file-source\",task=\"0\",state=\"running\"} 1\n"));
  CHECK(contains(out, "kconnectd_task_status{connector=\"file-source\",task=\"0\",state=\"failed\"} 0\n"));
  CHECK(contains(out, "kconnectd_source_task_records_polled_total{connector=\"file-source\",task=\"0\"} 100\n"));
  CHECK(contains(out, "kconnectd_task_offset_commit_success_total{connector=\"file-source\",task=\"0\"} 1\n"));
  CHECK(contains(out, "kconnectd_sink_task_records_sent_total{connector=\"sink \\\"quoted\\\"\\\\path\\nnl\",task=\"1\"} 49\n"));
  // A source task has no sink series.
  CHECK(!contains(out, "kconnectd_sink_task_records_read_total{connector=\"file-source\""));
  // Protocol change replaces the info series; eager is reported as EAGER.
  m.assignment_received(8, "default", "http://w2:8083/");
  out = m.render();
  CHECK(contains(out, "kconnectd_rebalance_protocol_info{protocol=\"EAGER\"} 1\n"));
  CHECK(!contains(out, "SESSIONED"));
  CHECK(!contains(out, "http://w1:8083/"));
  CHECK(contains(out, "kconnectd_rebalancing 1\n"));
  m.remove_task("file-source", 0);
  CHECK(!contains(m.render(), "file-source"));
}

TEST_CASE("promtool check metrics accepts a registry populated like a live worker", "[metrics][promtool]") {
  if (!have_promtool()) {
    WARN("promtool not installed (Debian package prometheus); skipped");
    return;
  }
  WorkerMetrics m;
  const std::string empty = m.render();
  auto r0 = promtool_check(empty);
  INFO(empty << "\n--- promtool:\n" << r0.second);
  CHECK(r0.first == 0);
  populate_like_live_worker(m);
  const std::string text = m.render();
  auto r = promtool_check(text);
  INFO(text << "\n--- promtool:\n" << r.second);
  CHECK(r.first == 0);
  CHECK(r.second.empty());
}

TEST_CASE("promtool rejects broken exposition (the check is effective)", "[metrics][promtool]") {
  if (!have_promtool()) return;
  auto r = promtool_check("# TYPE x counter\nx{a=\"unterminated} 1\n");
  CHECK(r.first != 0);
}

TEST_CASE("log lines carry worker id and generation, as text and as JSON", "[metrics][log]") {
  std::ostringstream os;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(os);
  auto logger = std::make_shared<spdlog::logger>("metrics-test", sink);
  auto prev = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  auto ctx = std::make_shared<LogContext>();
  ctx->worker_id = "w1:8083";
  ctx->generation = 4;
  set_thread_log_context(ctx);

  REQUIRE(configure_logging("info", "text"));
  spdlog::info("hello");
  spdlog::debug("hidden");
  CHECK(contains(os.str(), "info [w1:8083 gen 4] hello\n"));
  CHECK(!contains(os.str(), "hidden"));

  os.str("");
  ctx->generation = 5;
  REQUIRE(configure_logging("debug", "json"));
  spdlog::debug("say \"hi\"\n");
  CHECK(contains(os.str(), R"("level":"debug","worker":"w1:8083","generation":5,)"));
  CHECK(contains(os.str(), R"("msg":"say \"hi\"\n"})"));

  CHECK(!configure_logging("loud", "text"));
  CHECK(!configure_logging("info", "xml"));

  // An unbound thread uses the default context.
  std::string other;
  auto dctx = std::make_shared<LogContext>();
  dctx->worker_id = "default:1";
  set_default_log_context(dctx);
  set_default_log_context(ctx, true);  // only_if_unset: kept
  os.str("");
  std::thread([] { spdlog::info("from another thread"); }).join();
  CHECK(contains(os.str(), R"("worker":"default:1","generation":-1)"));

  set_thread_log_context(nullptr);
  set_default_log_context(nullptr);
  REQUIRE(configure_logging("info", "text"));
  spdlog::set_default_logger(prev);
}
