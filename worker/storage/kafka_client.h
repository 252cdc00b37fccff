#pragma once
// Thin RAII helpers over librdkafka's C API shared by the stores and the
// runtime: building a client from a property map, a producer with blocking
// "send and wait", a whole-topic reader with read-to-end, and topic creation.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "common/result.h"
#include "worker/metrics/log_levels.h"

namespace kc::broker {
class ClientErrorObserver;  // common/broker_classify/broker_classify.h
}  // namespace kc::broker

namespace kc::storage {

using broker::ClientErrorObserver;

/// librdkafka client properties (`bootstrap.servers`, `security.protocol`,
/// `sasl.*`, ...), passed through unchanged.
using ClientProps = std::map<std::string, std::string>;

/// Deleter for rd_kafka_t (rd_kafka_destroy).
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
/// Owning handle of an rd_kafka_t.
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

/// Creates a librdkafka client of `type` from `props` (later maps override
/// earlier ones: `overrides` beats `props`). Its log and error callbacks
/// go through spdlog (client_logging.h) as logger librdkafka.<kind>; `kind`
/// defaults to Producer/Consumer from `type` (pass Admin for a client made
/// for admin requests and metadata only). `customize`, if set, may install
/// callbacks on the conf before the client is created. Errors name the bad
/// property, with the value of every secret key (secrets::is_secret_key:
/// sasl.password, ssl.key.password, ...) scrubbed out of librdkafka's text.
/// `observer` (may be null) also gets every report of the client's error
/// callback (route_client_logs): it must outlive the client, and
/// `customize` must not set the conf's opaque then (the observer is the
/// opaque; hang other state on ClientErrorObserver::set_owner).
Result<RdKafkaPtr> make_client(rd_kafka_type_t type, const ClientProps& props,
                               const ClientProps& overrides = {},
                               const std::function<void(rd_kafka_conf_t*)>& customize = {},
                               std::optional<metrics::KafkaClientKind> kind = std::nullopt,
                               ClientErrorObserver* observer = nullptr);

/// make_client for admin requests (CreateTopics, group admin, metadata): a
/// producer-type handle whose lines log as librdkafka.admin.
inline Result<RdKafkaPtr> make_admin_client(const ClientProps& props, const ClientProps& overrides = {}) {
  return make_client(RD_KAFKA_PRODUCER, props, overrides, {}, metrics::KafkaClientKind::Admin);
}

/// Record headers as sent and consumed: (key, value) in order; a nullopt
/// value is a null header value. Keys may repeat.
using RecordHeaders = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// A copy of `headers` as librdkafka headers (nullptr when empty); the
/// caller owns it until a produce call takes it over.
rd_kafka_headers_t* to_rd_headers(const RecordHeaders* headers);

/// A consumed message's headers (empty when it has none).
RecordHeaders headers_of(const rd_kafka_message_t* message);

/// A producer with its own poll thread serving delivery reports, so sends can
/// be awaited from any thread. Thread-safe.
class Producer {
 public:
  /// Completion of one send: nullopt on success, else the delivery error.
  using Callback = std::function<void(std::optional<Error>)>;

  /// Completion of records sent with send_view: delivered() runs once per
  /// record on the thread that serves the delivery reports (see
  /// Deliveries), with RD_KAFKA_RESP_ERR_NO_ERROR or the delivery error
  /// (RD_KAFKA_RESP_ERR__PURGE_* for purged records). The object must stay
  /// alive until its last report, or until the Producer is destroyed;
  /// delivered() may end its own life (drop the last reference to itself)
  /// provided it touches nothing of it afterwards. No allocation per
  /// record, unlike a Callback.
  class Delivery {
   public:
    virtual void delivered(rd_kafka_resp_err_t err) = 0;
    /// The same report with the whole message (its partition, offset and
    /// timestamp), for senders that want them; by default delivered(err).
    virtual void delivered_message(const rd_kafka_message_t* msg) { delivered(msg->err); }

   protected:
    ~Delivery() = default;
  };

