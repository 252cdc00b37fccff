// The sink task loop (Connect's WorkerSinkTask): consume, convert, transform, put, commit after flush.
#include "worker/runtime/worker_internal.h"

#include "common/secrets.h"
#include "common/strings.h"
#include "worker/storage/broker_check.h"

namespace kc::runtime {

namespace {

/// Sink consumer state shared with librdkafka's rebalance callback. The
/// callback runs inside rd_kafka_consumer_poll / close: on the task thread,
/// or on the thread that cuts the task off (its consumer close). In the
/// latter case it only reads the atomics and touches no other member.
struct SinkState {
  connectors::SinkTask* task = nullptr;
  ConnectorTaskId id;
  connectors::TopicPartitionOffsets consumed;   ///< next offset per partition, written to the plugin
  connectors::TopicPartitionOffsets committed;  ///< what the group has
  std::optional<std::string> failure;  ///< a plugin's open()/close() failure, thrown by the task loop
  /// No more commits: set by the task thread before its own close.
  std::atomic<bool> cancelled{false};
  /// The runner's flag, set by the thread that cuts the task off.
  const std::atomic<bool>* abandoned = nullptr;
  /// The task's pause request (Worker::set_target_state): newly assigned
  /// partitions of a paused task are paused at once, so it fetches nothing.
  const std::atomic<bool>* paused = nullptr;
  std::mutex* kafka_mu = nullptr;      ///< the runner's kafka_mu
  int commit_timeout_ms = 5000;        ///< offset.flush.timeout.ms
  metrics::TaskMetrics* tm = nullptr;  ///< offset-commit counts; may be null
  /// The consumer's librdkafka errors, classified (issue 27 item 1): a
  /// fatal cause fails the task. Outlives the consumer (declared before it).
  std::unique_ptr<storage::ClientErrorObserver> errors;

  /// Calls the plugin's open()/close() with `parts` from inside the
  /// rebalance callback (a C callback: nothing may be thrown through it);
  /// the first failure is kept in `failure` for the task loop to throw.
  template <typename Fn>
  void call_plugin(const char* what, const rd_kafka_topic_partition_list_t* parts, Fn&& fn) {
    connectors::TopicPartitions tps;
    tps.reserve(static_cast<size_t>(parts->cnt));
    for (int i = 0; i < parts->cnt; ++i) tps.emplace_back(parts->elems[i].topic, parts->elems[i].partition);
    try {
      fn(tps);
    } catch (const std::exception& e) {
      if (!failure) failure = std::string("SinkTask ") + what + " failed: " + e.what();
    }
  }

  /// True once nothing may be committed any more.
  bool discarded() const { return cancelled.load() || (abandoned && abandoned->load()); }

