#pragma once
// Internal helpers shared by the built-in transforms: Connect's
// Requirements / SchemaUtil / Values pieces and Java's number narrowing.
// Not part of the library's public surface.

#include <string>
#include <string_view>
#include <vector>

#include "worker/data/value.h"
#include "worker/transforms/registry.h"

namespace kc::transforms::detail {

using data::SchemaPtr;
using data::Struct;
using data::Value;

/// The operand of a $Key / $Value transform: the record's key or value and its schema.
struct Operand {
  SchemaPtr& schema;
  Value& value;
};
inline Operand operand(data::ConnectRecord& r, bool key) {
  return key ? Operand{r.key_schema, r.key} : Operand{r.value_schema, r.value};
}

/// Requirements.nullSafeClassName: "null" or the Java class name.
std::string null_safe_class_name(const Value& v);
/// Requirements.requireStruct: "Only Struct objects supported for [PURPOSE], found: CLASS".
Result<const Struct*> require_struct(const Value& v, std::string_view purpose);
/// requireStructOrNull: nullptr for a null value.
Result<const Struct*> require_struct_or_null(const Value& v, std::string_view purpose);
/// Requirements.requireMap: "Only Map objects supported in absence of schema for [PURPOSE], found: CLASS".
Result<const data::Map*> require_map(const Value& v, std::string_view purpose);
Result<const data::Map*> require_map_or_null(const Value& v, std::string_view purpose);
/// Requirements.requireSchema: "Schema required for [PURPOSE]".
Status require_schema(const SchemaPtr& s, std::string_view purpose);

/// A struct slot as Struct.get (default applied when `replace_null`) or
/// Struct.getWithoutDefault.
Value field_value(const Struct& s, size_t index, bool replace_null);
/// Java Map.get(String key) for a Connect map (nullptr when absent).
const Value* map_get(const data::Map& m, std::string_view key);
/// Java Map.put(String key, value): replaces in place or appends.
void map_put(data::Map& m, std::string_view key, Value v);
/// Java Map.remove(String key).
void map_remove(data::Map& m, std::string_view key);

/// SchemaUtil.copySchemaBasics(source, builder): name, version, doc, parameters.
data::SchemaBuilder& copy_schema_basics(const data::Schema& source, data::SchemaBuilder& builder);
/// SchemaUtil.copySchemaBasics(source): a builder of the same type (arrays
/// and maps keep their element schemas) with name, version, doc, parameters.
data::SchemaBuilder copy_schema_basics(const data::Schema& source);

/// An error for a Java exception from DataException and friends.
inline Error data_error(std::string message) { return Error{"", std::move(message)}; }
/// A ConfigException with an optional key.
inline Error config_error(std::string key, std::string message) { return Error{std::move(key), std::move(message)}; }

/// Values.parseString (for InsertHeader's value.literal): scalars as
/// SimpleHeaderConverter reads them, plus arrays "[..]", maps "{..}" and the
/// ISO date/time/timestamp literals.
data::SchemaAndValue parse_literal(std::string_view text);

/// Values.dateFormatFor(date).format(date) in UTC.
std::string iso_format_for(int64_t epoch_ms);

/// Plugin tables of each source file.
void add_transforms_a(std::vector<PluginInfo>& out);
void add_transforms_b(std::vector<PluginInfo>& out);
void add_predicates(std::vector<PluginInfo>& out);

/// The replace.null.with.default key shared by several transforms (KIP-1027).
ConfigKeyDef replace_null_key();

}  // namespace kc::transforms::detail
