#include "worker/transforms/date_format.h"

#include <array>
#include <cctype>
#include <chrono>
#include <cstring>

namespace kc::transforms {

namespace {

constexpr std::string_view kLetters = "GyYMLwWdDFEuaHkKhmsSzZX";
constexpr std::array<const char*, 12> kMonths = {"January", "February", "March",     "April",   "May",      "June",
                                                 "July",    "August",   "September", "October", "November", "December"};
// Index 0 = Sunday, as Calendar.DAY_OF_WEEK - 1.
constexpr std::array<const char*, 7> kDays = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
constexpr int64_t kDayMs = 86400000;
// Epoch day of 1582-10-15, the first Gregorian day of Java's default cutover.
constexpr int64_t kCutoverDay = -141427;
constexpr int64_t kEpochJdn = 2440588;  // Julian day number of 1970-01-01

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

// Proleptic Gregorian (Howard Hinnant's algorithm).
int64_t days_from_gregorian(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = floor_div(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}
void gregorian_from_days(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = floor_div(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = yoe + era * 400 + (m <= 2);
}
// Julian calendar via Julian day numbers (valid well before year 0).
int64_t days_from_julian(int64_t y, int64_t m, int64_t d) {
  const int64_t a = (14 - m) / 12;
  const int64_t yy = y + 4800 - a;
  const int64_t mm = m + 12 * a - 3;
  return d + (153 * mm + 2) / 5 + 365 * yy + floor_div(yy, 4) - 32083 - kEpochJdn;
}
void julian_from_days(int64_t days, int64_t& y, int64_t& m, int64_t& d) {
  const int64_t c = days + kEpochJdn + 32082;
  const int64_t dd = floor_div(4 * c + 3, 1461);
  const int64_t e = c - floor_div(1461 * dd, 4);
  const int64_t mm = (5 * e + 2) / 153;
  d = e - (153 * mm + 2) / 5 + 1;
  m = mm + 3 - 12 * (mm / 10);
  y = dd - 4800 + mm / 10;
}
void civil_from_days(int64_t days, int64_t& y, int64_t& m, int64_t& d) {
  if (days >= kCutoverDay)
    gregorian_from_days(days, y, m, d);
  else
    julian_from_days(days, y, m, d);
}
// Lenient: month and day may overflow; the calendar is chosen as
// GregorianCalendar does around the cutover.
int64_t days_from_civil_lenient(int64_t y, int64_t m, int64_t d) {
  y += floor_div(m - 1, 12);
  m = floor_mod(m - 1, 12) + 1;
  int64_t g = days_from_gregorian(y, m, 1) + (d - 1);
  if (g >= kCutoverDay) return g;
  return days_from_julian(y, m, 1) + (d - 1);
}

std::string pad(int64_t v, int width) {
  std::string s = std::to_string(v < 0 ? -v : v);
  if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<size_t>(width) - s.size(), '0');
  return v < 0 ? "-" + s : s;
}

bool is_numeric_letter(char c) { return std::strchr("yYMLwWdDFuHkKhmsS", c) != nullptr; }

}  // namespace

Result<SimpleDateFormat> SimpleDateFormat::compile(std::string_view p) {
  SimpleDateFormat f;
  f.pattern_ = std::string(p);
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '\'') {
      if (i + 1 < p.size() && p[i + 1] == '\'') {
        f.items_.push_back(Item{0, 0, "'"});
        i += 2;
        continue;
      }
      std::string text;
      size_t j = i + 1;
      bool closed = false;
      while (j < p.size()) {
        if (p[j] == '\'') {
          if (j + 1 < p.size() && p[j + 1] == '\'') {
            text.push_back('\'');
            j += 2;
            continue;
          }
          closed = true;
          break;
        }
        text.push_back(p[j++]);
      }
      if (!closed) return Error{"", "Unterminated quote"};
      f.items_.push_back(Item{0, 0, text});
      i = j + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      if (kLetters.find(c) == std::string_view::npos) return Error{"", std::string("Illegal pattern character '") + c + "'"};
      size_t j = i;
      while (j < p.size() && p[j] == c) ++j;
      f.items_.push_back(Item{c, static_cast<int>(j - i), {}});
      i = j;
    } else {
      f.items_.push_back(Item{0, 0, std::string(1, c)});
      ++i;
    }
  }
  return f;
}

