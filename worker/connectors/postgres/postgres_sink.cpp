#include "worker/connectors/postgres/postgres_sink.h"

#include <libpq-fe.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>

namespace kc::connectors::postgres {

namespace kp = kconnectd;
using Config = kp::Config;
using ConnectError = kp::Error;
using RetriableError = kp::RetriableError;
/// Key -> messages, as Connector.validate returns them.
using ConfigErrors = std::map<std::string, std::vector<std::string>>;

namespace {

// ------------------------------------------------------------------ config

constexpr const char* kUrl = "connection.url";
constexpr const char* kUser = "connection.user";
constexpr const char* kPassword = "connection.password";
constexpr const char* kInsertMode = "insert.mode";
constexpr const char* kPkMode = "pk.mode";
constexpr const char* kPkFields = "pk.fields";
constexpr const char* kAutoCreate = "auto.create";
constexpr const char* kAutoEvolve = "auto.evolve";
constexpr const char* kTableFormat = "table.name.format";
constexpr const char* kBatchSize = "batch.size";
constexpr const char* kDeleteEnabled = "delete.enabled";
constexpr const char* kMaxRetries = "max.retries";
constexpr const char* kRetryBackoff = "retry.backoff.ms";

/// The column names JDBC's pk.mode=kafka uses when pk.fields is empty.
const std::vector<std::string>& kafka_pk_defaults() {
  static const std::vector<std::string> names{"__connect_topic", "__connect_partition", "__connect_offset"};
  return names;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    auto item = trim(s.substr(start, comma - start));
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

std::optional<std::string> get(const Config& c, const char* key) {
  auto it = c.find(key);
  if (it == c.end()) return std::nullopt;
  return it->second;
}

/// "jdbc:postgresql://..." -> "postgresql://..." (users paste JDBC URLs).
std::string strip_jdbc(const std::string& url) {
  const std::string t = trim(url);
  return t.rfind("jdbc:", 0) == 0 ? t.substr(5) : t;
}

std::optional<std::string> one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed)
    if (lower(trim(v)) == a) return std::nullopt;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return "String must be one of: " + list;
}

std::optional<std::string> check_insert_mode(const std::string& v) { return one_of(v, {"insert", "upsert", "update"}); }
std::optional<std::string> check_pk_mode(const std::string& v) {
  return one_of(v, {"none", "kafka", "record_key", "record_value"});
}

std::optional<std::string> check_url(const std::string& v) {
  const std::string url = strip_jdbc(v);
  if (url.empty()) return std::string("String must be non-empty");
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    std::string why = err ? trim(err) : "libpq could not parse it";
    if (err) PQfreemem(err);
    return "not a PostgreSQL connection URI (" + why + ")";
  }
  PQconninfoFree(opts);
  return std::nullopt;
}

std::optional<std::string> check_table_format(const std::string& v) {
  if (trim(v).empty()) return std::string("String must be non-empty");
  return std::nullopt;
}

bool parse_bool(const std::string& v, bool& out) {
  const auto l = lower(trim(v));
  if (l == "true") out = true;
  else if (l == "false") out = false;
  else return false;
  return true;
}

