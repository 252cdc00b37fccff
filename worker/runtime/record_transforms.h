#pragma once
// The runtime's side of a connector's transformation chain (KIP-66 with
// KIP-585 predicates): builds worker/transforms' TransformChain from the
// connector config and runs it on the task loops' records, moving their
// fields into Connect's record types and back (no copies of keys, values
// or headers).

#include <memory>

#include "common/result.h"
#include "worker/connectors/connector.h"
#include "worker/runtime/record_pipeline.h"

namespace kc::runtime {

/// The chain configured by `connector_config`'s `transforms=` and
/// `predicates=` keys, as a RecordTransforms; nullptr when `transforms`
/// is absent or empty (the pipeline then keeps its fast path). Errors: the
/// first invalid key with Connect's message (Error::field is the full
/// connector config key, e.g. "transforms.route.regex").
Result<std::unique_ptr<RecordTransforms>> make_record_transforms(const connectors::ConfigMap& connector_config);

}  // namespace kc::runtime
