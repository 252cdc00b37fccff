#pragma once
// A small field-descriptor DSL: each Kafka message is described once, as a
// Schema holding one Field per wire field (in wire order) with the versions it
// exists in, plus its nullable-from version and flags. encode_struct() and
// decode_struct() walk that one description for every version; the flexible
// encoding (compact lengths, tagged-field sections) is a flag of the walk, not
// a second description.
//
// Internal to protocol/kafka (used by schemas.cpp and the unit tests).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/result.h"
#include "protocol/kafka/messages.h"
#include "protocol/kafka/wire.h"

namespace kc::kafka::schema {

// ------------------------------------------------------------------ versions
/// Inclusive version range a field exists in; hi = kOpen means "and later".
struct Versions {
  static constexpr int16_t kOpen = INT16_MAX;
  int16_t lo = 0;
  int16_t hi = kOpen;
  [[nodiscard]] constexpr bool has(int16_t v) const { return v >= lo && v <= hi; }
  /// "5+" or "0-2".
  [[nodiscard]] std::string str() const {
    return hi == kOpen ? std::to_string(lo) + "+" : std::to_string(lo) + "-" + std::to_string(hi);
  }
};
/// Versions lo and later.
constexpr Versions since(int16_t lo) { return {lo, Versions::kOpen}; }
/// Versions lo..hi inclusive.
constexpr Versions upto(int16_t lo, int16_t hi) { return {lo, hi}; }

/// Field flags.
enum : unsigned {
  /// Kafka "ignorable": silently dropped when encoding a version that lacks it.
  kIgnorable = 1u,
  /// The value lives in another field at versions that lack this one (e.g.
  /// LeaveGroup v0-2 MemberId <-> members[0].member_id): no absent-version
  /// check when encoding, and no reset to the default when decoding.
  kMapped = 2u,
};

// ------------------------------------------------------------------ paths
/// Field path for error messages ("JoinGroupResponse.members[2].metadata"),
/// built as a chain on the stack and turned into a string only on failure.
struct Path {
  const Path* parent = nullptr;
  const char* name = nullptr;  ///< null for an array index segment
  size_t index = 0;

