// load_worker(): the configuration path `run` and `validate` share.
#include "cmd/kconnectd/worker_setup.h"

#include "common/strings.h"
#include "config/env_overrides.h"
#include "config/properties.h"
#include "worker/converters/converters.h"
#include "worker/providers/config_provider.h"

namespace kc::cmd {

std::vector<std::string> converter_errors(const config::Properties& props) {
  std::vector<std::string> out;
  for (const char* key : {"key.converter", "value.converter", "header.converter"}) {
    const std::string k(key);
    std::string known;  // SimpleHeaderConverter converts headers only
    for (auto name : converters::converter_class_names())
      if (k == "header.converter" || name != converters::kSimpleHeaderConverterClass)
        known += (known.empty() ? "" : ", ") + std::string(name);
    auto it = props.find(k);
    const std::string cls = it != props.end() ? trim(it->second) : config::find_option(k)->default_value;
    std::map<std::string, std::string> sub;
    for (const auto& [pk, pv] : props)
      if (pk.size() > k.size() + 1 && pk.starts_with(k + ".")) sub[pk.substr(k.size() + 1)] = pv;
    Error e;
    if (k == "header.converter") {
      auto made = converters::make_header_converter(cls, sub);
      if (made) continue;
      e = made.error();
    } else {
      auto made = converters::make_converter(cls, sub, k == "key.converter");
      if (made) continue;
      e = made.error();
    }
    if (!converters::resolve_converter_class(cls) || e.field.empty()) {
      out.push_back(k + ": '" + cls + "' is not a converter: " + e.message + " (expected one of " + known + ")");
    } else {
      out.push_back(k + "." + e.field + ": " + e.message);  // the converter refused one of its settings
    }
  }
  return out;
}

LoadedWorker load_worker(const std::string& path, char** envp, const std::string& kafka_opts,
                         const LoadOptions& opts) {
  LoadedWorker out;
  config::Properties props;
  try {
    props = config::load_properties_file(path);
  } catch (const config::ConfigError& e) {
    out.errors.emplace_back(e.what());  // directory, missing, unreadable, syntax: nothing else to check
    return out;
  }
  out.from_env = config::apply_env_overrides(props, envp);

  auto report = config::WorkerConfig::validate(props);
  out.errors = std::move(report.errors);
  out.warnings = std::move(report.warnings);
  for (auto& e : converter_errors(props)) out.errors.push_back(std::move(e));

  if (opts.resolve) {
    auto transformer = providers::ConfigTransformer::from_worker_config(props);
    if (!transformer) {
      out.errors.push_back(transformer.error().to_string());
    } else {
      for (const auto& u : transformer.value()->unresolved(props)) out.errors.push_back(u.error.to_string());
    }
  }

  if (!report.config) return out;
  // What `run` derives next; its failures are configuration errors too.
  auto sec = rest::rest_security_from(*report.config, kafka_opts);
  if (!sec) {
    out.errors.push_back(sec.error().to_string());
  } else {
    out.security = std::move(sec).value();
    for (const auto& w : out.security.warnings) out.warnings.push_back(w);
  }
  try {
    out.herder = herder::herder_config_from(*report.config);
    out.herder.rest_client_tls = out.security.client_tls;
  } catch (const config::ConfigError& e) {
    out.errors.emplace_back(e.what());
  } catch (const std::exception& e) {
    out.errors.push_back(std::string("cannot map the worker config: ") + e.what());
  }
  if (out.errors.empty()) out.config = std::move(report.config);
  return out;
}

}  // namespace kc::cmd