bool parse_int64(const std::string& v, int64_t& out) {
  const auto t = trim(v);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

/// One key of the connector: its ConfigDef entry and the checks the
/// connector applies itself (start() checks all of them; validation gets
/// the type and range checks from the worker, the rest from validate()).
struct Key {
  const char* name;
  kc_config_type type;
  bool required;
  std::optional<std::string> default_value;  ///< nullopt and !required = null
  kc_importance importance;
  const char* group;
  int32_t order;  ///< within the group; -1 = none
  const char* doc;
  const char* display;
  std::optional<double> at_least;
  std::optional<std::string> (*check)(const std::string& value) = nullptr;
};

/// The connector's keys, in display order.
const std::vector<Key>& keys() {
  static const std::vector<Key> k{
      {"topics", KC_CONFIG_LIST, false, "", KC_IMPORTANCE_HIGH, "Common", -1, "Comma-separated topics to consume.",
       "Topics", std::nullopt},
      {"topics.regex", KC_CONFIG_STRING, false, "", KC_IMPORTANCE_HIGH, "Common", -1,
       "Regular expression of the topics to consume.", "Topics regex", std::nullopt},
      {kUrl, KC_CONFIG_STRING, true, std::nullopt, KC_IMPORTANCE_HIGH, "Connection", 1,
       "PostgreSQL connection URI, e.g. postgresql://host:5432/db (a jdbc:postgresql:// URL is accepted "
       "and its jdbc: prefix dropped).",
       "JDBC URL", std::nullopt, &check_url},
      {kUser, KC_CONFIG_STRING, false, std::nullopt, KC_IMPORTANCE_HIGH, "Connection", 2,
       "Database user; empty = the URI's or libpq's default.", "JDBC User", std::nullopt},
      {kPassword, KC_CONFIG_PASSWORD, false, std::nullopt, KC_IMPORTANCE_HIGH, "Connection", 3,
       "Database password; never logged.", "JDBC Password", std::nullopt},
      {kInsertMode, KC_CONFIG_STRING, false, "insert", KC_IMPORTANCE_HIGH, "Writes", 1,
       "insert: plain INSERT; upsert: INSERT ... ON CONFLICT (pk) DO UPDATE; update: UPDATE by the pk.",
       "Insert Mode", std::nullopt, &check_insert_mode},
      {kBatchSize, KC_CONFIG_INT, false, "3000", KC_IMPORTANCE_MEDIUM, "Writes", 2,
       "Rows per INSERT statement (all rows of one put() share one transaction).", "Batch Size", 1},
      {kDeleteEnabled, KC_CONFIG_BOOLEAN, false, "false", KC_IMPORTANCE_MEDIUM, "Writes", 3,
       "Delete the row of a tombstone (null value); needs pk.mode=record_key.", "Enable deletes", std::nullopt},
      {kTableFormat, KC_CONFIG_STRING, false, "${topic}", KC_IMPORTANCE_MEDIUM, "Data Mapping", 1,
       "Destination table name; ${topic} is replaced by the record's topic. 'schema.table' names a schema.",
       "Table Name Format", std::nullopt, &check_table_format},
      {kPkMode, KC_CONFIG_STRING, false, "none", KC_IMPORTANCE_HIGH, "Data Mapping", 2,
       "Where the primary key comes from: none, kafka (topic, partition, offset), record_key, "
       "record_value.",
       "Primary Key Mode", std::nullopt, &check_pk_mode},
      {kPkFields, KC_CONFIG_LIST, false, "", KC_IMPORTANCE_MEDIUM, "Data Mapping", 3,
       "Primary key column names; their meaning depends on pk.mode (empty = all fields of the "
       "key/value struct, or __connect_topic,__connect_partition,__connect_offset for kafka).",
       "Primary Key Fields", std::nullopt},
      {kAutoCreate, KC_CONFIG_BOOLEAN, false, "false", KC_IMPORTANCE_MEDIUM, "DDL Support", 1,
       "CREATE TABLE from the record schema when the table is missing.", "Auto-Create", std::nullopt},
      {kAutoEvolve, KC_CONFIG_BOOLEAN, false, "false", KC_IMPORTANCE_MEDIUM, "DDL Support", 2,
       "ALTER TABLE ... ADD COLUMN for record fields the table lacks.", "Auto-Evolve", std::nullopt},
      {kMaxRetries, KC_CONFIG_INT, false, "10", KC_IMPORTANCE_MEDIUM, "Retries", 1,
       "Retriable failures (connection lost, serialization failure) in a row before the task fails.",
       "Maximum Retries", 0},
      {kRetryBackoff, KC_CONFIG_INT, false, "3000", KC_IMPORTANCE_MEDIUM, "Retries", 2,
       "Milliseconds to wait after a retriable failure before the records are tried again.",
       "Retry Backoff (millis)", 0},
  };
  return k;
}

kp::ConfigDef config_def() {
  kp::ConfigDef d;
  for (const auto& k : keys()) {
    if (k.required) d.define(k.name, k.type, k.importance, k.doc);
    else if (k.default_value) d.define(k.name, k.type, *k.default_value, k.importance, k.doc);
    else d.define(k.name, k.type, k.importance, k.doc).optional();
    d.group(k.group).order(k.order).display(k.display);
    if (k.at_least) d.at_least(*k.at_least);
  }
  return d;
}

/// The connector's own per-key checks (check_url and the like) of the keys
/// `config` has.
void check_errors(const Config& config, ConfigErrors& errors) {
  for (const auto& k : keys()) {
    auto v = get(config, k.name);
    if (!v || !k.check) continue;
    if (auto why = k.check(*v))
      errors[k.name].push_back("Invalid value " + *v + " for configuration " + k.name + ": " + *why);
  }
}

/// The cross-key rule.
void rule_errors(const Config& config, ConfigErrors& errors) {
  auto set = [&](const char* k) {
    auto v = get(config, k);
    return v && !trim(*v).empty();
  };
  if (set("topics") == set("topics.regex")) {
    const std::string msg = set("topics") ? "topics and topics.regex are mutually exclusive options, but both are set."
                                          : "Must configure one of topics or topics.regex";
    errors["topics"].push_back(msg);
    errors["topics.regex"].push_back(msg);
  }
  const std::string im = lower(trim(get(config, kInsertMode).value_or("insert")));
  const std::string pm = lower(trim(get(config, kPkMode).value_or("none")));
  if ((im == "upsert" || im == "update") && pm == "none")
    errors[kPkMode].push_back("insert.mode=" + im +
                              " needs a primary key: set pk.mode to kafka, record_key or record_value");
  bool del = false;
  if (auto d = get(config, kDeleteEnabled); d && parse_bool(*d, del) && del && pm != "record_key")
    errors[kDeleteEnabled].push_back("Deletes are only supported for pk.mode record_key (pk.mode is " + pm + ")");
  const auto pk = split_list(get(config, kPkFields).value_or(""));
  if (pm == "kafka" && !pk.empty() && pk.size() != 3)
    errors[kPkFields].push_back("pk.mode=kafka needs exactly 3 pk.fields (topic, partition and offset columns) or "
                                "none for the defaults, got " +
                                std::to_string(pk.size()));
}

/// Every error of `config`: the worker's type and range checks, then the
/// connector's own checks and rule (what validation reports, per key in
/// the same order).
ConfigErrors config_errors(const Config& config) {
  ConfigErrors errors;
  for (const auto& k : keys()) {
    auto v = get(config, k.name);
    if (!v) {
      if (k.required)
        errors[k.name].push_back("Missing required configuration \"" + std::string(k.name) +
                                 "\" which has no default value.");
      continue;
    }
    if (k.type == KC_CONFIG_BOOLEAN) {
      bool b;
      if (!parse_bool(*v, b))
        errors[k.name].push_back("Invalid value " + *v + " for configuration " + k.name +
                                 ": Expected value to be either true or false");
    } else if (k.type == KC_CONFIG_INT) {
      int64_t n;
      if (!parse_int64(*v, n) || n > INT32_MAX || n < INT32_MIN)
        errors[k.name].push_back("Invalid value " + *v + " for configuration " + k.name + ": Not a number of type INT");
      else if (k.at_least && static_cast<double>(n) < *k.at_least)
        errors[k.name].push_back("Invalid value " + *v + " for configuration " + k.name + ": Value must be at least " +
                                 std::to_string(static_cast<int64_t>(*k.at_least)));
    }
  }
  check_errors(config, errors);
  rule_errors(config, errors);
  return errors;
}

}  // namespace

PostgresSinkConfig parse_postgres_sink_config(const Config& config) {
  auto errors = config_errors(config);
  // topics/topics.regex are the runtime's business; a task config may lack them.
  errors.erase("topics");
  errors.erase("topics.regex");
  if (!errors.empty()) {
    std::string msg = "PostgresSink configuration is invalid:";
    for (const auto& [k, list] : errors)
      for (const auto& e : list) msg += " " + k + ": " + e + ";";
    msg.pop_back();
    throw ConnectError(msg);
  }
  PostgresSinkConfig c;
  c.url = strip_jdbc(*get(config, kUrl));
  c.user = trim(get(config, kUser).value_or(""));
  c.password = get(config, kPassword).value_or("");
  const auto im = lower(trim(get(config, kInsertMode).value_or("insert")));
  c.insert_mode = im == "upsert" ? InsertMode::Upsert : im == "update" ? InsertMode::Update : InsertMode::Insert;
  const auto pm = lower(trim(get(config, kPkMode).value_or("none")));
  c.pk_mode = pm == "kafka"          ? PkMode::Kafka
              : pm == "record_key"   ? PkMode::RecordKey
              : pm == "record_value" ? PkMode::RecordValue
                                     : PkMode::None;
  c.pk_fields = split_list(get(config, kPkFields).value_or(""));
  if (auto v = get(config, kAutoCreate)) parse_bool(*v, c.auto_create);
  if (auto v = get(config, kAutoEvolve)) parse_bool(*v, c.auto_evolve);
  if (auto v = get(config, kDeleteEnabled)) parse_bool(*v, c.delete_enabled);
  if (auto v = get(config, kTableFormat)) c.table_name_format = trim(*v);
  int64_t n;
  if (auto v = get(config, kBatchSize); v && parse_int64(*v, n)) c.batch_size = static_cast<int>(n);
  if (auto v = get(config, kMaxRetries); v && parse_int64(*v, n)) c.max_retries = static_cast<int>(n);
  if (auto v = get(config, kRetryBackoff); v && parse_int64(*v, n)) c.retry_backoff_ms = n;
  return c;
}

