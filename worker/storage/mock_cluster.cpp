#include "worker/storage/mock_cluster.h"

#include <algorithm>

namespace kc::storage {

Result<std::unique_ptr<MockCluster>> MockCluster::start(int brokers) {
  if (brokers < 1) return Error{"brokers", "must be at least 1"};
  // The mock cluster needs an rd_kafka_t for bookkeeping only; a producer
  // with no bootstrap servers never connects anywhere.
  auto rk = make_admin_client({{"log_level", "3"}});
  if (!rk) return rk.error();
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk->get(), brokers);
  if (!mc) return Error{"mock cluster", "rd_kafka_mock_cluster_new failed"};
  std::unique_ptr<MockCluster> m(new MockCluster());
  m->rk_ = std::move(rk).value();
  m->mcluster_ = mc;
  m->brokers_ = brokers;
  return m;
}

MockCluster::~MockCluster() {
  if (mcluster_) rd_kafka_mock_cluster_destroy(mcluster_);
}

std::string MockCluster::bootstrap_servers() const { return rd_kafka_mock_cluster_bootstraps(mcluster_); }

ClientProps MockCluster::client_props() const { return {{"bootstrap.servers", bootstrap_servers()}}; }

Status MockCluster::create_topic(const std::string& topic, int partitions, int replication_factor) {
  auto err = rd_kafka_mock_topic_create(mcluster_, topic.c_str(), partitions,
                                        std::clamp(replication_factor, 1, brokers_));
  if (err) return Error{topic, rd_kafka_err2str(err)};
  return ok_status();
}

}  // namespace kc::storage