  [[nodiscard]] std::string str() const {
    std::string s = parent ? parent->str() : std::string();
    if (name) {
      if (!s.empty()) s += '.';
      s += name;
    } else {
      s += '[' + std::to_string(index) + ']';
    }
    return s;
  }
};

/// What one encode/decode walk needs to know about the wire form.
struct Ctx {
  const char* api;  ///< "JoinGroup"
  int16_t version;
  bool flexible;
};

// ------------------------------------------------------------------ access
/// Plain member access: `&JoinGroupRequest::group_id`.
template <class S, class M>
struct MemberAccess {
  using struct_type = S;
  using value_type = M;
  M S::*p;
  const M& get(const S& s) const { return s.*p; }
  std::optional<std::string> set(S& s, M&& v) const {
    s.*p = std::move(v);
    return std::nullopt;
  }
};

/// Access through a reference-returning function, for fields that alias a
/// slot of another field (FindCoordinator v0-3 Host <-> coordinators[0].host).
/// F is called with `S&` and with `const S&`.
template <class S, class M, class F>
struct RefAccess {
  using struct_type = S;
  using value_type = M;
  F f;
  const M& get(const S& s) const { return f(s); }
  std::optional<std::string> set(S& s, M&& v) const {
    f(s) = std::move(v);
    return std::nullopt;
  }
};

/// Access through a getter returning a value and a setter that may refuse
/// (returns an error message), for fields with another shape on the wire
/// (FindCoordinator v4 CoordinatorKeys <-> key).
template <class S, class M, class G, class St>
struct ConvAccess {
  using struct_type = S;
  using value_type = M;
  G g;
  St st;
  M get(const S& s) const { return g(s); }
  std::optional<std::string> set(S& s, M&& v) const { return st(s, std::move(v)); }
};

template <class S, class F>
constexpr auto via(F f) {
  using M = std::remove_cvref_t<decltype(f(std::declval<S&>()))>;
  return RefAccess<S, M, F>{f};
}
template <class S, class M, class G, class St>
constexpr auto conv(G g, St st) {
  return ConvAccess<S, M, G, St>{g, st};
}

template <class S, class M>
constexpr MemberAccess<S, M> to_access(M S::*p) {
  return {p};
}
template <class A>
  requires requires { typename A::struct_type; }
constexpr A to_access(A a) {
  return a;
}

/// First element of a vector, created on write; a shared empty one on read.
template <class T>
T& slot0(std::vector<T>& v) {
  if (v.empty()) v.emplace_back();
  return v.front();
}
template <class T>
const T& slot0(const std::vector<T>& v) {
  static const T empty{};
  return v.empty() ? empty : v.front();
}

// ------------------------------------------------------------------ kinds
/// Fixed-width big-endian integer (int8/16/32/64) with its Kafka default.
template <class T>
struct IntKind {
  int64_t dflt = 0;
};
/// Boolean (one byte).
struct BoolKind {};
/// Non-null string.
struct StrKind {};
/// Nullable string; null is valid on the wire from version `nullable_from`.
struct NStrKind {
  int16_t nullable_from = 0;
};
/// Non-null bytes.
struct BytesKind {};
/// Array of strings.
struct StrArrayKind {};
/// Array of structs described by `elem` (a Schema).
template <class Elem>
struct ArrayKind {
  Elem elem;
};

/// One wire field: name (snake_case, for error paths), versions, how to reach
/// the value in the struct, its wire kind and flags.
template <class A, class K>
struct Field {
  const char* name;
  Versions versions;
  A access;
  K kind;
  unsigned flags = 0;
};

/// An encode-time constraint that no single field expresses, checked at
/// `versions` (e.g. "LeaveGroup v0-2 carries at most one member").
/// `fn(const S&)` returns an error message or nullptr.
template <class S, class F>
struct Check {
  const char* name;
  Versions versions;
  F fn;
};

/// A message or nested struct: its name and fields in wire order.
template <class S, class... Fs>
struct Schema {
  using struct_type = S;
  const char* name;
  std::tuple<Fs...> fields;
};

template <class S, class... Fs>
constexpr Schema<S, Fs...> message(const char* name, Fs... fs) {
  return {name, std::tuple<Fs...>{fs...}};
}

// Field builders: the kind follows the member type.
template <class P>
constexpr auto Int(const char* n, P p, Versions v, unsigned flags = 0, int64_t dflt = 0) {
  auto a = to_access(p);
  using M = typename decltype(a)::value_type;
  static_assert(std::is_integral_v<M> && !std::is_same_v<M, bool>);
  return Field<decltype(a), IntKind<M>>{n, v, a, IntKind<M>{dflt}, flags};
}
template <class P>
constexpr auto Bool(const char* n, P p, Versions v, unsigned flags = 0) {
  auto a = to_access(p);
  return Field<decltype(a), BoolKind>{n, v, a, {}, flags};
}
template <class P>
constexpr auto Str(const char* n, P p, Versions v, unsigned flags = 0) {
  auto a = to_access(p);
  static_assert(std::is_same_v<typename decltype(a)::value_type, std::string>);
  return Field<decltype(a), StrKind>{n, v, a, {}, flags};
}
template <class P>
constexpr auto NStr(const char* n, P p, Versions v, int16_t nullable_from, unsigned flags = 0) {
  auto a = to_access(p);
  static_assert(std::is_same_v<typename decltype(a)::value_type, std::optional<std::string>>);
  return Field<decltype(a), NStrKind>{n, v, a, NStrKind{nullable_from}, flags};
}
template <class P>
constexpr auto Blob(const char* n, P p, Versions v, unsigned flags = 0) {
  auto a = to_access(p);
  static_assert(std::is_same_v<typename decltype(a)::value_type, Bytes>);
  return Field<decltype(a), BytesKind>{n, v, a, {}, flags};
}
template <class P>
constexpr auto StrArray(const char* n, P p, Versions v, unsigned flags = 0) {
  auto a = to_access(p);
  static_assert(std::is_same_v<typename decltype(a)::value_type, std::vector<std::string>>);
  return Field<decltype(a), StrArrayKind>{n, v, a, {}, flags};
}
template <class P, class E>
constexpr auto Array(const char* n, P p, Versions v, E elem, unsigned flags = 0) {
  auto a = to_access(p);
  static_assert(std::is_same_v<typename decltype(a)::value_type,
                               std::vector<typename E::struct_type>>);
  return Field<decltype(a), ArrayKind<E>>{n, v, a, ArrayKind<E>{elem}, flags};
}
template <class S, class F>
constexpr auto Constraint(const char* n, Versions v, F fn) {
  return Check<S, F>{n, v, fn};
}

// ------------------------------------------------------------------ defaults
template <class T>
bool is_default(const IntKind<T>& k, T v) {
  return static_cast<int64_t>(v) == k.dflt;
}
inline bool is_default(const BoolKind&, bool v) { return !v; }
inline bool is_default(const StrKind&, const std::string& v) { return v.empty(); }
inline bool is_default(const NStrKind&, const std::optional<std::string>& v) { return !v; }
inline bool is_default(const BytesKind&, const Bytes& v) { return v.empty(); }
inline bool is_default(const StrArrayKind&, const std::vector<std::string>& v) {
  return v.empty();
}
template <class E, class V>
bool is_default(const ArrayKind<E>&, const V& v) {
  return v.empty();
}

template <class T>
T default_value(const IntKind<T>& k) {
  return static_cast<T>(k.dflt);
}
inline bool default_value(const BoolKind&) { return false; }
inline std::string default_value(const StrKind&) { return {}; }
inline std::optional<std::string> default_value(const NStrKind&) { return std::nullopt; }
inline Bytes default_value(const BytesKind&) { return {}; }
inline std::vector<std::string> default_value(const StrArrayKind&) { return {}; }
template <class E>
std::vector<typename E::struct_type> default_value(const ArrayKind<E>&) {
  return {};
}

// ------------------------------------------------------------------ encode
template <class S, class... Fs>
bool encode_struct(wire::Writer& w, const Ctx& c, const Schema<S, Fs...>& sch, const S& s,
                   const Path& path, Error& err);

inline bool wire_ok(const std::optional<std::string>& e, const Path& p, Error& err) {
  if (!e) return true;
  err = Error{p.str(), *e};
  return false;
}

template <class T>
bool write_value(wire::Writer& w, const Ctx&, const IntKind<T>&, T v, const Path&, Error&) {
  if constexpr (sizeof(T) == 1) {
    w.i8(static_cast<int8_t>(v));
  } else if constexpr (sizeof(T) == 2) {
    w.i16(static_cast<int16_t>(v));
  } else if constexpr (sizeof(T) == 4) {
    w.i32(static_cast<int32_t>(v));
  } else {
    w.i64(static_cast<int64_t>(v));
  }
  return true;
}
inline bool write_value(wire::Writer& w, const Ctx&, const BoolKind&, bool v, const Path&,
                        Error&) {
  w.boolean(v);
  return true;
}
inline bool write_value(wire::Writer& w, const Ctx& c, const StrKind&, const std::string& v,
                        const Path& p, Error& err) {
  return wire_ok(w.string(v, c.flexible), p, err);
}
inline bool write_value(wire::Writer& w, const Ctx& c, const NStrKind& k,
                        const std::optional<std::string>& v, const Path& p, Error& err) {
  if (!v && c.version < k.nullable_from) {
    err = Error{p.str(), std::string("null, but ") + c.api + " v" + std::to_string(c.version) +
                             " cannot send null (nullable from v" +
                             std::to_string(k.nullable_from) + ")"};
    return false;
  }
  return wire_ok(w.nullable_string(v, c.flexible), p, err);
}
inline bool write_value(wire::Writer& w, const Ctx& c, const BytesKind&, const Bytes& v,
                        const Path& p, Error& err) {
  return wire_ok(w.bytes(v, c.flexible), p, err);
}
inline bool write_value(wire::Writer& w, const Ctx& c, const StrArrayKind&,
                        const std::vector<std::string>& v, const Path& p, Error& err) {
  if (!wire_ok(w.array_count(v.size(), c.flexible), p, err)) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!wire_ok(w.string(v[i], c.flexible), Path{&p, nullptr, i}, err)) return false;
  }
  return true;
}
template <class E>
bool write_value(wire::Writer& w, const Ctx& c, const ArrayKind<E>& k,
                 const std::vector<typename E::struct_type>& v, const Path& p, Error& err) {
  if (!wire_ok(w.array_count(v.size(), c.flexible), p, err)) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!encode_struct(w, c, k.elem, v[i], Path{&p, nullptr, i}, err)) return false;
  }
  return true;
}

