// The config-topic record of zombie fencing and the transactional ids of
// exactly-once source tasks, in Kafka Connect's formats (KIP-618).
#include <catch2/catch.hpp>

#include "worker/storage/records.h"
#include "worker/storage/transactional_producer.h"

using namespace kc::storage;

TEST_CASE("tasks-fencing-<connector> holds {\"task-count\":N} as Connect writes it") {
  CHECK(task_count_key("my-conn") == "tasks-fencing-my-conn");
  CHECK(parse_config_key("tasks-fencing-my-conn").kind == ConfigKeyKind::TasksFencing);
  CHECK(parse_config_key("tasks-fencing-my-conn").name == "my-conn");
  CHECK(encode_task_count(3) == R"({"task-count":3})");
  auto n = decode_task_count(R"({"task-count":7})");
  REQUIRE(n);
  CHECK(*n == 7);
  CHECK(decode_task_count(encode_task_count(0)).value() == 0);
  // Connect's reader rejects anything but an integral count.
  CHECK_FALSE(decode_task_count(R"({"tasks":7})"));
  CHECK_FALSE(decode_task_count(R"({"task-count":"7"})"));
  CHECK_FALSE(decode_task_count(R"({"task-count":-1})"));
  CHECK_FALSE(decode_task_count("not json"));
  // The commit record keeps its own field.
  CHECK(decode_commit(R"({"tasks":2})").value() == 2);
  CHECK_FALSE(decode_commit(R"({"task-count":2})"));
}

TEST_CASE("an exactly-once task's transactional id is <group.id>-<connector>-<task>") {
  CHECK(task_transactional_id("connect-cluster", {"orders-src", 4}) == "connect-cluster-orders-src-4");
}

TEST_CASE("transaction errors say what failed and whether the producer was fenced") {
  TxnError fenced{TxnError::Kind::Fatal, RD_KAFKA_RESP_ERR__FENCED, "fenced by a newer instance"};
  CHECK(fenced.fenced());
  CHECK(fenced.to_string("commit_transaction") ==
        "commit_transaction failed (fatal, _FENCED): fenced by a newer instance");
  CHECK(TxnError{TxnError::Kind::Fatal, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH, ""}.fenced());
  CHECK_FALSE(TxnError{TxnError::Kind::Abortable, RD_KAFKA_RESP_ERR_PRODUCER_FENCED, ""}.fenced());
  CHECK_FALSE(TxnError{TxnError::Kind::Fatal, RD_KAFKA_RESP_ERR__STATE, ""}.fenced());
}