// ------------------------------------------------------------------ types

namespace {

// Type OIDs of PostgreSQL's built-in types (catalog/pg_type.dat), so that
// every parameter has its type and PostgreSQL need not guess.
constexpr Oid kBoolOid = 16, kByteaOid = 17, kInt8Oid = 20, kInt2Oid = 21, kInt4Oid = 23, kTextOid = 25,
              kFloat4Oid = 700, kFloat8Oid = 701, kDateOid = 1082, kTimeOid = 1083, kTimestampOid = 1114,
              kNumericOid = 1700;

// Connect's logical type names and constants (org.apache.kafka.connect.data).
constexpr const char* kDecimalName = "org.apache.kafka.connect.data.Decimal";
constexpr const char* kDateName = "org.apache.kafka.connect.data.Date";
constexpr const char* kTimeName = "org.apache.kafka.connect.data.Time";
constexpr const char* kTimestampName = "org.apache.kafka.connect.data.Timestamp";
constexpr int64_t kMillisPerDay = 86400000;

/// Schema.Type's name ("INT64", "STRUCT", ...).
const char* type_name(kc_schema_type t) {
  static const char* const names[] = {"INT8",    "INT16",  "INT32", "INT64", "FLOAT32", "FLOAT64",
                                      "BOOLEAN", "STRING", "BYTES", "ARRAY", "MAP",     "STRUCT"};
  const auto i = static_cast<size_t>(t);
  return i < sizeof names / sizeof *names ? names[i] : "UNKNOWN";
}

/// The Java class of a value of `kind`, as Connect's messages name it.
const char* java_class_name(kc_value_kind kind) {
  static const char* const names[] = {"",
                                      "java.lang.Byte",
                                      "java.lang.Short",
                                      "java.lang.Integer",
                                      "java.lang.Long",
                                      "java.lang.Float",
                                      "java.lang.Double",
                                      "java.lang.Boolean",
                                      "java.lang.String",
                                      "[B",
                                      "java.util.ArrayList",
                                      "java.util.HashMap",
                                      "org.apache.kafka.connect.data.Struct",
                                      "java.math.BigDecimal",
                                      "java.util.Date"};
  const auto i = static_cast<size_t>(kind);
  return i < sizeof names / sizeof *names ? names[i] : "java.lang.Object";
}

enum class Logical { None, Decimal, Date, Time, Timestamp };

Logical logical_of(const kp::Schema& s) {
  const auto n = s.name();
  if (!n) return Logical::None;
  if (*n == kDecimalName) return Logical::Decimal;
  if (*n == kDateName) return Logical::Date;
  if (*n == kTimeName) return Logical::Time;
  if (*n == kTimestampName) return Logical::Timestamp;
  return Logical::None;
}

Oid oid_of(const kp::Schema& s) {
  switch (logical_of(s)) {
    case Logical::Decimal: return kNumericOid;
    case Logical::Date: return kDateOid;
    case Logical::Time: return kTimeOid;
    case Logical::Timestamp: return kTimestampOid;
    case Logical::None: break;
  }
  switch (s.type()) {
    case KC_INT8:
    case KC_INT16: return kInt2Oid;
    case KC_INT32: return kInt4Oid;
    case KC_INT64: return kInt8Oid;
    case KC_FLOAT32: return kFloat4Oid;
    case KC_FLOAT64: return kFloat8Oid;
    case KC_BOOLEAN: return kBoolOid;
    case KC_STRING: return kTextOid;
    case KC_BYTES: return kByteaOid;
    default: return 0;
  }
}

/// One statement parameter: text (or binary for bytea), or SQL NULL.
struct Param {
  bool null = true;
  std::string data;
  Oid oid = 0;
  int format = 0;  ///< 0 text, 1 binary
};

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/// "YYYY-MM-DD" and/or "HH:MM:SS.mmm" of `ms` since the epoch, UTC (BC years
/// in PostgreSQL's "... BC" form).
std::string format_utc(int64_t ms, bool with_date, bool with_time) {
  const int64_t secs = floor_div(ms, 1000);
  const int millis = static_cast<int>(ms - secs * 1000);
  const time_t t = static_cast<time_t>(secs);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[80];
  std::string out;
  long year = static_cast<long>(tm.tm_year) + 1900;
  if (with_date) {
    std::snprintf(buf, sizeof buf, "%04ld-%02d-%02d", year <= 0 ? 1 - year : year, tm.tm_mon + 1, tm.tm_mday);
    out += buf;
  }
  if (with_time) {
    std::snprintf(buf, sizeof buf, "%s%02d:%02d:%02d.%03d", with_date ? " " : "", tm.tm_hour, tm.tm_min, tm.tm_sec,
                  millis);
    out += buf;
  }
  if (with_date && year <= 0) out += " BC";
  return out;
}

std::string format_time_of_day(int64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld.%03lld", static_cast<long long>(ms / 3600000),
                static_cast<long long>(ms / 60000 % 60), static_cast<long long>(ms / 1000 % 60),
                static_cast<long long>(ms % 1000));
  return buf;
}

