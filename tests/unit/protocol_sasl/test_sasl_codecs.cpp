// SaslHandshake (key 17) and SaslAuthenticate (key 36) bodies: bytes derived
// by hand from the Kafka message layouts, round trips, and truncations that
// must name the field being read.

#include <catch2/catch.hpp>

#include "protocol/kafka/messages.h"

using namespace kc::kafka;  // NOLINT

namespace {
Bytes bytes_of(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<uint8_t>(x));
  return b;
}
}  // namespace

TEST_CASE("SASL APIs: names, versions and flexible-from", "[sasl][codec]") {
  CHECK(std::string(api_name(ApiKey::SaslHandshake)) == "SaslHandshake");
  CHECK(std::string(api_name(ApiKey::SaslAuthenticate)) == "SaslAuthenticate");
  CHECK(static_cast<int>(ApiKey::SaslHandshake) == 17);
  CHECK(static_cast<int>(ApiKey::SaslAuthenticate) == 36);
  CHECK(supported_versions(ApiKey::SaslHandshake).max == 1);
  CHECK(supported_versions(ApiKey::SaslAuthenticate).max == 2);
  CHECK_FALSE(is_flexible(ApiKey::SaslHandshake, 1));
  CHECK_FALSE(is_flexible(ApiKey::SaslAuthenticate, 1));
  CHECK(is_flexible(ApiKey::SaslAuthenticate, 2));
  CHECK_FALSE(encode(SaslHandshakeRequest{"PLAIN"}, 2).ok());
  CHECK_FALSE(encode(SaslAuthenticateRequest{}, 3).ok());
}

TEST_CASE("SaslHandshake request and response bytes", "[sasl][codec]") {
  const SaslHandshakeRequest req{"PLAIN"};
  const Bytes rb = bytes_of({0x00, 0x05, 'P', 'L', 'A', 'I', 'N'});
  for (int16_t v : {0, 1}) {
    CHECK(encode(req, v).value() == rb);
    CHECK(decode_SaslHandshakeRequest(rb, v).value() == req);
  }
  const SaslHandshakeResponse resp{33, {"PLAIN", "SCRAM-SHA-256"}};
  const Bytes sb = bytes_of({0x00, 0x21, 0x00, 0x00, 0x00, 0x02, 0x00, 0x05, 'P', 'L', 'A', 'I', 'N',
                             0x00, 0x0d, 'S', 'C', 'R', 'A', 'M', '-', 'S', 'H', 'A', '-', '2', '5', '6'});
  CHECK(encode(resp, 1).value() == sb);
  CHECK(decode_SaslHandshakeResponse(sb, 1).value() == resp);
}

TEST_CASE("SaslAuthenticate bytes at v0, v1 and flexible v2", "[sasl][codec]") {
  const SaslAuthenticateRequest req{bytes_of({0, 'u', 0, 'p'})};
  CHECK(encode(req, 0).value() == bytes_of({0x00, 0x00, 0x00, 0x04, 0, 'u', 0, 'p'}));
  // v2: compact bytes (length + 1) and an empty tagged-field section.
  CHECK(encode(req, 2).value() == bytes_of({0x05, 0, 'u', 0, 'p', 0x00}));
  CHECK(decode_SaslAuthenticateRequest(bytes_of({0x05, 0, 'u', 0, 'p', 0x00}), 2).value() == req);

  SaslAuthenticateResponse resp;
  resp.error_code = 58;
  resp.error_message = "bad";
  resp.auth_bytes = {};
  resp.session_lifetime_ms = 1000;
  // v0 drops session_lifetime_ms (ignorable); v1 appends it as int64.
  CHECK(encode(resp, 0).value() ==
        bytes_of({0x00, 0x3a, 0x00, 0x03, 'b', 'a', 'd', 0x00, 0x00, 0x00, 0x00}));
  CHECK(encode(resp, 1).value() == bytes_of({0x00, 0x3a, 0x00, 0x03, 'b', 'a', 'd', 0x00, 0x00, 0x00, 0x00,
                                             0, 0, 0, 0, 0, 0, 0x03, 0xe8}));
  const Bytes v2 = bytes_of({0x00, 0x3a, 0x04, 'b', 'a', 'd', 0x01, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x00});
  CHECK(encode(resp, 2).value() == v2);
  CHECK(decode_SaslAuthenticateResponse(v2, 2).value() == resp);
  // A null error message (the success case) is valid at every version.
  SaslAuthenticateResponse ok;
  ok.auth_bytes = bytes_of({'v', '='});
  for (int16_t v = 0; v <= 2; ++v) {
    INFO("v" << v);
    CHECK(decode_SaslAuthenticateResponse(encode(ok, v).value(), v).value() == ok);
  }
}

TEST_CASE("truncated SASL bodies name the field being read", "[sasl][codec]") {
  SaslAuthenticateResponse resp;
  resp.error_code = 58;
  resp.error_message = "Authentication failed";
  resp.auth_bytes = bytes_of({1, 2, 3});
  resp.session_lifetime_ms = 5;
  const Bytes full = encode(resp, 1).value();
  // error_code(2) + message(2+21) + auth_bytes(4+3) + lifetime(8).
  REQUIRE(full.size() == 2 + 23 + 7 + 8);
  auto at = [&](size_t n) {
    auto r = decode_SaslAuthenticateResponse(BytesView(full.data(), n), 1);
    REQUIRE_FALSE(r.ok());
    return r.error().field;
  };
  CHECK(at(1) == "SaslAuthenticateResponse.error_code");
  CHECK(at(10) == "SaslAuthenticateResponse.error_message");
  CHECK(at(27) == "SaslAuthenticateResponse.auth_bytes");
  CHECK(at(35) == "SaslAuthenticateResponse.session_lifetime_ms");

  const Bytes hs = encode(SaslHandshakeResponse{0, {"PLAIN", "SCRAM-SHA-512"}}, 1).value();
  auto h = decode_SaslHandshakeResponse(BytesView(hs.data(), hs.size() - 3), 1);
  REQUIRE_FALSE(h.ok());
  CHECK(h.error().field == "SaslHandshakeResponse.mechanisms[1]");
  auto hr = decode_SaslHandshakeRequest(bytes_of({0x00, 0x05, 'P', 'L'}), 1);
  REQUIRE_FALSE(hr.ok());
  CHECK(hr.error().field == "SaslHandshakeRequest.mechanism");
  // Trailing bytes after a complete body are an error too.
  CHECK_FALSE(decode_SaslHandshakeRequest(bytes_of({0x00, 0x01, 'P', 0x00}), 0).ok());
}
