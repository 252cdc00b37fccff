#pragma once
// MirrorSourceConnector (org.apache.kafka.connect.mirror.MirrorSourceConnector,
// aliases MirrorSourceConnector / MirrorSource): MirrorMaker 2's source that
// copies topics of a source Kafka cluster into the worker's cluster. See
// README.md in this folder for its settings, offsets and policies.
//
// Written against the plugin contract alone (include/kconnectd/plugin.hpp),
// as an out-of-tree plugin is: it reaches the source and target clusters
// with its own librdkafka clients, and Connect's offsets through the task
// context. worker/plugins declares it with the other built-ins.

#include <string>

#include <kconnectd/plugin.hpp>

namespace kc::connectors::mirror {

/// Full class name (aliases MirrorSourceConnector / MirrorSource).
inline constexpr const char* kMirrorSourceClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector";

/// Declares MirrorSourceConnector, its task and its config keys (GET
/// /connector-plugins/MirrorSource/config) through `reg`, reporting
/// `version`. Its Connector.validate runs the full parse
/// (parse_mirror_config), so a bad regex, policy or missing source setting
/// fails validation with the parser's message on the key it names.
void declare_mirror_source(kconnectd::Registrar& reg, const std::string& version);

}  // namespace kc::connectors::mirror
