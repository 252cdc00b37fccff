// StatusTable: the status store's cache folded from the records read, with
// the store's own writes shown until read back. No broker, no threads.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "worker/storage/status_table.h"

using kc::connect::ConnectorTaskId;
using namespace kc::storage;

namespace {

const std::string kConnector = "pipe-sink";

StatusValue status(StatusState s, const std::string& worker, int32_t generation) {
  return StatusValue{s, std::nullopt, worker, generation};
}

/// One record of the connector's status key, as every reader reads it.
struct Record {
  std::string key;
  std::optional<std::string> raw;
  StatusRecord rec;
};

Record record_of(const std::optional<StatusValue>& v, const std::string& connector = kConnector) {
  Record r;
  r.key = connector_status_key(connector);
  if (v) r.raw = encode_status(*v);
  auto rec = decode_status_record(r.key, r.raw);
  REQUIRE(rec);
  r.rec = std::move(rec).value();
  return r;
}

void read(StatusTable& t, const Record& r) { t.read(r.key, r.raw, r.rec); }

/// This store writes `r` (what put_connector hands to the table).
void write(StatusTable& t, const Record& r) {
  t.wrote(r.key, StatusSubject{r.rec.connector, std::nullopt}, r.raw, r.rec.status);
}

// The seed 2 incident (cluster random suite): 11349 ran pipe-sink from
// generation 4, was frozen; 28646 started it in generation 8; the thawed
// 11349 stopped everything and reported UNASSIGNED of its generation 6.
const std::string kFrozen = "127.0.0.1:11349";
const std::string kOwner = "127.0.0.1:28646";
const StatusValue kOldRunning = status(StatusState::Running, kFrozen, 4);
const StatusValue kNewRunning = status(StatusState::Running, kOwner, 8);
const StatusValue kLateStop = status(StatusState::Unassigned, kFrozen, 6);

}  // namespace

TEST_CASE("seed 2 incident - the frozen writer and every other reader end with RUNNING on the new owner",
          "[storage][status]") {
  const Record r4 = record_of(kOldRunning), r8 = record_of(kNewRunning), u6 = record_of(kLateStop);

  SECTION("a reader that wrote none of the records") {
    StatusTable t;
    read(t, r4);
    read(t, r8);
    read(t, u6);
    CHECK(t.connector(kConnector) == kNewRunning);
  }
  SECTION("the new owner, which wrote RUNNING of generation 8") {
    StatusTable t;
    read(t, r4);
    write(t, r8);
    CHECK(t.connector(kConnector) == kNewRunning);
    read(t, r8);
    read(t, u6);
    CHECK(t.connector(kConnector) == kNewRunning);
  }
  SECTION("the frozen writer, which had not read RUNNING of generation 8 when it stopped") {
    StatusTable t;
    write(t, r4);
    read(t, r4);
    write(t, u6);
    CHECK(t.connector(kConnector) == kLateStop);  // its own write, shown at once
    read(t, r8);                                  // before its write in the topic
    CHECK(t.connector(kConnector) == kLateStop);
    read(t, u6);
    CHECK(t.connector(kConnector) == kNewRunning);
    CHECK(t.pending(r4.key) == 0);
  }
  SECTION("the frozen writer, which read RUNNING of generation 8 between its putSafe check and its write") {
    StatusTable t;
    write(t, r4);
    read(t, r4);
    read(t, r8);
    write(t, u6);
    read(t, u6);
    CHECK(t.connector(kConnector) == kNewRunning);
  }
  SECTION("the frozen writer, whose stop report failed for good") {
    StatusTable t;
    write(t, r4);
    read(t, r4);
    write(t, u6);
    read(t, r8);
    t.write_failed(u6.key, u6.raw);
    CHECK(t.connector(kConnector) == kNewRunning);
    CHECK(t.pending(u6.key) == 0);
  }
}

