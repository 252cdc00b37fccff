#pragma once
// librdkafka's transactional producer as exactly-once source tasks and
// zombie fencing use it (KIP-618): one transactional.id per source task,
// `<group.id>-<connector>-<task>` as Connect names it, and the error classes
// of librdkafka's transactions API (retriable, abortable, fatal/fenced).
// All calls block: run them on a task thread or a worker pool thread, never
// on the herder's io_context.

#include <memory>
#include <optional>
#include <string>

#include <librdkafka/rdkafka.h>

#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/storage/kafka_client.h"

namespace kc::storage {

/// Connect's transactional id of a source task under exactly-once support:
/// "<group.id>-<connector>-<task>" (Worker.taskTransactionalId).
std::string task_transactional_id(const std::string& group_id, const connect::ConnectorTaskId& id);

/// How a transactions API call failed. librdkafka's classes: a retriable
/// call may simply be made again; an abortable one needs
/// rd_kafka_abort_transaction() before the next transaction; a fatal one
/// (the producer was fenced by a newer one with the same transactional id:
/// PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, or librdkafka's __FENCED)
/// leaves the producer unusable.
struct TxnError {
  enum class Kind { Retriable, Abortable, Fatal };
  Kind kind = Kind::Fatal;
  rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;  ///< librdkafka's text

  /// A fatal error caused by fencing (a newer producer owns the id).
  bool fenced() const;
  /// "<call> failed (<fatal|abortable|retriable>, <ERR_NAME>): <message>".
  std::string to_string(const std::string& call) const;
};

/// The outcome of one transactions API call: nullopt = success.
using TxnResult = std::optional<TxnError>;

/// A producer with a transactional.id whose delivery reports are served by
/// the caller (Producer::Deliveries::Caller): the owning task thread.
/// Not thread-safe beyond what Producer is; one owner thread.
class TransactionalProducer {
 public:
  /// Creates the producer with `transactional.id` = `transactional_id` (and
  /// the idempotence and acks=all it implies) on top of `props` and
  /// `overrides`. Non-blocking. Errors: librdkafka's config errors.
  /// `errors` (may be null) observes its librdkafka errors (Producer::create).
  static Result<std::unique_ptr<TransactionalProducer>> create(const ClientProps& props, ClientProps overrides,
                                                               const std::string& transactional_id,
                                                               std::shared_ptr<ClientErrorObserver> errors = nullptr);

  /// rd_kafka_init_transactions: gets a producer id and epoch from the
  /// transaction coordinator, which aborts the id's open transaction and
  /// fences any older producer that uses the same id. Blocking, up to
  /// `timeout_ms`.
  TxnResult init(int timeout_ms);
  /// rd_kafka_begin_transaction (local, non-blocking).
  TxnResult begin();
  /// rd_kafka_commit_transaction: flushes every record sent in the
  /// transaction, then commits it. Blocking, up to `timeout_ms`.
  TxnResult commit(int timeout_ms);
  /// rd_kafka_abort_transaction: purges and aborts. Blocking, up to `timeout_ms`.
  TxnResult abort(int timeout_ms);
  /// The producer's fatal error (rd_kafka_fatal_error), e.g. after a produce
  /// was fenced; nullopt while it is usable. Non-blocking.
  TxnResult fatal_error() const;

  /// The producer, for send_view / topic / serve_deliveries.
  Producer& producer() { return *producer_; }
  /// The transactional id.
  const std::string& transactional_id() const { return transactional_id_; }

 private:
  TransactionalProducer(std::unique_ptr<Producer> p, std::string id)
      : producer_(std::move(p)), transactional_id_(std::move(id)) {}
  std::unique_ptr<Producer> producer_;
  std::string transactional_id_;
};

/// Fences out every producer that uses `transactional_id` (zombie fencing,
/// KIP-618): init_transactions on a fresh producer with that id bumps the
/// id's epoch at the coordinator and aborts its open transaction, so an
/// older instance can neither produce nor commit again. librdkafka 2.0 has
/// no Admin fenceProducers; this is its equivalent. Blocking, up to
/// `timeout_ms`. Errors: creation or init_transactions failure (the message
/// names the id).
Status fence_transactional_id(const ClientProps& props, const std::string& transactional_id, int timeout_ms);

}  // namespace kc::storage
