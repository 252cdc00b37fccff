// sasl.jaas.config parsing and the SASL client settings. See jaas.h.
#include "config/jaas.h"
#include "common/strings.h"

#include <cctype>

namespace kc::config {
namespace {

constexpr const char* kKey = "sasl.jaas.config";

Error jaas_error(std::string message) { return Error{kKey, std::move(message)}; }

std::string at(size_t pos) { return " at position " + std::to_string(pos); }

// Word characters of Kafka's JaasConfig tokenizer: letters, digits, '.', and
// the extra '-', '_', '$' it declares.
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_' || c == '$';
}

/// A cursor over the JAAS text that skips blanks and comments.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : t_(text) {}

  size_t pos() const { return p_; }

  /// Skips whitespace and comments; false (with `err`) on an unterminated /* comment.
  bool skip(Error& err) {
    for (;;) {
      while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_])) != 0) ++p_;
      if (t_.substr(p_, 2) == "//") {
        while (p_ < t_.size() && t_[p_] != '\n') ++p_;
        continue;
      }
      if (t_.substr(p_, 2) == "/*") {
        const size_t end = t_.find("*/", p_ + 2);
        if (end == std::string_view::npos) {
          err = jaas_error("unterminated comment" + at(p_));
          return false;
        }
        p_ = end + 2;
        continue;
      }
      return true;
    }
  }

  bool at_end() const { return p_ >= t_.size(); }
  char peek() const { return t_[p_]; }
  void advance() { ++p_; }

  /// A bare word, or "" when the next character does not start one.
  std::string word() {
    const size_t start = p_;
    while (p_ < t_.size() && word_char(t_[p_])) ++p_;
    return std::string(t_.substr(start, p_ - start));
  }

  /// A double-quoted value with backslash escapes; the cursor is on '"'.
  bool quoted(std::string& out, Error& err) {
    const size_t start = p_;
    ++p_;
    out.clear();
    while (p_ < t_.size()) {
      const char c = t_[p_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= t_.size()) break;
      const char e = t_[p_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        default: out += e; break;  // \" \\ and any other escaped character stand for themselves
      }
    }
    err = jaas_error("unterminated quoted value starting" + at(start));
    return false;
  }

 private:
  std::string_view t_;
  size_t p_ = 0;
};

std::optional<JaasControlFlag> parse_flag(std::string_view word) {
  const std::string u = ascii_upper(word);
  if (u == "REQUIRED") return JaasControlFlag::Required;
  if (u == "REQUISITE") return JaasControlFlag::Requisite;
  if (u == "SUFFICIENT") return JaasControlFlag::Sufficient;
  if (u == "OPTIONAL") return JaasControlFlag::Optional;
  return std::nullopt;
}

std::string value_of(const std::map<std::string, std::string>& props, const std::string& key) {
  auto it = props.find(key);
  return it == props.end() ? std::string() : it->second;
}

}  // namespace