  /// Flushes the plugin and commits `consumed` for `only` (all if null).
  /// `locked`: the caller already holds kafka_mu (the rebalance callback,
  /// inside a consumer call); otherwise it is taken just to issue the commit,
  /// and the reply is awaited without it, so a cut-off never waits for a
  /// slow broker. A commit is issued only if the task was not cut off.
  Status commit(rd_kafka_t* rk, const rd_kafka_topic_partition_list_t* only, bool locked) {
    connectors::TopicPartitionOffsets todo;
    for (const auto& [tp, off] : consumed) {
      bool in = !only;
      for (int i = 0; only && i < only->cnt; ++i)
        if (tp.first == only->elems[i].topic && tp.second == only->elems[i].partition) in = true;
      auto c = committed.find(tp);
      if (in && (c == committed.end() || c->second != off)) todo[tp] = off;
    }
    if (todo.empty() || discarded()) return ok_status();
    try {
      // SinkTask.preCommit (default: flush, then all of them); only the
      // partitions asked about are committed.
      auto chosen = task->pre_commit(todo);
      for (auto it = chosen.begin(); it != chosen.end();)
        it = todo.count(it->first) ? std::next(it) : chosen.erase(it);
      todo = std::move(chosen);
    } catch (const std::exception& e) {
      if (tm && !discarded()) tm->offset_commit(false);
      return Error{"flush", e.what()};
    }
    if (todo.empty() || discarded()) return ok_status();
    auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(todo.size()));
    for (const auto& [tp, off] : todo) rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = off;
    rd_kafka_queue_t* replies = rd_kafka_queue_new(rk);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    bool issued = false;
    {
      std::unique_lock<std::mutex> lk;
      if (!locked && kafka_mu) lk = std::unique_lock(*kafka_mu);
      if (!discarded()) {
        err = rd_kafka_commit_queue(rk, list, replies, nullptr, nullptr);
        issued = true;
      }
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (issued && !err) {
      err = RD_KAFKA_RESP_ERR__TIMED_OUT;
      const auto deadline = Clock::now() + std::chrono::milliseconds(commit_timeout_ms);
      while (rd_kafka_event_t* ev = rd_kafka_queue_poll(replies, remaining_ms(deadline))) {
        const bool done = rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT;
        if (done) err = rd_kafka_event_error(ev);
        rd_kafka_event_destroy(ev);
        if (done) break;
      }
    }
    rd_kafka_queue_destroy(replies);
    if (!issued) return ok_status();  // cut off during the plugin's flush()
    const bool failed = err && err != RD_KAFKA_RESP_ERR__NO_OFFSET;
    if (tm && !discarded()) tm->offset_commit(!failed);
    if (failed) return Error{"commit", rd_kafka_err2str(err)};
    for (const auto& [tp, off] : todo) committed[tp] = off;
    return ok_status();
  }
};

/// librdkafka's rebalance callback of a sink consumer (opaque: its
/// ClientErrorObserver, whose owner() is the SinkState; the error callback
/// is route_client_logs', which logs and records each error there):
/// assigns (pausing them for a paused task, resuming them otherwise) and
/// opens the partitions, or
/// commits, closes and gives up the revoked ones.
void sink_rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts, void* opaque) {
  auto* s = static_cast<SinkState*>(static_cast<storage::ClientErrorObserver*>(opaque)->owner());
  bool cooperative = std::string(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
    else rd_kafka_assign(rk, parts);
    // Eager (range) reassigns every partition on each group rebalance.
    // librdkafka keeps a partition's pause across unassign and reassign, so
    // one lost while the task was paused comes back paused: resume it when
    // the task no longer is (a resume mid-rebalance saw no assignment).
    if (s->paused && s->paused->load()) rd_kafka_pause_partitions(rk, parts);
    else rd_kafka_resume_partitions(rk, parts);
    if (!s->discarded()) s->call_plugin("open", parts, [&](const auto& tps) { s->task->open(tps); });
    return;
  }
  if (s->abandoned && s->abandoned->load()) {
    // Cut off (maybe called from the cutting thread's close while the task
    // thread is still in the plugin): give the partitions up, commit nothing
    // and leave the task thread's maps alone.
    if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
    else rd_kafka_assign(rk, nullptr);
    return;
  }
  // Revoked (or lost): commit what was written for those partitions first,
  // so their next owner starts after it.
  if (!rd_kafka_assignment_lost(rk)) {
    auto st = s->commit(rk, parts, /*locked=*/true);
    if (!st) spdlog::warn("{}: commit on revocation failed: {}", s->id.to_string(), st.error().to_string());
  }
  // SinkTask.close after their commit: on revocation, and for every
  // partition when the task's own close() revokes them at stop.
  s->call_plugin("close", parts, [&](const auto& tps) { s->task->close(tps); });
  for (int i = 0; i < parts->cnt; ++i) {
    std::pair<std::string, int32_t> tp{parts->elems[i].topic, parts->elems[i].partition};
    s->consumed.erase(tp);
    s->committed.erase(tp);
  }
  if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
  else rd_kafka_assign(rk, nullptr);
}

/// The sink loop: a consumer in group connect-<connector>, batches of up
/// to sink_max_batch records handed to put() (retried while it throws
/// RetriableError), the consumed offsets committed after the plugin's
/// flush every offset.flush.interval.ms, on revocation and on stop.
class SinkTaskLoop final : public TaskLoop {
 public:
  SinkTaskLoop(TaskEnv env, std::unique_ptr<connectors::SinkTask> task, TaskRunner& r)
      : TaskLoop(std::move(env), r, "sink task " + r.id.to_string()),
        ctx_(r.stop.get_token()),
        task_(std::move(task)),
        config_(*env_.connector_config) {
    reapply_pause_ = true;
    state_.task = task_.get();
    state_.id = id_;
    state_.abandoned = &r_.cancelled;
    state_.paused = &r_.paused;
    state_.kafka_mu = &r_.kafka_mu;
    state_.commit_timeout_ms = env_.options.offset_flush_timeout_ms;
    state_.tm = env_.tm.get();
  }

