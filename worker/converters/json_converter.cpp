#include "worker/converters/json_converter.h"
#include "worker/converters/data_error.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/json_bounds.h"
#include "common/json_text.h"
#include "worker/data/base64.h"

namespace kc::converters {

using namespace data;

namespace {

const std::string kEnvelopeError =
    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional "
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration.";

// ------------------------------------------------------------------ JSON tree
// A parsed JSON value that keeps what Jackson's tree keeps and nlohmann's
// does not: the exact text of fractional numbers (Connect reads them as
// BigDecimal), integers beyond 64 bits, member order, and "missing".

struct JMember;

struct JNode {
  enum class Kind : uint8_t { Missing, Null, Bool, Int, Float, String, Array, Object };
  Kind kind = Kind::Missing;
  bool b = false;
  bool big = false;  // an integer beyond int64 (Jackson's BigIntegerNode); i holds its low 64 bits
  int64_t i = 0;
  std::string text;  // String: content; Float and big Int: the number's text
  std::vector<JNode> items;
  // Object members in document order. Not std::pair<std::string, JNode>:
  // clang (the fuzz build) refuses a pair of a still-incomplete JNode.
  std::vector<JMember> members;

  const JNode* get(std::string_view key) const;
};

struct JMember {
  JMember(std::string k, JNode v) : first(std::move(k)), second(std::move(v)) {}
  std::string first;
  JNode second;
};

const JNode* JNode::get(std::string_view key) const {
  if (kind != Kind::Object) return nullptr;
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

// JsonNode.getNodeType() names.
const char* node_type(const JNode* n) {
  if (!n) return "MISSING";
  switch (n->kind) {
    case JNode::Kind::Missing: return "MISSING";
    case JNode::Kind::Null: return "NULL";
    case JNode::Kind::Bool: return "BOOLEAN";
    case JNode::Kind::Int:
    case JNode::Kind::Float: return "NUMBER";
    case JNode::Kind::String: return "STRING";
    case JNode::Kind::Array: return "ARRAY";
    case JNode::Kind::Object: return "OBJECT";
  }
  return "MISSING";
}

// The low 64 bits of the integer part (truncated toward zero) of a decimal
// number text, as BigDecimal.longValue()/BigInteger.longValue() give it.
uint64_t low64_of_number_text(std::string_view t) {
  size_t i = 0;
  bool neg = false;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  std::string digits;
  int64_t frac = 0;
  bool point = false;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
      if (point) ++frac;
    } else if (c == '.') {
      point = true;
    } else {
      break;
    }
  }
  int64_t exp = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) exp = std::strtoll(std::string(t.substr(i + 1)).c_str(), nullptr, 10);
  int64_t shift = exp - frac;  // value = digits * 10^shift
  if (shift < 0) {
    auto drop = static_cast<size_t>(-shift);
    digits = drop >= digits.size() ? std::string() : digits.substr(0, digits.size() - drop);
    shift = 0;
  }
  uint64_t x = 0;
  for (char c : digits) x = x * 10u + static_cast<uint64_t>(c - '0');
  if (shift >= 64) {
    x = 0;  // 10^64 is a multiple of 2^64
  } else {
    for (int64_t k = 0; k < shift; ++k) x *= 10u;
  }
  return neg ? ~x + 1u : x;
}

// Marks a number token that the fallback pass (see parse_tree) wrapped in a
// string: U+10FFFF, a noncharacter, then "#".
const std::string kNumberMark = "\xF4\x8F\xBF\xBF#";

// Jackson's number grammar with leading zeros allowed:
// -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_number_token(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (!digits()) return false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

class TreeBuilder {
 public:
  // A number the fallback pass wrapped: integers of any length (wrapping
  // beyond 64 bits), leading zeros, and magnitudes beyond double.
  bool number_from_text(std::string_view t) {
    if (!is_number_token(t)) return false;  // the first pass's error is the one reported
    JNode n;
    n.text = std::string(t);
    if (t.find_first_of(".eE") != std::string_view::npos) {
      n.kind = JNode::Kind::Float;
      return put(std::move(n));
    }
    n.kind = JNode::Kind::Int;
    // Normalize away leading zeros, then see whether it fits 64 bits.
    bool neg = t[0] == '-';
    std::string_view digits = t.substr(neg ? 1 : 0);
    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
    n.text = (neg ? "-" : "") + std::string(digits);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(n.text.data(), n.text.data() + n.text.size(), v);
    if (ec == std::errc() && p == n.text.data() + n.text.size()) {
      n.i = v;
      n.text.clear();
    } else {
      n.big = true;
      n.i = static_cast<int64_t>(low64_of_number_text(n.text));
    }
    return put(std::move(n));
  }

  JNode root;