std::string SimpleDateFormat::format(int64_t ms) const {
  const int64_t days = floor_div(ms, kDayMs);
  const int64_t tod = ms - days * kDayMs;
  int64_t y, m, d;
  civil_from_days(days, y, m, d);
  const int64_t dow = floor_mod(days + 4, 7);  // 1970-01-01 was a Thursday
  int64_t jan1;
  {
    jan1 = days_from_civil_lenient(y, 1, 1);
  }
  const int64_t doy = days - jan1 + 1;
  const int64_t hour = tod / 3600000, minute = tod / 60000 % 60, sec = tod / 1000 % 60, milli = tod % 1000;
  std::string out;
  for (const Item& it : items_) {
    int n = it.count;
    switch (it.letter) {
      case 0: out += it.text; break;
      case 'G': out += y > 0 ? "AD" : "BC"; break;
      case 'y':
      case 'Y': {
        int64_t ye = y > 0 ? y : 1 - y;
        out += n == 2 ? pad(ye % 100, 2) : pad(ye, n);
        break;
      }
      case 'M':
      case 'L':
        if (n >= 4) out += kMonths[static_cast<size_t>(m - 1)];
        else if (n == 3) out += std::string(kMonths[static_cast<size_t>(m - 1)]).substr(0, 3);
        else out += pad(m, n);
        break;
      case 'd': out += pad(d, n); break;
      case 'D': out += pad(doy, n); break;
      case 'F': out += pad((d - 1) / 7 + 1, n); break;
      case 'w': {
        const int64_t jan1_dow = floor_mod(jan1 + 4, 7);
        out += pad((doy - 1 + jan1_dow) / 7 + 1, n);
        break;
      }
      case 'W': {
        const int64_t first_dow = floor_mod(days - (d - 1) + 4, 7);
        out += pad((d - 1 + first_dow) / 7 + 1, n);
        break;
      }
      case 'E':
        out += n >= 4 ? std::string(kDays[static_cast<size_t>(dow)]) : std::string(kDays[static_cast<size_t>(dow)]).substr(0, 3);
        break;
      case 'u': out += pad(dow == 0 ? 7 : dow, n); break;
      case 'a': out += hour < 12 ? "AM" : "PM"; break;
      case 'H': out += pad(hour, n); break;
      case 'k': out += pad(hour == 0 ? 24 : hour, n); break;
      case 'K': out += pad(hour % 12, n); break;
      case 'h': out += pad(hour % 12 == 0 ? 12 : hour % 12, n); break;
      case 'm': out += pad(minute, n); break;
      case 's': out += pad(sec, n); break;
      case 'S': out += pad(milli, n); break;
      case 'z': out += n >= 4 ? "Coordinated Universal Time" : "UTC"; break;
      case 'Z': out += "+0000"; break;
      case 'X': out += "Z"; break;
      default: break;
    }
  }
  return out;
}

