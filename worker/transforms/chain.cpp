#include "worker/transforms/chain.h"

#include <map>
#include <set>

#include "common/strings.h"
#include "worker/transforms/config_def.h"

namespace kc::transforms {

namespace {

std::vector<std::string> aliases(const Config& c, const std::string& key, std::vector<ConfigError>& errors) {
  static const std::vector<ConfigKeyDef> defs = {{"transforms", "LIST", "", "LOW", ""}, {"predicates", "LIST", "", "LOW", ""}};
  auto l = ConfigReader(c, defs).list(key);
  std::vector<std::string> out = l ? *l : std::vector<std::string>{};
  std::set<std::string> seen;
  for (const auto& a : out)
    if (!seen.insert(a).second) errors.push_back({key, "Invalid value " + java_list_string(out) + " for configuration " + key + ": Duplicate alias provided."});
  return out;
}

const PluginInfo* resolve(const Config& c, const std::string& prefix, PluginKind kind, std::vector<ConfigError>& errors) {
  const std::string key = prefix + "type";
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) {
    errors.push_back({key, "Missing required configuration \"" + key + "\" which has no default value."});
    return nullptr;
  }
  const PluginInfo* p = find_plugin(it->second);
  if (!p || p->kind != kind) {
    errors.push_back({key, "Invalid value " + it->second + " for configuration " + key + ": Class " + it->second +
                               " could not be found."});
    return nullptr;
  }
  return p;
}

}  // namespace

Result<TransformChain> TransformChain::build(const Config& c, std::vector<ConfigError>* errors_out) {
  std::vector<ConfigError> errors;
  std::map<std::string, std::shared_ptr<Predicate>> predicates;
  for (const auto& alias : aliases(c, "predicates", errors)) {
    std::string prefix = "predicates." + alias + ".";
    const PluginInfo* p = resolve(c, prefix, PluginKind::kPredicate, errors);
    if (!p) continue;
    std::shared_ptr<Predicate> pred = p->make_predicate();
    Config sub = with_prefix(c, prefix);
    sub.erase("type");
    auto st = pred->configure(sub);
    if (!st) {
      errors.push_back({prefix + (st.error().field.empty() ? "type" : st.error().field), st.error().message});
      continue;
    }
    predicates[alias] = std::move(pred);
  }
  TransformChain chain;
  for (const auto& alias : aliases(c, "transforms", errors)) {
    std::string prefix = "transforms." + alias + ".";
    const PluginInfo* p = resolve(c, prefix, PluginKind::kTransformation, errors);
    if (!p) continue;
    Stage stage;
    stage.alias = alias;
    stage.class_name = p->class_name;
    stage.transform = p->make_transformation();
    Config sub = with_prefix(c, prefix);
    for (const char* k : {"type", "predicate", "negate"}) sub.erase(k);
    auto st = stage.transform->configure(sub);
    if (!st) {
      errors.push_back({prefix + (st.error().field.empty() ? "type" : st.error().field), st.error().message});
      continue;
    }
    if (auto it = c.find(prefix + "predicate"); it != c.end() && !it->second.empty()) {
      auto pit = predicates.find(it->second);
      if (pit == predicates.end()) {
        errors.push_back({prefix + "predicate", "Invalid value " + it->second + " for configuration " + prefix +
                                                    "predicate: Predicate alias " + it->second + " not found in predicates"});
        continue;
      }
      stage.predicate = pit->second;
    }
    if (auto it = c.find(prefix + "negate"); it != c.end()) {
      static const std::vector<ConfigKeyDef> defs = {{"negate", "BOOLEAN", "false", "LOW", ""}};
      auto n = ConfigReader(Config{{"negate", it->second}}, defs).boolean("negate");
      if (!n) {
        errors.push_back({prefix + "negate", "Invalid value " + it->second + " for configuration " + prefix +
                                                 "negate: Expected value to be either true or false"});
        continue;
      }
      stage.negate = *n;
    }
    chain.stages_.push_back(std::move(stage));
  }
  if (!errors.empty()) {
    if (errors_out) *errors_out = errors;
    return Error{errors[0].key, errors[0].message};
  }
  return chain;
}

Result<Outcome> TransformChain::run(RecordRef ref, ApplyError* error) {
  for (auto& s : stages_) {
    if (s.predicate && s.predicate->test(ref.rec) == s.negate) continue;
    auto r = s.transform->apply(ref);
    if (!r) {
      if (error) *error = {s.alias, r.error().message, s.class_name};
      return Error{"transforms." + s.alias, r.error().message};
    }
    if (*r == Outcome::kDropped) return Outcome::kDropped;
  }
  return Outcome::kKept;
}

Result<Outcome> TransformChain::apply(data::SinkRecord& r, ApplyError* e) { return run(RecordRef::of(r), e); }
Result<Outcome> TransformChain::apply(data::SourceRecord& r, ApplyError* e) { return run(RecordRef::of(r), e); }

}  // namespace kc::transforms
