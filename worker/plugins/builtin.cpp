// The built-in connectors are written against the plugin ABI
// (builtin_file.cpp, builtin_sequence.cpp, worker/connectors/mirror); this
// file registers their entry points once, as the loader does a .so's, and
// hands out their classes.
#include "worker/plugins/builtin.h"

#include <stdexcept>

#include <kconnectd/plugin.hpp>

#include "worker/connectors/mirror/mirror_source.h"
#include "worker/connectors/postgres/postgres_sink.h"

#include "worker/plugins/plugin_host.h"
#include "worker/plugins/registry.h"

namespace kc::connectors {

// The built-ins' entry points (KCONNECTD_BUILTIN_PLUGIN in their files).
kc_status builtin_plugins_register(const kc_host_api* host, kc_registrar* registrar);       // SequenceSource
kc_status builtin_file_plugins_register(const kc_host_api* host, kc_registrar* registrar);  // FileStream*

/// The entry point of the connectors of their own rooms (MirrorSource,
/// PostgresSink): each room declares its class (it knows no version of the
/// daemon's), this gives them the built-ins' version.
KCONNECTD_BUILTIN_PLUGIN(builtin_room_plugins_register, reg) {
  mirror::declare_mirror_source(reg, kBuiltinPluginVersion);
  postgres::declare_postgres_sink(reg, kBuiltinPluginVersion);
}

namespace {

/// The classes the built-in entry points declare, registered once.
const PluginRegistry& abi_builtins() {
  static const PluginRegistry* r = [] {
    auto* reg = new PluginRegistry();
    for (kc_plugin_register_fn fn :
         {&builtin_file_plugins_register, &builtin_plugins_register, &builtin_room_plugins_register}) {
      auto st = register_plugin(fn, "built-in", *reg);
      if (!st) throw std::logic_error("built-in plugins: " + st.error().message);  // a bug, at startup
    }
    return reg;
  }();
  return *r;
}

/// One built-in class (always registered: abi_builtins() throws otherwise).
PluginDesc builtin_desc(const char* class_name) { return *abi_builtins().find(class_name); }

}  // namespace

void register_builtin_abi_connectors(PluginRegistry& r) {
  for (auto& d : abi_builtins().list()) r.add(std::move(d));
}

std::unique_ptr<Connector> make_file_stream_source() { return builtin_desc(kFileStreamSourceClass).factory(); }
std::unique_ptr<Connector> make_file_stream_sink() { return builtin_desc(kFileStreamSinkClass).factory(); }
std::unique_ptr<Connector> make_sequence_source() { return builtin_desc(kSequenceSourceClass).factory(); }
std::unique_ptr<Connector> make_mirror_source() { return builtin_desc(mirror::kMirrorSourceClass).factory(); }
std::unique_ptr<Connector> make_postgres_sink() { return builtin_desc(postgres::kPostgresSinkClass).factory(); }

ConfigDefs file_stream_source_config_defs() { return builtin_desc(kFileStreamSourceClass).config_defs; }
ConfigDefs file_stream_sink_config_defs() { return builtin_desc(kFileStreamSinkClass).config_defs; }
ConfigDefs sequence_source_config_defs() { return builtin_desc(kSequenceSourceClass).config_defs; }

void file_stream_sink_config_rule(const ConfigMap& config, ConfigErrors& errors) {
  builtin_desc(kFileStreamSinkClass).config_rule(config, errors);
}

}  // namespace kc::connectors
