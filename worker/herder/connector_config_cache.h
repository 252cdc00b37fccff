#pragma once
// ConnectorConfigCache: this worker's parsed connector configs (STYLE 14,
// "parse once at the edge"). A connector's config is read once where it
// enters the worker, when its `connector-<name>` record is read from the
// config topic (on the herder's pool; config_log.cpp), into a
// runtime::ConnectorConfig (providers resolved, then typed), and that one
// value is handed to the connector's start, every task start on this worker,
// the leader's task-config generation and the offsets API.
//
// An entry is keyed by the config as written (the raw map): a use with a
// different raw map (a newer config) parses again and replaces the entry. A
// resolve failure is returned and not stored, so the next use tries again
// (a fixed provider file is picked up as before). drop() forgets an entry:
// the connector was removed, or is restarted explicitly (REST restart,
// KIP-745 request) so that a rotated secret is resolved again.
//
// Threads: every method is thread-safe. get() blocks while it resolves
// (provider reads) and must run on the pool or the apply strand, never on
// the io thread. `mu_` guards the map only: it is never held while a
// config is read; a second get() of the same raw map while the first reads
// waits for that read (one resolution, one shared value).

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/result.h"
#include "worker/runtime/connector_config.h"

namespace kc::herder {

/// See file comment.
class ConnectorConfigCache {
 public:
  using ConfigMap = connectors::ConfigMap;
  /// A connector's config read and parsed, or why it could not be read
  /// (a provider failed, naming the key).
  using Parsed = Result<runtime::ConnectorConfigPtr>;
  /// Reads connector `name`'s config as written into its parsed form
  /// (runtime::Worker::read_connector_config). Blocking; called without
  /// the cache's lock, from any thread.
  using Reader = std::function<Parsed(const std::string& name, const ConfigMap& raw)>;

  /// An empty cache whose misses call `read`.
  explicit ConnectorConfigCache(Reader read);

  /// Connector `name`'s config `raw`, parsed: the stored value when it was
  /// parsed from this same raw map (the same shared_ptr each time), else
  /// read now and stored (replacing an entry of another raw map). Errors:
  /// the reader's, not stored. Blocking while it reads (see file comment).
  Parsed get(const std::string& name, const ConfigMap& raw);

  /// Forgets `name`'s entry (removed connector, explicit restart); a read
  /// under way for it completes for its callers but is not kept.
  void drop(const std::string& name);

  /// Number of connectors with an entry (parsed or being read). For tests.
  size_t size() const;

  /// Number of reads started so far (reader calls). For tests.
  int64_t reads() const;

 private:
  struct Entry {
    ConfigMap raw;                          ///< the config as written it was read from
    std::shared_future<Parsed> parsed;      ///< ready once read
  };

  Reader read_;
  mutable std::mutex mu_;  ///< guards entries_ and reads_; never held while reading
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  int64_t reads_ = 0;
};

}  // namespace kc::herder
