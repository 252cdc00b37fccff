#pragma once
// The narrow interface between the REST layer (worker/rest) and the herder
// (worker/herder). The REST server and its extra routes (drain, internal
// requests, /rebalances) call it; the herder implements it. It lives in
// worker/api, below both, so that the arrows run REST → api ← herder and
// neither side includes the other. The namespace stays kc::rest: these are
// the value types of Connect's REST API, whoever serves them.
//
// Threading contract
// ------------------
// The REST server runs on its own io_context thread; the herder runs on its
// own thread(s). Every method is therefore asynchronous:
//   * a method must return quickly and must not block the caller (the REST
//     io thread); it typically enqueues a request for the herder thread;
//   * the herder invokes the completion callback exactly once, from any thread
//     (inline from inside the call is allowed too);
//   * the REST server re-posts the reply onto the connection's executor, so
//     the herder never runs REST code and never needs to lock for REST.
// If the callback is never invoked, the REST server answers 500
// "Request timed out" after its request timeout (90 s by default, as Connect)
// and ignores a late reply. A callback may outlive the RestServer; invoking it
// then is harmless (the reply is dropped).
//
// Error semantics (Connect's ConnectExceptionMapper + HerderRequestHandler)
// ------------------------------------------------------------------------
// A method fails by passing a RestError instead of a value. The REST layer
// turns it into the HTTP status and the body
// {"error_code": <status>, "message": "<message>"}; for `NotLeader` /
// `NotOwner` it instead forwards the request to `forward_url` (see
// rest_server.h, "Forwarding").
//
// JSON shapes are the REST layer's business: the herder deals only in the C++
// value types below. Syntax and shape checks (bad JSON, missing name, config
// not an object, name mismatch between the path and config, no
// connector.class → RestError::no_connector_type) are done by the REST layer
// before the herder is called; semantic validation of a connector
// config (unknown connector.class, invalid values) is the herder's job and is
// reported as RestError::bad_request with Connect's message
// ("Connector configuration is invalid and contains the following N error(s): ...").

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/secrets.h"
#include "protocol/connect/types.h"

namespace kc::rest {

// ---------------------------------------------------------------------------
// Errors and replies
// ---------------------------------------------------------------------------

/// What went wrong, in Connect's REST terms. Each kind has one HTTP status
/// (see RestError::http_status()).
enum class ErrorKind {
  BadRequest,        ///< 400: invalid input (bad config, unknown class, bad state name, ...)
  Forbidden,         ///< 403: the feature is turned off by worker config (topic tracking)
  NotFound,          ///< 404: unknown connector, task or plugin
  Conflict,          ///< 409: already exists, stale config, rebalance in progress
  NotLeader,         ///< this worker is not the leader: forward to forward_url (409 if empty)
  NotOwner,          ///< this worker does not run the connector/task: forward to forward_url
  Timeout,           ///< 500: the herder gave up waiting (e.g. on the config topic)
  ServiceUnavailable,///< 503: the worker is not ready (e.g. still starting)
  NotImplemented,    ///< 501: a Connect feature kconnectd does not have (not a Connect status)
  Internal,          ///< 500: anything else, including "a rebalance is expected" on reads
};

/// An error reply from the herder. `message` becomes the "message" field of
/// Connect's error body. `forward_url` is meaningful only for NotLeader and
/// NotOwner: the advertised REST URL of the worker that must handle the
/// request (e.g. "http://w1:8083/"), empty when unknown.
struct RestError {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  std::string forward_url;

  /// The HTTP status for `kind`: 400, 403, 404, 409, 500, 501 or 503. NotLeader /
  /// NotOwner map to 409, which is what the client sees when the request
  /// cannot be forwarded (no URL known, or the forwarding budget is spent).
  [[nodiscard]] int http_status() const {
    switch (kind) {
      case ErrorKind::BadRequest: return 400;
      case ErrorKind::Forbidden: return 403;
      case ErrorKind::NotFound: return 404;
      case ErrorKind::Conflict: return 409;
      case ErrorKind::NotLeader: return 409;
      case ErrorKind::NotOwner: return 409;
      case ErrorKind::Timeout: return 500;
      case ErrorKind::ServiceUnavailable: return 503;
      case ErrorKind::NotImplemented: return 501;
      case ErrorKind::Internal: return 500;
    }
    return 500;
  }

