#include "worker/transforms/registry.h"

#include <algorithm>

#include "worker/transforms/builtin_util.h"

namespace kc::transforms {

const std::vector<PluginInfo>& plugins() {
  static const std::vector<PluginInfo> all = [] {
    std::vector<PluginInfo> v;
    detail::add_type_conversion(v);
    detail::add_field_edits(v);
    detail::add_reshape(v);
    detail::add_headers(v);
    detail::add_routing(v);
    detail::add_schema_metadata(v);
    std::sort(v.begin(), v.end(), [](const PluginInfo& a, const PluginInfo& b) { return a.class_name < b.class_name; });
    detail::add_predicates(v);
    return v;
  }();
  return all;
}

const PluginInfo* find_plugin(std::string_view name) {
  for (const auto& p : plugins()) {
    if (p.class_name == name) return &p;
    for (const auto& a : p.aliases)
      if (a == name) return &p;
  }
  return nullptr;
}

}  // namespace kc::transforms
