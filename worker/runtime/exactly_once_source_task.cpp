// The exactly-once source task loop (Connect's ExactlyOnceWorkerSourceTask, KIP-618): records and offsets in one transaction.
#include "worker/runtime/worker_internal.h"

#include <algorithm>

#include "common/strings.h"
#include "worker/storage/records.h"
#include "worker/storage/transactional_producer.h"

namespace kc::runtime {

namespace {

/// `transaction.boundary` of an exactly-once source task (KIP-618).
enum class TxnBoundary { Poll, Interval };

/// One record of the open transaction, kept until it commits: an abortable
/// failure aborts the transaction, and the same records (and offsets) are
/// sent again in a new one, since the task cannot rewind its source. Its
/// key and value bytes lie in the transaction's byte buffer (TxnBytes), so
/// keeping a record costs no allocation of its own.
struct TxnRecord {
  rd_kafka_topic_t* topic = nullptr;
  static constexpr size_t kNull = SIZE_MAX;  ///< a null key or value
  size_t key_at = kNull, key_len = 0;        ///< in the byte buffer
  size_t value_at = kNull, value_len = 0;
  int32_t partition = -1;
  int64_t timestamp_ms = 0;
  storage::RecordHeaders headers;
};

/// The key and value bytes of a transaction's records, back to back
/// (reused from one transaction to the next: it keeps its capacity).
class TxnBytes {
 public:
  /// Appends `bytes` (nullopt: null); returns where they start, or kNull.
  size_t add(std::optional<std::string_view> bytes) {
    if (!bytes) return TxnRecord::kNull;
    const size_t at = bytes_.size();
    bytes_.append(*bytes);
    return at;
  }
  /// The bytes at `at` (kNull: nullopt). Valid until the next add().
  std::optional<std::string_view> view(size_t at, size_t len) const {
    if (at == TxnRecord::kNull) return std::nullopt;
    return std::string_view(bytes_.data() + at, len);
  }
  void clear() { bytes_.clear(); }

 private:
  std::string bytes_;
};

/// Delivery reports of a transactional producer, served by the task
/// thread. A failed record makes its transaction abortable; the commit
/// reports it, so a report only has to be received.
struct TxnReports final : storage::Producer::Delivery {
  void delivered(rd_kafka_resp_err_t) override {}
};

/// The trace of a task whose transactional producer hit a fatal error
/// during `call`: fenced out by a newer producer (zombie fencing, or a new
/// owner's init_transactions), or unusable otherwise.
std::string fatal_producer_text(const ConnectorTaskId& id, const std::string& transactional_id,
                                const storage::TxnError& e, const std::string& call) {
  if (e.fenced())
    return "The producer of exactly-once source task " + id.to_string() + " (transactional.id " + transactional_id +
           ") was fenced out by a newer producer with the same transactional id, most likely because the task "
           "was started elsewhere; this instance stops and produces nothing more. " + e.to_string(call);
  return "The transactional producer of task " + id.to_string() + " (transactional.id " + transactional_id +
         ") failed fatally; the task stops. " + e.to_string(call);
}

/// An exactly-once source task (Connect's ExactlyOnceWorkerSourceTask,
/// KIP-618): the herder's fencing check, then its own transactional
/// producer (init_transactions fences any older instance), then poll →
/// transforms → converters → send inside a transaction; at each boundary
/// the source offsets of the transaction's records are sent to the offsets
/// topic by the same producer and the transaction commits, so records and
/// offsets become visible together or not at all. An abortable failure
/// aborts and sends the transaction again (up to 5 times); a fatal one
/// (fenced) fails the task at once. On a graceful stop the open
/// transaction commits; on a failure it is aborted.
class ExactlyOnceSourceLoop final : public SourceTaskLoop {
 public:
  ExactlyOnceSourceLoop(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r)
      : SourceTaskLoop(std::move(env), std::move(task), r),
        txn_id_(storage::task_transactional_id(env_.options.group_id, id_)),
        txn_timeout_ms_(std::max(env_.options.offset_flush_timeout_ms, 10000)) {}

