#pragma once
// KIP-507 signed internal requests (Kafka Connect's InternalRequestSignature
// and the checks of DistributedHerder, connect-reference.md 4.6). Under
// `connect.protocol=sessioned` the leader distributes a session key through
// the config topic; followers sign the internal requests they send the
// leader (POST /connectors/{c}/tasks, PUT /connectors/{c}/fence) with an HMAC
// of the request body, and the leader checks it before doing anything.
// Pure functions over OpenSSL (HMAC, RAND_bytes, CRYPTO_memcmp); no I/O,
// no threads, safe to call from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "worker/api/herder_api.h"
#include "worker/storage/records.h"

namespace kc::herder {

/// Header carrying the base64 HMAC of the request body (Connect's SIGNATURE_HEADER).
inline constexpr std::string_view kSignatureHeader = "X-Connect-Authorization";
/// Header naming the HMAC algorithm, e.g. "HmacSHA256" (Connect's SIGNATURE_ALGORITHM_HEADER).
inline constexpr std::string_view kSignatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm";

/// A decoded session key (Connect's SessionKey): the raw secret bytes, the
/// key algorithm (a JDK Mac name) and when the leader created it.
struct SessionKey {
  std::string key;                    ///< raw key bytes (not base64)
  std::string algorithm;              ///< e.g. "HmacSHA256"
  int64_t creation_timestamp_ms = 0;  ///< epoch ms

  bool operator==(const SessionKey&) const = default;
};

/// True if `algorithm` names an HMAC this worker computes. Names are the
/// JDK's Mac names, matched ignoring case as the JDK's provider lookup does:
/// HmacMD5, HmacSHA1, HmacSHA224, HmacSHA256, HmacSHA384, HmacSHA512.
bool hmac_algorithm_known(std::string_view algorithm);

/// Key size in bytes that the JDK's KeyGenerator makes for `algorithm` when
/// `inter.worker.key.size` is unset: 32 for HmacSHA256, 28/48/64 for
/// HmacSHA224/384/512, 64 for HmacSHA1 and HmacMD5. nullopt if unknown.
std::optional<size_t> default_key_bytes(std::string_view algorithm);

/// Checks the KIP-507 worker settings as Connect's DistributedConfig does:
/// the key generation, signature and verification algorithms are known
/// HMACs, the key size (bits, nullopt = algorithm default) is at least 40
/// and a multiple of 8. Errors name the property.
Status validate_signing_config(const std::string& key_generation_algorithm, std::optional<int> key_size_bits,
                               const std::string& signature_algorithm,
                               const std::vector<std::string>& verification_algorithms);

/// A fresh random key (RAND_bytes) of `key_size_bits` / 8 bytes, or of the
/// algorithm's default size, stamped `now_ms`. Errors: unknown algorithm,
/// bad size, RNG failure.
Result<SessionKey> generate_session_key(const std::string& algorithm, std::optional<int> key_size_bits,
                                        int64_t now_ms);

/// Raw HMAC of `body` under `key` with `algorithm`. Errors: unknown
/// algorithm, empty key (the JDK refuses one too).
Result<std::string> hmac(std::string_view algorithm, std::string_view key, std::string_view body);

/// The value of X-Connect-Authorization for `body`: base64 of its HMAC.
Result<std::string> sign_request(std::string_view algorithm, std::string_view key, std::string_view body);

/// Equality of two byte strings in time that depends only on their length
/// (CRYPTO_memcmp), so a forger learns nothing from response times.
bool constant_time_equal(std::string_view a, std::string_view b);

/// The two signature headers as received (HerderApi's value type, worker/api).
using rest::SignatureHeaders;

/// Outcome of a check: status 0 = verified, else Connect's HTTP status and
/// message for the refusal.
struct VerifyResult {
  int status = 0;
  std::string message;
  [[nodiscard]] bool ok() const { return status == 0; }
};

/// Checks an internal request as Connect's leader does, in its order:
///  * either header missing -> 400 "Internal request missing required signature";
///  * algorithm no HMAC known here -> 400 "Algorithm <name> not available";
///  * signature not base64 -> 400 "Illegal base64 character <hex>" (or the
///    JDK decoder's other message);
///  * algorithm not in `verification_algorithms` -> 400 "This worker does not
///    support the '<name>' key signing algorithm ...";
///  * no session key yet (`key` null) -> 503 "This worker is still starting
///    up and has not been able to read a session key from the config topic yet";
///  * HMAC differs (constant-time compare) -> 403 "Internal request contained
///    invalid signature.".
VerifyResult verify_request(const SignatureHeaders& headers, std::string_view body,
                            const std::vector<std::string>& verification_algorithms, const SessionKey* key);

/// Decodes a session-key record's base64 key. Errors: bad base64, empty key.
Result<SessionKey> session_key_from_record(const storage::SessionKeyRecord& record);
/// The record for `key` (base64 of the key bytes).
storage::SessionKeyRecord session_key_record(const SessionKey& key);

}  // namespace kc::herder
