// The at-least-once source task loop (Connect's WorkerSourceTask) and what both source loops share.
#include "worker/runtime/worker_internal.h"

#include <algorithm>

#include "config/jaas.h"
#include "worker/storage/records.h"

namespace kc::runtime {

// ------------------------------------------------------------------ SourceTaskLoop

storage::ClientProps connector_client_props(const storage::ClientProps& worker,
                                            const std::map<std::string, std::string>& connector,
                                            std::string_view prefix) {
  // Kafka's sasl.jaas.config is no librdkafka key: translated as the
  // worker's own settings are (the herder translates those).
  auto own = connector;
  if (auto st = config::translate_jaas_config(own); !st)
    throw connectors::ConnectError(std::string(prefix) + st.error().to_string());
  storage::ClientProps out = worker;
  // A connector's username/password replace the worker's JAAS-derived ones.
  for (const auto& [k, v] : own) out[k] = v;
  return out;
}

storage::ClientProps connector_producer_overrides(const WorkerOptions& options, const ConnectorConfig& config) {
  return connector_client_props(options.producer_overrides, config.producer_overrides, kProducerOverridePrefix);
}

storage::ClientProps SourceTaskLoop::own_producer_overrides() const {
  if (!env_.connector_config) return env_.options.producer_overrides;
  const auto& config = *env_.connector_config;
  // KIP-458: refused overrides are caught when the config is validated;
  // a config written before the policy changed fails here, as Connect.
  if (!config.override_violations.empty())
    throw connectors::ConnectError("Client Config Overrides not allowed: " +
                                   config.override_violations.front().message);
  return connector_producer_overrides(env_.options, config);
}

std::shared_ptr<storage::ClientErrorObserver> SourceTaskLoop::producer_observer(
    const storage::ClientProps& overrides) const {
  storage::ClientProps merged = env_.options.client;
  for (const auto& [k, v] : overrides) merged[k] = v;
  return std::make_shared<storage::ClientErrorObserver>(merged);
}

void SourceTaskLoop::throw_if_producer_fatal(storage::Producer& producer, bool shared, bool serve) const {
  auto* errors = producer.errors();
  if (!errors) return;
  if (serve) producer.serve_deliveries();
  auto v = errors->fatal();
  if (!v || (shared && v->cause == storage::BrokerCheckCause::NotAuthorized)) return;
  throw connectors::ConnectError("producer: " + v->message);
}

std::optional<std::vector<connectors::SourceRecord>> SourceTaskLoop::poll_records(bool paused) {
  if (paused) {
    // A stop ends the nap at once; a resume is seen after it (at most 100 ms).
    wait_for_stop(r_.stop.get_token(), std::chrono::milliseconds(100));
    return std::vector<connectors::SourceRecord>{};
  }
  auto records = watched_task_call(env_, r_, "poll", [&] { return task_->poll(); });
  if (r_.cancelled.load()) return std::nullopt;
  if (!records.empty())
    if (auto* tm = live_metrics(env_, r_)) tm->source_polled(records.size());
  return records;
}

void SourceTaskLoop::commit_task() {
  try {
    task_->commit();
  } catch (const std::exception& e) {  // logged, as Connect does
    spdlog::error("{}: exception thrown while calling task.commit(): {}", id_.to_string(), e.what());
  }
}

rd_kafka_topic_t* SourceTaskLoop::topic_handle(storage::Producer& producer, const std::string& topic) {
  if (!topic_name_ || *topic_name_ != topic) {
    topic_rkt_ = producer.topic(topic);
    topic_name_ = &topic;
    active_topics_.record(env_, id_, topic);
  }
  return topic_rkt_;
}

void SourceTaskLoop::keep_offset(SourceOffsets& into, connectors::SourceRecord& rec, bool new_poll) {
  if (new_poll) slot_partition_ = nullptr;  // slot_ may point into another map
  if (rec.source_offset.is_null()) return;   // no offset of its own (see SourceRecord)
  const auto& part = rec.source_partition.get();
  if (!slot_partition_ || (&part != slot_partition_ && slot_->second.first != part)) {
    auto key = storage::encode_offset_key(id_.connector, part);
    slot_ = into.find(key);
    if (slot_ == into.end()) slot_ = into.emplace(std::move(key), std::pair{part, storage::SourceOffset()}).first;
  }
  slot_partition_ = &part;
  slot_->second.second = std::move(rec.source_offset);
}

// ------------------------------------------------------------------ deliveries

namespace {

/// Delivery outcome of one source task run, shared by the task thread and
/// its batches. Batches may outlive the task (records still in flight when
/// it ends), so this is reference-counted rather than on the task's stack.
struct TaskDeliveries {
  std::atomic<bool> failed{false};
  /// The task waits for its own records (final drain): a batch whose last
  /// report arrives then wakes it through `cv`.
  std::atomic<bool> draining{false};
  std::mutex mu;
  std::condition_variable cv;
  std::string first;  ///< the first delivery error; guarded by mu

