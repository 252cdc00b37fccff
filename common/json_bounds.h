#pragma once
// The one parser for JSON that comes from outside (REST bodies, internal
// topic records, converter input, replies of other workers). It runs
// nlohmann's SAX parser with a depth check on every array/object start, so
// no tree deeper than the bound is ever built and nothing recursive (copy,
// dump, compare, destroy) ever meets one. Errors never quote the text.
// Header-only; any thread.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kc {

/// Deepest nesting of arrays and objects accepted from outside: 64 levels
/// (`[[1]]` is 2). Connect's own entities need 3.
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Thrown by writers (storage's to_compact_json) asked to write JSON deeper
/// than every reader accepts.
class JsonTooDeep : public std::runtime_error {
 public:
  explicit JsonTooDeep(std::size_t limit)
      : std::runtime_error("JSON nests deeper than " + std::to_string(limit) + " levels") {}
};

/// Why a bounded parse refused its text.
struct JsonParseError {
  enum class Kind {
    Syntax,            ///< malformed text, invalid UTF-8, trailing content (strict parses)
    TooDeep,           ///< an array/object would open past the depth bound
    NumberOutOfRange,  ///< a number too large for a double (1e999)
  };
  Kind kind = Kind::Syntax;
  std::size_t byte = 0;  ///< where the parse stopped (nlohmann's byte count)
  /// JSON Pointer (RFC 6901) of the value being read: "/offsets/0/partition";
  /// "" for the top-level value. Inside an object it names the last key read.
  std::string path;
  /// The innermost non-empty object key on `path` ("" when none): REST names
  /// it in "the number for key 'k' is out of range".
  std::string key;
  /// What went wrong, never quoting the text (a token may be a secret):
  /// "nests deeper than 64 levels of arrays and objects", "the number for key
  /// 'k' is out of range" (or "a number at byte N is out of range"), or
  /// nlohmann's syntax message without its "; last read: '<token>'" tail.
  std::string message;
};

/// A SAX handler that forwards every event to `Inner` (nlohmann's DOM
/// builder, or a caller's own tree builder) after checking the depth, and
/// keeps the key path so an error can say where it happened. Use it through
/// sax_parse_bounded / parse_json_bounded.
template <typename Json, typename Inner>
class BoundedJsonSax {
 public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  BoundedJsonSax(Inner& inner, std::size_t max_depth) : inner_(inner), max_depth_(max_depth) {}

  bool null() { return begin_value() && inner_.null(); }
  bool boolean(bool v) { return begin_value() && inner_.boolean(v); }
  bool number_integer(number_integer_t v) { return begin_value() && inner_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return begin_value() && inner_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return begin_value() && inner_.number_float(v, s); }
  bool string(string_t& v) { return begin_value() && inner_.string(v); }
  bool binary(binary_t& v) { return begin_value() && inner_.binary(v); }
  bool start_object(std::size_t n) { return begin_value() && enter(false) && inner_.start_object(n); }
  bool key(string_t& k) {
    frames_.back().has_key = true;
    frames_.back().key = k;
    return inner_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return inner_.end_object();
  }
  bool start_array(std::size_t n) { return begin_value() && enter(true) && inner_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return inner_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& /*last_token: may be a secret*/,
                   const nlohmann::detail::exception& ex) {
    JsonParseError e;
    e.byte = position;
    locate(e, /*pending=*/true);
    if (ex.id == 406) {  // out_of_range.406: a number too large for a double
      e.kind = JsonParseError::Kind::NumberOutOfRange;
      e.message = e.key.empty() ? "a number at byte " + std::to_string(position) + " is out of range"
                                : "the number for key '" + e.key + "' is out of range";
    } else {
      e.kind = JsonParseError::Kind::Syntax;
      e.message = ex.what();
      // nlohmann ends syntax errors with "; last read: '<token>'": cut it.
      if (auto cut = e.message.find("; last read:"); cut != std::string::npos) e.message.erase(cut);
    }
    error_ = std::move(e);
    return false;
  }

  /// Why the parse stopped, once it has (nullopt while it has not, or when
  /// `Inner` itself refused an event).
  [[nodiscard]] std::optional<JsonParseError>& error() { return error_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t begun = 0;  ///< elements begun so far (arrays)
    bool has_key = false;   ///< a key has been read (objects)
    std::string key;        ///< the last key read (objects)
  };

  // Counts the element a value starts in its array, so a path can index it.
  bool begin_value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().begun;
    return true;
  }

  bool enter(bool array) {
    if (frames_.size() >= max_depth_) {
      JsonParseError e;
      e.kind = JsonParseError::Kind::TooDeep;
      locate(e, /*pending=*/false);
      e.message = "nests deeper than " + std::to_string(max_depth_) + " levels of arrays and objects";
      error_ = std::move(e);
      return false;
    }
    frames_.push_back(Frame{array, 0, false, {}});
    return true;
  }

  // `pending`: the value being read has not begun (a token the lexer
  // refused), so the innermost array's index is the next one.
  void locate(JsonParseError& e, bool pending) const {
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.array) {
        const bool innermost = i + 1 == frames_.size();
        e.path += '/' + std::to_string(innermost && pending ? f.begun : (f.begun ? f.begun - 1 : 0));
      } else if (f.has_key) {
        e.path += '/';
        for (char c : f.key) {  // RFC 6901 escapes
          if (c == '~') e.path += "~0";
          else if (c == '/') e.path += "~1";
          else e.path += c;
        }
        if (!f.key.empty()) e.key = f.key;
      }
    }
  }

  Inner& inner_;
  std::size_t max_depth_;
  std::vector<Frame> frames_;  // one per open array/object
  std::optional<JsonParseError> error_;
};