template <class S, class A, class K>
bool encode_field(wire::Writer& w, const Ctx& c, const Field<A, K>& f, const S& s,
                  const Path& parent, Error& err) {
  const Path p{&parent, f.name};
  decltype(auto) v = f.access.get(s);
  if (f.versions.has(c.version)) return write_value(w, c, f.kind, v, p, err);
  if ((f.flags & (kIgnorable | kMapped)) != 0 || is_default(f.kind, v)) return true;
  err = Error{p.str(), std::string("set to a non-default value, but ") + c.api + " v" +
                           std::to_string(c.version) + " lacks this field (versions " +
                           f.versions.str() + ")"};
  return false;
}
template <class S, class F>
bool encode_field(wire::Writer&, const Ctx& c, const Check<S, F>& chk, const S& s,
                  const Path& parent, Error& err) {
  if (!chk.versions.has(c.version)) return true;
  if (const char* msg = chk.fn(s)) {
    err = Error{Path{&parent, chk.name}.str(),
                std::string(msg) + " at " + c.api + " v" + std::to_string(c.version)};
    return false;
  }
  return true;
}

template <class S, class... Fs>
bool encode_struct(wire::Writer& w, const Ctx& c, const Schema<S, Fs...>& sch, const S& s,
                   const Path& path, Error& err) {
  bool ok = true;
  std::apply([&](const auto&... f) { ((ok = ok && encode_field(w, c, f, s, path, err)), ...); },
             sch.fields);
  if (ok && c.flexible) w.empty_tagged_fields();
  return ok;
}