  void record(rd_kafka_resp_err_t err) {
    std::lock_guard lk(mu);
    if (!failed.exchange(true)) first = std::string("produce: ") + rd_kafka_err2str(err);
  }
  /// Called by whoever completes a batch. The lock pairs with the drain's
  /// predicate check, so its wake-up is not lost.
  void batch_reported() {
    if (!draining.load()) return;
    { std::lock_guard lk(mu); }
    cv.notify_all();
  }
};

/// The records of one poll() on their way to Kafka: how many the producer
/// has not reported on yet, and the last source offset per source partition
/// among them. Delivery reports count down on whichever thread serves them
/// (the task thread with its own producer, the shared producer's poll
/// thread otherwise); a failure is recorded before its count-down. A
/// batch's offsets become committable once it and every batch before it
/// are fully reported and no record failed (Connect's SubmittedRecords), so
/// a periodic commit never waits for the producer and never covers a record
/// not yet acknowledged.
///
/// Lifetime: owned by the task's in-flight queue (shared_ptr) and, from
/// arm() until its count reaches zero, by itself (`keep_alive`): librdkafka
/// holds raw pointers to it as the records' opaque. The call that brings
/// the count to zero (the last report, or the task taking off the records
/// it never sent) drops that self-reference. So a task may end, or be cut
/// off, with records in flight: the batch lives on until their reports.
struct InFlightBatch;

/// The delivery report of one record of a task that overrides
/// SourceTask::commit_record: keeps what Kafka said about the record in its
/// batch, then counts it down there. Only such tasks pay for one per record.
struct RecordAck final : storage::Producer::Delivery {
  RecordAck(InFlightBatch* b, size_t i) : batch(b), index(i) {}
  void delivered(rd_kafka_resp_err_t err) override;
  void delivered_message(const rd_kafka_message_t* msg) override;
  InFlightBatch* batch;
  size_t index;
};

struct InFlightBatch final : storage::Producer::Delivery {
  /// `same_thread`: every report and count-down runs on the task thread
  /// (its own producer, Deliveries::Caller), so the count needs no atomic
  /// operation; a locked one per record cost 9 % of the task thread.
  InFlightBatch(std::shared_ptr<TaskDeliveries> d, bool same_thread)
      : deliveries(std::move(d)), same_thread(same_thread) {}

  /// Counts `n` records as unreported and holds `self` (this batch) until
  /// all are accounted for. Task thread, before the first send.
  void arm(std::shared_ptr<InFlightBatch> self, int64_t n) {
    keep_alive = std::move(self);
    if (same_thread) unreported_here = n;
    else unreported.store(n);
  }
  void delivered(rd_kafka_resp_err_t err) override {
    if (err) deliveries->record(err);
    count_down(1);
  }
  /// Takes `n` records off the count: reports, or records of the poll that
  /// were never handed to the producer. May destroy this batch (when no one
  /// else holds it); touches nothing of it afterwards.
  void count_down(int64_t n) {
    if (n == 0) return;
    if (same_thread) {
      unreported_here -= n;
      if (unreported_here != 0) return;
    } else if (unreported.fetch_sub(n) != n) {
      return;
    }
    auto d = deliveries;                        // `this` may go with the next line
    std::shared_ptr<InFlightBatch> self = std::move(keep_alive);
    self.reset();
    d->batch_reported();
  }
  bool done() const { return sealed && (same_thread ? unreported_here : unreported.load()) == 0; }

