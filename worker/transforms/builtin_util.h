#pragma once
// Internal helpers shared by the built-in transforms: Connect's
// Requirements / SchemaUtil / Values pieces and Java's number narrowing.
// Not part of the library's public surface.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "worker/data/value.h"
#include "worker/transforms/registry.h"

namespace kc::transforms::detail {

using data::Schema;
using data::SchemaBuilder;
using data::SchemaPtr;
using data::Struct;
using data::Type;
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

/// One plugin's registry entry: class name `package` + `simple`, alias
/// `simple`, its ConfigDef and exactly one factory.
PluginInfo plugin_info(std::string_view package, std::string simple, std::string_view doc,
                       std::vector<ConfigKeyDef> config,
                       std::function<std::unique_ptr<Transformation>()> make_transformation,
                       std::function<std::unique_ptr<Predicate>()> make_predicate);

/// Registers the built-in plugin T under its simple name T::kName with the
/// one-line doc T::kDoc and its ConfigDef T::defs(): a Predicate under
/// kPredicatePackage; a transformation constructible as T(bool key) as both
/// `<name>$Key` (T(true)) and `<name>$Value` (T(false)), as Connect ships it;
/// any other transformation once, default-constructed.
template <class T>
void add_plugin(std::vector<PluginInfo>& out) {
  const std::string name(T::kName);
  if constexpr (std::is_base_of_v<Predicate, T>) {
    out.push_back(plugin_info(kPredicatePackage, name, T::kDoc, T::defs(), nullptr,
                              [] { return std::unique_ptr<Predicate>(new T()); }));
  } else if constexpr (std::is_constructible_v<T, bool>) {
    for (bool key : {true, false})
      out.push_back(plugin_info(kTransformPackage, name + (key ? "$Key" : "$Value"), T::kDoc, T::defs(),
                                [key] { return std::unique_ptr<Transformation>(new T(key)); }, nullptr));
  } else {
    out.push_back(plugin_info(kTransformPackage, name, T::kDoc, T::defs(),
                              [] { return std::unique_ptr<Transformation>(new T()); }, nullptr));
  }
}
/// add_plugin for each of Ts, in order.
template <class... Ts>
void add_plugins(std::vector<PluginInfo>& out) {
  (add_plugin<Ts>(out), ...);
}

/// The plugins of each group file (registry.cpp calls them all; the file
/// map is in README.md).
void add_type_conversion(std::vector<PluginInfo>& out);  // type_conversion.cpp
void add_field_edits(std::vector<PluginInfo>& out);      // field_edits.cpp
void add_reshape(std::vector<PluginInfo>& out);          // reshape.cpp
void add_headers(std::vector<PluginInfo>& out);          // headers.cpp
void add_routing(std::vector<PluginInfo>& out);          // routing.cpp
void add_schema_metadata(std::vector<PluginInfo>& out);  // schema_metadata.cpp
void add_predicates(std::vector<PluginInfo>& out);       // predicates.cpp

/// The replace.null.with.default key shared by several transforms (KIP-1027).
ConfigKeyDef replace_null_key();

}  // namespace kc::transforms::detail
