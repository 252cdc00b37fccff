#pragma once
// Field paths of KIP-821 (`field.syntax.version`): how a transform's field
// setting names a possibly nested field. Internal to the built-in transforms.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kc::transforms::detail {

/// Connect's FieldSyntaxVersion: V1 reads the whole setting as one top-level
/// field name; V2 reads a dotted path into nested structs or maps.
enum class FieldSyntaxVersion { kV1, kV2 };

/// Splits `path` into its steps as Connect's SingleFieldPath does.
///
/// V1: one step, the whole text. V2: steps separated by '.'; a step that
/// starts with a backtick runs to the next backtick that ends the path or is
/// followed by '.', so it may hold dots and backticks; inside it, "\`" just
/// before such a dot (or the end) is a literal backtick. A trailing '.' adds an
/// empty last step; an empty path is one empty step (Connect would fail later
/// with an index error).
///
/// Errors (ConfigException text, no key): a backtick step with no closing
/// backtick, or whose last backtick is escaped: "Incomplete backtick pair in
/// path: [PATH], consider adding a backslash before backtick at position N to
/// escape it", N being the opening backtick's index in `path` (in bytes, which
/// equals Java's UTF-16 index for ASCII paths).
Result<std::vector<std::string>> parse_field_path(std::string_view path, FieldSyntaxVersion version);

}  // namespace kc::transforms::detail
