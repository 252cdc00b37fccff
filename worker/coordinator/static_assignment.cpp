// Static member assignment file: see static_assignment.h.
#include "worker/coordinator/static_assignment.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "common/json_bounds.h"
#include "protocol/connect/codec.h"

namespace kc::coordinator {

namespace {

constexpr int kFormat = 1;

std::optional<std::vector<uint8_t>> from_hex(const std::string& text) {
  if (text.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]);
    const int lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<uint8_t>((hi << 4) | lo));
  }
  return out;
}

Error os_error(const std::string& path, const std::string& what) {
  return Error{"static.membership.assignment.file", what + " " + path + ": " + std::strerror(errno)};
}

}  // namespace

Result<std::string> format_static_assignment(const StaticAssignmentRecord& r) {
  auto snapshot = connect::encode_assignment(r.snapshot);
  if (!snapshot) return snapshot.error();
  nlohmann::json j{{"format", kFormat},
                   {"group_id", r.group_id},
                   {"group_instance_id", r.group_instance_id},
                   {"generation", r.generation},
                   {"member_id", r.member_id},
                   {"protocol", r.protocol},
                   {"snapshot", connect::to_hex(snapshot.value())},
                   {"received", connect::to_hex(r.received)},
                   {"url", r.url}};
  return j.dump() + "\n";
}

Result<StaticAssignmentRecord> parse_static_assignment(const std::string& text) {
  // The file is outside bytes too (edited, truncated): bounded like the rest.
  auto j = kc::parse_json_bounded<nlohmann::json>(text).value;
  if (!j.is_object()) return Error{"", "not a JSON object"};
  if (!j.contains("format") || !j["format"].is_number_integer() || j["format"].get<int>() != kFormat) {
    return Error{"format", "unknown format (expected " + std::to_string(kFormat) + ")"};
  }
  StaticAssignmentRecord r;
  for (auto [key, field] : {std::pair{"group_id", &r.group_id}, std::pair{"group_instance_id", &r.group_instance_id},
                            std::pair{"member_id", &r.member_id}, std::pair{"protocol", &r.protocol}}) {
    if (!j.contains(key) || !j[key].is_string()) return Error{key, "missing or not a string"};
    *field = j[key].get<std::string>();
  }
  if (!j.contains("generation") || !j["generation"].is_number_integer()) {
    return Error{"generation", "missing or not an integer"};
  }
  r.generation = j["generation"].get<int32_t>();
  if (j.contains("url")) {
    if (!j["url"].is_string()) return Error{"url", "not a string"};
    r.url = j["url"].get<std::string>();
  }
  std::vector<uint8_t> snapshot;
  for (auto [key, out] : {std::pair{"snapshot", &snapshot}, std::pair{"received", &r.received}}) {
    if (!j.contains(key) || !j[key].is_string()) return Error{key, "missing or not a string"};
    auto bytes = from_hex(j[key].get<std::string>());
    if (!bytes) return Error{key, "not lower-case hex"};
    *out = std::move(*bytes);
  }
  auto decoded = connect::decode_assignment(snapshot);
  if (!decoded) return Error{"snapshot", decoded.error().to_string()};
  r.snapshot = std::move(decoded.value());
  return r;
}

Result<std::optional<StaticAssignmentRecord>> load_static_assignment(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<StaticAssignmentRecord>{};
    return os_error(path, "cannot read");
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto r = parse_static_assignment(text.str());
  if (!r) return Error{"static.membership.assignment.file", path + ": " + r.error().to_string()};
  return std::optional<StaticAssignmentRecord>(std::move(r.value()));
}

Status save_static_assignment(const std::string& path, const StaticAssignmentRecord& r) {
  auto text = format_static_assignment(r);
  if (!text) return text.error();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return os_error(tmp, "cannot write");
    out << text.value();
    out.flush();
    if (!out) return os_error(tmp, "cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return os_error(path, "cannot replace");
  return ok_status();
}

std::optional<int64_t> static_assignment_age_ms(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t now_ms = static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
  const int64_t mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  return std::max<int64_t>(0, now_ms - mtime_ms);
}

void touch_static_assignment(const std::string& path) {
  (void)::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
}

Status remove_static_assignment(const std::string& path) {
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) return os_error(path, "cannot delete");
  return ok_status();
}

}  // namespace kc::coordinator