  bool null() { return put(JNode{JNode::Kind::Null}); }
  bool boolean(bool v) {
    JNode n{JNode::Kind::Bool};
    n.b = v;
    return put(std::move(n));
  }
  bool number_integer(int64_t v) {
    JNode n{JNode::Kind::Int};
    n.i = v;
    return put(std::move(n));
  }
  bool number_unsigned(uint64_t v) {
    JNode n{JNode::Kind::Int};
    n.i = static_cast<int64_t>(v);
    if (v > static_cast<uint64_t>(INT64_MAX)) {
      n.big = true;
      n.text = std::to_string(v);
    }
    return put(std::move(n));
  }
  bool number_float(double, const std::string& s) {
    JNode n;
    if (s.find_first_of(".eE") == std::string::npos) {  // an integer too long for 64 bits
      n.kind = JNode::Kind::Int;
      n.big = true;
      n.i = static_cast<int64_t>(low64_of_number_text(s));
    } else {
      n.kind = JNode::Kind::Float;
    }
    n.text = s;
    return put(std::move(n));
  }
  bool string(std::string& s) {
    if (s.size() > kNumberMark.size() && s.compare(0, kNumberMark.size(), kNumberMark) == 0)
      return number_from_text(std::string_view(s).substr(kNumberMark.size()));
    JNode n{JNode::Kind::String};
    n.text = std::move(s);
    return put(std::move(n));
  }
  bool binary(nlohmann::json::binary_t&) { return false; }
  bool start_object(std::size_t) {
    stack_.push_back(place(JNode{JNode::Kind::Object}));
    return true;
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    stack_.push_back(place(JNode{JNode::Kind::Array}));
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }

 private:
  bool put(JNode n) {
    place(std::move(n));
    return true;
  }
  // Appends to the innermost container (or sets the root); a duplicate
  // object key replaces the earlier value in place, as Jackson's ObjectNode does.
  JNode* place(JNode n) {
    if (stack_.empty()) {
      root = std::move(n);
      return &root;
    }
    JNode* top = stack_.back();
    if (top->kind == JNode::Kind::Array) {
      top->items.push_back(std::move(n));
      return &top->items.back();
    }
    for (auto& [k, v] : top->members) {
      if (k == key_) {
        v = std::move(n);
        return &v;
      }
    }
    top->members.emplace_back(std::move(key_), std::move(n));
    return &top->members.back().second;
  }
  std::vector<JNode*> stack_;
  std::string key_;
};

bool json_whitespace_only(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// Jackson's readTree: the first JSON value (trailing content ignored);
// empty or whitespace-only input is a MissingNode. Record values are
// outside bytes: kc::sax_parse_bounded refuses nesting past
// kMaxRecordJsonDepth before a deeper JNode exists, so the recursive walks
// below (conversion, dump, destruction) stay bounded.
Result<JNode> parse_tree(std::string_view bytes) {
  if (json_whitespace_only(bytes)) return JNode{};
  auto failed = [](const kc::JsonParseError& e) {
    return data_error("Converting byte[] to Kafka Connect data failed due to serialization error: " + e.message);
  };
  TreeBuilder b;
  const auto first = kc::sax_parse_bounded<nlohmann::json>(bytes, b, kMaxRecordJsonDepth, /*strict=*/false);
  if (first && first->kind == kc::JsonParseError::Kind::TooDeep) return failed(*first);
  const bool ok = !first;
  // A leading zero ("007") stops nlohmann's non-strict parse early instead
  // of failing, so look for one ("0" then a digit, not after a digit or a
  // point) before trusting a success; the pass below is string-aware.
  bool leading_zero = false;
  for (size_t i = 0; i + 1 < bytes.size() && !leading_zero; ++i) {
    if (bytes[i] == '0' && bytes[i + 1] >= '0' && bytes[i + 1] <= '9') {
      char prev = i ? bytes[i - 1] : ' ';
      leading_zero = !(prev >= '0' && prev <= '9') && prev != '.' && prev != 'e' && prev != 'E' && prev != '+';
    }
  }
  if (ok && !leading_zero) return std::move(b.root);
  // Jackson reads numbers nlohmann refuses (leading zeros, 1e400 ->
  // Infinity). Retry with every number token outside strings wrapped in a
  // marked string, which TreeBuilder turns back into a number node.
  std::string wrapped;
  wrapped.reserve(bytes.size() + 64);
  bool in_string = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (in_string) {
      wrapped.push_back(c);
      if (c == '\\' && i + 1 < bytes.size())
        wrapped.push_back(bytes[++i]);
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      wrapped.push_back(c);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i;
      while (j < bytes.size() && std::string_view("+-0123456789.eE").find(bytes[j]) != std::string_view::npos) ++j;
      wrapped += '"' + kNumberMark;
      wrapped.append(bytes.data() + i, j - i);
      wrapped.push_back('"');
      i = j - 1;
    } else {
      wrapped.push_back(c);
    }
  }
  TreeBuilder retry;
  if (!kc::sax_parse_bounded<nlohmann::json>(wrapped, retry, kMaxRecordJsonDepth, /*strict=*/false))
    return std::move(retry.root);
  if (ok) return std::move(b.root);
  return failed(*first);
}

void dump_node(const JNode& n, std::string& out);

// ------------------------------------------------------------------ writing

// Bytes that a JSON string can carry as they are: printable ASCII other
// than '"' and '\\'. Everything else (controls, quotes, backslashes and
// UTF-8 lead/continuation bytes) takes write_string's slow path.
constexpr std::array<bool, 256> kPlainByte = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

