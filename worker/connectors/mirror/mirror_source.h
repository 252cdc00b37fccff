#pragma once
// MirrorSourceConnector (org.apache.kafka.connect.mirror.MirrorSourceConnector,
// aliases MirrorSourceConnector / MirrorSource): MirrorMaker 2's source that
// copies topics of a source Kafka cluster into the worker's cluster. See
// README.md in this folder for its settings, offsets and policies.

#include <memory>

#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"

namespace kc::connectors::mirror {

/// Full class name (aliases MirrorSourceConnector / MirrorSource).
inline constexpr const char* kMirrorSourceClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector";

/// A new MirrorSourceConnector instance.
std::unique_ptr<Connector> make_mirror_source();

/// Its config keys (GET /connector-plugins/MirrorSource/config).
ConfigDefs mirror_source_config_defs();

/// Its cross-key check: runs the full parse (parse_mirror_config), so a bad
/// regex, policy or missing source setting fails validation with the
/// parser's message on the key it names.
void mirror_source_config_rule(const ConfigMap& config, ConfigErrors& errors);

}  // namespace kc::connectors::mirror