  /// Who serves the delivery reports (and so runs the callbacks and frees
  /// the delivered records).
  enum class Deliveries {
    PollThread,  ///< the producer's own poll thread
    /// The thread that sends, through serve_deliveries() and flush(), as
    /// kcat does: a data-plane sender frees its own records (no arena lock
    /// contention with a poll thread) and has no extra thread. The owner
    /// must call serve_deliveries() regularly; send_view serves them while
    /// librdkafka's queue is full.
    Caller,
  };

  /// Creates the producer. Non-blocking (no network round trip).
  /// `errors` (may be null) observes the producer's librdkafka errors
  /// (make_client) and the broker errors of its delivery reports
  /// (ClientErrorObserver::record_topic_error, e.g.
  /// TOPIC_AUTHORIZATION_FAILED); the producer keeps it alive until its
  /// client is destroyed.
  static Result<std::unique_ptr<Producer>> create(const ClientProps& props,
                                                  const ClientProps& overrides = {},
                                                  Deliveries deliveries = Deliveries::PollThread,
                                                  std::shared_ptr<ClientErrorObserver> errors = nullptr);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  /// Queues one record. `value` nullopt = tombstone; `partition` -1 = the
  /// default partitioner (murmur2 over the key bytes, like Java clients).
  /// `cb` runs on the producer's poll thread once the broker acked or the
  /// record failed, or inside ~Producer for records still queued then
  /// (flushed, then purged: "Purged in queue"), so whatever it uses must
  /// outlive the Producer. Returns an error only if librdkafka refused to
  /// queue it.
  /// `headers` (may be null) and `timestamp_ms` (0 = the producer's time)
  /// are the record's.
  Status send(const std::string& topic, const std::optional<std::string>& key,
              const std::optional<std::string>& value, Callback cb, int32_t partition = -1,
              const RecordHeaders* headers = nullptr, int64_t timestamp_ms = 0);

  /// The data-plane form of send(): the topic as a handle from topic(), key
  /// and value as views (nullopt = null; the bytes are copied), and a
  /// Delivery instead of a Callback. While librdkafka's queue is full it
  /// waits for room, 1 ms at a time, for at most 5 s: with
  /// Deliveries::Caller it serves the delivery reports itself meanwhile;
  /// with Deliveries::PollThread it leaves them to the poll thread, so a
  /// producer shared by several senders runs every Delivery on that one
  /// thread. Thread-safe (rd_kafka_producev is). `timestamp_ms` 0 = the
  /// producer's time (CreateTime now).
  /// `headers` (may be null) are copied.
  Status send_view(rd_kafka_topic_t* topic, std::optional<std::string_view> key,
                   std::optional<std::string_view> value, Delivery* delivery, int32_t partition = -1,
                   int64_t timestamp_ms = 0, const RecordHeaders* headers = nullptr);

  /// Queues `msgs` (payload, len, key, key_len, partition: -1 = the default
  /// partitioner, _private: the Delivery) for `topic` in one
  /// rd_kafka_produce_batch call, copied (RD_KAFKA_MSG_F_COPY): one topic
  /// lock and one clock reading for the whole run instead of one per record.
  /// No headers and no own timestamps (CreateTime is the producer's time);
  /// send those with send_view. Order is kept. A full queue is waited out
  /// as in send_view, and the call goes on from the first record not queued.
  /// `queued` is set to how many records were queued (each gets its
  /// report), also on error. Errors: the first record librdkafka refused,
  /// or a queue still full after 5 s.
  Status send_batch(rd_kafka_topic_t* topic, std::span<rd_kafka_message_t> msgs, size_t& queued);

  /// One entry of a send_batch run: `key` and `value` as views (nullopt =
  /// null; they must stay valid until send_batch returns), `partition` -1 =
  /// the default partitioner, `delivery` its report.
  static rd_kafka_message_t batch_entry(std::optional<std::string_view> key, std::optional<std::string_view> value,
                                        int32_t partition, Delivery* delivery) {
    rd_kafka_message_t m{};
    m.key = key ? const_cast<char*>(key->data()) : nullptr;
    m.key_len = key ? key->size() : 0;
    m.payload = value ? const_cast<char*>(value->data()) : nullptr;
    m.len = value ? value->size() : 0;
    m.partition = partition;
    m._private = delivery;
    return m;
  }