// Appends `prefix`, `s` and `suffix` if every byte of `s` is plain, with one
// resize and a copy loop that checks as it goes (std::string's push_back
// and short appends are out-of-line calls; this is the serializer's hot
// path). Returns false, leaving `out` unchanged, when `s` needs escaping.
bool append_plain(std::string& out, std::string_view prefix, std::string_view s, std::string_view suffix) {
  const size_t at = out.size();
  out.resize(at + prefix.size() + s.size() + suffix.size());
  char* p = out.data() + at;
  for (char c : prefix) *p++ = c;
  for (char c : s) {
    if (!kPlainByte[static_cast<unsigned char>(c)]) {
      out.resize(at);
      return false;
    }
    *p++ = c;
  }
  for (char c : suffix) *p++ = c;
  return true;
}

// A JSON string as Jackson's UTF8JsonGenerator writes it: '"' and '\'
// escaped, control characters as \b \t \n \f \r or \u00XX, BMP characters
// raw UTF-8, supplementary characters as an escaped surrogate pair.
// Malformed UTF-8 (which a Java String cannot hold) becomes U+FFFD.
void write_string(std::string& out, std::string_view s) {
  if (append_plain(out, "\"", s, "\"")) return;
  out.push_back('"');
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    size_t run = i;
    while (run < n) {
      auto c = static_cast<unsigned char>(s[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out.append(s.data() + i, run - i);
    i = run;
    if (i >= n) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      kc::append_json_escape(out, c);  // the run above stopped here, so it needs one
      ++i;
      continue;
    }
    // Multi-byte UTF-8 sequence.
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    unsigned cp = len == 4 ? (c & 0x07u) : len == 3 ? (c & 0x0Fu) : (c & 0x1Fu);
    bool valid = len != 0 && i + len <= n && c != 0xC0 && c != 0xC1 && c <= 0xF4;
    for (size_t k = 1; valid && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if (valid && ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
      valid = false;
    if (!valid) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      unsigned v = cp - 0x10000;
      kc::append_json_u_escape(out, 0xD800 + (v >> 10));
      kc::append_json_u_escape(out, 0xDC00 + (v & 0x3FF));
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  out.push_back('"');
}

// Double.toString / Float.toString layout of a finite non-zero number,
// appended without temporaries. `sci` is std::to_chars' shortest
// scientific form ("-1.2345e+07"). Same result as java_float_layout in
// value.cpp (checked by tests/unit/converter_vectors through the vectors):
// plain notation for 1e-3 <= |x| < 1e7, else d.dddE[-]n.
void append_java_layout(std::string& out, std::string_view sci) {
  char buf[64];
  size_t n = 0;
  if (!sci.empty() && sci[0] == '-') {
    buf[n++] = '-';
    sci.remove_prefix(1);
  }
  size_t epos = sci.find('e');
  std::string_view mant = sci.substr(0, epos);
  int exp10 = 0;
  {
    std::string_view e = sci.substr(epos + 1);
    if (!e.empty() && e[0] == '+') e.remove_prefix(1);
    std::from_chars(e.data(), e.data() + e.size(), exp10);
  }
  char digits[32];
  size_t nd = 0;
  for (char c : mant)
    if (c != '.') digits[nd++] = c;
  auto put = [&](char c) { buf[n++] = c; };
  if (nd == 1 && digits[0] == '0') {
    put('0'), put('.'), put('0');
  } else if (exp10 >= -3 && exp10 < 7) {
    if (exp10 >= 0) {
      auto ip = static_cast<size_t>(exp10 + 1);
      for (size_t k = 0; k < ip; ++k) put(k < nd ? digits[k] : '0');
      put('.');
      if (nd > ip) {
        for (size_t k = ip; k < nd; ++k) put(digits[k]);
      } else {
        put('0');
      }
    } else {
      put('0'), put('.');
      for (int k = 0; k < -exp10 - 1; ++k) put('0');
      for (size_t k = 0; k < nd; ++k) put(digits[k]);
    }
  } else {
    put(digits[0]), put('.');
    if (nd > 1) {
      for (size_t k = 1; k < nd; ++k) put(digits[k]);
    } else {
      put('0');
    }
    put('E');
    auto r = std::to_chars(buf + n, buf + sizeof buf, exp10);
    n = static_cast<size_t>(r.ptr - buf);
  }
  out.append(buf, n);
}

void write_double(std::string& out, double d) {
  if (std::isfinite(d) && d != 0) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    append_java_layout(out, std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
    return;
  }
  if (std::isnan(d) || std::isinf(d)) {
    out.push_back('"');
    out += java_double_to_string(d);
    out.push_back('"');
  } else {
    out += java_double_to_string(d);
  }
}

void write_float(std::string& out, float f) {
  if (std::isfinite(f) && f != 0) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    append_java_layout(out, std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
    return;
  }
  if (std::isnan(f) || std::isinf(f)) {
    out.push_back('"');
    out += java_float_to_string(f);
    out.push_back('"');
  } else {
    out += java_float_to_string(f);
  }
}

void write_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));  // (ptr, len): not the iterator-range overload
}

void dump_node(const JNode& n, std::string& out) {
  switch (n.kind) {
    case JNode::Kind::Missing:
    case JNode::Kind::Null: out += "null"; break;
    case JNode::Kind::Bool: out += n.b ? "true" : "false"; break;
    case JNode::Kind::Int:
      if (n.big)
        out += n.text;
      else
        write_int(out, n.i);
      break;
    case JNode::Kind::Float: out += n.text; break;
    case JNode::Kind::String: write_string(out, n.text); break;
    case JNode::Kind::Array:
      out.push_back('[');
      for (size_t k = 0; k < n.items.size(); ++k) {
        if (k) out.push_back(',');
        dump_node(n.items[k], out);
      }
      out.push_back(']');
      break;
    case JNode::Kind::Object:
      out.push_back('{');
      for (size_t k = 0; k < n.members.size(); ++k) {
        if (k) out.push_back(',');
        write_string(out, n.members[k].first);
        out.push_back(':');
        dump_node(n.members[k].second, out);
      }
      out.push_back('}');
      break;
  }
}

std::string_view json_type_name(Type t) {
  switch (t) {
    case Type::FLOAT32: return "float";
    case Type::FLOAT64: return "double";
    default: return type_lower_name(t);
  }
}

// ------------------------------------------------------------------ JsonNode accessors (Jackson semantics)

int64_t long_value(const JNode* n) {
  if (!n) return 0;
  if (n->kind == JNode::Kind::Int) return n->i;
  if (n->kind == JNode::Kind::Float) return static_cast<int64_t>(low64_of_number_text(n->text));
  return 0;
}
int32_t int_value(const JNode* n) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(long_value(n)))); }
double double_value(const JNode* n) {
  if (!n) return 0.0;
  if (n->kind == JNode::Kind::Int) return n->big ? std::strtod(n->text.c_str(), nullptr) : static_cast<double>(n->i);
  if (n->kind == JNode::Kind::Float) return std::strtod(n->text.c_str(), nullptr);
  return 0.0;
}
float float_value(const JNode* n) {
  if (!n) return 0.0f;
  if (n->kind == JNode::Kind::Int) return n->big ? std::strtof(n->text.c_str(), nullptr) : static_cast<float>(n->i);
  if (n->kind == JNode::Kind::Float) return std::strtof(n->text.c_str(), nullptr);
  return 0.0f;
}
bool is_int(const JNode* n) {  // Jackson isInt(): an IntNode (fits 32 bits)
  return n && n->kind == JNode::Kind::Int && !n->big && n->i >= INT32_MIN && n->i <= INT32_MAX;
}
bool is_integral(const JNode* n) { return n && n->kind == JNode::Kind::Int; }

}  // namespace

