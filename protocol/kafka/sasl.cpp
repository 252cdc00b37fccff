// PLAIN and SCRAM client mechanisms over OpenSSL. See sasl.h for the contract.
#include "protocol/kafka/sasl.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>
#include <stdexcept>
#include <vector>

namespace kc::kafka {

namespace {

const EVP_MD* digest_of(SaslMechanism m) {
  switch (m) {
    case SaslMechanism::ScramSha512: return EVP_sha512();
    case SaslMechanism::ScramSha256: return EVP_sha256();
    case SaslMechanism::Plain: return EVP_sha256();
  }
  return EVP_sha256();
}

Bytes to_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

BytesView view_of(std::string_view s) {
  return BytesView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string_view text_of(BytesView b) {
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}

// Splits a SCRAM message into its "x=value" attributes, in order. A part
// without "x=" gives name '\0', which every caller rejects.
std::vector<std::pair<char, std::string_view>> attributes(std::string_view msg) {
  std::vector<std::pair<char, std::string_view>> out;
  size_t start = 0;
  while (start <= msg.size()) {
    size_t comma = msg.find(',', start);
    if (comma == std::string_view::npos) comma = msg.size();
    std::string_view part = msg.substr(start, comma - start);
    if (part.size() >= 2 && part[1] == '=') {
      out.emplace_back(part[0], part.substr(2));
    } else {
      out.emplace_back('\0', part);
    }
    start = comma + 1;
  }
  return out;
}

// Printable ASCII except ',' (RFC 5802 "printable").
bool printable_nonce(std::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e || c == ',') return false;
  }
  return !s.empty();
}

}  // namespace

const char* sasl_mechanism_name(SaslMechanism m) {
  switch (m) {
    case SaslMechanism::Plain: return "PLAIN";
    case SaslMechanism::ScramSha256: return "SCRAM-SHA-256";
    case SaslMechanism::ScramSha512: return "SCRAM-SHA-512";
  }
  return "?";
}

std::optional<SaslMechanism> parse_sasl_mechanism(std::string_view name) {
  if (name == "PLAIN") return SaslMechanism::Plain;
  if (name == "SCRAM-SHA-256") return SaslMechanism::ScramSha256;
  if (name == "SCRAM-SHA-512") return SaslMechanism::ScramSha512;
  return std::nullopt;
}

std::unique_ptr<SaslClient> make_sasl_client(const SaslSettings& settings) {
  switch (settings.mechanism) {
    case SaslMechanism::Plain:
      return std::make_unique<PlainSaslClient>(settings.username, settings.password);
    case SaslMechanism::ScramSha256:
    case SaslMechanism::ScramSha512:
      return std::make_unique<ScramSaslClient>(settings.mechanism, settings.username,
                                               settings.password);
  }
  return nullptr;
}

// ---------------------------------------------------------------- primitives

std::string base64_encode(BytesView data) {
  if (data.empty()) return {};
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data.data(),
                                static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<Bytes> base64_decode(std::string_view text) {
  if (text.empty()) return Bytes{};
  if (text.size() % 4 != 0) return std::nullopt;
  // EVP_DecodeBlock accepts stray whitespace and padding anywhere; SCRAM
  // wants the strict alphabet, so check it first.
  size_t pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '+' || c == '/';
    if (c == '=') {
      if (i + 2 < text.size()) return std::nullopt;
      ++pad;
    } else if (!alpha || pad > 0) {
      return std::nullopt;
    }
  }
  Bytes out(3 * text.size() / 4);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0 || static_cast<size_t>(n) < pad) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);  // DecodeBlock counts padding as zero bytes
  return out;
}

Bytes scram_hash(SaslMechanism m, BytesView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, digest_of(m), nullptr) != 1) {
    throw std::runtime_error("OpenSSL EVP_Digest failed");
  }
  out.resize(len);
  return out;
}

Bytes scram_hmac(SaslMechanism m, BytesView key, BytesView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (HMAC(digest_of(m), key.data(), static_cast<int>(key.size()), data.data(), data.size(),
           out.data(), &len) == nullptr) {
    throw std::runtime_error("OpenSSL HMAC failed");
  }
  out.resize(len);
  return out;
}

Bytes scram_salted_password(SaslMechanism m, std::string_view password, BytesView salt,
                            int iterations) {
  const EVP_MD* md = digest_of(m);
  Bytes out(static_cast<size_t>(EVP_MD_get_size(md)));
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(),
                        static_cast<int>(salt.size()), iterations, md, static_cast<int>(out.size()),
                        out.data()) != 1) {
    throw std::runtime_error("OpenSSL PKCS5_PBKDF2_HMAC failed");
  }
  return out;
}

