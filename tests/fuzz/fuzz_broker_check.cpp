// libFuzzer target: the broker check's classifier (worker/storage/
// broker_check.h) on an arbitrary BrokerObservation, fed the way a running
// client feeds it: librdkafka's reports and topic errors go through
// ClientErrorObserver (which scrubs the client's secret values out of each
// text); the rest of the observation (the client error, scrubbed as
// make_client() does; the X.509 result; metadata and group errors) is set
// directly; then classify_broker_check().
// Properties: never a crash or an exception; a verdict that is not Ok has a
// non-empty message; `fatal` is false exactly for Ok, Unreachable and
// TimedOut; the observer's fatal() agrees with fails_running_client(); and
// no message ever holds the configured password or sasl.jaas.config (both
// carry a \x01 byte that the fuzzed texts never contain, so any \x01 in a
// message is a leaked secret).
//
// Input: byte 0 % 5 security.protocol, byte 1 % 5 sasl.mechanism, byte 2
// flags (1 client error, 2 X.509 error, 4 GROUP_AUTHORIZATION_FAILED, 8
// metadata NO_ERROR, 16 metadata error from byte 3), byte 3 a metadata
// error code; then '\n'-separated records, each "<kind><code byte><text>":
// kind 'e' event (code - 200, librdkafka's local codes included), 't'
// topic error (the text is the topic), 'x' X.509 error (OpenSSL code),
// 'c' client error (text "field\ttext"), 'f' a TLS file, 'g' group.id,
// 'b' bootstrap.servers. In texts, byte 0x02 + k inserts librdkafka phrase
// k; in event and client-error texts, byte 0x03 inserts the password and
// 0x04 the sasl.jaas.config value.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "common/secrets.h"
#include "tests/fuzz/fuzz_input.h"
#include "worker/storage/broker_check.h"

