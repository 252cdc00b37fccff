// ConnectorConfigCache (worker/herder/connector_config_cache.h): a connector's
// config read once per worker and shared by its starts; and, with a real
// Worker and a counting config provider, how many times a connector's
// config is resolved when it and its tasks start on one worker.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "tests/support/worker_test_util.h"
#include "worker/herder/connector_config_cache.h"
#include "worker/providers/config_provider.h"
#include "worker/runtime/worker.h"

using kc::connectors::ConfigMap;
using kc::herder::ConnectorConfigCache;
using kc::runtime::ConnectorConfig;
using kc::runtime::ConnectorConfigPtr;

namespace {

/// A reader that parses without a Worker and counts its calls; `fail`
/// makes it fail as a provider would.
struct CountingReader {
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};
  ConnectorConfigCache::Parsed operator()(const std::string& name, const ConfigMap& raw) {
    ++calls;
    if (fail) return kc::Error{"db.password", "Could not read properties from file /absent"};
    return ConnectorConfigPtr(std::make_shared<const ConnectorConfig>(ConnectorConfig::parse(
        name, raw, raw, {}, kc::connectors::PluginRegistry::builtin(), kc::runtime::ConnectorConfigInputs{})));
  }
  ConnectorConfigCache cache() {
    return ConnectorConfigCache([this](const std::string& n, const ConfigMap& r) { return (*this)(n, r); });
  }
};

const ConfigMap kSink{{"connector.class", "FileStreamSink"}, {"topics", "in"}, {"file", "/tmp/x"}, {"name", "c"}};

}  // namespace

TEST_CASE("connector config cache: an unchanged config is read once and shared", "[herder][connector_config_cache]") {
  CountingReader reader;
  auto cache = reader.cache();
  auto first = cache.get("c", kSink);
  REQUIRE(first);
  auto again = cache.get("c", kSink);
  REQUIRE(again);
  CHECK(*first == *again);  // the same shared_ptr: one value for every start
  CHECK(reader.calls == 1);
  CHECK(cache.reads() == 1);
  CHECK((*first)->tasks.max_tasks == 1);
  CHECK((*first)->type == kc::connectors::ConnectorType::Sink);
}

TEST_CASE("connector config cache: a changed config is read again and replaces the entry",
          "[herder][connector_config_cache]") {
  CountingReader reader;
  auto cache = reader.cache();
  auto old_config = cache.get("c", kSink);
  ConfigMap changed = kSink;
  changed["tasks.max"] = "3";
  auto updated = cache.get("c", changed);
  REQUIRE(updated);
  CHECK(*updated != *old_config);
  CHECK((*updated)->tasks.max_tasks == 3);
  CHECK(reader.calls == 2);
  CHECK(cache.size() == 1);
  // The newer config is the one kept; going back to the old one reads it again.
  CHECK(*cache.get("c", changed) == *updated);
  CHECK(reader.calls == 2);
  CHECK(*cache.get("c", kSink) != *old_config);
  CHECK(reader.calls == 3);
}

TEST_CASE("connector config cache: drop (removal, explicit restart) forgets the entry",
          "[herder][connector_config_cache]") {
  CountingReader reader;
  auto cache = reader.cache();
  auto before = cache.get("c", kSink);
  (void)cache.get("other", kSink);
  cache.drop("c");
  CHECK(cache.size() == 1);
  auto after = cache.get("c", kSink);
  REQUIRE(after);
  CHECK(*after != *before);  // read anew: a rotated secret would show here
  CHECK(reader.calls == 3);
  cache.drop("absent");  // nothing to forget: no effect
  CHECK(cache.size() == 2);
}

TEST_CASE("connector config cache: a failed read is returned, not kept", "[herder][connector_config_cache]") {
  CountingReader reader;
  auto cache = reader.cache();
  reader.fail = true;
  auto failed = cache.get("c", kSink);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().field == "db.password");
  CHECK(cache.size() == 0);
  // The provider's file is fixed: the next use reads it, with no config change.
  reader.fail = false;
  auto fixed = cache.get("c", kSink);
  REQUIRE(fixed);
  CHECK(reader.calls == 2);
}

