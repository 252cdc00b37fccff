#pragma once
// A scripted broker for the SASL tests, built on FakeBroker
// (tests/integration/protocol/connection_test_util.h): it advertises
// SaslHandshake v0-1 and SaslAuthenticate v0-2, runs the server side of PLAIN
// (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802: known salt and iterations, the
// client proof checked, the server signature sent), and then plays the
// one-member group coordinator of scripted_coordinator.h. It records, per
// connection, the order of the requests, so tests can check that nothing else
// went out before SASL ended.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "protocol/kafka/sasl.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/scripted_coordinator.h"

namespace kc::test {

/// `Broker` is the transport: FakeBroker (plaintext) or TlsBroker
/// (tests/integration/protocol/tls_test_broker.h, for SASL_SSL); the
/// constructor arguments go to it.
template <typename Broker = FakeBroker>
class BasicSaslBroker {
 public:
  template <typename... Args>
  explicit BasicSaslBroker(Args&&... args) : broker(std::forward<Args>(args)...) {
    broker.api_versions.push_back({17, 0, 1});
    broker.api_versions.push_back({36, 0, 2});
    broker.on_request = [this](FakeRequest& r) { handle(r); };
    group.member_id_prefix = "member-";
  }

  uint16_t port() const { return broker.port(); }
  /// Host named in FindCoordinator answers (a TLS test with host name
  /// verification sets "localhost").
  std::string host = "127.0.0.1";
  std::string address() const { return host + ":" + std::to_string(port()); }

  /// Mechanisms the broker enables (sasl.enabled.mechanisms).
  std::vector<std::string> enabled = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};
  std::string username = "connect";
  std::string password = "connect-secret";
  /// SCRAM credential parameters (what kafka-configs would have stored).
  kafka::Bytes salt = {'k', 'c', '-', 's', 'a', 'l', 't', '-', '1', '2', '3', '4'};
  int iterations = 4096;
  /// Close the connection when the first SaslAuthenticate arrives.
  bool close_on_authenticate = false;

  // ---- what happened
  /// Per connection (FakeSession*), the API keys received, in order
  /// (ApiVersions is answered by FakeBroker and not listed).
  std::map<const BrokerSession*, std::vector<kafka::ApiKey>> order;
  /// Connections that completed SASL.
  std::set<const BrokerSession*> authenticated;
  /// Group requests that arrived on a connection before SASL completed.
  int unauthenticated_requests = 0;
  /// Mechanisms asked for in SaslHandshake, in order.
  std::vector<std::string> handshakes;
  int failed_authentications = 0;
  /// The group side, reached once SASL completed (its host and port follow
  /// the broker's).
  ScriptedCoordinator group;

  Broker broker;

 private:
  struct ScramState {
    kafka::SaslMechanism mechanism = kafka::SaslMechanism::ScramSha256;
    std::string client_first_bare;
    std::string server_first;
    std::string nonce;
    bool first_done = false;
  };
  std::map<const BrokerSession*, std::string> mech_;
  std::map<const BrokerSession*, ScramState> scram_;

  static std::string text(const kafka::Bytes& b) { return std::string(b.begin(), b.end()); }
  static kafka::BytesView view(const std::string& s) {
    return kafka::BytesView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }

  void auth_reply(FakeRequest& req, int16_t code, std::optional<std::string> message, const std::string& token) {
    kafka::SaslAuthenticateResponse r;
    r.error_code = code;
    r.error_message = std::move(message);
    r.auth_bytes.assign(token.begin(), token.end());
    req.reply(r);
  }

  void auth_failed(FakeRequest& req, const std::string& mech) {
    ++failed_authentications;
    // Kafka's broker text (SaslServerAuthenticator) for bad credentials.
    auth_reply(req, static_cast<int16_t>(kafka::ErrorCode::SASL_AUTHENTICATION_FAILED),
               "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech,
               "");
  }

