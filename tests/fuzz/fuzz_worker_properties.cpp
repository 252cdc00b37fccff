// libFuzzer target: a worker properties file with CONNECT_* environment
// overrides, as `kconnectd run` reads them: parse_properties on the text
// before the first NUL byte, apply_env_overrides with the NUL-separated
// "NAME=value" entries after it, then WorkerConfig::from_properties and
// describe(). Bad input must end in ConfigError, never a crash or another
// exception; describe() must not show a secret key's value.
#include <string>
#include <vector>

#include "config/env_overrides.h"
#include "config/properties.h"
#include "config/worker_config.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace kc::config;

/// True when `v` occurs in some other key or value of `props`, or in a key
/// name: then finding it in describe() proves nothing.
bool appears_elsewhere(const Properties& props, const std::string& key, const std::string& v) {
  for (const auto& [k, val] : props) {
    if (k.find(v) != std::string::npos) return true;
    if (k != key && val.find(v) != std::string::npos) return true;
  }
  return false;
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
      if (v.size() >= 12 && is_secret_option(k) && !appears_elsewhere(props, k, v))
        KC_FUZZ_CHECK(shown.find(v) == std::string::npos);
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