Result<int64_t> SimpleDateFormat::parse(std::string_view s) const {
  auto fail = [&]() { return Error{"", "Unparseable date: \"" + std::string(s) + "\""}; };
  int64_t year = 1970, month = 1, day = 1, doy = -1, hour = 0, minute = 0, sec = 0, milli = 0, offset_ms = 0;
  int ampm = -1;
  bool h12 = false, bc = false;
  size_t pos = 0;
  auto starts_ci = [&](std::string_view word) {
    if (s.size() - pos < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(s[pos + i])) != std::tolower(static_cast<unsigned char>(word[i])))
        return false;
    return true;
  };
  for (size_t k = 0; k < items_.size(); ++k) {
    const Item& it = items_[k];
    if (it.letter == 0) {
      if (s.substr(pos, it.text.size()) != it.text) return fail();
      pos += it.text.size();
      continue;
    }
    const bool abutting = k + 1 < items_.size() && items_[k + 1].letter != 0 && is_numeric_letter(items_[k + 1].letter);
    if (is_numeric_letter(it.letter) && !((it.letter == 'M' || it.letter == 'L') && it.count >= 3)) {
      bool neg = false;
      size_t start = pos;
      if (pos < s.size() && (s[pos] == '-' || s[pos] == '+') && !abutting) {
        neg = s[pos] == '-';
        ++pos;
      }
      size_t digits_start = pos;
      size_t limit = abutting ? static_cast<size_t>(it.count) : 18;
      int64_t v = 0;
      while (pos < s.size() && pos - digits_start < limit && std::isdigit(static_cast<unsigned char>(s[pos])))
        v = v * 10 + (s[pos++] - '0');
      if (pos == digits_start) {
        pos = start;
        return fail();
      }
      if (neg) v = -v;
      switch (it.letter) {
        case 'y':
        case 'Y':
          year = v;
          // A two-digit year with a yy pattern lands within 80 years before / 20 after now.
          if (it.count <= 2 && pos - digits_start == 2 && !neg) {
            const auto now = std::chrono::system_clock::now();
            const int64_t now_days = std::chrono::duration_cast<std::chrono::hours>(now.time_since_epoch()).count() / 24;
            int64_t ny, nm, nd;
            gregorian_from_days(now_days, ny, nm, nd);
            int64_t start_year = ny - 80;
            year = (start_year / 100) * 100 + v;
            if (year < start_year) year += 100;
          }
          break;
        case 'M':
        case 'L': month = v; break;
        case 'd': day = v; break;
        case 'D': doy = v; break;
        case 'H': hour = v; break;
        case 'k': hour = v == 24 ? 0 : v; break;
        case 'K': hour = v; h12 = true; break;
        case 'h': hour = v == 12 ? 0 : v; h12 = true; break;
        case 'm': minute = v; break;
        case 's': sec = v; break;
        case 'S': milli = v; break;
        default: break;  // u, F, w, W: read and ignored
      }
      continue;
    }
    switch (it.letter) {
      case 'M':
      case 'L': {
        bool found = false;
        for (size_t i = 0; i < 12 && !found; ++i) {
          std::string full = kMonths[i];
          if (starts_ci(full)) { pos += full.size(); month = static_cast<int64_t>(i) + 1; found = true; }
          else if (starts_ci(full.substr(0, 3))) { pos += 3; month = static_cast<int64_t>(i) + 1; found = true; }
        }
        if (!found) return fail();
        break;
      }
      case 'E': {
        bool found = false;
        for (size_t i = 0; i < 7 && !found; ++i) {
          std::string full = kDays[i];
          if (starts_ci(full)) { pos += full.size(); found = true; }
          else if (starts_ci(full.substr(0, 3))) { pos += 3; found = true; }
        }
        if (!found) return fail();
        break;
      }
      case 'a':
        if (starts_ci("AM")) { ampm = 0; pos += 2; }
        else if (starts_ci("PM")) { ampm = 1; pos += 2; }
        else return fail();
        break;
      case 'G':
        if (starts_ci("AD")) { pos += 2; }
        else if (starts_ci("BC")) { bc = true; pos += 2; }
        else return fail();
        break;
      case 'z':
      case 'Z':
      case 'X': {
        if (starts_ci("Coordinated Universal Time")) { pos += 26; break; }
        if (starts_ci("UTC") || starts_ci("GMT")) {
          pos += 3;
          if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) break;
        } else if (pos < s.size() && s[pos] == 'Z') {
          ++pos;
          break;
        }
        if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) return fail();
        int sign = s[pos] == '-' ? -1 : 1;
        ++pos;
        auto two = [&](int64_t& out) {
          if (pos + 2 > s.size() || !std::isdigit(static_cast<unsigned char>(s[pos])) ||
              !std::isdigit(static_cast<unsigned char>(s[pos + 1])))
            return false;
          out = (s[pos] - '0') * 10 + (s[pos + 1] - '0');
          pos += 2;
          return true;
        };
        int64_t hh = 0, mm = 0;
        if (!two(hh)) return fail();
        if (pos < s.size() && s[pos] == ':') ++pos;
        two(mm);
        offset_ms = sign * (hh * 3600000 + mm * 60000);
        break;
      }
      default: return fail();
    }
  }
  if (h12 && ampm == 1) hour += 12;
  if (bc) year = 1 - year;
  int64_t days = doy >= 0 ? days_from_civil_lenient(year, 1, 1) + doy - 1 : days_from_civil_lenient(year, month, day);
  return days * kDayMs + hour * 3600000 + minute * 60000 + sec * 1000 + milli - offset_ms;
}

}  // namespace kc::transforms
