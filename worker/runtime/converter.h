#pragma once
// Converters between Connect data (connectors::Data) and record bytes, by
// Kafka Connect class name: StringConverter, ByteArrayConverter and
// JsonConverter (`schemas.enable`, default true).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "worker/connectors/connector.h"

namespace kc::runtime {

/// Converter interface (Connect's Converter). Stateless after configure():
/// one instance per task, used only on that task's thread.
class Converter {
 public:
  virtual ~Converter() = default;
  /// Connect data -> record bytes; nullopt = null record key/value.
  /// Errors when the data cannot be represented (e.g. a map through
  /// ByteArrayConverter).
  virtual Result<std::optional<std::string>> from_connect(const std::string& topic,
                                                          const connectors::Data& data) const = 0;
  /// Record bytes -> Connect data (nullopt bytes = null). Errors on
  /// malformed input (e.g. bad JSON, missing envelope with schemas.enable).
  virtual Result<connectors::Data> to_connect(const std::string& topic,
                                              const std::optional<std::string>& bytes) const = 0;

  /// The data plane's fast path of from_connect: when `data` already holds
  /// the record bytes (a string through StringConverter, bytes through
  /// ByteArrayConverter, or null), sets `out` to a view of them (nullopt =
  /// null record key/value) and returns true; the view lives as long as
  /// `data`. Returns false when from_connect must do the work (or report
  /// the error).
  virtual bool from_connect_view(const connectors::Data& data, std::optional<std::string_view>& out) const {
    (void)data;
    (void)out;
    return false;
  }
  /// to_connect taking the bytes over (the sink path owns them): saves a
  /// copy where the Connect value is the bytes themselves.
  virtual Result<connectors::Data> to_connect_owned(const std::string& topic, std::optional<std::string>&& bytes) const {
    return to_connect(topic, bytes);
  }
};

/// Class names accepted by make_converter (full names; the simple names
/// "StringConverter", "ByteArrayConverter", "JsonConverter" work too).
inline constexpr const char* kStringConverterClass = "org.apache.kafka.connect.storage.StringConverter";
inline constexpr const char* kByteArrayConverterClass = "org.apache.kafka.connect.converters.ByteArrayConverter";
inline constexpr const char* kJsonConverterClass = "org.apache.kafka.connect.json.JsonConverter";

/// Creates a converter by class name. `config` holds the converter's own
/// settings with the `key.converter.` / `value.converter.` prefix already
/// stripped (e.g. {"schemas.enable":"false"}). Errors on an unknown class or
/// a bad setting.
///
/// Behaviour, following Connect:
/// * StringConverter: strings as UTF-8; other values as their JSON text;
///   bytes -> OPTIONAL_STRING schema on the way in.
/// * ByteArrayConverter: requires bytes (or null); bytes -> OPTIONAL_BYTES.
/// * JsonConverter, schemas.enable=true: `{"schema":{...},"payload":...}`
///   envelope; bytes as base64. schemas.enable=false: bare JSON. Reading
///   with schemas.enable=true requires exactly the `schema` and `payload`
///   members.
Result<std::unique_ptr<Converter>> make_converter(const std::string& class_name,
                                                  const std::map<std::string, std::string>& config,
                                                  bool is_key);

/// Base64 (standard alphabet, padded), as Jackson writes byte arrays.
std::string base64_encode(const std::string& bytes);
/// Decodes standard base64; errors on bad characters.
Result<std::string> base64_decode(const std::string& text);

}  // namespace kc::runtime