  /// Serves the delivery reports that are ready, on the calling thread,
  /// without waiting. Required regularly with Deliveries::Caller; does
  /// nothing with Deliveries::PollThread (the poll thread serves them).
  void serve_deliveries() {
    if (deliveries_ == Deliveries::Caller) rd_kafka_poll(rk_.get(), 0);
  }

  /// Who serves this producer's delivery reports.
  Deliveries deliveries() const { return deliveries_; }

  /// The handle of `topic` for send_view, created on first use and kept
  /// until the producer is destroyed.
  rd_kafka_topic_t* topic(const std::string& name);

  /// Queues records and blocks until every one is delivered or `timeout_ms`
  /// passes. Blocking: call it from a worker thread, never the io_context.
  /// Errors: the first delivery error, or a timeout.
  Status send_and_wait(const std::string& topic,
                       const std::vector<std::pair<std::string, std::optional<std::string>>>& records,
                       int timeout_ms);

  /// Waits until every queued record is delivered (rd_kafka_flush).
  /// Blocking. Errors on timeout.
  Status flush(int timeout_ms);

  /// The underlying handle (for metadata queries).
  rd_kafka_t* handle() const { return rk_.get(); }

  /// The observer given to create(), or null: its fatal() says whether a
  /// cause no retry fixes (credentials, TLS, ACLs) has shown.
  ClientErrorObserver* errors() const { return errors_.get(); }

 private:
  /// Waits (about 1 ms) for room in a full queue: serves the delivery
  /// reports with Deliveries::Caller, else sleeps (the poll thread serves them).
  void wait_for_room();
  /// How many times a send waits for room before it fails (about 5 s).
  static constexpr int kQueueFullWaits = 5000;

  Producer(RdKafkaPtr rk, Deliveries deliveries, std::shared_ptr<ClientErrorObserver> errors);
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);
  std::shared_ptr<ClientErrorObserver> errors_;  ///< before rk_: outlives the client
  RdKafkaPtr rk_;
  Deliveries deliveries_;
  std::atomic<bool> stop_{false};
  std::thread poller_;  ///< Deliveries::PollThread only
  std::mutex topics_mu_;
  std::unordered_map<std::string, rd_kafka_topic_t*> topics_;  ///< guarded by topics_mu_
};

/// Reads every partition of one topic from the beginning with an assigned
/// (group-less) consumer. Used by the stores to rebuild their caches.
/// Not thread-safe: the owning store serialises calls.
class TopicReader {
 public:
  /// One consumed record. `value` nullopt = tombstone.
  struct Record {
    int32_t partition = 0;
    int64_t offset = 0;
    std::optional<std::string> key;
    std::optional<std::string> value;
    RecordHeaders headers;  ///< in order; empty when none
  };

  /// Looks up the topic's partitions (blocking metadata request, up to
  /// `timeout_ms`) and assigns all of them at the beginning.
  /// Errors if the topic does not exist or metadata times out.
  /// `errors` (may be null) observes the consumer's librdkafka errors
  /// (make_client) and the topic errors read_to_end meets; the reader
  /// keeps it alive until its client is destroyed.
  static Result<std::unique_ptr<TopicReader>> open(const ClientProps& props, const std::string& topic,
                                                   int timeout_ms,
                                                   std::shared_ptr<ClientErrorObserver> errors = nullptr);
  ~TopicReader();

  /// Number of partitions of the topic.
  int partition_count() const { return static_cast<int>(next_.size()); }

  /// Consumes until every partition's position reaches the high watermark
  /// observed at the start of the call, handing each record to `fn` in
  /// partition order. Blocking, up to `timeout_ms`. Errors on timeout or a
  /// consumer error; records already handed over stay handed over.
  Status read_to_end(int timeout_ms, const std::function<void(const Record&)>& fn);

 private:
  TopicReader() = default;
  std::shared_ptr<ClientErrorObserver> errors_;  ///< before rk_: outlives the client
  RdKafkaPtr rk_;
  std::string topic_;
  std::vector<int64_t> next_;  ///< next offset to read, per partition
};

/// Logs the one line a reader of internal topic `topic` writes for a record
/// it skips: "<topic> partition <p> offset <o>: skipping record with key
/// '<printable_key>': <why>" (warning level). Never logs the value: config
/// and offset values may hold secrets.
void log_skipped_record(std::string_view topic, const TopicReader::Record& record, std::string_view why);

