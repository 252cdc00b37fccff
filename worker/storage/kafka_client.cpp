#include "worker/storage/kafka_client.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "common/secrets.h"
#include "worker/storage/broker_check.h"
#include "worker/storage/client_logging.h"
#include "worker/storage/records.h"

namespace kc::storage {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

Error kafka_error(const std::string& what, rd_kafka_resp_err_t err) {
  return Error{what, rd_kafka_err2str(err)};
}

}  // namespace

void RdKafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk) rd_kafka_destroy(rk);
}

Result<RdKafkaPtr> make_client(rd_kafka_type_t type, const ClientProps& props, const ClientProps& overrides,
                               const std::function<void(rd_kafka_conf_t*)>& customize,
                               std::optional<metrics::KafkaClientKind> kind, ClientErrorObserver* observer) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  ClientProps all = props;
  for (const auto& [k, v] : overrides) all[k] = v;
  // librdkafka's errstr may quote the value it refused ("Invalid value
  // \"...\" for configuration property ..."): secrets are scrubbed out.
  const auto hidden = secrets::secret_values(all);
  for (const auto& [k, v] : all) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Error{k, secrets::scrub(errstr, hidden)};
    }
  }
  if (!kind) kind = type == RD_KAFKA_CONSUMER ? metrics::KafkaClientKind::Consumer : metrics::KafkaClientKind::Producer;
  route_client_logs(conf, *kind, all, observer);
  if (customize) customize(conf);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);  // takes conf on success
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    return Error{"librdkafka", secrets::scrub(errstr, hidden)};
  }
  return RdKafkaPtr(rk);
}

// ------------------------------------------------------------------ Producer

Producer::Producer(RdKafkaPtr rk, Deliveries deliveries, std::shared_ptr<ClientErrorObserver> errors)
    : errors_(std::move(errors)), rk_(std::move(rk)), deliveries_(deliveries) {
  if (deliveries == Deliveries::PollThread) {
    poller_ = std::thread([this] {
      while (!stop_.load()) rd_kafka_poll(rk_.get(), 50);
    });
  }
}

Producer::~Producer() {
  rd_kafka_flush(rk_.get(), 2000);
  rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_flush(rk_.get(), 500);  // serves the purged records' callbacks
  stop_.store(true);
  if (poller_.joinable()) poller_.join();
  for (auto& [_, rkt] : topics_) rd_kafka_topic_destroy(rkt);
}

namespace {
/// A send()'s Callback as a Delivery: runs it once, then deletes itself.
class CallbackDelivery final : public Producer::Delivery {
 public:
  explicit CallbackDelivery(Producer::Callback cb) : cb_(std::move(cb)) {}
  void delivered(rd_kafka_resp_err_t err) override {
    if (err) cb_(Error{"produce", rd_kafka_err2str(err)});
    else cb_(std::nullopt);
    delete this;
  }
  /// Frees it without running the callback (the record was not queued).
  void discard() { delete this; }

 private:
  ~CallbackDelivery() = default;
  Producer::Callback cb_;
};
}  // namespace

void Producer::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  // The conf opaque is the observer when the producer has one. Broker
  // errors only (codes > 0): the local ones (timeouts, purges) say nothing
  // of credentials or ACLs.
  if (opaque && msg->err > 0 && msg->rkt)
    static_cast<ClientErrorObserver*>(opaque)->record_topic_error(rd_kafka_topic_name(msg->rkt), msg->err);
  if (auto* d = static_cast<Delivery*>(msg->_private)) d->delivered_message(msg);
}

Result<std::unique_ptr<Producer>> Producer::create(const ClientProps& props, const ClientProps& overrides,
                                                   Deliveries deliveries, std::shared_ptr<ClientErrorObserver> errors) {
  auto rk = make_client(
      RD_KAFKA_PRODUCER, props, overrides,
      [](rd_kafka_conf_t* conf) { rd_kafka_conf_set_dr_msg_cb(conf, &Producer::on_delivery); }, std::nullopt,
      errors.get());
  if (!rk) return rk.error();
  return std::unique_ptr<Producer>(new Producer(std::move(rk).value(), deliveries, std::move(errors)));
}

rd_kafka_headers_t* to_rd_headers(const RecordHeaders* headers) {
  if (!headers || headers->empty()) return nullptr;
  rd_kafka_headers_t* h = rd_kafka_headers_new(headers->size());
  for (const auto& [key, value] : *headers)
    rd_kafka_header_add(h, key.data(), static_cast<ssize_t>(key.size()), value ? value->data() : nullptr,
                        value ? static_cast<ssize_t>(value->size()) : 0);
  return h;
}

