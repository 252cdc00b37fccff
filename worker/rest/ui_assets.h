#pragma once
// The web console's files (worker/rest/ui), compiled into the binary at build
// time by cmake/embed_ui.cmake, so the daemon serves GET /ui with no files on
// disk and no network access (issue 28).

#include <span>
#include <string_view>

namespace kc::rest {

/// One embedded file: its name in worker/rest/ui ("index.html") and bytes.
struct UiAsset {
  std::string_view name;
  std::string_view bytes;
};

/// Every embedded file, sorted by name (generated code).
std::span<const UiAsset> ui_assets();

/// The file called `name` (no '/' allowed), nullptr if there is none.
const UiAsset* find_ui_asset(std::string_view name);

/// The Content-Type for a file name by its extension: text/html,
/// text/javascript, text/css, image/svg+xml, image/png, application/json,
/// text/plain (UTF-8 for the text types); application/octet-stream otherwise.
std::string_view ui_content_type(std::string_view name);

}  // namespace kc::rest
