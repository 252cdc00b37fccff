// CONNECT_* environment variables -> worker properties (see env_overrides.h).
#include "config/env_overrides.h"

namespace kc::config {

namespace {

// Names starting with this go to the images' log4j setup, not to the worker
// properties (cp-kafka-connect excludes CONNECT_LOG4J_ROOT_LOGLEVEL,
// CONNECT_LOG4J_LOGGERS, ... from the properties file).
constexpr std::string_view kLog4jPrefix = "CONNECT_LOG4J_";

// Replaces every non-overlapping occurrence of `from`, scanning left to right;
// the same result as Python's `to.join(s.split(from))`, which dub.py uses.
std::string replace_all(const std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  for (;;) {
    const std::size_t hit = s.find(from, pos);
    if (hit == std::string::npos) {
      out.append(s, pos, std::string::npos);
      return out;
    }
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
}

}  // namespace

std::optional<std::string> env_name_to_property(std::string_view env_name) {
  if (!env_name.starts_with(kEnvPrefix) || env_name.size() == kEnvPrefix.size() ||
      env_name.starts_with(kLog4jPrefix)) {
    return std::nullopt;
  }
  std::string name(env_name.substr(kEnvPrefix.size()));
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    } else if (c == '_') {
      c = '.';
    }
  }
  // Order matters: "___" -> "..." must become "-" before ".." is read as "_".
  return replace_all(replace_all(name, "...", "-"), "..", "_");
}

std::vector<std::pair<std::string, std::string>> env_overrides(char** envp) {
  std::vector<std::pair<std::string, std::string>> out;
  if (envp == nullptr) {
    return out;
  }
  for (char** e = envp; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    if (auto prop = env_name_to_property(entry.substr(0, eq))) {
      out.emplace_back(std::move(*prop), std::string(entry.substr(eq + 1)));
    }
  }
  return out;
}

std::vector<std::string> apply_env_overrides(std::map<std::string, std::string>& props, char** envp) {
  std::vector<std::string> applied;
  for (auto& [key, value] : env_overrides(envp)) {
    props.insert_or_assign(key, std::move(value));
    applied.push_back(std::move(key));
  }
  return applied;
}

}  // namespace kc::config
