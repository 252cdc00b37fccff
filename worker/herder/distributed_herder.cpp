// DistributedHerder: see distributed_herder.h and README.md.
//
// Thread ownership in this file:
//   * `io_*` members and every method named on_* / io_* run on the io thread;
//   * methods named job_* run on the pool (blocking allowed), the apply
//     sequence on `apply_strand`, job_reconfigure (the leader's task-config
//     generation, which waits for plugin code) on `generation_io`;
//   * `mu` guards `pub` and `history`, read by other threads.
#include "worker/herder/distributed_herder.h"

#include "worker/data/converters.h"

#include "common/json_bounds.h"
#include "common/strings.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "assignor/assignor.h"
#include "worker/plugins/registry.h"
#include "worker/herder/internal_client.h"
#include "worker/storage/transactional_producer.h"
#include "worker/herder/plugin_config.h"
#include "worker/herder/reconciler.h"
#include "worker/herder/sink_offsets.h"
#include "worker/herder/source_offsets.h"
#include "worker/storage/group_admin.h"
#include "worker/storage/kafka_security.h"
#include "worker/metrics/log_context.h"
#include "worker/api/url.h"
#include "worker/runtime/call_watchdog.h"
#include "worker/coordinator/worker_coordinator.h"
#include "worker/storage/config_store.h"
#include "worker/storage/offset_store.h"
#include "worker/storage/status_store.h"

namespace kc::herder {

namespace asio = boost::asio;
using connect::Assignment;
using storage::ClusterConfigState;
using storage::ConfigMap;
using storage::StatusState;
using storage::StatusValue;

namespace {

constexpr size_t kMaxHistory = 256;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}


rest::ConnectState to_rest(StatusState s) {
  switch (s) {
    case StatusState::Unassigned: return rest::ConnectState::Unassigned;
    case StatusState::Running: return rest::ConnectState::Running;
    case StatusState::Paused: return rest::ConnectState::Paused;
    case StatusState::Failed: return rest::ConnectState::Failed;
    case StatusState::Restarting: return rest::ConnectState::Restarting;
    case StatusState::Stopped: return rest::ConnectState::Stopped;
    case StatusState::Destroyed: return rest::ConnectState::Destroyed;
  }
  return rest::ConnectState::Unassigned;
}

storage::TargetState to_storage(rest::TargetState t) {
  switch (t) {
    case rest::TargetState::Started: return storage::TargetState::Started;
    case rest::TargetState::Paused: return storage::TargetState::Paused;
    case rest::TargetState::Stopped: return storage::TargetState::Stopped;
  }
  return storage::TargetState::Started;
}

/// "[a,b,c]" for log lines; `to_text(item)` gives each element's text.
/// Built with append(), not (const char*) + std::string: GCC 12 at -O3 raises a
/// false -Wrestrict on that operator+, an error in Release.
template <typename Items, typename ToText>
std::string bracketed_list(const Items& items, ToText to_text) {
  std::string s = "[";
  for (const auto& item : items) {
    if (s.size() > 1) s += ',';
    s += to_text(item);
  }
  s += ']';
  return s;
}
std::string ids_to_string(const std::vector<ConnectorTaskId>& ids) {
  return bracketed_list(ids, [](const ConnectorTaskId& id) { return id.to_string(); });
}
std::string names_to_string(const std::vector<std::string>& names) {
  return bracketed_list(names, [](const std::string& n) -> const std::string& { return n; });
}

/// The status listener when topic.tracking.enable=false: task and connector
/// statuses as usual, no `status-topic-` records (Connect's WorkerConfig).
class UntrackedStatusListener : public runtime::StatusStoreListener {
 public:
  using StatusStoreListener::StatusStoreListener;
  void on_topic_active(const ConnectorTaskId&, const std::string&) override {}
};

/// Merges `add` into `to`: sorted, without duplicates.
template <typename T>
void add_sorted(std::vector<T>& to, const std::vector<T>& add) {
  if (add.empty()) return;
  std::set<T> all(to.begin(), to.end());
  all.insert(add.begin(), add.end());
  to.assign(all.begin(), all.end());
}

/// "w1:8083" → "http://w1:8083/" (owner URL from a status record's worker id).
std::string url_of_worker_id(const std::string& worker_id) {
  if (worker_id.empty()) return {};
  return "http://" + worker_id + "/";
}

}  // namespace

/// The REST answer to a failed config-topic write: a failed privileged
/// write of the transactional leader (KIP-618) is a 500 with Connect's
/// "Failed to write to config topic; this may be due to a transient error
/// and the request can be safely retried: <cause>"; anything else
/// RestError::write_timeout(what, ...).
static rest::RestError config_write_error(const std::string& what, const Error& e) {
  if (storage::is_privileged_write_error(e)) return rest::RestError::internal(e.message);
  if (storage::is_unreadable_record_error(e)) return rest::RestError::bad_request(e.message);  // nothing was sent
  return rest::RestError::write_timeout(what, e.to_string());
}

// ----------------------------------------------------------------------------
// Impl
// ----------------------------------------------------------------------------

struct DistributedHerder::Impl : std::enable_shared_from_this<Impl> {
  explicit Impl(HerderConfig c, const connectors::PluginRegistry* reg)
      : cfg(std::move(c)),
        registry(reg ? reg : &connectors::PluginRegistry::builtin()),
        work(asio::make_work_guard(io)),
        pool_work(asio::make_work_guard(pool)),
        apply_strand(asio::make_strand(pool)),
        generation_work(asio::make_work_guard(generation_io)),
        scheduled_timer(io),
        config_poll_timer(io),
        status_poll_timer(io),
        retry_timer(io),
        drain_timer(io),
        key_timer(io),
        claim_timer(io),
        hand_over_retry_timer(io) {
    if (!cfg.metrics) cfg.metrics = std::make_shared<metrics::WorkerMetrics>();
    io_protocol = cfg.protocol;  // until the first assignment names the group's (Connect's currentProtocolVersion)
    log_ctx->worker_id = cfg.worker_id;
  }

  HerderConfig cfg;
  const connectors::PluginRegistry* registry;

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::thread io_thread;
  // The blocking pool: kPoolThreads threads of our own running `pool`, so
  // that each carries this worker's log context ([worker gen N] prefix).
  static constexpr int kPoolThreads = 4;
  asio::io_context pool;
  asio::executor_work_guard<asio::io_context::executor_type> pool_work;
  std::vector<std::thread> pool_threads;
  asio::strand<asio::io_context::executor_type> apply_strand;
  // The leader's task-config generations (job_reconfigure): the plugin
  // runs on a thread of its own per generation (generate_async); these
  // threads only prepare, look at it every 50 ms and write the configs,
  // so a stuck plugin delays no other connector's generation.
  static constexpr int kGenerationThreads = 2;
  asio::io_context generation_io;
  asio::executor_work_guard<asio::io_context::executor_type> generation_work;
  std::vector<std::thread> generation_threads;

  std::unique_ptr<storage::ConfigBackingStore> config_store;
  std::unique_ptr<storage::OffsetBackingStore> offset_store;
  std::unique_ptr<storage::StatusBackingStore> status_store;
  std::unique_ptr<runtime::StatusStoreListener> status_listener;
  std::unique_ptr<runtime::Worker> worker;
  std::shared_ptr<coordinator::WorkerCoordinator> coord;