// ------------------------------------------------------------------ the conversions

struct JsonConverter::Impl {
  const JsonConverter& c;

  // convertToJson
  Status to_json(const Schema* schema, const Value& value, std::string& out) const {
    if (value.is_null()) {
      if (!schema) {
        out += "null";
        return ok_status();
      }
      if (schema->default_value() && c.replace_null_with_default_) return to_json(schema, *schema->default_value(), out);
      if (schema->optional()) {
        out += "null";
        return ok_status();
      }
      return data_error("Conversion error: null value for field that is required and has no default value");
    }
    if (schema && schema->name()) {
      const std::string& name = *schema->name();
      if (name == kDecimalLogicalName) {
        const auto* d = value.get_if<BigDecimal>();
        if (!d) return data_error("Invalid type for Decimal, expected BigDecimal but was class " + java_class_name(value));
        if (c.decimal_format_ == DecimalFormat::NUMERIC) {
          out += d->to_string();
          return ok_status();
        }
        auto bytes = decimal_from_logical(*schema, *d);
        if (!bytes) return bytes.error();
        out.push_back('"');
        base64_append(out, *bytes);
        out.push_back('"');
        return ok_status();
      }
      if (name == kDateLogicalName || name == kTimeLogicalName || name == kTimestampLogicalName) {
        std::string_view label = name == kDateLogicalName ? "Date" : name == kTimeLogicalName ? "Time" : "Timestamp";
        const auto* d = value.get_if<JavaDate>();
        if (!d)
          return data_error("Invalid type for " + std::string(label) + ", expected Date but was class " +
                            java_class_name(value));
        if (name == kDateLogicalName) {
          auto days = date_from_logical(*schema, *d);
          if (!days) return days.error();
          write_int(out, *days);
        } else if (name == kTimeLogicalName) {
          auto ms = time_from_logical(*schema, *d);
          if (!ms) return ms.error();
          write_int(out, *ms);
        } else {
          write_int(out, d->epoch_ms);
        }
        return ok_status();
      }
    }
    Type type;
    if (schema) {
      type = schema->type();
    } else {
      auto t = schemaless_type(value);
      if (!t)
        return data_error("Java class class " + java_class_name(value) + " does not have corresponding schema type.");
      type = *t;
    }
    auto mismatch = [&]() -> Status {
      return data_error("Invalid type for " + (schema ? std::string(type_name(schema->type())) : "unknown schema") +
                        ": class " + java_class_name(value));
    };
    switch (type) {
      case Type::INT8:
        if (!value.is<int8_t>()) return mismatch();
        write_int(out, value.as<int8_t>());
        return ok_status();
      case Type::INT16:
        if (!value.is<int16_t>()) return mismatch();
        write_int(out, value.as<int16_t>());
        return ok_status();
      case Type::INT32:
        if (!value.is<int32_t>()) return mismatch();
        write_int(out, value.as<int32_t>());
        return ok_status();
      case Type::INT64:
        if (!value.is<int64_t>()) return mismatch();
        write_int(out, value.as<int64_t>());
        return ok_status();
      case Type::FLOAT32:
        if (!value.is<float>()) return mismatch();
        write_float(out, value.as<float>());
        return ok_status();
      case Type::FLOAT64:
        if (!value.is<double>()) return mismatch();
        write_double(out, value.as<double>());
        return ok_status();
      case Type::BOOLEAN:
        if (!value.is<bool>()) return mismatch();
        out += value.as<bool>() ? "true" : "false";
        return ok_status();
      case Type::STRING:
        if (!value.is<std::string>()) return mismatch();
        write_string(out, value.as<std::string>());
        return ok_status();
      case Type::BYTES:
        if (!value.is<Bytes>()) return data_error("Invalid type for bytes type: class " + java_class_name(value));
        out.push_back('"');
        base64_append(out, value.as<Bytes>().data);
        out.push_back('"');
        return ok_status();
      case Type::ARRAY: {
        if (!value.is<Array>()) return mismatch();
        const Schema* elem = schema ? schema->value_schema().get() : nullptr;
        out.push_back('[');
        bool first = true;
        for (const auto& e : value.as<Array>()) {
          if (!first) out.push_back(',');
          first = false;
          auto st = to_json(elem, e, out);
          if (!st) return st;
        }
        out.push_back(']');
        return ok_status();
      }
      case Type::MAP: {
        if (!value.is<Map>()) return mismatch();
        const auto& map = value.as<Map>();
        const Schema* ks = schema ? schema->key_schema().get() : nullptr;
        const Schema* vs = schema ? schema->value_schema().get() : nullptr;
        bool object_mode;
        if (schema)
          object_mode = ks && ks->type() == Type::STRING;
        else
          object_mode = std::all_of(map.begin(), map.end(), [](const auto& e) { return e.first.template is<std::string>(); });
        out.push_back(object_mode ? '{' : '[');
        bool first = true;
        std::string key_json;
        for (const auto& [k, v] : map) {
          if (!first) out.push_back(',');
          first = false;
          if (object_mode) {
            if (const auto* ksv = k.get_if<std::string>()) {
              write_string(out, *ksv);
            } else {
              // JsonNode.asText() of whatever the key converted to.
              key_json.clear();
              auto st = to_json(ks, k, key_json);
              if (!st) return st;
              write_string(out, k.is_null() ? std::string("null") : java_to_string(k));
            }
            out.push_back(':');
            auto st = to_json(vs, v, out);
            if (!st) return st;
          } else {
            out.push_back('[');
            auto st = to_json(ks, k, out);
            if (!st) return st;
            out.push_back(',');
            st = to_json(vs, v, out);
            if (!st) return st;
            out.push_back(']');
          }
        }
        out.push_back(object_mode ? '}' : ']');
        return ok_status();
      }
      case Type::STRUCT: {
        if (!value.is<Struct>()) return mismatch();
        const auto& s = value.as<Struct>();
        if (!schema || !(*s.schema() == *schema)) return data_error("Mismatching schema.");
        out.push_back('{');
        bool first = true;
        for (const auto& f : schema->fields()) {
          if (!append_plain(out, first ? "\"" : ",\"", f.name, "\":")) {
            if (!first) out.push_back(',');
            write_string(out, f.name);
            out.push_back(':');
          }
          first = false;
          auto st = to_json(f.schema.get(), s.at(static_cast<size_t>(f.index)), out);
          if (!st) return st;
        }
        out.push_back('}');
        return ok_status();
      }
    }
    return data_error("Couldn't convert " + java_to_string(value) + " to JSON.");
  }

