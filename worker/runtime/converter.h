#pragma once
// The converters a task uses between Connect data (connectors::Data, the
// data model of worker/data) and record bytes: one of worker/converters'
// converters by Kafka Connect class name or alias, plus the data plane's
// fast paths that hand over bytes without a copy where the conversion is the
// identity (a UTF-8 StringConverter on a String, ByteArrayConverter on a
// byte[]).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "worker/connectors/connector.h"
#include "worker/converters/converters.h"

namespace kc::runtime {

/// A configured key or value converter for one task (Connect's Converter
/// as a WorkerTask holds it). Stateless after construction; used on that
/// task's thread only.
class Converter {
 public:
  /// Connect data -> record bytes (Converter.fromConnectData); nullopt is
  /// a null key/value. Errors carry Connect's DataException message, e.g.
  /// "ByteArrayConverter is not compatible with objects of type class
  /// java.lang.String".
  Result<std::optional<std::string>> from_connect(std::string_view topic, const connectors::Data& data) const;
  /// Record bytes -> Connect data (Converter.toConnectData); nullopt bytes
  /// are a null. Errors on malformed input (bad JSON, a missing envelope
  /// with schemas.enable=true, ...).
  Result<connectors::Data> to_connect(std::string_view topic, const std::optional<std::string>& bytes) const;

  /// The fast path of from_connect: when the conversion is the identity on
  /// `data` (a String through a UTF-8 StringConverter, a byte[] through
  /// ByteArrayConverter, or a null through either), sets `out` to a view of
  /// the bytes inside `data` (nullopt = null) and returns true; the view
  /// lives as long as `data`. Returns false when from_connect must do the
  /// work (or report the error).
  bool from_connect_view(const connectors::Data& data, std::optional<std::string_view>& out) const;
  /// to_connect taking the bytes over (the sink path owns them), saving a
  /// copy where the Connect value is the bytes themselves.
  Result<connectors::Data> to_connect_owned(std::string_view topic, std::optional<std::string>&& bytes) const;

  /// The underlying converter of worker/converters.
  const converters::Converter& converter() const { return *converter_; }

 private:
  friend Result<std::unique_ptr<Converter>> make_converter(std::string_view,
                                                           const std::map<std::string, std::string>&, bool);
  enum class Identity { None, Utf8String, ByteArray };
  std::unique_ptr<converters::Converter> converter_;
  Identity identity_ = Identity::None;
};

/// Creates and configures a key (`is_key`) or value converter by class name
/// (converters::kJsonConverterClass, ...) or alias (the simple name, or it
/// without "Converter", as Connect's plugin aliases allow). `config` holds its settings with the `key.converter.` /
/// `value.converter.` prefix stripped (e.g. {"schemas.enable":"false"}).
/// Errors: "Class X could not be found." (field "converter") or the
/// converter's configure() error, with the config key in Error::field.
Result<std::unique_ptr<Converter>> make_converter(std::string_view class_name,
                                                  const std::map<std::string, std::string>& config, bool is_key);

}  // namespace kc::runtime