  std::atomic<bool> started{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> admitting{false};
  std::atomic<bool> rebalance_pending{false};  // a config change waits for a rebalance
  std::atomic<runtime::TaskObserver*> observer{nullptr};
  // The newest assignment's apply sequence number (io_apply_seq, published
  // for the apply strand): an apply that a newer assignment superseded only
  // stops what it must, and leaves config catch-up, offsets read and starts
  // to the newest one, so a queue of applies never holds the JoinGroup gate.
  std::atomic<uint64_t> latest_apply_seq{0};

  // ---- io-thread state
  bool io_accept_updates = false;
  std::string kafka_cluster_id;  ///< set by start(), read-only afterwards (GET /)
  std::set<std::string> io_known_connectors;
  int32_t io_generation = -1;
  bool io_is_leader = false;
  bool io_was_leader = false;  // leader of the last completed generation
  std::string io_leader_url;
  ConnectProtocol io_protocol = ConnectProtocol::Sessioned;
  std::optional<Assignment> io_assignment;  // merged snapshot
  assignor::LeaderState io_leader_state;
  asio::steady_timer scheduled_timer;
  asio::steady_timer config_poll_timer;
  asio::steady_timer status_poll_timer;
  asio::steady_timer retry_timer;
  bool io_config_polling = false;
  bool io_status_polling = false;
  int64_t io_rebalance_started_ms = 0;
  std::string io_rebalance_reason;  // why the current rebalance started (GET /rebalances)
  // Worker id + generation printed in every log line of the io thread (issue 5).
  std::shared_ptr<metrics::LogContext> log_ctx = std::make_shared<metrics::LogContext>();
  bool coord_lost = false;          // guarded by mu: coordinator-loss revocation, not yet reassigned
  std::string config_read_error;    // guarded by mu: last config poll failure, "" when fine
  uint64_t io_apply_seq = 0;  // bumped per assignment; stale apply completions are ignored
  // Revocation stops queued or running; JoinGroup waits until it is 0.
  int io_pending_stops = 0;
  std::vector<std::function<void()>> io_join_waiters;
  std::set<std::string> io_reconfiguring;  // leader: task-config generation in flight
  std::set<std::string> io_reconfigure_again;  // leader: asked again while in flight
  std::set<std::string> io_reconfigure_unsent;  // follower: forwarding failed, resend after the next assignment
  // Leader (KIP-618): connectors whose zombie fencing runs, with who waits for it.
  std::map<std::string, std::vector<std::function<void(int, std::string)>>> io_fencings;
  assignor::ConnectorsAndTasks io_revoked_before_join;  // stopped by a revoke-all JoinGroup, for the history
  // ---- drain (io thread): this worker's own drain, and as leader the
  // members draining and the members of the last round it assigned.
  bool io_draining = false;
  std::optional<std::pair<bool, std::string>> io_drain_result;  // set once the drain ended
  std::vector<DistributedHerder::DrainDone> io_drain_done;
  asio::steady_timer drain_timer;
  std::set<std::string> io_drain_members;
  std::vector<std::string> io_round_members;
  std::atomic<bool> draining_flag{false};

  // ---- KIP-507 (io thread): the session key in force, the leader's
  // rotation timer; `key_mu` guards the published view and the counters.
  std::optional<SessionKey> io_session_key;
  bool io_key_writing = false;  // leader: a new key is being written
  asio::steady_timer key_timer;
  mutable std::mutex key_mu;
  SessionKeyInfo key_info;

  // ---- KIP-618 transactional leader (io thread unless noted): a claim of
  // the config topic's write privileges under way, its retry timer, and
  // Connect's fencedFromConfigTopic (set from pool threads).
  bool io_claiming = false;
  asio::steady_timer claim_timer;
  std::atomic<bool> fenced_from_config_topic{false};
  mutable std::mutex writer_mu;
  std::string writer_last_error;  ///< guarded by writer_mu
  InternalRequestStats key_stats;

  // ---- apply-strand state: the reconciler's actual state (what this worker
  // started, with which configs and target states)
  std::map<std::string, RunningConnector> strand_connectors;
  std::map<ConnectorTaskId, RunningTask> strand_tasks;
  std::set<std::string> strand_failed_c;        // start failed; kept so it is not retried in a loop
  std::set<ConnectorTaskId> strand_failed_t;
  std::vector<RestartRequest> strand_restarts;  // KIP-745 requests not yet reconciled
  // Tasks assigned here that their old owner (draining, or revoked in the
  // same round) still runs: when we first saw that (mono ms). They start
  // once its stop is read, or after the bound.
  std::map<ConnectorTaskId, int64_t> strand_hand_over_since;
  asio::steady_timer hand_over_retry_timer;  // io thread: re-reconciles while a hand-over is pending
  std::atomic<bool> reconcile_queued{false};
  // The apply sequence number whose start step was reached: the reconciler
  // starts nothing new while it lags latest_apply_seq.
  std::atomic<uint64_t> applied_apply_seq{0};
  // Set when the freeze watchdog cut everything off; nothing new starts
  // until the next assignment (we are out of the group).
  std::atomic<bool> frozen_hold{false};

  // ---- freeze watchdog (its own thread)
  std::thread watchdog;
  std::mutex watchdog_mu;
  std::condition_variable watchdog_cv;

  // ---- shared with other threads
  mutable std::mutex mu;
  AssignmentState pub;
  std::deque<RebalanceRecord> history;
  bool coord_fatal = false;
  std::string coord_fatal_message;

  // Log lines carry "[worker gen N]" from the log pattern (worker/metrics/log_context.h).

  // ------------------------------------------------------------------ startup
  Status open_stores() {
    storage::ClientProps client = cfg.client_props;
    client["bootstrap.servers"] = cfg.bootstrap_servers;

    storage::ConfigBackingStore::Options co;
    co.client = client;
    co.topic = cfg.config_topic;
    co.replication_factor = cfg.config_replication_factor;
    co.client_id = cfg.group_id + "-configs";
    co.timeout_ms = cfg.startup_timeout_ms;
    if (cfg.transactional_leader) co.transactional_id = storage::config_topic_transactional_id(cfg.group_id);
    co.read_committed = cfg.exactly_once_source;
    std::weak_ptr<Impl> w = weak_from_this();
    auto cs = storage::ConfigBackingStore::open(co, [w](const storage::ConfigUpdate& u) {
      if (auto self = w.lock()) asio::post(self->io, [w, u] {
          if (auto s = w.lock()) s->on_config_update(u);
        });
    });
    if (!cs) return Error{"config.storage.topic", cfg.config_topic + ": " + cs.error().to_string()};
    config_store = std::move(cs.value());

    storage::OffsetBackingStore::Options oo;
    oo.client = client;
    oo.topic = cfg.offset_topic;
    oo.partitions = cfg.offset_partitions;
    oo.replication_factor = cfg.offset_replication_factor;
    oo.client_id = cfg.group_id + "-offsets";
    oo.timeout_ms = cfg.startup_timeout_ms;
    auto os = storage::OffsetBackingStore::open(oo);
    if (!os) return Error{"offset.storage.topic", cfg.offset_topic + ": " + os.error().to_string()};
    offset_store = std::move(os.value());

    storage::StatusBackingStore::Options so;
    so.client = client;
    so.topic = cfg.status_topic;
    so.partitions = cfg.status_partitions;
    so.replication_factor = cfg.status_replication_factor;
    so.client_id = cfg.group_id + "-statuses";
    so.timeout_ms = cfg.startup_timeout_ms;
    auto ss = storage::StatusBackingStore::open(so);
    if (!ss) return Error{"status.storage.topic", cfg.status_topic + ": " + ss.error().to_string()};
    status_store = std::move(ss.value());
    return ok_status();
  }

  Status start() {
    if (auto st = open_stores(); !st) return st;
    // Bounded: a broker that does not report one must not hold up startup.
    kafka_cluster_id = config_store->kafka_cluster_id(std::min(cfg.request_timeout_ms, 5000));
    if (cfg.topic_tracking_enable)
      status_listener = std::make_unique<runtime::StatusStoreListener>(*status_store, cfg.worker_id);
    else
      status_listener = std::make_unique<UntrackedStatusListener>(*status_store, cfg.worker_id);
    runtime::WorkerOptions wo;
    wo.worker_id = cfg.worker_id;
    wo.client = cfg.client_props;
    wo.client["bootstrap.servers"] = cfg.bootstrap_servers;
    wo.producer_overrides = cfg.producer_overrides;
    wo.consumer_overrides = cfg.consumer_overrides;
    wo.client_override_policy = cfg.client_override_policy;
    wo.offset_flush_interval_ms = cfg.offset_flush_interval_ms;
    wo.offset_flush_timeout_ms = cfg.offset_flush_timeout_ms;
    wo.task_shutdown_graceful_timeout_ms = cfg.task_shutdown_graceful_timeout_ms;
    wo.tasks_max_limit = cfg.tasks_max_limit;
    wo.connector_call_timeout_ms = cfg.connector_call_timeout_ms;
    wo.key_converter = cfg.key_converter;
    wo.value_converter = cfg.value_converter;
    wo.key_converter_config = cfg.key_converter_config;
    wo.value_converter_config = cfg.value_converter_config;
    wo.header_converter = cfg.header_converter;
    wo.header_converter_config = cfg.header_converter_config;
    wo.config_transformer = cfg.config_transformer;
    wo.metrics = cfg.metrics;
    wo.producer_shared = cfg.producer_shared;
    wo.exactly_once_source = cfg.exactly_once_source;
    wo.group_id = cfg.group_id;
    wo.offset_topic_partitions = cfg.offset_partitions;
    wo.offset_topic_replication_factor = cfg.offset_replication_factor;
    // A running connector's requestTaskReconfiguration, from its own thread.
    wo.on_task_reconfiguration = [w = weak_from_this()](const std::string& c) {
      auto s = w.lock();
      if (!s) return;
      asio::post(s->io, [w, c] {
        if (auto s2 = w.lock()) s2->io_task_reconfiguration(c);
      });
    };
    worker = std::make_unique<runtime::Worker>(wo, offset_store.get(), status_listener.get(), registry);
    worker->set_observer(observer.load());

    coordinator::WorkerCoordinatorConfig cc;
    cc.group.group_id = cfg.group_id;
    cc.group.bootstrap_servers = kc::split_comma_list(cfg.bootstrap_servers);
    cc.group.client_id = cfg.client_id.empty() ? "connect-" + cfg.worker_id : cfg.client_id;
    cc.group.session_timeout = std::chrono::milliseconds(cfg.session_timeout_ms);
    cc.group.rebalance_timeout = std::chrono::milliseconds(cfg.rebalance_timeout_ms);
    cc.group.heartbeat_interval = std::chrono::milliseconds(cfg.heartbeat_interval_ms);
    cc.group.request_timeout = std::chrono::milliseconds(cfg.request_timeout_ms);
    cc.group.retry_backoff = std::chrono::milliseconds(cfg.retry_backoff_ms);
    if (cfg.group_sasl) {
      auto sasl = storage::connection_sasl_settings(*cfg.group_sasl);
      if (!sasl) return sasl.error();
      cc.group.sasl = std::move(sasl).value();
    }
    cc.group.tls = cfg.group_tls;
    cc.group.group_instance_id = cfg.group_instance_id;
    cc.protocol = cfg.protocol;
    cc.url = cfg.advertised_url;
    cc.static_assignment_file = cfg.static_assignment_file;

    std::weak_ptr<Impl> w = weak_from_this();
    coordinator::WorkerCoordinatorCallbacks cb;
    cb.config_offset = [w]() -> int64_t {
      auto s = w.lock();
      return s ? s->config_store->snapshot().offset : -1;
    };
    cb.on_before_join = [w](const coordinator::BeforeJoin& bj, std::function<void()> proceed) {
      if (auto s = w.lock()) s->on_before_join(bj, std::move(proceed));
    };
    cb.on_leader = [w](const coordinator::LeaderRound& r, coordinator::AssignmentsReady ready) {
      if (auto s = w.lock()) s->on_leader(r, std::move(ready));
    };
    cb.on_assigned = [w](const coordinator::AssignedEvent& ev) {
      if (auto s = w.lock()) s->on_assigned(ev);
    };
    cb.on_revoke_all = [w](std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks) {
      if (auto s = w.lock()) s->on_revoke_all(std::move(connectors), std::move(tasks));
    };
    cb.on_rebalance_started = [w](const kafka::RebalanceStarted& r) {
      if (auto s = w.lock()) {
        s->io_rebalance_started_ms = wall_ms();
        s->io_rebalance_reason = r.reason;
        spdlog::info("rebalance started: {}", r.reason);
      }
    };
    cb.on_request_timing = [m = cfg.metrics](const kafka::RequestTiming& t) {
      const auto ms = static_cast<double>(t.latency.count());
      if (t.api == kafka::ApiKey::JoinGroup) m->record_join(ms);
      else if (t.api == kafka::ApiKey::SyncGroup) m->record_sync(ms);
      else if (t.api == kafka::ApiKey::Heartbeat) m->record_heartbeat(ms);
    };
    cb.on_error = [w](const kafka::GroupError& e) {
      auto s = w.lock();
      if (s && (e.api == kafka::ApiKey::JoinGroup || e.api == kafka::ApiKey::SyncGroup))
        s->cfg.metrics->record_failed_rebalance();
      if (!s || !e.fatal) return;
      bool first = false;
      {
        std::lock_guard lk(s->mu);
        first = !s->coord_fatal;
        s->coord_fatal = true;
        s->coord_fatal_message = e.to_string();
      }
      if (first && s->cfg.on_fatal)
        s->cfg.on_fatal(e.net == kafka::NetErrorKind::Authentication ? e.message : e.to_string());
    };
    try {
      coord = coordinator::WorkerCoordinator::create(io, cc, std::move(cb));
    } catch (const std::exception& e) {
      return Error{"group", e.what()};
    }
    {
      std::lock_guard lk(mu);
      pub.worker_id = cfg.worker_id;
    }
    // Everything the initial read reported is already in the snapshot.
    asio::post(io, [w] {
      auto s = w.lock();
      if (!s) return;
      auto snap = s->config_store->snapshot();
      s->io_known_connectors.clear();
      for (const auto& [name, _] : snap.connector_configs) s->io_known_connectors.insert(name);
      s->io_accept_updates = true;
      s->io_load_session_key();
      s->schedule_config_poll();
      s->schedule_status_poll();
    });
    metrics::set_default_log_context(log_ctx, true);
    for (int i = 0; i < kPoolThreads; ++i)
      pool_threads.emplace_back([this] {
        metrics::set_thread_log_context(log_ctx);
        pool.run();
      });
    for (int i = 0; i < kGenerationThreads; ++i)
      generation_threads.emplace_back([this] {
        metrics::set_thread_log_context(log_ctx);
        generation_io.run();
      });
    io_thread = std::thread([this] {
      metrics::set_thread_log_context(log_ctx);
      try {
        io.run();
      } catch (const std::exception& e) {
        spdlog::critical("herder io thread died: {}", e.what());
      }
    });
    watchdog = std::thread([this] { watchdog_loop(); });
    coord->start();
    started = true;
    admitting = true;
    spdlog::info("herder started: group {}, protocol {}, url {}", cfg.group_id,
                 connect::protocol_name(cfg.protocol), cfg.advertised_url);
    return ok_status();
  }

  // ------------------------------------------------------------------ freeze watchdog
  // A worker frozen (SIGSTOP, VM pause) for longer than session.timeout.ms
  // has lost its group membership, and so have its sink consumers. When its
  // threads run again, librdkafka would rejoin those consumers to their
  // groups and take partitions back from the new owners before the herder
  // learns it is out of the group. So a 200 ms tick that finds a gap longer
  // than the session cuts every task off from Kafka at once (KAFKA-15826),
  // holds starts until the next assignment and rejoins.
  void watchdog_loop() {
    metrics::set_thread_log_context(log_ctx);
    const auto session = std::chrono::milliseconds(cfg.session_timeout_ms);
    auto last = std::chrono::steady_clock::now();
    std::unique_lock lk(watchdog_mu);
    while (!stopping) {
      watchdog_cv.wait_for(lk, std::chrono::milliseconds(200), [this] { return stopping.load(); });
      const auto now = std::chrono::steady_clock::now();
      const auto gap = now - last;
      last = now;
      if (stopping || gap < session) continue;
      lk.unlock();
      on_frozen(std::chrono::duration_cast<std::chrono::milliseconds>(gap).count());
      lk.lock();
      last = std::chrono::steady_clock::now();
    }
  }

  void on_frozen(int64_t gap_ms) {
    frozen_hold = true;
    spdlog::warn("this worker was frozen for {} ms, longer than session.timeout.ms ({} ms): its group membership is "
                 "gone; cutting every task off from Kafka before rejoining",
                 gap_ms, cfg.session_timeout_ms);
    auto ids = worker->cut_off_all();
    spdlog::warn("cut off {} tasks after the freeze: {}", ids.size(), ids_to_string(ids));
    asio::post(io, [w = weak_from_this(), gap_ms] {
      if (auto s = w.lock()) s->io_request_rejoin("worker was frozen for " + std::to_string(gap_ms) + " ms");
    });
  }

  // ------------------------------------------------------------------ polls
  void schedule_config_poll() {
    config_poll_timer.expires_after(std::chrono::milliseconds(cfg.config_poll_interval_ms));
    config_poll_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      auto s = w.lock();
      if (ec || !s || s->stopping) return;
      if (!s->io_config_polling) {
        s->io_config_polling = true;
        asio::post(s->pool, [w] {
          auto s2 = w.lock();
          if (!s2) return;
          auto r = s2->config_store->read_to_end(s2->cfg.worker_sync_timeout_ms);
          if (!r) spdlog::debug("config poll: {}", r.error().to_string());
          {
            std::lock_guard lk(s2->mu);
            s2->config_read_error = r ? std::string() : r.error().to_string();
          }
          asio::post(s2->io, [w] {
            auto s3 = w.lock();
            if (!s3) return;
            s3->io_config_polling = false;
            // Periodic convergence: whatever an update missed is caught here.
            // (Not the leader's task-config duty: between the two writes of
            // a stop, 0 task configs then STOPPED, it would bring tasks back.)
            s3->request_reconcile();
          });
        });
      }
      s->schedule_config_poll();
    });
  }

  void schedule_status_poll() {
    status_poll_timer.expires_after(std::chrono::milliseconds(cfg.status_poll_interval_ms));
    status_poll_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      auto s = w.lock();
      if (ec || !s || s->stopping) return;
      if (!s->io_status_polling) {
        s->io_status_polling = true;
        asio::post(s->pool, [w] {
          auto s2 = w.lock();
          if (!s2) return;
          (void)s2->status_store->read_to_end(s2->cfg.worker_sync_timeout_ms);
          s2->assert_generation_failures();
          asio::post(s2->io, [w] {
            if (auto s3 = w.lock()) s3->io_status_polling = false;
          });
        });
      }
      s->schedule_status_poll();
    });
  }

  // ------------------------------------------------------------------ join gate
  // JoinGroup waits only for revocations (stops), not for a whole apply
  // (config catch-up and starts may take long; the mock broker expels a
  // member that does not rejoin within about session.timeout).
  void io_stop_begin() { ++io_pending_stops; }
  void io_stop_end() {
    if (io_pending_stops > 0) --io_pending_stops;
    if (io_pending_stops != 0) return;
    auto waiters = std::move(io_join_waiters);
    io_join_waiters.clear();
    for (auto& w : waiters) w();
  }
  // Called from pool threads when a stop job finished.
  void post_stop_end() {
    asio::post(io, [w = weak_from_this()] {
      if (auto s = w.lock()) s->io_stop_end();
    });
  }

  // ------------------------------------------------------------------ rejoin
  // ------------------------------------------------------------------ drain
  void io_drain_start(int timeout_ms, DistributedHerder::DrainDone done) {
    if (io_drain_result) return done(io_drain_result->first, io_drain_result->second);
    io_drain_done.push_back(std::move(done));
    if (io_draining) return;
    io_draining = true;
    draining_flag = true;
    spdlog::info("drain: handing this worker's connectors and tasks to the others before it leaves (up to {} ms)",
                 timeout_ms);
    drain_timer.expires_after(std::chrono::milliseconds(timeout_ms));
    drain_timer.async_wait([w = weak_from_this(), timeout_ms](const boost::system::error_code& ec) {
      if (auto s = w.lock(); s && !ec)
        s->io_drain_finish(false, "the drain did not finish within " + std::to_string(timeout_ms) + " ms");
    });
    bool applied;
    {
      std::lock_guard lk(mu);
      applied = pub.applied || !io_assignment;
    }
    if (applied && (!io_assignment || (io_assignment->connectors.empty() && io_assignment->tasks.empty())))
      return io_drain_finish(true, "this worker runs nothing");
    io_ask_leader_to_drain();
  }

  void io_drain_finish(bool drained, const std::string& why) {
    if (io_drain_result) return;
    io_drain_result = {drained, why};
    drain_timer.cancel();
    if (drained) spdlog::info("drain: done ({})", why);
    else spdlog::warn("drain: not completed ({}); stopping without it", why);
    auto done = std::move(io_drain_done);
    io_drain_done.clear();
    for (auto& d : done) d(drained, why);
  }

  // Sends (again) this worker's drain request to the leader.
  void io_ask_leader_to_drain() {
    if (!io_draining || io_drain_result || stopping) return;
    std::string me;
    {
      std::lock_guard lk(mu);
      me = pub.member_id;
    }
    if (me.empty()) return;  // not in the group yet: asked after the first assignment
    if (io_is_leader) {
      coord->set_hand_over_before_join(true);  // before the rejoin io_accept_drain requests
      auto [status, why] = io_accept_drain(me);
      if (status != 202) {
        coord->set_hand_over_before_join(false);
        io_drain_finish(false, why);
      }
      return;
    }
    if (io_leader_url.empty()) return;
    const std::string body = nlohmann::json{{"member_id", me}, {"url", cfg.advertised_url}}.dump();
    // Signed under `sessioned`, which is also what lets it past the leader's
    // basic authentication (see accept_drain_request).
    auto headers = io_signature_headers(body);
    asio::post(pool, [w = weak_from_this(), url = io_leader_url, body, headers = std::move(headers),
                      timeout = cfg.worker_sync_timeout_ms + 5000, tls = cfg.rest_client_tls] {
      auto r = post_internal(url, "/admin/drain/members", body, timeout, tls.get(), headers);
      auto s = w.lock();
      if (!s) return;
      asio::post(s->io, [w, url, r] {
        auto s2 = w.lock();
        if (!s2) return;
        if (!r) {
          spdlog::warn("drain: asking the leader {} failed: {}; asking again after the next assignment", url,
                       r.error().to_string());
        } else if (r->status == 202) {
          spdlog::info("drain: the leader {} accepted; stopping everything before the next JoinGroup", url);
          s2->coord->set_hand_over_before_join(true);
        } else {
          auto j = kc::parse_json_bounded<nlohmann::json>(r->body).value;  // a peer's reply: bounded too
          std::string why = j.is_object() && j.contains("message") && j["message"].is_string()
                                ? j["message"].get<std::string>()
                                : r->body;
          if (r->status == 409 && why.find(kNoOtherWorker) != std::string::npos) return s2->io_drain_finish(false, why);
          // 401: the leader wants basic credentials, which only a signed
          // (sessioned) request may go without; asking again cannot help.
          if (r->status == 401)
            return s2->io_drain_finish(false, "the leader " + url + " refused the unsigned drain request (HTTP 401 " +
                                                  why + "); under REST basic authentication drain needs "
                                                  "connect.protocol=sessioned");
          // 403/503: possibly a session key the leader rotated or has not
          // read yet; sign again with the current key soon.
          const bool key_trouble = r->status == 403 || r->status == 503;
          spdlog::warn("drain: the leader {} answered {}: {}; asking again {}", url, r->status, why,
                       key_trouble ? "in a second" : "after the next assignment");
          if (key_trouble) {
            auto timer = std::make_shared<asio::steady_timer>(s2->io, std::chrono::seconds(1));
            timer->async_wait([w, timer](const boost::system::error_code& ec) {
              if (auto s3 = w.lock(); s3 && !ec) s3->io_ask_leader_to_drain();
            });
          }
        }
      });
    });
  }

  static constexpr const char* kNoOtherWorker = "no other worker in the group to take the work over";

  // Leader: marks `member_id` as draining and rebalances (idempotent).
  std::pair<int, std::string> io_accept_drain(const std::string& member_id) {
    if (!io_is_leader)
      return {409, "this worker is not the leader" + (io_leader_url.empty() ? "" : "; the leader is " + io_leader_url)};
    bool other = false;
    for (const auto& id : io_round_members) other = other || (id != member_id && !io_drain_members.count(id));
    if (!other) return {409, kNoOtherWorker};
    if (io_drain_members.insert(member_id).second) {
      spdlog::info("drain: member {} hands its work over; rebalancing", member_id);
      io_request_rejoin("drain of member " + member_id);
    }
    return {202, "draining"};
  }

  void io_request_rejoin(const std::string& reason) {
    if (stopping) return;
    spdlog::info("requesting rejoin: {}", reason);
    coord->request_rejoin(reason);
  }

  bool io_owns_connector(const std::string& c) const {
    return io_assignment && std::find(io_assignment->connectors.begin(), io_assignment->connectors.end(), c) !=
                                io_assignment->connectors.end();
  }

  // Config-topic changes, in topic order (reference 4.4 rebalance triggers).
  // Everything else a change implies (restart a changed connector, stop a
  // removed task, apply a target state to every local instance) is the
  // reconciler's job, on every worker alike.
  void on_config_update(const storage::ConfigUpdate& u) {
    if (!io_accept_updates || stopping) return;
    using K = storage::ConfigUpdate::Kind;
    switch (u.kind) {
      case K::ConnectorConfig: {
        if (io_known_connectors.insert(u.connector).second) {
          rebalance_pending = true;
          io_request_rejoin("connector " + u.connector + " added");
        }
        if (io_is_leader) io_leader_reconfigure(u.connector);
        break;
      }
      case K::ConnectorRemoved:
        if (io_known_connectors.erase(u.connector)) {
          rebalance_pending = true;
          io_request_rejoin("connector " + u.connector + " removed");
        }
        break;
      case K::TasksCommitted:
        // The task set may have changed: the leader places it in a new round.
        rebalance_pending = true;
        io_request_rejoin("task configs of " + u.connector + " committed");
        // A commit that left the connector inconsistent: new task configs repair it.
        if (io_is_leader && config_store->snapshot().inconsistent.count(u.connector)) io_leader_reconfigure(u.connector);
        break;
      case K::TargetState:
        io_leader_duties();  // a resumed STOPPED connector needs task configs again
        break;
      case K::SessionKey:
        io_load_session_key();
        io_check_key_rotation();  // a key this leader's settings disagree with is replaced
        return;
      case K::RestartRequested:
        asio::post(apply_strand, [w = weak_from_this(), r = RestartRequest{u.connector, u.restart.include_tasks,
                                                                           u.restart.only_failed}] {
          auto s = w.lock();
          if (!s || s->stopping) return;
          spdlog::info("restart request for connector {} (includeTasks={}, onlyFailed={})", r.connector,
                       r.include_tasks, r.only_failed);
          s->strand_restarts.push_back(r);
          s->job_reconcile();
        });
        return;
    }
    request_reconcile();
  }

  // ------------------------------------------------------------------ reconciler
  /// Queues one reconcile pass on the apply strand (coalesced). Any thread.
  void request_reconcile() {
    if (stopping || reconcile_queued.exchange(true)) return;
    asio::post(apply_strand, [w = weak_from_this()] {
      auto s = w.lock();
      if (!s) return;
      s->reconcile_queued = false;
      s->job_reconcile();
    });
  }

  /// Desired state: the config snapshot plus this worker's current assignment.
  DesiredState desired_state(int32_t& generation) {
    DesiredState d;
    d.worker_id = cfg.worker_id;
    {
      std::lock_guard lk(mu);
      d.is_leader = pub.is_leader && pub.in_group;
      d.assigned_connectors.insert(pub.assigned_connectors.begin(), pub.assigned_connectors.end());
      d.assigned_tasks.insert(pub.assigned_tasks.begin(), pub.assigned_tasks.end());
      generation = pub.generation;
    }
    d.may_start = applied_apply_seq.load() == latest_apply_seq.load() && !frozen_hold.load();
    auto snap = config_store->snapshot();
    for (const auto& [name, conf] : snap.connector_configs) {
      DesiredConnector dc;
      dc.config = conf;
      dc.target = snap.target_state(name);
      for (const auto& t : snap.tasks(name))
        if (auto tc = snap.task_config(t)) dc.tasks[t.task] = *tc;
      d.connectors.emplace(name, std::move(dc));
    }
    return d;
  }

  /// Actual state: what the runtime runs, with what the herder started it
  /// with, plus the status topic's view. Apply strand only.
  ActualState actual_state() {
    ActualState a;
    const auto running_c = worker->connector_names();
    const auto running_t = worker->task_ids();
    // What ended on its own (abandoned after a graceful timeout) is forgotten;
    // a failed start is kept so that it is not retried in a loop.
    std::erase_if(strand_connectors,
                  [&](const auto& e) { return !running_c.count(e.first) && !strand_failed_c.count(e.first); });
    std::erase_if(strand_tasks,
                  [&](const auto& e) { return !running_t.count(e.first) && !strand_failed_t.count(e.first); });
    for (const auto& c : running_c) strand_connectors.try_emplace(c);  // unknown config: restarted if assigned
    for (const auto& t : running_t) strand_tasks.try_emplace(t);
    a.connectors = strand_connectors;
    a.tasks = strand_tasks;
    a.connector_statuses = status_store->all_connectors();
    a.task_statuses = status_store->all_tasks();
    return a;
  }

  void forget_connector(const std::string& c) {
    strand_connectors.erase(c);
    strand_failed_c.erase(c);
  }
  void forget_task(const ConnectorTaskId& t) {
    strand_tasks.erase(t);
    strand_failed_t.erase(t);
  }
  void forget_all() {
    strand_connectors.clear();
    strand_failed_c.clear();
    strand_tasks.clear();
    strand_failed_t.clear();
  }

  StatusValue status_of(StatusState state, int32_t generation, std::optional<std::string> trace = std::nullopt) const {
    return StatusValue{state, std::move(trace), cfg.worker_id, generation};
  }

  /// Starts `c` on this worker; false (and FAILED written) when it cannot.
  bool start_connector_now(const std::string& c, const ConfigMap& conf, TargetState target, int32_t gen) {
    auto st = worker->start_connector(c, conf, target);
    strand_connectors[c] = RunningConnector{conf, target};
    if (st) {
      strand_failed_c.erase(c);
      return true;
    }
    spdlog::warn("cannot start connector {}: {}", c, st.error().to_string());
    strand_failed_c.insert(c);
    status_store->put_connector(c, status_of(StatusState::Failed, gen, st.error().to_string()));
    return false;
  }

  void start_task_now(const ConnectorTaskId& t, const ConfigMap& connector_conf, const ConfigMap& task_conf,
                      TargetState target, int32_t gen) {
    auto st = worker->start_task(t, connector_conf, task_conf, target, exactly_once_checks(t, connector_conf));
    strand_tasks[t] = RunningTask{task_conf, target};
    if (st) {
      strand_failed_t.erase(t);
      return;
    }
    spdlog::warn("cannot start task {}: {}", t.to_string(), st.error().to_string());
    strand_failed_t.insert(t);
    status_store->put_task(t, status_of(StatusState::Failed, gen, st.error().to_string()));
  }

  /// Carries out the reconciler's actions in order. Apply strand only.
  void execute(const std::vector<Action>& actions, const DesiredState& d, int32_t gen) {
    using K = Action::Kind;
    if (actions.empty()) return;
    std::string text;
    for (const auto& a : actions) text += (text.empty() ? "" : ", ") + to_string(a);
    spdlog::info("reconcile: {}", text);
    // Stops first, all in parallel against one graceful deadline.
    std::vector<std::string> stop_c;
    std::vector<ConnectorTaskId> stop_t;
    for (const auto& a : actions) {
      if (a.kind == K::StopConnector) stop_c.push_back(a.connector);
      if (a.kind == K::StopTask) stop_t.push_back(*a.task);
    }
    if (!stop_c.empty() || !stop_t.empty()) {
      auto fc = std::async(std::launch::async, [&] { return worker->stop_connectors(stop_c); });
      (void)worker->stop_tasks(stop_t);
      (void)fc.get();
      for (const auto& c : stop_c) forget_connector(c);
      for (const auto& t : stop_t) forget_task(t);
    }
    std::set<std::string> targets_applied;
    bool hand_over_wait = false;
    for (const auto& a : actions) {
      const auto* dc = d.connectors.count(a.connector) ? &d.connectors.at(a.connector) : nullptr;
      switch (a.kind) {
        case K::StopConnector:
        case K::RemoveConnectorStatus:
          if (a.kind == K::RemoveConnectorStatus || a.remove_status)
            status_store->put_connector(a.connector, status_of(StatusState::Destroyed, gen));
          break;
        case K::StopTask:
        case K::RemoveTaskStatus:
          if (a.kind == K::RemoveTaskStatus || a.remove_status)
            status_store->put_task(*a.task, status_of(StatusState::Destroyed, gen));
          break;
        case K::WriteConnectorStatus:
          status_store->put_connector(a.connector, status_of(a.status, gen));
          break;
        case K::RestartConnector:
        case K::StartConnector:
          if (!dc) break;
          if (a.kind == K::RestartConnector) {
            (void)worker->stop_connector(a.connector);
            forget_connector(a.connector);
            if (a.restarting) status_store->put_connector(a.connector, status_of(StatusState::Restarting, gen));
          }
          // As Connect's restart: a connector an operator restarted (plain or
          // KIP-745) asks for new task configs once it started (written only
          // when they differ). This repairs an inconsistent commit even when
          // this worker reads that commit after the restart, and retries a
          // failed generation. A restart for a changed config does not ask:
          // the leader generates on the config record already.
          if (start_connector_now(a.connector, dc->config, a.target, gen) && (a.restarting || a.plain_restart) &&
              a.target == TargetState::Started)
            asio::post(io, [w = weak_from_this(), c = a.connector] {
              if (auto s = w.lock()) s->io_task_reconfiguration(c);
            });
          break;
        case K::RestartTask:
        case K::StartTask: {
          if (!dc || !dc->tasks.count(a.task->task)) break;
          if (a.kind == K::RestartTask) {
            (void)worker->stop_task(*a.task);
            forget_task(*a.task);
            if (a.restarting) status_store->put_task(*a.task, status_of(StatusState::Restarting, gen));
          } else if (hand_over_pending(*a.task)) {
            hand_over_wait = true;
            break;
          }
          start_task_now(*a.task, dc->config, dc->tasks.at(a.task->task), a.target, gen);
          break;
        }
        case K::SetConnectorTarget:
        case K::SetTaskTarget:
          // One call pauses or resumes the connector and all its local tasks.
          if (targets_applied.insert(a.connector).second) worker->set_target_state(a.connector, a.target);
          if (auto it = strand_connectors.find(a.connector); it != strand_connectors.end()) it->second.target = a.target;
          for (auto& [t, run] : strand_tasks)
            if (t.connector == a.connector) run.target = a.target;
          break;
      }
    }
    if (hand_over_wait) retry_reconcile_soon();
  }

  /// One reconcile pass (DESIGN "The herder as a reconciler"). Apply strand only.
  void job_reconcile() {
    if (stopping) return;
    int32_t gen = -1;
    DesiredState d = desired_state(gen);
    d.restarts = std::move(strand_restarts);
    strand_restarts.clear();
    execute(reconcile(d, actual_state()), d, gen);
  }

  /// Leader only: every connector that should run but has no task configs
  /// (resumed after STOPPED, or inconsistent) gets them generated. Called on
  /// target-state changes, which come after a stop's 0-task commit.
  void io_leader_duties() {
    if (!io_is_leader || stopping) return;
    auto snap = config_store->snapshot();
    for (const auto& name : snap.connectors()) {
      if (snap.target_state(name) == storage::TargetState::Stopped) continue;
      auto tc = snap.task_counts.find(name);
      if (tc != snap.task_counts.end() && tc->second > 0 && !snap.inconsistent.count(name)) continue;
      if (io_reconfiguring.count(name)) continue;
      // A generation that failed for this very config is not retried on
      // every rebalance (a stalling plugin would leave one more abandoned
      // thread each time); a config update or a reconfiguration request is.
      if (generation_failed_for(name, snap)) continue;
      leader_reconfigure(name);
    }
  }

  // Plain restarts (REST, on the owner): the same path as the reconciler's.
  void restart_local(Action a, std::function<void()> done = {}) {
    asio::post(apply_strand, [w = weak_from_this(), a = std::move(a), done = std::move(done)] {
      auto s = w.lock();
      if (!s || s->stopping) return;
      int32_t gen = -1;
      DesiredState d = s->desired_state(gen);
      s->execute({a}, d, gen);
      if (done) done();
    });
  }

  // ------------------------------------------------------------------ leader: task configs
  // Generates the task configs of `c` with a transient plugin instance and
  // writes them when they differ from the committed ones (reference 5.1).
  // A failed write is retried with back-off (250 ms doubling to 10 s) while
  // this worker is the leader, as Connect's reconfigureConnectorTasksWithRetry.
  /// io thread: leader_reconfigure(c), or, while a generation of `c`'s
  /// task configs is in flight, one more after it. Two concurrent writers
  /// of one connector's task configs would interleave their task records
  /// and commits (the second commit would find none: inconsistent).
  void io_leader_reconfigure(const std::string& c) {
    if (io_reconfiguring.count(c)) {
      io_reconfigure_again.insert(c);
      return;
    }
    leader_reconfigure(c);
  }

  void leader_reconfigure(const std::string& c, int backoff_ms = 250) {
    io_reconfiguring.insert(c);
    asio::post(generation_io, [w = weak_from_this(), c, backoff_ms] {
      auto s = w.lock();
      if (!s || s->stopping) return;
      s->job_reconfigure(c, [w, c, backoff_ms](bool done) {
        if (auto s1 = w.lock())
          asio::post(s1->io, [w, c, backoff_ms, done] { io_reconfigured(w, c, backoff_ms, done); });
      });
    });
  }

  /// After a generation of `c`: the next one if asked meanwhile, or a retry
  /// of a failed write after `backoff_ms`. io thread.
  static void io_reconfigured(const std::weak_ptr<Impl>& w, const std::string& c, int backoff_ms, bool done) {
    auto s2 = w.lock();
    if (!s2) return;
    if (done) {
      s2->io_reconfiguring.erase(c);
      if (s2->io_reconfigure_again.erase(c) && s2->io_is_leader && !s2->stopping) s2->leader_reconfigure(c);
      return;
    }
    auto timer = std::make_shared<asio::steady_timer>(s2->io, std::chrono::milliseconds(backoff_ms));
    timer->async_wait([w, c, backoff_ms, timer](const boost::system::error_code& ec) {
      auto s3 = w.lock();
      if (!s3) return;
      if (ec || s3->stopping || !s3->io_is_leader) {
        s3->io_reconfiguring.erase(c);
        return;
      }
      s3->leader_reconfigure(c, std::min(backoff_ms * 2, 10000));
    });
  }

  // ------------------------------------------------------------------ KIP-507
  bool io_validation_enabled() const { return io_protocol == ConnectProtocol::Sessioned; }

  size_t wanted_key_bytes() const {
    if (cfg.key_size_bits) return static_cast<size_t>(*cfg.key_size_bits) / 8;
    return default_key_bytes(cfg.key_generation_algorithm).value_or(0);
  }

  void publish_key_info() {
    std::lock_guard lk(key_mu);
    key_info = SessionKeyInfo{};
    if (!io_session_key) return;
    key_info.present = true;
    key_info.algorithm = io_session_key->algorithm;
    key_info.creation_timestamp_ms = io_session_key->creation_timestamp_ms;
    key_info.key_bytes = io_session_key->key.size();
    key_info.expires_at_ms = cfg.key_ttl_ms > 0 ? io_session_key->creation_timestamp_ms + cfg.key_ttl_ms : 0;
  }

  /// Installs the session key of the config snapshot, if newer than ours
  /// (every worker: followers sign with it, and may become leader). io thread.
  void io_load_session_key() {
    auto snap = config_store->snapshot();
    if (!snap.session_key) return;
    auto k = session_key_from_record(*snap.session_key);
    if (!k) {
      spdlog::error("ignoring the session key of the config topic: {}", k.error().to_string());
      return;
    }
    if (io_session_key && *io_session_key == *k) return;
    io_session_key = std::move(k).value();
    spdlog::info("session key updated (algorithm {}, {} bytes, created at {})", io_session_key->algorithm,
                 io_session_key->key.size(), io_session_key->creation_timestamp_ms);
    publish_key_info();
  }

  /// Leader under `sessioned`: writes a new session key when there is none,
  /// when it expired, or when its algorithm or length differ from this
  /// worker's settings (Connect's checkForKeyRotation); otherwise arms the
  /// timer for its expiry. The write runs on the pool. io thread.
  void io_check_key_rotation() {
    if (stopping || !io_is_leader || !io_validation_enabled() || io_key_writing) return;
    const int64_t now = wall_ms();
    std::string why;
    if (!io_session_key)
      why = "no session key has been distributed yet";
    else if (cfg.key_ttl_ms > 0 && now >= io_session_key->creation_timestamp_ms + cfg.key_ttl_ms)
      why = "the session key expired";
    else if (io_session_key->algorithm != cfg.key_generation_algorithm ||
             io_session_key->key.size() != wanted_key_bytes())
      why = "the session key's algorithm or size differ from this worker's settings";
    if (why.empty()) {
      if (cfg.key_ttl_ms <= 0) return;
      const int64_t due = io_session_key->creation_timestamp_ms + cfg.key_ttl_ms;
      key_timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(due - now, 0)));
      key_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
        if (auto s = w.lock(); s && !ec) s->io_check_key_rotation();
      });
      return;
    }
    spdlog::info("distributing a new session key: {}", why);
    io_key_writing = true;
    key_timer.cancel();
    asio::post(pool, [w = weak_from_this(), now] {
      auto s = w.lock();
      if (!s) return;
      Status st = ok_status();
      auto key = generate_session_key(s->cfg.key_generation_algorithm, s->cfg.key_size_bits, now);
      if (!key) st = key.error();
      else
        st = s->leader_config_write([&] {
          return s->config_store->put_session_key(session_key_record(*key), s->cfg.worker_sync_timeout_ms);
        });
      asio::post(s->io, [w, st] {
        auto s2 = w.lock();
        if (!s2) return;
        s2->io_key_writing = false;
        if (!st) {
          // As Connect: read the topic again before possibly retrying.
          spdlog::warn("writing a new session key failed: {}; retrying", st.error().to_string());
          s2->key_timer.expires_after(std::chrono::milliseconds(std::max(s2->cfg.retry_backoff_ms, 500)));
          s2->key_timer.async_wait([w](const boost::system::error_code& ec) {
            if (auto s3 = w.lock(); s3 && !ec) s3->io_check_key_rotation();
          });
          return;
        }
        s2->io_load_session_key();
        s2->io_check_key_rotation();
      });
    });
  }

  /// The two signature headers for `body`, when requests are signed (the
  /// `sessioned` protocol and a key is known); else none, as Connect's
  /// RestClient, which signs only with a key. Counts signed requests. io
  /// thread.
  std::vector<std::pair<std::string, std::string>> io_signature_headers(const std::string& body) {
    if (!io_validation_enabled() || !io_session_key) return {};
    auto sig = sign_request(cfg.signature_algorithm, io_session_key->key, body);
    if (!sig) {
      spdlog::warn("cannot sign an internal request: {}", sig.error().to_string());
      return {};
    }
    {
      std::lock_guard lk(key_mu);
      ++key_stats.signed_requests;
    }
    return {{std::string(kSignatureHeader), *sig}, {std::string(kSignatureAlgorithmHeader), cfg.signature_algorithm}};
  }

  /// Leader check of an internal request; counts it. io thread.
  VerifyResult io_verify(const SignatureHeaders& headers, const std::string& body) {
    VerifyResult v;
    if (io_validation_enabled())
      v = verify_request(headers, body, cfg.verification_algorithms, io_session_key ? &*io_session_key : nullptr);
    std::lock_guard lk(key_mu);
    if (v.ok()) {
      ++key_stats.verified;
    } else {
      ++key_stats.rejected;
      key_stats.last_rejected_status = v.status;
      key_stats.last_rejected_message = v.message;
    }
    return v;
  }

  // A running connector asked for new task configs (Connect's
  // requestTaskReconfiguration). The leader generates them itself (a
  // request during a generation runs another one after it, since the
  // source may have changed since it listed); a follower forwards the
  // request to the leader (POST /connectors/{c}/tasks, Connect's internal
  // endpoint) from the pool. io thread only.
  void io_task_reconfiguration(const std::string& c) {
    if (stopping) return;
    if (io_is_leader) {
      if (io_reconfiguring.count(c)) {
        io_reconfigure_again.insert(c);
        return;
      }
      spdlog::info("connector {} asked for a task reconfiguration", c);
      leader_reconfigure(c);
      return;
    }
    io_forward_task_reconfiguration(c, mono_ms(), 0);
  }

  // Follower: sends the request, signed under `sessioned`. A failure
  // within a minute of the first attempt is retried with backoff and a
  // fresh signature (the leader may have rotated the key, or not read it
  // yet: Connect's isPossibleExpiredKeyException; or be busy or changing);
  // later ones are sent again after the next assignment. io thread only.
  void io_forward_task_reconfiguration(const std::string& c, int64_t first_ms, int attempt) {
    if (stopping) return;
    if (io_is_leader) return io_task_reconfiguration(c);
    if (io_leader_url.empty()) {
      io_reconfigure_unsent.insert(c);
      return;
    }
    spdlog::info("connector {} asked for a task reconfiguration; forwarding to the leader {}", c, io_leader_url);
    // Deviation (see distributed_herder.h): the leader generates the task
    // configs itself, so the body is empty; it is still what is signed.
    const std::string body;
    auto headers = io_signature_headers(body);
    asio::post(pool, [w = weak_from_this(), c, url = io_leader_url, body, headers = std::move(headers), first_ms,
                      attempt, timeout = cfg.worker_sync_timeout_ms + 5000, tls = cfg.rest_client_tls] {
      auto r = post_internal(url, "/connectors/" + rest::percent_encode_segment(c) + "/tasks", body, timeout,
                             tls.get(), headers);
      auto s = w.lock();
      if (!s) return;
      const bool ok = r && r->status / 100 == 2;
      // Any failure but a gone connector is retried with backoff for a
      // minute (a 403/503 may be an expired session key, a 409 a leader
      // change, a timeout a busy leader), as Connect's
      // reconfigureConnectorTasksWithRetry; then after the next assignment.
      const bool gone = r && r->status == 404;
      const bool retry_soon = !ok && !gone && mono_ms() - first_ms < 60000;
      if (!ok)
        spdlog::warn("forwarding the task reconfiguration of {} to the leader {} failed ({}); {}", c, url,
                     r ? "HTTP " + std::to_string(r->status) + " " + r->body : r.error().to_string(),
                     retry_soon ? "retrying after backoff" : "sending it again after the next assignment");
      {
        std::lock_guard lk(s->key_mu);
        ++(ok ? s->key_stats.forwarded : s->key_stats.forward_failures);
      }
      asio::post(s->io, [w, c, ok, retry_soon, first_ms, attempt] {
        auto s2 = w.lock();
        if (!s2 || ok) return;
        if (!retry_soon) {
          s2->io_reconfigure_unsent.insert(c);
          return;
        }
        auto timer = std::make_shared<asio::steady_timer>(
            s2->io, std::chrono::milliseconds(std::min(250 << std::min(attempt, 4), 4000)));
        timer->async_wait([w, c, first_ms, attempt, timer](const boost::system::error_code& ec) {
          if (auto s3 = w.lock(); s3 && !ec) s3->io_forward_task_reconfiguration(c, first_ms, attempt + 1);
        });
      });
    });
  }

  /// Leader side of a forwarded request, after its signature check.
  /// Returns (204, "") when a generation was scheduled, (404, ..) for an
  /// unknown connector, (409, ..) when this worker is not the leader. io
  /// thread only.
  std::pair<int, std::string> io_accept_task_reconfiguration(const std::string& c) {
    if (!io_is_leader)
      return {409, "Cannot complete request because of a conflicting operation (this worker is not the leader" +
                       (io_leader_url.empty() ? std::string(")") : "; the leader is " + io_leader_url + ")")};
    if (!config_store->snapshot().contains(c)) return {404, "Connector " + c + " not found"};
    io_task_reconfiguration(c);
    return {204, ""};
  }

  /// Plugin calls abandoned past their deadline on this worker (validate,
  /// task-config generation): one per key, kMaxAbandonedPluginCalls in all.
  /// Keys: "connector <name>" (generation), kValidateKey + class (validate).
  std::shared_ptr<runtime::AbandonedCalls> abandoned_calls = std::make_shared<runtime::AbandonedCalls>();
  static constexpr const char* kValidateKey = "plugin ";

  /// The one watchdog of the herders' validate() calls. Never destroyed: a
  /// deadline callback may drop the last reference to a herder, which must
  /// not join the thread it runs on.
  static runtime::CallWatchdog& validate_watchdog() {
    static auto* dog = new runtime::CallWatchdog();
    return *dog;
  }

  /// The plugin's validate() with every worker-side check
  /// (validate_resolved, apply_override_policy) on a thread of its own
  /// under connector.call.timeout.ms, keyed "plugin <connector.class>" in
  /// abandoned_calls. `done` runs once, from any thread: the validation, or
  /// 500 naming the plugin and the call (deadline passed, or refused
  /// because an earlier validate() of the plugin, or too many calls, are
  /// still stuck), or 500 with a failure that escaped the plugin.
  void validate_bounded(rest::ConnectorConfig config,
                        std::function<void(rest::Reply<connectors::ConfigValidation>)> done) {
    auto cls = config.find("connector.class");
    const std::string plugin = cls == config.end() ? std::string() : cls->second;
    struct Out {
      connectors::ConfigValidation v;
      std::optional<std::string> failure;
    };
    auto out = std::make_shared<Out>();
    runtime::call_with_deadline(
        validate_watchdog(), abandoned_calls, kValidateKey + plugin, "validate() of plugin " + plugin,
        cfg.connector_call_timeout_ms,
        [reg = registry, transformer = cfg.config_transformer, policy = cfg.client_override_policy,
         vctx = connectors::ValidateContext{cfg.exactly_once_source, cfg.tasks_max_limit}, config, plugin, out] {
          try {
            out->v = validate_resolved(*reg, transformer.get(), config, vctx);
            apply_override_policy(out->v, policy, config);
          } catch (const std::exception& e) {
            out->failure = "validate() of plugin " + plugin + " failed: " + e.what();
          }
        },
        [out, done = std::move(done)](std::optional<std::string> why) {
          if (why) {
            spdlog::error("{}", *why);
            return done(rest::RestError::timeout(std::move(*why)));
          }
          if (out->failure) return done(rest::RestError::internal(*out->failure));
          done(std::move(out->v));
        });
  }

  /// What a generation reports, once, on generation_io: the task configs,
  /// or why there are none.
  using GenerationDone = std::function<void(Result<std::vector<ConfigMap>>)>;

  /// One generation of `c` under way: the plugin's thread fills it;
  /// generation_tick looks at it every 50 ms on generation_io, which never waits for
  /// plugin code, so a stuck connector delays no other one.
  struct GenerationRun {
    std::mutex mu;
    const char* call = "start";  ///< the plugin call under way
    int64_t call_began_ms = mono_ms();
    bool done = false;
    uint64_t abandoned_token = 0;  ///< abandoned_calls entry, once abandoned
    Result<std::vector<ConfigMap>> out = std::vector<ConfigMap>{};
    connectors::DetachedConnectorContext context;
    std::unique_ptr<connectors::Connector> plugin;
    explicit GenerationRun(const std::string& name) : context(name) {}
    void enter(const char* next) {
      std::lock_guard lk(mu);
      call = next;
      call_began_ms = mono_ms();
    }
  };

  /// The leader's transient instance of `c`: start(conf), task_configs
  /// (generate_task_configs: tasks.max, tasks.max.enforce, the cap) and
  /// stop(), on a thread of its own, so that a stuck or runaway plugin
  /// never holds a herder thread. start() and task_configs() each get
  /// connector.call.timeout.ms, stop() task.shutdown.graceful.timeout.ms;
  /// past one, the thread (and the plugin instance) is abandoned, recorded
  /// in abandoned_calls under "connector <c>" until it returns, and the
  /// error names the call. While it is recorded, a new generation of `c`
  /// (or one past kMaxAbandonedPluginCalls) is refused at once, without a
  /// thread. `done` gets the configs, or: the plugin's exception, the
  /// enforce or cap failure, a deadline, a refusal, the worker stopping (at
  /// once). Returns at once; `done` runs on generation_io.
  void generate_async(const std::string& c, std::unique_ptr<connectors::Connector> p, const ConfigMap& conf,
                      connectors::TasksMax tasks, GenerationDone done) {
    if (auto no = abandoned_calls->refusal("connector " + c, "taskConfigs() of connector " + c)) {
      spdlog::error("leader: {}", *no);
      return done(Error{"connector", *no});
    }
    auto run = std::make_shared<GenerationRun>(c);
    run->plugin = std::move(p);
    ++*generations_running;
    std::thread([run, c, conf, tasks, limit = cfg.tasks_max_limit, running = generations_running,
                 calls = abandoned_calls] {
      try {
        run->plugin->initialize(run->context);
        run->plugin->start(conf);
        run->enter("taskConfigs");
        auto configs = connectors::generate_task_configs(*run->plugin, c, tasks, limit);
        {
          std::lock_guard lk(run->mu);
          run->out = std::move(configs);  // kept if stop() then stalls
          run->call = "stop";
          run->call_began_ms = mono_ms();
        }
        run->plugin->stop();
      } catch (const std::exception& e) {
        std::lock_guard lk(run->mu);
        run->out = Error{"connector", std::string(run->call) + "() of connector " + c + " failed: " + e.what()};
      }
      std::lock_guard lk(run->mu);
      run->done = true;
      if (run->abandoned_token) calls->returned(run->abandoned_token);
      --*running;
    }).detach();
    auto timer = std::make_shared<asio::steady_timer>(generation_io);
    generation_tick(weak_from_this(), c, run, timer, std::move(done));
  }

  /// One look at `run` (see generate_async); again in 50 ms while it runs
  /// within its deadline. generation_io.
  static void generation_tick(std::weak_ptr<Impl> w, const std::string& c, std::shared_ptr<GenerationRun> run,
                              std::shared_ptr<asio::steady_timer> timer, GenerationDone done) {
    auto s = w.lock();
    if (!s) return;
    std::unique_lock lk(run->mu);
    if (run->done) {
      auto out = std::move(run->out);
      lk.unlock();
      return done(std::move(out));
    }
    if (s->stopping) {
      lk.unlock();
      return done(Error{"connector", "the worker is stopping"});
    }
    const bool stopping_call = std::string_view(run->call) == "stop";
    const int bound = stopping_call ? s->cfg.task_shutdown_graceful_timeout_ms : s->cfg.connector_call_timeout_ms;
    if (mono_ms() - run->call_began_ms >= bound) {
      const std::string what = std::string(run->call) + "() of connector " + c;
      const std::string why = what + " did not return within " + std::to_string(bound) + " ms (" +
                              (stopping_call ? "task.shutdown.graceful.timeout.ms" : "connector.call.timeout.ms") +
                              "); its thread is abandoned";
      run->abandoned_token = s->abandoned_calls->abandoned("connector " + c, what);
      // A stop() past its bound after good configs keeps them (Connect
      // only logs a slow stop); anything else fails the connector.
      Result<std::vector<ConfigMap>> out = Error{"connector", why};
      if (stopping_call && run->out) out = std::move(run->out);
      lk.unlock();
      spdlog::error("leader: {}", why);
      return done(std::move(out));
    }
    lk.unlock();
    timer->expires_after(std::chrono::milliseconds(50));
    timer->async_wait([w, c, run, timer, done = std::move(done)](const boost::system::error_code& ec) mutable {
      if (!ec) generation_tick(w, c, std::move(run), std::move(timer), std::move(done));
    });
  }

  // Leader: connectors whose task-config generation failed, with the
  // config it failed for and the reason. The status poll writes the
  // connector FAILED with it again whenever its status says otherwise (its
  // owner reports RUNNING after start(), possibly after our FAILED), as long
  // as the stored config is the one that failed. Guarded by gen_fail_mu.
  struct GenerationFailure {
    ConfigMap config;
    std::string trace;
  };
  std::mutex gen_fail_mu;
  std::map<std::string, GenerationFailure> generation_failures;
  /// Task-config generation threads under way (stuck_plugin_threads); shared
  /// with the detached threads, which may outlive the herder.
  std::shared_ptr<std::atomic<int>> generations_running = std::make_shared<std::atomic<int>>(0);

  /// Records the failure of `c`'s generation (config `raw`) and reports
  /// the connector FAILED. Generation thread.
  void leader_generation_failed(const std::string& c, const ConfigMap& raw, const std::string& why) {
    spdlog::error("leader: connector {} failed to generate task configs: {}", c, why);
    {
      std::lock_guard lk(gen_fail_mu);
      generation_failures[c] = {raw, why};
    }
    assert_generation_failures();
  }

  /// Whether `c`'s generation failed for its config in `snap`. Any thread.
  bool generation_failed_for(const std::string& c, const ClusterConfigState& snap) {
    std::lock_guard lk(gen_fail_mu);
    auto f = generation_failures.find(c);
    auto stored = snap.connector_configs.find(c);
    return f != generation_failures.end() && stored != snap.connector_configs.end() &&
           stored->second == f->second.config;
  }

  void leader_generation_succeeded(const std::string& c) {
    std::lock_guard lk(gen_fail_mu);
    generation_failures.erase(c);
  }

  /// Writes FAILED (under its owner's worker id) for each recorded failure
  /// whose config is still the stored one and whose status is not that
  /// FAILED yet; forgets the others. Pool thread (status poll).
  void assert_generation_failures() {
    {
      std::lock_guard lk(gen_fail_mu);
      if (generation_failures.empty()) return;
    }
    const auto snap = config_store->snapshot();
    std::lock_guard lk(gen_fail_mu);
    for (auto f = generation_failures.begin(); f != generation_failures.end();) {
      auto stored = snap.connector_configs.find(f->first);
      if (stored == snap.connector_configs.end() || stored->second != f->second.config ||
          snap.target_state(f->first) == storage::TargetState::Stopped) {
        f = generation_failures.erase(f);
        continue;
      }
      auto cur = status_store->get_connector(f->first);
      if (!cur || cur->state != StatusState::Failed || cur->trace != f->second.trace)
        status_store->put_connector(f->first, StatusValue{StatusState::Failed, f->second.trace,
                                                          cur ? cur->worker_id : cfg.worker_id,
                                                          cur ? cur->generation : -1});
      ++f;
    }
  }

  /// Generates the task configs of `c` (generate_async, unless it is
  /// STOPPED: none) and writes them when they differ from the committed
  /// ones. `finish` runs once, on generation_io: false when the configs
  /// could not be written (retry). generation_io; never waits for plugin
  /// code.
  void job_reconfigure(const std::string& c, std::function<void(bool)> finish) {
    auto snap = config_store->snapshot();
    auto it = snap.connector_configs.find(c);
    if (it == snap.connector_configs.end()) return finish(true);
    if (snap.target_state(c) == storage::TargetState::Stopped) return finish(write_task_configs(c, {}));
    providers::ResolvedConfig resolved{it->second, {}};
    if (cfg.config_transformer) {
      auto r = cfg.config_transformer->transform(it->second);
      if (!r) {
        // The connector's own worker reports it FAILED with this reason.
        spdlog::warn("leader cannot generate task configs of {}: {}", c, r.error().to_string());
        return finish(true);
      }
      resolved = std::move(r).value();
    }
    const ConfigMap& conf = resolved.config;
    if (!conf.count("connector.class")) return finish(true);
    const auto parsed = worker->parse_connector_config(c, it->second, resolved);  // the one read of tasks.max
    auto plugin = registry->create(parsed.connector_class);
    if (!plugin) {
      spdlog::warn("leader cannot create connector {}: {}", c, plugin.error().to_string());
      return finish(true);
    }
    if (parsed.tasks_error) {
      // Its owner reports it FAILED with this reason (runtime::Worker::
      // start_connector); no task configs are generated for it, ever.
      spdlog::warn("leader does not generate task configs of {}: {}", c, parsed.tasks_error->message);
      return finish(true);
    }
    const ConfigMap raw = it->second;
    generate_async(c, std::move(plugin).value(), conf, parsed.tasks,
                   [w = weak_from_this(), c, raw, resolved, finish](Result<std::vector<ConfigMap>> generated) {
                     auto s = w.lock();
                     if (!s) return;
                     if (!generated) {
                       if (!s->stopping)  // stopping is not the connector's failure
                         s->leader_generation_failed(c, raw, generated.error().message);
                       return finish(true);
                     }
                     auto configs = std::move(generated).value();
                     providers::restore_placeholders(raw, resolved, configs);
                     finish(s->write_task_configs(c, configs));
                   });
  }

  /// Writes `configs` as the task configs of `c` unless they are the
  /// committed ones. Returns false when the write failed (retry).
  /// generation_io (blocking on the config topic, bounded).
  bool write_task_configs(const std::string& c, const std::vector<ConfigMap>& configs) {
    leader_generation_succeeded(c);
    auto snap = config_store->snapshot();
    auto current = snap.tasks(c);
    bool same = snap.task_counts.count(c) != 0 && !snap.inconsistent.count(c) &&
                current.size() == configs.size();
    for (size_t i = 0; same && i < configs.size(); ++i) {
      auto tc = snap.task_config(ConnectorTaskId{c, static_cast<int32_t>(i)});
      same = tc && *tc == configs[i];
    }
    if (same) return true;
    spdlog::info("leader writes {} task configs for connector {}", configs.size(), c);
    auto st = leader_config_write([&] { return config_store->put_task_configs(c, configs, cfg.worker_sync_timeout_ms * 3); });
    if (st) return true;
    if (storage::is_unreadable_record_error(st.error())) {  // the same configs would be refused again
      spdlog::error("task configs of {} not written: {}", c, st.error().to_string());
      return true;
    }
    spdlog::warn("writing task configs of {} failed (will retry): {}", c, st.error().to_string());
    return false;
  }

  // ------------------------------------------------------------------ KIP-618 zombie fencing
  // Before an exactly-once source task starts, the older generations of its
  // connector's tasks must be fenced out (Connect's fenceZombieSourceTasks):
  // the leader runs init_transactions for each transactional id of the
  // last fenced generation (the `tasks-fencing-<c>` count), then writes the
  // new count. A follower's task asks the leader with a signed
  // PUT /connectors/{c}/fence. One fencing per connector at a time; later
  // requests wait for it.

  /// True when `conf` names a source connector class.
  bool is_source(const ConfigMap& conf) const {
    auto cls = conf.find("connector.class");
    if (cls == conf.end()) return false;
    auto desc = registry->find(cls->second);
    return desc && desc->type == connectors::ConnectorType::Source;
  }

  /// The checks around an exactly-once source task's producer (runtime
  /// ExactlyOnceTaskChecks); none unless exactly.once.source.support=enabled
  /// and `conf` is a source. Apply strand.
  runtime::ExactlyOnceTaskChecks exactly_once_checks(const ConnectorTaskId& t, const ConfigMap& conf) {
    runtime::ExactlyOnceTaskChecks checks;
    if (!cfg.exactly_once_source || !is_source(conf)) return checks;
    const auto snap = config_store->snapshot();
    const auto g = snap.task_config_generations.find(t.connector);
    const int32_t generation = g == snap.task_config_generations.end() ? 0 : g->second;
    std::weak_ptr<Impl> w = weak_from_this();
    checks.before_producer = [w, t](const std::atomic<bool>& stop_requested) -> Status {
      auto s = w.lock();
      if (!s) return Error{"fence", "the worker is stopping"};
      return s->await_fencing(t, stop_requested);
    };
    // Connect's verifyTaskGenerationAndOwnership, after init_transactions.
    checks.after_producer = [w, t, generation]() -> Status {
      auto s = w.lock();
      if (!s) return Error{"fence", "the worker is stopping"};
      auto snap2 = s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
      if (!snap2) return Error{"fence", "Failed to read to end of config topic: " + snap2.error().to_string()};
      const auto g2 = snap2->task_config_generations.find(t.connector);
      if ((g2 == snap2->task_config_generations.end() ? 0 : g2->second) != generation)
        return Error{"fence", "Cannot start source task " + t.to_string() +
                                  " with exactly-once support as the connector has already generated a new set of "
                                  "task configs"};
      std::lock_guard lk(s->mu);
      if (!std::binary_search(s->pub.assigned_tasks.begin(), s->pub.assigned_tasks.end(), t))
        return Error{"fence", "Cannot start source task " + t.to_string() +
                                  " as it has already been revoked from this worker"};
      return ok_status();
    };
    return checks;
  }

  /// Task thread: fences (leader) or asks the leader to fence (follower) the
  /// older generations of `t`'s connector, and waits for the answer. A
  /// follower retries refused or failed forwards (a new leader, a key not
  /// read yet or rotated: Connect's isPossibleExpiredKeyException) with
  /// backoff for up to a minute. Blocking.
  Status await_fencing(const ConnectorTaskId& t, const std::atomic<bool>& stop_requested) {
    const int64_t start = mono_ms();
    std::string last;
    // Waits up to `ms`, in short steps; false once the task or the worker stops.
    auto pause = [&](int64_t ms) {
      for (const int64_t until = mono_ms() + ms; mono_ms() < until;) {
        if (stopping || stop_requested.load()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      return !stopping && !stop_requested.load();
    };
    for (int attempt = 0; mono_ms() - start < 60000; ++attempt) {
      if (!pause(attempt > 0 ? std::min(250 << std::min(attempt, 4), 4000) : 0))
        return Error{"fence", "the task or the worker is stopping"};
      struct Answer {
        std::promise<std::pair<int, std::string>> done;  ///< local answer (leader), status 0 = forward
        std::string leader_url;
        std::vector<std::pair<std::string, std::string>> headers;
      };
      auto a = std::make_shared<Answer>();
      auto fut = a->done.get_future();
      asio::post(io, [w = weak_from_this(), a, c = t.connector] {
        auto s = w.lock();
        if (!s) return a->done.set_value({503, "the worker is stopping"});
        if (s->io_is_leader)
          return s->io_fence(c, [a](int status, std::string why) { a->done.set_value({status, std::move(why)}); });
        if (s->io_leader_url.empty()) return a->done.set_value({503, "no leader is known yet"});
        a->leader_url = s->io_leader_url;
        a->headers = s->io_signature_headers("");
        a->done.set_value({0, ""});
      });
      // The leader's own fencing may take a while (one init_transactions
      // per older task); a stop ends the wait.
      const int64_t asked = mono_ms();
      while (fut.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
        if (stopping || stop_requested.load()) return Error{"fence", "the task or the worker is stopping"};
        if (mono_ms() - asked > cfg.worker_sync_timeout_ms * 3 + 65000) return Error{"fence", "no answer from the herder"};
      }
      auto [status, why] = fut.get();
      if (status == 0) {
        spdlog::info("task {} asks the leader {} to fence out older tasks of {}", t.to_string(), a->leader_url,
                     t.connector);
        auto r = put_internal(a->leader_url, "/connectors/" + rest::percent_encode_segment(t.connector) + "/fence", "",
                              cfg.worker_sync_timeout_ms * 3 + 5000, cfg.rest_client_tls.get(), a->headers);
        if (!r) {
          last = r.error().to_string();
          continue;
        }
        status = r->status;
        why = r->body;
      }
      if (status / 100 == 2) return ok_status();
      last = "HTTP " + std::to_string(status) + " " + why;
      // Not worth retrying: an unknown connector or a sink. (A 400 for a
      // missing signature is retried: this worker may not have read the key yet.)
      if (status == 404 || (status == 400 && why.find("is not a source connector") != std::string::npos)) break;
      spdlog::warn("zombie fencing for {} failed ({}); retrying", t.connector, last);
    }
    return Error{"fence", last};
  }

  /// Leader side: fences `c` unless already done for its latest task
  /// configs, then done(204, "") or done(status, why): 409 not the leader,
  /// 404 unknown connector, 400 not a source, 500 the fencing failed.
  /// io thread only.
  void io_fence(const std::string& c, std::function<void(int, std::string)> done) {
    if (!io_is_leader)
      return done(409, "Only the leader may perform zombie fencing." +
                           (io_leader_url.empty() ? std::string() : " The leader is " + io_leader_url));
    auto snap = config_store->snapshot();
    if (!snap.contains(c)) return done(404, "Connector " + c + " not found");
    if (!is_source(snap.connector_configs.at(c))) return done(400, "Connector " + c + " is not a source connector");
    auto& waiters = io_fencings[c];
    waiters.push_back(std::move(done));
    if (waiters.size() > 1) return;  // joins the fencing under way
    asio::post(pool, [w = weak_from_this(), c] {
      auto s = w.lock();
      if (!s) return;
      auto st = s->job_fence(c);
      const std::string why = st ? "" : "Failed to perform zombie fencing: " + st.error().to_string();
      asio::post(s->io, [w, c, why] {
        auto s2 = w.lock();
        if (!s2) return;
        auto waiting = std::move(s2->io_fencings[c]);
        s2->io_fencings.erase(c);
        for (auto& d : waiting) why.empty() ? d(204, "") : d(500, why);
      });
    });
  }

  /// The fencing itself (pool thread): reads the config topic to the end;
  /// if `c` is pending fencing, fences the transactional ids of its last
  /// task-count record (none when there is no record yet, or when both the
  /// old and the new generation have one task: the new task's own
  /// init_transactions fences the old one, as Connect skips that case),
  /// then writes the new task count.
  Status job_fence(const std::string& c) {
    auto snap = config_store->read_to_end(cfg.worker_sync_timeout_ms);
    if (!snap)
      return Error{"fence", "Failed to read to end of config topic before performing zombie fencing: " +
                                snap.error().to_string()};
    if (!snap->pending_fencing.count(c)) {
      spdlog::debug("skipping zombie fencing of {}: its older task generations are fenced out already", c);
      return ok_status();
    }
    const auto n = snap->task_counts.find(c);
    const int32_t task_count = n == snap->task_counts.end() ? 0 : n->second;
    const auto rec = snap->task_count_records.find(c);
    if (rec != snap->task_count_records.end() && !(rec->second == 1 && task_count == 1)) {
      storage::ClientProps client = cfg.client_props;
      client["bootstrap.servers"] = cfg.bootstrap_servers;
      for (int32_t i = 0; i < rec->second; ++i) {
        auto st = storage::fence_transactional_id(client, storage::task_transactional_id(cfg.group_id, {c, i}),
                                                  cfg.worker_sync_timeout_ms * 3);
        if (!st) return st;
      }
      spdlog::info("fenced out the {} transactional producer(s) of the previous task generation of {}", rec->second, c);
    }
    spdlog::info("writing task count record {} = {} after zombie fencing", storage::task_count_key(c), task_count);
    return leader_config_write(
        [&] { return config_store->put_task_count_record(c, task_count, cfg.worker_sync_timeout_ms * 3); });
  }

  // ------------------------------------------------------------------ KIP-618 transactional leader
  // With exactly.once.source.support=preparing|enabled the leader writes
  // the config topic through a fencable (transactional) producer, as
  // Connect's KafkaConfigBackingStore: it claims the write privileges
  // (init_transactions on "connect-cluster-<group.id>", fencing the
  // previous leader's producer) when it is assigned leadership, and a
  // privileged write that fails releases them; the worker claims them again
  // only while it is the leader (Connect's fencedFromConfigTopic).

  /// Pool or generation thread. Connect's writeToConfigTopicAsLeader around one
  /// privileged config write `write` (a ConfigBackingStore call): claims
  /// the write privileges first when they are not held and this worker is
  /// still the leader (Connect's tick claims them before it serves a leader
  /// request), then writes. A
  /// privileged write that failed (fenced by a newer leader, or no
  /// privileges) sets fenced_from_config_topic, asks the io thread to
  /// reclaim while this worker is leader, and returns an Error
  /// (field storage::kPrivilegedWriteField) with Connect's message "Failed
  /// to write to config topic; this may be due to a transient error and the
  /// request can be safely retried: <cause>". Other errors pass through.
  Status leader_config_write(const std::function<Status()>& write) {
    bool leader = false;
    {
      std::lock_guard lk(mu);
      leader = pub.is_leader && pub.in_group;
    }
    // A worker that lost leadership since the io thread let this write
    // through claims nothing (that would fence the new leader); its write
    // fails without privileges, as Connect's IllegalStateException.
    if (cfg.transactional_leader && leader) {
      if (auto st = config_store->claim_write_privileges(cfg.worker_sync_timeout_ms * 3); !st)
        return note_privileged_failure(st.error());
    }
    auto st = write();
    if (st || !storage::is_privileged_write_error(st.error())) return st;
    return note_privileged_failure(st.error());
  }

  /// Pool thread: records a failed privileged write or claim (Connect's
  /// fencedFromConfigTopic = true) and returns the error the caller answers.
  Status note_privileged_failure(const Error& cause) {
    spdlog::warn("Failed to write to config topic as leader; will rejoin group if necessary and, if still leader, "
                 "attempt to reclaim write privileges for the config topic: {}",
                 cause.to_string());
    fenced_from_config_topic = true;
    {
      std::lock_guard lk(writer_mu);
      writer_last_error = cause.to_string();
    }
    asio::post(io, [w = weak_from_this()] {
      if (auto s = w.lock()) s->io_reclaim_write_privileges();
    });
    return Error{storage::kPrivilegedWriteField,
                 "Failed to write to config topic; this may be due to a transient error and the request can be "
                 "safely retried: " +
                     cause.message};
  }

  /// io thread. Claims the config topic's write privileges on the pool
  /// while this worker is the leader (retrying every 250 ms, Connect's
  /// CONFIG_TOPIC_WRITE_PRIVILEGES_BACKOFF_MS, as long as it stays leader),
  /// or releases them when it is not (Connect keeps a former leader's
  /// producer until a write fails; we close it at once, so the privileges
  /// are held only by the leader). Nothing without a transactional leader.
  void io_reclaim_write_privileges() {
    if (!cfg.transactional_leader || stopping || io_claiming) return;
    const bool leader = io_is_leader && io_assignment.has_value();
    io_claiming = true;
    asio::post(pool, [w = weak_from_this(), leader] {
      auto s = w.lock();
      if (!s) return;
      Status st = ok_status();
      if (leader) {
        st = s->config_store->claim_write_privileges(s->cfg.worker_sync_timeout_ms * 3);
      } else {
        s->config_store->release_write_privileges();
      }
      asio::post(s->io, [w, st, leader] {
        auto s2 = w.lock();
        if (!s2) return;
        s2->io_claiming = false;
        if (s2->stopping) return;
        if (st) {
          if (s2->fenced_from_config_topic.exchange(false) && leader)
            spdlog::info("Successfully reclaimed write privileges for config topic after being fenced out");
          // Leadership changed while the job ran: claim or release again.
          if (leader != (s2->io_is_leader && s2->io_assignment.has_value())) s2->io_reclaim_write_privileges();
          return;
        }
        s2->fenced_from_config_topic = true;
        {
          std::lock_guard lk(s2->writer_mu);
          s2->writer_last_error = st.error().to_string();
        }
        spdlog::warn("Unable to claim write privileges for config topic. Will backoff and possibly retry if still "
                     "the leader: {}",
                     st.error().to_string());
        s2->claim_timer.expires_after(std::chrono::milliseconds(250));
        s2->claim_timer.async_wait([w](const boost::system::error_code& ec) {
          if (auto s3 = w.lock(); s3 && !ec) s3->io_reclaim_write_privileges();
        });
      });
    });
  }

  // ------------------------------------------------------------------ coordinator callbacks
  void on_before_join(const coordinator::BeforeJoin& bj, std::function<void()> proceed) {
    if (bj.new_rebalance) {
      io_rebalance_started_ms = wall_ms();
      if (io_rebalance_reason.empty()) io_rebalance_reason = bj.reason;
      cfg.metrics->rebalance_started();
    }
    {
      std::lock_guard lk(mu);
      pub.applied = false;
      pub.in_group = false;
    }
    if (bj.revoke_all) {
      // What an eager round stops: GET /rebalances lists it as revoked.
      if (io_assignment) {
        io_revoked_before_join.connectors = io_assignment->connectors;
        io_revoked_before_join.tasks = io_assignment->tasks;
      }
      io_assignment.reset();
      {
        std::lock_guard lk(mu);
        pub.assigned_connectors.clear();
        pub.assigned_tasks.clear();
      }
      asio::post(apply_strand, [w = weak_from_this(), proceed = std::move(proceed)] {
        if (auto s = w.lock()) {
          spdlog::info("revoking everything before JoinGroup (eager rebalance or generation reset)");
          s->job_stop_everything();
        }
        proceed();
      });
      return;
    }
    if (bj.hand_over) {
      // Drain: our connectors stop now; our tasks run on until the
      // assignment without them arrives (job_apply stops them then).
      if (io_assignment) io_assignment->connectors.clear();
      {
        std::lock_guard lk(mu);
        pub.assigned_connectors.clear();
      }
      io_stop_begin();
      asio::post(apply_strand, [w = weak_from_this(), tasks = bj.tasks, proceed = std::move(proceed)] {
        if (auto s = w.lock()) {
          s->job_hand_over(tasks);
          s->post_stop_end();
        }
        proceed();
      });
      return;
    }
    // Pending revocations finish before JoinGroup.
    if (io_pending_stops == 0) {
      proceed();
      return;
    }
    io_join_waiters.push_back(std::move(proceed));
  }

  void on_leader(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready) {
    // Read the config topic to the end on the pool, then assign on the io thread.
    asio::post(pool, [w = weak_from_this(), round, ready = std::move(ready)]() mutable {
      auto s = w.lock();
      if (!s) return;
      auto r = s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
      if (!r) spdlog::warn("leader: config read failed: {}", r.error().to_string());
      asio::post(s->io, [w, round = std::move(round), ready = std::move(ready)]() mutable {
        if (auto s2 = w.lock()) s2->io_assign(round, std::move(ready));
      });
    });
  }

  void io_assign(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready) {
    auto snap = config_store->snapshot();
    std::vector<assignor::MemberReport> reports;
    for (const auto& m : round.members) {
      assignor::MemberReport r;
      r.member_id = m.member_id;
      r.url = m.metadata.url;
      r.config_offset = m.metadata.config_offset;
      if (m.metadata.allocation) {
        r.owned.connectors = m.metadata.allocation->connectors;
        r.owned.tasks = m.metadata.allocation->tasks;
      }
      reports.push_back(std::move(r));
    }
    assignor::ConfigSnapshot cs;
    cs.offset = snap.offset;
    for (const auto& name : snap.connectors()) {
      auto tc = snap.task_counts.find(name);
      cs.connectors[name] = (tc == snap.task_counts.end() || snap.inconsistent.count(name)) ? 0 : tc->second;
    }
    assignor::RoundContext ctx;
    ctx.leader_id = round.leader_id;
    ctx.leader_url = round.leader_url;
    ctx.generation = round.generation;
    ctx.last_completed_generation = round.last_completed_generation;
    ctx.now_ms = mono_ms();
    ctx.protocol = round.protocol;
    // Drain requests of members still in the group (kconnectd's drain).
    io_round_members.clear();
    for (const auto& m : round.members) io_round_members.push_back(m.member_id);
    for (auto it = io_drain_members.begin(); it != io_drain_members.end();)
      it = std::count(io_round_members.begin(), io_round_members.end(), *it) ? std::next(it)
                                                                             : io_drain_members.erase(it);
    ctx.draining_members.assign(io_drain_members.begin(), io_drain_members.end());
    // The leader state is kept only while this worker stays leader.
    if (!io_was_leader) io_leader_state = assignor::LeaderState{};
    assignor::AssignmentResult res;
    if (round.protocol == ConnectProtocol::Eager) {
      res = assignor::EagerAssignor{}.assign(io_leader_state, reports, cs, ctx);
    } else {
      res = assignor::IncrementalCooperativeAssignor{cfg.scheduled_rebalance_max_delay_ms}.assign(io_leader_state,
                                                                                                 reports, cs, ctx);
    }
    io_leader_state = res.state;
    std::vector<std::pair<ConnectorTaskId, StatusValue>> marks;
    if (cfg.hand_over_moves && round.protocol != ConnectProtocol::Eager && !res.config_mismatch)
      marks = hand_over_moves(res, reports, cs, ctx);
    spdlog::info("leader assigned generation {} over {} members (protocol {}, config offset {}{}{})",
                 round.generation, reports.size(), connect::protocol_name(round.protocol), cs.offset,
                 res.config_mismatch ? ", CONFIG_MISMATCH" : "",
                 marks.empty() ? "" : ", " + std::to_string(marks.size()) + " revoked tasks handed over");
    std::vector<std::pair<std::string, Assignment>> out;
    for (auto& ma : res.assignments) out.emplace_back(ma.member_id, std::move(ma.assignment));
    if (marks.empty()) return ready(std::move(out));
    // The marks must be in the status topic before any member sees the
    // assignment: the old owner's stop (UNASSIGNED) then follows them.
    asio::post(pool, [w = weak_from_this(), marks = std::move(marks), out = std::move(out),
                      ready = std::move(ready)]() mutable {
      auto s = w.lock();
      if (!s) return;
      s->write_hand_over_marks(marks);
      asio::post(s->io, [out = std::move(out), ready = std::move(ready)]() mutable { ready(std::move(out)); });
    });
  }

  /// Leader, cooperative protocols (rebalance.hand.over.enable): the tasks
  /// `res` revokes from live members for balance are placed in this same
  /// round where the assignor's follow-up round would place them (computed
  /// now, from the reports as they will be). Only tasks whose old owner's
  /// RUNNING or PAUSED status is known are moved this way; each gets a
  /// hand-over mark (returned, to write before the assignment goes out) so
  /// that its new owner waits for the old owner's stop. Skipped while a
  /// scheduled delay runs or when the follow-up round would revoke or delay.
  /// Updates `res.assignments` and io_leader_state. io thread.
  std::vector<std::pair<ConnectorTaskId, StatusValue>> hand_over_moves(assignor::AssignmentResult& res,
                                                                       const std::vector<assignor::MemberReport>& reports,
                                                                       const assignor::ConfigSnapshot& cs,
                                                                       const assignor::RoundContext& ctx) {
    std::map<ConnectorTaskId, size_t> revoked_from;  // task -> index of the member that stops it
    for (size_t i = 0; i < res.assignments.size(); ++i)
      for (const auto& t : res.assignments[i].assignment.revoked_tasks) revoked_from[t] = i;
    if (revoked_from.empty() || res.state.delay_ms > 0 || res.state.scheduled_rebalance_ms != 0) return {};
    // The follow-up round's reports: what each member owns once this round applied.
    std::vector<assignor::MemberReport> next = reports;
    for (size_t i = 0; i < next.size() && i < res.assignments.size(); ++i) {
      const auto& a = res.assignments[i].assignment;
      auto& owned = next[i].owned;
      const std::set<std::string> gone_c(a.revoked_connectors.begin(), a.revoked_connectors.end());
      const std::set<ConnectorTaskId> gone_t(a.revoked_tasks.begin(), a.revoked_tasks.end());
      std::erase_if(owned.connectors, [&](const auto& c) { return gone_c.count(c) > 0; });
      std::erase_if(owned.tasks, [&](const auto& t) { return gone_t.count(t) > 0; });
      add_sorted(owned.connectors, a.connectors);
      add_sorted(owned.tasks, a.tasks);
    }
    assignor::RoundContext next_ctx = ctx;
    next_ctx.generation = ctx.generation + 1;
    next_ctx.last_completed_generation = ctx.generation;
    auto follow_up = assignor::IncrementalCooperativeAssignor{cfg.scheduled_rebalance_max_delay_ms}.assign(
        res.state, next, cs, next_ctx);
    if (follow_up.config_mismatch || follow_up.state.delay_ms > 0) return {};
    for (const auto& ma : follow_up.assignments)
      if (!ma.assignment.revoked_tasks.empty() || !ma.assignment.revoked_connectors.empty()) return {};
    std::vector<std::pair<ConnectorTaskId, StatusValue>> marks;
    std::vector<ConnectorTaskId> moved;
    for (const auto& ma : follow_up.assignments) {
      auto to = std::find_if(res.assignments.begin(), res.assignments.end(),
                             [&](const auto& x) { return x.member_id == ma.member_id; });
      if (to == res.assignments.end()) continue;
      std::vector<ConnectorTaskId> taken;
      for (const auto& t : ma.assignment.tasks) {
        auto from = revoked_from.find(t);
        if (from == revoked_from.end() || res.assignments[from->second].member_id == ma.member_id) continue;
        auto st = status_store->get_task(t);
        const std::string& old_url = reports[from->second].url;
        if (!st || (st->state != StatusState::Running && st->state != StatusState::Paused) ||
            old_url.find("//" + st->worker_id + "/") == std::string::npos)
          continue;  // old owner's status unknown: the follow-up round places it
        marks.emplace_back(t, StatusValue{st->state, std::string(storage::kHandOverTrace), st->worker_id,
                                          st->generation});
        taken.push_back(t);
      }
      add_sorted(to->assignment.tasks, taken);
      moved.insert(moved.end(), taken.begin(), taken.end());
    }
    if (moved.empty()) return {};
    // The leader's memory: this round's, plus the tasks placed at once.
    add_sorted(io_leader_state.previous_assignment.tasks, moved);
    const std::set<ConnectorTaskId> moved_set(moved.begin(), moved.end());
    std::erase_if(io_leader_state.previous_revocation.tasks, [&](const auto& t) { return moved_set.count(t) > 0; });
    spdlog::info("leader: revoked tasks {} go to their new owners in this round (hand-over)", ids_to_string(moved));
    return marks;
  }

  void record_history(const coordinator::AssignedEvent& ev) {
    RebalanceRecord r;
    r.generation = ev.generation;
    r.protocol = connect::protocol_name(ev.protocol);
    r.leader_id = ev.received.leader;
    r.leader_url = ev.received.leader_url;
    r.is_leader = ev.is_leader;
    r.error = ev.received.error;
    r.assigned_connectors = ev.received.connectors;
    r.assigned_tasks = ev.received.tasks;
    r.revoked_connectors = ev.received.revoked_connectors;
    r.revoked_tasks = ev.received.revoked_tasks;
    // Everything stopped before the JoinGroup (eager, or a generation
    // reset) was revoked by this rebalance too.
    add_sorted(r.revoked_connectors, io_revoked_before_join.connectors);
    add_sorted(r.revoked_tasks, io_revoked_before_join.tasks);
    io_revoked_before_join = {};
    r.delay_ms = ev.received.delay_ms;
    r.config_offset = ev.received.config_offset;
    r.started_ms = io_rebalance_started_ms;
    r.assigned_ms = wall_ms();
    r.reason = io_rebalance_reason;
    std::lock_guard lk(mu);
    history.push_back(std::move(r));
    while (history.size() > kMaxHistory) history.pop_front();
  }

  void on_assigned(const coordinator::AssignedEvent& ev) {
    io_generation = ev.generation;
    io_was_leader = ev.is_leader;
    const bool became_leader = ev.is_leader && !io_is_leader;
    io_is_leader = ev.is_leader;
    io_leader_url = ev.received.leader_url;
    if (ev.protocol != io_protocol) {
      const bool was = io_protocol == ConnectProtocol::Sessioned;
      const bool now = ev.protocol == ConnectProtocol::Sessioned;
      if (now && !was) spdlog::info("internal request validation has been re-enabled");
      if (was && !now)
        spdlog::warn("the group's protocol was downgraded from '{}' to '{}': internal requests are no longer signed "
                     "or checked (KIP-507). A worker with an older connect.protocol probably joined; set it to "
                     "'sessioned' there, or the cluster stays insecure",
                     connect::protocol_name(io_protocol), connect::protocol_name(ev.protocol));
    }
    io_protocol = ev.protocol;
    io_assignment = ev.snapshot;
    status_listener->set_generation(ev.generation);
    // Static membership: the whole kept snapshot, started below like any
    // assignment (job_apply starts what we own and do not run).
    if (ev.resumed) io_rebalance_reason = "static member resumed its assignment without a rebalance";
    record_history(ev);
    io_rebalance_reason.clear();
    log_ctx->generation = ev.generation;
    cfg.metrics->assignment_received(ev.generation, connect::protocol_name(ev.protocol), ev.received.leader_url);
    cfg.metrics->set_assigned(ev.snapshot.connectors.size(), ev.snapshot.tasks.size());
    {
      std::lock_guard lk(mu);
      pub.member_id = ev.member_id;
      pub.generation = ev.generation;
      pub.is_leader = ev.is_leader;
      pub.leader_url = ev.received.leader_url;
      pub.protocol = connect::protocol_name(ev.protocol);
      pub.assigned_connectors = ev.snapshot.connectors;
      pub.assigned_tasks = ev.snapshot.tasks;
      pub.applied = false;
      coord_lost = false;
      pub.in_group = true;
    }
    // KIP-618: as the leader we may now write the config topic (Connect's
    // onAssigned claims write privileges); a former leader lets them go.
    io_reclaim_write_privileges();
    io_check_key_rotation();
    scheduled_timer.cancel();
    if (ev.received.delay_ms > 0) {
      scheduled_timer.expires_after(std::chrono::milliseconds(ev.received.delay_ms));
      scheduled_timer.async_wait([w = weak_from_this(), gen = ev.generation](const boost::system::error_code& ec) {
        auto s = w.lock();
        if (ec || !s) return;
        s->io_request_rejoin("scheduled rebalance delay expired (set in generation " + std::to_string(gen) + ")");
      });
    }
    const uint64_t seq = ++io_apply_seq;
    if (ev.received.error != 0) {
      // CONFIG_MISMATCH: catch up, then rejoin; start nothing (4.4 step 1).
      spdlog::warn("assignment failed (error {}), leader config offset {}; reading configs and rejoining",
                   ev.received.error, ev.received.config_offset);
      asio::post(pool, [w = weak_from_this()] {
        auto s = w.lock();
        if (!s) return;
        (void)s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
        asio::post(s->io, [w] {
          if (auto s2 = w.lock()) s2->io_request_rejoin("assignment failed: CONFIG_MISMATCH");
        });
      });
      return;
    }
    rebalance_pending = false;
    frozen_hold = false;
    latest_apply_seq = seq;
    // Only an assignment that revokes something holds the next JoinGroup
    // until its stops are done: an apply queued behind a slow one (offsets
    // read, starts) must not hold the JoinGroup (the mock broker expels a
    // member that rejoins later than about session.timeout - 1 s).
    const bool gates_join = !ev.received.revoked_connectors.empty() || !ev.received.revoked_tasks.empty() ||
                            ev.protocol == ConnectProtocol::Eager;
    if (gates_join) io_stop_begin();  // ended by job_apply once its revocations are done
    asio::post(apply_strand, [w = weak_from_this(), ev, seq, became_leader, gates_join] {
      if (auto s = w.lock()) s->job_apply(ev, seq, became_leader, gates_join);
    });
  }

  // Apply one assignment: revoke, catch up configs, start (reference 4.4).
  void job_apply(const coordinator::AssignedEvent& ev, uint64_t seq, bool became_leader, bool gates_join) {
    auto stops_done = [&] {
      if (gates_join) post_stop_end();
    };
    if (stopping) return stops_done();
    const Assignment& owned = ev.snapshot;
    // 1. Stop what was revoked, plus anything running that we no longer own.
    std::set<std::string> owned_c(owned.connectors.begin(), owned.connectors.end());
    std::set<ConnectorTaskId> owned_t(owned.tasks.begin(), owned.tasks.end());
    std::vector<std::string> stop_c;
    std::vector<ConnectorTaskId> stop_t;
    for (const auto& c : worker->connector_names())
      if (!owned_c.count(c)) stop_c.push_back(c);
    for (const auto& t : worker->task_ids())
      if (!owned_t.count(t)) stop_t.push_back(t);
    if (!stop_c.empty() || !stop_t.empty()) {
      spdlog::info("stopping revoked connectors {} and tasks {}", names_to_string(stop_c),
                   ids_to_string(stop_t));
      auto fc = std::async(std::launch::async, [&] { return worker->stop_connectors(stop_c); });
      // Each revoked task is awaited on its own thread so that its own stop
      // time is measured (GET /rebalances); one graceful deadline for all.
      const int64_t t0 = mono_ms();
      for (const auto& t : stop_t) worker->request_stop_task(t);
      std::vector<std::future<TaskStopTime>> waits;
      for (const auto& t : stop_t)
        waits.push_back(std::async(std::launch::async, [this, t, t0] {
          const int left = static_cast<int>(
              std::max<int64_t>(0, cfg.task_shutdown_graceful_timeout_ms - (mono_ms() - t0)));
          const bool ok = worker->await_task_stopped(t, left);
          return TaskStopTime{t, mono_ms() - t0, !ok};
        }));
      std::vector<ConnectorTaskId> timed_out;
      std::vector<TaskStopTime> stops;
      for (auto& f : waits) {
        stops.push_back(f.get());
        if (stops.back().timed_out) timed_out.push_back(stops.back().id);
      }
      {
        std::lock_guard lk(mu);
        for (auto it = history.rbegin(); it != history.rend(); ++it)
          if (it->generation == ev.generation) {
            it->task_stops.insert(it->task_stops.end(), stops.begin(), stops.end());
            break;
          }
      }
      auto timed_out_c = fc.get();
      if (!timed_out.empty() || !timed_out_c.empty())
        spdlog::warn("graceful stop timed out for connectors {} tasks {}", names_to_string(timed_out_c),
                     ids_to_string(timed_out));
      for (const auto& c : stop_c) forget_connector(c);
      for (const auto& t : stop_t) forget_task(t);
      auto fl = status_store->flush(cfg.worker_sync_timeout_ms);
      if (!fl) spdlog::warn("status flush: {}", fl.error().to_string());
    }
    stops_done();  // revocations done: a JoinGroup may go out now
    // A draining worker is done once it owns nothing (all stopped above);
    // while it still owns work it asks the leader again (a new leader).
    asio::post(io, [w = weak_from_this(), none = owned.connectors.empty() && owned.tasks.empty()] {
      auto s = w.lock();
      if (!s || !s->io_draining) return;
      if (none) s->io_drain_finish(true, "every connector and task was handed over");
      else s->io_ask_leader_to_drain();
    });
    const bool had_revocations = !ev.received.revoked_connectors.empty() || !ev.received.revoked_tasks.empty();
    // A newer assignment is queued: it catches up, reads offsets and starts.
    auto superseded = [&] {
      if (seq == latest_apply_seq.load()) return false;
      spdlog::info("apply superseded by a newer assignment; leaving starts to it");
      if (had_revocations)
        asio::post(io, [w = weak_from_this()] {
          if (auto s = w.lock()) s->io_request_rejoin("revocations completed");
        });
      return true;
    };
    if (superseded()) return;
    // 2. Catch up the config topic to the assignment's offset.
    auto snap = config_store->snapshot();
    if (snap.offset < ev.received.config_offset) {
      auto r = config_store->read_to_end(cfg.worker_sync_timeout_ms);
      if (r) snap = r.value();
      else spdlog::warn("config catch-up failed: {}", r.error().to_string());
    }
    if (snap.offset != ev.received.config_offset) {
      const bool lagging = snap.offset < ev.received.config_offset;
      spdlog::warn("config offset {} {} assignment offset {}; rejoining without starting anything",
                   snap.offset, lagging ? "below" : "above", ev.received.config_offset);
      auto w = weak_from_this();
      // A lagging read is retried after a short back-off (Connect leaves the
      // group and backs off; we only delay the rejoin).
      const int delay = lagging ? cfg.retry_backoff_ms * 10 : 0;
      asio::post(io, [w, delay, lagging] {
        auto s = w.lock();
        if (!s) return;
        if (delay == 0) {
          s->io_request_rejoin(lagging ? "config topic lagging" : "config offset overshoots the assignment");
          return;
        }
        s->retry_timer.expires_after(std::chrono::milliseconds(delay));
        s->retry_timer.async_wait([w](const boost::system::error_code& ec) {
          if (auto s2 = w.lock(); s2 && !ec) s2->io_request_rejoin("config topic lagging");
        });
      });
      return;
    }
    // 3. Source offsets written by previous owners: every source task reads
    // the offsets topic to the end on its own thread before it starts
    // (runtime::Worker), so the apply strand does not read it again.
    if (stopping || superseded()) return;
    // A handed-over task (drain, or moved in one round) starts only after
    // its old owner's stop: read the statuses now so that the marks are seen.
    const auto running_t = worker->task_ids();
    if (std::any_of(owned.tasks.begin(), owned.tasks.end(), [&](const auto& t) { return !running_t.count(t); }))
      (void)status_store->read_to_end(cfg.worker_sync_timeout_ms);
    // 4. Start what we own and do not run, apply target states and status
    // rules: one reconcile pass, now allowed to start.
    applied_apply_seq = seq;
    job_reconcile();
    spdlog::info("assignment applied: owns {} connectors, {} tasks", owned.connectors.size(), owned.tasks.size());
    asio::post(io, [w = weak_from_this(), seq, had_revocations, became_leader] {
      auto s = w.lock();
      if (!s) return;
      if (seq == s->io_apply_seq) {
        std::lock_guard lk(s->mu);
        s->pub.applied = true;
        if (!s->history.empty()) {
          auto& rec = s->history.back();
          rec.applied_ms = wall_ms();
          s->cfg.metrics->rebalance_completed(static_cast<double>(rec.applied_ms - rec.assigned_ms));
        }
      }
      if (became_leader && s->io_is_leader) {
        for (const auto& c : s->config_store->snapshot().connectors()) s->io_leader_reconfigure(c);
      }
      for (const auto& c : std::exchange(s->io_reconfigure_unsent, {})) s->io_task_reconfiguration(c);
      s->request_reconcile();  // the leader's status tombstones (reference 4.4 onAssigned)
      // The follow-up round that places what was revoked (4.4 step 5).
      if (had_revocations) s->io_request_rejoin("revocations completed");
    });
  }

  void on_revoke_all(std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks) {
    io_assignment.reset();
    cfg.metrics->set_assigned(0, 0);
    {
      std::lock_guard lk(mu);
      coord_lost = true;
      pub.assigned_connectors.clear();
      pub.assigned_tasks.clear();
      pub.applied = false;
      pub.in_group = false;
    }
    // Out of the group: everything stops (or is cut off from Kafka) before
    // the next JoinGroup goes out, so no task runs twice.
    io_stop_begin();
    asio::post(apply_strand, [w = weak_from_this(), connectors, tasks] {
      if (auto s = w.lock()) {
        spdlog::warn("coordinator lost: stopping connectors {} and tasks {}",
                     names_to_string(connectors), ids_to_string(tasks));
        s->job_stop_everything();
        s->post_stop_end();
      }
    });
  }

  /// Drain hand-over, before the JoinGroup that reports nothing owned: stops
  /// every connector here, and marks each task of `tasks` that runs here
  /// with its state and kHandOverTrace in the status topic (flushed), so that
  /// its next owner waits for our stop. Apply strand only.
  void job_hand_over(const std::vector<ConnectorTaskId>& tasks) {
    auto names = worker->connector_names();
    (void)worker->stop_connectors(std::vector<std::string>(names.begin(), names.end()));
    for (const auto& c : names) forget_connector(c);
    const auto running = worker->task_ids();
    int32_t gen;
    {
      std::lock_guard lk(mu);
      gen = pub.generation;
    }
    std::vector<std::pair<ConnectorTaskId, StatusValue>> marks;
    for (const auto& t : tasks) {
      if (!running.count(t)) continue;
      auto st = status_store->get_task(t);
      const bool own = st && st->worker_id == cfg.worker_id;
      if (own && st->state == StatusState::Failed) continue;
      const StatusState state = own && st->state == StatusState::Paused ? StatusState::Paused : StatusState::Running;
      marks.emplace_back(t, status_of(state, own ? st->generation : gen, std::string(storage::kHandOverTrace)));
    }
    write_hand_over_marks(marks);
    spdlog::info("drain: stopped {} connectors; {} tasks run on until their new owners take them", names.size(),
                 marks.size());
  }

  /// Writes hand-over marks (kHandOverTrace statuses) and waits until they
  /// are acknowledged (at most 5 s), so that they precede the old owner's
  /// stop in the status topic. Blocking: pool or apply strand only.
  void write_hand_over_marks(const std::vector<std::pair<ConnectorTaskId, StatusValue>>& marks) {
    for (const auto& [t, v] : marks) status_store->put_task(t, v);
    if (auto fl = status_store->flush(std::min(cfg.worker_sync_timeout_ms, 5000)); !fl)
      spdlog::warn("hand-over marks not flushed: {}", fl.error().to_string());
  }

  /// Whether `t`, assigned here, must not start yet because its old owner
  /// (draining, or revoked in this round) still runs it: its status is that
  /// owner's kHandOverTrace mark. Gives up waiting after the old owner's
  /// graceful stop timeout plus session.timeout.ms and two status polls (a
  /// task past its graceful timeout is cut off from Kafka, a frozen worker
  /// cuts off everything once it notices). Apply strand only.
  bool hand_over_pending(const ConnectorTaskId& t) {
    auto st = status_store->get_task(t);
    const bool held = st && st->worker_id != cfg.worker_id && st->trace == storage::kHandOverTrace &&
                      (st->state == StatusState::Running || st->state == StatusState::Paused);
    if (!held) {
      strand_hand_over_since.erase(t);
      return false;
    }
    const int64_t now = mono_ms();
    auto [it, first] = strand_hand_over_since.try_emplace(t, now);
    if (first) spdlog::info("task {}: waiting for {} to hand it over (its stop)", t.to_string(), st->worker_id);
    const int64_t bound =
        cfg.task_shutdown_graceful_timeout_ms + cfg.session_timeout_ms + 2 * cfg.status_poll_interval_ms;
    if (now - it->second < bound) return true;
    spdlog::warn("task {}: {} still reports it {} after {} ms of hand-over; starting it here", t.to_string(),
                 st->worker_id, storage::status_state_name(st->state), now - it->second);
    strand_hand_over_since.erase(it);
    return false;
  }

  /// Re-runs the reconciler shortly, while a hand-over is pending. Any thread.
  void retry_reconcile_soon() {
    asio::post(io, [w = weak_from_this()] {
      auto s = w.lock();
      if (!s || s->stopping) return;
      s->hand_over_retry_timer.expires_after(std::chrono::milliseconds(100));
      s->hand_over_retry_timer.async_wait([w](const boost::system::error_code& ec) {
        if (auto s2 = w.lock(); s2 && !ec) s2->request_reconcile();
      });
    });
  }

  /// Stops every connector and task here (tasks past the graceful timeout
  /// are cut off from Kafka by the runtime), forgets them and flushes the
  /// status store. Apply strand only.
  void job_stop_everything() {
    worker->stop_all();
    forget_all();
    (void)status_store->flush(cfg.worker_sync_timeout_ms);
  }

  // ------------------------------------------------------------------ shutdown
  void wait_strand_idle() {
    std::promise<void> p;
    auto f = p.get_future();
    asio::post(apply_strand, [&p] { p.set_value(); });
    f.wait();
  }

  void shutdown(bool leave) {
    if (!started || stopping.exchange(true)) return;
    admitting = false;
    {
      std::lock_guard lk(watchdog_mu);
      watchdog_cv.notify_all();
    }
    if (watchdog.joinable()) watchdog.join();
    spdlog::info("herder stopping ({})", leave ? "clean" : "crash");
    asio::post(io, [w = weak_from_this()] {
      if (auto s = w.lock()) {
        s->scheduled_timer.cancel();
        s->config_poll_timer.cancel();
        s->status_poll_timer.cancel();
        s->retry_timer.cancel();
        s->key_timer.cancel();
        s->claim_timer.cancel();
      }
    });
    if (!leave) coord->stop();
    wait_strand_idle();
    const size_t stopping_connectors = worker->connector_names().size();
    const size_t stopping_tasks = worker->task_ids().size();
    const auto stop_began = std::chrono::steady_clock::now();
    worker->stop_all();  // graceful timeout per task; offsets committed on stop
    // Operators (and tests/integration/lifecycle) read this line; a failed
    // final commit or a task past its graceful timeout logs its own line.
    spdlog::info("stopped {} connectors and {} tasks in {} ms; final offsets committed",
                 stopping_connectors, stopping_tasks,
                 std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stop_began)
                     .count());
    if (auto fl = status_store->flush(cfg.worker_sync_timeout_ms); !fl)
      spdlog::warn("status flush on stop: {}", fl.error().to_string());
    if (leave && !cfg.leave_group_on_shutdown && !draining_flag.load()) {
      // Static membership: the group keeps our identity and assignment for
      // session.timeout.ms, so a restart causes no rebalance.
      spdlog::info("static member '{}': not sending LeaveGroup; the group waits up to session.timeout.ms ({} ms) "
                   "for this worker to return before moving its work",
                   cfg.group_instance_id.value_or(""), cfg.session_timeout_ms);
      leave = false;
    }
    if (leave) {
      auto p = std::make_shared<std::promise<void>>();
      auto f = p->get_future();
      coord->leave("the worker is shutting down", [p] { p->set_value(); });
      if (f.wait_for(std::chrono::milliseconds(cfg.request_timeout_ms + 1000)) != std::future_status::ready)
        spdlog::warn("LeaveGroup did not complete in time");
    }
    coord->stop();
    pool_work.reset();
    generation_work.reset();  // a waiting generation returns at once on `stopping`
    for (auto& t : pool_threads)
      if (t.joinable()) t.join();
    for (auto& t : generation_threads)
      if (t.joinable()) t.join();
    work.reset();
    io.stop();
    if (io_thread.joinable()) io_thread.join();
    {
      std::lock_guard lk(mu);
      pub.in_group = false;
      pub.applied = false;
    }
    spdlog::info("herder stopped");
  }

  // ------------------------------------------------------------------ REST helpers
  std::optional<rest::RestError> not_ready() const {
    if (!started) return rest::RestError::unavailable("Worker is starting");
    if (stopping) return rest::RestError::unavailable("Worker is shutting down");
    return std::nullopt;
  }

  rest::ConnectorType type_of(const ConfigMap& conf) const {
    auto cls = conf.find("connector.class");
    if (cls == conf.end()) return rest::ConnectorType::Unknown;
    auto d = registry->find(cls->second);
    if (!d) return rest::ConnectorType::Unknown;
    return d->type == connectors::ConnectorType::Source ? rest::ConnectorType::Source : rest::ConnectorType::Sink;
  }

  rest::ConnectorInfo info_of(const ClusterConfigState& snap, const std::string& name) const {
    rest::ConnectorInfo info;
    info.name = name;
    info.config = snap.connector_configs.at(name);
    for (const auto& t : snap.tasks(name)) info.tasks.push_back(rest::TaskId{t.connector, t.task});
    info.type = type_of(info.config);
    return info;
  }

  /// GET /connectors/{c}/status from the status cache; nullopt when the
  /// connector has no status record.
  std::optional<rest::ConnectorStateInfo> status_info(const std::string& name) const {
    auto cs = status_store->get_connector(name);
    if (!cs) return std::nullopt;
    rest::ConnectorStateInfo info;
    info.name = name;
    info.connector = rest::ConnectorStatus{to_rest(cs->state), cs->worker_id, cs->trace.value_or("")};
    for (const auto& [id, ts] : status_store->get_tasks(name))
      info.tasks.push_back(rest::TaskStatus{id, to_rest(ts.state), ts.worker_id, ts.trace.value_or("")});
    auto snap = config_store->snapshot();
    if (snap.contains(name)) info.type = type_of(snap.connector_configs.at(name));
    return info;
  }

  // Preconditions of the offsets API, in Connect's order: 404 unknown, then
  // (writes only) 400 unless STOPPED.
  std::optional<rest::RestError> offsets_precondition(const ClusterConfigState& snap, const std::string& name,
                                                      bool modify) const {
    if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
    if (modify && snap.target_state(name) != storage::TargetState::Stopped)
      return rest::RestError::connector_not_stopped(name);
    return std::nullopt;
  }

  // ---- sink connector offsets (KIP-875): the connector's consumer group.
  // Every call below blocks on the broker: pool threads only.

  // The sink's config with ${provider:...} placeholders resolved, as its
  // tasks see it (a group.id override may come from a provider).
  ConfigMap resolved_config(const ConfigMap& raw) const {
    if (!cfg.config_transformer) return raw;
    auto r = cfg.config_transformer->transform(raw);
    return r ? r->config : raw;
  }

  // The admin client's properties: the worker's client settings and
  // admin.*, then the connector's admin.override.* (KIP-458) when the
  // policy allows them all.
  storage::ClientProps sink_admin_props(const std::string& name, const ConfigMap& conf) const {
    storage::ClientProps p = cfg.client_props;
    p["bootstrap.servers"] = cfg.bootstrap_servers;
    for (const auto& [k, v] : cfg.admin_overrides) p[k] = v;
    if (runtime::override_violations(cfg.client_override_policy, conf).empty())
      for (auto& [k, v] : runtime::connector_client_overrides(conf, runtime::kAdminOverridePrefix)) p[k] = v;
    p.emplace("client.id", "connector-worker-adminclient-" + name);
    return p;
  }

  // Where the sink's offsets live: its group, the admin client and topics.
  SinkGroup sink_group(const std::string& name, const ConfigMap& raw) const {
    const auto conf = resolved_config(raw);
    SinkGroup sink;
    sink.connector = name;
    sink.group = runtime::sink_consumer_group_id(name, conf, cfg.consumer_overrides);
    sink.admin_props = sink_admin_props(name, conf);
    if (auto it = conf.find("topics"); it != conf.end())
      for (auto& t : split_comma_list(it->second)) sink.topics.push_back(t);
    sink.timeout_ms = cfg.worker_sync_timeout_ms * 3;
    return sink;
  }

  // GET for a sink: the committed offsets of its consumer group.
  rest::Reply<std::vector<rest::ConnectorOffset>> sink_offsets(const std::string& name, const ConfigMap& raw) const {
    return read_sink_offsets(sink_group(name, raw));
  }

  // PATCH (offsets set) or DELETE (nullopt) for a STOPPED sink.
  rest::Reply<std::string> modify_sink_offsets(const std::string& name, const ConfigMap& raw,
                                               const std::optional<std::vector<rest::ConnectorOffset>>& offsets) const {
    if (!offsets) return reset_sink_offsets(sink_group(name, raw));
    return alter_sink_offsets(sink_group(name, raw), *offsets);
  }

  // ---- source connector offsets: the worker's topic, and the connector's
  // own offsets.storage.topic ahead of it when its tasks use one.

  // The stores the connector's tasks read, in their order. The connector's
  // own topic is opened into `own` for this request only (created if
  // missing, with the worker's offsets-topic settings, as the task does).
  // Errors: 500 when that topic cannot be opened. Blocking: pool only.
  rest::Reply<SourceOffsetStores> source_offset_stores(const std::string& name, const ConfigMap& raw,
                                                       std::unique_ptr<storage::OffsetBackingStore>& own) const {
    const auto topic = runtime::connector_offsets_topic(resolved_config(raw), cfg.exactly_once_source,
                                                        offset_store->topic());
    if (!topic) return SourceOffsetStores{offset_store.get(), nullptr};
    storage::OffsetBackingStore::Options oo;
    oo.client = cfg.client_props;
    oo.client["bootstrap.servers"] = cfg.bootstrap_servers;
    oo.topic = *topic;
    oo.partitions = cfg.offset_partitions;
    oo.replication_factor = cfg.offset_replication_factor;
    oo.client_id = "connector-offsets-" + name;
    oo.timeout_ms = cfg.worker_sync_timeout_ms * 3;
    auto store = storage::OffsetBackingStore::open(oo);
    if (!store)
      return rest::RestError::internal("Failed to open the offsets topic " + *topic + " of connector " + name + ": " +
                                       store.error().to_string());
    own = std::move(store).value();
    return SourceOffsetStores{own.get(), offset_store.get()};
  }

  // Runs `fn` on the io thread after the leader checks of a write
  // (reference 4.5, 6.3): 503 while stopping, not_leader(url) on followers
  // or before the first assignment, 409 stale_config while a config change
  // waits for a rebalance. `fn` then runs on the pool.
  template <typename T>
  void leader_write(rest::Callback<T> cb, std::function<rest::Reply<T>()> fn) {
    if (auto e = not_ready()) return cb(*e);
    asio::post(io, [w = weak_from_this(), cb = std::move(cb), fn = std::move(fn)]() mutable {
      auto s = w.lock();
      if (!s) return cb(rest::RestError::unavailable("Worker is shutting down"));
      if (!s->admitting) return cb(rest::RestError::unavailable("Worker is shutting down"));
      if (!s->io_assignment || !s->io_is_leader) return cb(rest::RestError::not_leader(s->io_leader_url));
      if (s->rebalance_pending) return cb(rest::RestError::stale_config());
      asio::post(s->pool, [cb = std::move(cb), fn = std::move(fn)]() mutable { cb(fn()); });
    });
  }
};