TEST_CASE("a writer and a bystander of the same status records end with the same status", "[storage][status]") {
  // Every sequence of up to 4 records from this alphabet; the writer wrote
  // one of them, at any point before that record's place in the topic (it
  // had read only the records before that point). Its final status must be
  // the bystander's, and so must a writer's whose write failed for good.
  const std::vector<std::optional<StatusValue>> alphabet = {
      status(StatusState::Running, "a", 4),    status(StatusState::Unassigned, "a", 6),
      status(StatusState::Running, "b", 8),    status(StatusState::Unassigned, "b", 8),
      status(StatusState::Paused, "b", 9),     status(StatusState::Failed, "a", 10),
      std::nullopt,  // a tombstone (DELETE)
  };
  std::vector<Record> records;
  for (const auto& v : alphabet) records.push_back(record_of(v));
  const size_t n = records.size();
  int cases = 0;
  for (size_t len = 1; len <= 4; ++len) {
    std::vector<size_t> seq(len, 0);
    while (true) {
      StatusTable bystander;
      for (size_t i : seq) read(bystander, records[i]);
      for (size_t own = 0; own < len; ++own) {
        // The sequence without the own record: what everyone reads if the
        // write fails for good.
        StatusTable without;
        for (size_t i = 0; i < len; ++i)
          if (i != own) read(without, records[seq[i]]);
        for (size_t at = 0; at <= own; ++at) {
          StatusTable writer, failed;
          for (size_t i = 0; i < len; ++i) {
            if (i == at) {
              write(writer, records[seq[own]]);
              write(failed, records[seq[own]]);
            }
            read(writer, records[seq[i]]);
            if (i != own) read(failed, records[seq[i]]);
            if (i == own) failed.write_failed(records[seq[own]].key, records[seq[own]].raw);
          }
          std::string what = "own record " + std::to_string(own) + ", written after " + std::to_string(at) + " reads:";
          for (size_t i = 0; i < len; ++i) what += " " + records[seq[i]].raw.value_or("(tombstone)");
          INFO(what);
          REQUIRE(writer.connector(kConnector) == bystander.connector(kConnector));
          REQUIRE(failed.connector(kConnector) == without.connector(kConnector));
          ++cases;
        }
      }
      size_t k = 0;
      while (k < len && ++seq[k] == n) seq[k++] = 0;
      if (k == len) break;
    }
  }
  CHECK(cases > 10000);
}

TEST_CASE("stale stop reports are skipped only against another worker's current status", "[storage][status]") {
  // Another worker's RUNNING of a generation >= the stop's own.
  CHECK(stale_stop_report(kNewRunning, kLateStop));
  CHECK(stale_stop_report(status(StatusState::Running, kOwner, 6), kLateStop));
  // Another worker's status of any state from a later generation.
  CHECK(stale_stop_report(status(StatusState::Paused, kOwner, 7), kLateStop));
  CHECK_FALSE(stale_stop_report(status(StatusState::Paused, kOwner, 6), kLateStop));
  // The same worker's UNASSIGNED always applies; so does anything not UNASSIGNED.
  CHECK_FALSE(stale_stop_report(status(StatusState::Running, kFrozen, 9), kLateStop));
  CHECK_FALSE(stale_stop_report(kNewRunning, status(StatusState::Running, kFrozen, 6)));
  CHECK_FALSE(stale_stop_report(kNewRunning, status(StatusState::Failed, kFrozen, 6)));
  // An UNASSIGNED of a later generation than the other worker's RUNNING applies.
  CHECK_FALSE(stale_stop_report(kNewRunning, status(StatusState::Unassigned, kFrozen, 9)));
}

TEST_CASE("own writes are shown at once and hide older records until read back", "[storage][status]") {
  StatusTable t;
  const ConnectorTaskId id{kConnector, 0};
  const std::string key = task_status_key(id);
  const StatusValue restarting = status(StatusState::Restarting, kOwner, 3);
  const StatusValue running = status(StatusState::Running, kOwner, 3);
  const auto raw_restarting = encode_status(restarting), raw_running = encode_status(running);
  auto rec = [&](const std::string& raw) { return decode_status_record(key, raw).value(); };
  t.wrote(key, StatusSubject{std::nullopt, id}, raw_restarting, restarting);
  t.wrote(key, StatusSubject{std::nullopt, id}, raw_running, running);
  CHECK(t.task(id) == running);
  CHECK(t.tasks_of(kConnector).size() == 1);
  t.read(key, raw_restarting, rec(raw_restarting));  // the older write read back
  CHECK(t.task(id) == running);
  CHECK(t.pending(key) == 1);
  t.read(key, raw_running, rec(raw_running));
  CHECK(t.task(id) == running);
  CHECK(t.pending(key) == 0);
  // A tombstone written hides the task at once; read back, it stays gone.
  t.wrote(key, StatusSubject{std::nullopt, id}, std::nullopt, std::nullopt);
  CHECK_FALSE(t.task(id));
  CHECK(t.tasks().empty());
  t.read(key, std::nullopt, decode_status_record(key, std::nullopt).value());
  CHECK_FALSE(t.task(id));
  CHECK(t.pending(key) == 0);
}