// ------------------------------------------------------------------ decode
template <class S, class... Fs>
bool decode_struct(wire::Reader& r, const Ctx& c, const Schema<S, Fs...>& sch, S& s,
                   const Path& path, Error& err);

inline bool read_ok(bool ok, const wire::Reader& r, const Path& p, Error& err) {
  if (ok) return true;
  err = Error{p.str(), r.error()};
  return false;
}

template <class T>
bool read_value(wire::Reader& r, const Ctx&, const IntKind<T>&, T& out, const Path& p,
                Error& err) {
  bool ok = false;
  if constexpr (sizeof(T) == 1) {
    int8_t v = 0;
    ok = r.i8(v);
    out = static_cast<T>(v);
  } else if constexpr (sizeof(T) == 2) {
    int16_t v = 0;
    ok = r.i16(v);
    out = static_cast<T>(v);
  } else if constexpr (sizeof(T) == 4) {
    int32_t v = 0;
    ok = r.i32(v);
    out = static_cast<T>(v);
  } else {
    int64_t v = 0;
    ok = r.i64(v);
    out = static_cast<T>(v);
  }
  return read_ok(ok, r, p, err);
}
inline bool read_value(wire::Reader& r, const Ctx&, const BoolKind&, bool& out, const Path& p,
                       Error& err) {
  return read_ok(r.boolean(out), r, p, err);
}
inline bool read_value(wire::Reader& r, const Ctx& c, const StrKind&, std::string& out,
                       const Path& p, Error& err) {
  return read_ok(r.string(out, c.flexible), r, p, err);
}
inline bool read_value(wire::Reader& r, const Ctx& c, const NStrKind& k,
                       std::optional<std::string>& out, const Path& p, Error& err) {
  return read_ok(r.nullable_string(out, c.flexible, c.version >= k.nullable_from), r, p, err);
}
inline bool read_value(wire::Reader& r, const Ctx& c, const BytesKind&, Bytes& out,
                       const Path& p, Error& err) {
  return read_ok(r.bytes(out, c.flexible), r, p, err);
}
/// Elements reserved up front at most; the rest grow as they are read, so a
/// large (but in-bounds) count cannot allocate far beyond the input size.
inline constexpr size_t kMaxReserve = 64;
inline bool read_value(wire::Reader& r, const Ctx& c, const StrArrayKind&,
                       std::vector<std::string>& out, const Path& p, Error& err) {
  size_t n = 0;
  if (!read_ok(r.array_count(n, c.flexible), r, p, err)) return false;
  out.clear();
  out.reserve(std::min(n, kMaxReserve));
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    if (!read_ok(r.string(s, c.flexible), r, Path{&p, nullptr, i}, err)) return false;
    out.push_back(std::move(s));
  }
  return true;
}
template <class E>
bool read_value(wire::Reader& r, const Ctx& c, const ArrayKind<E>& k,
                std::vector<typename E::struct_type>& out, const Path& p, Error& err) {
  size_t n = 0;
  if (!read_ok(r.array_count(n, c.flexible), r, p, err)) return false;
  out.clear();
  out.reserve(std::min(n, kMaxReserve));
  for (size_t i = 0; i < n; ++i) {
    typename E::struct_type e{};
    if (!decode_struct(r, c, k.elem, e, Path{&p, nullptr, i}, err)) return false;
    out.push_back(std::move(e));
  }
  return true;
}

template <class S, class A, class K>
bool decode_field(wire::Reader& r, const Ctx& c, const Field<A, K>& f, S& s, const Path& parent,
                  Error& err) {
  const Path p{&parent, f.name};
  if (!f.versions.has(c.version)) {
    if ((f.flags & kMapped) == 0) (void)f.access.set(s, default_value(f.kind));
    return true;
  }
  typename A::value_type v{};
  if (!read_value(r, c, f.kind, v, p, err)) return false;
  if (auto e = f.access.set(s, std::move(v))) {
    err = Error{p.str(), *e};
    return false;
  }
  return true;
}
template <class S, class F>
bool decode_field(wire::Reader&, const Ctx&, const Check<S, F>&, S&, const Path&, Error&) {
  return true;
}

template <class S, class... Fs>
bool decode_struct(wire::Reader& r, const Ctx& c, const Schema<S, Fs...>& sch, S& s,
                   const Path& path, Error& err) {
  bool ok = true;
  std::apply([&](const auto&... f) { ((ok = ok && decode_field(r, c, f, s, path, err)), ...); },
             sch.fields);
  if (ok && c.flexible && !r.skip_tagged_fields()) {
    err = Error{Path{&path, "tagged_fields"}.str(), r.error()};
    ok = false;
  }
  return ok;
}

}  // namespace kc::kafka::schema
