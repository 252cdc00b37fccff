#pragma once
// The JSON notation of ../shared/testdata/PIPELINE-VECTORS.md for schemas,
// values, headers and records: read into the data model and written back.
// Used by the vector tests and by the dry-run CLIs (`kconnectd convert`,
// `kconnectd transform`).

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "worker/data/record.h"

namespace kc::data::notation {

using Json = nlohmann::ordered_json;

/// A schema object ({"type", "optional", "name", ...}) or JSON null (no
/// schema). Errors name the offending member.
Result<SchemaPtr> schema_from_json(const Json& j);
/// Schema-directed value rendering when `schema` is non-null (with
/// {"$invalid": tagged} for objects Connect would reject), tagged rendering
/// ({"int32": 5}, {"map": [...]}, ...) otherwise.
Result<Value> value_from_json(const SchemaPtr& schema, const Json& j);
/// Tagged rendering only.
Result<Value> tagged_from_json(const Json& j);

/// The inverse of schema_from_json (members in the notation's usual order).
Json schema_to_json(const SchemaPtr& schema);
/// The inverse of value_from_json.
Json value_to_json(const SchemaPtr& schema, const Value& value);
/// Tagged rendering of a value.
Json tagged_to_json(const Value& value);

/// Headers: [{"key", "schema", "value"}, ...].
Result<Headers> headers_from_json(const Json& j);
Json headers_to_json(const Headers& headers);

/// A record of the SMT vectors: {"kind": "sink"|"source", "topic",
/// "partition", "offset", "timestamp", "timestampType", "keySchema", "key",
/// "valueSchema", "value", "headers", "original*"}. Members left out take
/// the defaults of PIPELINE-VECTORS.md's "Default input record" only where
/// the notation says so; here absent means null/empty.
struct AnyRecord {
  bool sink = true;
  SinkRecord record;  // a source record uses the ConnectRecord part only
};
Result<AnyRecord> record_from_json(const Json& j);
Json record_to_json(const AnyRecord& r);

/// The line a dry-run CLI writes for a record it could not process:
/// {"error": {"stage", "transform"?, "message"}}; `transform` (the alias of
/// the failing transform) is left out when empty.
Json error_line(const std::string& stage, const std::string& message, const std::string& transform = "");

}  // namespace kc::data::notation