// ----------------------------------------------------------------------------
// DistributedHerder
// ----------------------------------------------------------------------------

DistributedHerder::DistributedHerder(HerderConfig config, const connectors::PluginRegistry* registry)
    : config_(config), impl_(std::make_shared<Impl>(std::move(config), registry)) {
  config_.metrics = impl_->cfg.metrics;  // the one the herder created when none was given
}

DistributedHerder::~DistributedHerder() { stop(); }

Status DistributedHerder::start() {
  if (impl_->started) return Error{"", "herder already started"};
  return impl_->start();
}

void DistributedHerder::stop() { impl_->shutdown(true); }
void DistributedHerder::stop_admitting_writes() { impl_->admitting = false; }

size_t DistributedHerder::stuck_plugin_threads() const {
  return (impl_->worker ? impl_->worker->stuck_threads() : 0) +
         static_cast<size_t>(std::max(0, impl_->generations_running->load())) +
         impl_->abandoned_calls->count(Impl::kValidateKey);
}

void DistributedHerder::crash() { impl_->shutdown(false); }

void DistributedHerder::set_task_observer(runtime::TaskObserver* observer) {
  impl_->observer = observer;
  if (impl_->worker) impl_->worker->set_observer(observer);
}

AssignmentState DistributedHerder::assignment_state() const {
  AssignmentState s;
  {
    std::lock_guard lk(impl_->mu);
    s = impl_->pub;
  }
  s.worker_id = config_.worker_id;
  if (impl_->worker && impl_->started && !impl_->stopping) {
    auto c = impl_->worker->connector_names();
    auto t = impl_->worker->task_ids();
    s.running_connectors.assign(c.begin(), c.end());
    s.running_tasks.assign(t.begin(), t.end());
  }
  return s;
}

