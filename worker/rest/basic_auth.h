#pragma once
// HTTP basic authentication for the REST API, as Kafka Connect's
// BasicAuthSecurityRestExtension (JaasBasicAuthFilter + PropertyFileLoginModule):
// users and passwords come from a credentials file of lines
// `user: password[,role...]` (Java properties syntax); a request whose
// `Authorization: Basic base64(user:password)` does not match gets 401 with
// Connect's body "User cannot access the resource." and no WWW-Authenticate
// header (Connect sends none). The internal requests POST
// /connectors/{c}/tasks and PUT /connectors/{c}/fence are exempt: KIP-507
// signatures authenticate them (is_internal_request()); so is our signed
// POST /admin/drain/members (signature_replaces_basic_auth()).
//
// Two ways to name the file:
//   - Connect's: rest.extension.classes lists
//     org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
//     and the JAAS file (java.security.auth.login.config) has a `KafkaConnect`
//     entry with PropertyFileLoginModule and `file="..."`;
//   - ours: the worker key rest.basic.auth.credentials.file.
//
// Immutable after construction; authenticate() is safe from any thread.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kc::rest {

/// Connect's extension class name that turns basic authentication on.
inline constexpr const char* kBasicAuthExtensionClass =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
/// Connect's login module for a credentials file.
inline constexpr const char* kPropertyFileLoginModule =
    "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule";
/// The JAAS entry (login context) Connect's filter logs in with.
inline constexpr const char* kJaasLoginContext = "KafkaConnect";
/// Body of Connect's 401 answer.
inline constexpr const char* kUnauthorizedMessage = "User cannot access the resource.";

/// True for the requests workers send each other that Connect exempts from
/// basic authentication: POST /connectors/{c}/tasks and PUT
/// /connectors/{c}/fence (`segments` = decoded path segments, `method` =
/// "POST"/"PUT"...).
bool is_internal_request(std::string_view method, const std::vector<std::string>& segments);

/// True when basic authentication is skipped for this request because its
/// KIP-507 signature authenticates it instead: Connect's internal requests
/// (is_internal_request), and kconnectd's worker-to-leader POST
/// /admin/drain/members when it carries a signature header (`signed_request`);
/// the herder then verifies the signature (400/403/503, as for
/// /connectors/{c}/tasks). An unsigned drain request needs basic
/// credentials like any operator request (401).
bool signature_replaces_basic_auth(std::string_view method, const std::vector<std::string>& segments,
                                   bool signed_request);

/// The `file=` option of the PropertyFileLoginModule in the `KafkaConnect`
/// entry of JAAS configuration text (Java's ConfigFile syntax: entries
/// `Name { module flag key=value ...; };`, // and /* */ comments, quoted
/// values). Errors (with `source` in the message): no KafkaConnect entry, a
/// module other than PropertyFileLoginModule, no `file` option, bad syntax.
Result<std::string> jaas_credentials_file(std::string_view jaas_text, const std::string& source);

/// Users loaded from a credentials file; checks Authorization headers.
class BasicAuthenticator {
 public:
  /// One user's entry: the password (text before the first ',') and roles.
  struct User {
    std::string password;
    std::vector<std::string> roles;  ///< kept for operators; not used for access decisions
  };

  /// Loads `path` (Java properties: `user: password[,role...]` or
  /// `user=password`). `key` names the setting the path came from, for
  /// errors: unreadable file, bad syntax. An empty file admits every
  /// request, as Connect's PropertyFileLoginModule does (is_open()).
  static Result<BasicAuthenticator> from_file(const std::string& path, const std::string& key);
  /// From already-parsed users (tests).
  explicit BasicAuthenticator(std::map<std::string, User> users, std::string source = "")
      : users_(std::move(users)), source_(std::move(source)) {}

  /// True when `authorization` (the header value, "" if absent) is "Basic "
  /// (scheme case-insensitive) + base64("user:password") of a known user
  /// with that password (constant-time compare), or when no users exist.
  [[nodiscard]] bool authenticate(std::string_view authorization) const;
  /// True when the file had no users: every request passes (Connect's rule).
  [[nodiscard]] bool is_open() const { return users_.empty(); }
  /// Number of users.
  [[nodiscard]] size_t size() const { return users_.size(); }
  /// Where the users came from (file path), for logs.
  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  std::map<std::string, User> users_;
  std::string source_;
};

}  // namespace kc::rest
