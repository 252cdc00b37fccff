#pragma once
// Worker properties from the environment, in the convention of the Kafka
// Connect container images (confluentinc/cp-kafka-connect, whose `configure`
// step renders every CONNECT_* variable into the worker properties file).
//
// Rule, applied to every variable whose name starts with exactly "CONNECT_":
//   1. drop the "CONNECT_" prefix and lower-case the rest (ASCII only);
//   2. every "_" becomes ".";
//   3. then every "..." (it was "___") becomes "-", scanning left to right;
//   4. then every ".." (it was "__") becomes "_", scanning left to right.
// So CONNECT_BOOTSTRAP_SERVERS -> bootstrap.servers, CONNECT_GROUP_ID ->
// group.id, CONNECT_LISTENER_NAME_SASL__SSL_X -> listener.name.sasl_ssl.x and
// CONNECT_A___B -> a-b. These are the steps of `env_to_props` in
// confluent-docker-utils (dub.py), which is what the images actually run; the
// Confluent configuration reference states the "__" and "___" mappings the
// other way round (confluentinc/kafka-images#358), and the code is what we
// match. The deploy/README.md documents the rule for operators.
//
// Pure functions of their input: nothing here reads the process environment
// itself, so callers pass `environ` (or a test array) explicitly.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::config {

/// The prefix that marks an environment variable as a worker property.
inline constexpr std::string_view kEnvPrefix = "CONNECT_";

/// Maps one environment variable name to a worker property name, following
/// the rule at the top of this file.
///
/// Returns std::nullopt when `env_name` is not a worker property override:
///   - it does not start with exactly "CONNECT_" (case-sensitive, as in the
///     images: "connect_group_id" is ignored);
///   - nothing follows the prefix ("CONNECT_");
///   - it is one of the logging variables the images route to log4j instead of
///     the worker properties (names starting with "CONNECT_LOG4J_").
/// Never throws (apart from std::bad_alloc).
[[nodiscard]] std::optional<std::string> env_name_to_property(std::string_view env_name);

/// Every worker property override found in `envp`, a null-terminated array of
/// "NAME=value" strings as passed to main() or found in `environ`.
///
/// Returns (property name, value) pairs in the order of `envp`. The value is
/// everything after the first "=", verbatim: it may be empty (an empty value
/// still overrides, as in the images), and no properties-file escape
/// processing is applied. Entries without "=" and names rejected by
/// env_name_to_property() are skipped. Two variables that map to the same
/// property (e.g. "CONNECT_GROUP_ID" and "CONNECT_group_id") both appear; the
/// later one wins in apply_env_overrides(). A null `envp` yields an empty
/// vector. Never throws (apart from std::bad_alloc).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> env_overrides(char** envp);

/// Applies env_overrides(envp) to `props` (parsed from the worker properties
/// file): an environment value replaces the file's value for the same key,
/// and a key that is only in the environment is added. Other keys are left
/// untouched. Returns the property names that were set, in application order
/// (useful for logging which file settings the environment replaced; values
/// are not returned because they may be secrets such as sasl.jaas.config).
/// A null `envp` changes nothing. Never throws (apart from std::bad_alloc).
std::vector<std::string> apply_env_overrides(std::map<std::string, std::string>& props, char** envp);

}  // namespace kc::config