  void handle(FakeRequest& req) {
    const BrokerSession* s = req.session.get();
    const int16_t v = req.header.api_version;
    order[s].push_back(req.header.api_key);
    switch (req.header.api_key) {
      case kafka::ApiKey::SaslHandshake: {
        auto h = kafka::decode_SaslHandshakeRequest(req.body, v).value();
        handshakes.push_back(h.mechanism);
        kafka::SaslHandshakeResponse r;
        r.mechanisms = enabled;
        if (std::find(enabled.begin(), enabled.end(), h.mechanism) == enabled.end()) {
          r.error_code = static_cast<int16_t>(kafka::ErrorCode::UNSUPPORTED_SASL_MECHANISM);
        } else {
          mech_[s] = h.mechanism;
        }
        req.reply(r);
        return;
      }
      case kafka::ApiKey::SaslAuthenticate: {
        if (close_on_authenticate) {
          req.session->close();
          return;
        }
        auto a = kafka::decode_SaslAuthenticateRequest(req.body, v).value();
        const std::string mech = mech_[s];
        if (mech == "PLAIN") {
          const std::string expected = std::string(1, '\0') + username + std::string(1, '\0') + password;
          if (text(a.auth_bytes) != expected) return auth_failed(req, mech);
          authenticated.insert(s);
          return auth_reply(req, 0, std::nullopt, "");
        }
        return scram_step(req, s, mech, text(a.auth_bytes));
      }
      default:
        break;
    }
    if (!authenticated.count(s)) {
      ++unauthenticated_requests;
      req.session->close();
      return;
    }
    coordinator(req);
  }

  void scram_step(FakeRequest& req, const BrokerSession* s, const std::string& mech, const std::string& msg) {
    ScramState& st = scram_[s];
    st.mechanism = *kafka::parse_sasl_mechanism(mech);
    if (!st.first_done) {
      // client-first: "n,,n=<user>,r=<nonce>"
      if (msg.rfind("n,,", 0) != 0) return auth_failed(req, mech);
      st.client_first_bare = msg.substr(3);
      const auto r = st.client_first_bare.find(",r=");
      if (st.client_first_bare.rfind("n=", 0) != 0 || r == std::string::npos) return auth_failed(req, mech);
      const std::string user = st.client_first_bare.substr(2, r - 2);
      if (user != kafka::scram_escape_username(username)) return auth_failed(req, mech);
      st.nonce = st.client_first_bare.substr(r + 3) + "Srv0nce";
      st.server_first = "r=" + st.nonce + ",s=" + kafka::base64_encode(salt) + ",i=" + std::to_string(iterations);
      st.first_done = true;
      return auth_reply(req, 0, std::nullopt, st.server_first);
    }
    // client-final: "c=biws,r=<nonce>,p=<proof>"
    const auto p = msg.find(",p=");
    if (p == std::string::npos) return auth_failed(req, mech);
    const std::string without_proof = msg.substr(0, p);
    if (without_proof != "c=biws,r=" + st.nonce) return auth_failed(req, mech);
    auto proof = kafka::base64_decode(msg.substr(p + 3));
    const auto m = st.mechanism;
    const kafka::Bytes salted = kafka::scram_salted_password(m, password, salt, iterations);
    const kafka::Bytes stored = kafka::scram_hash(m, kafka::scram_hmac(m, salted, view("Client Key")));
    const std::string auth = st.client_first_bare + "," + st.server_first + "," + without_proof;
    const kafka::Bytes sig = kafka::scram_hmac(m, stored, view(auth));
    if (!proof || proof->size() != sig.size()) return auth_failed(req, mech);
    kafka::Bytes client_key = *proof;
    for (size_t i = 0; i < client_key.size(); ++i) client_key[i] ^= sig[i];
    if (kafka::scram_hash(m, client_key) != stored) return auth_failed(req, mech);
    authenticated.insert(s);
    const kafka::Bytes server_sig = kafka::scram_hmac(m, kafka::scram_hmac(m, salted, view("Server Key")), view(auth));
    auth_reply(req, 0, std::nullopt, "v=" + kafka::base64_encode(server_sig));
  }

  void coordinator(FakeRequest& req) {
    group.host = host;
    group.port = port();
    group.handle(req);
  }
};

/// The plaintext SASL broker.
using SaslScriptedBroker = BasicSaslBroker<FakeBroker>;

}  // namespace kc::test