  // asJsonSchema, without the closing brace (struct fields append "field").
  Status schema_body(const Schema& s, std::string& out) const {
    out += "{\"type\":\"";
    out += json_type_name(s.type());
    out.push_back('"');
    switch (s.type()) {
      case Type::ARRAY: {
        out += ",\"items\":";
        auto st = schema_json(s.value_schema().get(), out);
        if (!st) return st;
        break;
      }
      case Type::MAP: {
        out += ",\"keys\":";
        auto st = schema_json(s.key_schema().get(), out);
        if (!st) return st;
        out += ",\"values\":";
        st = schema_json(s.value_schema().get(), out);
        if (!st) return st;
        break;
      }
      case Type::STRUCT: {
        out += ",\"fields\":[";
        bool first = true;
        for (const auto& f : s.fields()) {
          if (!first) out.push_back(',');
          first = false;
          auto st = schema_body(*f.schema, out);
          if (!st) return st;
          out += ",\"field\":";
          write_string(out, f.name);
          out.push_back('}');
        }
        out.push_back(']');
        break;
      }
      default: break;
    }
    out += s.optional() ? ",\"optional\":true" : ",\"optional\":false";
    if (s.name()) {
      out += ",\"name\":";
      write_string(out, *s.name());
    }
    if (s.version()) {
      out += ",\"version\":";
      write_int(out, *s.version());
    }
    if (s.doc()) {
      out += ",\"doc\":";
      write_string(out, *s.doc());
    }
    if (s.parameters()) {
      out += ",\"parameters\":{";
      bool first = true;
      for (const auto& [k, v] : *s.parameters()) {
        if (!first) out.push_back(',');
        first = false;
        write_string(out, k);
        out.push_back(':');
        write_string(out, v);
      }
      out.push_back('}');
    }
    if (s.default_value()) {
      out += ",\"default\":";
      auto st = to_json(&s, *s.default_value(), out);
      if (!st) return st;
    }
    return ok_status();
  }

