// DistributedHerder: see distributed_herder.h and README.md. This file holds the
// public object's lifecycle and accessors; Impl's steps live in the files named in herder_impl.h.
#include "worker/herder/herder_impl.h"

namespace kc::herder {

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
         impl_->abandoned_calls->count(kValidateKey);
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

}  // namespace kc::herder