 private:
  /// The end of one run of records of a partition in a read.
  struct ReadEnd {
    std::string topic;
    int32_t partition;
    int64_t offset;  ///< the last consumed in this read
  };

  void start() override;
  /// Pauses or resumes every assigned partition.
  void target_state_changed(bool paused) override;
  bool step(bool paused) override;
  void release() override;

  /// The consumer's settings: the worker's `consumer.` ones, the
  /// framework's, then the connector's consumer.override.* (Connect's
  /// order). Throws when the override policy refuses one.
  storage::ClientProps consumer_props() const;
  /// Creates the consumer and registers it for cut_off(). Throws.
  void open_consumer();
  /// Subscribes to `topics` or `topics.regex`. Throws.
  void subscribe();
  /// Reads what is fetched (the first message waits up to 100 ms) into
  /// `msgs_`; returns how many.
  size_t read();
  /// Converts and transforms the `got` messages read into `batch_` and
  /// notes the consumed positions in `read_ends_`; destroys the messages.
  void convert(size_t got);
  /// Hands `batch_` to put(), again after a backoff while it throws
  /// RetriableError. false: stopped or cut off before it was taken.
  bool put_batch();

  SinkContext ctx_;  ///< before task_: outlives it
  std::unique_ptr<connectors::SinkTask> task_;
  const ConnectorConfig& config_;  ///< the connector's typed config (env_ owns it)
  SinkState state_;
  storage::RdKafkaPtr consumer_;
  rd_kafka_queue_t* consumer_queue_ = nullptr;  ///< the consumer's queue (batch reads); released before close
  bool registered_ = false;  ///< r.consumer was set: cut_off() may close it
  bool started_ = false;
  Clock::time_point last_commit_;
  ActiveTopics active_topics_;
  std::vector<rd_kafka_message_t*> msgs_;
  std::vector<connectors::SinkRecord> batch_;
  std::vector<ReadEnd> read_ends_;               ///< per run of one partition in the read
  const rd_kafka_topic_t* topic_rkt_ = nullptr;  ///< the topic handle `topic_` was read from
  std::string topic_;
};

storage::ClientProps SinkTaskLoop::consumer_props() const {
  // KIP-458: refused overrides are caught when the config is validated;
  // a config written before the policy changed fails here, as Connect.
  if (!config_.override_violations.empty())
    throw connectors::ConnectError("Client Config Overrides not allowed: " +
                                   config_.override_violations.front().message);
  storage::ClientProps overrides = env_.options.consumer_overrides;
  overrides["group.id"] = config_.sink_group_id;
  // Range, as Connect's sink consumers effectively use. Not
  // cooperative-sticky: librdkafka < 2.3 aborts when such a consumer is
  // closed before its first assignment (librdkafka #4312), which a task
  // stopped right after it started hits. `consumer.` may override it.
  overrides.emplace("partition.assignment.strategy", "range");
  overrides["enable.auto.commit"] = "false";
  overrides["enable.auto.offset.store"] = "false";
  overrides.emplace("auto.offset.reset", "earliest");
  overrides.emplace("client.id", "connector-consumer-" + id_.to_string());
  // librdkafka < 2.1 stops fetching a partition for fetch.error.backoff.ms
  // (500 ms) once the local queue holds queued.min.messages (100,000)
  // records or queued.max.messages.kbytes: a sink that drains the queue
  // faster starves for half a second each time (0.5-0.8 s gaps in
  // bench/dataplane). The queue stays bounded by the kbytes limit (64 MB);
  // 100 ms is the Java consumer's retry.backoff.ms. `consumer.` overrides.
  overrides.emplace("queued.min.messages", "1000000");
  overrides.emplace("fetch.error.backoff.ms", "100");
  // The connector's consumer.override.* last (Connect's order), except
  // that the framework keeps committing offsets itself; its
  // sasl.jaas.config translated for librdkafka.
  auto own = config_.consumer_overrides;
  own.erase("enable.auto.commit");
  own.erase("enable.auto.offset.store");
  return connector_client_props(overrides, own, kConsumerOverridePrefix);
}

void SinkTaskLoop::open_consumer() {
  const auto overrides = consumer_props();
  storage::ClientProps merged = env_.options.client;
  for (const auto& [k, v] : overrides) merged[k] = v;
  state_.errors = std::make_unique<storage::ClientErrorObserver>(merged, config_.sink_group_id);
  state_.errors->set_owner(&state_);
  auto c = storage::make_client(
      RD_KAFKA_CONSUMER, env_.options.client, overrides,
      [&](rd_kafka_conf_t* conf) { rd_kafka_conf_set_rebalance_cb(conf, &sink_rebalance_cb); }, std::nullopt,
      state_.errors.get());
  if (!c) throw connectors::ConnectError("could not create consumer: " + c.error().to_string());
  consumer_ = std::move(c).value();
  rd_kafka_poll_set_consumer(consumer_.get());
  consumer_queue_ = rd_kafka_queue_get_consumer(consumer_.get());
  claim_client([&] {
    r_.consumer = consumer_.get();
    registered_ = true;
  });
}

void SinkTaskLoop::subscribe() {
  const std::vector<std::string>& topics = config_.sink_topics;
  auto* sub = rd_kafka_topic_partition_list_new(static_cast<int>(topics.size()));
  for (const auto& t : topics) rd_kafka_topic_partition_list_add(sub, t.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  {
    std::lock_guard lk(r_.kafka_mu);
    if (!r_.cancelled.load()) err = rd_kafka_subscribe(consumer_.get(), sub);
  }
  rd_kafka_topic_partition_list_destroy(sub);
  if (err) throw connectors::ConnectError(std::string("subscribe failed: ") + rd_kafka_err2str(err));
}

void SinkTaskLoop::start() {
  open_consumer();
  task_->initialize(ctx_);
  task_->start(env_.task_config);
  started_ = true;
  started();
  subscribe();
  last_commit_ = Clock::now();
  msgs_.resize(static_cast<size_t>(std::max(1, env_.options.sink_max_batch)));
  batch_.reserve(msgs_.size());
}

void SinkTaskLoop::target_state_changed(bool paused) {
  std::lock_guard lk(r_.kafka_mu);
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (!r_.cancelled.load() && rd_kafka_assignment(consumer_.get(), &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR &&
      assigned) {
    if (paused) rd_kafka_pause_partitions(consumer_.get(), assigned);
    else rd_kafka_resume_partitions(consumer_.get(), assigned);
    rd_kafka_topic_partition_list_destroy(assigned);
  }
}

size_t SinkTaskLoop::read() {
  // One lock and two client calls per batch (a cut-off waits at most
  // for them): the first message waits up to 100 ms (and serves
  // rebalances); the rest of the batch is what is already fetched.
  std::lock_guard lk(r_.kafka_mu);
  if (r_.cancelled.load()) return 0;
  rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100);
  if (!m) return 0;
  msgs_[0] = m;
  size_t got = 1;
  if (msgs_.size() > 1) {
    const ssize_t more = rd_kafka_consume_batch_queue(consumer_queue_, 0, msgs_.data() + 1, msgs_.size() - 1);
    if (more > 0) got += static_cast<size_t>(more);
  }
  return got;
}

void SinkTaskLoop::convert(size_t got) {
  batch_.clear();
  read_ends_.clear();
  try {
    for (size_t i = 0; i < got; ++i) {
      rd_kafka_message_t* m = msgs_[i];
      if (m->err) {
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          spdlog::warn("{}: consumer: {}", id_.to_string(), rd_kafka_message_errstr(m));
          if (m->rkt) state_.errors->record_topic_error(rd_kafka_topic_name(m->rkt), m->err);
          else state_.errors->record(m->err, rd_kafka_message_errstr(m));
        }
        continue;
      }
      if (m->rkt != topic_rkt_) {
        topic_rkt_ = m->rkt;
        topic_ = rd_kafka_topic_name(m->rkt);
      }
      // Every consumed record counts as handled once put() returns,
      // including those skipped or dropped below; a transform may
      // rename the topic, so the consumed position is kept apart.
      if (read_ends_.empty() || read_ends_.back().partition != m->partition || read_ends_.back().topic != topic_)
        read_ends_.push_back(ReadEnd{topic_, m->partition, m->offset});
      else
        read_ends_.back().offset = m->offset;
      auto& rec = batch_.emplace_back();
      if (!env_.pipeline->from_consumer(m, topic_, rec)) batch_.pop_back();
    }
  } catch (...) {
    for (size_t i = 0; i < got; ++i) rd_kafka_message_destroy(msgs_[i]);
    throw;
  }
  for (size_t i = 0; i < got; ++i) rd_kafka_message_destroy(msgs_[i]);
}

bool SinkTaskLoop::put_batch() {
  if (batch_.empty()) return true;
  for (int64_t backoff_ms = 100;;) {
    try {
      watched_task_call(env_, r_, "put", [&] {
        task_->put(batch_);
        return true;
      });
      return true;
    } catch (const connectors::RetriableError& e) {
      // Connect hands the same records to put() again after a
      // backoff, for as long as the task runs.
      spdlog::warn("{}: put() failed with a retriable error, retrying in {} ms: {}", id_.to_string(), backoff_ms,
                   secrets::scrub(e.what(), env_.secret_values));
      if (auto* tm = live_metrics(env_, r_)) tm->error_retry();
      // A stop (a cut-off requests one too) ends the backoff at once.
      if (wait_for_stop(r_.stop.get_token(), std::chrono::milliseconds(backoff_ms)) || r_.cancelled.load())
        return false;
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 10000);
    }
  }
}