  Status schema_json(const Schema* s, std::string& out) const {
    if (!s) {
      out += "null";
      return ok_status();
    }
    auto st = schema_body(*s, out);
    if (!st) return st;
    out.push_back('}');
    return ok_status();
  }

  // asConnectSchema
  Result<SchemaPtr> connect_schema(const JNode& n) const {
    if (n.kind == JNode::Kind::Null) return SchemaPtr();
    const JNode* type = n.get("type");
    if (!type || type->kind != JNode::Kind::String) return data_error("Schema must contain 'type' field");
    const std::string& t = type->text;
    std::optional<SchemaBuilder> builder;
    if (t == "float") {
      builder.emplace(Type::FLOAT32);
    } else if (t == "double") {
      builder.emplace(Type::FLOAT64);
    } else if (t == "array") {
      const JNode* items = n.get("items");
      if (!items || items->kind == JNode::Kind::Null) return data_error("Array schema did not specify the element type");
      auto elem = connect_schema(*items);
      if (!elem) return elem.error();
      builder.emplace(SchemaBuilder::array(*elem));
    } else if (t == "map") {
      const JNode* keys = n.get("keys");
      if (!keys) return data_error("Map schema did not specify the key type");
      const JNode* values = n.get("values");
      if (!values) return data_error("Map schema did not specify the value type");
      auto ks = connect_schema(*keys);
      if (!ks) return ks.error();
      auto vs = connect_schema(*values);
      if (!vs) return vs.error();
      builder.emplace(SchemaBuilder::map(*ks, *vs));
    } else if (t == "struct") {
      builder.emplace(Type::STRUCT);
      const JNode* fields = n.get("fields");
      if (!fields || fields->kind != JNode::Kind::Array)
        return data_error("Struct schema's \"fields\" argument is not an array.");
      for (const auto& f : fields->items) {
        const JNode* fname = f.get("field");
        if (!fname || fname->kind != JNode::Kind::String)
          return data_error("Struct schema's field name not specified properly");
        auto fs = connect_schema(f);
        if (!fs) return fs.error();
        builder->field(fname->text, *fs);
      }
    } else {
      auto parsed = type_from_lower_name(t);
      if (!parsed || *parsed == Type::FLOAT32 || *parsed == Type::FLOAT64 || !is_primitive(*parsed))
        return data_error("Unknown schema type: " + t);
      builder.emplace(*parsed);
    }
    const JNode* opt = n.get("optional");
    if (opt && opt->kind == JNode::Kind::Bool && opt->b)
      builder->optional();
    else
      builder->required();
    if (const JNode* name = n.get("name"); name && name->kind == JNode::Kind::String) builder->name(name->text);
    if (const JNode* ver = n.get("version"); is_integral(ver)) builder->version(int_value(ver));
    if (const JNode* doc = n.get("doc"); doc && doc->kind == JNode::Kind::String) builder->doc(doc->text);
    if (const JNode* params = n.get("parameters"); params && params->kind == JNode::Kind::Object) {
      Parameters ps;
      for (const auto& [k, v] : params->members) {
        if (v.kind != JNode::Kind::String) return data_error("Schema parameters must have string values.");
        ps.emplace_back(k, v.text);
      }
      builder->parameters(ps);
    }
    if (const JNode* dflt = n.get("default")) {
      auto so_far = builder->build();
      if (!so_far) return so_far.error();
      auto v = to_connect(*so_far, dflt);
      if (!v) return v.error();
      builder->default_value(std::move(*v));
    }
    return builder->build();
  }

