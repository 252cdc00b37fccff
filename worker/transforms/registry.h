#pragma once
// The built-in transformations and predicates by Connect's class names and
// short aliases, each with its ConfigDef (for REST's plugin listing and for
// validation).
//
// Transformations (org.apache.kafka.connect.transforms.*, $Key and $Value
// where Connect has both): Cast, DropHeaders, ExtractField, Filter, Flatten,
// HeaderFrom, HoistField, InsertField, InsertHeader, MaskField, RegexRouter,
// ReplaceField, SetSchemaMetadata, TimestampConverter, TimestampRouter,
// ValueToKey. Predicates (org.apache.kafka.connect.transforms.predicates.*):
// HasHeaderKey, RecordIsTombstone, TopicNameMatches.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "worker/transforms/transformation.h"

namespace kc::transforms {

enum class PluginKind { kTransformation, kPredicate };

/// One plugin: its full class name, aliases accepted in `type` keys (the
/// simple name, e.g. "InsertField$Value" or "HasHeaderKey"), a one-line doc,
/// its config keys, and a factory for an unconfigured instance.
struct PluginInfo {
  std::string class_name;
  PluginKind kind = PluginKind::kTransformation;
  std::vector<std::string> aliases;
  std::string doc;
  std::vector<ConfigKeyDef> config;
  std::function<std::unique_ptr<Transformation>()> make_transformation;  // kTransformation only
  std::function<std::unique_ptr<Predicate>()> make_predicate;            // kPredicate only
};

/// Every built-in plugin, transformations first, in class-name order.
const std::vector<PluginInfo>& plugins();
/// A plugin by full class name or alias; nullptr when unknown.
const PluginInfo* find_plugin(std::string_view name_or_alias);

inline constexpr std::string_view kTransformPackage = "org.apache.kafka.connect.transforms.";
inline constexpr std::string_view kPredicatePackage = "org.apache.kafka.connect.transforms.predicates.";

}  // namespace kc::transforms
