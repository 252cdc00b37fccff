#pragma once
// Test harness: one librdkafka mock cluster plus several DistributedHerder
// instances in this process, and a TaskObserver shared by all of them that
// checks the at-most-one-owner invariant (DESIGN.md invariant 1).
//
// Threads: the observer is called on task threads; everything else runs on
// the test thread. Catch2 assertions are not thread-safe, so the observer
// only records violations; the test thread checks them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/connect/types.h"
#include "worker/herder/distributed_herder.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"

namespace kc::test {

using connect::ConnectorTaskId;
using connect::ConnectProtocol;
using herder::AssignmentState;
using herder::DistributedHerder;
using herder::HerderConfig;
using herder::RebalanceRecord;
using Clock = std::chrono::steady_clock;
using TaskSet = std::set<ConnectorTaskId>;

/// A SequenceSource config (connectors::kSequenceSourceClass): `tasks`
/// tasks writing to topic `seq-data`, `throughput` records/s each.
std::map<std::string, std::string> seq_config(int tasks, int throughput = 20);

/// Records every task start/stop with its worker. A start while another
/// worker still runs the task is a violation of invariant 1.
class OwnershipObserver : public runtime::TaskObserver {
 public:
  struct Event {
    Clock::time_point at;
    std::string worker;
    ConnectorTaskId task;
    bool start = false;
  };

  void on_task_start(const std::string& worker_id, const ConnectorTaskId& id) override;
  void on_task_stop(const std::string& worker_id, const ConnectorTaskId& id) override;

  /// Descriptions of every invariant violation seen so far.
  std::vector<std::string> violations() const;
  /// Index of the next event; pass to stops_since() / starts_since().
  size_t mark() const;
  /// Number of stops per task among the events from `mark` on.
  std::map<ConnectorTaskId, int> stops_since(size_t mark) const;
  /// Number of starts per task among the events from `mark` on.
  std::map<ConnectorTaskId, int> starts_since(size_t mark) const;
  /// Current owners (workers that started and not yet stopped) per task.
  std::map<ConnectorTaskId, std::set<std::string>> owners() const;
  /// Events from `mark` on, for diagnostics.
  std::vector<Event> events_since(size_t mark) const;

 private:
  mutable std::mutex mu_;
  std::map<ConnectorTaskId, std::set<std::string>> owners_;
  std::vector<Event> events_;
  std::vector<std::string> violations_;
};

/// Settings shared by every worker of one test cluster.
struct ClusterOptions {
  ConnectProtocol protocol = ConnectProtocol::Sessioned;
  int session_timeout_ms = 6000;
  int heartbeat_interval_ms = 1000;
  int scheduled_rebalance_max_delay_ms = 4000;
  /// rebalance.hand.over.enable: moved tasks reach their new owner in the
  /// revoking round (false: KIP-415's revoke round, then assign round).
  bool hand_over_moves = true;
  /// Extra topics to create: name → partitions.
  std::map<std::string, int> data_topics;
  /// Called with each worker's id and config before it starts, to change
  /// settings this struct has no field for (e.g. inter.worker.key.ttl.ms).
  std::function<void(const std::string& id, HerderConfig& config)> configure;
  /// Scheme of each worker's advertised URL "<scheme>://<id>/" (ids are
  /// host:port when the test runs REST servers for them).
  std::string rest_scheme = "http";
  /// HerderConfig::rest_client_tls of every worker (https peers).
  std::shared_ptr<rest::TlsContext> rest_client_tls;
};

/// Expected configured work: connector names and task ids.
struct Expected {
  std::set<std::string> connectors;
  TaskSet tasks;
  /// "seq" with tasks.max = n → connector seq, tasks seq-0 .. seq-(n-1).
  Expected& add(const std::string& connector, int tasks);
  Expected& remove(const std::string& connector);
};

class TestCluster {
 public:
  explicit TestCluster(ClusterOptions opts);
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  /// Starts a worker with id `id` (must not be running). Fails the test if
  /// start() fails.
  DistributedHerder& start_worker(const std::string& id);
  /// Starts several workers in parallel (start() blocks on the stores).
  void start_workers(const std::vector<std::string>& ids);
  /// Clean stop (LeaveGroup) and removal.
  void stop_worker(const std::string& id);
  /// crash() (no LeaveGroup) and removal.
  void crash_worker(const std::string& id);

  /// Ids of the live workers.
  std::vector<std::string> live() const;
  DistributedHerder& worker(const std::string& id) { return *workers_.at(id); }
  /// Id of the live worker that says it is leader, if any.
  std::optional<std::string> leader() const;

  /// Creates or replaces a connector through the current leader (retries
  /// until `timeout`). Fails the test on timeout.
  void put_connector(const std::string& name, const std::map<std::string, std::string>& config,
                     std::chrono::milliseconds timeout = std::chrono::seconds(60));
  void delete_connector(const std::string& name, std::chrono::milliseconds timeout = std::chrono::seconds(60));

  /// True when every live worker is in the same stable, applied generation,
  /// runs exactly what it is assigned, the union of assignments equals
  /// `expected` with no duplicates, per-worker counts differ by at most 1
  /// (when `check_balance`), and the observer agrees on every task's owner.
  /// Otherwise false with the reason in `why`.
  bool stable(const Expected& expected, std::string* why, bool check_balance = true) const;

  /// Polls stable() until it held for `hold` with one generation, or fails
  /// the test at `timeout` with the last reason and a dump of all states.
  void wait_stable(const Expected& expected, std::chrono::milliseconds timeout = std::chrono::seconds(120),
                   std::chrono::milliseconds hold = std::chrono::milliseconds(2500), bool check_balance = true);

  /// Task owner per task, from the live workers' assignment states.
  std::map<ConnectorTaskId, std::string> task_owners() const;
  /// Tasks assigned to each live worker.
  std::map<std::string, TaskSet> tasks_by_worker() const;
  /// Current generation of `id` (its assignment state).
  int32_t generation(const std::string& id) const;
  /// Every rebalance record of every worker ever started (also the ones
  /// gone, captured when they stopped), tagged with the worker id.
  std::vector<std::pair<std::string, RebalanceRecord>> all_history() const;

  /// Fails the test if the observer recorded a violation.
  void check_invariant() const;
  /// Multi-line dump of every live worker's state, for failure messages.
  std::string dump() const;

  OwnershipObserver& observer() { return observer_; }
  storage::MockCluster& mock() { return *mock_; }
  const ClusterOptions& options() const { return opts_; }

 private:
  HerderConfig config_for(const std::string& id) const;

  ClusterOptions opts_;
  std::unique_ptr<storage::MockCluster> mock_;
  OwnershipObserver observer_;  // outlives the herders (declared before them)
  std::map<std::string, std::unique_ptr<DistributedHerder>> workers_;
  std::vector<std::pair<std::string, RebalanceRecord>> gone_history_;
};

/// Polls `pred` every 50 ms until it is true or `timeout` passed.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

/// "name" → "a,b" text for messages.
std::string to_string(const TaskSet& tasks);

/// Calls a HerderApi method `f(callback)` and waits for its reply: the
/// reply, or RestError::internal("no reply within 10 s"). Test thread.
template <typename T, typename F>
rest::Reply<T> herder_reply(F&& f) {
  auto p = std::make_shared<std::promise<rest::Reply<T>>>();
  auto fut = p->get_future();
  f([p](rest::Reply<T> r) { p->set_value(std::move(r)); });
  if (fut.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    return rest::RestError::internal("no reply within 10 s");
  return fut.get();
}

}  // namespace kc::test
