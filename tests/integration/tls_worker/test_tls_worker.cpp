// security.protocol=SSL end to end: the librdkafka mock cluster has no TLS,
// so two workers reach it only through TlsProxy (tests/support/tls_proxy.h),
// whose certificate is signed by a throwaway CA. The workers' settings name
// the proxy as bootstrap.servers with Kafka's ssl.truststore.* (PEM) and host
// name verification, turned into HerderConfig by herder_config_from as
// `kconnectd run` does. The cluster forms, a connector is created (config
// topic), runs (status topic, offsets) and its records reach the broker, and
// group_admin's ApiVersions probe answers, all over TLS.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/support/tls_proxy.h"
#include "tests/support/tls_test_util.h"
#include "tests/support/worker_test_util.h"
#include "worker/plugins/builtin.h"
#include "config/worker_config.h"
#include "worker/herder/herder_config.h"
#include "worker/storage/group_admin.h"

using namespace kc;
using namespace kc::test;
using namespace std::chrono_literals;

namespace {

/// The port of a single-broker bootstrap list "host:port".
uint16_t port_of(const std::string& bootstrap) {
  return static_cast<uint16_t>(std::stoi(bootstrap.substr(bootstrap.rfind(':') + 1)));
}

}  // namespace

TEST_CASE("TlsProxy rewrites a broker's own address in responses and nothing else", "[security][tls]") {
  TestPki pki;
  TlsProxy proxy({9092}, pki.server_cert, pki.server_key);
  const uint16_t p = proxy.port(0);
  // host "127.0.0.1" (int16 length) + port 9092, then another broker's port.
  std::vector<uint8_t> frame{0, 9, '1', '2', '7', '.', '0', '.', '0', '.', '1', 0, 0, 0x23, 0x84,
                             0, 9, '1', '2', '7', '.', '0', '.', '0', '.', '1', 0, 0, 0x23, 0x85};
  auto expected = frame;
  expected[13] = static_cast<uint8_t>(p >> 8);
  expected[14] = static_cast<uint8_t>(p);
  CHECK(proxy.rewrite_addresses(frame) == 1);
  CHECK(frame == expected);
}

TEST_CASE("SSL end to end: group client, internal topics and data plane reach the broker only through TLS",
          "[security][tls][integration][mock]") {
  TestPki pki;
  std::unique_ptr<TlsProxy> proxy;
  ClusterOptions opts;
  opts.data_topics = {{"seq-tls-data", 1}};
  // The security settings as `kconnectd run` derives them from worker
  // properties (Kafka's names, translated for librdkafka).
  HerderConfig secured;
  opts.configure = [&](const std::string&, HerderConfig& c) {
    c.bootstrap_servers = secured.bootstrap_servers;
    c.client_props = secured.client_props;
    c.group_tls = secured.group_tls;
  };
  TestCluster cluster(opts);
  proxy = std::make_unique<TlsProxy>(std::vector<uint16_t>{port_of(cluster.mock().bootstrap_servers())},
                                     pki.server_cert, pki.server_key);
  secured = herder::herder_config_from(config::WorkerConfig::from_properties({
                                           {"bootstrap.servers", proxy->bootstrap_servers()},
                                           {"group.id", "kc-it"},
                                           {"config.storage.topic", "connect-configs"},
                                           {"offset.storage.topic", "connect-offsets"},
                                           {"status.storage.topic", "connect-status"},
                                           {"security.protocol", "SSL"},
                                           {"ssl.truststore.type", "PEM"},
                                           {"ssl.truststore.location", pki.ca_pem},
                                       }),
                                       "localhost");
  REQUIRE(secured.group_tls);
  CHECK(secured.client_props.at("ssl.ca.location") == pki.ca_pem);

  cluster.start_workers({"w1", "w2"});
  cluster.wait_stable(Expected{});
  cluster.put_connector("seq-tls", {{"connector.class", connectors::kSequenceSourceClass},
                                    {"tasks.max", "2"},
                                    {"topic", "seq-tls-data"},
                                    {"throughput", "50"}});
  Expected e;
  e.add("seq-tls", 2);
  cluster.wait_stable(e);

  // The records are on the broker (read here directly, without the proxy):
  // the tasks' producers could only have written them over TLS.
  CHECK(eventually([&] { return read_all(cluster.mock(), "seq-tls-data").size() >= 20; }, 60s));
  // Every client handshaked with the proxy; none spoke plaintext to it, and
  // the broker's address in Metadata/FindCoordinator was the proxy's.
  CHECK(proxy->failed_handshakes == 0);
  CHECK(proxy->handshakes >= 2 * 2);  // per worker at least the group client and a librdkafka client
  CHECK(proxy->rewrites > 0);
  CHECK(proxy->bytes_up > 0);

  // group_admin's ApiVersions probe (sink offsets) with the admin client's
  // properties: over TLS to the real broker, FindCoordinator included.
  storage::ClientProps admin = secured.client_props;
  admin["bootstrap.servers"] = secured.bootstrap_servers;
  const int before = proxy->handshakes;
  storage::BrokerApis apis;
  auto st = storage::broker_apis(admin, "connect-seq-tls", 10000, apis);
  INFO(st.message);
  REQUIRE(st.ok());
  CHECK(apis.count(11) == 1);  // JoinGroup
  CHECK(proxy->handshakes > before);
  CHECK(proxy->failed_handshakes == 0);
  cluster.check_invariant();
}
