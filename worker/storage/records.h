#pragma once
// Pure encoders/decoders for the keys and values of Kafka Connect's three
// internal topics (connect-reference.md section 5). No I/O, no threads: the
// stores in this folder and the unit tests use them.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/storage/json_compact.h"

namespace kc::storage {

/// A connector or task configuration: string keys to string values, as in
/// Connect's `Map<String, String>`.
using ConfigMap = std::map<std::string, std::string>;

/// The Error::field of a write a store refused because some worker could not
/// read the record back (a bad connector name, invalid UTF-8, JSON too deep
/// or too big). Nothing was sent; retrying the same write fails the same
/// way, so the herder answers 400, never "timed out".
inline constexpr const char* kUnreadableRecordField = "internal topic record";

/// True if `e` is a refused write (see kUnreadableRecordField).
inline bool is_unreadable_record_error(const Error& e) { return e.field == kUnreadableRecordField; }

// ---------------------------------------------------------------- config topic

/// Connector target state as stored in `target-state-<name>` records.
enum class TargetState {
  Started,  ///< running (the default when no target-state record exists)
  Paused,   ///< connector and tasks paused, still assigned
  Stopped,  ///< connector stopped and its task configs emptied (KIP-875)
};

/// "STARTED" / "PAUSED" / "STOPPED".
const char* target_state_name(TargetState s);
/// Parses "STARTED" / "PAUSED" / "STOPPED" (exact, upper case).
std::optional<TargetState> target_state_from_name(std::string_view s);

/// Kind of a config-topic key, recognised by prefix (5.1).
enum class ConfigKeyKind {
  Connector,         ///< `connector-<name>`
  Task,              ///< `task-<name>-<n>`
  Commit,            ///< `commit-<name>`
  TargetState,       ///< `target-state-<name>`
  SessionKey,        ///< `session-key`
  RestartConnector,  ///< `restart-connector-<name>`
  TasksFencing,      ///< `tasks-fencing-<name>`
  LoggerCluster,     ///< `logger-cluster-<namespace>`
  Unknown,           ///< anything else (Connect logs and drops it)
};

/// A parsed config-topic key. `name` is the connector name (or logger
/// namespace); `task` is set only for Task keys.
struct ConfigKey {
  ConfigKeyKind kind = ConfigKeyKind::Unknown;
  std::string name;
  int32_t task = -1;
};

/// Parses a config-topic key. Task keys split on the last '-': the part after
/// it is the task number, the part before is the connector name, so connector
/// names may contain dashes. A task key whose number does not parse is Unknown.
ConfigKey parse_config_key(std::string_view key);

/// False for a connector name that no REST request can address, so the
/// config-topic reader skips every record that carries it (issue 9): the empty
/// name (keys `connector-`, `target-state-`, `commit-`, ...; a REST path has
/// no empty segment to match; `task--0` has no name and parses as Unknown), and "." and ".." (HTTP clients and Connect's
/// Jetty collapse such dot segments, so `/connectors/../status` never reaches
/// the connector). The REST layer refuses to create any of them (400), so a
/// skipped name only comes from a hand-written or foreign record. Connect's
/// reader keeps them, but then lists a connector nobody can manage; its POST
/// already refuses the empty name. Names with '/' or spaces stay
/// addressable here: a percent-encoded segment ("a%2Fb", "%20") is decoded
/// after the path is split.
bool addressable_connector_name(std::string_view name);

/// Why `name` cannot stand in the key of an internal-topic record that every
/// worker reads back, or nullopt when it can: the name must be valid UTF-8
/// and addressable_connector_name. This is the rule of every reader (a
/// record that breaks it is skipped with one log line) and of every writer
/// (the write is refused). It is looser than kc::connector_name_error,
/// which a NEW connector config must pass, so connectors written before that
/// rule (control characters, longer than 1024 bytes) stay readable and
/// deletable. The message never quotes the name.
std::optional<std::string> stored_connector_name_error(std::string_view name);

/// "connector-<name>".
std::string connector_config_key(std::string_view connector);
/// "task-<name>-<n>".
std::string task_config_key(const connect::ConnectorTaskId& id);
/// "commit-<name>".
std::string commit_key(std::string_view connector);
/// "target-state-<name>".
std::string target_state_key(std::string_view connector);
/// "restart-connector-<name>" (KIP-745).
std::string restart_key(std::string_view connector);

/// Why `config` cannot be stored, or nullopt: a key or value that is not
/// valid UTF-8 (no worker's JSON parser would read the record). Names the
/// key (printable_key), never quotes a value: it may be a secret.
std::optional<std::string> config_map_error(const ConfigMap& config);

/// `{"properties":{...}}`, used for both connector and task configs.
std::string encode_properties(const ConfigMap& props);
/// Reads `{"properties":{...}}`. Non-string property values are converted
/// with their JSON text (Connect would have written strings). Errors on
/// malformed JSON or a missing/non-object `properties`.
Result<ConfigMap> decode_properties(std::string_view value);

/// `{"tasks":<n>}`.
std::string encode_commit(int32_t task_count);
/// Reads `{"tasks":<n>}`; any integral JSON number from 0 to INT32_MAX is
/// accepted (a count with no matching task configs makes its connector
/// inconsistent, it is not a parse error).
Result<int32_t> decode_commit(std::string_view value);

/// "tasks-fencing-<name>": the task-count record of a connector (KIP-618),
/// written by the leader after it fenced the previous generation of the
/// connector's exactly-once source tasks.
std::string task_count_key(std::string_view connector);
/// `{"task-count":<n>}` (Connect's TASK_COUNT_RECORD_V0).
std::string encode_task_count(int32_t task_count);
/// Reads `{"task-count":<n>}`; errors on malformed JSON, a missing or
/// non-integral field, or a count outside 0..INT32_MAX.
Result<int32_t> decode_task_count(std::string_view value);

/// `{"state":"STARTED"|"PAUSED","state.v2":"STARTED"|"PAUSED"|"STOPPED"}`.
/// For Stopped, `state` is "PAUSED" (what pre-KIP-875 workers understand).
std::string encode_target_state(TargetState s);
/// Reads a target-state value: `state.v2` wins over `state` when present.
Result<TargetState> decode_target_state(std::string_view value);

/// A restart request (KIP-745): POST /connectors/{c}/restart?includeTasks=&onlyFailed=.
struct RestartFlags {
  bool include_tasks = false;  ///< also restart the connector's tasks
  bool only_failed = false;    ///< restart only instances whose status is FAILED
};
/// `{"include-tasks":<bool>,"only-failed":<bool>}` (value of `restart-connector-<name>`).
std::string encode_restart(const RestartFlags& flags);
/// Reads a restart value; a missing field is false. Errors on malformed JSON,
/// a non-object or a non-boolean field.
Result<RestartFlags> decode_restart(std::string_view value);

/// "logger-cluster-<namespace>" (KIP-976): a cluster-wide log level, written
/// by PUT /admin/loggers/{namespace}?scope=cluster.
std::string logger_cluster_key(std::string_view logger_namespace);
/// `{"level":"<LEVEL>"}` (Connect's LOGGER_LEVEL_V0 through the internal
/// JSON converter, schemas off).
std::string encode_logger_level(std::string_view level);
/// Reads a logger-level value: the "level" string, upper-cased, which must
/// be a log4j level name (metrics::parse_log4j_level). Errors on malformed
/// JSON, a non-object, a missing or non-string "level", or an unknown level
/// (the config topic is outside input: a bad record is skipped, never fatal).
Result<std::string> decode_logger_level(std::string_view value);

/// "session-key": the config-topic key of the KIP-507 session key.
inline constexpr std::string_view kSessionKeyKey = "session-key";

/// The value of a `session-key` record (Kafka Connect's SessionKey, written
/// by the leader under `connect.protocol=sessioned`, KIP-507). The key stays
/// base64 text here, as stored; the herder decodes it.
struct SessionKeyRecord {
  std::string key_base64;             ///< "key": the secret key, standard base64
  std::string algorithm;              ///< "algorithm", e.g. "HmacSHA256"
  int64_t creation_timestamp_ms = 0;  ///< "creation-timestamp": epoch ms when the leader made it

