#include "worker/data/values.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/strings.h"
#include "worker/data/base64.h"

namespace kc::data {

namespace {

// Values.dateFormatFor: the pattern follows the value (UTC, proleptic
// Gregorian): before one day (negative included) a time, a whole day a
// date, otherwise a timestamp.
std::string values_date_text(JavaDate d) {
  int64_t ms = d.epoch_ms;
  int64_t days = floor_div(ms, kMillisPerDay);
  int64_t in_day = ms - days * kMillisPerDay;
  char buf[64];
  auto time_of_day = [&](char* p, size_t n) {
    std::snprintf(p, n, "%02d:%02d:%02d.%03dZ", static_cast<int>(in_day / 3600000), static_cast<int>(in_day / 60000 % 60),
                  static_cast<int>(in_day / 1000 % 60), static_cast<int>(in_day % 1000));
  };
  if (ms < kMillisPerDay) {
    time_of_day(buf, sizeof buf);
    return buf;
  }
  // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
  int64_t z = days + 719468;
  int64_t era = floor_div(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t dd = doy - (153 * mp + 2) / 5 + 1;
  int64_t mm = mp < 10 ? mp + 3 : mp - 9;
  if (mm <= 2) ++y;
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(y), static_cast<long long>(mm),
                        static_cast<long long>(dd));
  if (in_day == 0) return buf;
  buf[n] = 'T';
  time_of_day(buf + n + 1, sizeof buf - static_cast<size_t>(n) - 1);
  return buf;
}

void append_value_text(std::string& out, const Value& v, bool embedded) {
  if (v.is_null()) {
    out += "null";
    return;
  }
  if (const auto* s = v.get_if<std::string>()) {
    if (embedded) {
      out.push_back('"');
      for (char c : *s) {
        if (c == '"' || c == '\\') out.push_back('\\');
        out.push_back(c);
      }
      out.push_back('"');
    } else {
      out += *s;
    }
    return;
  }
  if (const auto* b = v.get_if<Bytes>()) {
    out += base64_encode(b->data);
    return;
  }
  if (const auto* a = v.get_if<Array>()) {
    out.push_back('[');
    for (size_t i = 0; i < a->size(); ++i) {
      if (i) out.push_back(',');
      append_value_text(out, (*a)[i], true);
    }
    out.push_back(']');
    return;
  }
  if (const auto* m = v.get_if<Map>()) {
    out.push_back('{');
    for (size_t i = 0; i < m->size(); ++i) {
      if (i) out.push_back(',');
      append_value_text(out, (*m)[i].first, true);
      out.push_back(':');
      append_value_text(out, (*m)[i].second, true);
    }
    out.push_back('}');
    return;
  }
  if (const auto* st = v.get_if<Struct>()) {
    out.push_back('{');
    bool first = true;
    for (const auto& f : st->schema()->fields()) {
      if (!first) out.push_back(',');
      first = false;
      append_value_text(out, Value(f.name), true);
      out.push_back(':');
      append_value_text(out, st->at(static_cast<size_t>(f.index)), true);
    }
    out.push_back('}');
    return;
  }
  if (const auto* d = v.get_if<JavaDate>()) {
    out += values_date_text(*d);
    return;
  }
  out += java_to_string(v);
}

}  // namespace

std::string values_convert_to_string(const SchemaPtr&, const Value& value) {
  std::string out;
  append_value_text(out, value, false);
  return out;
}

SchemaAndValue values_parse_string(std::string_view raw) {
  if (raw.empty()) return SchemaAndValue{STRING_SCHEMA(), Value(std::string())};
  std::string text = trim(raw);
  if (text == "null") return SchemaAndValue{nullptr, Value()};
  if (text == "true") return SchemaAndValue{BOOLEAN_SCHEMA(), Value(true)};
  if (text == "false") return SchemaAndValue{BOOLEAN_SCHEMA(), Value(false)};
  // A number: Values.parseString reads it as a BigDecimal, then picks the
  // smallest integer type for an integral value ("1e3" -> INT16), else
  // FLOAT32 / FLOAT64 when finite, else a Decimal.
  if (text.find_first_not_of("+-0123456789.eE") == std::string::npos) {
    if (auto d = BigDecimal::parse(text)) {
      std::string digits = d->unscaled_decimal();
      bool neg = digits[0] == '-';
      if (neg) digits.erase(0, 1);
      bool integral = true;
      if (d->scale > 0) {
        auto s = static_cast<size_t>(d->scale);
        std::string frac = digits.size() > s ? digits.substr(digits.size() - s) : digits;
        integral = frac.find_first_not_of('0') == std::string::npos;
        digits = digits.size() > s ? digits.substr(0, digits.size() - s) : "0";
      } else if (d->scale < 0 && digits != "0") {
        if (-static_cast<int64_t>(d->scale) > 20) integral = false;  // beyond int64 anyway
        else digits.append(static_cast<size_t>(-d->scale), '0');
      }
      int64_t v = 0;
      std::string signed_digits = (neg ? "-" : "") + digits;
      auto [p, ec] = std::from_chars(signed_digits.data(), signed_digits.data() + signed_digits.size(), v);
      if (integral && ec == std::errc() && p == signed_digits.data() + signed_digits.size()) {
        if (v >= INT8_MIN && v <= INT8_MAX) return SchemaAndValue{INT8_SCHEMA(), Value(static_cast<int8_t>(v))};
        if (v >= INT16_MIN && v <= INT16_MAX) return SchemaAndValue{INT16_SCHEMA(), Value(static_cast<int16_t>(v))};
        if (v >= INT32_MIN && v <= INT32_MAX) return SchemaAndValue{INT32_SCHEMA(), Value(static_cast<int32_t>(v))};
        return SchemaAndValue{INT64_SCHEMA(), Value(v)};
      }
      float f = std::strtof(text.c_str(), nullptr);
      if (std::isfinite(f) && d->scale != 0) return SchemaAndValue{FLOAT32_SCHEMA(), Value(f)};
      double dv = std::strtod(text.c_str(), nullptr);
      if (std::isfinite(dv) && d->scale != 0) return SchemaAndValue{FLOAT64_SCHEMA(), Value(dv)};
      return SchemaAndValue{decimal_builder(d->scale).build().value(), Value(*d)};
    }
  }
  return SchemaAndValue{STRING_SCHEMA(), Value(std::string(raw))};
}

}  // namespace kc::data
