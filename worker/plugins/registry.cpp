#include "worker/plugins/registry.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"

#include "worker/plugins/builtin.h"
#include "worker/connectors/transform_config.h"

namespace kc::connectors {

PluginRegistry& PluginRegistry::builtin() {
  static PluginRegistry* r = [] {
    auto* reg = new PluginRegistry();
    register_builtin_connectors(*reg);
    return reg;
  }();
  return *r;
}

void PluginRegistry::add(PluginDesc desc) {
  std::lock_guard lk(mu_);
  const std::string cls = desc.class_name;
  auto dot = cls.rfind('.');
  std::string simple = dot == std::string::npos ? cls : cls.substr(dot + 1);
  alias_to_class_[simple] = cls;
  const std::string suffix = "Connector";
  if (simple.size() > suffix.size() && simple.compare(simple.size() - suffix.size(), suffix.size(), suffix) == 0)
    alias_to_class_[simple.substr(0, simple.size() - suffix.size())] = cls;
  for (const auto& a : desc.aliases) alias_to_class_[a] = cls;
  by_class_[cls] = std::move(desc);
}

std::optional<PluginDesc> PluginRegistry::find(const std::string& name) const {
  std::lock_guard lk(mu_);
  auto it = by_class_.find(name);
  if (it != by_class_.end()) return it->second;
  auto a = alias_to_class_.find(name);
  if (a != alias_to_class_.end()) {
    auto c = by_class_.find(a->second);
    if (c != by_class_.end()) return c->second;
  }
  return std::nullopt;
}

Result<std::unique_ptr<Connector>> PluginRegistry::create(const std::string& name) const {
  auto desc = find(name);
  if (!desc) {
    std::string avail;
    for (const auto& d : list()) avail += (avail.empty() ? "" : ", ") + d.class_name;
    return Error{"connector.class", "Failed to find any class that implements Connector and which name matches " +
                                        name + ", available connectors are: " + avail};
  }
  auto c = desc->factory();
  if (!c) return Error{"connector.class", "plugin " + name + " returned no connector"};
  return c;
}

ConfigDefs PluginRegistry::config_defs_for(const ConfigMap& config) const {
  auto cls = config.find("connector.class");
  std::optional<PluginDesc> desc;
  if (cls != config.end()) desc = find(cls->second);
  ConfigDefs defs = common_connector_config_defs();
  if (!desc) return defs;
  // Connect's groups keep Connect's order; ours ("Placement") follow them,
  // before the plugin's own.
  const auto ours = std::stable_partition(defs.begin(), defs.end(),
                                          [](const ConfigKeyDef& d) { return d.group != "Placement"; });
  const ConfigDefs placement(ours, defs.end());
  defs.erase(ours, defs.end());
  const auto enriched = transformation_config_defs(config);
  defs.insert(defs.end(), enriched.begin(), enriched.end());
  const auto& errors = error_handling_config_defs(desc->type == ConnectorType::Sink);
  defs.insert(defs.end(), errors.begin(), errors.end());
  if (desc->type == ConnectorType::Source) {
    const auto& eos = source_connector_config_defs();
    defs.insert(defs.end(), eos.begin(), eos.end());
  }
  defs.insert(defs.end(), placement.begin(), placement.end());
  defs.insert(defs.end(), desc->config_defs.begin(), desc->config_defs.end());
  return defs;
}

secrets::SecretKeyPredicate PluginRegistry::secret_predicate(const ConfigMap& config,
                                                             std::set<std::string> also_secret) const {
  return connector_secret_predicate(config_defs_for(config), std::move(also_secret));
}

namespace {

/// `key` of `config` in lower case with blanks trimmed (how Connect's
/// enum properties are parsed), or `fallback` when absent.
std::string enum_value(const ConfigMap& config, const std::string& key, const std::string& fallback) {
  auto it = config.find(key);
  std::string v = it == config.end() ? fallback : trim(it->second);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v;
}

/// Connect's text for a connector method that threw during validation.
std::string unexpected_validation_error(const std::exception& e) {
  std::string what = trim(e.what());
  return what.empty() ? "An unexpected error occurred during validation; please see the worker logs for more details."
                      : "An unexpected error occurred during validation: " + what;
}

/// What `connector` declares for `config`; the error text when it threw.
std::pair<ExactlyOnceSupport, std::optional<std::string>> declared_support(Connector& connector,
                                                                            const ConfigMap& config) {
  try {
    return {connector.exactly_once_support(config), std::nullopt};
  } catch (const std::exception& e) {
    return {ExactlyOnceSupport::Unknown, unexpected_validation_error(e)};
  }
}

/// DistributedHerder's exactly-once checks of a source connector (KIP-618),
/// on keys whose per-key checks passed. `probe` is a fresh instance.
void exactly_once_rule(Connector& probe, bool worker_enabled, const ConfigMap& config, ConfigErrors& errors) {
  const std::string kSupport = "exactly.once.support";
  const std::string kBoundary = "transaction.boundary";
  if (!errors.count(kSupport) && enum_value(config, kSupport, "requested") == "required") {
    auto& out = errors[kSupport];
    if (!worker_enabled) out.push_back("This worker does not have exactly-once source support enabled.");
    auto [support, failure] = declared_support(probe, config);
    if (failure) {
      out.push_back(*failure);
    } else if (support == ExactlyOnceSupport::Unknown) {
      out.push_back(
          "The connector does not implement the API required for preflight validation of exactly-once source "
          "support. Please consult the documentation for the connector to determine whether it supports "
          "exactly-once semantics, and then consider reconfiguring the connector to use the value \"requested\" "
          "for this property (which will disable this preflight check and allow the connector to be created).");
    } else if (support == ExactlyOnceSupport::Unsupported) {
      out.push_back("The connector does not support exactly-once semantics with the provided configuration.");
    }
    if (out.empty()) errors.erase(kSupport);
  }
  if (!errors.count(kBoundary) && enum_value(config, kBoundary, "poll") == "connector") {
    bool can = false;
    try {
      can = probe.can_define_transaction_boundaries(config);
    } catch (const std::exception& e) {
      errors[kBoundary].push_back(unexpected_validation_error(e));
      return;
    }
    if (!can)
      errors[kBoundary].push_back(
          "The connector does not support connector-defined transaction boundaries with the given configuration. "
          "Please reconfigure it to use a different transaction boundary definition.");
  }
}

}  // namespace

ConfigValidation PluginRegistry::validate(const ConfigMap& config, const ValidateContext& ctx) const {
  auto cls = config.find("connector.class");
  std::optional<PluginDesc> desc;
  if (cls != config.end()) desc = find(cls->second);
  if (!desc) {
    ConfigRule unknown_class = [&](const ConfigMap& c, ConfigErrors& errors) {
      auto it = c.find("connector.class");
      if (it != c.end())
        errors["connector.class"].push_back("Invalid value " + it->second +
                                            " for configuration connector.class: Class " + it->second +
                                            " could not be found.");
      tasks_max_rule(c, ctx.tasks_max_limit, errors);
    };
    return validate_config(cls == config.end() ? "" : cls->second, common_connector_config_defs(), unknown_class,
                           config);
  }
  // Connect's group order: Common, Transforms, Predicates, one group per
  // transform and predicate alias, Error Handling, then the plugin's own.
  const ConfigDefs defs = config_defs_for(config);
  const bool sink = desc->type == ConnectorType::Sink;
  // A source's exactly-once declarations come from one fresh instance.
  std::unique_ptr<Connector> probe;
  if (!sink && desc->factory) {
    try {
      probe = desc->factory();
    } catch (const std::exception&) {
      probe.reset();  // reported by the plugin's own rule or at start
    }
  }
  ConfigRule rule = [&, plugin_rule = desc->config_rule, sink](const ConfigMap& c, ConfigErrors& e) {
    if (plugin_rule) plugin_rule(c, e);
    if (sink) dlq_topic_rule(c, e);
    converter_rule(c, e);
    transformation_rule(c, e);
    tasks_max_rule(c, ctx.tasks_max_limit, e);
    if (probe) exactly_once_rule(*probe, ctx.exactly_once_source_enabled, c, e);
  };
  auto v = validate_config(desc->class_name, defs, rule, config);
  if (probe) {
    for (auto& entry : v.configs) {
      if (entry.definition.name != "exactly.once.support") continue;
      entry.value.recommended_values = {"requested"};
      if (declared_support(*probe, config).first == ExactlyOnceSupport::Supported)
        entry.value.recommended_values.push_back("required");
    }
  }
  return v;
}

std::vector<PluginDesc> PluginRegistry::list() const {
  std::lock_guard lk(mu_);
  std::vector<PluginDesc> out;
  for (const auto& [_, d] : by_class_) out.push_back(d);
  return out;
}

void register_builtin_connectors(PluginRegistry& r) {
  register_builtin_abi_connectors(r);  // FileStreamSource, FileStreamSink, SequenceSource, MirrorSource, PostgresSink
}

}  // namespace kc::connectors
