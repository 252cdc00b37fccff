#pragma once
// The per-line logic of the dry-run CLI `kconnectd convert` (issue 11 item
// 7), shared with its tests. Lines use the JSON notation of
// ../shared/testdata/PIPELINE-VECTORS.md (worker/data/notation.h).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "worker/converters/converters.h"
#include "worker/data/notation.h"

namespace kc::converters {

using Json = data::notation::Json;

/// `kconnectd convert`: one converter in one direction.
class ConvertDryRun {
 public:
  enum class Direction { kFromConnect, kToConnect };
  /// Creates and configures the converter (class name or alias). Error:
  /// unknown class or the converter's config error.
  static Result<ConvertDryRun> create(const std::string& converter_class, Direction dir,
                                      const ConverterConfig& config, bool is_key);
  /// from-connect: {"topic","schema","value"} -> {"topic","bytes_hex"};
  /// to-connect: {"topic","bytes_hex"} -> {"topic","schema","value"}.
  /// Failures give {"error": {"stage": "fromConnectData"|"toConnectData"|"input", "message"}}.
  Json process(const Json& line) const;

 private:
  std::shared_ptr<Converter> conv_;
  Direction dir_ = Direction::kFromConnect;
};

/// Lower-case hex of bytes, and its inverse (nullopt on bad hex).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

}  // namespace kc::converters
