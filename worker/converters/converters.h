#pragma once
// Connect's converters over the data model: bytes <-> (schema, value).
// Class names, short aliases and config keys are Kafka Connect's:
//   org.apache.kafka.connect.json.JsonConverter          (json_converter.h)
//   org.apache.kafka.connect.storage.StringConverter     converter.encoding (UTF-8)
//   org.apache.kafka.connect.converters.ByteArrayConverter
//   org.apache.kafka.connect.converters.{Short,Integer,Long,Float,Double}Converter
//   org.apache.kafka.connect.storage.SimpleHeaderConverter (header converter)
// A class may be named by its full name, its simple name ("JsonConverter")
// or its simple name without "Converter" ("Json"), as Connect's plugin
// aliases allow.
//
// Threading: configure() once, then from_connect/to_connect may be called
// from any thread (JsonConverter's schema caches take a lock).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "worker/data/value.h"

namespace kc::converters {

/// Converter settings with the `key.converter.` / `value.converter.` /
/// `header.converter.` prefix already stripped.
using ConverterConfig = std::map<std::string, std::string>;

/// Connect's Converter. Errors carry Connect's message (a DataException in
/// Java) in Error::message; configure() errors are ConfigExceptions with the
/// key in Error::field.
class Converter {
 public:
  virtual ~Converter() = default;
  /// Converter.configure(configs, isKey).
  virtual Status configure(const ConverterConfig& config, bool is_key) = 0;
  /// Converter.fromConnectData: (schema, value) -> record bytes; nullopt is
  /// a Java null (a tombstone).
  virtual Result<std::optional<std::string>> from_connect(std::string_view topic, const data::SchemaPtr& schema,
                                                          const data::Value& value) const = 0;
  /// Converter.toConnectData: record bytes (nullptr = Java null) -> schema
  /// and value.
  virtual Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::string* bytes) const = 0;
  /// Convenience overload for an optional.
  Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::optional<std::string>& bytes) const {
    return to_connect(topic, bytes ? &*bytes : nullptr);
  }
};

/// Connect's HeaderConverter: one header value <-> bytes.
class HeaderConverter {
 public:
  virtual ~HeaderConverter() = default;
  /// HeaderConverter.configure(configs).
  virtual Status configure(const ConverterConfig& config) = 0;
  /// HeaderConverter.fromConnectHeader: nullopt = Java null bytes.
  virtual Result<std::optional<std::string>> from_connect_header(std::string_view topic, std::string_view header_key,
                                                                 const data::SchemaPtr& schema,
                                                                 const data::Value& value) const = 0;
  /// HeaderConverter.toConnectHeader (nullptr bytes = Java null).
  virtual Result<data::SchemaAndValue> to_connect_header(std::string_view topic, std::string_view header_key,
                                                   const std::string* bytes) const = 0;
};

/// A Converter that is also a HeaderConverter, converting a header value as
/// record data, as all of Connect's record converters (JsonConverter,
/// StringConverter, ByteArrayConverter, the number converters) do: the
/// header configure(config) is configure(config, false).
class HeaderConvertingConverter : public Converter, public HeaderConverter {
 public:
  using Converter::configure;
  Status configure(const ConverterConfig& config) final { return configure(config, false); }
  Result<std::optional<std::string>> from_connect_header(std::string_view topic, std::string_view,
                                                         const data::SchemaPtr& schema,
                                                         const data::Value& value) const final {
    return from_connect(topic, schema, value);
  }
  Result<data::SchemaAndValue> to_connect_header(std::string_view topic, std::string_view,
                                                 const std::string* bytes) const final {
    return to_connect(topic, bytes);
  }
};

inline constexpr std::string_view kJsonConverterClass = "org.apache.kafka.connect.json.JsonConverter";
inline constexpr std::string_view kStringConverterClass = "org.apache.kafka.connect.storage.StringConverter";
inline constexpr std::string_view kByteArrayConverterClass = "org.apache.kafka.connect.converters.ByteArrayConverter";
inline constexpr std::string_view kShortConverterClass = "org.apache.kafka.connect.converters.ShortConverter";
inline constexpr std::string_view kIntegerConverterClass = "org.apache.kafka.connect.converters.IntegerConverter";
inline constexpr std::string_view kLongConverterClass = "org.apache.kafka.connect.converters.LongConverter";
inline constexpr std::string_view kFloatConverterClass = "org.apache.kafka.connect.converters.FloatConverter";
inline constexpr std::string_view kDoubleConverterClass = "org.apache.kafka.connect.converters.DoubleConverter";
inline constexpr std::string_view kSimpleHeaderConverterClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter";

