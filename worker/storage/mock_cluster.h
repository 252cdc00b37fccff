#pragma once
// Hosts librdkafka's in-process mock Kafka cluster (rdkafka_mock.h): real TCP
// listeners on localhost with a group coordinator, but no CreateTopics, so
// topics are created through the mock API. Used by `kconnectd mock-broker`
// and by the integration tests.

#include <memory>
#include <string>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // must follow rdkafka.h

#include "common/result.h"
#include "worker/storage/kafka_client.h"

namespace kc::storage {

/// One mock cluster. Its brokers run on librdkafka threads; the object may be
/// used from any thread. Destroying it closes the listeners.
class MockCluster {
 public:
  /// Starts `brokers` brokers (ids 1..N) on ephemeral localhost ports.
  static Result<std::unique_ptr<MockCluster>> start(int brokers = 1);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  /// Comma-separated "host:port" list, for `bootstrap.servers`.
  std::string bootstrap_servers() const;

  /// Client properties pointing at this cluster ({"bootstrap.servers": ...}).
  ClientProps client_props() const;

  /// Creates `topic` with `partitions` partitions and replication factor
  /// min(`replication_factor`, brokers). Errors if librdkafka refuses.
  Status create_topic(const std::string& topic, int partitions, int replication_factor = 1);

  /// The raw handle, for fault injection (rd_kafka_mock_push_request_errors,
  /// rd_kafka_mock_broker_set_down, ...).
  rd_kafka_mock_cluster_t* handle() const { return mcluster_; }

  /// Number of brokers.
  int brokers() const { return brokers_; }

 private:
  MockCluster() = default;
  RdKafkaPtr rk_;
  rd_kafka_mock_cluster_t* mcluster_ = nullptr;
  int brokers_ = 0;
};

}  // namespace kc::storage