/// Runs nlohmann's SAX parser over `text`, feeding `inner` (a SAX handler for
/// `Json`'s types) through BoundedJsonSax. Returns nullopt on success, or why
/// it stopped: past `max_depth` levels no start_object/start_array reaches
/// `inner`. `strict` = false stops after the first value (trailing content
/// ignored), as Jackson's readTree does. If `inner` refuses an event, or
/// throws a nlohmann exception, the error is a Syntax "cannot be parsed".
template <typename Json, typename Inner>
std::optional<JsonParseError> sax_parse_bounded(std::string_view text, Inner& inner,
                                                std::size_t max_depth = kMaxJsonDepth, bool strict = true) {
  BoundedJsonSax<Json, Inner> sax(inner, max_depth);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.data(), text.data() + text.size(), &sax, Json::input_format_t::json, strict);
  } catch (const nlohmann::json::exception&) {  // an inner builder's own checks; never quotes input
    ok = false;
  }
  if (ok) return std::nullopt;
  if (!sax.error()) sax.error() = JsonParseError{JsonParseError::Kind::Syntax, 0, "", "", "cannot be parsed"};
  return std::move(sax.error());
}

/// The result of parse_json_bounded: the tree, or why there is none.
template <typename Json>
struct BoundedJson {
  Json value;                           ///< the parsed tree when `error` is empty
  std::optional<JsonParseError> error;  ///< why the text was refused
  explicit operator bool() const { return !error; }
};

/// Parses outside JSON into a `Json` tree (nlohmann::json, or ordered_json to
/// keep member order), refusing nesting past `max_depth` while parsing, a
/// number beyond double range, invalid UTF-8 and any syntax error; `strict`
/// as in sax_parse_bounded. The one JSON parse for bytes from outside.
template <typename Json>
BoundedJson<Json> parse_json_bounded(std::string_view text, std::size_t max_depth = kMaxJsonDepth,
                                     bool strict = true) {
  BoundedJson<Json> out;
  nlohmann::detail::json_sax_dom_parser<Json> dom(out.value, /*allow_exceptions=*/false);
  out.error = sax_parse_bounded<Json>(text, dom, max_depth, strict);
  if (out.error) out.value = Json();  // drop the partial tree (bounded, so destroying it is safe)
  return out;
}

}  // namespace kc
