// libFuzzer target: URL, path and query decoding of worker/api/url.h. The
// first byte picks the function. Beyond "never crash": a percent-encoded
// segment decodes back to itself and splits as one path segment.
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "worker/api/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kc::rest;
  if (size == 0) return 0;
  const uint8_t which = data[0];
  std::string_view s = kc::fuzz::as_text(data + 1, size - 1);
  switch (which % 5) {
    case 0: {
      auto u = parse_http_url(s);
      if (u) (void)u.value().port;
      break;
    }
    case 1: {
      (void)percent_decode(s, false);
      (void)percent_decode(s, true);
      auto enc = percent_encode_segment(s);
      auto dec = percent_decode(enc, false);
      KC_FUZZ_CHECK(dec && *dec == s);
      if (!s.empty()) {
        auto segs = split_path("/connectors/" + enc + "/config");
        KC_FUZZ_CHECK(segs && segs->size() == 3 && (*segs)[1] == s);
      }
      break;
    }
    case 2: {
      auto segs = split_path(s);
      if (segs)
        for (const auto& seg : *segs) KC_FUZZ_CHECK(!seg.empty());
      break;
    }
    case 3: {
      auto q = parse_query(s);
      auto stripped = strip_query_param(s, "forward");
      auto q2 = parse_query(stripped);
      if (q && q2) {
        for (const auto& [k, v] : *q2) KC_FUZZ_CHECK(k != "forward");
      }
      break;
    }
    case 4: {
      // A raw request target: path and query split as the server does.
      auto at = s.find('?');
      (void)split_path(s.substr(0, at));
      if (at != std::string_view::npos) (void)parse_query(s.substr(at + 1));
      break;
    }
  }
  return 0;
}