  std::shared_ptr<TaskDeliveries> deliveries;
  const bool same_thread;
  std::shared_ptr<InFlightBatch> keep_alive;  ///< set from arm() until the count reaches zero
  std::atomic<int64_t> unreported{0};  ///< records not reported yet (reports on another thread)
  int64_t unreported_here = 0;         ///< the same, when same_thread
  bool sealed = false;  ///< every record of the poll was handed to the producer (task thread only)
  /// Offset key (storage::encode_offset_key) -> the last partition/offset.
  std::map<std::string, std::pair<storage::SourcePartition, storage::SourceOffset>> offsets;
  /// Tasks with commit_record only (else empty): the records as polled,
  /// what Kafka reported for each (partition -1: not sent, e.g. dropped by
  /// a transform), whether its delivery failed, and one report per record.
  /// Written by the reports before their count-down, read by the task
  /// thread once done().
  std::vector<connectors::SourceRecord> polled;
  std::vector<connectors::RecordMetadata> acks;
  std::vector<uint8_t> failed;
  std::vector<RecordAck> record_acks;
};

void RecordAck::delivered(rd_kafka_resp_err_t err) { batch->delivered(err); }

void RecordAck::delivered_message(const rd_kafka_message_t* msg) {
  if (msg->err) {
    batch->failed[index] = 1;
  } else {
    auto& md = batch->acks[index];
    md.topic = rd_kafka_topic_name(msg->rkt);
    md.partition = msg->partition;
    md.offset = msg->offset;
    md.timestamp_ms = rd_kafka_message_timestamp(msg, nullptr);
  }
  batch->delivered(msg->err);  // may destroy the batch and this report: nothing after it
}

/// The at-least-once loop: each poll's records are one InFlightBatch on
/// the task's own producer or the Worker's shared one; the offsets of the
/// acknowledged prefix of the batches are committed every
/// offset.flush.interval.ms and, after a drain, when the task stops.
class AtLeastOnceSourceLoop final : public SourceTaskLoop {
 public:
  AtLeastOnceSourceLoop(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r)
      : SourceTaskLoop(std::move(env), std::move(task), r),
        shared_(env_.shared_producer != nullptr || env_.shared_producer_error.has_value()),
        commit_records_(task_->wants_commit_record()),  // commitRecord only for tasks that override it
        ctx_(env_.offsets, id_, r_.stop.get_token()) {}

 private:
  void start() override;
  bool step(bool paused) override;
  void release() override;

  /// The task's own producer, or the Worker's shared one. Throws on failure.
  void open_producer();
  /// Queues the polled records as one batch: transforms, converters, send.
  void send_records(std::vector<connectors::SourceRecord>& records);
  /// A new in-flight batch for `records`, counted for all of them up front.
  InFlightBatch& open_batch(const std::vector<connectors::SourceRecord>& records);
  /// Hands one converted record (`view`, record `index` of the poll) to
  /// the producer with its headers and timestamp. false: the task was cut
  /// off (nothing more may be sent). `sent` counts it once queued.
  bool send_one(InFlightBatch& batch, rd_kafka_topic_t* rkt, const connectors::SourceRecord& rec,
                const ProducerRecordView& view, size_t index, size_t& sent);
  /// Hands the pending run (`run_`, records of one topic without headers
  /// or timestamps) to the producer in one call and empties it. false: the
  /// task was cut off. `sent` counts the records queued; throws
  /// connectors::ConnectError when the producer refused one.
  bool send_run(size_t& sent);
  /// Before a send: false when the task was cut off (shared producer: marks
  /// the send under way, see TaskRunner::sending).
  bool begin_send();
  /// After a send: false when the task was cut off meanwhile (its own
  /// producer is purged again).
  bool end_send();
  /// The Delivery of record `index`: the batch, or the record's own report
  /// for tasks with commit_record.
  storage::Producer::Delivery* report_of(InFlightBatch& batch, size_t index);
  /// Moves the offsets of the acknowledged prefix of the in-flight batches
  /// to `pending_` (and hands their records to commit_record, on this thread).
  void collect_acked();
  /// Waits until the producer reported on every record of this task, at
  /// most offset.flush.timeout.ms. Its own producer is flushed; on the shared
  /// one the task waits for its own batches only, never for other tasks'
  /// records. Errors on timeout.
  Status drain();
  /// Commits the offsets of acknowledged records. `drain_first` (the final
  /// commit) first waits until the producer reported on every record of the
  /// task. nullopt when there was nothing to commit or the task was cut off.
  std::optional<Status> commit_acked(bool drain_first);
  /// commit_acked, counted in the metrics, then SourceTask.commit.
  Status commit(bool drain_first);