  // convertToConnect
  Result<Value> to_connect(const SchemaPtr& schema, const JNode* n) const {
    Type type;
    if (schema) {
      type = schema->type();
      if (!n || n->kind == JNode::Kind::Null) {
        if (schema->default_value() && c.replace_null_with_default_) return *schema->default_value();
        if (schema->optional()) return Value();
        return data_error("Invalid null value for required " + std::string(type_name(type)) + " field");
      }
    } else {
      if (!n) return Value();
      switch (n->kind) {
        case JNode::Kind::Missing:
        case JNode::Kind::Null: return Value();
        case JNode::Kind::Bool: type = Type::BOOLEAN; break;
        case JNode::Kind::Int: type = Type::INT64; break;
        case JNode::Kind::Float: type = Type::FLOAT64; break;
        case JNode::Kind::String: type = Type::STRING; break;
        case JNode::Kind::Array: type = Type::ARRAY; break;
        case JNode::Kind::Object: type = Type::MAP; break;
        default: return data_error("Unknown schema type: null");
      }
    }
    if (schema && schema->name()) {
      const std::string& name = *schema->name();
      if (name == kDecimalLogicalName) {
        if (n->kind == JNode::Kind::Int) {
          if (n->big) return Value(BigDecimal::parse(n->text).value());
          return Value(BigDecimal::from_int64(n->i, 0));
        }
        if (n->kind == JNode::Kind::Float) {
          auto d = BigDecimal::parse(n->text);
          if (!d) return d.error();
          return Value(std::move(*d));
        }
        if (n->kind == JNode::Kind::String) {
          auto bytes = base64_decode(n->text);
          if (!bytes) return data_error("Invalid bytes for Decimal field");
          auto d = decimal_to_logical(*schema, *bytes);
          if (!d) return data_error("Invalid bytes for Decimal field");
          return Value(std::move(*d));
        }
        return data_error(
            std::string("Invalid type for Decimal, underlying representation should be numeric or bytes but was ") +
            node_type(n));
      }
      if (name == kDateLogicalName || name == kTimeLogicalName) {
        bool date = name == kDateLogicalName;
        if (!is_int(n))
          return data_error(std::string("Invalid type for ") + (date ? "Date" : "Time") +
                            ", underlying representation should be integer but was " + node_type(n));
        auto d = date ? date_to_logical(*schema, int_value(n)) : time_to_logical(*schema, int_value(n));
        if (!d) return d.error();
        return Value(*d);
      }
      if (name == kTimestampLogicalName) {
        if (!is_integral(n))
          return data_error(std::string("Invalid type for Timestamp, underlying representation should be integral but was ") +
                            node_type(n));
        auto d = timestamp_to_logical(*schema, long_value(n));
        if (!d) return d.error();
        return Value(*d);
      }
    }
    switch (type) {
      case Type::BOOLEAN: return Value(n->kind == JNode::Kind::Bool && n->b);
      case Type::INT8: return Value(static_cast<int8_t>(int_value(n)));
      case Type::INT16: return Value(static_cast<int16_t>(int_value(n)));
      case Type::INT32: return Value(int_value(n));
      case Type::INT64: return Value(long_value(n));
      case Type::FLOAT32: return Value(float_value(n));
      case Type::FLOAT64: return Value(double_value(n));
      case Type::BYTES: {
        if (n->kind != JNode::Kind::String) return Value();
        auto bytes = base64_decode(n->text);
        if (!bytes) return data_error("Invalid bytes field");
        return Value(Bytes{std::move(*bytes)});
      }
      case Type::STRING:
        if (n->kind != JNode::Kind::String) return Value();
        return Value(n->text);
      case Type::ARRAY: {
        SchemaPtr elem = schema ? schema->value_schema() : nullptr;
        Array out;
        if (n->kind == JNode::Kind::Array) {
          out.reserve(n->items.size());
          for (const auto& e : n->items) {
            auto v = to_connect(elem, &e);
            if (!v) return v.error();
            out.push_back(std::move(*v));
          }
        } else if (n->kind == JNode::Kind::Object) {
          for (const auto& [k, e] : n->members) {
            auto v = to_connect(elem, &e);
            if (!v) return v.error();
            out.push_back(std::move(*v));
          }
        }
        return Value(std::move(out));
      }
      case Type::MAP: {
        SchemaPtr ks = schema ? schema->key_schema() : nullptr;
        SchemaPtr vs = schema ? schema->value_schema() : nullptr;
        Map out;
        if (!schema || (ks && ks->type() == Type::STRING)) {
          if (n->kind != JNode::Kind::Object)
            return data_error(std::string("Maps with string fields should be encoded as JSON objects, but found ") +
                              node_type(n));
          out.reserve(n->members.size());
          for (const auto& [k, e] : n->members) {
            auto v = to_connect(vs, &e);
            if (!v) return v.error();
            out.emplace_back(Value(k), std::move(*v));
          }
        } else {
          if (n->kind != JNode::Kind::Array)
            return data_error(
                std::string("Maps with non-string fields should be encoded as JSON array of tuples, but found ") +
                node_type(n));
          for (const auto& entry : n->items) {
            if (entry.kind != JNode::Kind::Array)
              return data_error(std::string("Found invalid map entry instead of array tuple: ") + node_type(&entry));
            if (entry.items.size() != 2)
              return data_error("Found invalid map entry, expected length 2 but found :" +
                                std::to_string(entry.items.size()));
            auto k = to_connect(ks, &entry.items[0]);
            if (!k) return k.error();
            auto v = to_connect(vs, &entry.items[1]);
            if (!v) return v.error();
            // A Java map keeps one entry per key: a later duplicate replaces.
            auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == *k; });
            if (it != out.end())
              it->second = std::move(*v);
            else
              out.emplace_back(std::move(*k), std::move(*v));
          }
        }
        return Value(std::move(out));
      }
      case Type::STRUCT: {
        if (n->kind != JNode::Kind::Object)
          return data_error(std::string("Structs should be encoded as JSON objects, but found ") + node_type(n));
        Struct s(schema);
        for (const auto& f : schema->fields()) {
          auto v = to_connect(f.schema, n->get(f.name));
          if (!v) return v.error();
          if (v->is_null()) continue;
          auto st = validate_value(f.name.c_str(), *f.schema, *v);
          if (!st) return st.error();
          s.put_unchecked(static_cast<size_t>(f.index), std::move(*v));
        }
        return Value(std::move(s));
      }
    }
    return data_error("Unknown schema type: null");
  }
};

// ------------------------------------------------------------------ JsonConverter