std::vector<RebalanceRecord> DistributedHerder::rebalance_history() const {
  std::lock_guard lk(impl_->mu);
  return {impl_->history.begin(), impl_->history.end()};
}

// ------------------------------------------------------------------ HerderApi: reads

void DistributedHerder::list_connectors(rest::Callback<std::vector<std::string>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  cb(impl_->config_store->snapshot().connectors());
}

void DistributedHerder::connector_info(const std::string& name, rest::Callback<rest::ConnectorInfo> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  cb(impl_->info_of(snap, name));
}

void DistributedHerder::connector_config(const std::string& name, rest::Callback<rest::ConnectorConfig> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  cb(snap.connector_configs.at(name));
}

void DistributedHerder::task_configs(const std::string& name, rest::Callback<std::vector<rest::TaskInfo>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  std::vector<rest::TaskInfo> out;
  for (const auto& t : snap.tasks(name)) {
    rest::TaskInfo ti;
    ti.id = rest::TaskId{t.connector, t.task};
    ti.config = snap.task_config(t).value_or(ConfigMap{});
    out.push_back(std::move(ti));
  }
  cb(std::move(out));
}

void DistributedHerder::connector_status(const std::string& name, rest::Callback<rest::ConnectorStateInfo> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto info = impl_->status_info(name);
  if (!info) return cb(rest::RestError::not_found("No status found for connector " + name));
  cb(std::move(*info));
}