TEST_CASE("connector config cache: concurrent uses of one config share one read", "[herder][connector_config_cache]") {
  std::mutex gate;
  std::unique_lock hold(gate);  // the first read waits here until every thread asked
  std::atomic<int> calls{0};
  ConnectorConfigCache cache([&](const std::string& name, const ConfigMap& raw) -> ConnectorConfigCache::Parsed {
    ++calls;
    std::lock_guard wait(gate);
    return ConnectorConfigPtr(std::make_shared<const ConnectorConfig>(ConnectorConfig::parse(
        name, raw, raw, {}, kc::connectors::PluginRegistry::builtin(), kc::runtime::ConnectorConfigInputs{})));
  });
  std::vector<ConnectorConfigPtr> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      auto p = cache.get("c", kSink);
      if (p) got[i] = *p;
    });
  // The others find the first one's entry while it reads; size() and
  // drop() of another connector do not wait for that read.
  while (calls.load() == 0) std::this_thread::yield();
  CHECK(cache.size() == 1);
  cache.drop("other");
  hold.unlock();
  for (auto& t : threads) t.join();
  CHECK(calls == 1);
  for (const auto& p : got) {
    REQUIRE(p);
    CHECK(p == got[0]);
  }
}

namespace {

/// A config provider that counts its reads of path "connector" and serves
/// `value` (changeable: a rotated secret) for every key asked.
class CountingProvider : public kc::providers::ConfigProvider {
 public:
  struct Shared {
    std::atomic<int> connector_reads{0};
    std::mutex mu;
    std::string value;
  };
  explicit CountingProvider(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  kc::Status configure(const ConfigMap&) override { return kc::ok_status(); }
  kc::Result<ConfigMap> get(const std::string& path, const std::set<std::string>& keys) const override {
    if (path == "connector") ++s_->connector_reads;
    std::lock_guard lk(s_->mu);
    ConfigMap out;
    for (const auto& k : keys) out[k] = s_->value;
    return out;
  }

 private:
  std::shared_ptr<Shared> s_;
};

}  // namespace

TEST_CASE("a connector and its tasks starting on one worker resolve the connector's config once",
          "[herder][connector_config_cache][providers]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kc-config-cache-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto shared = std::make_shared<CountingProvider::Shared>();
  shared->value = (dir / "first.txt").string();
  std::vector<std::pair<std::string, std::unique_ptr<kc::providers::ConfigProvider>>> providers;
  providers.emplace_back("count", std::make_unique<CountingProvider>(shared));

  auto m = kc::test::start_mock_cluster(1, {{"lines", 1}});
  kc::runtime::WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  o.config_transformer = kc::providers::ConfigTransformer::from_providers(std::move(providers));
  kc::runtime::Worker w(o, nullptr, nullptr);
  const ConfigMap raw{{"connector.class", "FileStreamSink"},
                      {"topics", "lines"},
                      {"tasks.max", "8"},
                      {"file", "${count:connector:file}"}};
  // Task configs as the connector generates them, placeholders restored;
  // the tasks' own configs hold no placeholder of path "connector".
  const ConfigMap task{{"topics", "lines"}, {"file", (dir / "task.txt").string()}};
  constexpr int kTasks = 8;

  // Before the cache: each start read the connector's config on its own.
  REQUIRE(w.start_connector("before", raw, kc::storage::TargetState::Started));
  for (int i = 0; i < kTasks; ++i)
    REQUIRE(w.start_task({"before", i}, raw, task, kc::storage::TargetState::Started));
  CHECK(shared->connector_reads == kTasks + 1);
  w.stop_all();

  // The herder's way: read once where the config entered, passed down.
  shared->connector_reads = 0;
  ConnectorConfigCache cache([&w](const std::string& n, const ConfigMap& r) { return w.read_connector_config(n, r); });
  auto entered = cache.get("after", raw);  // the config record arrived
  REQUIRE(entered);
  REQUIRE(w.start_connector(*entered, kc::storage::TargetState::Started));
  for (int i = 0; i < kTasks; ++i) {
    auto parsed = cache.get("after", raw);
    REQUIRE(parsed);
    CHECK(*parsed == *entered);
    REQUIRE(w.start_task({"after", i}, *parsed, task, kc::storage::TargetState::Started));
  }
  CHECK(shared->connector_reads == 1);
  CHECK((*entered)->values.at("file") == (dir / "first.txt").string());
  CHECK((*entered)->resolved_keys.count("file") == 1);

  // A rotated secret: an explicit restart drops the entry, the next start
  // reads the new value (once).
  {
    std::lock_guard lk(shared->mu);
    shared->value = (dir / "rotated.txt").string();
  }
  CHECK((*cache.get("after", raw))->values.at("file") == (dir / "first.txt").string());  // no restart: kept
  cache.drop("after");
  (void)w.stop_connector("after");
  auto reread = cache.get("after", raw);
  REQUIRE(reread);
  CHECK((*reread)->values.at("file") == (dir / "rotated.txt").string());
  REQUIRE(w.start_connector(*reread, kc::storage::TargetState::Started));
  CHECK(shared->connector_reads == 2);
  w.stop_all();
  fs::remove_all(dir);
}