/// The full class names of every converter above (for plugin listings).
const std::vector<std::string_view>& converter_class_names();
/// Full class name for a full name or alias; nullopt when unknown.
std::optional<std::string_view> resolve_converter_class(std::string_view name_or_alias);

/// Creates and configures a key/value converter. Errors: unknown class
/// ("Class X could not be found."), SimpleHeaderConverter (not a
/// Converter), or the converter's configure() error.
Result<std::unique_ptr<Converter>> make_converter(std::string_view class_name, const ConverterConfig& config,
                                                  bool is_key);
/// Creates and configures a header converter. Every converter class works
/// (each is a HeaderConvertingConverter); SimpleHeaderConverter is the
/// default.
Result<std::unique_ptr<HeaderConverter>> make_header_converter(std::string_view class_name,
                                                               const ConverterConfig& config);

// ---- the simple converters, usable directly ----

/// StringConverter: from_connect writes String.valueOf(value) (see
/// java_to_string) in `converter.encoding`; to_connect decodes into an
/// OPTIONAL_STRING. Encodings come from iconv (UTF-8, UTF-16 with a BOM as
/// Java writes it, UTF-16BE/LE, ISO-8859-1, US-ASCII, ...). Unmappable
/// characters become '?' and malformed input U+FFFD, as Java's coders do.
class StringConverter final : public HeaderConvertingConverter {
 public:
  Status configure(const ConverterConfig& config, bool is_key) override;
  Result<std::optional<std::string>> from_connect(std::string_view topic, const data::SchemaPtr& schema,
                                                  const data::Value& value) const override;
  Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::string* bytes) const override;
  using Converter::to_connect;
  /// The configured Java charset name, e.g. "UTF-8".
  const std::string& encoding() const { return encoding_; }

 private:
  std::string encoding_ = "UTF-8";
  bool utf8_ = true;
};

/// ByteArrayConverter: passes byte[] through. from_connect requires a BYTES
/// schema or none ("Invalid schema type for ByteArrayConverter: STRING") and
/// a byte[] value ("ByteArrayConverter is not compatible with objects of
/// type class ..."); to_connect gives OPTIONAL_BYTES.
class ByteArrayConverter final : public HeaderConvertingConverter {
 public:
  Status configure(const ConverterConfig&, bool) override { return ok_status(); }
  Result<std::optional<std::string>> from_connect(std::string_view topic, const data::SchemaPtr& schema,
                                                  const data::Value& value) const override;
  Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::string* bytes) const override;
  using Converter::to_connect;
};

/// Connect's NumberConverter family: one Java number type as Kafka's
/// serializer writes it (big-endian, IEEE 754 for floats). from_connect
/// requires exactly that class ("Failed to serialize to short (was class
/// java.lang.Integer): "); to_connect checks the size ("Failed to
/// deserialize short: " + "Size of data received by ShortDeserializer is not
/// 2") and gives the OPTIONAL schema of the type.
class NumberConverter final : public HeaderConvertingConverter {
 public:
  /// `type` is INT16, INT32, INT64, FLOAT32 or FLOAT64.
  explicit NumberConverter(data::Type type) : type_(type) {}
  Status configure(const ConverterConfig&, bool) override { return ok_status(); }
  Result<std::optional<std::string>> from_connect(std::string_view topic, const data::SchemaPtr& schema,
                                                  const data::Value& value) const override;
  Result<data::SchemaAndValue> to_connect(std::string_view topic, const std::string* bytes) const override;
  using Converter::to_connect;

 private:
  data::Type type_;
};

/// SimpleHeaderConverter: headers as text. from_connect_header writes
/// Values.convertToString and to_connect_header reads Values.parseString,
/// both from the data model (worker/data/values.h, which says the subset);
/// a null value is null bytes and back.
class SimpleHeaderConverter final : public HeaderConverter {
 public:
  Status configure(const ConverterConfig&) override { return ok_status(); }
  Result<std::optional<std::string>> from_connect_header(std::string_view topic, std::string_view header_key,
                                                         const data::SchemaPtr& schema,
                                                         const data::Value& value) const override;
  Result<data::SchemaAndValue> to_connect_header(std::string_view topic, std::string_view header_key,
                                           const std::string* bytes) const override;
};

// ---- config parsing shared by the converters (ConfigDef's rules) ----

/// A BOOLEAN config: "true"/"false" in any case, trimmed. Error: "Invalid
/// value X for configuration KEY: Expected value to be either true or false".
Result<bool> config_bool(const ConverterConfig& config, const std::string& key, bool dflt);
/// An INT config. Error: "Invalid value X for configuration KEY: Not a
/// number of type INT".
Result<int32_t> config_int(const ConverterConfig& config, const std::string& key, int32_t dflt);

}  // namespace kc::converters