namespace {

using kc::storage::BrokerCheckCause;

const std::string kPassword = std::string("Pa55-\x01-hunter2");
const std::string kJaas = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"connect\" "
                          "password=\"" + kPassword + "\";";

// Fragments of librdkafka 2.0.2's texts the classifier looks for.
constexpr std::array<std::string_view, 24> kPhrases{
    "sasl_ssl://localhost:9093/bootstrap: ",
    "SSL handshake failed: ",
    "Disconnected: connecting to a PLAINTEXT broker listener?",
    "might be caused by incorrect security.protocol configuration (connecting to a SSL listener?)",
    "Unsupported SASL mechanism: broker's supported mechanisms: ",
    "SASL authentication error: Authentication failed during authentication due to invalid credentials",
    " (after 12ms in state UP)",
    "Disconnected",
    "Invalid response size 352518912",
    "[thrd:sasl_ssl://localhost:9093/bootstrap]: ",
    "error:0A000086:SSL routines::certificate verify failed",
    "certificate verify failed",
    "Connect to ipv4#127.0.0.1:9092 failed: Connection refused",
    "Failed to resolve 'nowhere.invalid:9092'",
    "SSL connection closed by peer",
    "SASL PLAIN mechanism not supported by broker",
    "Disconnected while requesting Metadata",
    "unexpected eof while reading",
    "enabled mechanisms: ",
    " (after ",
    "://",
    "/",
    ": ",
    "tlsv13 alert certificate required",
};

constexpr std::array<std::string_view, 5> kProtocols{"", "PLAINTEXT", "ssl", "SASL_PLAINTEXT", "SASL_SSL"};
constexpr std::array<std::string_view, 5> kMechanisms{"", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI"};
constexpr std::array<std::string_view, 5> kFileKeys{"ssl.ca.location", "ssl.certificate.location", "ssl.key.location",
                                                    "ssl.keystore.location", "ssl.crl.location"};

/// The record's text with the phrase markers expanded, and the secret
/// markers too when `secrets` (librdkafka's texts; not the settings, where
/// an operator's own value is shown as given); a raw \x01 becomes '?', so
/// only the secrets carry one.
std::string expand(std::string_view in, bool secrets) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\x02' && i + 1 < in.size()) {
      out += kPhrases[static_cast<unsigned char>(in[++i]) % kPhrases.size()];
    } else if (c == '\x03' && secrets) {
      out += kPassword;
    } else if (c == '\x04' && secrets) {
      out += kJaas;
    } else {
      out += c == '\x01' ? '?' : c;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  kc::storage::ClientProps props{{"security.protocol", std::string(kProtocols[data[0] % kProtocols.size()])},
                                 {"sasl.mechanism", std::string(kMechanisms[data[1] % kMechanisms.size()])},
                                 {"sasl.username", "connect"},
                                 {"sasl.password", kPassword},
                                 {"sasl.jaas.config", kJaas}};
  const uint8_t flags = data[2];
  std::string_view in = kc::fuzz::as_text(data + 4, size - 4);

  // First pass: the settings (they fix the observer's base).
  std::string group_id;
  std::optional<std::pair<std::string, std::string>> client_error;
  int x509 = 0;
  std::string x509_text;
  std::vector<std::pair<char, std::pair<int, std::string>>> records;
  while (!in.empty()) {
    const auto nl = in.find('\n');
    std::string_view line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);
    if (line.size() < 2) continue;
    const char kind = line[0];
    const int code = static_cast<unsigned char>(line[1]);
    std::string text = expand(line.substr(2), kind == 'e' || kind == 'c');
    switch (kind) {
      case 'f': props[std::string(kFileKeys[code % kFileKeys.size()])] = text; break;
      case 'g': group_id = text; break;
      case 'b': props["bootstrap.servers"] = text; break;
      case 'c': {
        // make_client() scrubs the client's secret values out of its error
        // texts (secrets::scrub), as done here.
        text = kc::secrets::scrub(text, kc::secrets::secret_values(props));
        const auto tab = text.find('\t');
        if (flags & 1)
          client_error = std::make_pair(text.substr(0, tab), tab == std::string::npos ? "" : text.substr(tab + 1));
        break;
      }
      case 'x':
        if (flags & 2) {
          x509 = code + 1;
          x509_text = text;
        }
        break;
      default: records.push_back({kind, {code, std::move(text)}});
    }
  }
  kc::storage::ClientErrorObserver observer(props, group_id);
  for (const auto& [kind, rec] : records) {
    if (kind == 'e') observer.record(static_cast<rd_kafka_resp_err_t>(rec.first - 200), rec.second.c_str());
    else if (kind == 't') observer.record_topic_error(rec.second, static_cast<rd_kafka_resp_err_t>(rec.first));
  }

  // The running client's view, as a task sees it.
  const auto running = observer.fatal();
  auto obs = observer.observation();
  const auto plain = kc::storage::classify_broker_check(obs);
  KC_FUZZ_CHECK(running.has_value() == kc::storage::fails_running_client(plain.cause));
  if (running) KC_FUZZ_CHECK(running->message == plain.message);

  // The startup check's view: everything else set too.
  obs.client_error = client_error;
  obs.x509_error = x509;
  obs.x509_text = x509_text;
  obs.x509_broker = x509 ? "localhost:9093" : "";
  obs.x509_depth = x509 ? flags >> 5 : 0;
  if (flags & 4) obs.group_error = RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;
  if (flags & 8) obs.metadata_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  else if (flags & 16) obs.metadata_error = static_cast<rd_kafka_resp_err_t>(static_cast<int>(data[3]) - 200);
  obs.elapsed_ms = data[3] * 100;

  for (const auto& v : {plain, kc::storage::classify_broker_check(obs)}) {
    const bool transient = v.cause == BrokerCheckCause::Ok || v.cause == BrokerCheckCause::Unreachable ||
                           v.cause == BrokerCheckCause::TimedOut;
    KC_FUZZ_CHECK(v.fatal == !transient);
    if (!v.ok()) KC_FUZZ_CHECK(!v.message.empty());
    KC_FUZZ_CHECK(v.message.find('\x01') == std::string::npos);  // no password, no JAAS text
    KC_FUZZ_CHECK(!kc::storage::broker_check_cause_name(v.cause).empty());
  }
  return 0;
}