void DistributedHerder::task_status(const rest::TaskId& id, rest::Callback<rest::TaskStatus> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto ts = impl_->status_store->get_task(ConnectorTaskId{id.connector, id.task});
  if (!ts) return cb(rest::RestError::not_found("No status found for task " + id.connector + "-" + std::to_string(id.task)));
  cb(rest::TaskStatus{id.task, to_rest(ts->state), ts->worker_id, ts->trace.value_or("")});
}

void DistributedHerder::connector_plugins(bool connectors_only, rest::Callback<std::vector<rest::PluginInfo>> cb) {
  std::vector<rest::PluginInfo> out;
  for (const auto& d : impl_->registry->list())
    out.push_back(rest::PluginInfo{d.class_name,
                                   d.type == connectors::ConnectorType::Source ? rest::PluginType::Source
                                                                               : rest::PluginType::Sink,
                                   d.version});
  if (!connectors_only) {
    // Connect lists every converter class under each interface it
    // implements: ours are all HeaderConverters too; SimpleHeaderConverter
    // is only one.
    const std::string version = connectors::kBuiltinPluginVersion;
    for (auto cls : data::converter_class_names()) {
      if (cls != data::kSimpleHeaderConverterClass)
        out.push_back(rest::PluginInfo{std::string(cls), rest::PluginType::Converter, version});
      out.push_back(rest::PluginInfo{std::string(cls), rest::PluginType::HeaderConverter, version});
    }
    for (auto& [cls, predicate] : connectors::transformation_plugin_classes())
      out.push_back(rest::PluginInfo{cls, predicate ? rest::PluginType::Predicate : rest::PluginType::Transformation,
                                     version});
  }
  cb(std::move(out));
}

