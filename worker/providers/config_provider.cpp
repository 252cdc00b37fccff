#include "worker/providers/config_provider.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/strings.h"
#include "config/properties.h"
#include "worker/transforms/java_regex.h"

extern char** environ;

namespace kc::providers {

namespace fs = std::filesystem;

namespace {

// KIP-993's `allowed.paths`: absolute directories a file or directory
// provider may read below; empty = any path. Stricter than Kafka's lexical
// check: both the allowed directories and every requested path are
// compared canonical (symlinks and ".." resolved, weakly_canonical), so a
// symlink inside the tree that points out of it is refused, as is a path
// whose ".." climbs out through a symlinked directory.
class AllowedPaths {
 public:
  Status configure(const ConfigMap& params) {
    auto it = params.find("allowed.paths");
    if (it == params.end()) return ok_status();
    for (const auto& p : split_comma_list(it->second)) {
      fs::path path(p);
      if (!path.is_absolute())
        return Error{"allowed.paths", "Path " + p + " in allowed.paths is not absolute"};
      allowed_.push_back(canonical_or_normal(path));
      text_ += (text_.empty() ? "" : ",") + p;
    }
    return ok_status();
  }
  /// The canonical path to read when `path` is allowed. Errors name the
  /// path, what it resolves to and the rule.
  Result<fs::path> check(const std::string& path) const {
    if (allowed_.empty()) return fs::path(path).lexically_normal();
    const fs::path real = canonical_or_normal(fs::path(path));
    if (fs::path(path).is_absolute() && within_allowed(real)) return real;
    return Error{"path", "The path " + path + (real.string() == path ? "" : " (resolved to " + real.string() + ")") +
                             " is not allowed to be accessed: it is not below allowed.paths=" + text_ +
                             " once symlinks and '..' are resolved"};
  }

 private:
  static fs::path canonical_or_normal(const fs::path& p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : c.lexically_normal();
  }
  bool within_allowed(const fs::path& real) const {
    for (const auto& a : allowed_) {
      auto rel = real.lexically_relative(a);
      if (!rel.empty() && *rel.begin() != "..") return true;
    }
    return false;
  }

  std::vector<fs::path> allowed_;  ///< canonical
  std::string text_;               ///< as configured, for errors
};

ConfigMap pick(ConfigMap all, const std::set<std::string>& keys) {
  if (keys.empty()) return all;
  ConfigMap out;
  for (const auto& k : keys)
    if (auto it = all.find(k); it != all.end()) out.emplace(k, std::move(it->second));
  return out;
}

/// FileConfigProvider: the keys of a properties file.
class FileProvider final : public ConfigProvider {
 public:
  Status configure(const ConfigMap& params) override { return allowed_.configure(params); }
  Result<ConfigMap> get(const std::string& path, const std::set<std::string>& keys) const override {
    if (path.empty()) return ConfigMap{};
    auto p = allowed_.check(path);
    if (!p) return p.error();
    try {
      return pick(config::load_properties_file(p->string()), keys);
    } catch (const std::exception&) {
      return Error{"path", "Could not read properties from file " + path};
    }
  }

 private:
  AllowedPaths allowed_;
};

/// DirectoryConfigProvider: the regular files of a directory, by file
/// name, each value the file's content (for Kubernetes/Docker secrets).
class DirectoryProvider final : public ConfigProvider {
 public:
  Status configure(const ConfigMap& params) override { return allowed_.configure(params); }
  Result<ConfigMap> get(const std::string& path, const std::set<std::string>& keys) const override {
    if (path.empty()) return ConfigMap{};
    auto dir = allowed_.check(path);
    if (!dir) return dir.error();
    std::error_code ec;
    if (!fs::is_directory(*dir, ec)) return ConfigMap{};  // as Kafka: nothing there
    ConfigMap out;
    auto read = [&](const fs::path& file) -> Status {
      auto real = allowed_.check(file.string());  // a symlink in the directory may point out of the tree
      if (!real) return real.error();
      std::ifstream in(*real, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in && !in.eof()) return Error{"path", "Could not read file " + file.string()};
      out[file.filename().string()] = text.str();
      return ok_status();
    };
    if (!keys.empty()) {
      for (const auto& k : keys) {
        if (k.find('/') != std::string::npos) continue;  // a file name, not a path
        fs::path f = *dir / k;
        if (fs::is_regular_file(f, ec))
          if (auto st = read(f); !st) return st.error();
      }
      return out;
    }
    for (const auto& e : fs::directory_iterator(*dir, ec))
      if (e.is_regular_file(ec))
        if (auto st = read(e.path()); !st) return st.error();
    if (ec) return Error{"path", "Could not list directory " + path + ": " + ec.message()};
    return out;
  }

