// libFuzzer target: a worker properties file with CONNECT_* environment
// overrides, as `kconnectd run` reads them: parse_properties on the text
// before the first NUL byte, apply_env_overrides with the NUL-separated
// "NAME=value" entries after it, then WorkerConfig::from_properties and
// describe(). Bad input must end in ConfigError, never a crash or another
// exception; describe() must not show a secret key's value on its line.
#include <optional>
#include <string>
#include <vector>

#include "config/env_overrides.h"
#include "config/properties.h"
#include "config/worker_config.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace kc::config;

/// The value describe() shows on the line of `key` ("\tkey = value"), or
/// nullopt when there is no such line.
std::optional<std::string> shown_value(const std::string& shown, const std::string& key) {
  const std::string head = "\t" + key + " = ";
  size_t at = 0;
  while ((at = shown.find(head, at)) != std::string::npos) {
    if (at == 0 || shown[at - 1] == '\n') {
      auto begin = at + head.size();
      auto end = shown.find('\n', begin);
      return shown.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    at += head.size();
  }
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = kc::fuzz::as_text(data, size);
  std::string_view text = kc::fuzz::take_until(in, '\0', in);
  if (text.size() == in.size() && text.data() == in.data()) in = {};  // no NUL: no environment

  Properties props;
  try {
    props = parse_properties(text);
  } catch (const ConfigError&) {
    return 0;
  }

  // The environment block: entries split at NUL, as in `environ`.
  std::vector<std::string> env;
  while (!in.empty()) {
    auto at = in.find('\0');
    env.emplace_back(in.substr(0, at));
    in = at == std::string_view::npos ? std::string_view{} : in.substr(at + 1);
  }
  std::vector<char*> envp;
  for (auto& e : env) {
    envp.push_back(e.data());
    auto eq = e.find('=');
    (void)env_name_to_property(std::string_view(e).substr(0, eq));
  }
  envp.push_back(nullptr);
  auto set = apply_env_overrides(props, envp.data());
  for (const auto& k : set) KC_FUZZ_CHECK(props.count(k) == 1);

  try {
    auto wc = WorkerConfig::from_properties(props);
    auto shown = wc.describe();
    for (const auto& [k, v] : props) {
      if (v.empty() || !is_secret_option(k)) continue;
      auto line = shown_value(shown, k);
      KC_FUZZ_CHECK(!line || *line == "[hidden]" || line->find(v) == std::string::npos);
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