  bool operator==(const SessionKeyRecord&) const = default;
};
/// `{"key":"<base64>","algorithm":"<name>","creation-timestamp":<ms>}`, the
/// field order of Connect's SESSION_KEY_V0 struct.
std::string encode_session_key(const SessionKeyRecord& record);
/// Reads a session-key value as Connect's KafkaConfigBackingStore does:
/// an object with a string "key", a string "algorithm" and an integral
/// "creation-timestamp". Errors name the bad field; malformed JSON, a null
/// (tombstone) or a non-object are errors too.
Result<SessionKeyRecord> decode_session_key(std::string_view value);

/// Why the config-topic record (`key`, `value`; nullopt = tombstone) would be
/// skipped by a reader, or nullopt when every worker reads it: the key's
/// kind is known, its connector name passes stored_connector_name_error, and
/// its value decodes with the decoder of its kind (JSON no deeper than
/// kc::kMaxJsonDepth, valid UTF-8, the right shape, numbers in range).
/// ConfigBackingStore checks each record with this before it writes it.
std::optional<std::string> config_record_error(std::string_view key, const std::optional<std::string>& value);

// ---------------------------------------------------------------- offsets topic

/// Offset-topic key: `["<connector>",{<partition>}]` in compact JSON,
/// byte-identical to Connect's (partition members in insertion order).
std::string encode_offset_key(std::string_view connector, const OrderedJson& partition);

/// A decoded offset-topic key.
struct OffsetKey {
  std::string connector;
  OrderedJson partition;  ///< a JSON object
};

/// Decodes an offset-topic key. Like Connect, anything other than a
/// 2-element array [string, object] is rejected (a null partition
/// included), and so is JSON deeper than kc::kMaxJsonDepth (checked while
/// parsing, by kc::parse_json_bounded, before a deeper tree exists).
Result<OffsetKey> decode_offset_key(std::string_view key);

/// Reads an offset value: any JSON no deeper than kc::kMaxJsonDepth (null
/// deletes the offset). Errors: too deep, or not JSON (invalid UTF-8
/// included). Never quotes the text (offsets may hold secrets).
Result<OrderedJson> decode_offset_value(std::string_view value);

/// Longest offset-topic key written, in bytes: the connector name and the
/// source partition as compact JSON. Source partitions name a file, a table
/// or a topic partition; 64 KiB leaves room for any of them.
inline constexpr std::size_t kMaxOffsetKeyBytes = 64 * 1024;
/// Longest offset-topic value written, in bytes (a source offset, e.g. a
/// MySQL GTID set): half of librdkafka's default message.max.bytes.
inline constexpr std::size_t kMaxOffsetValueBytes = 512 * 1024;

/// One offset-topic record as it would be written: key bytes and value
/// bytes (nullopt = tombstone).
struct OffsetRecord {
  std::string key;
  std::optional<std::string> value;
};

/// Encodes one source offset of `connector` for the offsets topic, or the
/// reason no worker could read it back: a connector name that fails
/// stored_connector_name_error, a partition that is not a JSON object, a
/// partition or offset nested deeper than kc::kMaxJsonDepth (counting the
/// key's own array), a string that is not valid UTF-8, or a key longer than
/// kMaxOffsetKeyBytes or value longer than kMaxOffsetValueBytes. A nullopt
/// offset encodes a tombstone. Error messages name the rule, never a value.
Result<OffsetRecord> encode_offset_record(std::string_view connector, const OrderedJson& partition,
                                          const std::optional<OrderedJson>& offset);

// ---------------------------------------------------------------- status topic

/// Connector/task states written to the status topic (5.3). Destroyed is
/// never written as a value: it is a tombstone.
enum class StatusState { Unassigned, Running, Paused, Failed, Restarting, Stopped, Destroyed };

/// "UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "STOPPED", "DESTROYED".
const char* status_state_name(StatusState s);
/// Parses the names above.
std::optional<StatusState> status_state_from_name(std::string_view s);

/// One status record value: `{"state":..,"trace":..,"worker_id":..,"generation":..}`.
struct StatusValue {
  StatusState state = StatusState::Unassigned;
  std::optional<std::string> trace;  ///< failure trace; nullopt writes JSON null
  std::string worker_id;             ///< e.g. "w1:8083"
  int32_t generation = -1;           ///< group generation at the time of writing

