#include "worker/herder/request_signature.h"
#include "common/strings.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <climits>
#include <cstdio>

#include "worker/data/base64.h"

namespace kc::herder {
namespace {

struct HmacAlgorithm {
  const char* name;        // the JDK's Mac name
  const EVP_MD* (*md)();   // OpenSSL digest
  size_t default_key_bytes;  // the JDK KeyGenerator's default
};

constexpr HmacAlgorithm kAlgorithms[] = {
    {"HmacMD5", EVP_md5, 64},       {"HmacSHA1", EVP_sha1, 64},     {"HmacSHA224", EVP_sha224, 28},
    {"HmacSHA256", EVP_sha256, 32}, {"HmacSHA384", EVP_sha384, 48}, {"HmacSHA512", EVP_sha512, 64},
};

const HmacAlgorithm* find_algorithm(std::string_view name) {
  for (const auto& a : kAlgorithms)
    if (ascii_iequals(a.name, name)) return &a;
  return nullptr;
}

/// Java's List.toString: "[a, b]".
std::string java_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

/// java.util.Base64's basic decoder is strict: no whitespace or line breaks.
/// Messages follow its IllegalArgumentException texts.
Result<std::string> strict_base64_decode(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "%x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      return Error{"signature", std::string("Illegal base64 character ") + hex};
    }
  }
  char bad = 0;
  auto out = data::base64_decode(text, &bad);
  if (out) return *out;
  if (bad != 0 && bad != '=') {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%x", static_cast<unsigned>(static_cast<unsigned char>(bad)));
    return Error{"signature", std::string("Illegal base64 character ") + hex};
  }
  return Error{"signature", "Input byte array has wrong 4-byte ending unit"};
}

}  // namespace

bool hmac_algorithm_known(std::string_view algorithm) { return find_algorithm(algorithm) != nullptr; }

std::optional<size_t> default_key_bytes(std::string_view algorithm) {
  const auto* a = find_algorithm(algorithm);
  if (!a) return std::nullopt;
  return a->default_key_bytes;
}

Status validate_signing_config(const std::string& key_generation_algorithm, std::optional<int> key_size_bits,
                               const std::string& signature_algorithm,
                               const std::vector<std::string>& verification_algorithms) {
  if (!hmac_algorithm_known(key_generation_algorithm))
    return Error{"inter.worker.key.generation.algorithm",
                 "'" + key_generation_algorithm + "' is not a supported key generation algorithm"};
  if (key_size_bits && (*key_size_bits < 40 || *key_size_bits % 8 != 0))
    return Error{"inter.worker.key.size",
                 std::to_string(*key_size_bits) + " bits: the key size must be at least 40 bits and a multiple of 8"};
  if (!hmac_algorithm_known(signature_algorithm))
    return Error{"inter.worker.signature.algorithm", "'" + signature_algorithm + "' is not a supported MAC algorithm"};
  if (verification_algorithms.empty())
    return Error{"inter.worker.verification.algorithms", "at least one algorithm must be listed"};
  for (const auto& a : verification_algorithms)
    if (!hmac_algorithm_known(a))
      return Error{"inter.worker.verification.algorithms", "'" + a + "' is not a supported MAC algorithm"};
  return ok_status();
}

Result<SessionKey> generate_session_key(const std::string& algorithm, std::optional<int> key_size_bits,
                                        int64_t now_ms) {
  const auto* a = find_algorithm(algorithm);
  if (!a) return Error{"session key", "unknown key generation algorithm '" + algorithm + "'"};
  size_t bytes = a->default_key_bytes;
  if (key_size_bits) {
    if (*key_size_bits < 40 || *key_size_bits % 8 != 0)
      return Error{"session key", "bad key size " + std::to_string(*key_size_bits) + " bits"};
    bytes = static_cast<size_t>(*key_size_bits) / 8;
  }
  SessionKey k;
  k.key.resize(bytes);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(k.key.data()), static_cast<int>(bytes)) != 1)
    return Error{"session key", "the random number generator failed"};
  k.algorithm = algorithm;
  k.creation_timestamp_ms = now_ms;
  return k;
}

Result<std::string> hmac(std::string_view algorithm, std::string_view key, std::string_view body) {
  const auto* a = find_algorithm(algorithm);
  if (!a) return Error{"signature", "Algorithm " + std::string(algorithm) + " not available"};
  if (key.empty()) return Error{"signature", "empty key"};
  if (key.size() > static_cast<size_t>(INT_MAX)) return Error{"signature", "key too long"};
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(a->md(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(body.data()),
            body.size(), out, &len))
    return Error{"signature", "HMAC failed"};
  return std::string(reinterpret_cast<const char*>(out), len);
}

Result<std::string> sign_request(std::string_view algorithm, std::string_view key, std::string_view body) {
  auto mac = hmac(algorithm, key, body);
  if (!mac) return mac.error();
  return data::base64_encode(*mac);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // The length of an HMAC is public (it follows from the algorithm).
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

VerifyResult verify_request(const SignatureHeaders& headers, std::string_view body,
                            const std::vector<std::string>& verification_algorithms, const SessionKey* key) {
  if (!headers.signature || !headers.algorithm) return {400, "Internal request missing required signature"};
  const std::string& alg = *headers.algorithm;
  if (!hmac_algorithm_known(alg)) return {400, "Algorithm " + alg + " not available"};
  auto sig = strict_base64_decode(*headers.signature);
  if (!sig) return {400, sig.error().message};
  bool listed = false;
  for (const auto& v : verification_algorithms) listed = listed || v == alg;
  if (!listed)
    return {400, "This worker does not support the '" + alg +
                     "' key signing algorithm used by other workers. This worker is currently configured to use: " +
                     java_list(verification_algorithms) +
                     ". Check that all workers' configuration files permit the same set of signature algorithms, "
                     "and correct any misconfigured worker and restart it."};
  if (!key || key->key.empty())
    return {503, "This worker is still starting up and has not been able to read a session key from the config topic "
                 "yet"};
  auto expected = hmac(alg, key->key, body);
  if (!expected || !constant_time_equal(*expected, *sig)) return {403, "Internal request contained invalid signature."};
  return {};
}

Result<SessionKey> session_key_from_record(const storage::SessionKeyRecord& record) {
  auto bytes = strict_base64_decode(record.key_base64);
  if (!bytes) return Error{"session-key", "'key' is not base64: " + bytes.error().message};
  if (bytes->empty()) return Error{"session-key", "'key' is empty"};
  return SessionKey{std::move(bytes).value(), record.algorithm, record.creation_timestamp_ms};
}

storage::SessionKeyRecord session_key_record(const SessionKey& key) {
  return storage::SessionKeyRecord{data::base64_encode(key.key), key.algorithm, key.creation_timestamp_ms};
}

}  // namespace kc::herder