RecordHeaders headers_of(const rd_kafka_message_t* message) {
  RecordHeaders out;
  rd_kafka_headers_t* h = nullptr;
  if (rd_kafka_message_headers(message, &h) != RD_KAFKA_RESP_ERR_NO_ERROR || !h) return out;
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i)
    out.emplace_back(name, value ? std::optional<std::string>(std::string(static_cast<const char*>(value), size))
                                 : std::nullopt);
  return out;
}

namespace {

/// rd_kafka_producev with or without headers: RD_KAFKA_V_HEADERS hands
/// them over on success only, so they are freed here on failure.
template <typename... Args>
rd_kafka_resp_err_t produce_with(rd_kafka_t* rk, const RecordHeaders* headers, Args... args) {
  rd_kafka_headers_t* h = to_rd_headers(headers);
  if (!h) return rd_kafka_producev(rk, args..., RD_KAFKA_V_END);
  auto err = rd_kafka_producev(rk, args..., RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
  if (err) rd_kafka_headers_destroy(h);
  return err;
}

}  // namespace

Status Producer::send(const std::string& topic, const std::optional<std::string>& key,
                      const std::optional<std::string>& value, Callback cb, int32_t partition,
                      const RecordHeaders* headers, int64_t timestamp_ms) {
  auto* opaque = new CallbackDelivery(std::move(cb));
  void* key_ptr = key ? const_cast<char*>(key->data()) : nullptr;
  size_t key_len = key ? key->size() : 0;
  void* val_ptr = value ? const_cast<char*>(value->data()) : nullptr;
  size_t val_len = value ? value->size() : 0;
  for (int attempt = 0;; ++attempt) {
    rd_kafka_resp_err_t err = produce_with(
        rk_.get(), headers, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key_ptr, key_len), RD_KAFKA_V_VALUE(val_ptr, val_len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_OPAQUE(static_cast<Delivery*>(opaque)));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return ok_status();
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && attempt < 500) {
      // Stays a sleep: librdkafka signals no "queue has room"; the poll thread drains it.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    opaque->discard();
    return kafka_error("produce " + topic, err);
  }
}

rd_kafka_topic_t* Producer::topic(const std::string& name) {
  std::lock_guard lk(topics_mu_);
  auto [it, inserted] = topics_.try_emplace(name, nullptr);
  if (inserted) it->second = rd_kafka_topic_new(rk_.get(), name.c_str(), nullptr);
  return it->second;
}

Status Producer::send_view(rd_kafka_topic_t* topic, std::optional<std::string_view> key,
                           std::optional<std::string_view> value, Delivery* delivery, int32_t partition,
                           int64_t timestamp_ms, const RecordHeaders* headers) {
  void* key_ptr = key ? const_cast<char*>(key->data()) : nullptr;
  void* val_ptr = value ? const_cast<char*>(value->data()) : nullptr;
  const size_t key_len = key ? key->size() : 0;
  const size_t val_len = value ? value->size() : 0;
  for (int attempt = 0;; ++attempt) {
    rd_kafka_resp_err_t err = produce_with(
        rk_.get(), headers, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_KEY(key_ptr, key_len),
        RD_KAFKA_V_VALUE(val_ptr, val_len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_OPAQUE(delivery));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return ok_status();
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && attempt < kQueueFullWaits) {
      wait_for_room();
      continue;
    }
    return kafka_error(std::string("produce ") + rd_kafka_topic_name(topic), err);
  }
}

void Producer::wait_for_room() {
  // Delivered records leave the queue once their reports are served: by
  // this thread (Caller) or by the poll thread, which alone runs the
  // Deliveries of a shared producer.
  if (deliveries_ == Deliveries::Caller) rd_kafka_poll(rk_.get(), 1);
  else std::this_thread::sleep_for(std::chrono::milliseconds(1));  // no "queue has room" event to wait on
}

Status Producer::send_batch(rd_kafka_topic_t* topic, std::span<rd_kafka_message_t> msgs, size_t& queued) {
  queued = 0;
  size_t from = 0;
  for (int attempt = 0; from < msgs.size();) {
    rd_kafka_produce_batch(topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY | RD_KAFKA_MSG_F_PARTITION,
                           msgs.data() + from, static_cast<int>(msgs.size() - from));
    // A full queue fails that record and every one after it; other errors
    // fail their own record only.
    size_t full_at = msgs.size();
    rd_kafka_resp_err_t refused = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (size_t i = from; i < msgs.size(); ++i) {
      const auto err = msgs[i].err;
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) ++queued;
      else if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) full_at = std::min(full_at, i);
      else if (!refused) refused = err;
    }
    if (refused) return kafka_error(std::string("produce ") + rd_kafka_topic_name(topic), refused);
    if (full_at == msgs.size()) return ok_status();
    if (++attempt > kQueueFullWaits)
      return kafka_error(std::string("produce ") + rd_kafka_topic_name(topic), RD_KAFKA_RESP_ERR__QUEUE_FULL);
    from = full_at;
    wait_for_room();
  }
  return ok_status();
}

