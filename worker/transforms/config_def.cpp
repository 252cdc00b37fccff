#include "worker/transforms/config_def.h"
#include "common/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kc::transforms {

Error invalid_value(const std::string& key, const std::string& value, const std::string& why) {
  return Error{key, "Invalid value " + value + " for configuration " + key + (why.empty() ? "" : ": " + why)};
}

Error missing_required(const std::string& key) {
  return Error{key, "Missing required configuration \"" + key + "\" which has no default value."};
}

std::string java_list_string(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

std::string one_of_message(const std::vector<std::string>& allowed) {
  std::string out = "String must be one of: ";
  for (size_t i = 0; i < allowed.size(); ++i) out += (i ? ", " : "") + allowed[i];
  return out;
}

Result<std::optional<std::string>> ConfigReader::raw(const std::string& key) const {
  if (auto it = config_.find(key); it != config_.end()) return std::optional<std::string>(it->second);
  auto def = std::find_if(defs_.begin(), defs_.end(), [&](const ConfigKeyDef& d) { return d.name == key; });
  if (def == defs_.end() || def->default_null) return std::optional<std::string>();
  if (!def->default_value) return missing_required(key);
  return std::optional<std::string>(*def->default_value);
}

Result<std::optional<std::string>> ConfigReader::string(const std::string& key) const { return raw(key); }

Result<std::string> ConfigReader::required_string(const std::string& key) const {
  auto r = raw(key);
  if (!r) return r.error();
  if (!*r) return missing_required(key);
  return **r;
}

Result<std::optional<int32_t>> ConfigReader::int32(const std::string& key) const {
  auto r = raw(key);
  if (!r) return r.error();
  if (!*r) return std::optional<int32_t>();
  std::string t = trim(**r);
  int32_t v = 0;
  const char* b = t.data();
  if (!t.empty() && t[0] == '+') ++b;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) return invalid_value(key, **r, "Not a number of type INT");
  return std::optional<int32_t>(v);
}

Result<bool> ConfigReader::boolean(const std::string& key) const {
  auto r = raw(key);
  if (!r) return r.error();
  if (!*r) return false;
  std::string t = trim(**r);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "true") return true;
  if (t == "false") return false;
  return invalid_value(key, **r, "Expected value to be either true or false");
}

Result<std::vector<std::string>> ConfigReader::list(const std::string& key) const {
  auto r = raw(key);
  if (!r) return r.error();
  std::vector<std::string> out;
  if (!*r) return out;
  std::string t = trim(**r);
  if (t.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = t.find(',', start);
    out.push_back(trim(std::string_view(t).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // Java's String.split drops trailing empty strings.
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

}  // namespace kc::transforms
