#pragma once
// The per-line logic of the dry-run CLIs `kconnectd transform` and
// `kconnectd convert` (issue 11 item 7), shared with the vector tests so
// both exercise the same code path. Lines use the JSON notation of
// ../shared/testdata/PIPELINE-VECTORS.md (worker/data/notation.h).

#include <memory>
#include <string>
#include <vector>

#include "worker/data/converters.h"
#include "worker/data/notation.h"
#include "worker/transforms/chain.h"

namespace kc::transforms {

using Json = data::notation::Json;

/// The connector config of a JSON document: either an object of config
/// keys, or {"name": ..., "config": {...}} as POST /connectors takes.
/// Non-string values are rendered as JSON text. Error when not an object.
Result<Config> connector_config_from_json(const Json& doc);

/// `kconnectd transform`: a chain built from a connector config.
class TransformDryRun {
 public:
  /// Errors: the chain's validation errors, each with its config key.
  static Result<TransformDryRun> create(const Config& connector_config, std::vector<ConfigError>* errors);
  /// One record (SMT record notation) through the chain: the output record,
  /// JSON null when dropped, or {"error": {"stage", "transform"?, "message"}}
  /// with stage "apply" (a transform failed) or "input" (bad notation).
  Json process(const Json& record);

 private:
  std::shared_ptr<TransformChain> chain_;
};

/// `kconnectd convert`: one converter in one direction.
class ConvertDryRun {
 public:
  enum class Direction { kFromConnect, kToConnect };
  /// Creates and configures the converter (class name or alias). Error:
  /// unknown class or the converter's config error.
  static Result<ConvertDryRun> create(const std::string& converter_class, Direction dir,
                                      const data::ConverterConfig& config, bool is_key);
  /// from-connect: {"topic","schema","value"} -> {"topic","bytes_hex"};
  /// to-connect: {"topic","bytes_hex"} -> {"topic","schema","value"}.
  /// Failures give {"error": {"stage": "fromConnectData"|"toConnectData"|"input", "message"}}.
  Json process(const Json& line) const;

 private:
  std::shared_ptr<data::Converter> conv_;
  Direction dir_ = Direction::kFromConnect;
};

/// Lower-case hex of bytes, and its inverse (nullopt on bad hex).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace kc::transforms
