#pragma once
// The per-line logic of the dry-run CLI `kconnectd transform` (issue 11
// item 7), shared with the vector tests so both exercise the same code
// path; `kconnectd convert`'s is worker/converters/dry_run.h. Lines use
// the JSON notation of ../shared/testdata/PIPELINE-VECTORS.md
// (worker/data/notation.h).

#include <memory>
#include <string>
#include <vector>

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

}  // namespace kc::transforms