Status Producer::send_and_wait(const std::string& topic,
                               const std::vector<std::pair<std::string, std::optional<std::string>>>& records,
                               int timeout_ms) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    size_t remaining = 0;
    std::optional<Error> error;
  };
  auto shared = std::make_shared<Shared>();
  shared->remaining = records.size();
  for (const auto& [key, value] : records) {
    auto st = send(topic, key, value, [shared](std::optional<Error> e) {
      std::lock_guard lk(shared->mu);
      if (e && !shared->error) shared->error = std::move(e);
      if (--shared->remaining == 0) shared->cv.notify_all();
    });
    if (!st) {
      std::lock_guard lk(shared->mu);
      if (!shared->error) shared->error = st.error();
      if (--shared->remaining == 0) shared->cv.notify_all();
    }
  }
  std::unique_lock lk(shared->mu);
  if (!shared->cv.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return shared->remaining == 0; }))
    return Error{"produce " + topic, "timed out after " + std::to_string(timeout_ms) + " ms waiting for acks"};
  if (shared->error) return *shared->error;
  return ok_status();
}

Status Producer::flush(int timeout_ms) {
  auto err = rd_kafka_flush(rk_.get(), timeout_ms);
  if (err) return kafka_error("flush", err);
  return ok_status();
}

// ------------------------------------------------------------------ metadata / topics

Result<std::optional<int>> topic_partition_count(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(rk, 1, nullptr, &md, timeout_ms);
  if (err) return kafka_error("metadata", err);
  std::optional<int> count;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (topic == t.topic && t.err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partition_cnt > 0) count = t.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  return count;
}

Result<int> ensure_topic(const ClientProps& props, const TopicSpec& spec, int timeout_ms) {
  auto rk = make_admin_client(props);
  if (!rk) return rk.error();
  return ensure_topic(rk->get(), spec, timeout_ms);
}

Result<int> ensure_topic(rd_kafka_t* handle, const TopicSpec& spec, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  struct Borrowed {
    rd_kafka_t* p;
    rd_kafka_t* get() const { return p; }
  } b{handle};
  auto* rk = &b;
  auto existing = topic_partition_count(rk->get(), spec.name, remaining_ms(deadline));
  if (!existing) return existing.error();
  if (*existing) return **existing;

  char errstr[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions, spec.replication_factor,
                                                  errstr, sizeof errstr);
  if (!nt) return Error{spec.name, errstr};
  for (const auto& [k, v] : spec.configs) rd_kafka_NewTopic_set_config(nt, k.c_str(), v.c_str());
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk->get());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(opts, std::max(1, remaining_ms(deadline)), errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk->get(), &nt, 1, opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, std::max(1, remaining_ms(deadline)));
  std::optional<Error> failure;
  if (!ev) {
    failure = Error{spec.name, "CreateTopics timed out"};
  } else if (rd_kafka_event_error(ev)) {
    failure = Error{spec.name, std::string("topic does not exist and could not be created (") +
                                   rd_kafka_event_error_string(ev) +
                                   "); create it first (librdkafka's mock cluster has no CreateTopics)"};
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    for (size_t i = 0; i < n; ++i) {
      auto e = rd_kafka_topic_result_error(res[i]);
      if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        const char* msg = rd_kafka_topic_result_error_string(res[i]);
        failure = Error{spec.name, std::string("CreateTopics failed: ") + (msg ? msg : rd_kafka_err2str(e))};
      }
    }
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  if (failure) return *failure;
  spdlog::info("created topic {} (partitions {}, replication factor {})", spec.name, spec.partitions,
               spec.replication_factor);
  // Metadata can lag creation for a moment.
  while (true) {
    auto count = topic_partition_count(rk->get(), spec.name, std::max(1, remaining_ms(deadline)));
    if (count && *count) return **count;
    if (remaining_ms(deadline) == 0) return Error{spec.name, "created but not visible in metadata in time"};
    // Stays a sleep: no event tells when a new topic reaches the metadata.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// ------------------------------------------------------------------ SharedReadToEnd

Status SharedReadToEnd::run(int timeout_ms, const std::function<Status()>& read) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock lk(mu_);
  const uint64_t wanted = started_ + 1;  // the first read that starts after this call
  while (finished_ < wanted) {
    if (!reading_) {
      reading_ = true;
      const uint64_t mine = ++started_;
      lk.unlock();
      Status st = ok_status();
      try {
        st = read();
      } catch (...) {
        lk.lock();
        reading_ = false;
        cv_.notify_all();
        throw;
      }
      lk.lock();
      reading_ = false;
      finished_ = mine;
      last_ = st;
      cv_.notify_all();
      continue;
    }
    if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && finished_ < wanted && reading_)
      return Error{"read to end", "timed out after " + std::to_string(timeout_ms) +
                                      " ms waiting for another caller's read to the end"};
  }
  return last_;
}