bool SinkTaskLoop::step(bool /*paused: its partitions are paused*/) {
  const size_t got = read();
  if (state_.failure) throw connectors::ConnectError(*state_.failure);
  // A cause no retry fixes (credentials, TLS, ACLs): the task fails with
  // the classified line instead of polling on forever.
  if (auto v = state_.errors->fatal()) throw connectors::ConnectError("consumer: " + v->message);
  // The same for the dead letter queue's producer, once it exists.
  env_.pipeline->errors().check_dlq();
  convert(got);
  if (!read_ends_.empty() && !r_.cancelled.load()) {
    if (auto* tm = live_metrics(env_, r_)) tm->sink_read(got);
    if (put_batch()) {
      if (auto* tm = live_metrics(env_, r_)) tm->sink_sent(batch_.size());
      // The next offset per partition: records of a partition come in
      // runs, so the map is touched once per run, not per record.
      for (const auto& end : read_ends_) {
        state_.consumed[{end.topic, end.partition}] = end.offset + 1;
        // No topic-status write either once cut off during put().
        if (!r_.cancelled.load()) active_topics_.record(env_, id_, end.topic);
      }
    }
  }
  if (Clock::now() - last_commit_ >= std::chrono::milliseconds(env_.options.offset_flush_interval_ms)) {
    auto st = state_.commit(consumer_.get(), nullptr, /*locked=*/false);
    if (!st) spdlog::error("{}: offset commit failed: {}", id_.to_string(), st.error().to_string());
    last_commit_ = Clock::now();
  }
  return true;
}

void SinkTaskLoop::release() {
  if (consumer_) {
    // Skipped (inside commit) when the task was cut off.
    if (started_ && !failure_) {
      auto st = state_.commit(consumer_.get(), nullptr, /*locked=*/false);
      if (!st) spdlog::error("{}: final offset commit failed: {}", id_.to_string(), st.error().to_string());
    }
    bool close_here;
    {
      std::lock_guard lk(r_.kafka_mu);
      state_.cancelled.store(true);  // close() revokes everything; nothing more to write
      close_here = !registered_ || r_.consumer != nullptr;  // else cut_off() already closed it
      r_.consumer = nullptr;
    }
    if (consumer_queue_) rd_kafka_queue_destroy(consumer_queue_);
    if (close_here) rd_kafka_consumer_close(consumer_.get());
    consumer_.reset();
  }
  if (started_) stop_task(*task_, failure_, what_);
}

}  // namespace

void run_sink_task(TaskEnv env, std::unique_ptr<connectors::SinkTask> task, TaskRunner& r) {
  SinkTaskLoop(std::move(env), std::move(task), r).run();
}

}  // namespace kc::runtime
