#pragma once
// PostgreSQL sink connector: the semantics of Confluent's JDBC sink
// connector (io.confluent.connect.jdbc.JdbcSinkConnector) with its
// PostgreSQL dialect, written over libpq. See README.md in this folder for
// the settings.
//
// Written against the plugin contract alone (include/kconnectd/plugin.hpp),
// as an out-of-tree plugin is; worker/plugins declares it with the other
// built-ins.
//
// Each put() writes all its records in one transaction and returns only
// after COMMIT, so the runtime commits consumer offsets only for records
// that are in the database. insert.mode=upsert is INSERT ... ON CONFLICT
// (pk) DO UPDATE, so records delivered again after a crash leave no
// duplicate rows.

#include <cstdint>
#include <string>
#include <vector>

#include <kconnectd/plugin.hpp>

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

/// Parses `config`. Throws kconnectd::Error "PostgresSink configuration is
/// invalid: key: message; ..." listing every error: bad enum values, bad
/// numbers, a connection.url libpq cannot parse, upsert/update without a
/// pk.mode, delete.enabled without pk.mode=record_key, pk.fields of the
/// wrong length for pk.mode=kafka (topics / topics.regex are left to the
/// runtime).
PostgresSinkConfig parse_postgres_sink_config(const kconnectd::Config& config);

/// Declares PostgresSinkConnector, its task and its config keys (GET
/// /connector-plugins/PostgresSink/config, in display order) through `reg`,
/// reporting `version`. Its Connector.validate adds the checks the key
/// table cannot express (libpq's URI parse, case-insensitive enums) and the
/// cross-key rule (topics vs topics.regex, pk.mode for upsert/update and
/// deletes, pk.fields for pk.mode=kafka).
void declare_postgres_sink(kconnectd::Registrar& reg, const std::string& version);

}  // namespace kc::connectors::postgres
