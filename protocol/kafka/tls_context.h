#pragma once
// Internal to protocol/kafka: the definition of TlsContext, shared by
// tls.cpp (which builds it) and connection.cpp (which opens SSL streams on
// it). Users only see the opaque type declared in tls_options.h.

#include <boost/asio/ssl/context.hpp>

#include "protocol/kafka/tls_options.h"

namespace kc::kafka {

/// A client SSL context plus the per-connection settings that are not part
/// of OpenSSL's SSL_CTX (host name verification is set per connection).
class TlsContext {
 public:
  TlsContext() : ctx(boost::asio::ssl::context::tls_client) {}
  boost::asio::ssl::context ctx;  ///< CA, client certificate and key loaded
  bool verify_hostname = true;    ///< ssl.endpoint.identification.algorithm=https
};

}  // namespace kc::kafka
