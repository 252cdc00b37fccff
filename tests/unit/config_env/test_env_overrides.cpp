// CONNECT_* environment variables -> worker properties, in the convention of
// the Kafka Connect container images (config/env_overrides.h).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/env_overrides.h"

using kc::config::apply_env_overrides;
using kc::config::env_name_to_property;
using kc::config::env_overrides;

namespace {

// A null-terminated char* array built from strings, like `environ`.
class Env {
 public:
  explicit Env(std::vector<std::string> entries) : entries_(std::move(entries)) {
    for (auto& e : entries_) {
      ptrs_.push_back(e.data());
    }
    ptrs_.push_back(nullptr);
  }
  char** envp() { return ptrs_.data(); }

 private:
  std::vector<std::string> entries_;
  std::vector<char*> ptrs_;
};

using Pairs = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("env names map to worker property names", "[config][env]") {
  CHECK(env_name_to_property("CONNECT_BOOTSTRAP_SERVERS") == "bootstrap.servers");
  CHECK(env_name_to_property("CONNECT_GROUP_ID") == "group.id");
  CHECK(env_name_to_property("CONNECT_CONFIG_STORAGE_TOPIC") == "config.storage.topic");
  CHECK(env_name_to_property("CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS") ==
        "scheduled.rebalance.max.delay.ms");
  CHECK(env_name_to_property("CONNECT_CONNECT_PROTOCOL") == "connect.protocol");
  CHECK(env_name_to_property("CONNECT_REST_ADVERTISED_HOST_NAME") == "rest.advertised.host.name");
  CHECK(env_name_to_property("CONNECT_LISTENERS") == "listeners");
  CHECK(env_name_to_property("CONNECT_X") == "x");
}

TEST_CASE("double underscore is an underscore and triple underscore a dash", "[config][env]") {
  CHECK(env_name_to_property("CONNECT_LISTENER_NAME_SASL__SSL_SASL_ENABLED_MECHANISMS") ==
        "listener.name.sasl_ssl.sasl.enabled.mechanisms");
  CHECK(env_name_to_property("CONNECT_PRODUCER_CLIENT___RACK") == "producer.client-rack");
  CHECK(env_name_to_property("CONNECT_A__B___C_D") == "a_b-c.d");
  // Leading and trailing separators are kept, as the images do.
  CHECK(env_name_to_property("CONNECT__X") == ".x");
  CHECK(env_name_to_property("CONNECT_X_") == "x.");
  CHECK(env_name_to_property("CONNECT___X") == "_x");
  // Longer runs follow dub.py's split/join steps exactly: "..." is consumed
  // first, left to right, then "..".
  CHECK(env_name_to_property("CONNECT_A____B") == "a-.b");
  CHECK(env_name_to_property("CONNECT_A_____B") == "a-_b");
  CHECK(env_name_to_property("CONNECT_A______B") == "a--b");
}

TEST_CASE("mixed case names are lower-cased and digits stay", "[config][env]") {
  CHECK(env_name_to_property("CONNECT_Group_Id") == "group.id");
  CHECK(env_name_to_property("CONNECT_OFFSET_STORAGE_PARTITIONS2") == "offset.storage.partitions2");
}

TEST_CASE("variables that are not worker overrides are ignored", "[config][env]") {
  CHECK_FALSE(env_name_to_property("PATH"));
  CHECK_FALSE(env_name_to_property(""));
  CHECK_FALSE(env_name_to_property("CONNECT_"));
  CHECK_FALSE(env_name_to_property("CONNECT"));
  CHECK_FALSE(env_name_to_property("connect_group_id"));
  CHECK_FALSE(env_name_to_property("Connect_GROUP_ID"));
  CHECK_FALSE(env_name_to_property("XCONNECT_GROUP_ID"));
  CHECK_FALSE(env_name_to_property("KAFKA_BOOTSTRAP_SERVERS"));
  CHECK_FALSE(env_name_to_property("CONNECT_LOG4J_ROOT_LOGLEVEL"));
  CHECK_FALSE(env_name_to_property("CONNECT_LOG4J_LOGGERS"));
}

TEST_CASE("env_overrides reads NAME=value entries in order", "[config][env]") {
  Env env({"HOME=/root", "CONNECT_BOOTSTRAP_SERVERS=kafka:9092", "CONNECT_GROUP_ID=connect-cluster",
           "CONNECT_LOG4J_LOGGERS=org.x=DEBUG", "CONNECT_SASL_JAAS_CONFIG=a=b c=\"d\";",
           "CONNECT_EMPTY=", "CONNECT_NOEQUALS", "=CONNECT_X"});
  CHECK(env_overrides(env.envp()) == Pairs{{"bootstrap.servers", "kafka:9092"},
                                           {"group.id", "connect-cluster"},
                                           {"sasl.jaas.config", "a=b c=\"d\";"},
                                           {"empty", ""}});
}

TEST_CASE("env_overrides of null or empty environments is empty", "[config][env]") {
  CHECK(env_overrides(nullptr).empty());
  Env empty({});
  CHECK(env_overrides(empty.envp()).empty());
  Env unrelated({"PATH=/usr/bin", "LANG=C.UTF-8"});
  CHECK(env_overrides(unrelated.envp()).empty());
}

TEST_CASE("values are taken verbatim without properties-file escapes", "[config][env]") {
  Env env({"CONNECT_LISTENERS=http://0.0.0.0:8083", "CONNECT_X=a\\nb", "CONNECT_Y= spaced "});
  CHECK(env_overrides(env.envp()) ==
        Pairs{{"listeners", "http://0.0.0.0:8083"}, {"x", "a\\nb"}, {"y", " spaced "}});
}

TEST_CASE("an environment value overrides the file and other keys stay", "[config][env]") {
  std::map<std::string, std::string> props{{"bootstrap.servers", "localhost:9092"},
                                           {"group.id", "from-file"},
                                           {"offset.storage.topic", "connect-offsets"}};
  Env env({"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:39092", "CONNECT_REST_ADVERTISED_HOST_NAME=worker2",
           "OTHER=1"});
  const auto applied = apply_env_overrides(props, env.envp());
  CHECK(applied == std::vector<std::string>{"bootstrap.servers", "rest.advertised.host.name"});
  CHECK(props == std::map<std::string, std::string>{{"bootstrap.servers", "127.0.0.1:39092"},
                                                    {"group.id", "from-file"},
                                                    {"offset.storage.topic", "connect-offsets"},
                                                    {"rest.advertised.host.name", "worker2"}});
}

TEST_CASE("an empty environment value still overrides", "[config][env]") {
  std::map<std::string, std::string> props{{"client.id", "from-file"}};
  Env env({"CONNECT_CLIENT_ID="});
  apply_env_overrides(props, env.envp());
  CHECK(props.at("client.id").empty());
}

TEST_CASE("two variables for one property and the later one wins", "[config][env]") {
  std::map<std::string, std::string> props;
  Env env({"CONNECT_GROUP_ID=first", "CONNECT_group_id=second"});
  CHECK(apply_env_overrides(props, env.envp()) == std::vector<std::string>{"group.id", "group.id"});
  CHECK(props.at("group.id") == "second");
}

TEST_CASE("a null environment changes nothing", "[config][env]") {
  std::map<std::string, std::string> props{{"group.id", "g"}};
  CHECK(apply_env_overrides(props, nullptr).empty());
  CHECK(props == std::map<std::string, std::string>{{"group.id", "g"}});
}
