#include "worker/storage/json_compact.h"

#include "common/json_bounds.h"
#include "common/json_text.h"

namespace kc::storage {
namespace {

void write_string(std::string& out, const std::string& s) {
  out.push_back('"');
  for (char ch : s) {
    // UTF-8 bytes pass through, as Jackson writes them.
    if (!kc::append_json_escape(out, static_cast<unsigned char>(ch))) out.push_back(ch);
  }
  out.push_back('"');
}

template <typename J>
void write(std::string& out, const J& v, std::size_t depth) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      out += "null";
      break;
    case nlohmann::json::value_t::object: {
      if (depth >= kc::kMaxJsonDepth) throw kc::JsonTooDeep(kc::kMaxJsonDepth);
      out.push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        write_string(out, it.key());
        out.push_back(':');
        write(out, it.value(), depth + 1);
      }
      out.push_back('}');
      break;
    }
    case nlohmann::json::value_t::array: {
      if (depth >= kc::kMaxJsonDepth) throw kc::JsonTooDeep(kc::kMaxJsonDepth);
      out.push_back('[');
      bool first = true;
      for (const auto& e : v) {
        if (!first) out.push_back(',');
        first = false;
        write(out, e, depth + 1);
      }
      out.push_back(']');
      break;
    }
    case nlohmann::json::value_t::string:
      write_string(out, v.template get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean:
      out += v.template get<bool>() ? "true" : "false";
      break;
    case nlohmann::json::value_t::number_integer:
      out += std::to_string(v.template get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      out += std::to_string(v.template get<uint64_t>());
      break;
    case nlohmann::json::value_t::number_float:
    case nlohmann::json::value_t::binary:
      out += v.dump();
      break;
  }
}

}  // namespace

std::string to_compact_json(const OrderedJson& v) {
  std::string out;
  write(out, v, 0);
  return out;
}

std::string to_compact_json(const nlohmann::json& v) {
  std::string out;
  write(out, v, 0);
  return out;
}

}  // namespace kc::storage
