#pragma once
// Compact JSON text that matches what Kafka Connect's internal JsonConverter
// (Jackson, schemas.enable=false) writes, byte for byte, for the value kinds
// Connect's internal topics hold: objects (in insertion order), arrays,
// strings, booleans, null and integers.

#include <string>

#include <nlohmann/json.hpp>

namespace kc::storage {

/// Ordered JSON: object members keep insertion order, like the Java maps
/// Connect serialises. Source partitions and offsets use this type so that
/// offset-topic keys are byte-identical to Connect's.
using OrderedJson = nlohmann::ordered_json;

/// Serialises `v` with no whitespace, members in insertion order, non-ASCII
/// UTF-8 written raw, `"` and `\` escaped, control characters escaped as
/// `\b \t \n \f \r` or `\u00XX` (upper-case hex), as Jackson does.
/// Integers print in decimal. Floating-point numbers print with nlohmann's
/// shortest round-trip form, which can differ from Java's Double.toString
/// (e.g. "1e10" vs "1.0E10"); Connect's internal records rarely hold them.
/// Strings are written as they are: the text is valid UTF-8 only when they
/// are (callers that store it check). Throws kc::JsonTooDeep when `v` nests
/// deeper than kc::kMaxJsonDepth (the bound every reader applies), so the
/// recursion is bounded and nothing unreadable is produced.
std::string to_compact_json(const OrderedJson& v);

/// Same for an unordered nlohmann::json (object members come out sorted).
std::string to_compact_json(const nlohmann::json& v);

}  // namespace kc::storage
