// libFuzzer target: the Connect assignment readers (V1, V0 and wire-level)
// must never crash on any input, and a successful decode re-encodes to bytes
// that decode and re-encode identically.
#include <cstdlib>

#include "protocol/connect/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  (void)kc::connect::decode_assignment_v0(bytes);
  (void)kc::connect::decode_assignment_wire(bytes);
  auto a = kc::connect::decode_assignment(bytes);
  if (!a) return 0;
  auto e1 = kc::connect::encode_assignment(*a);
  if (!e1) return 0;  // V0 header with V1 revocations cannot be written as V0
  auto a2 = kc::connect::decode_assignment(*e1);
  if (!a2) std::abort();
  auto e2 = kc::connect::encode_assignment(*a2);
  if (!e2 || *e2 != *e1) std::abort();
  return 0;
}