Status JsonConverter::configure(const ConverterConfig& config, bool) {
  auto se = config_bool(config, "schemas.enable", true);
  if (!se) return se.error();
  auto cs = config_int(config, "schemas.cache.size", 1000);
  if (!cs) return cs.error();
  auto rn = config_bool(config, "replace.null.with.default", true);
  if (!rn) return rn.error();
  DecimalFormat df = DecimalFormat::BASE64;
  if (auto it = config.find("decimal.format"); it != config.end()) {
    std::string v = it->second;
    auto b = v.find_first_not_of(" \t\r\n");
    auto e = v.find_last_not_of(" \t\r\n");
    v = b == std::string::npos ? "" : v.substr(b, e - b + 1);
    std::string upper = v;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char ch) { return std::toupper(ch); });
    if (upper == "BASE64")
      df = DecimalFormat::BASE64;
    else if (upper == "NUMERIC")
      df = DecimalFormat::NUMERIC;
    else
      return Error{"decimal.format", "Invalid value " + v +
                                         " for configuration decimal.format: String must be one of (case "
                                         "insensitive): NUMERIC, BASE64"};
  }
  schemas_enable_ = *se;
  cache_size_ = std::max<int32_t>(0, *cs);
  replace_null_with_default_ = *rn;
  decimal_format_ = df;
  return ok_status();
}

Result<std::string> JsonConverter::as_json_schema(const SchemaPtr& schema) const {
  std::string out;
  if (!schema) return std::string("null");
  if (cache_size_ > 0) {
    std::lock_guard lock(from_mu_);
    if (auto it = from_index_.find(schema.get()); it != from_index_.end()) {
      from_lru_.splice(from_lru_.begin(), from_lru_, it->second);
      return it->second->second.json;
    }
  }
  Impl impl{*this};
  auto st = impl.schema_json(schema.get(), out);
  if (!st) return st.error();
  if (cache_size_ > 0) {
    std::lock_guard lock(from_mu_);
    if (from_index_.find(schema.get()) == from_index_.end()) {
      from_lru_.emplace_front(schema.get(), FromEntry{schema, out});
      from_index_[schema.get()] = from_lru_.begin();
      while (from_lru_.size() > static_cast<size_t>(cache_size_)) {
        from_index_.erase(from_lru_.back().first);
        from_lru_.pop_back();
      }
    }
  }
  return out;
}

Result<std::optional<std::string>> JsonConverter::from_connect(std::string_view, const SchemaPtr& schema,
                                                               const Value& value) const {
  if (!schema && value.is_null()) return std::optional<std::string>();
  Impl impl{*this};
  std::string out;
  if (schemas_enable_) {
    // The envelope's schema text comes from the cache when it can, appended
    // straight from the cache entry (no copy of a text that is usually most
    // of the record). The payload is typically about half the schema text's
    // size, so one reservation covers the whole record.
    bool cached = false;
    if (schema && cache_size_ > 0) {
      std::lock_guard lock(from_mu_);
      if (auto it = from_index_.find(schema.get()); it != from_index_.end()) {
        from_lru_.splice(from_lru_.begin(), from_lru_, it->second);
        const std::string& js = it->second->second.json;
        out.reserve(js.size() + js.size() / 2 + 128);
        out += "{\"schema\":";
        out += js;
        cached = true;
      }
    }
    if (!cached) {
      auto js = as_json_schema(schema);
      if (!js) return js.error();
      out.reserve(js->size() + js->size() / 2 + 128);
      out += "{\"schema\":";
      out += *js;
    }
    out += ",\"payload\":";
    auto st = impl.to_json(schema.get(), value, out);
    if (!st) return st.error();
    out.push_back('}');
  } else {
    out.reserve(256);
    auto st = impl.to_json(schema.get(), value, out);
    if (!st) return st.error();
  }
  return std::optional<std::string>(std::move(out));
}

Result<SchemaAndValue> JsonConverter::to_connect(std::string_view, const std::string* bytes) const {
  if (!bytes) return SchemaAndValue{};
  auto tree = parse_tree(*bytes);
  if (!tree) return tree.error();
  const JNode& root = *tree;
  Impl impl{*this};
  if (!schemas_enable_) {
    auto v = impl.to_connect(nullptr, &root);
    if (!v) return v.error();
    return SchemaAndValue{nullptr, std::move(*v)};
  }
  if (root.kind != JNode::Kind::Object || root.members.size() != 2 || !root.get("schema") || !root.get("payload"))
    return data_error(kEnvelopeError);
  const JNode& schema_node = *root.get("schema");
  SchemaPtr schema;
  if (schema_node.kind != JNode::Kind::Null) {
    std::string key;
    if (cache_size_ > 0) {
      dump_node(schema_node, key);
      std::lock_guard lock(to_mu_);
      if (auto it = to_index_.find(key); it != to_index_.end()) {
        to_lru_.splice(to_lru_.begin(), to_lru_, it->second);
        schema = it->second->second;
      }
    }
    if (!schema) {
      auto s = impl.connect_schema(schema_node);
      if (!s) return s.error();
      schema = *s;
      if (cache_size_ > 0) {
        std::lock_guard lock(to_mu_);
        if (to_index_.find(key) == to_index_.end()) {
          to_lru_.emplace_front(key, schema);
          to_index_[key] = to_lru_.begin();
          while (to_lru_.size() > static_cast<size_t>(cache_size_)) {
            to_index_.erase(to_lru_.back().first);
            to_lru_.pop_back();
          }
        }
      }
    }
  }
  auto v = impl.to_connect(schema, root.get("payload"));
  if (!v) return v.error();
  return SchemaAndValue{std::move(schema), std::move(*v)};
}

}  // namespace kc::converters
