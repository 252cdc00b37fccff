#pragma once
// The one place that decides which config keys hold secrets and how they
// are shown: Kafka's Password type prints as "[hidden]" (Password.HIDDEN),
// so PASSWORD-typed keys never reach logs, error texts, /metrics or the
// validate output. Callers with more knowledge (a connector's ConfigDef, a
// config provider's resolved keys) pass it in as a predicate; everything
// else goes through is_secret_key(), so new code gets the rule for free.
//
// Header-only and pure (no I/O, no globals): callable from any thread and
// from every layer (config/, protocol/, worker/*).

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kc::secrets {

/// What a secret value is shown as: Kafka's Password.toString() ("[hidden]").
inline constexpr std::string_view kHidden = "[hidden]";

/// Values shorter than this are not searched for inside free text by
/// scrub(): hiding every "a" of a message would make it unreadable, and a
/// 1..3 character secret protects nothing anyway.
inline constexpr std::size_t kMinScrubLength = 4;

namespace detail {

/// Kafka and librdkafka client keys of type PASSWORD (SslConfigs,
/// SaslConfigs, librdkafka's sensitive properties), plus the Schema
/// Registry converters' credentials.
inline constexpr std::array<std::string_view, 13> kPasswordKeys{
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.certificates",
    "ssl.key.pem",
    "sasl.jaas.config",
    "sasl.password",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "basic.auth.user.info",
};

/// Last dotted segments that mark a secret whatever the prefix
/// ("connection.password", "aws.secret", "key.passphrase").
inline constexpr std::array<std::string_view, 4> kSecretSegments{"password", "passwd", "passphrase", "secret"};

inline std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace detail

/// True when `key` names a secret by itself: one of Kafka's/librdkafka's
/// PASSWORD client keys (ssl.key.password, ssl.keystore.password,
/// ssl.truststore.password, sasl.jaas.config, sasl.password, ...) under any
/// prefix (producer., consumer., admin., producer.override.,
/// listeners.https., listener.name.<l>.<mechanism>., value.converter., ...),
/// or any key whose last dotted segment is password, passwd, passphrase or
/// secret (case-insensitive). Connector keys typed PASSWORD in a ConfigDef
/// are secret too, but only the ConfigDef knows them: see
/// connectors::is_secret_connector_key().
inline bool is_secret_key(std::string_view key) {
  const std::string k = detail::lower_ascii(key);
  const std::string_view kv(k);
  for (std::string_view p : detail::kPasswordKeys) {
    if (kv == p) return true;
    if (kv.size() > p.size() && kv.ends_with(p) && kv[kv.size() - p.size() - 1] == '.') return true;
  }
  const auto dot = kv.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? kv : kv.substr(dot + 1);
  return std::find(detail::kSecretSegments.begin(), detail::kSecretSegments.end(), last) !=
         detail::kSecretSegments.end();
}

/// Decides whether a key is secret; a caller's richer rule (ConfigDef types,
/// provider-resolved keys) on top of is_secret_key().
using SecretKeyPredicate = std::function<bool(std::string_view key)>;

/// `value` as it may be shown: kHidden when `key` is secret (by `secret`,
/// else by is_secret_key), else the value unchanged.
inline std::string redact(std::string_view key, std::string_view value, const SecretKeyPredicate& secret = {}) {
  const bool hide = secret ? secret(key) : is_secret_key(key);
  return hide ? std::string(kHidden) : std::string(value);
}

/// A copy of `config` with every secret key's value replaced by kHidden
/// (keys kept, so the reader still sees which settings are present).
template <typename Map>
Map redact_config(const Map& config, const SecretKeyPredicate& secret = {}) {
  Map out;
  for (const auto& [k, v] : config) out.emplace(k, redact(k, v, secret));
  return out;
}

/// The values of `config`'s secret keys, for scrub(): longest first, so a
/// secret that contains another is replaced whole; values shorter than
/// kMinScrubLength are left out.
template <typename Map>
std::vector<std::string> secret_values(const Map& config, const SecretKeyPredicate& secret = {}) {
  std::vector<std::string> out;
  for (const auto& [k, v] : config) {
    const bool hide = secret ? secret(k) : is_secret_key(k);
    if (hide && v.size() >= kMinScrubLength) out.emplace_back(v);
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// `text` (an error message or log line written by someone else, e.g.
/// librdkafka's rd_kafka_conf_set() errstr or a parser's message) with
/// every occurrence of each of `values` replaced by kHidden. Values shorter
/// than kMinScrubLength are ignored (see there).
inline std::string scrub(std::string_view text, const std::vector<std::string>& values) {
  std::string out(text);
  for (const auto& v : values) {
    if (v.size() < kMinScrubLength) continue;
    for (std::size_t pos = out.find(v); pos != std::string::npos; pos = out.find(v, pos + kHidden.size()))
      out.replace(pos, v.size(), kHidden);
  }
  return out;
}

/// Kafka's AbstractConfig.logAll() layout, redacted: "<title>:\n\tk = v\n..."
/// in key order, one line per key, secret values as kHidden. For the
/// startup dump of the worker's and each connector's config.
template <typename Map>
std::string describe_config(std::string_view title, const Map& config, const SecretKeyPredicate& secret = {}) {
  std::string out(title);
  out += ':';
  for (const auto& [k, v] : config) {
    out += "\n\t";
    out += k;
    out += " = ";
    out += redact(k, v, secret);
  }
  return out;
}

}  // namespace kc::secrets
