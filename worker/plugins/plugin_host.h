#pragma once
// The worker's side of the C plugin ABI (include/kconnectd/plugin.h): the
// host function table handed to plugins, the adapters that make a C
// connector class an internal Connector / SourceTask / SinkTask, and the
// loader that dlopens the plugins of `plugin.path` (Connect's
// DelegatingClassLoader: every plugin directory, one level deep).

#include <string>
#include <vector>

#include <kconnectd/plugin.h>

#include "worker/plugins/registry.h"

namespace kc::connectors {

/// The host function table every plugin gets (one for the process).
const kc_host_api& plugin_host_api();

/// Registers the classes a registration function declares, as plugin.h's
/// entry point does, but for code linked into the daemon (the built-ins).
/// `origin` names it in errors. Errors: the function's KC_ERROR message, or
/// a bad class table ("class_name is missing", "declared twice").
Status register_plugin(kc_plugin_register_fn fn, const std::string& origin, PluginRegistry& registry);

/// One plugin file's outcome. `error` empty = loaded.
struct PluginLoadResult {
  std::string file;
  std::vector<std::string> classes;  ///< class names it registered
  std::string error;                 ///< the reason it was refused
};

/// Loads one shared object (dlopen RTLD_NOW|RTLD_LOCAL), checks its ABI
/// version symbol and entry point, and adds its classes to `registry`.
/// Refused (error set, nothing added, file closed) when dlopen fails (not an
/// ELF file, missing library), a symbol is missing, its MAJOR version is not
/// the worker's, or its registration fails.
PluginLoadResult load_plugin_file(const std::string& file, PluginRegistry& registry);

/// Loads every `*.so` directly in each directory of `plugin_path`, and in
/// its immediate subdirectories, in name order. Logs one line per file
/// (info when loaded; warn "plugin FILE refused: REASON" else) and never
/// throws; a missing directory is one warn line.
std::vector<PluginLoadResult> load_plugins(const std::vector<std::string>& plugin_path, PluginRegistry& registry);

}  // namespace kc::connectors
