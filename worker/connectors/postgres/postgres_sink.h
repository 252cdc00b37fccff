#pragma once
// PostgreSQL sink connector: the semantics of Confluent's JDBC sink
// connector (io.confluent.connect.jdbc.JdbcSinkConnector) with its
// PostgreSQL dialect, written over libpq. See README.md in this folder for
// the settings.
//
// Each put() writes all its records in one transaction and returns only
// after COMMIT, so the runtime commits consumer offsets only for records
// that are in the database. insert.mode=upsert is INSERT ... ON CONFLICT
// (pk) DO UPDATE, so records delivered again after a crash leave no
// duplicate rows.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"
#include "worker/connectors/plugin_desc.h"

namespace kc::connectors::postgres {

/// Full class name; the registry derives the aliases PostgresSinkConnector
/// and PostgresSink.
inline constexpr const char* kPostgresSinkClass = "kc.connect.postgres.PostgresSinkConnector";

/// insert.mode (JdbcSinkConfig.InsertMode).
enum class InsertMode { Insert, Upsert, Update };
/// pk.mode (JdbcSinkConfig.PrimaryKeyMode).
enum class PkMode { None, Kafka, RecordKey, RecordValue };

/// A parsed, checked sink config (JdbcSinkConfig's subset).
struct PostgresSinkConfig {
  std::string url;       ///< libpq URI, "jdbc:" already stripped
  std::string user;      ///< "" = from the URI or libpq's defaults
  std::string password;  ///< "" = none; never logged
  InsertMode insert_mode = InsertMode::Insert;
  PkMode pk_mode = PkMode::None;
  std::vector<std::string> pk_fields;
  bool auto_create = false;
  bool auto_evolve = false;
  std::string table_name_format = "${topic}";
  int batch_size = 3000;  ///< rows per INSERT statement
  bool delete_enabled = false;
  int max_retries = 10;          ///< retriable failures in a row before the task fails
  int64_t retry_backoff_ms = 3000;  ///< wait before a retriable failure is reported
};

/// Per-key errors of `config` (the connector's rule and ConfigDefs checks
/// together): bad enum values, bad numbers, a connection.url libpq cannot
/// parse, upsert/update without a pk.mode, delete.enabled without
/// pk.mode=record_key, pk.fields of the wrong length for pk.mode=kafka,
/// topics vs topics.regex. Empty when the config is valid.
ConfigErrors postgres_sink_config_errors(const ConfigMap& config);

/// Parses `config`. Throws ConnectError listing every error of
/// postgres_sink_config_errors ("key: message; ...").
PostgresSinkConfig parse_postgres_sink_config(const ConfigMap& config);

/// The connector's keys, in display order (GET /connector-plugins/{p}/config).
ConfigDefs postgres_sink_config_defs();

/// The cross-key rule for PUT /connector-plugins/{p}/config/validate.
void postgres_sink_config_rule(const ConfigMap& config, ConfigErrors& errors);

/// A new connector instance.
std::unique_ptr<Connector> make_postgres_sink();

/// The registry entry (class name, type, factory, defs, rule).
PluginDesc postgres_sink_plugin();

/// The PostgreSQL column type auto.create / auto.evolve give a field of
/// `schema` (JDBC's PostgreSqlDatabaseDialect): INT8/INT16 SMALLINT, INT32
/// INT, INT64 BIGINT, FLOAT32 REAL, FLOAT64 DOUBLE PRECISION, BOOLEAN,
/// STRING TEXT, BYTES BYTEA, Decimal DECIMAL, Date DATE, Time TIME,
/// Timestamp TIMESTAMP. Throws ConnectError for ARRAY, MAP and STRUCT.
std::string postgres_column_type(const data::Schema& schema, const std::string& field);

}  // namespace kc::connectors::postgres
