// libFuzzer target: the Connect worker-metadata readers (V1 and V0) must never
// crash on any input, and encode(decode(x)) must be a fixed point of
// decode-then-encode. The labels trailer (kconnectd, issue 29) must survive
// the round trip, and the bytes without it must be exactly what an
// unlabelled worker sends (a prefix of the labelled bytes).
#include <algorithm>
#include <cstdlib>

#include "protocol/connect/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  (void)kc::connect::decode_metadata_v0(bytes);
  auto md = kc::connect::decode_metadata(bytes);
  if (!md) return 0;
  auto e1 = kc::connect::encode_metadata(*md);
  if (!e1) return 0;  // e.g. a V0 header whose allocation carried revocations, or labels
  auto md2 = kc::connect::decode_metadata(*e1);
  if (!md2) std::abort();
  if (md2->labels != md->labels) std::abort();
  auto e2 = kc::connect::encode_metadata(*md2);
  if (!e2 || *e2 != *e1) std::abort();
  if (!md->labels.empty()) {
    kc::connect::WorkerMetadata bare = *md2;
    bare.labels.clear();
    auto e0 = kc::connect::encode_metadata(bare);
    if (!e0 || e0->size() >= e1->size() || !std::equal(e0->begin(), e0->end(), e1->begin())) std::abort();
    // An older reader stops before the trailer: the same fields either way.
    auto old = kc::connect::decode_metadata(*e0);
    if (!old || old->url != md2->url || old->allocation != md2->allocation || !old->labels.empty()) std::abort();
  }
  return 0;
}