  const bool shared_;
  const bool commit_records_;
  SourceContext ctx_;
  bool delivery_failed_ = false;
  std::shared_ptr<TaskDeliveries> deliveries_ = std::make_shared<TaskDeliveries>();
  std::deque<std::shared_ptr<InFlightBatch>> in_flight_;
  /// The converted records of the poll being sent, one per record (reused:
  /// their buffers keep their capacity).
  std::vector<ProducerRecordView> views_;
  static constexpr size_t kKeptViews = 4096;  ///< views kept between polls at most
  std::vector<rd_kafka_message_t> run_;  ///< the records waiting for one send_batch
  rd_kafka_topic_t* run_topic_ = nullptr;  ///< their topic
  SourceOffsets pending_;  ///< acknowledged offsets not committed yet
  // Exactly one of these is set once the task has a producer: its own, or
  // the Worker's shared one (never purged, flushed or polled from here).
  std::unique_ptr<storage::Producer> own_producer_;
  storage::Producer* producer_ = nullptr;
  Clock::time_point last_commit_;
};

void AtLeastOnceSourceLoop::open_producer() {
  if (shared_) {
    if (env_.shared_producer_error)
      throw connectors::ConnectError("could not create the shared producer: " + *env_.shared_producer_error);
    producer_ = env_.shared_producer;
    return;
  }
  storage::ClientProps overrides = own_producer_overrides();
  overrides.emplace("acks", "all");
  overrides.emplace("client.id", "connector-producer-" + id_.to_string());
  // The task thread serves its delivery reports (between polls, while the
  // queue is full, in flushes): it frees the records it allocated. Its
  // librdkafka errors are classified (issue 27 item 1): see step().
  auto p = storage::Producer::create(env_.options.client, overrides, storage::Producer::Deliveries::Caller,
                                     producer_observer(overrides));
  if (!p) throw connectors::ConnectError("could not create producer: " + p.error().to_string());
  own_producer_ = std::move(p).value();
  producer_ = own_producer_.get();
  if (env_.producers_created) env_.producers_created->fetch_add(1);
}

void AtLeastOnceSourceLoop::start() {
  open_producer();
  claim_client([&] {
    if (shared_) r_.on_shared_producer = true;
    else r_.producer = producer_->handle();
  });
  // Offsets may have been committed by the previous owner on another worker.
  if (env_.offsets) {
    auto st = env_.offsets->read_to_end(std::max(env_.options.offset_flush_timeout_ms, 10000));
    if (!st) throw connectors::ConnectError("could not read the offsets topic: " + st.error().to_string());
  }
  task_->start(env_.task_config, ctx_);
  started();
  last_commit_ = Clock::now();
}

bool AtLeastOnceSourceLoop::step(bool paused) {
  auto records = poll_records(paused);
  if (!records) return false;
  if (!records->empty()) send_records(*records);
  producer_->serve_deliveries();  // no-op on the shared producer (its poll thread serves them)
  if (commit_records_) collect_acked();  // commit_record soon after the acks, not at the next commit
  if (deliveries_->failed.load()) delivery_failed_ = true;  // before any throw: no offset after a lost record
  // A cause no retry fixes (credentials, TLS, ACLs): the task fails with
  // the classified line, not with the delivery timeouts it would end in.
  throw_if_producer_fatal(*producer_, shared_);
  if (delivery_failed_) {
    std::lock_guard lk(deliveries_->mu);
    throw connectors::ConnectError("Unrecoverable exception from producer send callback: " + deliveries_->first);
  }
  if (Clock::now() - last_commit_ >= std::chrono::milliseconds(env_.options.offset_flush_interval_ms)) {
    auto st = commit(/*drain_first=*/false);
    if (!st) spdlog::error("{}: offset commit failed: {}", id_.to_string(), st.error().to_string());
    last_commit_ = Clock::now();
  }
  return true;
}

InFlightBatch& AtLeastOnceSourceLoop::open_batch(const std::vector<connectors::SourceRecord>& records) {
  auto& batch = *in_flight_.emplace_back(std::make_shared<InFlightBatch>(deliveries_, !shared_));
  if (commit_records_) {
    batch.polled = records;  // as polled: the pipeline changes `records`
    batch.acks.resize(records.size());
    batch.failed.assign(records.size(), 0);
    batch.record_acks.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) batch.record_acks.emplace_back(&batch, i);
  }
  batch.arm(in_flight_.back(), static_cast<int64_t>(records.size()));
  return batch;
}

void AtLeastOnceSourceLoop::send_records(std::vector<connectors::SourceRecord>& records) {
  // Counted for the whole poll up front (one atomic operation); the
  // records not handed to the producer are taken off when the block
  // ends, also on an exception, so the count always reaches zero.
  auto& batch = open_batch(records);
  size_t sent = 0;
  struct Seal {
    InFlightBatch& batch;
    const size_t total;
    const size_t& sent;
    TaskRunner* sending;  ///< its `sending` cleared when the sends are over (shared producer only)
    ~Seal() {
      if (sending) sending->end_send();
      batch.sealed = true;
      batch.count_down(static_cast<int64_t>(total - sent));
    }
  } seal{batch, records.size(), sent, shared_ ? &r_ : nullptr};
  // One converted view per record: a run of records goes to the producer
  // in one call, so their bytes must stay put until it is sent.
  if (views_.size() < records.size()) views_.resize(records.size());
  run_.clear();
  // A record's offset is kept once it and every record before it were
  // handed to the producer (or dropped): an offset never gets ahead of a
  // record still waiting in the run, even if a later stage throws.
  size_t kept = 0;
  auto keep_offsets_before = [&](size_t end) {
    for (; kept < end; ++kept) keep_offset(batch.offsets, records[kept], kept == 0);  // the last one per partition wins
  };
  auto send_all = [&] {
    for (size_t i = 0; i < records.size(); ++i) {
      auto& rec = records[i];
      auto& view = views_[i];
      // Transformed and converted; false = dropped by a transform or
      // skipped after a tolerated error: not sent, but its offset
      // counts as handled (Connect commits it too).
      if (!env_.pipeline->to_producer(rec, view)) continue;
      rd_kafka_topic_t* rkt = topic_handle(*producer_, rec.topic);
      // Headers and own timestamps need rd_kafka_producev; so does a topic change.
      const bool batchable = view.headers.empty() && !rec.timestamp_ms;
      if (!run_.empty() && (!batchable || rkt != run_topic_)) {
        if (!send_run(sent)) return false;
        keep_offsets_before(i);
      }
      if (batchable) {
        run_.push_back(storage::Producer::batch_entry(view.key, view.value, rec.kafka_partition.value_or(-1),
                                                      report_of(batch, i)));
        run_topic_ = rkt;
        continue;
      }
      if (!send_one(batch, rkt, rec, view, i, sent)) return false;
      keep_offsets_before(i + 1);
    }
    if (!run_.empty() && !send_run(sent)) return false;
    keep_offsets_before(records.size());
    return true;
  };
  send_all();  // false when cut off: the rest of the poll is not sent
  // A poll far larger than usual does not keep its views for good.
  if (views_.size() > kKeptViews && records.size() <= kKeptViews) views_ = std::vector<ProducerRecordView>(kKeptViews);
  end_of_poll();
  if (auto* tm = live_metrics(env_, r_); tm && sent) tm->source_written(sent);
}

storage::Producer::Delivery* AtLeastOnceSourceLoop::report_of(InFlightBatch& batch, size_t index) {
  if (commit_records_) return &batch.record_acks[index];
  return &batch;
}

bool AtLeastOnceSourceLoop::begin_send() {
  // Shared producer: `sending` is set around each send and `cancelled`
  // checked after setting it, so nothing is sent once a cut-off returned
  // (see TaskRunner::sending) and a cut-off waits for one send at most,
  // never for the transforms or converters; the producer is not purged
  // for us. (The Seal clears `sending` on a break or an exception.)
  if (!shared_) return true;
  r_.sending.store(true);
  return !r_.cancelled.load();
}

bool AtLeastOnceSourceLoop::end_send() {
  if (shared_) {
    r_.end_send();
    return true;
  }
  // Own producer: cut_off() sets `cancelled` before it purges. If it is
  // not set yet, the purge comes after this send and removes the records
  // if they are still queued; if it is set, the purge may have run before
  // the send, so purge again here.
  if (!r_.cancelled.load()) return true;
  rd_kafka_purge(producer_->handle(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  return false;
}

bool AtLeastOnceSourceLoop::send_run(size_t& sent) {
  if (!begin_send()) return false;
  size_t queued = 0;
  auto st = producer_->send_batch(run_topic_, run_, queued);
  sent += queued;  // queued: their reports will come, even if they are purged
  run_.clear();
  if (!st) throw connectors::ConnectError(st.error().to_string());
  return end_send();
}

bool AtLeastOnceSourceLoop::send_one(InFlightBatch& batch, rd_kafka_topic_t* rkt, const connectors::SourceRecord& rec,
                                     const ProducerRecordView& view, size_t index, size_t& sent) {
  if (!begin_send()) return false;
  // A record's own timestamp, else the producer's time (as Connect).
  auto st = producer_->send_view(rkt, view.key, view.value, report_of(batch, index), rec.kafka_partition.value_or(-1),
                                 rec.timestamp_ms.value_or(0), view.headers.empty() ? nullptr : &view.headers);
  if (!st) throw connectors::ConnectError(st.error().to_string());
  ++sent;  // queued: its report will come, even if it is purged
  return end_send();
}

void AtLeastOnceSourceLoop::collect_acked() {
  while (!in_flight_.empty() && in_flight_.front()->done()) {
    auto& b = *in_flight_.front();
    for (auto& [key, po] : b.offsets) pending_[key] = std::move(po);
    for (size_t i = 0; i < b.polled.size(); ++i) {
      if (b.failed[i]) continue;
      try {
        task_->commit_record(b.polled[i], b.acks[i]);
      } catch (const std::exception& e) {  // logged, as Connect does
        spdlog::error("{}: exception thrown while calling task.commitRecord(): {}", id_.to_string(), e.what());
      }
    }
    in_flight_.pop_front();
  }
}

Status AtLeastOnceSourceLoop::drain() {
  if (!shared_) return producer_->flush(env_.options.offset_flush_timeout_ms);
  const auto deadline = Clock::now() + std::chrono::milliseconds(env_.options.offset_flush_timeout_ms);
  deliveries_->draining.store(true);
  std::unique_lock lk(deliveries_->mu);
  const bool all = deliveries_->cv.wait_until(lk, deadline, [&] {
    return r_.cancelled.load() ||
           std::all_of(in_flight_.begin(), in_flight_.end(), [](const auto& b) { return b->done(); });
  });
  if (!all)
    return Error{"flush", "timed out after " + std::to_string(env_.options.offset_flush_timeout_ms) +
                              " ms waiting for the acks of this task's records"};
  return ok_status();
}

std::optional<Status> AtLeastOnceSourceLoop::commit_acked(bool drain_first) {
  if (r_.cancelled.load() || (pending_.empty() && in_flight_.empty())) return std::nullopt;
  if (drain_first) {
    auto st = drain();
    if (r_.cancelled.load()) return std::nullopt;  // cut off meanwhile: nothing to commit
    if (!st) spdlog::warn("{}: {}; committing the acknowledged records only", id_.to_string(), st.error().to_string());
  }
  if (deliveries_->failed.load()) return Error{"produce", "a record failed to be delivered"};
  collect_acked();
  if (pending_.empty()) return std::nullopt;
  if (!env_.offsets) return ok_status();
  std::vector<std::pair<storage::SourcePartition, std::optional<storage::SourceOffset>>> batch;
  batch.reserve(pending_.size());
  for (const auto& [_, po] : pending_) batch.emplace_back(po.first, po.second);
  // Checked and written under kafka_mu: once cut_off() returned, no commit
  // of this task can land (a cut-off waits for one already under way).
  std::lock_guard lk(r_.kafka_mu);
  if (r_.cancelled.load()) return std::nullopt;
  auto st = env_.offsets->commit(id_.connector, batch, env_.options.offset_flush_timeout_ms);
  if (st) pending_.clear();
  return st;
}

Status AtLeastOnceSourceLoop::commit(bool drain_first) {
  auto st = commit_acked(drain_first);
  if (!st) return ok_status();
  if (auto* tm = live_metrics(env_, r_)) tm->offset_commit(st->ok());
  if (st->ok()) commit_task();
  return *st;
}

void AtLeastOnceSourceLoop::release() {
  // Final commit: the next owner resumes from here. Skipped when records
  // failed delivery (their offsets must not be committed) or the task was
  // cut off after its graceful timeout (commit() checks that under kafka_mu).
  if (producer_ && !delivery_failed_) {
    auto st = commit(/*drain_first=*/true);
    if (!st) spdlog::error("{}: final offset commit failed: {}", id_.to_string(), st.error().to_string());
  }
  stop_task(*task_, failure_, what_);
  if (producer_) {
    std::lock_guard lk(r_.kafka_mu);
    r_.producer = nullptr;
    r_.on_shared_producer = false;
  }
  // Its own producer is flushed and destroyed here; batches still in flight
  // on the shared producer stay alive (their self-references) until their
  // reports, which then change nothing but their own counts.
  own_producer_.reset();
  producer_ = nullptr;
}

}  // namespace

void run_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r) {
  AtLeastOnceSourceLoop(std::move(env), std::move(task), r).run();
}

}  // namespace kc::runtime
