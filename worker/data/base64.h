#pragma once
// Standard base64 (RFC 4648 section 4, padded), as Jackson writes byte[] and
// java.util.Base64 encodes.

#include <optional>
#include <string>
#include <string_view>

namespace kc::data {

/// Encodes `bytes` with the standard alphabet and '=' padding.
std::string base64_encode(std::string_view bytes);
/// Appends the encoding of `bytes` to `out`.
void base64_append(std::string& out, std::string_view bytes);
/// Decodes standard base64 as Jackson's default variant does: padding is
/// required, characters up to ' ' between quads are skipped, anything else
/// outside the alphabet is an error: nullopt, with `bad_char` set to the
/// offending character when non-null.
std::optional<std::string> base64_decode(std::string_view text, char* bad_char = nullptr);

}  // namespace kc::data