template <typename F>
std::string shortest(F f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

/// Any integer kind of `v` as int64; nullopt when it holds none.
std::optional<int64_t> integral(const kp::ValueView& v) {
  switch (v.kind()) {
    case KC_VALUE_INT8: return v.as_int8();
    case KC_VALUE_INT16: return v.as_int16();
    case KC_VALUE_INT32: return v.as_int32();
    case KC_VALUE_INT64: return v.as_int64();
    default: return std::nullopt;
  }
}

/// Where a value came from, for error messages.
struct At {
  const kp::SinkRecord* rec;
  std::string what;  ///< e.g. "field 'x' of the value"
};

std::string where(const kp::SinkRecord& r) {
  return "topic '" + r.topic() + "', partition " + std::to_string(r.kafka_partition()) + ", offset " +
         std::to_string(r.kafka_offset());
}

[[noreturn]] void bad_value(const At& at, const kp::Schema& s, const kp::ValueView& v) {
  const auto name = s.name();
  throw ConnectError("PostgresSink cannot write " + at.what + " of the record at " + where(*at.rec) + ": schema " +
                     std::string(type_name(s.type())) + (name ? " (" + *name + ")" : "") +
                     " with a value of class " + java_class_name(v.kind()));
}

/// Decimal.toLogical of BYTES `b` under Decimal schema `s`, as text
/// (BigDecimal.toString). Throws with Connect's messages for a missing or
/// bad scale and an empty array.
std::string decimal_bytes_text(const kp::Schema& s, std::string_view b, const At& at) {
  auto fail = [&](const std::string& why) {
    return ConnectError("PostgresSink: " + at.what + " at " + where(*at.rec) + ": " + why);
  };
  const auto text = s.parameter("scale");
  if (!text) throw fail("Invalid Decimal schema: scale parameter not found.");
  const char* p = text->data();
  const char* e = p + text->size();
  if (p != e && *p == '+') ++p;  // Integer.parseInt accepts a leading '+'
  int32_t scale = 0;
  auto [end, ec] = std::from_chars(p, e, scale);
  if (ec != std::errc() || end != e || p == e) throw fail("Invalid scale parameter found in Decimal schema: ");
  if (b.empty()) throw fail("Invalid Decimal value: zero-length byte array");
  kp::Value d;
  kp::host().value_set_decimal(d.handle(), b.data(), b.size(), scale);
  return d.view().to_string();
}

/// The text (or bytea binary) form of `v` for a column of schema `s`.
Param param_of(const kp::Schema& s, const kp::ValueView& v, const At& at) {
  Param p;
  p.oid = oid_of(s);
  if (p.oid == 0)
    throw ConnectError("PostgresSink cannot write " + at.what + " of the record at " + where(*at.rec) +
                       ": schema type " + std::string(type_name(s.type())) + " has no PostgreSQL column type");
  if (v.is_null()) return p;
  p.null = false;
  const auto kind = v.kind();
  switch (logical_of(s)) {
    case Logical::Decimal: {
      if (kind == KC_VALUE_DECIMAL) p.data = v.to_string();
      else if (auto b = v.bytes_ref()) p.data = decimal_bytes_text(s, *b, at);
      else bad_value(at, s, v);
      return p;
    }
    case Logical::Date:
    case Logical::Time:
    case Logical::Timestamp: {
      int64_t ms;
      const auto lg = logical_of(s);
      if (kind == KC_VALUE_DATE) ms = v.as_date();
      else if (auto i = integral(v)) ms = lg == Logical::Date ? *i * kMillisPerDay : *i;
      else bad_value(at, s, v);
      if (lg == Logical::Time) p.data = format_time_of_day(ms);
      else p.data = format_utc(ms, true, lg == Logical::Timestamp);
      return p;
    }
    case Logical::None: break;
  }
  switch (s.type()) {
    case KC_INT8:
    case KC_INT16:
    case KC_INT32:
    case KC_INT64:
      if (auto i = integral(v)) p.data = std::to_string(*i);
      else bad_value(at, s, v);
      break;
    case KC_FLOAT32:
      if (kind == KC_VALUE_FLOAT32) p.data = shortest(v.as_float32());
      else if (kind == KC_VALUE_FLOAT64) p.data = shortest(v.as_float64());
      else bad_value(at, s, v);
      break;
    case KC_FLOAT64:
      if (kind == KC_VALUE_FLOAT64) p.data = shortest(v.as_float64());
      else if (kind == KC_VALUE_FLOAT32) p.data = shortest(v.as_float32());
      else bad_value(at, s, v);
      break;
    case KC_BOOLEAN:
      if (kind == KC_VALUE_BOOLEAN) p.data = v.as_boolean() ? "true" : "false";
      else bad_value(at, s, v);
      break;
    case KC_STRING:
      if (auto str = v.string_ref()) {
        if (str->find('\0') != std::string_view::npos)
          throw ConnectError("PostgresSink cannot write " + at.what + " of the record at " + where(*at.rec) +
                             ": PostgreSQL text cannot hold a NUL character");
        p.data = std::string(*str);
      } else {
        bad_value(at, s, v);
      }
      break;
    case KC_BYTES:
      if (auto b = v.bytes_ref()) {
        p.data = std::string(*b);
        p.format = 1;
      } else {
        bad_value(at, s, v);
      }
      break;
    default: bad_value(at, s, v);
  }
  return p;
}

/// The PostgreSQL column type auto.create / auto.evolve give a field of
/// `schema` (JDBC's PostgreSqlDatabaseDialect): INT8/INT16 SMALLINT, INT32
/// INT, INT64 BIGINT, FLOAT32 REAL, FLOAT64 DOUBLE PRECISION, BOOLEAN,
/// STRING TEXT, BYTES BYTEA, Decimal DECIMAL, Date DATE, Time TIME,
/// Timestamp TIMESTAMP. Throws for ARRAY, MAP and STRUCT.
std::string postgres_column_type(const kp::Schema& schema, const std::string& field) {
  switch (logical_of(schema)) {
    case Logical::Decimal: return "DECIMAL";
    case Logical::Date: return "DATE";
    case Logical::Time: return "TIME";
    case Logical::Timestamp: return "TIMESTAMP";
    case Logical::None: break;
  }
  switch (schema.type()) {
    case KC_INT8:
    case KC_INT16: return "SMALLINT";
    case KC_INT32: return "INT";
    case KC_INT64: return "BIGINT";
    case KC_FLOAT32: return "REAL";
    case KC_FLOAT64: return "DOUBLE PRECISION";
    case KC_BOOLEAN: return "BOOLEAN";
    case KC_STRING: return "TEXT";
    case KC_BYTES: return "BYTEA";
    default:
      throw ConnectError("PostgresSink has no PostgreSQL column type for field '" + field + "' of schema type " +
                         std::string(type_name(schema.type())));
  }
}

// ------------------------------------------------------------------ the task

/// A retriable database failure (connection lost, serialization failure...).
struct Retriable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using ResultPtr = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// Where a column's value comes from.
enum class Source { KafkaTopic, KafkaPartition, KafkaOffset, KeyWhole, KeyField, ValueField };

/// A column; its schema is borrowed from the put's records (valid during
/// that put only: layouts are not kept across puts).
struct Column {
  std::string name;
  kp::Schema schema;
  Source source = Source::ValueField;
};

/// The columns one run of records writes (JDBC's FieldsMetadata): the
/// primary key columns, then the others.
struct Layout {
  std::vector<Column> pk;
  std::vector<Column> rest;
};

/// A table name split as PostgreSQL reads it: [schema.]table.
struct TableId {
  std::optional<std::string> schema;
  std::string table;
  std::string display() const { return (schema ? *schema + "." : "") + table; }
  auto operator<=>(const TableId&) const = default;
};

/// The sink task (JdbcSinkTask + JdbcDbWriter): one libpq connection,
/// opened on the first put(); each put() is one transaction; DDL for
/// auto.create / auto.evolve runs inside it. Throws RetriableError for
/// connection-level failures (up to max.retries in a row), ConnectError for
/// the rest.
class PostgresSinkTask : public kp::SinkTask {
 public:
  ~PostgresSinkTask() override { disconnect(); }

  void start(const Config& config) override {
    cfg_ = parse_postgres_sink_config(config);
    auto name = config.find("name");
    name_ = name == config.end() ? "postgres-sink" : name->second;
    // Connects lazily, on the first put(): a database that is down at start
    // is a retriable put() failure, not a failed task.
  }

  void put(const kp::SinkRecords& batch) override {
    if (batch.size() == 0) return;
    std::vector<kp::SinkRecord> records;
    records.reserve(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) records.push_back(batch[i]);
    try {
      ensure_connected();
      try {
        exec("BEGIN");
      } catch (const Retriable&) {
        // An idle connection the server dropped (restart, idle timeout)
        // shows only when used: reconnect once before giving up.
        disconnect();
        ensure_connected();
        exec("BEGIN");
      }
      write_all(records);
      exec("COMMIT");
      retries_ = 0;
    } catch (const Retriable& e) {
      abort_transaction();
      ++retries_;
      if (retries_ > cfg_.max_retries)
        throw ConnectError("PostgresSink gave up after " + std::to_string(cfg_.max_retries) +
                           " retries (max.retries): " + e.what());
      kp::log(kp::LogLevel::Warn, name_ + ": PostgreSQL write failed (attempt " + std::to_string(retries_) + " of " +
                                      std::to_string(cfg_.max_retries + 1) +
                                      "), the records will be written again: " + e.what());
      // A stop ends the backoff: the records go back uncommitted (README "Retries").
      if (cfg_.retry_backoff_ms > 0) context().wait_stopped(std::chrono::milliseconds(cfg_.retry_backoff_ms));
      throw RetriableError(e.what());
    } catch (...) {
      abort_transaction();
      throw;
    }
  }

  void flush(const kp::Offsets&) override {
    // Nothing is buffered: every put() committed its transaction already.
  }

  void stop() override { disconnect(); }

 private:
  // ---------------------------------------------------------- connection

  void disconnect() {
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    tables_.clear();
  }

  void ensure_connected() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    disconnect();
    std::vector<const char*> keys{"dbname", "application_name", "connect_timeout"};
    std::vector<const char*> vals{cfg_.url.c_str(), "kconnectd", "10"};
    if (!cfg_.user.empty()) {
      keys.push_back("user");
      vals.push_back(cfg_.user.c_str());
    }
    if (!cfg_.password.empty()) {
      keys.push_back("password");
      vals.push_back(cfg_.password.c_str());
    }
    keys.push_back(nullptr);
    vals.push_back(nullptr);
    PGconn* c = PQconnectdbParams(keys.data(), vals.data(), /*expand_dbname=*/1);
    if (!c || PQstatus(c) != CONNECTION_OK) {
      // host/port/db only: the URI may carry a password.
      std::string target = c ? std::string(PQhost(c) ? PQhost(c) : "?") + ":" + (PQport(c) ? PQport(c) : "?") + "/" +
                                   (PQdb(c) ? PQdb(c) : "?")
                             : "?";
      std::string why = c ? trim(PQerrorMessage(c)) : "out of memory";
      if (c) PQfinish(c);
      throw Retriable("could not connect to PostgreSQL at " + target + ": " + why);
    }
    // Server notices (e.g. "terminating connection due to administrator
    // command") go to the log instead of libpq's default, stderr.
    PQsetNoticeProcessor(
        c,
        [](void* self, const char* msg) {
          kp::log(kp::LogLevel::Info, static_cast<PostgresSinkTask*>(self)->name_ + ": PostgreSQL: " + trim(msg));
        },
        this);
    conn_ = c;
  }

  /// Rolls back after a failure (when the connection still works); the
  /// table cache may hold DDL of the lost transaction, so it is dropped.
  void abort_transaction() noexcept {
    tables_.clear();
    if (!conn_) return;
    if (PQstatus(conn_) != CONNECTION_OK) {
      disconnect();
      return;
    }
    PGresult* r = PQexec(conn_, "ROLLBACK");
    if (r) PQclear(r);
    if (PQstatus(conn_) != CONNECTION_OK) disconnect();
  }

  /// Runs `sql` with `params`; throws Retriable or ConnectError with
  /// PostgreSQL's message and SQLSTATE.
  ResultPtr exec(const std::string& sql, const std::vector<Param>& params = {}) {
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size()), formats(params.size());
    std::vector<Oid> types(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      values[i] = params[i].null ? nullptr : params[i].data.data();
      lengths[i] = static_cast<int>(params[i].data.size());
      formats[i] = params[i].format;
      types[i] = params[i].oid;
    }
    ResultPtr r(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), types.data(), values.data(),
                             lengths.data(), formats.data(), 0),
                &PQclear);
    const auto st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    std::string state, msg;
    if (r) {
      if (const char* s = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE)) state = s;
      if (const char* m = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY)) msg = m;
      if (const char* d = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_DETAIL)) msg += std::string(" (") + d + ")";
    }
    if (msg.empty()) msg = trim(PQerrorMessage(conn_));
    if (!state.empty()) msg += " [SQLSTATE " + state + "]";
    const bool lost = PQstatus(conn_) != CONNECTION_OK;
    // 08: connection exception; 40001/40P01: serialization failure and
    // deadlock; 53: insufficient resources; 57P0x: server shutting down.
    if (lost || state.rfind("08", 0) == 0 || state == "40001" || state == "40P01" || state.rfind("53", 0) == 0 ||
        state.rfind("57P0", 0) == 0)
      throw Retriable("PostgreSQL: " + msg);
    throw ConnectError("PostgresSink: PostgreSQL refused `" + sql.substr(0, 120) + (sql.size() > 120 ? "...`" : "`") +
                       ": " + msg);
  }

  std::string ident(const std::string& name) {
    char* q = PQescapeIdentifier(conn_, name.data(), name.size());
    if (!q) throw ConnectError("PostgresSink: cannot quote identifier '" + name + "': " + trim(PQerrorMessage(conn_)));
    std::string out(q);
    PQfreemem(q);
    return out;
  }

  std::string literal(const std::string& text) {
    char* q = PQescapeLiteral(conn_, text.data(), text.size());
    if (!q) throw ConnectError("PostgresSink: cannot quote literal: " + trim(PQerrorMessage(conn_)));
    std::string out(q);
    PQfreemem(q);
    return out;
  }

  std::string qualified(const TableId& t) { return (t.schema ? ident(*t.schema) + "." : "") + ident(t.table); }

  // ---------------------------------------------------------- mapping

  TableId table_of(const kp::SinkRecord& r) const {
    std::string name = cfg_.table_name_format;
    const std::string topic = r.topic();
    for (size_t pos; (pos = name.find("${topic}")) != std::string::npos;) name.replace(pos, 8, topic);
    TableId id;
    const auto dot = name.find('.');
    if (dot == std::string::npos) {
      id.table = name;
    } else {
      id.schema = name.substr(0, dot);
      id.table = name.substr(dot + 1);
      if (id.schema->empty() || id.table.empty() || id.table.find('.') != std::string::npos)
        throw ConnectError("PostgresSink: table name '" + name + "' (from table.name.format '" +
                           cfg_.table_name_format + "' and topic '" + topic +
                           "') must be 'table' or 'schema.table'; rename the topic with table.name.format or a "
                           "transform");
    }
    return id;
  }

  bool is_delete(const kp::SinkRecord& r) const { return cfg_.delete_enabled && r.value().is_null(); }

  /// The value must be a Struct with a STRUCT schema (JsonConverter with
  /// schemas.enable=true gives one).
  void check_value(const kp::SinkRecord& r) const {
    const auto s = r.value_schema();
    const auto v = r.value();
    if (s && s.type() == KC_STRUCT && v.kind() == KC_VALUE_STRUCT) return;
    const std::string value_kind = v.is_null() ? "null" : java_class_name(v.kind());
    const std::string schema_kind = s ? std::string(type_name(s.type())) : "null";
    std::string hint = v.is_null() ? " (tombstones delete rows only with delete.enabled=true and "
                                                 "pk.mode=record_key)"
                                               : " (use a converter that gives schemas, e.g. JsonConverter with "
                                                 "value.converter.schemas.enable=true)";
    throw ConnectError("PostgresSink '" + name_ + "' requires records with a non-null Struct value and a STRUCT "
                       "value schema, but the record at " + where(r) + " has a " + value_kind + " value and a " +
                       schema_kind + " value schema" + hint);
  }

  Layout layout_of(const kp::SinkRecord& r, bool del) const {
    Layout l;
    const kp::Schema vs = del ? kp::Schema() : r.value_schema();
    std::set<std::string> pk_names;
    auto add_value_fields = [&](bool skip_pk) {
      if (!vs) return;
      for (size_t i = 0; i < vs.field_count(); ++i) {
        std::string name = vs.field_name(i);
        if (!skip_pk || !pk_names.count(name)) l.rest.push_back(Column{name, vs.field_schema(i), Source::ValueField});
      }
    };
    // pk.fields of a struct (all its fields when empty), or an error naming
    // the missing one.
    auto pk_from_struct = [&](const kp::Schema& st, const char* which, Source source) {
      if (cfg_.pk_fields.empty()) {
        for (size_t i = 0; i < st.field_count(); ++i) l.pk.push_back(Column{st.field_name(i), st.field_schema(i), source});
        return;
      }
      for (const auto& n : cfg_.pk_fields) {
        const auto f = st.field_index(n);
        if (!f)
          throw ConnectError("PostgresSink: pk.fields names '" + n + "', which the " + which +
                             " struct of the record at " + where(r) + " does not have");
        l.pk.push_back(Column{n, st.field_schema(*f), source});
      }
    };
    switch (cfg_.pk_mode) {
      case PkMode::None: add_value_fields(false); break;
      case PkMode::Kafka: {
        const auto& names = cfg_.pk_fields.empty() ? kafka_pk_defaults() : cfg_.pk_fields;
        l.pk.push_back(Column{names[0], kp::Schema::string(), Source::KafkaTopic});
        l.pk.push_back(Column{names[1], kp::Schema::int32(), Source::KafkaPartition});
        l.pk.push_back(Column{names[2], kp::Schema::int64(), Source::KafkaOffset});
        for (const auto& n : names) pk_names.insert(n);
        add_value_fields(true);
        break;
      }
      case PkMode::RecordKey: {
        const kp::Schema ks = r.key_schema();
        if (!ks)
          throw ConnectError("PostgresSink: pk.mode=record_key needs a key schema, but the record at " + where(r) +
                             " has none (use a key.converter that gives schemas)");
        if (ks.type() == KC_STRUCT) {
          pk_from_struct(ks, "key", Source::KeyField);
        } else {
          if (cfg_.pk_fields.size() != 1)
            throw ConnectError("PostgresSink: the key of the record at " + where(r) + " is a primitive (" +
                               std::string(type_name(ks.type())) +
                               "), so pk.mode=record_key needs exactly one name in pk.fields, got " +
                               std::to_string(cfg_.pk_fields.size()));
          l.pk.push_back(Column{cfg_.pk_fields[0], ks, Source::KeyWhole});
        }
        for (const auto& c : l.pk) pk_names.insert(c.name);
        add_value_fields(true);
        break;
      }
      case PkMode::RecordValue: {
        pk_from_struct(vs, "value", Source::ValueField);
        for (const auto& c : l.pk) pk_names.insert(c.name);
        add_value_fields(true);
        break;
      }
    }
    if (l.pk.empty() && l.rest.empty())
      throw ConnectError("PostgresSink: the record at " + where(r) + " gives no columns to write");
    return l;
  }

  Param column_param(const Column& c, const kp::SinkRecord& r) const {
    switch (c.source) {
      case Source::KafkaTopic: return Param{false, r.topic(), kTextOid, 0};
      case Source::KafkaPartition: return Param{false, std::to_string(r.kafka_partition()), kInt4Oid, 0};
      case Source::KafkaOffset: return Param{false, std::to_string(r.kafka_offset()), kInt8Oid, 0};
      case Source::KeyWhole: return param_of(c.schema, r.key(), At{&r, "the key"});
      case Source::KeyField:
      case Source::ValueField: {
        const bool key = c.source == Source::KeyField;
        const kp::ValueView whole = key ? r.key() : r.value();
        const At at{&r, "field '" + c.name + "' of the " + (key ? "key" : "value")};
        if (whole.kind() != KC_VALUE_STRUCT) throw ConnectError("PostgresSink: " + at.what + " at " + where(r) + ": the " + (key ? "key" : "value") +
                                    " is not a Struct");
        const kc_value* v = kp::host().value_struct_get(whole.handle(), c.name.c_str());
        if (!v) throw ConnectError("PostgresSink: " + at.what + " at " + where(r) + ": " + kp::host().last_error());
        return param_of(c.schema, kp::ValueView(v), at);
      }
    }
    return {};
  }

  // ---------------------------------------------------------- DDL

  /// The table's column names, or nullopt when it does not exist.
  std::optional<std::set<std::string>> load_columns(const TableId& t) {
    auto r = exec(
        "SELECT a.attname FROM (SELECT to_regclass($1) AS oid) c LEFT JOIN pg_catalog.pg_attribute a "
        "ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped WHERE c.oid IS NOT NULL",
        {Param{false, qualified(t), kTextOid, 0}});
    if (PQntuples(r.get()) == 0) return std::nullopt;
    std::set<std::string> cols;
    for (int i = 0; i < PQntuples(r.get()); ++i)
      if (!PQgetisnull(r.get(), i, 0)) cols.insert(PQgetvalue(r.get(), i, 0));
    return cols;
  }

  std::string column_ddl(const Column& c, bool pk, const kp::SinkRecord& r) {
    std::string d = ident(c.name) + " " + postgres_column_type(c.schema, c.name);
    if (pk || !c.schema.optional()) d += " NOT NULL";
    if (auto dv = c.schema.default_value(); dv && !kp::ValueView(*dv).is_null()) {
      Param p = param_of(c.schema, kp::ValueView(*dv), At{&r, "the default of field '" + c.name + "'"});
      if (p.format == 1) {
        static const char* hex = "0123456789abcdef";
        std::string h = "\\x";
        for (unsigned char ch : p.data) {
          h += hex[ch >> 4];
          h += hex[ch & 15];
        }
        p.data = h;
      }
      d += " DEFAULT " + literal(p.data);
    }
    return d;
  }

  /// Makes sure table `t` has every column of `l` (auto.create,
  /// auto.evolve), inside the put's transaction.
  void ensure_table(const TableId& t, const Layout& l, const kp::SinkRecord& r) {
    auto it = tables_.find(t);
    if (it == tables_.end()) {
      auto cols = load_columns(t);
      if (!cols) {
        if (!cfg_.auto_create)
          throw ConnectError("PostgresSink: table \"" + t.display() + "\" is missing and auto-creation is disabled "
                             "(set auto.create=true or create it)");
        std::string ddl = "CREATE TABLE IF NOT EXISTS " + qualified(t) + " (";
        std::set<std::string> names;
        for (const auto& c : l.pk) {
          ddl += (names.empty() ? "" : ", ") + column_ddl(c, true, r);
          names.insert(c.name);
        }
        for (const auto& c : l.rest) {
          ddl += (names.empty() ? "" : ", ") + column_ddl(c, false, r);
          names.insert(c.name);
        }
        if (!l.pk.empty()) {
          ddl += ", PRIMARY KEY (";
          for (size_t i = 0; i < l.pk.size(); ++i) ddl += (i ? ", " : "") + ident(l.pk[i].name);
          ddl += ")";
        }
        ddl += ")";
        kp::log(kp::LogLevel::Info, name_ + ": creating table " + t.display());
        exec(ddl);
        cols = load_columns(t);
        if (!cols) throw ConnectError("PostgresSink: table \"" + t.display() + "\" is still missing after CREATE TABLE");
      }
      it = tables_.emplace(t, std::move(*cols)).first;
    }
    std::vector<std::pair<const Column*, bool>> missing;
    for (const auto& c : l.pk)
      if (!it->second.count(c.name)) missing.emplace_back(&c, true);
    for (const auto& c : l.rest)
      if (!it->second.count(c.name)) missing.emplace_back(&c, false);
    if (missing.empty()) return;
    std::string names;
    for (const auto& [c, _] : missing) names += (names.empty() ? "" : ", ") + c->name;
    if (!cfg_.auto_evolve)
      throw ConnectError("PostgresSink: table \"" + t.display() + "\" is missing fields (" + names +
                         ") and auto-evolution is disabled (set auto.evolve=true or add the columns)");
    std::string ddl = "ALTER TABLE " + qualified(t);
    bool first = true;
    for (const auto& [c, pk] : missing) {
      if (pk)
        throw ConnectError("PostgresSink: cannot ALTER TABLE \"" + t.display() + "\" to add primary key column '" +
                           c->name + "'; change the table by hand");
      const auto dv = c->schema.default_value();
      if (!c->schema.optional() && (!dv || kp::ValueView(*dv).is_null()))
        throw ConnectError("PostgresSink: cannot ALTER TABLE \"" + t.display() + "\" to add missing field '" +
                           c->name + "', as the field is not optional and does not have a default value");
      ddl += std::string(first ? " " : ", ") + "ADD COLUMN IF NOT EXISTS " + column_ddl(*c, false, r);
      first = false;
    }
    kp::log(kp::LogLevel::Info, name_ + ": adding columns (" + names + ") to table " + t.display());
    exec(ddl);
    for (const auto& [c, _] : missing) it->second.insert(c->name);
  }

  // ---------------------------------------------------------- DML

  /// Records [b, e) share one table, kind and schemas.
  void write_run(const std::vector<kp::SinkRecord>& recs, size_t b, size_t e, const TableId& t, bool del) {
    const Layout l = layout_of(recs[b], del);
    ensure_table(t, l, recs[b]);
    const std::string table = qualified(t);
    auto pk_params = [&](const kp::SinkRecord& r, std::vector<Param>& out) {
      for (const auto& c : l.pk) {
        out.push_back(column_param(c, r));
        if (out.back().null)
          throw ConnectError("PostgresSink: primary key column '" + c.name + "' is null in the record at " + where(r));
      }
    };
    std::string pk_where;
    auto where_clause = [&](size_t first_param) {
      std::string w;
      for (size_t i = 0; i < l.pk.size(); ++i)
        w += std::string(i ? " AND " : "") + ident(l.pk[i].name) + " = $" + std::to_string(first_param + i);
      return w;
    };

    if (del) {
      const std::string sql = "DELETE FROM " + table + " WHERE " + where_clause(1);
      for (size_t i = b; i < e; ++i) {
        std::vector<Param> ps;
        pk_params(recs[i], ps);
        exec(sql, ps);
      }
      return;
    }
    if (cfg_.insert_mode == InsertMode::Update) {
      if (l.rest.empty()) return;  // nothing but the key: no column to update
      std::string sql = "UPDATE " + table + " SET ";
      for (size_t i = 0; i < l.rest.size(); ++i)
        sql += std::string(i ? ", " : "") + ident(l.rest[i].name) + " = $" + std::to_string(i + 1);
      sql += " WHERE " + where_clause(l.rest.size() + 1);
      for (size_t i = b; i < e; ++i) {
        std::vector<Param> ps;
        for (const auto& c : l.rest) ps.push_back(column_param(c, recs[i]));
        pk_params(recs[i], ps);
        exec(sql, ps);
      }
      return;
    }

    // INSERT, or upsert with ON CONFLICT: multi-row statements of up to
    // batch.size rows (and PostgreSQL's 65535 parameters).
    const size_t ncols = l.pk.size() + l.rest.size();
    const size_t max_rows = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(cfg_.batch_size), 65535 / ncols));
    std::string head = "INSERT INTO " + table + " (";
    for (size_t i = 0; i < l.pk.size(); ++i) head += (i ? ", " : "") + ident(l.pk[i].name);
    for (size_t i = 0; i < l.rest.size(); ++i) head += (i || !l.pk.empty() ? ", " : "") + ident(l.rest[i].name);
    head += ") VALUES ";
    std::string tail;
    if (cfg_.insert_mode == InsertMode::Upsert) {
      tail = " ON CONFLICT (";
      for (size_t i = 0; i < l.pk.size(); ++i) tail += (i ? ", " : "") + ident(l.pk[i].name);
      tail += ")";
      if (l.rest.empty()) {
        tail += " DO NOTHING";
      } else {
        tail += " DO UPDATE SET ";
        for (size_t i = 0; i < l.rest.size(); ++i) {
          const auto q = ident(l.rest[i].name);
          tail += (i ? ", " : "") + q + " = EXCLUDED." + q;
        }
      }
    }
    std::vector<Param> ps;
    std::unordered_set<std::string> keys;  // upsert: one row per key in a statement
    size_t rows = 0;
    auto flush_rows = [&] {
      if (rows == 0) return;
      std::string sql = head;
      size_t n = 1;
      for (size_t row = 0; row < rows; ++row) {
        sql += row ? ",(" : "(";
        for (size_t c = 0; c < ncols; ++c) sql += (c ? ",$" : "$") + std::to_string(n++);
        sql += ")";
      }
      sql += tail;
      exec(sql, ps);
      ps.clear();
      keys.clear();
      rows = 0;
    };
    for (size_t i = b; i < e; ++i) {
      const size_t mark = ps.size();
      pk_params(recs[i], ps);
      if (cfg_.insert_mode == InsertMode::Upsert) {
        // ON CONFLICT DO UPDATE may not touch one row twice in a statement:
        // a repeated key starts a new statement (the later record wins).
        std::string k;
        for (size_t j = mark; j < ps.size(); ++j) k += std::to_string(ps[j].data.size()) + ":" + ps[j].data;
        if (keys.count(k)) {
          std::vector<Param> mine(ps.begin() + static_cast<std::ptrdiff_t>(mark), ps.end());
          ps.resize(mark);
          flush_rows();
          ps = std::move(mine);
        }
        keys.insert(std::move(k));
      }
      for (const auto& c : l.rest) ps.push_back(column_param(c, recs[i]));
      if (++rows >= max_rows) flush_rows();
    }
    flush_rows();
  }

  void write_all(const std::vector<kp::SinkRecord>& recs) {
    size_t b = 0;
    while (b < recs.size()) {
      const kp::SinkRecord& first = recs[b];
      const bool del = is_delete(first);
      if (!del) check_value(first);
      const TableId t = table_of(first);
      size_t e = b + 1;
      // A run: same table, same kind, same key and value schemas.
      while (e < recs.size()) {
        const kp::SinkRecord& r = recs[e];
        if (is_delete(r) != del || r.topic() != first.topic()) break;
        if (!del) check_value(r);
        if (!r.value_schema().equals(first.value_schema()) || !r.key_schema().equals(first.key_schema())) break;
        ++e;
      }
      write_run(recs, b, e, t, del);
      b = e;
    }
  }

  PostgresSinkConfig cfg_;
  std::string name_;
  PGconn* conn_ = nullptr;
  std::map<TableId, std::set<std::string>> tables_;  ///< known columns per table
  int retries_ = 0;  ///< retriable failures in a row
};

/// The connector (JdbcSinkConnector): checks the config in start() and
/// gives every task the same config.
class PostgresSinkConnector : public kp::SinkConnector {
 public:
  void start(const Config& config) override {
    parse_postgres_sink_config(config);
    config_ = config;
  }
  std::vector<Config> task_configs(int max_tasks) override {
    return std::vector<Config>(static_cast<size_t>(std::max(1, max_tasks)), config_);
  }
  void stop() override {}
  /// The checks the key table cannot express, and the cross-key rule (the
  /// worker has run the type and range checks).
  ConfigErrors validate(const Config& config) override {
    ConfigErrors errors;
    check_errors(config, errors);
    rule_errors(config, errors);
    return errors;
  }

 private:
  Config config_;
};

}  // namespace

void declare_postgres_sink(kp::Registrar& reg, const std::string& version) {
  reg.sink<PostgresSinkConnector, PostgresSinkTask>(kPostgresSinkClass, version, config_def());
}

}  // namespace kc::connectors::postgres
