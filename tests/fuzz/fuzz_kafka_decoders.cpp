// libFuzzer target for every Kafka decoder in protocol/kafka at every
// supported version. Input layout: byte 0 picks the decoder (12 message bodies,
// request header, response header), byte 1 picks the version within the API's
// supported range, the rest is the body. When byte 0 has its top bit set, the
// body is instead a valid sample encoding (tests/unit/protocol_kafka/samples.h)
// edited by the rest of the input (3 bytes per edit: 16-bit position, value),
// so the fuzzer starts deep inside well-formed messages. Properties checked
// besides "no crash, no sanitizer report": a decoded message re-encodes at the
// same version, and decoding that encoding gives the same message back.

#include <cstdint>
#include <cstdlib>

#include "protocol/kafka/messages.h"
#include "tests/unit/protocol_kafka/samples.h"

namespace {

using namespace kc::kafka;  // NOLINT
using kc::Result;

template <class T>
void check(Result<T> (*dec)(BytesView, int16_t), BytesView body, int16_t version) {
  auto d = dec(body, version);
  if (!d.ok()) {
    if (d.error().field.empty()) std::abort();  // every error must name a field
    return;
  }
  auto e = encode(d.value(), version);
  if (!e.ok()) std::abort();
  auto d2 = dec(e.value(), version);
  if (!d2.ok() || !(d2.value() == d.value())) std::abort();
  auto e2 = encode(d2.value(), version);
  if (!e2.ok() || e2.value() != e.value()) std::abort();
}

constexpr ApiKey kKeys[] = {ApiKey::ApiVersions, ApiKey::FindCoordinator, ApiKey::JoinGroup,
                            ApiKey::SyncGroup,   ApiKey::Heartbeat,       ApiKey::LeaveGroup};

int16_t pick_version(ApiKey key, uint8_t b) {
  const VersionRange r = supported_versions(key);
  return static_cast<int16_t>(r.min + b % (r.max - r.min + 1));
}

int edit_sample(const uint8_t* data, size_t size) {
  static const std::vector<test::CodecCase> cases = test::all_cases();
  const auto& c = cases[(data[0] & 0x7f) % cases.size()];
  const int16_t v = pick_version(c.key, data[1]);
  auto sample = c.sample_bytes(v);
  if (!sample.ok()) std::abort();
  Bytes m = std::move(sample.value());
  if (m.empty()) return 0;
  for (size_t i = 2; i + 2 < size; i += 3) {
    const size_t pos = ((static_cast<size_t>(data[i]) << 8) | data[i + 1]) % m.size();
    m[pos] = data[i + 2];
  }
  if (!c.reencode_stable(m, v)) std::abort();
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  if ((data[0] & 0x80) != 0) return edit_sample(data, size);
  const uint8_t which = data[0] % 14;
  const BytesView body(data + 2, size - 2);
  const ApiKey key = kKeys[(which / 2) % 6];
  const int16_t v = pick_version(key, data[1]);
  switch (which) {
    case 0: check(&decode_ApiVersionsRequest, body, v); break;
    case 1: check(&decode_ApiVersionsResponse, body, v); break;
    case 2: check(&decode_FindCoordinatorRequest, body, v); break;
    case 3: check(&decode_FindCoordinatorResponse, body, v); break;
    case 4: check(&decode_JoinGroupRequest, body, v); break;
    case 5: check(&decode_JoinGroupResponse, body, v); break;
    case 6: check(&decode_SyncGroupRequest, body, v); break;
    case 7: check(&decode_SyncGroupResponse, body, v); break;
    case 8: check(&decode_HeartbeatRequest, body, v); break;
    case 9: check(&decode_HeartbeatResponse, body, v); break;
    case 10: check(&decode_LeaveGroupRequest, body, v); break;
    case 11: check(&decode_LeaveGroupResponse, body, v); break;
    case 12: {
      // Request header: decoding then re-framing gives the same header bytes.
      auto h = decode_request_header(body);
      if (!h.ok()) break;
      if (h->second > body.size()) std::abort();
      auto f = encode_request_frame(h->first, body.subspan(h->second));
      if (!f.ok()) std::abort();
      auto h2 = decode_request_header(BytesView(f.value()).subspan(4));
      if (!h2.ok() || !(h2->first == h->first)) std::abort();
      break;
    }
    default: {
      const ApiKey rk = kKeys[data[1] % 6];
      auto r = decode_response_header(body, rk, pick_version(rk, static_cast<uint8_t>(data[1] / 6)));
      if (r.ok() && r->second > body.size()) std::abort();
      break;
    }
  }
  return 0;
}
