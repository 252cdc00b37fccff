// group.instance.id and the static membership options (KIP-345 for workers,
// ours): defaults, accepted ids and the error of each rule.
#include <catch2/catch.hpp>

#include "config/worker_config.h"

using namespace kc::config;

namespace {

Properties with_instance_id(const std::string& id) {
  return {{"group.id", "connect-cluster"},
          {"config.storage.topic", "connect-configs"},
          {"offset.storage.topic", "connect-offsets"},
          {"status.storage.topic", "connect-status"},
          {"group.instance.id", id}};
}

std::string error_for(const std::string& id) {
  try {
    (void)WorkerConfig::from_properties(with_instance_id(id));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("static membership: unset by default, so membership stays dynamic", "[config][static]") {
  auto p = with_instance_id("x");
  p.erase("group.instance.id");
  const auto c = WorkerConfig::from_properties(p);
  CHECK(c.group_instance_id() == std::nullopt);
  CHECK_FALSE(c.static_membership_leave_on_shutdown());
  CHECK(c.static_membership_assignment_file().empty());
  CHECK(c.describe().find("group.instance.id = null") != std::string::npos);
}

TEST_CASE("static membership: legal ids are kept as given", "[config][static]") {
  for (const std::string& id : std::vector<std::string>{"connect-0", "w1", "kconnectd-2.prod_eu", std::string(249, 'a'), "..."}) {
    auto p = with_instance_id(id);
    p["static.membership.leave.on.shutdown"] = "true";
    p["static.membership.assignment.file"] = "/var/lib/kconnectd/assignment.json";
    const auto c = WorkerConfig::from_properties(p);
    CHECK(c.group_instance_id() == std::optional<std::string>(id));
    CHECK(c.static_membership_leave_on_shutdown());
    CHECK(c.static_membership_assignment_file() == "/var/lib/kconnectd/assignment.json");
  }
  // Surrounding blanks are trimmed, as for every string option.
  CHECK(WorkerConfig::from_properties(with_instance_id("  w7 ")).group_instance_id() ==
        std::optional<std::string>("w7"));
}

TEST_CASE("static membership: each illegal id gets its own clear error", "[config][static]") {
  CHECK(error_for("") == "group.instance.id: '' is empty (expected ASCII letters, digits, '.', '_' or '-')");
  CHECK(error_for("   ") == "group.instance.id: '' is empty (expected ASCII letters, digits, '.', '_' or '-')");
  CHECK(error_for(".") == "group.instance.id: '.' cannot be '.' or '..'");
  CHECK(error_for("..") == "group.instance.id: '..' cannot be '.' or '..'");
  CHECK(error_for(std::string(250, 'a')) ==
        "group.instance.id: '" + std::string(250, 'a') + "' is longer than 249 characters (250)");
  for (const std::string& bad : std::vector<std::string>{"pod/0", "w 1", "w:1", "wörker", "a+b", "tab\tid"}) {
    CHECK(error_for(bad) == "group.instance.id: '" + bad +
                                "' contains characters other than ASCII letters, digits, '.', '_' and '-'");
  }
  CHECK(group_instance_id_problem("ok-1") == std::nullopt);
}

TEST_CASE("static membership: the leave flag must be a boolean", "[config][static]") {
  auto p = with_instance_id("w1");
  p["static.membership.leave.on.shutdown"] = "sometimes";
  try {
    (void)WorkerConfig::from_properties(p);
    FAIL("accepted a non-boolean");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "static.membership.leave.on.shutdown: 'sometimes' is not a boolean (expected boolean, true|false)");
  }
}
