// libFuzzer target: the Connect worker-metadata readers (V1 and V0) must never
// crash on any input, and encode(decode(x)) must be a fixed point of
// decode-then-encode.
#include <cstdlib>

#include "protocol/connect/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  (void)kc::connect::decode_metadata_v0(bytes);
  auto md = kc::connect::decode_metadata(bytes);
  if (!md) return 0;
  auto e1 = kc::connect::encode_metadata(*md);
  if (!e1) return 0;  // e.g. a V0 header whose allocation carried revocations
  auto md2 = kc::connect::decode_metadata(*e1);
  if (!md2) std::abort();
  auto e2 = kc::connect::encode_metadata(*md2);
  if (!e2 || *e2 != *e1) std::abort();
  return 0;
}
