#pragma once
// The last assignment of a static member (KIP-345 group.instance.id), kept
// in a small local file so that a restarted worker resumes exactly what it
// ran.
//
// Why a file: under the cooperative Connect protocols the leader's
// SyncGroup bytes for a member hold only what changed in that generation
// (newly assigned + revoked), not everything it owns. A static member that
// returns within session.timeout.ms gets, without a rebalance, the current
// generation and those same bytes back from the coordinator (the broker
// keeps each member's last assignment), which are not enough to know its
// whole share. The file holds that share (the merged local snapshot) with
// the generation and the bytes it came from; WorkerCoordinator restores it
// only when the coordinator hands back that very generation and those very
// bytes, i.e. when the leader still sees this member owning exactly that.
//
// Format: one JSON object {"format":1, "group_id", "group_instance_id",
// "generation", "member_id", "protocol", "snapshot": hex of the snapshot in
// Connect's assignment layout, "received": hex of the SyncGroup bytes,
// "url": the worker's advertised URL (optional; absent in older files)}.
//
// Dynamic members (no group.instance.id) keep the same record with
// group_instance_id "" and use it only to resume before their first
// JoinGroup after a crash (WorkerCoordinator::kept_for_early_resume); the
// coordinator touches the file's modification time every heartbeat
// interval while it owns work, so its age bounds how long the worker has
// been gone.
// Written to "<path>.tmp" then renamed over <path>, so a crash leaves the
// old or the new record, never half of one. No fsync: it must survive a
// process restart, which is what static membership covers, not a host crash
// (after which the worker rejoins and reports what it runs).
//
// Threading: no state of its own; the coordinator calls it on its io
// thread. A save is one write of well under a few KB per generation.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/connect/types.h"

namespace kc::coordinator {

/// One kept assignment (see file comment).
struct StaticAssignmentRecord {
  std::string group_id;           ///< group.id it belongs to
  std::string group_instance_id;  ///< group.instance.id it belongs to
  int32_t generation = -1;        ///< generation of the last completed SyncGroup
  std::string member_id;          ///< member id in that generation
  std::string protocol;           ///< selected Connect protocol name ("sessioned", ...)
  connect::Assignment snapshot;   ///< everything owned after that generation (merged)
  std::vector<uint8_t> received;  ///< that generation's SyncGroup assignment bytes, as received
  std::string url;                ///< advertised REST URL of the worker that kept it ("" = not recorded)

  bool operator==(const StaticAssignmentRecord&) const = default;
};

/// Serializes `r` to the file format (JSON text). Error: the snapshot cannot
/// be encoded in Connect's layout (an over-long name).
Result<std::string> format_static_assignment(const StaticAssignmentRecord& r);

/// Parses the file format. Errors name what is wrong (not JSON, unknown
/// format, a missing or mistyped field, bad hex, an undecodable snapshot).
Result<StaticAssignmentRecord> parse_static_assignment(const std::string& text);

/// Reads `path`. nullopt (no error) when the file does not exist; an error
/// when it cannot be read or parsed (the caller ignores such a file).
Result<std::optional<StaticAssignmentRecord>> load_static_assignment(const std::string& path);

/// Writes `r` to `path` atomically (tmp file + rename). Errors name the file
/// and the OS reason.
Status save_static_assignment(const std::string& path, const StaticAssignmentRecord& r);

/// Age of `path` in ms: now minus its last modification time (the last
/// save or touch). nullopt when the file does not exist or cannot be read.
std::optional<int64_t> static_assignment_age_ms(const std::string& path);

/// Sets the modification time of `path` to now, if it exists (the "still
/// alive" mark of a dynamic member's file). One utimensat call, no I/O of
/// the contents; errors are ignored (the next touch retries).
void touch_static_assignment(const std::string& path);

/// Deletes `path` if it exists (the member left, or dropped its assignment).
/// Errors name the file and the OS reason.
Status remove_static_assignment(const std::string& path);

}  // namespace kc::coordinator
