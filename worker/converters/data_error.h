#pragma once
// The error every converter returns for a value it cannot convert.

#include <string>
#include <utility>

#include "common/result.h"

namespace kc::converters {

/// A conversion failure with Connect's DataException message (no field path:
/// the message names the value's type and the expected one). Returned, never
/// thrown, by the JSON, string, number and byte-array converters.
inline Error data_error(std::string message) { return Error{"", std::move(message)}; }

}  // namespace kc::converters
