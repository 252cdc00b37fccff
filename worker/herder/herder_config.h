#pragma once
// Builds a HerderConfig from the validated WorkerConfig (config/), so the
// herder and `kconnectd run` share one mapping of Connect's DistributedConfig
// keys to herder settings.

#include <optional>
#include <string>

#include "config/security_config.h"
#include "config/worker_config.h"
#include "protocol/kafka/tls_options.h"
#include "worker/herder/distributed_herder.h"

namespace kc::herder {

/// Maps every key the herder uses (group, timeouts, storage topics,
/// converters, client pass-through with Kafka's ssl.* names translated to
/// librdkafka's, the group client's TLS, advertised URL and worker id per
/// reference 4.1) from `wc`. `default_host` is the host used when neither
/// rest.advertised.host.name nor the listener names one (tests pass
/// "localhost"). Throws config::ConfigError for a `connect.protocol` the
/// codec does not know (WorkerConfig already restricts it).
HerderConfig herder_config_from(const config::WorkerConfig& wc,
                                const std::string& default_host = config::local_hostname());

}  // namespace kc::herder
