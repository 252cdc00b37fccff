#pragma once
// The REST API as data: every route the worker serves (the Connect routes
// RestServer registers itself, and the extra ones of observability.h and
// admin_routes.h that `kconnectd run` adds), with its status codes and
// body shapes. `kconnectd reference rest-api` renders
// docs/reference/rest-api.md from it, and a unit test compares it with the
// routes a RestServer actually registers (RestServer::routes()), so a new
// route without an entry here fails the build's tests.
//
// Read-only static data: safe from any thread.

#include <span>

#include "worker/rest/rest_server.h"

namespace kc::rest {

/// One route. Texts are short Markdown fragments (the generator escapes '|').
struct RouteDoc {
  Method method;
  const char* path;      ///< the pattern as registered, e.g. "/connectors/{connector}/status"
  const char* summary;   ///< what it does, one sentence
  const char* request;   ///< the request body (and query parameters), "" = none
  const char* response;  ///< the success body shape, "" = none
  const char* statuses;  ///< every status it answers with, success first, each with when
  bool internal = false; ///< worker-to-worker (KIP-507 signed) or kconnectd admin, not Connect's public API
};

/// Every route, in documentation order.
std::span<const RouteDoc> route_docs();

/// Statuses any route may answer besides its own (authentication,
/// unknown path or method, media type, deadline, forwarding), one
/// "`code` when" entry each, for the reference's preamble.
std::span<const char* const> common_statuses();

}  // namespace kc::rest
