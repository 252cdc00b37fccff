#include "tests/integration/worker/cluster_harness.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "worker/plugins/builtin.h"

namespace kc::test {

namespace {
// Test binaries that link the harness log at KC_TEST_LOG's level (default
// warn), set once before any test runs.
const bool kLogLevelSet = [] {
  const char* env = std::getenv("KC_TEST_LOG");
  spdlog::set_level(env ? spdlog::level::from_str(env) : spdlog::level::warn);
  return true;
}();
}  // namespace

std::map<std::string, std::string> seq_config(int tasks, int throughput) {
  return {{"connector.class", connectors::kSequenceSourceClass},
          {"tasks.max", std::to_string(tasks)},
          {"topic", "seq-data"},
          {"throughput", std::to_string(throughput)}};
}

// ---------------------------------------------------------------- observer

void OwnershipObserver::on_task_start(const std::string& worker_id, const ConnectorTaskId& id) {
  std::lock_guard lk(mu_);
  auto& owners = owners_[id];
  if (!owners.empty()) {
    std::string others;
    for (const auto& o : owners) others += (others.empty() ? "" : ",") + o;
    violations_.push_back("task " + id.to_string() + " started on " + worker_id + " while running on " + others);
  }
  owners.insert(worker_id);
  events_.push_back(Event{Clock::now(), worker_id, id, true});
}

void OwnershipObserver::on_task_stop(const std::string& worker_id, const ConnectorTaskId& id) {
  std::lock_guard lk(mu_);
  auto& owners = owners_[id];
  if (owners.erase(worker_id) == 0)
    violations_.push_back("task " + id.to_string() + " stopped on " + worker_id + " which did not run it");
  events_.push_back(Event{Clock::now(), worker_id, id, false});
}

std::vector<std::string> OwnershipObserver::violations() const {
  std::lock_guard lk(mu_);
  return violations_;
}

size_t OwnershipObserver::mark() const {
  std::lock_guard lk(mu_);
  return events_.size();
}

std::map<ConnectorTaskId, int> OwnershipObserver::stops_since(size_t mark) const {
  std::lock_guard lk(mu_);
  std::map<ConnectorTaskId, int> out;
  for (size_t i = mark; i < events_.size(); ++i)
    if (!events_[i].start) ++out[events_[i].task];
  return out;
}

std::map<ConnectorTaskId, int> OwnershipObserver::starts_since(size_t mark) const {
  std::lock_guard lk(mu_);
  std::map<ConnectorTaskId, int> out;
  for (size_t i = mark; i < events_.size(); ++i)
    if (events_[i].start) ++out[events_[i].task];
  return out;
}

std::map<ConnectorTaskId, std::set<std::string>> OwnershipObserver::owners() const {
  std::lock_guard lk(mu_);
  std::map<ConnectorTaskId, std::set<std::string>> out;
  for (const auto& [id, o] : owners_)
    if (!o.empty()) out[id] = o;
  return out;
}

std::vector<OwnershipObserver::Event> OwnershipObserver::events_since(size_t mark) const {
  std::lock_guard lk(mu_);
  if (mark >= events_.size()) return {};
  return {events_.begin() + static_cast<std::ptrdiff_t>(mark), events_.end()};
}

// ---------------------------------------------------------------- expected

Expected& Expected::add(const std::string& connector, int tasks) {
  remove(connector);
  connectors.insert(connector);
  for (int i = 0; i < tasks; ++i) this->tasks.insert(ConnectorTaskId{connector, i});
  return *this;
}

Expected& Expected::remove(const std::string& connector) {
  connectors.erase(connector);
  for (auto it = tasks.begin(); it != tasks.end();) it = it->connector == connector ? tasks.erase(it) : std::next(it);
  return *this;
}

// ---------------------------------------------------------------- helpers

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string to_string(const TaskSet& tasks) {
  std::string s;
  for (const auto& t : tasks) s += (s.empty() ? "" : ",") + t.to_string();
  return "[" + s + "]";
}

namespace {

template <typename T>
std::optional<rest::Reply<T>> call_herder(const std::function<void(rest::Callback<T>)>& fn,
                                          std::chrono::milliseconds timeout) {
  auto p = std::make_shared<std::promise<rest::Reply<T>>>();
  auto f = p->get_future();
  fn([p](rest::Reply<T> r) { p->set_value(std::move(r)); });
  if (f.wait_for(timeout) != std::future_status::ready) return std::nullopt;
  return f.get();
}

}  // namespace

// ---------------------------------------------------------------- cluster

TestCluster::TestCluster(ClusterOptions opts) : opts_(std::move(opts)) {
  auto m = storage::MockCluster::start(1);
  REQUIRE(m);
  mock_ = std::move(m.value());
  std::map<std::string, int> topics{{"connect-configs", 1}, {"connect-offsets", 25}, {"connect-status", 5}};
  for (const auto& [t, p] : opts_.data_topics) topics[t] = p;
  for (const auto& [t, p] : topics) {
    auto st = mock_->create_topic(t, p, 1);
    INFO(t << ": " << (st ? std::string("ok") : st.error().to_string()));
    REQUIRE(st);
  }
}

TestCluster::~TestCluster() {
  // Stop in parallel: each stop() waits for its own LeaveGroup.
  std::vector<std::thread> stoppers;
  for (auto& [id, w] : workers_) stoppers.emplace_back([h = w.get()] { h->stop(); });
  for (auto& t : stoppers) t.join();
  workers_.clear();
}

HerderConfig TestCluster::config_for(const std::string& id) const {
  HerderConfig c;
  c.group_id = "kc-it";
  c.bootstrap_servers = mock_->bootstrap_servers();
  c.protocol = opts_.protocol;
  c.session_timeout_ms = opts_.session_timeout_ms;
  c.heartbeat_interval_ms = opts_.heartbeat_interval_ms;
  c.rebalance_timeout_ms = 20000;
  c.request_timeout_ms = 10000;
  c.worker_sync_timeout_ms = 3000;
  c.scheduled_rebalance_max_delay_ms = opts_.scheduled_rebalance_max_delay_ms;
  c.hand_over_moves = opts_.hand_over_moves;
  c.config_replication_factor = 1;
  c.offset_replication_factor = 1;
  c.status_replication_factor = 1;
  c.offset_flush_interval_ms = 1000;
  c.task_shutdown_graceful_timeout_ms = 3000;
  c.key_converter = "org.apache.kafka.connect.storage.StringConverter";
  c.value_converter = "org.apache.kafka.connect.storage.StringConverter";
  c.advertised_url = opts_.rest_scheme + "://" + id + "/";
  c.rest_client_tls = opts_.rest_client_tls;
  c.worker_id = id;
  c.config_poll_interval_ms = 500;
  c.status_poll_interval_ms = 1000;
  c.startup_timeout_ms = 30000;
  if (opts_.configure) opts_.configure(id, c);
  return c;
}

DistributedHerder& TestCluster::start_worker(const std::string& id) {
  REQUIRE(workers_.count(id) == 0);
  auto h = std::make_unique<DistributedHerder>(config_for(id));
  h->set_task_observer(&observer_);
  auto st = h->start();
  INFO("start " << id << ": " << (st ? std::string("ok") : st.error().to_string()));
  REQUIRE(st);
  auto& ref = *h;
  workers_[id] = std::move(h);
  return ref;
}

void TestCluster::start_workers(const std::vector<std::string>& ids) {
  std::vector<std::unique_ptr<DistributedHerder>> hs;
  std::vector<std::string> errors(ids.size());
  for (const auto& id : ids) {
    REQUIRE(workers_.count(id) == 0);
    hs.push_back(std::make_unique<DistributedHerder>(config_for(id)));
    hs.back()->set_task_observer(&observer_);
  }
  std::vector<std::thread> starters;
  for (size_t i = 0; i < ids.size(); ++i)
    starters.emplace_back([&, i] {
      auto st = hs[i]->start();
      if (!st) errors[i] = st.error().to_string();
    });
  for (auto& t : starters) t.join();
  for (size_t i = 0; i < ids.size(); ++i) {
    INFO("start " << ids[i] << ": " << errors[i]);
    CHECK(errors[i].empty());
    workers_[ids[i]] = std::move(hs[i]);
  }
  for (const auto& e : errors) REQUIRE(e.empty());
}

void TestCluster::stop_worker(const std::string& id) {
  auto it = workers_.find(id);
  REQUIRE(it != workers_.end());
  it->second->stop();
  for (auto& r : it->second->rebalance_history()) gone_history_.emplace_back(id, std::move(r));
  workers_.erase(it);
}

void TestCluster::crash_worker(const std::string& id) {
  auto it = workers_.find(id);
  REQUIRE(it != workers_.end());
  it->second->crash();
  for (auto& r : it->second->rebalance_history()) gone_history_.emplace_back(id, std::move(r));
  workers_.erase(it);
}

std::vector<std::string> TestCluster::live() const {
  std::vector<std::string> out;
  for (const auto& [id, _] : workers_) out.push_back(id);
  return out;
}

std::optional<std::string> TestCluster::leader() const {
  for (const auto& [id, w] : workers_)
    if (w->assignment_state().is_leader) return id;
  return std::nullopt;
}

void TestCluster::put_connector(const std::string& name, const std::map<std::string, std::string>& config,
                                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last = "no leader";
  while (Clock::now() < deadline) {
    if (auto l = leader()) {
      rest::PutConnectorRequest req;
      req.name = name;
      req.config = config;
      req.config["name"] = name;
      req.allow_replace = true;
      auto r = call_herder<rest::PutConnectorResult>(
          [&](rest::Callback<rest::PutConnectorResult> cb) { workers_.at(*l)->put_connector_config(req, cb); },
          std::chrono::seconds(30));
      if (r && r->ok()) return;
      last = !r ? "timeout" : r->error().message;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  FAIL("put_connector " << name << " failed: " << last << "\n" << dump());
}

void TestCluster::delete_connector(const std::string& name, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last = "no leader";
  while (Clock::now() < deadline) {
    if (auto l = leader()) {
      auto r = call_herder<rest::Done>(
          [&](rest::Callback<rest::Done> cb) { workers_.at(*l)->delete_connector(name, cb); },
          std::chrono::seconds(30));
      if (r && r->ok()) return;
      last = !r ? "timeout" : r->error().message;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  FAIL("delete_connector " << name << " failed: " << last << "\n" << dump());
}

bool TestCluster::stable(const Expected& expected, std::string* why, bool check_balance) const {
  auto fail = [why](std::string s) {
    if (why) *why = std::move(s);
    return false;
  };
  if (workers_.empty()) return fail("no live worker");
  std::optional<int32_t> gen;
  std::map<std::string, std::string> connector_owner;
  std::map<ConnectorTaskId, std::string> task_owner;
  std::vector<size_t> connector_counts, task_counts;
  for (const auto& [id, w] : workers_) {
    const AssignmentState st = w->assignment_state();
    if (!st.in_group) return fail(id + " not in group");
    if (!st.applied) return fail(id + " assignment not applied");
    if (st.generation < 0) return fail(id + " has no generation");
    if (gen && *gen != st.generation)
      return fail("generations differ (" + std::to_string(*gen) + " vs " + std::to_string(st.generation) + ")");
    gen = st.generation;
    std::set<std::string> ac(st.assigned_connectors.begin(), st.assigned_connectors.end());
    std::set<std::string> rc(st.running_connectors.begin(), st.running_connectors.end());
    TaskSet at(st.assigned_tasks.begin(), st.assigned_tasks.end());
    TaskSet rt(st.running_tasks.begin(), st.running_tasks.end());
    if (ac != rc) return fail(id + " runs other connectors than assigned");
    if (at != rt) return fail(id + " runs " + to_string(rt) + " but is assigned " + to_string(at));
    for (const auto& c : ac)
      if (!connector_owner.emplace(c, id).second) return fail("connector " + c + " assigned twice");
    for (const auto& t : at)
      if (!task_owner.emplace(t, id).second) return fail("task " + t.to_string() + " assigned twice");
    connector_counts.push_back(ac.size());
    task_counts.push_back(at.size());
  }
  std::set<std::string> all_c;
  for (const auto& [c, _] : connector_owner) all_c.insert(c);
  TaskSet all_t;
  for (const auto& [t, _] : task_owner) all_t.insert(t);
  if (all_c != expected.connectors) return fail("assigned connectors differ from expected");
  if (all_t != expected.tasks) return fail("assigned tasks " + to_string(all_t) + " != expected " + to_string(expected.tasks));
  if (check_balance) {
    auto [cmin, cmax] = std::minmax_element(connector_counts.begin(), connector_counts.end());
    auto [tmin, tmax] = std::minmax_element(task_counts.begin(), task_counts.end());
    if (*cmax - *cmin > 1) return fail("connectors unbalanced");
    if (*tmax - *tmin > 1) return fail("tasks unbalanced");
  }
  // The runtime's own reports must agree with the herders' states.
  auto owners = observer_.owners();
  for (const auto& [t, o] : task_owner) {
    auto it = owners.find(t);
    if (it == owners.end() || it->second != std::set<std::string>{o})
      return fail("observer disagrees about the owner of " + t.to_string());
  }
  for (const auto& [t, o] : owners)
    if (!task_owner.count(t)) return fail("observer sees " + t.to_string() + " running but nobody is assigned it");
  return true;
}

void TestCluster::wait_stable(const Expected& expected, std::chrono::milliseconds timeout,
                              std::chrono::milliseconds hold, bool check_balance) {
  const auto deadline = Clock::now() + timeout;
  bool holding = false;
  Clock::time_point since = Clock::now();
  int32_t since_gen = -2;
  std::string why;
  while (Clock::now() < deadline) {
    check_invariant();
    if (stable(expected, &why, check_balance)) {
      const int32_t g = workers_.begin()->second->assignment_state().generation;
      if (!holding || g != since_gen) {
        holding = true;
        since = Clock::now();
        since_gen = g;
      }
      if (Clock::now() - since >= hold) return;
    } else {
      holding = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("group did not become stable: " << why << "\n" << dump());
}

std::map<ConnectorTaskId, std::string> TestCluster::task_owners() const {
  std::map<ConnectorTaskId, std::string> out;
  for (const auto& [id, w] : workers_)
    for (const auto& t : w->assignment_state().assigned_tasks) out[t] = id;
  return out;
}

std::map<std::string, TaskSet> TestCluster::tasks_by_worker() const {
  std::map<std::string, TaskSet> out;
  for (const auto& [id, w] : workers_) {
    auto st = w->assignment_state();
    out[id] = TaskSet(st.assigned_tasks.begin(), st.assigned_tasks.end());
  }
  return out;
}

int32_t TestCluster::generation(const std::string& id) const { return workers_.at(id)->assignment_state().generation; }

std::vector<std::pair<std::string, RebalanceRecord>> TestCluster::all_history() const {
  auto out = gone_history_;
  for (const auto& [id, w] : workers_)
    for (auto& r : w->rebalance_history()) out.emplace_back(id, std::move(r));
  return out;
}

void TestCluster::check_invariant() const {
  auto v = observer_.violations();
  if (!v.empty()) {
    std::string all;
    for (const auto& s : v) all += s + "\n";
    FAIL("at-most-one-owner violated:\n" << all << dump());
  }
}

std::string TestCluster::dump() const {
  std::ostringstream os;
  for (const auto& [id, w] : workers_) {
    auto st = w->assignment_state();
    os << "  " << id << ": gen " << st.generation << (st.is_leader ? " leader" : "") << " proto " << st.protocol
       << (st.in_group ? " in-group" : " not-in-group") << (st.applied ? " applied" : " not-applied")
       << " connectors " << st.assigned_connectors.size() << " tasks "
       << to_string(TaskSet(st.assigned_tasks.begin(), st.assigned_tasks.end())) << " running "
       << to_string(TaskSet(st.running_tasks.begin(), st.running_tasks.end())) << "\n";
    auto h = w->rebalance_history();
    const size_t from = h.size() > 6 ? h.size() - 6 : 0;
    for (size_t i = from; i < h.size(); ++i) {
      const auto& r = h[i];
      os << "      gen " << r.generation << " " << r.protocol << " err " << r.error << " +"
         << to_string(TaskSet(r.assigned_tasks.begin(), r.assigned_tasks.end())) << " -"
         << to_string(TaskSet(r.revoked_tasks.begin(), r.revoked_tasks.end())) << " delay " << r.delay_ms
         << (r.applied_ms ? " applied" : " not-applied") << "\n";
    }
  }
  return os.str();
}

}  // namespace kc::test