 private:
  static constexpr int kMaxAttempts = 5;

  void start() override;
  bool step(bool paused) override;
  /// A graceful stop commits what was polled (Connect's final commit).
  void stopping() override {
    if (in_txn_ && !r_.cancelled.load()) commit();
  }
  void failed() override;
  void release() override;

  /// transaction.boundary and its interval from the connector config.
  /// Throws for a boundary this worker cannot keep (connector-defined).
  void read_boundary();
  /// The store the offsets go to: the connector's own offsets.storage.topic
  /// (opened here), else the worker's. Throws if it cannot be opened.
  storage::OffsetBackingStore* open_offsets_store();
  /// Creates the transactional producer, registers it for cut_off() and
  /// runs init_transactions (which fences older instances). Throws.
  void open_producer();
  /// Reads the offsets committed by the previous owner (read_committed:
  /// only those of committed transactions). Throws.
  void read_offsets(storage::OffsetBackingStore* offsets);
  /// Keeps and sends the records of one poll in the open transaction.
  void send_records(std::vector<connectors::SourceRecord>& records);
  /// Throws the task's failure for `e` (none: returns); a fatal error marks
  /// the producer dead (no commit, no abort after it).
  void throw_if(const storage::TxnResult& e, const std::string& call);
  /// Throws the task's failure when a send was refused (a fatal producer
  /// error first, with its own message); returns on success.
  void throw_if_not_sent(const Status& st);
  /// Sends one record with its headers and timestamp. Throws on refusal.
  void send(const TxnRecord& rec);
  /// Sends txn_records_[begin, end) in order: each run of records of one
  /// topic without headers or timestamps in one send_batch, the others one
  /// by one. Throws on refusal.
  void send_range(size_t begin, size_t end);
  void begin();
  /// Sends the transaction's offsets and commits it, retrying retriable
  /// commit errors. Under kafka_mu; nullopt: the task was cut off.
  std::optional<storage::TxnResult> send_offsets_and_commit(std::vector<std::pair<std::string, std::string>>& offset_records);
  /// Commits the open transaction with its offsets. false = the task was cut
  /// off meanwhile (nothing committed: the next owner's init aborts it).
  bool commit();

