#include "worker/converters/converters.h"
#include "worker/converters/data_error.h"
#include "common/strings.h"

#include <iconv.h>

#include <algorithm>
#include <charconv>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "worker/converters/json_converter.h"
#include "worker/data/values.h"

namespace kc::converters {

using namespace data;

namespace {

// ---- charsets through iconv ----

// Java charset name (case-insensitive, common aliases) -> iconv name and
// whether Java writes a big-endian BOM (Java's "UTF-16" encoder does).
struct Charset {
  std::string java;
  std::string iconv;
  bool bom = false;
};

std::optional<Charset> lookup_charset(std::string_view name) {
  std::string u = ascii_upper(name);
  if (u == "UTF-8" || u == "UTF8") return Charset{"UTF-8", "UTF-8"};
  if (u == "UTF-16" || u == "UTF16") return Charset{"UTF-16", "UTF-16BE", true};
  if (u == "UTF-16BE") return Charset{"UTF-16BE", "UTF-16BE"};
  if (u == "UTF-16LE") return Charset{"UTF-16LE", "UTF-16LE"};
  if (u == "ISO-8859-1" || u == "ISO8859-1" || u == "ISO_8859_1" || u == "LATIN1" || u == "ISO-LATIN-1")
    return Charset{"ISO-8859-1", "ISO-8859-1"};
  if (u == "US-ASCII" || u == "ASCII") return Charset{"US-ASCII", "ASCII"};
  if (u == "UTF-32" || u == "UTF32") return Charset{"UTF-32", "UTF-32BE"};
  // Anything else iconv knows, under its own name.
  iconv_t cd = iconv_open("UTF-8", u.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return std::nullopt;
  iconv_close(cd);
  return Charset{u, u};
}

// Converts `in` from `from` to `to`. On input iconv cannot convert, emits
// `replacement` (already in the target encoding) and skips `skip_unit`
// bytes (or one UTF-8 character when from is UTF-8).
std::string iconv_convert(const std::string& from, const std::string& to, std::string_view in,
                          std::string_view replacement, bool from_utf8, size_t skip_unit) {
  iconv_t cd = iconv_open(to.c_str(), from.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return std::string(in);
  std::string out;
  out.resize(in.size() * 4 + 16);
  char* inp = const_cast<char*>(in.data());
  size_t inleft = in.size();
  char* outp = out.data();
  size_t outleft = out.size();
  while (inleft > 0) {
    size_t r = iconv(cd, &inp, &inleft, &outp, &outleft);
    if (r != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) {
      size_t used = static_cast<size_t>(outp - out.data());
      out.resize(out.size() * 2);
      outp = out.data() + used;
      outleft = out.size() - used;
      continue;
    }
    // EILSEQ / EINVAL: replace one unit and go on.
    size_t skip = skip_unit;
    if (from_utf8) {
      auto c = static_cast<unsigned char>(*inp);
      skip = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    }
    skip = std::min(skip, inleft);
    inp += skip;
    inleft -= skip;
    size_t used = static_cast<size_t>(outp - out.data());
    if (outleft < replacement.size() + 8) {
      out.resize(out.size() * 2 + replacement.size());
      outp = out.data() + used;
      outleft = out.size() - used;
    }
    std::memcpy(outp, replacement.data(), replacement.size());
    outp += replacement.size();
    outleft -= replacement.size();
  }
  out.resize(static_cast<size_t>(outp - out.data()));
  iconv_close(cd);
  return out;
}

template <typename T>
void put_be(std::string& out, T v) {
  using U = std::make_unsigned_t<T>;
  auto u = static_cast<U>(v);
  for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

template <typename T>
T get_be(std::string_view in) {
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (char c : in) u = static_cast<U>((u << 8) | static_cast<unsigned char>(c));
  return static_cast<T>(u);
}

struct NumberInfo {
  const char* type_name;      // NumberConverter's typeName
  const char* deserializer;   // the Kafka deserializer's size message
  size_t size;
};

NumberInfo number_info(Type t) {
  switch (t) {
    case Type::INT16: return {"short", "Size of data received by ShortDeserializer is not 2", 2};
    case Type::INT32: return {"integer", "Size of data received by IntegerDeserializer is not 4", 4};
    case Type::INT64: return {"long", "Size of data received by LongDeserializer is not 8", 8};
    case Type::FLOAT32: return {"float", "Size of data received by Deserializer is not 4", 4};
    default: return {"double", "Size of data received by Deserializer is not 8", 8};
  }
}

struct ClassEntry {
  std::string_view full;
  std::string_view simple;
  std::string_view pruned;
};

const std::vector<ClassEntry>& class_table() {
  static const std::vector<ClassEntry> t{
      {kJsonConverterClass, "JsonConverter", "Json"},
      {kStringConverterClass, "StringConverter", "String"},
      {kByteArrayConverterClass, "ByteArrayConverter", "ByteArray"},
      {kShortConverterClass, "ShortConverter", "Short"},
      {kIntegerConverterClass, "IntegerConverter", "Integer"},
      {kLongConverterClass, "LongConverter", "Long"},
      {kFloatConverterClass, "FloatConverter", "Float"},
      {kDoubleConverterClass, "DoubleConverter", "Double"},
      {kSimpleHeaderConverterClass, "SimpleHeaderConverter", "SimpleHeader"},
  };
  return t;
}

std::unique_ptr<HeaderConvertingConverter> new_converter(std::string_view full) {
  if (full == kJsonConverterClass) return std::make_unique<JsonConverter>();
  if (full == kStringConverterClass) return std::make_unique<StringConverter>();
  if (full == kByteArrayConverterClass) return std::make_unique<ByteArrayConverter>();
  if (full == kShortConverterClass) return std::make_unique<NumberConverter>(Type::INT16);
  if (full == kIntegerConverterClass) return std::make_unique<NumberConverter>(Type::INT32);
  if (full == kLongConverterClass) return std::make_unique<NumberConverter>(Type::INT64);
  if (full == kFloatConverterClass) return std::make_unique<NumberConverter>(Type::FLOAT32);
  if (full == kDoubleConverterClass) return std::make_unique<NumberConverter>(Type::FLOAT64);
  return nullptr;
}

}  // namespace

// ------------------------------------------------------------------ config

Result<bool> config_bool(const ConverterConfig& config, const std::string& key, bool dflt) {
  auto it = config.find(key);
  if (it == config.end()) return dflt;
  std::string v = ascii_upper(trim(it->second));
  if (v == "TRUE") return true;
  if (v == "FALSE") return false;
  return Error{key, "Invalid value " + it->second + " for configuration " + key +
                        ": Expected value to be either true or false"};
}

Result<int32_t> config_int(const ConverterConfig& config, const std::string& key, int32_t dflt) {
  auto it = config.find(key);
  if (it == config.end()) return dflt;
  std::string v = trim(it->second);
  int32_t out = 0;
  const char* b = v.data();
  const char* e = b + v.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  if (v.empty() || ec != std::errc() || p != e)
    return Error{key, "Invalid value " + it->second + " for configuration " + key + ": Not a number of type INT"};
  return out;
}

// ------------------------------------------------------------------ factory

const std::vector<std::string_view>& converter_class_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& e : class_table()) v.push_back(e.full);
    return v;
  }();
  return names;
}

std::optional<std::string_view> resolve_converter_class(std::string_view name) {
  for (const auto& e : class_table())
    if (name == e.full || name == e.simple || name == e.pruned) return e.full;
  return std::nullopt;
}

Result<std::unique_ptr<Converter>> make_converter(std::string_view class_name, const ConverterConfig& config,
                                                  bool is_key) {
  auto full = resolve_converter_class(class_name);
  if (!full) return Error{"", "Class " + std::string(class_name) + " could not be found."};
  auto c = new_converter(*full);
  if (!c) return Error{"", std::string(*full) + " is not a Converter"};
  auto st = c->configure(config, is_key);
  if (!st) return st.error();
  return std::unique_ptr<Converter>(std::move(c));
}

Result<std::unique_ptr<HeaderConverter>> make_header_converter(std::string_view class_name,
                                                               const ConverterConfig& config) {
  auto full = resolve_converter_class(class_name);
  if (!full) return Error{"", "Class " + std::string(class_name) + " could not be found."};
  std::unique_ptr<HeaderConverter> h;
  if (*full == kSimpleHeaderConverterClass)
    h = std::make_unique<SimpleHeaderConverter>();
  else
    h = new_converter(*full);
  auto st = h->configure(config);
  if (!st) return st.error();
  return h;
}

// ------------------------------------------------------------------ StringConverter

Status StringConverter::configure(const ConverterConfig& config, bool) {
  std::string name = "UTF-8";
  if (auto it = config.find("converter.encoding"); it != config.end()) name = trim(it->second);
  auto cs = lookup_charset(name);
  if (!cs) return Error{"converter.encoding", "Unsupported encoding " + name};
  encoding_ = cs->java;
  utf8_ = cs->iconv == "UTF-8";
  return ok_status();
}

Result<std::optional<std::string>> StringConverter::from_connect(std::string_view, const SchemaPtr&,
                                                                 const Value& value) const {
  if (value.is_null()) return std::optional<std::string>();
  std::string text = java_to_string(value);
  if (utf8_ || value.is<Bytes>()) return std::optional<std::string>(std::move(text));
  auto cs = lookup_charset(encoding_);
  std::string replacement = iconv_convert("UTF-8", cs->iconv, "?", "", true, 1);
  std::string out = iconv_convert("UTF-8", cs->iconv, text, replacement, true, 1);
  if (cs->bom) out.insert(0, "\xFE\xFF");
  return std::optional<std::string>(std::move(out));
}

Result<SchemaAndValue> StringConverter::to_connect(std::string_view, const std::string* bytes) const {
  if (!bytes) return SchemaAndValue{OPTIONAL_STRING_SCHEMA(), Value()};
  if (utf8_) return SchemaAndValue{OPTIONAL_STRING_SCHEMA(), Value(*bytes)};
  auto cs = lookup_charset(encoding_);
  std::string_view in = *bytes;
  std::string from = cs->iconv;
  size_t unit = 1;
  if (cs->iconv.rfind("UTF-16", 0) == 0) unit = 2;
  if (cs->iconv.rfind("UTF-32", 0) == 0) unit = 4;
  if (cs->bom && in.size() >= 2) {  // Java's UTF-16 decoder honours a BOM
    if (in[0] == '\xFE' && in[1] == '\xFF') {
      in.remove_prefix(2);
      from = "UTF-16BE";
    } else if (in[0] == '\xFF' && in[1] == '\xFE') {
      in.remove_prefix(2);
      from = "UTF-16LE";
    }
  }
  return SchemaAndValue{OPTIONAL_STRING_SCHEMA(), Value(iconv_convert(from, "UTF-8", in, "\xEF\xBF\xBD", false, unit))};
}

// ------------------------------------------------------------------ ByteArrayConverter

Result<std::optional<std::string>> ByteArrayConverter::from_connect(std::string_view, const SchemaPtr& schema,
                                                                    const Value& value) const {
  if (schema && schema->type() != Type::BYTES)
    return data_error("Invalid schema type for ByteArrayConverter: " + std::string(type_name(schema->type())));
  if (value.is_null()) return std::optional<std::string>();
  if (!value.is<Bytes>())
    return data_error("ByteArrayConverter is not compatible with objects of type class " + java_class_name(value));
  return std::optional<std::string>(value.as<Bytes>().data);
}

Result<SchemaAndValue> ByteArrayConverter::to_connect(std::string_view, const std::string* bytes) const {
  if (!bytes) return SchemaAndValue{OPTIONAL_BYTES_SCHEMA(), Value()};
  return SchemaAndValue{OPTIONAL_BYTES_SCHEMA(), Value(Bytes{*bytes})};
}

// ------------------------------------------------------------------ NumberConverter

Result<std::optional<std::string>> NumberConverter::from_connect(std::string_view, const SchemaPtr&,
                                                                 const Value& value) const {
  if (value.is_null()) return std::optional<std::string>();
  std::string out;
  switch (type_) {
    case Type::INT16:
      if (value.is<int16_t>()) put_be(out, value.as<int16_t>());
      break;
    case Type::INT32:
      if (value.is<int32_t>()) put_be(out, value.as<int32_t>());
      break;
    case Type::INT64:
      if (value.is<int64_t>()) put_be(out, value.as<int64_t>());
      break;
    case Type::FLOAT32:
      if (value.is<float>()) put_be(out, std::bit_cast<uint32_t>(value.as<float>()));
      break;
    default:
      if (value.is<double>()) put_be(out, std::bit_cast<uint64_t>(value.as<double>()));
      break;
  }
  if (out.empty())
    return data_error(std::string("Failed to serialize to ") + number_info(type_).type_name + " (was class " +
                      java_class_name(value) + "): ");
  return std::optional<std::string>(std::move(out));
}

Result<SchemaAndValue> NumberConverter::to_connect(std::string_view, const std::string* bytes) const {
  SchemaPtr schema = type_ == Type::INT16   ? OPTIONAL_INT16_SCHEMA()
                     : type_ == Type::INT32 ? OPTIONAL_INT32_SCHEMA()
                     : type_ == Type::INT64 ? OPTIONAL_INT64_SCHEMA()
                     : type_ == Type::FLOAT32 ? OPTIONAL_FLOAT32_SCHEMA()
                                              : OPTIONAL_FLOAT64_SCHEMA();
  if (!bytes) return SchemaAndValue{schema, Value()};
  NumberInfo info = number_info(type_);
  if (bytes->size() != info.size)
    return data_error(std::string("Failed to deserialize ") + info.type_name + ": " + info.deserializer);
  Value v;
  switch (type_) {
    case Type::INT16: v = get_be<int16_t>(*bytes); break;
    case Type::INT32: v = get_be<int32_t>(*bytes); break;
    case Type::INT64: v = get_be<int64_t>(*bytes); break;
    case Type::FLOAT32: v = std::bit_cast<float>(get_be<uint32_t>(*bytes)); break;
    default: v = std::bit_cast<double>(get_be<uint64_t>(*bytes)); break;
  }
  return SchemaAndValue{schema, std::move(v)};
}

// ------------------------------------------------------------------ SimpleHeaderConverter

Result<std::optional<std::string>> SimpleHeaderConverter::from_connect_header(std::string_view, std::string_view,
                                                                              const SchemaPtr& schema,
                                                                              const Value& value) const {
  if (value.is_null()) return std::optional<std::string>();
  return std::optional<std::string>(values_convert_to_string(schema, value));
}

Result<SchemaAndValue> SimpleHeaderConverter::to_connect_header(std::string_view, std::string_view,
                                                                const std::string* bytes) const {
  if (!bytes) return SchemaAndValue{};
  return values_parse_string(*bytes);
}

}  // namespace kc::converters
