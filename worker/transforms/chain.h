#pragma once
// A connector's transformation chain (KIP-66) with predicates (KIP-585),
// built from the connector config keys:
//   transforms=a,b                       aliases, applied in this order
//   transforms.<alias>.type              class name or alias (registry.h)
//   transforms.<alias>.<key>             the transform's own config
//   transforms.<alias>.predicate         a predicate alias gating it
//   transforms.<alias>.negate            true: apply when the predicate is false
//   predicates=p,q                       predicate aliases
//   predicates.<alias>.type / .<key>     as for transforms
// A dropped record stops the chain (Connect's TransformationChain).

#include <memory>
#include <string>
#include <vector>

#include "worker/transforms/registry.h"

namespace kc::transforms {

/// One validation error: the connector config key it belongs to (e.g.
/// "transforms.ts.format") and Connect's message.
struct ConfigError {
  std::string key;
  std::string message;
};

/// An apply failure: the transform alias, its full class name (for the
/// error reporter's `__connect.errors.class.name`) and Connect's message.
struct ApplyError {
  std::string alias;
  std::string message;
  std::string class_name;
};

class TransformChain {
 public:
  /// Builds and configures every transform and predicate. On failure
  /// returns every error found, each under its full connector config key.
  /// An empty or absent `transforms` gives an empty chain (identity).
  static Result<TransformChain> build(const Config& connector_config, std::vector<ConfigError>* errors);

  /// Runs the chain in place. kDropped when a transform dropped the
  /// record; an ApplyError when one failed (the record is then partly
  /// transformed and must be discarded by the caller).
  Result<Outcome> apply(data::SinkRecord& record, ApplyError* error = nullptr);
  Result<Outcome> apply(data::SourceRecord& record, ApplyError* error = nullptr);

  size_t size() const { return stages_.size(); }

 private:
  struct Stage {
    std::string alias;
    std::string class_name;
    std::unique_ptr<Transformation> transform;
    std::shared_ptr<Predicate> predicate;
    bool negate = false;
  };
  Result<Outcome> run(RecordRef ref, ApplyError* error);
  std::vector<Stage> stages_;
};

}  // namespace kc::transforms