 private:
  AllowedPaths allowed_;
};

/// EnvVarConfigProvider (KIP-887): environment variables whose names match
/// `allowlist.pattern` (default: all). Paths are not supported.
class EnvProvider final : public ConfigProvider {
 public:
  Status configure(const ConfigMap& params) override {
    auto it = params.find("allowlist.pattern");
    if (it == params.end()) return ok_status();
    auto re = transforms::JavaRegex::compile(it->second);
    if (!re) return Error{"allowlist.pattern", "Invalid value " + it->second +
                                                   " for configuration allowlist.pattern: " + re.error().message};
    allowlist_ = std::make_shared<transforms::JavaRegex>(std::move(re).value());
    return ok_status();
  }
  Result<ConfigMap> get(const std::string& path, const std::set<std::string>& keys) const override {
    if (!path.empty()) return Error{"path", "EnvVarConfigProvider does not support paths, found: " + path};
    ConfigMap all;
    for (char** e = environ; e && *e; ++e) {
      std::string_view entry(*e);
      auto eq = entry.find('=');
      if (eq == std::string_view::npos) continue;
      std::string name(entry.substr(0, eq));
      if (allowlist_ && !allowlist_->matches(name)) continue;
      all.emplace(std::move(name), std::string(entry.substr(eq + 1)));
    }
    return pick(std::move(all), keys);
  }

