#pragma once
// Connect's Values (org.apache.kafka.connect.data.Values): a value as text
// and text as a value, the subset SimpleHeaderConverter and the transforms
// (InsertHeader, Cast, ...) use. No I/O.

#include <string>
#include <string_view>

#include "worker/data/value.h"

namespace kc::data {

/// Values.convertToString: strings as-is, numbers and booleans as Java
/// prints them, byte[] as base64, dates in Values' ISO form (a time before
/// one day, a date on a whole day, else a timestamp; UTC), lists as
/// `[a,b]` and maps and structs as `{"k":v}` (strings inside quoted and
/// escaped). `schema` is unused: the value's own alternative decides.
std::string values_convert_to_string(const SchemaPtr& schema, const Value& value);

/// The common cases of Values.parseString: empty -> "" (STRING), `null`
/// (no schema, null value), `true`/`false` (BOOLEAN), numbers (an integral
/// value as the smallest of INT8..INT64, so "1e3" is an INT16; others
/// FLOAT32 when finite as a float, else FLOAT64, else a Decimal) and
/// anything else as the untrimmed STRING. Not yet: quoted strings, arrays,
/// maps and ISO dates/times, which stay STRINGs.
SchemaAndValue values_parse_string(std::string_view text);

}  // namespace kc::data