  bool operator==(const StatusValue&) const = default;
};

/// The trace of a RUNNING or PAUSED task status written for a task that is
/// about to move (by its draining owner before its JoinGroup, or by the
/// leader before it hands a revoked task over in the same round): the new
/// owner starts the task only once the old owner's UNASSIGNED (its stop) is
/// read, or after a bound. kconnectd's; Connect writes no trace for a
/// running task.
inline constexpr std::string_view kHandOverTrace = "handing over to its new owner";

/// "status-connector-<name>".
std::string connector_status_key(std::string_view connector);
/// "status-task-<name>-<n>".
std::string task_status_key(const connect::ConnectorTaskId& id);

/// A parsed status key: exactly one of `connector` (connector key) or
/// `task` (task key) is set; topic-tracking keys and unknown keys give nullopt.
struct StatusKey {
  std::optional<std::string> connector;
  std::optional<connect::ConnectorTaskId> task;
};
std::optional<StatusKey> parse_status_key(std::string_view key);

/// Longest trace a status record carries, in bytes. A plugin's failure
/// message may be huge (a whole payload in an exception); every worker keeps
/// every status in memory, so the head (the exception and its first
/// frames) is kept and the rest cut.
inline constexpr std::size_t kMaxStatusTraceBytes = 32 * 1024;

/// `s` with every byte that is not part of well-formed UTF-8 replaced by
/// U+FFFD (EF BF BD), as Java's String decoding does.
std::string to_valid_utf8(std::string_view s);

/// `v` as every worker can read it back: trace and worker_id made valid
/// UTF-8 (to_valid_utf8), and a trace longer than kMaxStatusTraceBytes cut
/// at a character boundary, with a note of its full length, to at most
/// kMaxStatusTraceBytes. Idempotent. A status is made safe, never refused:
/// a failure must still be reported.
StatusValue storable_status(StatusValue v);

/// Compact JSON in Connect's field order: state, trace, worker_id,
/// generation, of storable_status(v).
std::string encode_status(const StatusValue& v);
/// Reads a status value. Errors on malformed or too deep JSON, an unknown
/// state, or a generation outside int32 (the message never quotes the
/// trace).
Result<StatusValue> decode_status(std::string_view value);

/// A topic that a task of `connector` produced to or consumed from (topic
/// tracking, KIP-558). `discover_timestamp_ms` is wall-clock ms.
struct TopicStatus {
  std::string topic;
  std::string connector;
  int32_t task = 0;
  int64_t discover_timestamp_ms = 0;
  bool operator==(const TopicStatus&) const = default;
};

/// "status-topic-<topic>:connector-<name>".
std::string topic_status_key(std::string_view topic, std::string_view connector);
/// (topic, connector) of a topic status key; nullopt for any other key.
/// Topic names cannot contain ':', so the first ":connector-" splits.
std::optional<std::pair<std::string, std::string>> parse_topic_status_key(std::string_view key);
/// {"topic":{"name":..,"connector":..,"task":n,"discoverTimestamp":ms}}.
std::string encode_topic_status(const TopicStatus& t);
/// Reads a topic status value; errors on malformed JSON, a missing field or
/// a task number outside int32.
Result<TopicStatus> decode_topic_status(std::string_view value);

/// A status-topic record as every reader understands it. Exactly one of
/// `connector`, `task` or `topic` is set, after the key's kind.
struct StatusRecord {
  std::optional<std::string> connector;                      ///< `status-connector-<name>`
  std::optional<connect::ConnectorTaskId> task;              ///< `status-task-<name>-<n>`
  std::optional<std::pair<std::string, std::string>> topic;  ///< (topic, connector) of `status-topic-...`
  std::optional<StatusValue> status;        ///< value of a connector or task key; nullopt = tombstone
  std::optional<TopicStatus> topic_status;  ///< value of a topic key; nullopt = tombstone
};

/// Decodes one status-topic record (`value` nullopt = tombstone), or says
/// why every reader skips it: an unknown key, a connector name that fails
/// stored_connector_name_error, a topic name that is not valid UTF-8, or a
/// value that does not decode. The status store reads with it, and checks
/// every record it writes with it.
Result<StatusRecord> decode_status_record(std::string_view key, const std::optional<std::string>& value);

// ---------------------------------------------------------------- log lines

/// `key` as it may appear in a log line: bytes that are not printable
/// UTF-8 (control characters, invalid sequences) as `\xNN`, cut after 200
/// bytes with a note of the full length. Keys carry connector names, never
/// secrets; values are never logged.
std::string printable_key(std::string_view key);

}  // namespace kc::storage
