#pragma once
// Connect's JsonConverter (org.apache.kafka.connect.json.JsonConverter),
// byte for byte: the {"schema":..., "payload":...} envelope, Jackson's
// number and string formatting, and Connect's lenient reading rules (see
// ../shared/testdata/PIPELINE-VECTORS.md, "Surprising behaviour").
//
// Config keys (Connect's JsonConverterConfig):
//   schemas.enable            true   envelope on write, required on read
//   schemas.cache.size        1000   LRU size of each schema cache (0 = off)
//   decimal.format            BASE64 BASE64 | NUMERIC (case-insensitive)
//   replace.null.with.default true   write/read a null as the schema default
// Parsing uses nlohmann/json's SAX parser; writing is done here because
// Jackson's layout (Double.toString numbers, escaped surrogate pairs,
// upper-case \u escapes) differs from nlohmann's dump().

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "worker/converters/converters.h"

namespace kc::converters {

/// Deepest nesting of arrays and objects JsonConverter reads in a record
/// (key, value or header bytes, the schema envelope included): 1000, the
/// default of Jackson's StreamReadConstraints.maxNestingDepth, so records
/// that Kafka Connect reads are read here too. REST bodies and internal
/// topics keep the tighter kc::kMaxJsonDepth (64).
inline constexpr std::size_t kMaxRecordJsonDepth = 1000;

class JsonConverter final : public HeaderConvertingConverter {
 public:
  enum class DecimalFormat { BASE64, NUMERIC };

  /// Reads the keys above. Errors are ConfigExceptions, e.g. "Invalid value
  /// STRING for configuration decimal.format: String must be one of (case
  /// insensitive): NUMERIC, BASE64".
  Status configure(const ConverterConfig& config, bool is_key) override;

  /// fromConnectData. A null schema with a null value gives nullopt (a
  /// tombstone) even with schemas.enable=true. Errors: "Conversion error:
  /// null value for field that is required and has no default value",
  /// "Mismatching schema.", "Invalid type for INT32: class
  /// java.lang.String", "Java class class java.util.Date does not have
  /// corresponding schema type.", Decimal scale mismatch (BASE64 only).
  Result<std::optional<std::string>> from_connect(std::string_view topic, const data::SchemaPtr& schema,
                                                  const data::Value& value) const override;
  /// toConnectData. nullptr bytes give (null, null). Errors: malformed JSON
  /// ("Converting byte[] to Kafka Connect data failed due to serialization
  /// error: " followed by the parser's message), the envelope check with
  /// schemas.enable, schema errors ("Unknown schema type: int128", ...) and
  /// payload errors ("Invalid null value for required INT32 field", ...).
  Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::string* bytes) const override;
  using Converter::to_connect;

  /// JsonConverter.asJsonSchema as compact JSON text ("null" for no schema).
  Result<std::string> as_json_schema(const data::SchemaPtr& schema) const;

  bool schemas_enabled() const { return schemas_enable_; }
  DecimalFormat decimal_format() const { return decimal_format_; }
  bool replace_null_with_default() const { return replace_null_with_default_; }

  /// Implementation detail, public for the .cpp's helpers.
  struct Impl;

 private:
  bool schemas_enable_ = true;
  int32_t cache_size_ = 1000;
  DecimalFormat decimal_format_ = DecimalFormat::BASE64;
  bool replace_null_with_default_ = true;

  // fromConnect cache: schema identity -> envelope schema text.
  struct FromEntry {
    data::SchemaPtr schema;  // keeps the key alive
    std::string json;
  };
  mutable std::mutex from_mu_;
  mutable std::list<std::pair<const data::Schema*, FromEntry>> from_lru_;
  mutable std::unordered_map<const data::Schema*, decltype(from_lru_)::iterator> from_index_;
  // toConnect cache: compact schema JSON text -> schema.
  mutable std::mutex to_mu_;
  mutable std::list<std::pair<std::string, data::SchemaPtr>> to_lru_;
  mutable std::unordered_map<std::string, decltype(to_lru_)::iterator> to_index_;
};

}  // namespace kc::converters
