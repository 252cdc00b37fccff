#include "worker/rest/basic_auth.h"
#include "common/strings.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "config/properties.h"

namespace kc::rest {

namespace {

/// Standard base64 (RFC 4648, with padding) through OpenSSL; nullopt when
/// malformed.
std::optional<std::string> base64_decode(std::string_view in) {
  std::string s = trim(in);
  if (s.empty() || s.size() % 4 != 0) return std::nullopt;
  std::string out(s.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(s.data()),
                          static_cast<int>(s.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t pad = 0;
  if (s.back() == '=') ++pad;
  if (s.size() >= 2 && s[s.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

/// Tokens of Java's JAAS ConfigFile syntax.
struct JaasLexer {
  std::string_view text;
  size_t pos = 0;

  /// Next token: a word, a quoted string (returned without quotes, `quoted`
  /// set), or one of { } ; =. nullopt at the end. Throws on an unterminated
  /// quote or comment.
  std::optional<std::string> next(bool* quoted = nullptr) {
    if (quoted) *quoted = false;
    for (;;) {
      while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
      if (text.substr(pos, 2) == "//" || (pos < text.size() && text[pos] == '#')) {
        while (pos < text.size() && text[pos] != '\n') ++pos;
        continue;
      }
      if (text.substr(pos, 2) == "/*") {
        auto end = text.find("*/", pos + 2);
        if (end == std::string_view::npos) throw std::runtime_error("unterminated /* comment");
        pos = end + 2;
        continue;
      }
      break;
    }
    if (pos >= text.size()) return std::nullopt;
    char c = text[pos];
    if (c == '{' || c == '}' || c == ';' || c == '=') {
      ++pos;
      return std::string(1, c);
    }
    if (c == '"' || c == '\'') {
      std::string out;
      ++pos;
      while (pos < text.size() && text[pos] != c) {
        if (text[pos] == '\\' && pos + 1 < text.size()) ++pos;
        out.push_back(text[pos++]);
      }
      if (pos >= text.size()) throw std::runtime_error("unterminated quoted value");
      ++pos;
      if (quoted) *quoted = true;
      return out;
    }
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) &&
           std::string_view("{};=\"'").find(text[pos]) == std::string_view::npos)
      ++pos;
    return std::string(text.substr(start, pos - start));
  }
};

}  // namespace

bool is_internal_request(std::string_view method, const std::vector<std::string>& segments) {
  if (segments.size() != 3 || segments[0] != "connectors") return false;
  return (method == "POST" && segments[2] == "tasks") || (method == "PUT" && segments[2] == "fence");
}

bool signature_replaces_basic_auth(std::string_view method, const std::vector<std::string>& segments,
                                   bool signed_request) {
  if (is_internal_request(method, segments)) return true;
  return signed_request && method == "POST" && segments.size() == 3 && segments[0] == "admin" &&
         segments[1] == "drain" && segments[2] == "members";
}

Result<std::string> jaas_credentials_file(std::string_view jaas_text, const std::string& source) {
  auto fail = [&](const std::string& why) { return Error{"java.security.auth.login.config", source + ": " + why}; };
  JaasLexer lex{jaas_text};
  try {
    for (;;) {
      auto name = lex.next();
      if (!name) break;
      if (lex.next() != std::optional<std::string>("{")) return fail("expected '{' after entry '" + *name + "'");
      std::optional<std::string> file;
      std::vector<std::string> modules;
      for (;;) {
        auto tok = lex.next();
        if (!tok) return fail("entry '" + *name + "' is not closed with '}'");
        if (*tok == "}") break;
        modules.push_back(*tok);
        auto flag = lex.next();
        if (!flag || *flag == ";" || *flag == "}") return fail("login module '" + *tok + "' has no control flag");
        for (;;) {
          auto key = lex.next();
          if (!key) return fail("login module '" + *tok + "' is not ended with ';'");
          if (*key == ";") break;
          if (lex.next() != std::optional<std::string>("=")) return fail("expected '=' after option '" + *key + "'");
          auto value = lex.next();
          if (!value) return fail("option '" + *key + "' has no value");
          if (*key == "file" && *name == kJaasLoginContext && *tok == kPropertyFileLoginModule) file = *value;
        }
      }
      auto semi = lex.next();
      if (semi && *semi != ";") return fail("expected ';' after the '}' of entry '" + *name + "'");
      if (*name != kJaasLoginContext) continue;
      if (modules.size() != 1 || modules.front() != kPropertyFileLoginModule) {
        return fail("the KafkaConnect entry must hold exactly one login module, " + std::string(kPropertyFileLoginModule) +
                    " (kconnectd supports no other)");
      }
      if (!file || file->empty()) return fail("the PropertyFileLoginModule of the KafkaConnect entry has no file= option");
      return *file;
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return fail("no KafkaConnect entry");
}

Result<BasicAuthenticator> BasicAuthenticator::from_file(const std::string& path, const std::string& key) {
  config::Properties props;
  try {
    props = config::load_properties_file(path);
  } catch (const std::exception& e) {
    return Error{key, std::string("cannot load the basic authentication credentials: ") + e.what()};
  }
  std::map<std::string, User> users;
  for (const auto& [name, value] : props) {
    User u;
    auto comma = value.find(',');
    u.password = comma == std::string::npos ? value : value.substr(0, comma);
    while (comma != std::string::npos) {
      auto next = value.find(',', comma + 1);
      std::string role = trim(std::string_view(value).substr(comma + 1, next == std::string::npos ? std::string::npos
                                                                                                : next - comma - 1));
      if (!role.empty()) u.roles.push_back(std::move(role));
      comma = next;
    }
    users.emplace(name, std::move(u));
  }
  return BasicAuthenticator(std::move(users), path);
}

bool BasicAuthenticator::authenticate(std::string_view authorization) const {
  if (users_.empty()) return true;  // Connect: an empty credentials file permits every request
  auto space = authorization.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  if (!ascii_iequals(authorization.substr(0, space), "basic")) return false;
  auto decoded = base64_decode(authorization.substr(space + 1));
  if (!decoded) return false;
  auto colon = decoded->find(':');
  if (colon == std::string::npos || colon == 0) return false;
  auto it = users_.find(decoded->substr(0, colon));
  if (it == users_.end()) return false;
  const std::string given = decoded->substr(colon + 1);
  const std::string& want = it->second.password;
  return given.size() == want.size() && CRYPTO_memcmp(given.data(), want.data(), want.size()) == 0;
}

}  // namespace kc::rest
