// PLAIN (RFC 4616) and SCRAM (RFC 5802 / RFC 7677) client mechanisms. The
// SCRAM-SHA-256 exchange is RFC 7677 section 3's example, byte for byte;
// SHA-512 has no RFC vector, so a server side computed here from the same
// primitives must accept the client's proof and the client must accept the
// server's signature (and reject a wrong one).

#include <catch2/catch.hpp>

#include <string>

#include "protocol/kafka/sasl.h"

using namespace kc::kafka;  // NOLINT

namespace {

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string s(const Bytes& v) { return std::string(v.begin(), v.end()); }
BytesView v(const std::string& text) {
  return BytesView(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

// RFC 7677 section 3.
const std::string kNonce = "rOprNGfwEbeRWgbNEkqO";
const std::string kServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
const std::string kClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
const std::string kServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

}  // namespace

TEST_CASE("mechanism names", "[sasl][scram]") {
  CHECK(parse_sasl_mechanism("PLAIN") == SaslMechanism::Plain);
  CHECK(parse_sasl_mechanism("SCRAM-SHA-256") == SaslMechanism::ScramSha256);
  CHECK(parse_sasl_mechanism("SCRAM-SHA-512") == SaslMechanism::ScramSha512);
  CHECK_FALSE(parse_sasl_mechanism("GSSAPI"));
  CHECK_FALSE(parse_sasl_mechanism("scram-sha-256"));
  CHECK(std::string(sasl_mechanism_name(SaslMechanism::ScramSha512)) == "SCRAM-SHA-512");
}

TEST_CASE("base64 and username escaping", "[sasl][scram]") {
  CHECK(base64_encode(v("n,,")) == "biws");
  CHECK(base64_encode(v("ab")) == "YWI=");
  CHECK(s(base64_decode("YWI=").value()) == "ab");
  CHECK(s(base64_decode("YQ==").value()) == "a");
  CHECK(base64_decode("").value().empty());
  CHECK_FALSE(base64_decode("YWI"));
  CHECK_FALSE(base64_decode("Y=I="));
  CHECK_FALSE(base64_decode("YW I"));
  CHECK(scram_escape_username("a=b,c") == "a=3Db=2Cc");
}

TEST_CASE("SCRAM-SHA-256 reproduces RFC 7677's example exactly", "[sasl][scram]") {
  ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
  CHECK(s(c.initial()) == "n,,n=user,r=" + kNonce);
  auto final_msg = c.step(v(kServerFirst));
  REQUIRE(final_msg.ok());
  REQUIRE(final_msg->has_value());
  CHECK(s(**final_msg) == kClientFinal);
  CHECK_FALSE(c.complete());
  auto done = c.step(v(kServerFinal));
  REQUIRE(done.ok());
  CHECK_FALSE(done->has_value());
  CHECK(c.complete());
}

TEST_CASE("SCRAM rejects a wrong server signature, e= errors and bad server-first messages",
          "[sasl][scram]") {
  SECTION("wrong server signature") {
    ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c.initial();
    REQUIRE(c.step(v(kServerFirst)).ok());
    auto r = c.step(v("v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("server signature is invalid") != std::string::npos);
    CHECK_FALSE(c.complete());
  }
  SECTION("e= in server-final") {
    ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c.initial();
    REQUIRE(c.step(v(kServerFirst)).ok());
    auto r = c.step(v("e=invalid-proof"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "SCRAM-SHA-256: server error: invalid-proof");
  }
  SECTION("e= in server-first") {
    ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c.initial();
    auto r = c.step(v("e=unknown-user"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "SCRAM-SHA-256: server error: unknown-user");
  }
  SECTION("server nonce that does not extend ours") {
    ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c.initial();
    auto r = c.step(v("r=XOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("does not extend the client nonce") != std::string::npos);
    // Exactly our nonce, with nothing of the server's, is refused too.
    ScramSaslClient c2(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c2.initial();
    CHECK_FALSE(c2.step(v("r=" + kNonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")).ok());
  }
  SECTION("iteration count below 4096") {
    ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
    (void)c.initial();
    auto r = c.step(v("r=" + kNonce + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("iteration count 4095 is below the minimum 4096") != std::string::npos);
  }
  SECTION("malformed attributes") {
    for (const std::string& bad : std::vector<std::string>{"", "s=abc,r=x,i=4096", "r=" + kNonce + "x,s=!!!!,i=4096",
                                  "r=" + kNonce + "x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=12ab",
                                  "m=ext,r=" + kNonce + "x"}) {
      INFO(bad);
      ScramSaslClient c(SaslMechanism::ScramSha256, "user", "pencil", kNonce);
      (void)c.initial();
      CHECK_FALSE(c.step(v(bad)).ok());
      CHECK_FALSE(c.complete());
    }
  }
}

TEST_CASE("SCRAM-SHA-512 agrees with a server side computed from RFC 5802's formulas", "[sasl][scram]") {
  const std::string password = "s3cr,et=";
  const Bytes salt = b("0123456789abcdef");
  const int iterations = 4096;
  ScramSaslClient c(SaslMechanism::ScramSha512, "con,nect=user", password, "clientnonce");
  const std::string first = s(c.initial());
  REQUIRE(first == "n,,n=con=2Cnect=3Duser,r=clientnonce");
  const std::string server_first =
      "r=clientnonceSERVER,s=" + base64_encode(salt) + ",i=" + std::to_string(iterations);
  auto final_msg = c.step(v(server_first));
  REQUIRE(final_msg.ok());
  REQUIRE(final_msg->has_value());
  const std::string client_final = s(**final_msg);
  const auto p = client_final.find(",p=");
  REQUIRE(p != std::string::npos);
  const std::string without_proof = client_final.substr(0, p);
  CHECK(without_proof == "c=biws,r=clientnonceSERVER");

  // The server's check: ClientKey = proof XOR HMAC(StoredKey, AuthMessage),
  // and H(ClientKey) must equal StoredKey.
  const auto m = SaslMechanism::ScramSha512;
  const Bytes salted = scram_salted_password(m, password, salt, iterations);
  REQUIRE(salted.size() == 64);
  const Bytes stored_key = scram_hash(m, scram_hmac(m, salted, v("Client Key")));
  const std::string auth = first.substr(3) + "," + server_first + "," + without_proof;
  const Bytes signature = scram_hmac(m, stored_key, v(auth));
  Bytes client_key = base64_decode(client_final.substr(p + 3)).value();
  REQUIRE(client_key.size() == 64);
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] ^= signature[i];
  CHECK(scram_hash(m, client_key) == stored_key);

  const Bytes server_sig = scram_hmac(m, scram_hmac(m, salted, v("Server Key")), v(auth));
  auto done = c.step(v("v=" + base64_encode(server_sig)));
  REQUIRE(done.ok());
  CHECK(c.complete());

  // A different password gives a proof the server must refuse.
  ScramSaslClient wrong(SaslMechanism::ScramSha512, "con,nect=user", "other", "clientnonce");
  (void)wrong.initial();
  const std::string wrong_final = s(**wrong.step(v(server_first)));
  Bytes wrong_key = base64_decode(wrong_final.substr(wrong_final.find(",p=") + 3)).value();
  for (size_t i = 0; i < wrong_key.size(); ++i) wrong_key[i] ^= signature[i];
  CHECK(scram_hash(m, wrong_key) != stored_key);
}

TEST_CASE("random SCRAM nonces are printable, distinct and at least 24 bytes of entropy", "[sasl][scram]") {
  ScramSaslClient a(SaslMechanism::ScramSha256, "u", "p");
  ScramSaslClient c(SaslMechanism::ScramSha256, "u", "p");
  const std::string fa = s(a.initial());
  const std::string fc = s(c.initial());
  CHECK(fa != fc);
  const std::string nonce = fa.substr(fa.find(",r=") + 3);
  CHECK(nonce.size() == 32);  // base64 of 24 bytes
  CHECK(nonce.find(',') == std::string::npos);
}

TEST_CASE("PLAIN sends authzid NUL user NUL password and expects an empty answer", "[sasl][plain]") {
  PlainSaslClient c("alice", "pw");
  const Bytes t = c.initial();
  CHECK(t == Bytes{0, 'a', 'l', 'i', 'c', 'e', 0, 'p', 'w'});
  CHECK_FALSE(c.complete());
  auto r = c.step(BytesView{});
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  CHECK(c.complete());
  CHECK_FALSE(c.step(BytesView{}).ok());
  PlainSaslClient d("alice", "pw");
  (void)d.initial();
  CHECK_FALSE(d.step(v("unexpected")).ok());
  // make_sasl_client picks the class by mechanism.
  auto m = make_sasl_client(SaslSettings{SaslMechanism::Plain, "u", "p"});
  CHECK(m->initial() == Bytes{0, 'u', 0, 'p'});
}
