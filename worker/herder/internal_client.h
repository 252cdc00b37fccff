// A blocking HTTP client for requests one worker sends another (the drain
// request and the task reconfiguration request to the leader). Run it on a
// pool thread, never on the io thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kc::rest {
class TlsContext;  // worker/api/rest_tls.h
}

namespace kc::herder {

/// The answer to an internal request.
struct InternalResponse {
  int status = 0;    ///< HTTP status code
  std::string body;  ///< response body (JSON from a kconnectd worker)
};

/// POSTs `json_body` to `base_url` + `path` (base_url as in JoinGroup
/// metadata, "http://host:port/" or "https://host:port/") with Connect's
/// internal-request habits (User-Agent kafka-connect, JSON, no keep-alive)
/// plus `headers` (the KIP-507 signature headers when the request is
/// signed), and waits at most `timeout_ms` for the whole exchange. An https
/// URL goes over TLS with `tls` (the worker's https trust settings and
/// client certificate, as Connect's RestClient; host name checked unless
/// ssl.endpoint.identification.algorithm is empty). Errors: unparsable URL,
/// https without `tls`, resolve/connect/handshake/certificate/read/write
/// failure or timeout (the message names the URL).
Result<InternalResponse> post_internal(const std::string& base_url, const std::string& path,
                                       const std::string& json_body, int timeout_ms,
                                       const rest::TlsContext* tls = nullptr,
                                       const std::vector<std::pair<std::string, std::string>>& headers = {});

/// The same with PUT: the zombie fencing request a follower forwards to
/// the leader (PUT /connectors/{c}/fence, KIP-618, signed under KIP-507).
Result<InternalResponse> put_internal(const std::string& base_url, const std::string& path,
                                      const std::string& json_body, int timeout_ms,
                                      const rest::TlsContext* tls = nullptr,
                                      const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace kc::herder
