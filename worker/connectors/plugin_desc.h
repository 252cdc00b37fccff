#pragma once
// What a connector plugin is, for whoever offers one (the built-ins, the
// PostgreSQL and mirror rooms, the C ABI host): its class, type, version,
// factory and config definitions. The registry that holds them is in
// worker/plugins.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"

namespace kc::connectors {

/// The version the built-in plugins (connectors, converters, transforms)
/// report in GET /connector-plugins: the daemon's.
inline constexpr const char* kBuiltinPluginVersion = "0.1.0";

/// One registered connector plugin.
struct PluginDesc {
  std::string class_name;  ///< e.g. "org.apache.kafka.connect.file.FileStreamSourceConnector"
  ConnectorType type = ConnectorType::Source;
  std::string version = kBuiltinPluginVersion;
  std::function<std::unique_ptr<Connector>()> factory;
  ConfigDefs config_defs;  ///< the plugin's own keys (GET /connector-plugins/{p}/config)
  ConfigRule config_rule;  ///< cross-key rule, may be empty
  std::vector<std::string> aliases;  ///< extra names (a plugin's declared aliases)
  std::string location;    ///< the .so it came from; empty for built-ins
};

}  // namespace kc::connectors