 private:
  std::shared_ptr<transforms::JavaRegex> allowlist_;
};

/// One `${provider:path:key}` occurrence in a value: [begin, end) in the
/// value and its parts. Parsed as Kafka's pattern
/// \$\{([^}]*?):(([^}]*?):)?([^}]*?)\} does: the provider ends at the first
/// ':', the path (optional) at the next, the key is the rest.
struct Placeholder {
  size_t begin = 0, end = 0;
  std::string provider, path, key;
};

std::vector<Placeholder> placeholders_of(const std::string& value) {
  std::vector<Placeholder> out;
  for (size_t at = value.find("${"); at != std::string::npos; at = value.find("${", at + 2)) {
    const size_t close = value.find('}', at + 2);
    if (close == std::string::npos) break;
    const std::string body = value.substr(at + 2, close - at - 2);
    const size_t c1 = body.find(':');
    if (c1 == std::string::npos) continue;
    Placeholder p{at, close + 1, body.substr(0, c1), "", ""};
    const std::string rest = body.substr(c1 + 1);
    if (const size_t c2 = rest.find(':'); c2 != std::string::npos) {
      p.path = rest.substr(0, c2);
      p.key = rest.substr(c2 + 1);
    } else {
      p.key = rest;
    }
    out.push_back(std::move(p));
    at = close - 1;
  }
  return out;
}

using Where = std::pair<std::string, std::string>;  ///< (provider, path)

/// The keys `config`'s placeholders ask each configured (provider, path)
/// for: one get() each, in transform() and unresolved() alike.
std::map<Where, std::set<std::string>> wanted_keys(const ConfigMap& config,
                                                   const std::map<std::string, std::unique_ptr<ConfigProvider>>& ps) {
  std::map<Where, std::set<std::string>> wanted;
  for (const auto& [k, v] : config)
    for (const auto& p : placeholders_of(v))
      if (ps.count(p.provider)) wanted[{p.provider, p.path}].insert(p.key);
  return wanted;
}

/// A provider's get() failure as transform() and unresolved() report it.
std::string failure_message(const std::string& provider, const std::string& path, const std::string& key,
                            const std::string& reason) {
  return "Failed to resolve config provider " + provider + (path.empty() ? "" : " path " + path) + " in '" + key +
         "': " + reason;
}

}  // namespace

std::unique_ptr<ConfigProvider> make_config_provider(const std::string& class_name) {
  const std::string c = trim(class_name);
  auto is = [&](const char* full) {
    std::string_view f(full);
    return c == f || c == f.substr(f.rfind('.') + 1);
  };
  if (is(kFileConfigProviderClass)) return std::make_unique<FileProvider>();
  if (is(kDirectoryConfigProviderClass)) return std::make_unique<DirectoryProvider>();
  if (is(kEnvVarConfigProviderClass)) return std::make_unique<EnvProvider>();
  return nullptr;
}

Result<std::shared_ptr<const ConfigTransformer>> ConfigTransformer::from_worker_config(const ConfigMap& props) {
  auto t = std::make_shared<ConfigTransformer>();
  auto list = props.find("config.providers");
  if (list == props.end()) return std::shared_ptr<const ConfigTransformer>(std::move(t));
  for (const auto& name : split_comma_list(list->second)) {
    const std::string prefix = "config.providers." + name + ".";
    auto cls = props.find(prefix + "class");
    if (cls == props.end() || trim(cls->second).empty())
      return Error{prefix + "class", "Missing required configuration \"" + prefix +
                                         "class\" which has no default value (config.providers names " + name + ")"};
    auto provider = make_config_provider(cls->second);
    if (!provider)
      return Error{prefix + "class", "Invalid value " + cls->second + " for configuration " + prefix +
                                         "class: unknown config provider class (known: FileConfigProvider, "
                                         "DirectoryConfigProvider, EnvVarConfigProvider)"};
    const std::string param_prefix = prefix + "param.";
    const ConfigMap params = with_prefix(props, param_prefix);
    if (auto st = provider->configure(params); !st)
      return Error{param_prefix + st.error().field, "config provider " + name + ": " + st.error().message};
    t->names_.push_back(name);
    t->providers_[name] = std::move(provider);
  }
  return std::shared_ptr<const ConfigTransformer>(std::move(t));
}

std::shared_ptr<const ConfigTransformer> ConfigTransformer::from_providers(
    std::vector<std::pair<std::string, std::unique_ptr<ConfigProvider>>> providers) {
  auto t = std::make_shared<ConfigTransformer>();
  for (auto& [name, provider] : providers) {
    t->names_.push_back(name);
    t->providers_[name] = std::move(provider);
  }
  return t;
}

std::vector<ConfigTransformer::Unresolved> ConfigTransformer::unresolved(const ConfigMap& config) const {
  using Kind = Unresolved::Kind;
  std::vector<Unresolved> out;
  std::string configured;
  for (const auto& n : names_) configured += (configured.empty() ? "" : ", ") + n;
  std::map<Where, Result<ConfigMap>> got;
  for (const auto& [where, keys] : wanted_keys(config, providers_))
    got.emplace(where, providers_.at(where.first)->get(where.second, keys));
  for (const auto& [k, v] : config)
    for (const auto& p : placeholders_of(v)) {
      const std::string where = "${" + p.provider + ":" + (p.path.empty() ? "" : p.path + ":") + p.key + "}";
      auto provider = providers_.find(p.provider);
      if (provider == providers_.end()) {
        out.push_back({Kind::NotConfigured, Error{k, where + ": config provider " + p.provider +
                                                        " is not configured (config.providers: " +
                                                        (configured.empty() ? "none" : configured) + ")"}});
        continue;
      }
      auto it = got.find({p.provider, p.path});
      if (!it->second) {
        out.push_back({Kind::Failed, Error{k, failure_message(p.provider, p.path, k, it->second.error().message)}});
      } else if (!it->second->count(p.key)) {
        out.push_back({Kind::MissingKey, Error{k, where + ": config provider " + p.provider + " has no key " + p.key +
                                                     (p.path.empty() ? "" : " at " + p.path)}});
      }
    }
  return out;
}

bool ConfigTransformer::has_placeholders(const ConfigMap& config) {
  for (const auto& [_, v] : config)
    if (!placeholders_of(v).empty()) return true;
  return false;
}

Result<ResolvedConfig> ConfigTransformer::transform(const ConfigMap& config) const {
  ResolvedConfig out{config, {}};
  if (providers_.empty()) return out;
  // One get() per provider and path, with every key asked for there.
  const auto wanted = wanted_keys(config, providers_);
  if (wanted.empty()) return out;
  std::map<Where, ConfigMap> found;
  for (const auto& [where, keys] : wanted) {
    auto got = providers_.at(where.first)->get(where.second, keys);
    if (!got) {
      // Named after the first key (in key order) that asks there.
      std::string key;
      for (const auto& [k, v] : config)
        for (const auto& p : placeholders_of(v))
          if (key.empty() && p.provider == where.first && p.path == where.second) key = k;
      return Error{key, failure_message(where.first, where.second, key, got.error().message)};
    }
    found[where] = std::move(got).value();
  }
  for (auto& [k, v] : out.config) {
    auto ps = placeholders_of(v);
    if (ps.empty()) continue;
    std::string replaced;
    size_t from = 0;
    bool any = false;
    for (const auto& p : ps) {
      replaced.append(v, from, p.begin - from);
      from = p.end;
      auto f = found.find({p.provider, p.path});
      const std::string* value = nullptr;
      if (f != found.end())
        if (auto it = f->second.find(p.key); it != f->second.end()) value = &it->second;
      if (value) {
        replaced += *value;
        any = true;
      } else {
        replaced.append(v, p.begin, p.end - p.begin);
      }
    }
    replaced.append(v, from, std::string::npos);
    if (any) {
      v = std::move(replaced);
      out.resolved_keys.insert(k);
    }
  }
  return out;
}

void restore_placeholders(const ConfigMap& raw, const ResolvedConfig& resolved, std::vector<ConfigMap>& task_configs) {
  for (auto& task : task_configs)
    for (const auto& key : resolved.resolved_keys) {
      auto t = task.find(key);
      auto r = resolved.config.find(key);
      auto w = raw.find(key);
      if (t != task.end() && r != resolved.config.end() && w != raw.end() && t->second == r->second)
        t->second = w->second;
    }
}

}  // namespace kc::providers
