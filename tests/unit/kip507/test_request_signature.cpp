// KIP-507 signing and verification (worker/herder/request_signature.h) and
// the session-key record (worker/storage/records.h). HMAC expectations come
// from RFC 4231 / RFC 2202 and from Python's hmac module, not from this code.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "worker/herder/request_signature.h"
#include "worker/storage/records.h"

using namespace kc::herder;
namespace st = kc::storage;

namespace {

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string key32() {
  std::string k;
  for (int i = 0; i < 32; ++i) k.push_back(static_cast<char>(i));
  return k;
}

const std::vector<std::string> kDefaultList{"HmacSHA256"};

}  // namespace

TEST_CASE("HMAC matches the RFC 4231 and RFC 2202 vectors", "[kip507]") {
  // RFC 4231 test case 1 (HMAC-SHA-256).
  auto a = hmac("HmacSHA256", std::string(20, '\x0b'), "Hi There");
  REQUIRE(a);
  CHECK(hex(*a) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // RFC 4231 test case 2 (SHA-256 and SHA-512).
  auto b = hmac("HmacSHA256", "Jefe", "what do ya want for nothing?");
  REQUIRE(b);
  CHECK(hex(*b) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  auto c = hmac("HmacSHA512", "Jefe", "what do ya want for nothing?");
  REQUIRE(c);
  CHECK(hex(*c) ==
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
        "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
  // RFC 2202 test case 2 (HMAC-SHA-1).
  auto d = hmac("HmacSHA1", "Jefe", "what do ya want for nothing?");
  REQUIRE(d);
  CHECK(hex(*d) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  // The JDK's Mac lookup ignores case; so does ours.
  auto e = hmac("hmacsha256", "Jefe", "what do ya want for nothing?");
  REQUIRE(e);
  CHECK(*e == *b);
}

TEST_CASE("sign_request gives base64 of the HMAC of the exact body", "[kip507]") {
  auto s = sign_request("HmacSHA256", key32(), R"([{"a":"b"}])");
  REQUIRE(s);
  CHECK(*s == "Eroe1tB3QaSe5EJ0n/U/3E2UQZRh4D5G73yb9AU1xkM=");
  // An empty body is signed too (PUT /connectors/{c}/fence has none).
  auto e = sign_request("HmacSHA256", key32(), "");
  REQUIRE(e);
  CHECK(*e == "04tCCW2A9F+Ca0Sp1WB95ySWpBXT9KGoyI47udqNwcs=");
  CHECK_FALSE(sign_request("HmacFoo", key32(), "x"));
  CHECK_FALSE(sign_request("HmacSHA256", "", "x"));  // the JDK refuses an empty key as well
}

TEST_CASE("constant_time_equal compares whole byte strings", "[kip507]") {
  CHECK(constant_time_equal("abc", "abc"));
  CHECK(constant_time_equal("", ""));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "xbc"));
  CHECK_FALSE(constant_time_equal("abc", "ab"));
  CHECK(constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
  CHECK_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST_CASE("verify_request follows Connect's order, statuses and messages", "[kip507]") {
  const SessionKey key{key32(), "HmacSHA256", 1000};
  const std::string body = R"([{"a":"b"}])";
  const std::string good = *sign_request("HmacSHA256", key.key, body);

  SECTION("a good signature verifies") {
    auto v = verify_request({good, "HmacSHA256"}, body, kDefaultList, &key);
    CHECK(v.ok());
    CHECK(v.status == 0);
  }
  SECTION("missing headers: 400") {
    for (auto h : {SignatureHeaders{}, SignatureHeaders{good, std::nullopt}, SignatureHeaders{std::nullopt, "HmacSHA256"}}) {
      auto v = verify_request(h, body, kDefaultList, &key);
      CHECK(v.status == 400);
      CHECK(v.message == "Internal request missing required signature");
    }
  }
  SECTION("unknown algorithm: 400 with the JDK's message") {
    auto v = verify_request({good, "HmacFoo"}, body, kDefaultList, &key);
    CHECK(v.status == 400);
    CHECK(v.message == "Algorithm HmacFoo not available");
  }
  SECTION("bad base64: 400 with the decoder's message") {
    auto v = verify_request({"abc*def=", "HmacSHA256"}, body, kDefaultList, &key);
    CHECK(v.status == 400);
    CHECK(v.message == "Illegal base64 character 2a");
    auto w = verify_request({"YWJj ZGVm", "HmacSHA256"}, body, kDefaultList, &key);
    CHECK(w.status == 400);
    CHECK(w.message == "Illegal base64 character 20");
  }
  SECTION("known algorithm outside inter.worker.verification.algorithms: 400") {
    auto sig = *sign_request("HmacSHA512", key.key, body);
    auto v = verify_request({sig, "HmacSHA512"}, body, kDefaultList, &key);
    CHECK(v.status == 400);
    CHECK(v.message.starts_with("This worker does not support the 'HmacSHA512' key signing algorithm used by other "
                                "workers. This worker is currently configured to use: [HmacSHA256]. "));
    // Listed: it verifies.
    CHECK(verify_request({sig, "HmacSHA512"}, body, {"HmacSHA256", "HmacSHA512"}, &key).ok());
  }
  SECTION("no session key yet: 503") {
    auto v = verify_request({good, "HmacSHA256"}, body, kDefaultList, nullptr);
    CHECK(v.status == 503);
    CHECK(v.message ==
          "This worker is still starting up and has not been able to read a session key from the config topic yet");
  }
  SECTION("wrong key, changed body, truncated signature: 403") {
    SessionKey other = key;
    other.key[0] = static_cast<char>(other.key[0] ^ 1);
    for (const auto& [k, b, s] : {std::tuple{other, body, good}, std::tuple{key, body + " ", good},
                                  std::tuple{key, body, good.substr(0, 40)}}) {
      auto v = verify_request({s, "HmacSHA256"}, b, kDefaultList, &k);
      CHECK(v.status == 403);
      CHECK(v.message == "Internal request contained invalid signature.");
    }
  }
}

TEST_CASE("session keys: default sizes, generation, config validation", "[kip507]") {
  CHECK(default_key_bytes("HmacSHA256") == 32u);
  CHECK(default_key_bytes("HmacSHA512") == 64u);
  CHECK(default_key_bytes("HmacSHA1") == 64u);
  CHECK_FALSE(default_key_bytes("AES"));

  auto a = generate_session_key("HmacSHA256", std::nullopt, 42);
  REQUIRE(a);
  CHECK(a->key.size() == 32);
  CHECK(a->algorithm == "HmacSHA256");
  CHECK(a->creation_timestamp_ms == 42);
  auto b = generate_session_key("HmacSHA256", 128, 43);
  REQUIRE(b);
  CHECK(b->key.size() == 16);
  CHECK(a->key != generate_session_key("HmacSHA256", std::nullopt, 42)->key);  // random
  CHECK_FALSE(generate_session_key("HmacSHA256", 32, 1));   // below 40 bits
  CHECK_FALSE(generate_session_key("HmacSHA256", 100, 1));  // not whole bytes
  CHECK_FALSE(generate_session_key("DES", std::nullopt, 1));

  CHECK(validate_signing_config("HmacSHA256", std::nullopt, "HmacSHA256", {"HmacSHA256"}));
  auto bad_gen = validate_signing_config("Foo", std::nullopt, "HmacSHA256", {"HmacSHA256"});
  REQUIRE_FALSE(bad_gen);
  CHECK(bad_gen.error().field == "inter.worker.key.generation.algorithm");
  auto bad_size = validate_signing_config("HmacSHA256", 8, "HmacSHA256", {"HmacSHA256"});
  REQUIRE_FALSE(bad_size);
  CHECK(bad_size.error().field == "inter.worker.key.size");
  auto bad_sig = validate_signing_config("HmacSHA256", std::nullopt, "Foo", {"HmacSHA256"});
  REQUIRE_FALSE(bad_sig);
  CHECK(bad_sig.error().field == "inter.worker.signature.algorithm");
  auto bad_list = validate_signing_config("HmacSHA256", std::nullopt, "HmacSHA256", {"HmacSHA256", "Bar"});
  REQUIRE_FALSE(bad_list);
  CHECK(bad_list.error().field == "inter.worker.verification.algorithms");
}

TEST_CASE("session-key records: Connect's format both ways", "[kip507]") {
  // As Kafka Connect's leader writes it (JsonConverter, schemas disabled).
  const std::string connect_written =
      R"({"key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","algorithm":"HmacSHA256","creation-timestamp":1733140000123})";
  auto r = st::decode_session_key(connect_written);
  REQUIRE(r);
  CHECK(r->algorithm == "HmacSHA256");
  CHECK(r->creation_timestamp_ms == 1733140000123);
  auto k = session_key_from_record(*r);
  REQUIRE(k);
  CHECK(k->key == key32());
  // Written back byte for byte.
  CHECK(st::encode_session_key(session_key_record(*k)) == connect_written);
  CHECK(st::parse_config_key("session-key").kind == st::ConfigKeyKind::SessionKey);

  CHECK_FALSE(st::decode_session_key("not json"));
  CHECK_FALSE(st::decode_session_key("null"));
  CHECK_FALSE(st::decode_session_key(R"({"key":1,"algorithm":"HmacSHA256","creation-timestamp":1})"));
  CHECK_FALSE(st::decode_session_key(R"({"key":"AA==","creation-timestamp":1})"));
  CHECK_FALSE(st::decode_session_key(R"({"key":"AA==","algorithm":"HmacSHA256","creation-timestamp":"1"})"));
  auto bad64 = st::decode_session_key(R"({"key":"A*==","algorithm":"HmacSHA256","creation-timestamp":1})");
  REQUIRE(bad64);  // the record parses; the key does not decode
  CHECK_FALSE(session_key_from_record(*bad64));
  CHECK_FALSE(session_key_from_record(st::SessionKeyRecord{"", "HmacSHA256", 1}));
}