  /// 400 with `message`.
  static RestError bad_request(std::string message) {
    return {ErrorKind::BadRequest, std::move(message), {}};
  }
  /// 400 "Connector config {k1=v1, k2=v2} contains no connector type":
  /// Connect's AbstractHerder.validateConnectorConfig wording when a config
  /// has no connector.class (create, update and .../config/validate alike).
  /// The map is printed like Java's Map.toString, keys in sorted order,
  /// with every secret key's value (kc::secrets::is_secret_key: without a
  /// connector.class no ConfigDef is known) shown as "[hidden]".
  static RestError no_connector_type(const std::map<std::string, std::string>& config) {
    std::string text = "{";
    for (const auto& [k, v] : config) text += (text.size() > 1 ? ", " : "") + k + "=" + secrets::redact(k, v);
    return bad_request("Connector config " + text + "} contains no connector type");
  }
  /// 403 with `message`: the request is valid but the worker's config turns
  /// the feature off.
  static RestError forbidden(std::string message) {
    return {ErrorKind::Forbidden, std::move(message), {}};
  }
  /// 403 "Topic tracking is disabled." (Connect's ConnectorsResource text,
  /// verbatim): GET /connectors/{c}/topics and PUT .../topics/reset when
  /// topic.tracking.enable=false.
  static RestError topic_tracking_disabled() { return forbidden("Topic tracking is disabled."); }
  /// 403 "Topic tracking reset is disabled." (Connect's text, verbatim): PUT
  /// /connectors/{c}/topics/reset when topic.tracking.allow.reset=false (and
  /// tracking is on; disabled tracking answers topic_tracking_disabled()).
  static RestError topic_tracking_reset_disabled() { return forbidden("Topic tracking reset is disabled."); }
  /// 404 with `message`, e.g. "Connector c1 not found".
  static RestError not_found(std::string message) {
    return {ErrorKind::NotFound, std::move(message), {}};
  }
  /// 404 "Connector <name> not found" (Connect's wording for unknown connectors).
  static RestError connector_not_found(const std::string& name) {
    return not_found("Connector " + name + " not found");
  }
  /// 409 "Connector <name> already exists" (create of an existing connector).
  static RestError already_exists(const std::string& name) {
    return {ErrorKind::Conflict, "Connector " + name + " already exists", {}};
  }
  /// 400 for offset writes on a connector that is not STOPPED (Connect's
  /// text, verbatim).
  static RestError connector_not_stopped(const std::string& name) {
    return bad_request(
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
        "specified connector by issuing a 'PUT' request to the '/connectors/" + name + "/stop' endpoint");
  }
  /// 409 with any message.
  static RestError conflict(std::string message) {
    return {ErrorKind::Conflict, std::move(message), {}};
  }
  /// 409 for writes while a config change waits for a rebalance (Connect's
  /// stale-config message, verbatim, because clients match on it).
  static RestError stale_config() {
    return conflict(
        "Cannot complete request momentarily due to stale configuration "
        "(typically caused by a concurrent config change)");
  }
  /// 409 for a request that conflicts with an ongoing rebalance.
  static RestError rebalance_in_progress() {
    return conflict("Cannot complete request because of a conflicting operation (e.g. worker rebalance)");
  }
  /// 500 for reads on the herder thread while a rebalance is pending. Connect
  /// answers 500, not 409, on these paths (reference 6.2), so we do too.
  static RestError rebalance_expected() {
    return {ErrorKind::Internal, "Request cannot be completed because a rebalance is expected", {}};
  }
  /// "Not leader": the REST layer forwards the request to `leader_url`
  /// (the leader's advertised REST URL from the last assignment). An empty URL
  /// yields 409 "... no known leader URL ...".
  static RestError not_leader(std::string leader_url) {
    return {ErrorKind::NotLeader, "This worker is not able to handle this request because it is not the leader",
            std::move(leader_url)};
  }
  /// "Not owner": the connector/task runs on another worker (plain restarts);
  /// the REST layer forwards the request to `owner_url`.
  static RestError not_owner(std::string owner_url) {
    return {ErrorKind::NotOwner, "This worker does not run the requested connector or task",
            std::move(owner_url)};
  }
  /// 500 "Request timed out" style failures inside the herder.
  static RestError timeout(std::string message) {
    return {ErrorKind::Timeout, std::move(message), {}};
  }
  /// 500 for a config-topic write (create, update, delete, stop, ...) whose
  /// send or read-back did not finish in time: the record may still reach
  /// the topic, so the message says so and the client should re-read before
  /// retrying. `what` names the write ("connector config" → "Request timed
  /// out while writing the connector config; the change may still be
  /// applied: <detail>"); `detail` is the store's error text (may be empty).
  static RestError write_timeout(const std::string& what, const std::string& detail) {
    std::string m = "Request timed out while writing the " + what + "; the change may still be applied";
    if (!detail.empty()) m += ": " + detail;
    return timeout(std::move(m));
  }
  /// 503: the worker cannot serve yet (still starting).
  static RestError unavailable(std::string message) {
    return {ErrorKind::ServiceUnavailable, std::move(message), {}};
  }
  /// 501 with `message`: the request is valid Connect but kconnectd lacks
  /// the feature.
  static RestError not_implemented(std::string message) {
    return {ErrorKind::NotImplemented, std::move(message), {}};
  }
  /// 500 with `message`.
  static RestError internal(std::string message) {
    return {ErrorKind::Internal, std::move(message), {}};
  }
};

/// Either a value of type T or a RestError. Check ok() before value().
template <typename T>
class Reply {
 public:
  Reply(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Reply(RestError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  /// Valid only when !ok().
  [[nodiscard]] const RestError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, RestError> v_;
};

/// The value of a successful operation that returns nothing.
struct Done {};

/// Completion callback; invoked exactly once, from any thread.
template <typename T>
using Callback = std::function<void(Reply<T>)>;

// ---------------------------------------------------------------------------
// Value types (JSON shapes are in comments; the REST layer does the JSON)
// ---------------------------------------------------------------------------

/// A connector's configuration: string keys to string values, as Connect
/// stores it. Always contains "name" (the REST layer fills it in).
using ConnectorConfig = std::map<std::string, std::string>;

/// One task of a connector. JSON: {"connector":"c1","task":0}.
struct TaskId {
  std::string connector;
  int32_t task = 0;

  auto operator<=>(const TaskId&) const = default;
  bool operator==(const TaskId&) const = default;
};

/// Connector kind. JSON: "source" | "sink" | "unknown".
enum class ConnectorType { Source, Sink, Unknown };

/// Runtime state of a connector or task, as recorded in the status topic.
/// JSON: "UNASSIGNED" | "RUNNING" | "PAUSED" | "STOPPED" | "FAILED" |
/// "RESTARTING" | "DESTROYED".
enum class ConnectState { Unassigned, Running, Paused, Stopped, Failed, Restarting, Destroyed };

/// Desired state of a connector (the config topic's target state).
/// JSON (initial_state of POST /connectors): "RUNNING" | "PAUSED" | "STOPPED"
/// (case-insensitive; RUNNING means Started).
enum class TargetState { Started, Paused, Stopped };

/// GET /connectors/{c} and the body of create/update.
/// JSON: {"name":"c1","config":{...},"tasks":[{"connector":"c1","task":0}],"type":"source"}.
struct ConnectorInfo {
  std::string name;
  ConnectorConfig config;
  std::vector<TaskId> tasks;
  ConnectorType type = ConnectorType::Unknown;
};

/// State of the connector instance. JSON: {"state":"RUNNING","worker_id":"w1:8083"}
/// plus "trace" when `trace` is non-empty.
struct ConnectorStatus {
  ConnectState state = ConnectState::Unassigned;
  std::string worker_id;
  std::string trace;
};

/// State of one task. JSON: {"id":0,"state":"RUNNING","worker_id":"w1:8083"}
/// plus "trace" when `trace` is non-empty.
struct TaskStatus {
  int32_t id = 0;
  ConnectState state = ConnectState::Unassigned;
  std::string worker_id;
  std::string trace;
};

/// GET /connectors/{c}/status. JSON:
/// {"name":"c1","connector":{...},"tasks":[{...}],"type":"source"}.
/// The REST layer sorts tasks by id before serialising.
struct ConnectorStateInfo {
  std::string name;
  ConnectorStatus connector;
  std::vector<TaskStatus> tasks;
  ConnectorType type = ConnectorType::Unknown;
};

/// One entry of GET /connectors/{c}/tasks.
/// JSON: {"id":{"connector":"c1","task":0},"config":{...}}.
struct TaskInfo {
  TaskId id;
  std::map<std::string, std::string> config;
};

/// Plugin kinds of GET /connector-plugins. JSON: "source" | "sink" |
/// "transformation" | "predicate" | "converter" | "header_converter".
enum class PluginType { Source, Sink, Transformation, Predicate, Converter, HeaderConverter };

/// One entry of GET /connector-plugins.
/// JSON: {"class":"...","type":"source","version":"1.0"} ("version" left out when empty).
struct PluginInfo {
  std::string class_name;
  PluginType type = PluginType::Source;
  std::string version;
};

/// One config key of a plugin: GET /connector-plugins/{p}/config, and the
/// "definition" of each validate entry. JSON: {"name","type","required",
/// "default_value","importance","documentation","group","order","width",
/// "display_name","dependents"}; default_value and group are null when
/// unset; "order" is Connect's order_in_group (-1 = none).
struct ConfigKeyInfo {
  std::string name;
  std::string type;  ///< "STRING" | "INT" | "LONG" | "DOUBLE" | "BOOLEAN" | "LIST" | "CLASS" | "PASSWORD"
  bool required = false;
  std::optional<std::string> default_value;
  std::string importance;  ///< "HIGH" | "MEDIUM" | "LOW"
  std::string documentation;
  std::optional<std::string> group;
  int32_t order = -1;
  std::string width;  ///< "NONE" | "SHORT" | "MEDIUM" | "LONG"
  std::string display_name;
  std::vector<std::string> dependents;
};

/// The validated value of one key. JSON: {"name","value","recommended_values",
/// "errors","visible"}; value is the given string, else the default, else null.
struct ConfigValueInfo {
  std::string name;
  std::optional<std::string> value;
  std::vector<std::string> recommended_values;
  std::vector<std::string> errors;
  bool visible = true;
};

/// One entry of ConfigInfos. JSON: {"definition":ConfigKeyInfo,"value":ConfigValueInfo}.
struct ConfigInfo {
  ConfigKeyInfo definition;
  ConfigValueInfo value;
};

/// PUT /connector-plugins/{p}/config/validate. JSON: {"name":<connector class>,
/// "error_count":N,"groups":[...],"configs":[ConfigInfo...]}; N counts every
/// error message of every key.
struct ConfigInfos {
  std::string name;
  int32_t error_count = 0;
  std::vector<std::string> groups;
  std::vector<ConfigInfo> configs;
};

/// One entry of the offsets API (KIP-875). JSON:
/// {"partition":{...},"offset":{...}|null}. Source connectors: the source
/// partition and offset as stored in the offsets topic; member order is kept
/// because it is part of the topic's key bytes (reference 5.2). Sink
/// connectors (Connect): {"kafka_topic","kafka_partition"} → {"kafka_offset"}.
/// `offset` is nullopt only in PATCH requests, where it resets the partition.
struct ConnectorOffset {
  nlohmann::ordered_json partition;
  std::optional<nlohmann::ordered_json> offset;
};

/// POST /connectors (allow_replace = false) and PUT /connectors/{c}/config
/// (allow_replace = true). `config["name"] == name` and the presence of
/// `config["connector.class"]` are guaranteed by the REST layer. Errors: 409 already_exists when !allow_replace and the connector
/// exists; 400 for an invalid config; not_leader on followers.
struct PutConnectorRequest {
  std::string name;
  ConnectorConfig config;
  std::optional<TargetState> initial_state;  ///< POST only; nullopt = Started
  bool allow_replace = false;
};

/// Result of a put: `created` selects 201 (+ Location) versus 200.
struct PutConnectorResult {
  bool created = false;
  ConnectorInfo info;
};

/// POST /connectors/{c}/restart?includeTasks=&onlyFailed= (both default false).
struct RestartRequest {
  bool include_tasks = false;
  bool only_failed = false;
  /// True for a plain connector restart (204, handled by the owner);
  /// false when the request must go through the leader (202 + plan).
  [[nodiscard]] bool plain() const { return !include_tasks && !only_failed; }
};

/// GET /health. JSON: {"status":"healthy"|"starting"|"rebalancing"|"unavailable"|"unhealthy",
/// "message":"...", "worker_state":"Running"}; HTTP 200 / 503 / 503 / 503 / 500 respectively.
enum class HealthStatus {
  Healthy,      ///< in the group, latest assignment applied
  Starting,     ///< not started, or not joined the group yet
  Rebalancing,  ///< a rebalance is in progress or its assignment is not applied yet
  Unavailable,  ///< out of the group (coordinator lost) or the config topic is unreadable
  Unhealthy,    ///< fatal group error, shutting down, or no answer in time
};

/// Health of the worker. ok() is the brief's {ok, reason}: ok() == Healthy,
/// reason == message.
struct Health {
  HealthStatus status = HealthStatus::Healthy;
  std::string message;  ///< e.g. "Worker has completed startup and is ready to handle requests."
  /// The herder's membership lifecycle state (worker/herder/lifecycle.h:
  /// "Starting", "Joining", "Running", "Draining", "Fenced", ...); kconnectd's
  /// addition to Connect's body, as "worker_state". Empty = not reported.
  std::string worker_state;
  [[nodiscard]] bool ok() const { return status == HealthStatus::Healthy; }
};

/// Identity of this worker.
struct WorkerInfo {
  std::string worker_id;         ///< e.g. "w1:8083" (the id in status records)
  std::string rest_url;          ///< advertised REST URL, e.g. "http://w1:8083/"
  std::string kafka_cluster_id;  ///< id of the Kafka cluster (GET /), empty if unknown
};

/// One member of the group as the leader saw it in the JoinGroup of its
/// last round (GET /cluster, ours).
struct GroupMember {
  std::string member_id;          ///< group member id
  std::string url;                ///< advertised REST URL from its Connect member metadata
  std::string group_instance_id;  ///< KIP-345 group.instance.id; "" = dynamic member
};

/// This worker's place in the group (GET /worker and GET /cluster, the web
/// console's data; ours, not Connect's). Read without waiting for the
/// herder's io thread.
struct MemberView {
  std::string worker_id;    ///< e.g. "w1:8083"
  std::string url;          ///< advertised REST URL
  std::string member_id;    ///< "" before the first join
  int32_t generation = -1;  ///< generation of the current assignment; -1 before the first
  bool is_leader = false;   ///< this worker led the generation of its current assignment
  std::string leader_url;   ///< the leader's REST URL from the last assignment
  std::string protocol;     ///< "default" | "compatible" | "sessioned"; "" before the first join
  std::vector<std::string> connectors;  ///< connectors this worker owns now (full assignment), sorted
  std::vector<std::string> tasks;       ///< tasks it owns now as "<connector>-<n>", sorted
  bool draining = false;                ///< a drain of this worker is under way
  /// Leader only: the members of its last round, in JoinGroup order; empty
  /// on a follower.
  std::vector<GroupMember> members;
};

/// The two KIP-507 signature headers of an internal request, as received;
/// nullopt = header absent. The herder checks them (Connect's
/// InternalRequestSignature); the REST layer only carries them.
struct SignatureHeaders {
  std::optional<std::string> signature;  ///< X-Connect-Authorization
  std::optional<std::string> algorithm;  ///< X-Connect-Request-Signature-Algorithm
};

/// Answer of an internal request (drain, task reconfiguration, fence):
/// the HTTP status to send and its message (the body's "message"; empty
/// for 204). Not a RestError: these routes answer the leader's own
/// statuses and are never forwarded.
using StatusCallback = std::function<void(int status, std::string message)>;

/// How long the stop of one revoked task took (GET /rebalances).
struct TaskStopTime {
  connect::ConnectorTaskId id;  ///< the revoked task
  int64_t stop_ms = 0;          ///< from the stop request until the task ended (offsets committed)
  bool timed_out = false;       ///< the graceful timeout passed first (the task was abandoned)
};

/// One rebalance as seen by this worker, kept in memory (newest last, at
/// most 256 kept). Issue 5 exposes the list as GET /rebalances.
/// Times are wall-clock milliseconds since the Unix epoch; 0 = not yet.
struct RebalanceRecord {
  int32_t generation = -1;             ///< generation of the assignment
  std::string protocol;                ///< "default" | "compatible" | "sessioned"
  std::string leader_id;               ///< leader member id
  std::string leader_url;              ///< leader REST URL
  bool is_leader = false;              ///< this worker was the leader
  int16_t error = 0;                   ///< assignment error (1 = CONFIG_MISMATCH)
  std::vector<std::string> assigned_connectors;              ///< newly assigned (as received)
  std::vector<connect::ConnectorTaskId> assigned_tasks;      ///< newly assigned (as received)
  std::vector<std::string> revoked_connectors;               ///< revoked in this assignment
  std::vector<connect::ConnectorTaskId> revoked_tasks;       ///< revoked in this assignment
  int32_t delay_ms = 0;                ///< scheduled rebalance delay handed out
  int64_t config_offset = -1;          ///< assignment's config offset
  int64_t started_ms = 0;              ///< when the rebalance started here (JoinGroup prepared)
  int64_t assigned_ms = 0;             ///< when the assignment arrived (SyncGroup done)
  int64_t applied_ms = 0;              ///< when revocations + starts finished (0 = not applied)
  std::string reason;                  ///< why the rebalance started (trigger), "" if unknown
  std::vector<TaskStopTime> task_stops;  ///< stop duration of each task this worker stopped for it
};

// ---------------------------------------------------------------------------
// The interface
// ---------------------------------------------------------------------------

/// What the REST server needs from the herder. See the file comment for the
/// threading and error contract. Which worker must answer (reference 6.2):
///   * any worker, from local state: list_connectors, connector_status,
///     task_status, connector_plugins, health, worker_info, set_target_state
///     for Paused/Started (pause/resume are written by any worker);
///   * any worker, through the herder thread (may fail with
///     rebalance_expected → 500): connector_info, connector_config, task_configs;
///   * the leader (else not_leader(url)): put_connector_config,
///     delete_connector, set_target_state(Stopped), restart_connector with
///     include_tasks or only_failed; stale_config (409) while a config change
///     waits for a rebalance;
///   * the owner (else not_owner(url)): plain restart_connector, restart_task.
class HerderApi {
 public:
  virtual ~HerderApi() = default;

  /// GET /connectors: names of all configured connectors (any order; the REST
  /// layer sorts). Never fails in Connect.
  virtual void list_connectors(Callback<std::vector<std::string>> cb) = 0;

  /// GET /connectors/{c}: 404 connector_not_found if unknown.
  virtual void connector_info(const std::string& name, Callback<ConnectorInfo> cb) = 0;

  /// GET /connectors/{c}/config: the stored config; 404 if unknown.
  virtual void connector_config(const std::string& name, Callback<ConnectorConfig> cb) = 0;

  /// POST /connectors and PUT /connectors/{c}/config (see PutConnectorRequest).
  virtual void put_connector_config(PutConnectorRequest req, Callback<PutConnectorResult> cb) = 0;

  /// DELETE /connectors/{c}: 204 on success; 404 if unknown; leader only.
  virtual void delete_connector(const std::string& name, Callback<Done> cb) = 0;

  /// GET /connectors/{c}/status: 404 "No status found for connector c" if the
  /// status store has no record for it.
  virtual void connector_status(const std::string& name, Callback<ConnectorStateInfo> cb) = 0;

  /// GET /connectors/{c}/tasks: task configs in task order; 404 if unknown.
  virtual void task_configs(const std::string& name, Callback<std::vector<TaskInfo>> cb) = 0;

  /// GET /connectors/{c}/tasks/{t}/status: 404 if unknown connector or task.
  virtual void task_status(const TaskId& id, Callback<TaskStatus> cb) = 0;

  /// POST /connectors/{c}/restart. For a plain restart (req.plain()) reply
  /// nullopt → 204. Otherwise reply the planned ConnectorStateInfo (instances
  /// to restart shown as RESTARTING) → 202. 404 if unknown.
  virtual void restart_connector(const std::string& name, RestartRequest req,
                                 Callback<std::optional<ConnectorStateInfo>> cb) = 0;

  /// POST /connectors/{c}/tasks/{t}/restart → 204; 404 if unknown connector or task.
  virtual void restart_task(const TaskId& id, Callback<Done> cb) = 0;

  /// PUT /connectors/{c}/pause (Paused → 202), /resume (Started → 202; also
  /// resumes a STOPPED connector), /stop (Stopped → 204, leader only).
  /// 404 if unknown.
  virtual void set_target_state(const std::string& name, TargetState state, Callback<Done> cb) = 0;

  /// GET /connectors/{c}/offsets: the connector's committed offsets (any
  /// worker, any state). Source connectors: the offsets topic; sink
  /// connectors: the committed offsets of their consumer group (KIP-875),
  /// {"kafka_topic","kafka_partition"} → {"kafka_offset"}. 404 if unknown;
  /// 500 "Failed to retrieve consumer group offsets for sink connector ..."
  /// when the broker does not answer.
  virtual void connector_offsets(const std::string& name, Callback<std::vector<ConnectorOffset>> cb) = 0;

  /// PATCH /connectors/{c}/offsets (`offsets` = the non-empty list, checked
  /// by the REST layer) and DELETE /connectors/{c}/offsets (`offsets`
  /// nullopt = reset every partition). Leader only. Replies Connect's success
  /// message ("The offsets for this connector have been altered / reset
  /// successfully"). 404 if unknown; 400 "Connectors must be in the STOPPED
  /// state before their offsets can be modified. ..." unless the target state
  /// is STOPPED. Sinks: 400 with Connect's SinkUtils messages for a bad
  /// entry; PATCH commits (OffsetCommit) or, for null offsets, deletes
  /// (OffsetDelete) the group's offsets, DELETE deletes the group
  /// (DeleteGroups; a missing group is success); 500 with Connect's message
  /// while the group still has members, or naming the broker's error.
  virtual void modify_connector_offsets(const std::string& name, std::optional<std::vector<ConnectorOffset>> offsets,
                                        Callback<std::string> cb) = 0;

  /// GET /connectors/{c}/topics: topics the connector's tasks produced to or
  /// consumed from (status-topic records), sorted. Like Connect, any name is
  /// answered (an unknown connector has none). Any worker, status cache.
  virtual void connector_active_topics(const std::string& name, Callback<std::vector<std::string>> cb) = 0;

  /// PUT /connectors/{c}/topics/reset → 202: tombstones for every active
  /// topic of the connector. Any worker.
  virtual void reset_connector_active_topics(const std::string& name, Callback<Done> cb) = 0;

  /// GET /connector-plugins?connectorsOnly= (default true): installed plugins;
  /// when connectors_only is false also transformations, predicates, converters.
  virtual void connector_plugins(bool connectors_only, Callback<std::vector<PluginInfo>> cb) = 0;

  /// GET /connector-plugins/{plugin}/config: the connector plugin's own keys
  /// (by class name or alias), in definition order. 404 "Unknown plugin
  /// <plugin>." otherwise. Any worker, from local state.
  virtual void connector_plugin_config(const std::string& plugin, Callback<std::vector<ConfigKeyInfo>> cb) = 0;

  /// PUT /connector-plugins/{plugin}/config/validate: validates `config` (its
  /// connector.class present and already checked against the path by the
  /// REST layer) with
  /// the same validator as create/update, so invalid values are 200 with
  /// errors in the body, not a failure. Any worker; writes nothing.
  virtual void validate_connector_config(ConnectorConfig config, Callback<ConfigInfos> cb) = 0;

  /// GET /health. Should answer within 10 s; the REST layer answers 500
  /// "unhealthy" after that.
  virtual void health(Callback<Health> cb) = 0;

  /// This worker's id, advertised REST URL and the Kafka cluster id (GET /,
  /// and the REST layer's check that it does not forward to itself).
  virtual void worker_info(Callback<WorkerInfo> cb) = 0;

  /// GET /worker and GET /cluster (ours): this worker's place in the group
  /// (MemberView). Answers at once from a copy under the herder's mutex.
  /// By default 501 (a herder without group membership).
  virtual void member_view(Callback<MemberView> cb) {
    cb(RestError::not_implemented("this worker is not a member of a Connect group"));
  }

  // ------------------------------------------- kconnectd's and internal routes
  // These answer with a status and a message (StatusCallback) rather than a
  // Reply: the statuses are the leader's own (400/403/503 for a bad
  // signature, 409 not the leader, ...) and the requests are never forwarded.

  /// POST /admin/drain/members (internal, follower to leader): checks the
  /// KIP-507 signature of `body`, then marks `member_id` as draining and
  /// starts a rebalance. `done` gets (202, message), (409, reason) when
  /// this worker is not the leader or no other member could take the work,
  /// or the signature check's (400|403|503, Connect's message).
  virtual void accept_drain_request(const std::string& member_id, SignatureHeaders signature, std::string body,
                                    StatusCallback done) = 0;

  /// POST /connectors/{c}/tasks (internal, follower to leader): checks the
  /// signature, then schedules a task-config generation of `connector`.
  /// `done` gets (204, ""), (404, reason) unknown connector, (409, reason)
  /// not the leader, or the signature check's (400|403|503, message).
  virtual void accept_task_reconfiguration(const std::string& connector, SignatureHeaders signature,
                                           std::string body, StatusCallback done) = 0;

  /// PUT /connectors/{c}/fence (KIP-618, internal): checks the signature,
  /// then fences out the older task generations of `connector`. `done` gets
  /// (204, "") once its tasks may start; 409 not the leader, 404 unknown
  /// connector, 400 not a source connector, 500 fencing failed.
  virtual void accept_fence_request(const std::string& connector, SignatureHeaders signature, std::string body,
                                    StatusCallback done) = 0;

  /// PUT /admin/loggers/{logger}?scope=cluster (KIP-976): writes
  /// `logger-cluster-<logger>` = {"level": `level`} to the config topic;
  /// every worker (this one included) applies it when it reads the record.
  /// Any worker may write it (no leader forwarding, as Connect). `level` is
  /// an upper-case log4j name the REST layer has checked. Done → 204; 503
  /// before the worker has read the config topic; 500 when the write
  /// fails. By default 501 (a herder without a config topic).
  virtual void set_cluster_logger_level(const std::string& logger, const std::string& level, Callback<Done> cb) {
    (void)logger;
    (void)level;
    cb(RestError::not_implemented("cluster-wide log levels need a distributed herder"));
  }

  /// GET /rebalances: a copy of the rebalances this worker saw, oldest
  /// first. Unlike the methods above it answers at once: it only copies a
  /// list under a mutex and never waits for the herder's io thread.
  [[nodiscard]] virtual std::vector<RebalanceRecord> rebalance_history() const = 0;
};

}  // namespace kc::rest