void DistributedHerder::connector_plugin_config(const std::string& plugin,
                                                rest::Callback<std::vector<rest::ConfigKeyInfo>> cb) {
  cb(plugin_config(*impl_->registry, plugin));
}

void DistributedHerder::validate_connector_config(rest::ConnectorConfig config, rest::Callback<rest::ConfigInfos> cb) {
  impl_->validate_bounded(std::move(config), [cb = std::move(cb)](rest::Reply<connectors::ConfigValidation> v) {
    if (!v) return cb(v.error());
    cb(to_rest(v.value()));
  });
}

void DistributedHerder::connector_active_topics(const std::string& name,
                                                rest::Callback<std::vector<std::string>> cb) {
  if (!config_.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  cb(impl_->status_store->get_topics(name));
}

void DistributedHerder::reset_connector_active_topics(const std::string& name, rest::Callback<rest::Done> cb) {
  if (!config_.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (!config_.topic_tracking_allow_reset) return cb(rest::RestError::topic_tracking_reset_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  impl_->status_store->delete_topics(name);
  cb(rest::Done{});
}

void DistributedHerder::connector_offsets(const std::string& name,
                                          rest::Callback<std::vector<rest::ConnectorOffset>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  // On the pool: the read to the end of the offsets topic blocks.
  asio::post(impl_->pool, [impl, name, cb = std::move(cb)] {
    auto snap = impl->config_store->snapshot();
    if (auto e = impl->offsets_precondition(snap, name, false)) return cb(*e);
    const auto& conf = snap.connector_configs.at(name);
    if (impl->type_of(conf) == rest::ConnectorType::Sink) return cb(impl->sink_offsets(name, conf));
    std::unique_ptr<storage::OffsetBackingStore> own;
    auto stores = impl->source_offset_stores(name, conf, own);
    if (!stores) return cb(stores.error());
    cb(read_source_offsets(name, stores.value(), impl->cfg.worker_sync_timeout_ms * 3));
  });
}

void DistributedHerder::health(rest::Callback<rest::Health> cb) {
  if (!impl_->started) return cb(rest::Health{rest::HealthStatus::Starting, "Worker is still starting up."});
  if (impl_->stopping) return cb(rest::Health{rest::HealthStatus::Unhealthy, "Worker is shutting down."});
  AssignmentState s;
  bool fatal = false;
  bool lost = false;
  std::string msg;
  std::string config_error;
  {
    std::lock_guard lk(impl_->mu);
    s = impl_->pub;
    fatal = impl_->coord_fatal;
    msg = impl_->coord_fatal_message;
    lost = impl_->coord_lost;
    config_error = impl_->config_read_error;
  }
  if (fatal) return cb(rest::Health{rest::HealthStatus::Unhealthy, "Group membership failed: " + msg});
  if (s.generation < 0)
    return cb(rest::Health{rest::HealthStatus::Starting, "Worker has not joined the group yet."});
  if (lost)
    return cb(rest::Health{rest::HealthStatus::Unavailable,
                           "Worker is out of the group (group coordinator lost); rejoining."});
  if (!s.in_group || !s.applied)
    return cb(rest::Health{rest::HealthStatus::Rebalancing,
                           "Worker is rebalancing: generation " + std::to_string(s.generation) +
                               (s.in_group ? " assignment is being applied." : " is ending; rejoining the group.")});
  if (!config_error.empty())
    return cb(rest::Health{rest::HealthStatus::Unavailable, "Config topic unreadable: " + config_error});
  cb(rest::Health{rest::HealthStatus::Healthy, "Worker has completed startup and is ready to handle requests."});
}

void DistributedHerder::worker_info(rest::Callback<rest::WorkerInfo> cb) {
  cb(rest::WorkerInfo{config_.worker_id, config_.advertised_url, impl_->kafka_cluster_id});
}

// ------------------------------------------------------------------ HerderApi: writes

void DistributedHerder::put_connector_config(rest::PutConnectorRequest req, rest::Callback<rest::PutConnectorResult> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  // Validated first, as Connect does (the plugin's validate() under its
  // deadline, off every herder thread), then written by the leader.
  auto config = req.config;
  impl_->validate_bounded(std::move(config), [w = std::weak_ptr<Impl>(impl_), req = std::move(req), cb = std::move(cb)](
                                                 rest::Reply<connectors::ConfigValidation> v) mutable {
    if (!v) return cb(v.error());
    if (v.value().error_count != 0) return cb(rest::RestError::bad_request(v.value().invalid_message()));
    auto impl = w.lock();
    if (!impl) return cb(rest::RestError::unavailable("Worker is shutting down"));
    impl->leader_write<rest::PutConnectorResult>(
        std::move(cb), [w, req = std::move(req)]() -> rest::Reply<rest::PutConnectorResult> {
          auto impl = w.lock();
          if (!impl) return rest::RestError::unavailable("Worker is shutting down");
          auto before = impl->config_store->snapshot();
          const bool exists = before.contains(req.name);
          if (exists && !req.allow_replace) return rest::RestError::already_exists(req.name);
          std::optional<storage::TargetState> initial;
          if (req.initial_state) initial = to_storage(*req.initial_state);
          auto st = impl->leader_config_write([&] {
            return impl->config_store->put_connector_config(req.name, req.config, exists ? std::nullopt : initial,
                                                            impl->cfg.worker_sync_timeout_ms * 3);
          });
          if (!st) return config_write_error("connector config", st.error());
          auto after = impl->config_store->snapshot();
          if (!after.contains(req.name))
            return rest::RestError::write_timeout("connector config", "not visible after the write");
          spdlog::info("leader wrote connector config {} ({})", req.name, exists ? "updated" : "created");
          return rest::PutConnectorResult{!exists, impl->info_of(after, req.name)};
        });
  });
}

void DistributedHerder::delete_connector(const std::string& name, rest::Callback<rest::Done> cb) {
  auto impl = impl_;
  impl_->leader_write<rest::Done>(std::move(cb), [impl, name]() -> rest::Reply<rest::Done> {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
    auto st = impl->leader_config_write(
        [&] { return impl->config_store->remove_connector(name, impl->cfg.worker_sync_timeout_ms * 3); });
    if (!st) return config_write_error("connector deletion", st.error());
    // Leader writes tombstone statuses for the deleted connector and its tasks (4.4).
    int32_t gen = -1;
    {
      std::lock_guard lk(impl->mu);
      gen = impl->pub.generation;
    }
    impl->status_store->put_connector(name, StatusValue{StatusState::Destroyed, std::nullopt, impl->cfg.worker_id, gen});
    // Active topics of a deleted connector are reset (KIP-558, reference 4.4).
    if (impl->cfg.topic_tracking_enable) impl->status_store->delete_topics(name);
    for (const auto& [id, _] : impl->status_store->get_tasks(name))
      impl->status_store->put_task(ConnectorTaskId{name, id},
                                   StatusValue{StatusState::Destroyed, std::nullopt, impl->cfg.worker_id, gen});
    return rest::Done{};
  });
}

void DistributedHerder::modify_connector_offsets(const std::string& name,
                                                 std::optional<std::vector<rest::ConnectorOffset>> offsets,
                                                 rest::Callback<std::string> cb) {
  auto impl = impl_;
  impl_->leader_write<std::string>(
      std::move(cb), [impl, name, offsets = std::move(offsets)]() -> rest::Reply<std::string> {
        auto snap = impl->config_store->snapshot();
        if (auto e = impl->offsets_precondition(snap, name, true)) return *e;
        const auto& conf = snap.connector_configs.at(name);
        if (impl->type_of(conf) == rest::ConnectorType::Sink) return impl->modify_sink_offsets(name, conf, offsets);
        std::unique_ptr<storage::OffsetBackingStore> own;
        auto stores = impl->source_offset_stores(name, conf, own);
        if (!stores) return stores.error();
        return modify_source_offsets(name, stores.value(), offsets, impl->cfg.worker_sync_timeout_ms * 3);
      });
}

void DistributedHerder::set_target_state(const std::string& name, rest::TargetState state, rest::Callback<rest::Done> cb) {
  auto impl = impl_;
  if (state == rest::TargetState::Stopped) {
    // Leader only: empty task configs first, then the STOPPED target state (6.1).
    impl_->leader_write<rest::Done>(std::move(cb), [impl, name]() -> rest::Reply<rest::Done> {
      auto snap = impl->config_store->snapshot();
      if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
      auto st = impl->leader_config_write(
          [&] { return impl->config_store->put_task_configs(name, {}, impl->cfg.worker_sync_timeout_ms * 3); });
      if (st) st = impl->config_store->put_target_state(name, storage::TargetState::Stopped, impl->cfg.worker_sync_timeout_ms * 3);
      if (!st) return config_write_error("STOPPED target state", st.error());
      return rest::Done{};
    });
    return;
  }
  // Pause / resume: written by any worker (4.5).
  if (auto e = impl_->not_ready()) return cb(*e);
  asio::post(impl_->pool, [impl, name, state, cb = std::move(cb)] {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
    // Every worker applies it when it reads the record; the leader also
    // regenerates task configs of a resumed STOPPED connector.
    auto st = impl->config_store->put_target_state(name, to_storage(state), impl->cfg.worker_sync_timeout_ms * 3);
    if (!st) return cb(rest::RestError::write_timeout("target state", st.error().to_string()));
    cb(rest::Done{});
  });
}

void DistributedHerder::restart_connector(const std::string& name, rest::RestartRequest req,
                                          rest::Callback<std::optional<rest::ConnectorStateInfo>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  if (!req.plain()) {
    // KIP-745: the leader records the request; every worker restarts the
    // selected instances it owns when it reads the record. The answer shows
    // the plan: the selected instances as RESTARTING.
    impl_->leader_write<std::optional<rest::ConnectorStateInfo>>(
        std::move(cb), [impl, name, req]() -> rest::Reply<std::optional<rest::ConnectorStateInfo>> {
          if (!impl->config_store->snapshot().contains(name)) return rest::RestError::connector_not_found(name);
          auto plan = impl->status_info(name);
          if (!plan) return rest::RestError::not_found("Status for connector " + name + " not found");
          auto st = impl->leader_config_write([&] {
            return impl->config_store->put_restart_request(
                name, storage::RestartFlags{req.include_tasks, req.only_failed}, impl->cfg.worker_sync_timeout_ms * 3);
          });
          if (!st) return config_write_error("restart request", st.error());
          auto selected = [&](rest::ConnectState s) { return !req.only_failed || s == rest::ConnectState::Failed; };
          if (selected(plan->connector.state)) plan->connector.state = rest::ConnectState::Restarting;
          if (req.include_tasks)
            for (auto& t : plan->tasks)
              if (selected(t.state)) t.state = rest::ConnectState::Restarting;
          return std::optional<rest::ConnectorStateInfo>(std::move(*plan));
        });
    return;
  }
  asio::post(impl_->io, [impl, name, cb = std::move(cb)]() mutable {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
    if (!impl->io_owns_connector(name)) {
      auto st = impl->status_store->get_connector(name);
      return cb(rest::RestError::not_owner(st ? url_of_worker_id(st->worker_id) : ""));
    }
    Action a{Action::Kind::RestartConnector, name};
    a.target = snap.target_state(name);
    a.plain_restart = true;  // execute() then asks for new task configs, as Connect's restart
    if (a.target == storage::TargetState::Stopped) return cb(std::optional<rest::ConnectorStateInfo>{});
    impl->restart_local(a);
    cb(std::optional<rest::ConnectorStateInfo>{});
  });
}

void DistributedHerder::drain(int timeout_ms, DrainDone done) {
  asio::post(impl_->io, [impl = impl_, timeout_ms, done = std::move(done)]() mutable {
    impl->io_drain_start(timeout_ms, std::move(done));
  });
}

void DistributedHerder::accept_drain_request(const std::string& member_id, SignatureHeaders signature,
                                             std::string body, std::function<void(int status, std::string)> done) {
  asio::post(impl_->io, [impl = impl_, member_id, signature = std::move(signature), body = std::move(body),
                         done = std::move(done)] {
    if (!impl->io_validation_enabled() && (signature.signature || signature.algorithm))
      return done(403, "Internal request signatures are not in use: connect.protocol is not sessioned");
    if (auto v = impl->io_verify(signature, body); !v.ok()) return done(v.status, v.message);
    auto [status, why] = impl->io_accept_drain(member_id);
    done(status, why);
  });
}

void DistributedHerder::accept_task_reconfiguration(const std::string& connector, SignatureHeaders signature,
                                                    std::string body,
                                                    std::function<void(int status, std::string)> done) {
  asio::post(impl_->io, [impl = impl_, connector, signature = std::move(signature), body = std::move(body),
                         done = std::move(done)] {
    // Connect checks the signature before anything else, leadership included.
    if (auto v = impl->io_verify(signature, body); !v.ok()) return done(v.status, v.message);
    auto [status, why] = impl->io_accept_task_reconfiguration(connector);
    done(status, why);
  });
}

void DistributedHerder::accept_fence_request(const std::string& connector, SignatureHeaders signature,
                                             std::string body, std::function<void(int status, std::string)> done) {
  asio::post(impl_->io, [impl = impl_, connector, signature = std::move(signature), body = std::move(body),
                         done = std::move(done)]() mutable {
    // As for the tasks endpoint: the signature first, then leadership.
    if (auto v = impl->io_verify(signature, body); !v.ok()) return done(v.status, v.message);
    impl->io_fence(connector, std::move(done));
  });
}

void DistributedHerder::check_internal_request(SignatureHeaders signature, std::string body,
                                               std::function<void(int status, std::string)> done) {
  asio::post(impl_->io, [impl = impl_, signature = std::move(signature), body = std::move(body),
                         done = std::move(done)] {
    auto v = impl->io_verify(signature, body);
    done(v.status, v.message);
  });
}

SessionKeyInfo DistributedHerder::session_key_info() const {
  std::lock_guard lk(impl_->key_mu);
  SessionKeyInfo info = impl_->key_info;
  info.current = info.present && (info.expires_at_ms == 0 || wall_ms() < info.expires_at_ms);
  return info;
}

InternalRequestStats DistributedHerder::internal_request_stats() const {
  std::lock_guard lk(impl_->key_mu);
  return impl_->key_stats;
}

ConfigWriterInfo DistributedHerder::config_writer_info() const {
  ConfigWriterInfo out;
  if (!impl_->config_store) return out;
  const auto st = impl_->config_store->writer_stats();
  out.transactional = st.transactional;
  out.write_privileges = st.write_privileges;
  out.claims = st.claims;
  out.transactions = st.transactions;
  out.failed_writes = st.failed_writes;
  out.fenced = impl_->fenced_from_config_topic.load();
  std::lock_guard lk(impl_->writer_mu);
  out.last_error = impl_->writer_last_error;
  return out;
}

bool DistributedHerder::draining() const { return impl_->draining_flag.load(); }

void DistributedHerder::restart_task(const rest::TaskId& id, rest::Callback<rest::Done> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  asio::post(impl_->io, [impl, id, cb = std::move(cb)]() mutable {
    ConnectorTaskId t{id.connector, id.task};
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(id.connector) || !snap.task_config(t))
      return cb(rest::RestError::not_found("Task " + t.to_string() + " not found"));
    const bool mine = impl->io_assignment &&
                      std::find(impl->io_assignment->tasks.begin(), impl->io_assignment->tasks.end(), t) !=
                          impl->io_assignment->tasks.end();
    if (!mine) {
      auto st = impl->status_store->get_task(t);
      return cb(rest::RestError::not_owner(st ? url_of_worker_id(st->worker_id) : ""));
    }
    Action a{Action::Kind::RestartTask, t.connector, t};
    a.target = snap.target_state(t.connector);
    impl->restart_local(a, [cb = std::move(cb)] { cb(rest::Done{}); });
  });
}

}  // namespace kc::herder
