// `kconnectd mock-broker`: hosts librdkafka's mock Kafka cluster in this
// process, pre-creates Connect's internal topics (the mock has no
// CreateTopics), prints the bootstrap address and runs until SIGTERM/SIGINT.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cmd/kconnectd/commands.h"
#include "worker/storage/mock_cluster.h"

namespace kc::cmd {

namespace {

struct MockBrokerArgs {
  int brokers = 1;
  std::vector<std::string> topics;
  std::string bootstrap_file;
};

int run_mock_broker(const MockBrokerArgs& args) {
  // Internal topics by default; --topic NAME:PARTITIONS adds or overrides.
  std::map<std::string, int> topics{{"connect-configs", 1}, {"connect-offsets", 25}, {"connect-status", 5}};
  for (const auto& t : args.topics) {
    auto colon = t.rfind(':');
    int partitions = 1;
    std::string name = t;
    if (colon != std::string::npos) {
      name = t.substr(0, colon);
      try {
        partitions = std::stoi(t.substr(colon + 1));
      } catch (const std::exception&) {
        partitions = 0;
      }
    }
    if (name.empty() || partitions < 1) {
      std::cerr << "kconnectd mock-broker: bad --topic '" << t << "' (expected NAME:PARTITIONS)\n";
      return 2;
    }
    topics[name] = partitions;
  }

  // Block the stop signals before librdkafka starts its threads, so that
  // only sigwait() below receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto cluster = storage::MockCluster::start(args.brokers);
  if (!cluster) {
    std::cerr << "kconnectd mock-broker: " << cluster.error().to_string() << "\n";
    return 1;
  }
  for (const auto& [name, partitions] : topics) {
    auto st = (*cluster)->create_topic(name, partitions, 1);
    if (!st) {
      std::cerr << "kconnectd mock-broker: " << st.error().to_string() << "\n";
      return 1;
    }
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  if (!args.bootstrap_file.empty()) {
    std::ofstream out(args.bootstrap_file, std::ios::trunc);
    out << bootstrap << "\n";
    if (!out) {
      std::cerr << "kconnectd mock-broker: cannot write " << args.bootstrap_file << "\n";
      return 1;
    }
  }
  std::cout << bootstrap << std::endl;
  for (const auto& [name, partitions] : topics)
    std::cerr << "mock-broker: topic " << name << " (" << partitions << " partitions)\n";

  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "mock-broker: signal " << sig << ", shutting down\n";
  return 0;
}

}  // namespace

void register_mock_broker(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MockBrokerArgs>();
  auto* sub = app.add_subcommand("mock-broker", "Host librdkafka's mock Kafka cluster and print its bootstrap address");
  sub->add_option("--brokers", args->brokers, "Number of brokers")->check(CLI::Range(1, 32));
  sub->add_option("--topic", args->topics,
                  "Topic to create, NAME:PARTITIONS (repeatable; defaults: connect-configs:1, "
                  "connect-offsets:25, connect-status:5)");
  sub->add_option("--bootstrap-file", args->bootstrap_file, "Also write the bootstrap address to this file");
  sub->callback([args, &exit_code] { exit_code = run_mock_broker(*args); });
}

}  // namespace kc::cmd