Result<std::vector<JaasLoginModule>> parse_jaas_config(std::string_view text) {
  Lexer lx(text);
  Error err;
  std::vector<JaasLoginModule> out;
  for (;;) {
    if (!lx.skip(err)) return err;
    if (lx.at_end()) break;
    JaasLoginModule m;
    const size_t module_pos = lx.pos();
    m.login_module = lx.word();
    if (m.login_module.empty()) {
      return jaas_error(std::string("expected a login module class name, found '") + lx.peek() + "'" +
                        at(module_pos));
    }
    if (!lx.skip(err)) return err;
    const size_t flag_pos = lx.pos();
    const std::string flag = lx.word();
    if (flag.empty()) {
      return jaas_error("expected a control flag (required, requisite, sufficient or optional) after " +
                        m.login_module + at(flag_pos));
    }
    auto f = parse_flag(flag);
    if (!f) return jaas_error("invalid control flag '" + flag + "'" + at(flag_pos));
    m.flag = *f;
    // Options up to the terminating ';'.
    for (;;) {
      if (!lx.skip(err)) return err;
      if (lx.at_end()) return jaas_error("JAAS config entry not terminated by semi-colon" + at(lx.pos()));
      if (lx.peek() == ';') {
        lx.advance();
        break;
      }
      const size_t key_pos = lx.pos();
      const std::string key = lx.word();
      if (key.empty()) {
        return jaas_error(std::string("expected an option name or ';', found '") + lx.peek() + "'" + at(key_pos));
      }
      if (!lx.skip(err)) return err;
      if (lx.at_end() || lx.peek() != '=') {
        return jaas_error("expected '=' after option '" + key + "'" + at(lx.pos()));
      }
      lx.advance();
      if (!lx.skip(err)) return err;
      std::string value;
      if (!lx.at_end() && lx.peek() == '"') {
        if (!lx.quoted(value, err)) return err;
      } else {
        const size_t value_pos = lx.pos();
        value = lx.word();
        if (value.empty()) return jaas_error("expected a value for option '" + key + "'" + at(value_pos));
      }
      m.options[key] = std::move(value);
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) return jaas_error("no login module (expected '<LoginModule class> required key=\"value\" ...;')");
  return out;
}

bool is_sasl_protocol(std::string_view security_protocol) {
  const std::string u = ascii_upper(security_protocol);
  return u == "SASL_PLAINTEXT" || u == "SASL_SSL";
}

Result<SaslClientCredentials> jaas_login(std::string_view jaas) {
  auto modules = parse_jaas_config(jaas);
  if (!modules) return modules.error();
  if (modules->size() != 1) {
    return jaas_error("contains " + std::to_string(modules->size()) + " login modules, should be 1 module");
  }
  const JaasLoginModule& m = modules->front();
  if (m.login_module != kPlainLoginModule && m.login_module != kScramLoginModule) {
    return jaas_error("login module " + m.login_module + " is not supported by kconnectd's group client; use " +
                      kPlainLoginModule + " or " + kScramLoginModule);
  }
  for (const char* required : {"username", "password"}) {
    if (!m.options.count(required)) return jaas_error(std::string("option '") + required + "' is missing");
  }
  SaslClientCredentials c;
  c.username = m.options.at("username");
  c.password = m.options.at("password");
  return c;
}

Status translate_jaas_config(std::map<std::string, std::string>& props) {
  auto it = props.find(kKey);
  if (it == props.end()) return ok_status();
  auto login = jaas_login(trim(it->second));
  if (!login) return login.error();
  props.erase(it);
  props["sasl.username"] = std::move(login->username);
  props["sasl.password"] = std::move(login->password);
  return ok_status();
}

Result<std::optional<SaslClientCredentials>> sasl_credentials(const std::map<std::string, std::string>& props) {
  const std::string protocol = ascii_upper(trim(value_of(props, "security.protocol")));
  if (!is_sasl_protocol(protocol)) return std::optional<SaslClientCredentials>{};
  SaslClientCredentials c;
  c.mechanism = trim(value_of(props, "sasl.mechanism"));
  if (c.mechanism.empty()) c.mechanism = trim(value_of(props, "sasl.mechanisms"));  // librdkafka's spelling
  if (c.mechanism.empty()) c.mechanism = "GSSAPI";                            // Kafka's default
  if (c.mechanism != "PLAIN" && c.mechanism != "SCRAM-SHA-256" && c.mechanism != "SCRAM-SHA-512") {
    return Error{"", "sasl.mechanism " + c.mechanism +
                         " is not supported by kconnectd's group client; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"};
  }
  const std::string jaas = trim(value_of(props, kKey));
  if (!jaas.empty()) {
    auto login = jaas_login(jaas);
    if (!login) return login.error();
    c.username = std::move(login->username);
    c.password = std::move(login->password);
    return std::optional<SaslClientCredentials>{std::move(c)};
  }
  if (!props.count("sasl.username") || !props.count("sasl.password")) {
    return Error{"", "security.protocol " + protocol + " needs sasl.jaas.config or sasl.username and sasl.password"};
  }
  c.username = value_of(props, "sasl.username");
  c.password = value_of(props, "sasl.password");
  return std::optional<SaslClientCredentials>{std::move(c)};
}

}  // namespace kc::config