/// reader.read_to_end for an internal topic (config, offsets, status):
/// `apply` runs for each record; a record it throws on is skipped with
/// log_skipped_record (the exception's text as the reason), so one bad
/// record never stops a read or reaches the caller's thread. Blocking, as
/// TopicReader::read_to_end.
Status read_internal_topic(TopicReader& reader, std::string_view topic, int timeout_ms,
                           const std::function<void(const TopicReader::Record&)>& apply);

/// Shares reads to the end of a topic among concurrent callers. A caller is
/// answered by the first read that starts after its call, so it sees every
/// record written before the call (what Connect's KafkaBasedLog::readToEnd
/// promises); callers that arrive while a read is under way all wait for
/// the next one and share it. So 100 tasks starting at once cost two reads,
/// not 100 serialised ones. Thread-safe; one read runs at a time.
class SharedReadToEnd {
 public:
  /// Runs `read` (or waits for a read that started after this call) and
  /// returns that read's result. Waits at most `timeout_ms` for another
  /// caller's read; `read` itself is given the caller's own timeout. Errors:
  /// the read's, or a timeout while waiting for another caller's read.
  Status run(int timeout_ms, const std::function<Status()>& read);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool reading_ = false;
  uint64_t started_ = 0;   ///< reads started so far
  uint64_t finished_ = 0;  ///< number of the last read that finished
  Status last_ = ok_status();  ///< result of read number finished_
};

/// Number of partitions of `topic`, or nullopt if the cluster does not know
/// it. Blocking metadata request (all topics, so nothing is auto-created).
Result<std::optional<int>> topic_partition_count(rd_kafka_t* rk, const std::string& topic, int timeout_ms);

/// Desired settings for an internal topic (5.4).
struct TopicSpec {
  std::string name;
  int partitions = 1;          ///< -1 = broker default
  int replication_factor = 3;  ///< -1 = broker default
  std::map<std::string, std::string> configs{{"cleanup.policy", "compact"}};
};

/// Makes sure `spec.name` exists and returns its partition count. If it is
/// missing, creates it with CreateTopics (TOPIC_ALREADY_EXISTS counts as
/// success). If the broker has no CreateTopics (librdkafka's mock cluster),
/// the topic must already exist; otherwise the error says so. Blocking.
Result<int> ensure_topic(const ClientProps& props, const TopicSpec& spec, int timeout_ms);

/// Same, through an existing client handle (saves creating and destroying a
/// client, which costs about a second in librdkafka).
Result<int> ensure_topic(rd_kafka_t* rk, const TopicSpec& spec, int timeout_ms);

/// The Kafka cluster id the client's broker reports (Metadata v2+), or ""
/// when it is unknown within `timeout_ms`. Blocking.
std::string cluster_id(rd_kafka_t* rk, int timeout_ms);

/// The producer and the whole-topic reader of one internal topic (config,
/// offsets or status), and its partition count. Both clients share one
/// ClientErrorObserver (each keeps it alive), whose fatal causes are logged
/// at error level, one line per cause: "<topic>: <classified line>".
struct InternalTopic {
  std::unique_ptr<Producer> producer;
  std::unique_ptr<TopicReader> reader;
  int partitions = 0;
};

/// Opens an internal topic the way every backing store does: a producer
/// (`client` + `producer_overrides`), ensure_topic(spec), then a reader
/// (`client` + `reader_overrides`). A non-empty `client_id` (e.g.
/// "<group.id>-offsets", Connect's naming) is set on both clients.
/// `check(partitions)` may refuse the topic before the reader opens.
/// Both clients feed one ClientErrorObserver; a fatal cause it classifies
/// (credentials, TLS, an ACL removed while the worker runs) is logged once
/// at error level as "<topic>: <classified line>", and a failing step
/// returns that line instead of its own (usually a timeout).
/// Blocking, each step up to `timeout_ms`. Errors: the failing step's.
Result<InternalTopic> open_internal_topic(const ClientProps& client, const TopicSpec& spec,
                                          const std::string& client_id, ClientProps producer_overrides,
                                          ClientProps reader_overrides, int timeout_ms,
                                          const std::function<Status(int)>& check = {});

}  // namespace kc::storage
