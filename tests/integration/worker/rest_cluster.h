#pragma once
// In-process workers with REST servers, for the suites that call Connect's
// internal REST routes (KIP-507 signed task configs, KIP-618 fencing): a
// TestCluster whose worker ids are "127.0.0.1:<free port>", so each worker's
// advertised URL is its own REST server; and the config-topic reader and
// request-signature headers those suites check with. Test thread only.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/support/tls_test_util.h"
#include "worker/herder/request_signature.h"
#include "worker/rest/rest_server.h"
#include "worker/storage/config_store.h"

namespace kc::test {

/// Two workers of a TestCluster, each with a started plain-HTTP REST server
/// listening on its id. `add_routes` (optional) adds the routes a suite
/// needs to each server before it starts. Fails the test when a server does not start;
/// the servers stop before the workers.
struct RestCluster {
  /// Adds routes to `server`, the REST server of worker `id`.
  using AddRoutes = std::function<void(rest::RestServer& server, DistributedHerder& worker, const std::string& id)>;

  TestCluster cluster;
  std::map<std::string, std::unique_ptr<rest::RestServer>> rest;  ///< by worker id
  std::vector<std::string> ids;                                   ///< the two worker ids

  RestCluster(ClusterOptions opts, const AddRoutes& add_routes = {}) : cluster(std::move(opts)) {
    for (int i = 0; i < 2; ++i) ids.push_back("127.0.0.1:" + std::to_string(free_port()));
    cluster.start_workers(ids);
    for (const auto& id : ids) {
      rest::RestServerOptions ro;
      ro.listeners = {"http://" + id};
      auto server = std::make_unique<rest::RestServer>(ro, cluster.worker(id));
      if (add_routes) add_routes(*server, cluster.worker(id), id);
      auto st = server->start();
      INFO("REST of " << id << ": " << (st ? std::string("ok") : st.error().to_string()));
      REQUIRE(st);
      rest[id] = std::move(server);
    }
  }
  ~RestCluster() {
    for (auto& [id, r] : rest) r->stop();
  }
  RestCluster(const RestCluster&) = delete;
  RestCluster& operator=(const RestCluster&) = delete;

  /// Id of the leader; waits up to 60 s for one, then fails the test.
  std::string leader_id() {
    std::optional<std::string> l;
    REQUIRE(eventually([&] { return (l = cluster.leader()).has_value(); }, std::chrono::seconds(60)));
    return *l;
  }
  /// The worker that is not `leader`.
  std::string follower_id(const std::string& leader) const { return ids[0] == leader ? ids[1] : ids[0]; }
  /// Base URL of worker `id`'s REST server ("http://127.0.0.1:<port>/").
  static std::string url(const std::string& id) { return "http://" + id + "/"; }
};

/// The config topic of `c` as another reader (client id `client_id`) sees
/// it. Fails the test when the store does not open.
inline std::unique_ptr<storage::ConfigBackingStore> open_config_store(TestCluster& c, const std::string& client_id) {
  storage::ConfigBackingStore::Options o;
  o.client = {{"bootstrap.servers", c.mock().bootstrap_servers()}};
  o.replication_factor = 1;
  o.client_id = client_id;
  auto s = storage::ConfigBackingStore::open(o);
  INFO((s ? std::string("ok") : s.error().to_string()));
  REQUIRE(s);
  return std::move(s).value();
}

/// The KIP-507 headers (X-Connect-Authorization and the algorithm) that sign
/// `body` with session key `key` under `alg`. Fails the test when `alg` is
/// not a known algorithm.
inline std::vector<std::pair<std::string, std::string>> signed_headers(const std::string& key,
                                                                       const std::string& body,
                                                                       const std::string& alg = "HmacSHA256") {
  auto sig = herder::sign_request(alg, key, body);
  REQUIRE(sig);
  return {{"X-Connect-Authorization", *sig}, {"X-Connect-Request-Signature-Algorithm", alg}};
}

}  // namespace kc::test