std::string scram_escape_username(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '=') {
      out += "=3D";
    } else if (c == ',') {
      out += "=2C";
    } else {
      out += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------- PLAIN

PlainSaslClient::PlainSaslClient(std::string username, std::string password)
    : username_(std::move(username)), password_(std::move(password)) {}

Bytes PlainSaslClient::initial() {
  sent_ = true;
  Bytes out;
  out.reserve(2 + username_.size() + password_.size());
  out.push_back(0);  // empty authorization id: act as the authenticated user
  out.insert(out.end(), username_.begin(), username_.end());
  out.push_back(0);
  out.insert(out.end(), password_.begin(), password_.end());
  return out;
}

Result<std::optional<Bytes>> PlainSaslClient::step(BytesView server_token) {
  if (!sent_ || done_) return Error{"", "PLAIN: unexpected server token after the exchange ended"};
  if (!server_token.empty()) {
    return Error{"", "PLAIN: the server answered with a non-empty token (" +
                         std::to_string(server_token.size()) + " bytes)"};
  }
  done_ = true;
  return std::optional<Bytes>{};
}

// ---------------------------------------------------------------- SCRAM

ScramSaslClient::ScramSaslClient(SaslMechanism mechanism, std::string username,
                                 std::string password, std::optional<std::string> client_nonce)
    : mechanism_(mechanism), username_(std::move(username)), password_(std::move(password)) {
  if (client_nonce) {
    client_nonce_ = std::move(*client_nonce);
  } else {
    Bytes raw(24);
    if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
      throw std::runtime_error("OpenSSL RAND_bytes failed to make a SCRAM nonce");
    }
    client_nonce_ = base64_encode(raw);  // printable and free of ','
  }
}

Error ScramSaslClient::fail(std::string message) {
  state_ = State::Failed;
  return Error{"", std::string(sasl_mechanism_name(mechanism_)) + ": " + std::move(message)};
}

Bytes ScramSaslClient::initial() {
  client_first_bare_ = "n=" + scram_escape_username(username_) + ",r=" + client_nonce_;
  state_ = State::AwaitServerFirst;
  // gs2 header "n,,": no channel binding, no authorization id.
  return to_bytes("n,," + client_first_bare_);
}

Result<std::optional<Bytes>> ScramSaslClient::step(BytesView server_token) {
  const std::string_view msg = text_of(server_token);
  switch (state_) {
    case State::AwaitServerFirst: return on_server_first(msg);
    case State::AwaitServerFinal: return on_server_final(msg);
    case State::Initial: return fail("server token before the client's first message");
    case State::Complete: return fail("server token after the exchange completed");
    case State::Failed: return fail("exchange already failed");
  }
  return fail("unknown state");
}

Result<std::optional<Bytes>> ScramSaslClient::on_server_first(std::string_view msg) {
  auto attrs = attributes(msg);
  if (!attrs.empty() && attrs.front().first == 'e') {
    return fail("server error: " + std::string(attrs.front().second));
  }
  if (!attrs.empty() && attrs.front().first == 'm') {
    return fail("the server requires an unsupported mandatory extension (m=)");
  }
  if (attrs.size() < 3 || attrs[0].first != 'r' || attrs[1].first != 's' || attrs[2].first != 'i') {
    return fail("malformed server-first-message (expected r=...,s=...,i=...)");
  }
  const std::string_view nonce = attrs[0].second;
  if (nonce.size() <= client_nonce_.size() || nonce.substr(0, client_nonce_.size()) != client_nonce_) {
    return fail("the server nonce does not extend the client nonce");
  }
  if (!printable_nonce(nonce)) return fail("the server nonce has non-printable characters");
  auto salt = base64_decode(attrs[1].second);
  if (!salt || salt->empty()) return fail("the server salt is not valid base64");
  int iterations = 0;
  const std::string_view it = attrs[2].second;
  auto [ptr, ec] = std::from_chars(it.data(), it.data() + it.size(), iterations);
  if (it.empty() || ec != std::errc() || ptr != it.data() + it.size()) {
    return fail("the iteration count '" + std::string(it) + "' is not a number");
  }
  if (iterations < kScramMinIterations) {
    return fail("the iteration count " + std::to_string(iterations) + " is below the minimum " +
                std::to_string(kScramMinIterations));
  }
  if (iterations > kScramMaxIterations) {
    return fail("the iteration count " + std::to_string(iterations) + " is above the maximum " +
                std::to_string(kScramMaxIterations));
  }

  const Bytes salted = scram_salted_password(mechanism_, password_, *salt, iterations);
  const Bytes client_key = scram_hmac(mechanism_, salted, view_of("Client Key"));
  const Bytes stored_key = scram_hash(mechanism_, client_key);
  const std::string without_proof = "c=biws,r=" + std::string(nonce);  // biws = base64("n,,")
  const std::string auth_message =
      client_first_bare_ + "," + std::string(msg) + "," + without_proof;
  const Bytes client_signature = scram_hmac(mechanism_, stored_key, view_of(auth_message));
  Bytes proof = client_key;
  for (size_t i = 0; i < proof.size(); ++i) proof[i] ^= client_signature[i];
  const Bytes server_key = scram_hmac(mechanism_, salted, view_of("Server Key"));
  server_signature_ = scram_hmac(mechanism_, server_key, view_of(auth_message));
  state_ = State::AwaitServerFinal;
  return std::optional<Bytes>{to_bytes(without_proof + ",p=" + base64_encode(proof))};
}

Result<std::optional<Bytes>> ScramSaslClient::on_server_final(std::string_view msg) {
  auto attrs = attributes(msg);
  if (attrs.empty()) return fail("empty server-final-message");
  if (attrs.front().first == 'e') return fail("server error: " + std::string(attrs.front().second));
  if (attrs.front().first != 'v') return fail("malformed server-final-message (expected v=...)");
  auto sig = base64_decode(attrs.front().second);
  if (!sig || sig->size() != server_signature_.size() ||
      CRYPTO_memcmp(sig->data(), server_signature_.data(), sig->size()) != 0) {
    return fail("the server signature is invalid (the broker does not know this password)");
  }
  state_ = State::Complete;
  return std::optional<Bytes>{};
}

}  // namespace kc::kafka