// ------------------------------------------------------------------ TopicReader

Result<std::unique_ptr<TopicReader>> TopicReader::open(const ClientProps& props, const std::string& topic,
                                                       int timeout_ms, std::shared_ptr<ClientErrorObserver> errors) {
  // A group id is needed for rd_kafka_consumer_poll, but this reader never
  // subscribes or commits: partitions are assigned by hand.
  ClientProps overrides{{"enable.auto.commit", "false"},
                        {"enable.auto.offset.store", "false"},
                        {"enable.partition.eof", "true"},
                        {"auto.offset.reset", "earliest"},
                        // read_to_end waits on the fetch in flight. The embedded
                        // mock broker answers an empty fetch only after this
                        // wait, even if records arrive meanwhile: with the
                        // default 500 ms a moved task's start (its offsets
                        // read) took 450-950 ms (bench/cluster/join_floor).
                        // Kafka answers when data arrives; here it costs up
                        // to 20 idle fetches a second per internal topic.
                        {"fetch.wait.max.ms", "50"}};
  // Always our own id: the worker's group.id names the Connect group, which
  // this consumer must never join.
  overrides["group.id"] = "kconnectd-internal-reader";
  auto rk = make_client(RD_KAFKA_CONSUMER, props, overrides, {}, std::nullopt, errors.get());
  if (!rk) return rk.error();
  std::unique_ptr<TopicReader> r(new TopicReader());
  r->errors_ = std::move(errors);  // set before rk_: destroyed after the client
  r->rk_ = std::move(rk).value();
  auto count = topic_partition_count(r->rk_.get(), topic, timeout_ms);
  if (!count) return count.error();
  if (!*count) return Error{topic, "topic does not exist"};
  r->topic_ = topic;
  r->next_.assign(static_cast<size_t>(**count), 0);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(**count);
  for (int p = 0; p < **count; ++p)
    rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  auto err = rd_kafka_assign(r->rk_.get(), parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err) return kafka_error("assign " + topic, err);
  return r;
}

TopicReader::~TopicReader() {
  if (rk_) rd_kafka_consumer_close(rk_.get());
}

