#include "worker/rest/ui_assets.h"

#include <array>
#include <utility>

namespace kc::rest {

const UiAsset* find_ui_asset(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos) return nullptr;
  for (const auto& a : ui_assets())
    if (a.name == name) return &a;
  return nullptr;
}

std::string_view ui_content_type(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kTypes{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".ico", "image/x-icon"},
  }};
  for (const auto& [ext, type] : kTypes)
    if (name.size() > ext.size() && name.ends_with(ext)) return type;
  return "application/octet-stream";
}

}  // namespace kc::rest
