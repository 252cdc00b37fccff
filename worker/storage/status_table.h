#pragma once
// The status store's cache as a function of the records it read and the
// writes of its own not read back yet. No I/O, no clock, no locks: the
// status store guards it with its mutex, and tests drive it directly.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "protocol/connect/types.h"
#include "worker/storage/records.h"

namespace kc::storage {

/// The read rule for one connector or task key: whether `next`, read from
/// the topic, is a stale stop report and is skipped while `current` (the
/// value folded from the records before it) stands. It is: an UNASSIGNED
/// from one worker while another worker's status is current, that status
/// being RUNNING of a generation >= next's (Connect's rule) or of any state
/// from a strictly later generation (the late stop report of a worker that
/// was frozen and cut off, written after the new owner took over). The same
/// worker's UNASSIGNED always applies: it stopped what it had reported.
bool stale_stop_report(const StatusValue& current, const StatusValue& next);

/// Connect's putSafe: whether `next` may be written while `shown` is the
/// cached status of its key; not when `shown` is another worker's status of
/// a newer generation.
bool safe_to_write(const std::optional<StatusValue>& shown, const StatusValue& next);

/// The connector or the task a status key is about (exactly one is set).
struct StatusSubject {
  std::optional<std::string> connector;
  std::optional<connect::ConnectorTaskId> task;
};

/// Connector and task statuses of one status store.
///
/// Two layers per key:
///   * the folded value: every record read, in topic order, applied with
///     stale_stop_report to the folded value before it. Readers of the same
///     records fold to the same value, whatever they read in which batch and
///     whatever they wrote themselves;
///   * this store's own writes not read back yet: the newest one is shown
///     instead of the folded value (put_*() show at once), and none is ever
///     folded before it is read back in its place in the topic. Any record
///     read while a write is pending precedes that write in the topic.
/// Once every own write of a key is read back (or failed), the folded value
/// is shown: the same value on every reader.
class StatusTable {
 public:
  /// Applies one connector or task status record read from the topic: `raw`
  /// is its value (nullopt: a tombstone), `rec` its decoding. A record with
  /// the bytes of one of this table's pending writes of `key` is taken as
  /// that write read back: it and every older pending write of the key end.
  void read(const std::string& key, const std::optional<std::string>& raw, const StatusRecord& rec);
  /// Records a write of this store (`raw` the bytes sent, nullopt for a
  /// tombstone; `status` nullopt for a tombstone), shown until read back.
  void wrote(const std::string& key, const StatusSubject& subject, const std::optional<std::string>& raw,
             const std::optional<StatusValue>& status);
  /// Drops one pending write of `key` with the bytes `raw` (it failed for
  /// good, or was superseded and will not be retried). The shown value goes
  /// back to the newest pending write, or to the folded value.
  void write_failed(const std::string& key, const std::optional<std::string>& raw);

  /// Shown status of one connector.
  std::optional<StatusValue> connector(const std::string& connector) const;
  /// Shown status of one task.
  std::optional<StatusValue> task(const connect::ConnectorTaskId& id) const;
  /// Shown statuses of the tasks of `connector`, by task id.
  std::map<int32_t, StatusValue> tasks_of(const std::string& connector) const;
  /// Every shown connector status.
  const std::map<std::string, StatusValue>& connectors() const { return connectors_; }
  /// Every shown task status.
  const std::map<connect::ConnectorTaskId, StatusValue>& tasks() const { return tasks_; }
  /// Number of pending writes of `key` (for tests and logs).
  size_t pending(const std::string& key) const;

 private:
  struct Pending {
    std::optional<std::string> raw;
    std::optional<StatusValue> status;
  };
  struct OwnWrites {
    StatusSubject subject;
    std::deque<Pending> unread;  ///< send order
  };
  /// Recomputes the shown value of `subject` (key `key`) from both layers.
  void show(const std::string& key, const StatusSubject& subject);

  std::map<std::string, StatusValue> folded_connectors_;
  std::map<connect::ConnectorTaskId, StatusValue> folded_tasks_;
  std::map<std::string, StatusValue> connectors_;          ///< shown
  std::map<connect::ConnectorTaskId, StatusValue> tasks_;  ///< shown
  std::map<std::string, OwnWrites> own_;  ///< key → own writes not read back (never empty)
};

}  // namespace kc::storage
