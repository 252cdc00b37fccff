#include "worker/storage/transactional_producer.h"

namespace kc::storage {

std::string task_transactional_id(const std::string& group_id, const connect::ConnectorTaskId& id) {
  return group_id + "-" + id.connector + "-" + std::to_string(id.task);
}

bool TxnError::fenced() const {
  return kind == Kind::Fatal &&
         (code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
          code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH);
}

std::string TxnError::to_string(const std::string& call) const {
  const char* k = kind == Kind::Fatal ? "fatal" : kind == Kind::Abortable ? "abortable" : "retriable";
  return call + " failed (" + k + ", " + rd_kafka_err2name(code) + "): " + message;
}

namespace {

/// Takes over `e` (destroys it) and classifies it; nullopt for no error.
TxnResult classify(rd_kafka_error_t* e) {
  if (!e) return std::nullopt;
  TxnError out;
  out.code = rd_kafka_error_code(e);
  out.message = rd_kafka_error_string(e);
  if (rd_kafka_error_is_fatal(e)) out.kind = TxnError::Kind::Fatal;
  else if (rd_kafka_error_txn_requires_abort(e)) out.kind = TxnError::Kind::Abortable;
  else if (rd_kafka_error_is_retriable(e)) out.kind = TxnError::Kind::Retriable;
  else out.kind = TxnError::Kind::Abortable;  // e.g. a timeout of commit: abort, then start over
  rd_kafka_error_destroy(e);
  return out;
}

}  // namespace

Result<std::unique_ptr<TransactionalProducer>> TransactionalProducer::create(const ClientProps& props,
                                                                             ClientProps overrides,
                                                                             const std::string& transactional_id,
                                                                             std::shared_ptr<ClientErrorObserver> errors) {
  overrides["transactional.id"] = transactional_id;
  overrides["acks"] = "all";
  overrides["enable.idempotence"] = "true";
  auto p = Producer::create(props, overrides, Producer::Deliveries::Caller, std::move(errors));
  if (!p) return p.error();
  return std::unique_ptr<TransactionalProducer>(new TransactionalProducer(std::move(p).value(), transactional_id));
}

TxnResult TransactionalProducer::init(int timeout_ms) {
  return classify(rd_kafka_init_transactions(producer_->handle(), timeout_ms));
}
TxnResult TransactionalProducer::begin() { return classify(rd_kafka_begin_transaction(producer_->handle())); }
TxnResult TransactionalProducer::commit(int timeout_ms) {
  return classify(rd_kafka_commit_transaction(producer_->handle(), timeout_ms));
}
TxnResult TransactionalProducer::abort(int timeout_ms) {
  return classify(rd_kafka_abort_transaction(producer_->handle(), timeout_ms));
}

TxnResult TransactionalProducer::fatal_error() const {
  char buf[512];
  rd_kafka_resp_err_t code = rd_kafka_fatal_error(producer_->handle(), buf, sizeof buf);
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  return TxnError{TxnError::Kind::Fatal, code, buf};
}

Status fence_transactional_id(const ClientProps& props, const std::string& transactional_id, int timeout_ms) {
  ClientProps overrides{{"client.id", "zombie-fencer-" + transactional_id}};
  auto p = TransactionalProducer::create(props, overrides, transactional_id);
  if (!p) return Error{"fence", "transactional id " + transactional_id + ": " + p.error().to_string()};
  if (auto e = p.value()->init(timeout_ms))
    return Error{"fence", "transactional id " + transactional_id + ": " + e->to_string("init_transactions")};
  return ok_status();
}

}  // namespace kc::storage