Status TopicReader::read_to_end(int timeout_ms, const std::function<void(const Record&)>& fn) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto n = next_.size();
  std::vector<int64_t> target(n, 0);
  std::vector<bool> done(n, false);
  // One ListOffsets round (timestamp -1 = latest) for every partition.
  rd_kafka_topic_partition_list_t* ends = rd_kafka_topic_partition_list_new(static_cast<int>(n));
  for (size_t p = 0; p < n; ++p)
    rd_kafka_topic_partition_list_add(ends, topic_.c_str(), static_cast<int32_t>(p))->offset = RD_KAFKA_OFFSET_END;
  auto err = rd_kafka_offsets_for_times(rk_.get(), ends, std::max(1, remaining_ms(deadline)));
  if (err) {
    rd_kafka_topic_partition_list_destroy(ends);
    return kafka_error("end offsets of " + topic_, err);
  }
  for (int i = 0; i < ends->cnt; ++i) {
    auto p = static_cast<size_t>(ends->elems[i].partition);
    if (p >= n) continue;
    if (ends->elems[i].err) {
      auto e = ends->elems[i].err;
      rd_kafka_topic_partition_list_destroy(ends);
      return kafka_error("end offset of " + topic_ + "-" + std::to_string(p), e);
    }
    target[p] = std::max<int64_t>(0, ends->elems[i].offset);
    // Done if already there. Gaps (compaction, markers) below the end are
    // closed by the partition-EOF event, which reports the position.
    done[p] = next_[p] >= target[p];
  }
  rd_kafka_topic_partition_list_destroy(ends);
  auto all_done = [&] { return std::all_of(done.begin(), done.end(), [](bool b) { return b; }); };
  while (!all_done()) {
    int left = remaining_ms(deadline);
    if (left == 0)
      return Error{topic_, "timed out after " + std::to_string(timeout_ms) + " ms reading to the end"};
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_.get(), std::min(left, 100));
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      auto p = static_cast<size_t>(m->partition);
      if (p < n) {
        next_[p] = std::max(next_[p], m->offset);
        if (next_[p] >= target[p]) done[p] = true;
      }
    } else if (m->err) {
      spdlog::warn("reading {}: {}", topic_, rd_kafka_message_errstr(m));
      if (errors_ && m->err > 0) errors_->record_topic_error(topic_, m->err);
    } else {
      auto p = static_cast<size_t>(m->partition);
      Record r;
      r.partition = m->partition;
      r.offset = m->offset;
      if (m->key) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) r.value = std::string(static_cast<const char*>(m->payload), m->len);
      else r.value = std::nullopt;
      r.headers = headers_of(m);
      if (p < n) {
        next_[p] = m->offset + 1;
        if (next_[p] >= target[p]) done[p] = true;
      }
      fn(r);
    }
    rd_kafka_message_destroy(m);
  }
  return ok_status();
}

std::string cluster_id(rd_kafka_t* rk, int timeout_ms) {
  char* id = rd_kafka_clusterid(rk, timeout_ms);
  if (id == nullptr) return {};
  std::string out(id);
  rd_kafka_mem_free(rk, id);
  return out;
}

Result<InternalTopic> open_internal_topic(const ClientProps& client, const TopicSpec& spec,
                                          const std::string& client_id, ClientProps producer_overrides,
                                          ClientProps reader_overrides, int timeout_ms,
                                          const std::function<Status(int)>& check) {
  InternalTopic out;
  ClientProps reader_props = client;
  for (const auto& [k, v] : reader_overrides) reader_props[k] = v;
  if (!client_id.empty()) {
    producer_overrides["client.id"] = client_id;
    reader_props["client.id"] = client_id;
  }
  // One observer for both clients (their security settings are the same):
  // a cause no retry fixes is logged once, whichever client meets it, and
  // the worker goes on (the stores retry; an operator can fix the ACL).
  ClientProps merged = client;
  for (const auto& [k, v] : producer_overrides) merged[k] = v;
  auto errors = std::make_shared<ClientErrorObserver>(merged);
  errors->on_fatal([topic = spec.name](const BrokerCheckVerdict& v) { spdlog::error("{}: {}", topic, v.message); });
  // A step that failed because of such a cause says so, not "timed out".
  auto failed = [&](const Error& e) -> Error {
    if (auto v = errors->fatal()) return Error{spec.name, v->message};
    return e;
  };
  auto producer = Producer::create(client, producer_overrides, Producer::Deliveries::PollThread, errors);
  if (!producer) return producer.error();
  out.producer = std::move(producer).value();
  auto count = ensure_topic(out.producer->handle(), spec, timeout_ms);
  if (!count) return failed(count.error());
  out.partitions = *count;
  if (check) {
    if (auto st = check(*count); !st) return st.error();
  }
  auto reader = TopicReader::open(reader_props, spec.name, timeout_ms, errors);
  if (!reader) return failed(reader.error());
  out.reader = std::move(reader).value();
  return out;
}

void log_skipped_record(std::string_view topic, const TopicReader::Record& record, std::string_view why) {
  spdlog::warn("{} partition {} offset {}: skipping record with key '{}': {}", topic, record.partition, record.offset,
               record.key ? printable_key(*record.key) : std::string("(null)"), why);
}

Status read_internal_topic(TopicReader& reader, std::string_view topic, int timeout_ms,
                           const std::function<void(const TopicReader::Record&)>& apply) {
  return reader.read_to_end(timeout_ms, [&](const TopicReader::Record& r) {
    try {
      apply(r);
    } catch (const std::exception& e) {
      log_skipped_record(topic, r, std::string("cannot be applied: ") + e.what());
    }
  });
}

}  // namespace kc::storage