  TxnReports reports_;  // declared before the producer: it outlives every report
  std::unique_ptr<storage::OffsetBackingStore> connector_offsets_;  // its own offsets.storage.topic
  std::unique_ptr<storage::TransactionalProducer> txp_;
  const std::string txn_id_;
  const int txn_timeout_ms_;
  std::vector<TxnRecord> txn_records_;  ///< cleared per transaction (keeps its capacity)
  TxnBytes txn_bytes_;                  ///< their keys and values
  std::vector<rd_kafka_message_t> run_;  ///< one send_batch of send_range
  SourceOffsets txn_offsets_;
  bool in_txn_ = false;
  bool producer_dead_ = false;  // fatal error: no commit, no abort
  Clock::time_point txn_started_;
  rd_kafka_topic_t* offsets_rkt_ = nullptr;
  storage::OffsetBackingStore* offsets_store_ = nullptr;  // where the offsets go (set at start)
  std::unique_ptr<SourceContext> ctx_;
  TxnBoundary boundary_ = TxnBoundary::Poll;
  int64_t interval_ms_ = 0;
};

void ExactlyOnceSourceLoop::throw_if(const storage::TxnResult& e, const std::string& call) {
  if (!e) return;
  if (e->kind == storage::TxnError::Kind::Fatal) {
    producer_dead_ = true;
    throw connectors::ConnectError(fatal_producer_text(id_, txn_id_, *e, call));
  }
  throw connectors::ConnectError("task " + id_.to_string() + ": " + e->to_string(call));
}

void ExactlyOnceSourceLoop::send(const TxnRecord& rec) {
  auto st = txp_->producer().send_view(rec.topic, txn_bytes_.view(rec.key_at, rec.key_len),
                                       txn_bytes_.view(rec.value_at, rec.value_len), &reports_, rec.partition,
                                       rec.timestamp_ms, rec.headers.empty() ? nullptr : &rec.headers);
  throw_if_not_sent(st);
}

void ExactlyOnceSourceLoop::throw_if_not_sent(const Status& st) {
  if (st) return;
  throw_if(txp_->fatal_error(), "produce");  // fenced or fatal: its own message
  throw connectors::ConnectError(st.error().to_string());
}

void ExactlyOnceSourceLoop::send_range(size_t begin, size_t end) {
  auto flush_run = [&](rd_kafka_topic_t* topic) {
    if (run_.empty()) return;
    size_t queued = 0;
    auto st = txp_->producer().send_batch(topic, run_, queued);
    run_.clear();
    throw_if_not_sent(st);
  };
  run_.clear();
  rd_kafka_topic_t* run_topic = nullptr;
  for (size_t i = begin; i < end; ++i) {
    const TxnRecord& rec = txn_records_[i];
    const bool batchable = rec.headers.empty() && rec.timestamp_ms == 0;
    if (!batchable || rec.topic != run_topic) flush_run(run_topic);
    if (!batchable) {
      send(rec);
      continue;
    }
    run_.push_back(storage::Producer::batch_entry(txn_bytes_.view(rec.key_at, rec.key_len),
                                                  txn_bytes_.view(rec.value_at, rec.value_len), rec.partition,
                                                  &reports_));
    run_topic = rec.topic;
  }
  flush_run(run_topic);
}

void ExactlyOnceSourceLoop::begin() {
  throw_if(txp_->begin(), "begin_transaction");
  in_txn_ = true;
  txn_started_ = Clock::now();
}

std::optional<storage::TxnResult> ExactlyOnceSourceLoop::send_offsets_and_commit(
    std::vector<std::pair<std::string, std::string>>& offset_records) {
  // Under kafka_mu, offsets included: once cut_off() returned (it may
  // have purged records during the flush before), neither an offset
  // nor a commit of this task lands, so no offset gets ahead of its
  // records on a broker that shows open transactions.
  std::lock_guard lk(r_.kafka_mu);
  if (r_.cancelled.load()) return std::nullopt;
  offset_records.reserve(txn_offsets_.size());
  for (const auto& [key, po] : txn_offsets_) {
    // The offset store's write rule (every worker can read it back);
    // a refused offset fails the task and its transaction is aborted,
    // as Connect fails a flush.
    auto encoded = storage::encode_offset_record(id_.connector, po.first, std::optional(po.second));
    if (!encoded) throw connectors::ConnectError("task " + id_.to_string() + ": " + encoded.error().message);
    offset_records.emplace_back(key, encoded->value.value_or("null"));
    throw_if_not_sent(txp_->producer().send_view(offsets_rkt_, key, offset_records.back().second, &reports_));
  }
  storage::TxnResult e = txp_->commit(txn_timeout_ms_);
  for (int retry = 0; e && e->kind == storage::TxnError::Kind::Retriable && retry < kMaxAttempts; ++retry)
    e = txp_->commit(txn_timeout_ms_);
  return e;
}

bool ExactlyOnceSourceLoop::commit() {
  for (int attempt = 1;; ++attempt) {
    // The records first, then their offsets: on a broker that shows open
    // transactions (librdkafka's mock) offsets never get ahead of their
    // records; on Kafka it costs one round trip, the commit is atomic anyway.
    (void)txp_->producer().flush(txn_timeout_ms_);
    std::vector<std::pair<std::string, std::string>> offset_records;
    auto committed = send_offsets_and_commit(offset_records);
    if (!committed) return false;
    const storage::TxnResult& e = *committed;
    if (auto* tm = live_metrics(env_, r_)) tm->offset_commit(!e);
    if (!e) {
      if (offsets_store_) offsets_store_->remember(offset_records);  // get() sees them at once
      in_txn_ = false;
      txn_records_.clear();
      txn_bytes_.clear();
      txn_offsets_.clear();
      commit_task();
      return true;
    }
    if (e->kind == storage::TxnError::Kind::Fatal || attempt >= kMaxAttempts) throw_if(e, "commit_transaction");
    spdlog::warn("{}: {}; aborting and sending its {} records again (attempt {} of {})", id_.to_string(),
                 e->to_string("commit_transaction"), txn_records_.size(), attempt + 1, kMaxAttempts);
    throw_if(txp_->abort(txn_timeout_ms_), "abort_transaction");
    in_txn_ = false;
    begin();
    send_range(0, txn_records_.size());
  }
}

void ExactlyOnceSourceLoop::read_boundary() {
  const ConnectorConfig& config = *env_.connector_config;
  const std::string boundary_name = config.transaction_boundary.empty() ? "poll" : config.transaction_boundary;
  std::string low = boundary_name;
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
  if (low != "poll" && low != "interval")
    throw connectors::ConnectError("transaction.boundary=" + boundary_name +
                                   " is not supported for this connector: it cannot define its own transaction "
                                   "boundaries; use poll or interval");
  boundary_ = low == "poll" ? TxnBoundary::Poll : TxnBoundary::Interval;
  interval_ms_ = env_.options.offset_flush_interval_ms;
  if (!config.transaction_boundary_interval_ms.empty())
    interval_ms_ = std::stoll(config.transaction_boundary_interval_ms);
}

storage::OffsetBackingStore* ExactlyOnceSourceLoop::open_offsets_store() {
  const auto& topic = env_.connector_config->offsets_topic;
  if (!topic) return env_.offsets;
  storage::OffsetBackingStore::Options oo;
  oo.client = env_.options.client;
  oo.topic = *topic;
  oo.partitions = env_.options.offset_topic_partitions;
  oo.replication_factor = env_.options.offset_topic_replication_factor;
  oo.client_id = "connector-offsets-" + id_.to_string();
  auto store = storage::OffsetBackingStore::open(oo);
  if (!store)
    throw connectors::ConnectError("could not open the offsets topic " + *topic + ": " + store.error().to_string());
  connector_offsets_ = std::move(store).value();
  return connector_offsets_.get();
}

void ExactlyOnceSourceLoop::open_producer() {
  storage::ClientProps overrides = own_producer_overrides();
  overrides["client.id"] = "connector-producer-" + id_.to_string();
  auto p = storage::TransactionalProducer::create(env_.options.client, overrides, txn_id_,
                                                  producer_observer(overrides));
  if (!p) throw connectors::ConnectError("could not create the transactional producer: " + p.error().to_string());
  txp_ = std::move(p).value();
  if (env_.producers_created) env_.producers_created->fetch_add(1);
  claim_client([&] { r_.producer = txp_->producer().handle(); });
  auto init = txp_->init(txn_timeout_ms_);
  // A failed init that a classified cause explains (credentials, TLS,
  // ACLs) says so, not "timed out"; the reports are served first.
  if (init) throw_if_producer_fatal(txp_->producer(), false, true);
  throw_if(init, "init_transactions");
}

void ExactlyOnceSourceLoop::read_offsets(storage::OffsetBackingStore* offsets) {
  for (auto* store : {offsets, connector_offsets_ ? env_.offsets : nullptr})
    if (store)
      if (auto st = store->read_to_end(std::max(env_.options.offset_flush_timeout_ms, 10000)); !st)
        throw connectors::ConnectError("could not read " + store->description() + ": " +
                                       st.error().to_string());
}

void ExactlyOnceSourceLoop::start() {
  read_boundary();
  // Zombie fencing first (Connect's preProducerCheck): no producer of this
  // task's generation may start before the older generation is fenced out.
  if (env_.eos_checks.before_producer)
    if (auto st = env_.eos_checks.before_producer(r_.stop.get_token()); !st)
      throw connectors::ConnectError("zombie fencing for connector " + id_.connector +
                                     " failed, so the task cannot start: " + st.error().to_string());
  storage::OffsetBackingStore* offsets = open_offsets_store();
  open_producer();
  if (env_.eos_checks.after_producer)
    if (auto st = env_.eos_checks.after_producer(); !st) throw connectors::ConnectError(st.error().to_string());
  offsets_rkt_ = txp_->producer().topic(offsets ? offsets->topic() : std::string("connect-offsets"));
  offsets_store_ = offsets;
  read_offsets(offsets);
  ctx_ = std::make_unique<SourceContext>(offsets, id_, r_.stop.get_token(),
                                         connector_offsets_ ? env_.offsets : nullptr);
  task_->start(env_.task_config, *ctx_);
  started();
}

void ExactlyOnceSourceLoop::send_records(std::vector<connectors::SourceRecord>& records) {
  if (!in_txn_) begin();
  const size_t first = txn_records_.size();
  for (size_t i = 0; i < records.size(); ++i) {
    auto& rec = records[i];
    if (env_.pipeline->to_producer(rec, converted_)) {
      auto& kept = txn_records_.emplace_back();
      kept.topic = topic_handle(txp_->producer(), rec.topic);
      kept.key_at = txn_bytes_.add(converted_.key);
      kept.key_len = converted_.key ? converted_.key->size() : 0;
      kept.value_at = txn_bytes_.add(converted_.value);
      kept.value_len = converted_.value ? converted_.value->size() : 0;
      kept.partition = rec.kafka_partition.value_or(-1);
      kept.timestamp_ms = rec.timestamp_ms.value_or(0);
      if (!converted_.headers.empty()) kept.headers = converted_.headers;
    }
    // The last offset of each source partition in the transaction wins:
    // offsets go out only at the commit, after every record of the
    // transaction was sent.
    keep_offset(txn_offsets_, rec, i == 0);
  }
  end_of_poll();  // `records` goes away: its topic strings with it
  send_range(first, txn_records_.size());
  const size_t sent = txn_records_.size() - first;
  if (auto* tm = live_metrics(env_, r_); tm && sent) tm->source_written(sent);
}

bool ExactlyOnceSourceLoop::step(bool paused) {
  auto records = poll_records(paused);
  if (!records) return false;
  const bool polled_some = !records->empty();
  if (polled_some) send_records(*records);
  txp_->producer().serve_deliveries();
  throw_if(txp_->fatal_error(), "produce");
  throw_if_producer_fatal(txp_->producer(), false);
  const bool boundary_reached =
      in_txn_ && (boundary_ == TxnBoundary::Poll ? polled_some
                                                 : Clock::now() - txn_started_ >= std::chrono::milliseconds(interval_ms_));
  return !boundary_reached || commit();
}

void ExactlyOnceSourceLoop::failed() {
  if (txp_ && in_txn_ && !producer_dead_ && !r_.cancelled.load()) {
    if (auto a = txp_->abort(txn_timeout_ms_)) spdlog::warn("{}: {}", id_.to_string(), a->to_string("abort_transaction"));
  }
}

void ExactlyOnceSourceLoop::release() {
  stop_task(*task_, failure_, what_);
  if (txp_) {
    std::lock_guard lk(r_.kafka_mu);
    r_.producer = nullptr;
  }
  txp_.reset();
}

}  // namespace

void run_exactly_once_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r) {
  ExactlyOnceSourceLoop(std::move(env), std::move(task), r).run();
}

}  // namespace kc::runtime
