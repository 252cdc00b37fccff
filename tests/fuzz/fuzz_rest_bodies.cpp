// libFuzzer target: the REST request-body parsers of worker/rest/json_codec.h.
// The first byte (% 7) picks the parser; for the ones that take a connector or
// plugin name from the URL, the bytes up to the first '\n' are that name
// (else "c1" / "FileStreamSource") and the rest is the body. Each must
// answer a value or a 4xx RestError, never crash, hang or throw; a parsed
// request must carry the name it was parsed for.
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "worker/rest/json_codec.h"

namespace {

using namespace kc::rest;

template <class T>
void check_error_is_client_error(const Reply<T>& r) {
  if (!r.ok()) KC_FUZZ_CHECK(r.error().http_status() >= 400 && r.error().http_status() < 500);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  std::string_view rest = kc::fuzz::as_text(data + 1, size - 1);
  switch (which % 7) {
    case 0: {
      auto r = parse_json_body(rest);
      check_error_is_client_error(r);
      if (r.ok()) {
        auto c = config_from_json(r.value());
        check_error_is_client_error(c);
        (void)error_body(400, dump_json(r.value()));
      }
      break;
    }
    case 1: {
      auto r = parse_create_request(rest);
      check_error_is_client_error(r);
      if (r.ok()) {
        KC_FUZZ_CHECK(!r.value().allow_replace);
        KC_FUZZ_CHECK(r.value().config.at("name") == r.value().name);
      }
      break;
    }
    case 2: {
      std::string name(kc::fuzz::take_until(rest, '\n', "c1"));
      auto r = parse_put_config_request(name, rest);
      check_error_is_client_error(r);
      if (r.ok()) {
        KC_FUZZ_CHECK(r.value().allow_replace);
        KC_FUZZ_CHECK(r.value().config.at("name") == r.value().name);
      }
      break;
    }
    case 3: {
      std::string name(kc::fuzz::take_until(rest, '\n', "c1"));
      auto r = parse_config_patch(name, rest);
      check_error_is_client_error(r);
      if (r.ok()) {
        ConnectorConfig current{{"name", name}, {"connector.class", "FileStreamSource"}, {"tasks.max", "1"}};
        auto put = apply_config_patch(name, current, r.value());
        KC_FUZZ_CHECK(put.allow_replace);
        for (const auto& [k, v] : r.value()) {
          if (k == "name") continue;
          KC_FUZZ_CHECK(v ? put.config.count(k) == 1 && put.config.at(k) == *v : put.config.count(k) == 0);
        }
      }
      break;
    }
    case 4: {
      std::string plugin(kc::fuzz::take_until(rest, '\n', "FileStreamSource"));
      auto r = parse_validate_request(plugin, rest);
      check_error_is_client_error(r);
      break;
    }
    case 5: {
      auto r = parse_offsets_request(rest);
      check_error_is_client_error(r);
      if (r.ok()) {
        KC_FUZZ_CHECK(!r.value().empty());
        // What GET /offsets would answer for the same offsets.
        (void)dump_json(to_json(r.value()));
      }
      break;
    }
    case 6: {
      auto r = parse_ordered_json_body(rest);
      check_error_is_client_error(r);
      if (r.ok()) (void)dump_json(r.value());
      break;
    }
  }
  return 0;
}
