#pragma once
// Scenario simulator for the assignors (`kconnectd assign-sim FILE`), see
// ../shared/reference/assignor-scenarios.md. It drives rounds of rebalancing
// with no broker and no clock: members report what they run, the leader's
// assignor computes, members stop what was revoked and start what was
// assigned. It also checks the safety invariants after every round, so the
// property tests use it directly.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "assignor/assignor.h"

namespace kc::assignor::sim {

/// What one simulated worker runs now.
struct Running {
  std::set<std::string> connectors;    ///< running connectors
  std::set<ConnectorTaskId> tasks;     ///< running tasks
};

/// One round as the simulator saw it (input for the printed round block).
struct RoundReport {
  int32_t round = 0;          ///< 1-based round counter
  int32_t generation = 0;     ///< generation of the round
  std::string leader;         ///< leader worker name ("-" when the group is empty)
  int32_t delay_ms = 0;       ///< delay handed out in the round, ms
  bool sync_lost = false;     ///< the assignment was computed but not delivered
  bool config_mismatch = false;  ///< the leader answered CONFIG_MISMATCH
  bool revoked_any = false;   ///< something was revoked
  /// Per worker (sorted by name): what it runs after the round, and what the
  /// round assigned (+) and revoked (-). Eager rounds list everything the
  /// worker stopped when it joined as revoked.
  struct WorkerLine {
    std::string name;
    Running running;
    Running assigned;
    Running revoked;
  };
  std::vector<WorkerLine> workers;
};

/// Aggregate numbers printed in the `final` line. With placement constraints
/// the spreads are the largest within one placement group: over the members
/// its selector matches, counting only its connectors and (spread) tasks.
struct Summary {
  int32_t rounds = 0;                       ///< rounds run
  bool balanced = true;                     ///< connector_spread <= 1 and task_spread <= 1
  int64_t connector_spread = 0;             ///< most - fewest connectors on a worker
  int64_t task_spread = 0;                  ///< most - fewest tasks on a worker
  int64_t per_connector_task_spread = 0;    ///< max over connectors of most - fewest of its tasks
  int64_t unassigned = 0;                   ///< configured connectors + tasks that run nowhere
  int64_t moved_tasks = 0;                  ///< task starts on a worker other than its last runner
  int64_t stopped_tasks = 0;                ///< stops of running tasks (revocations, eager, leaves)
  /// With placement constraints only (then printed): whether there are any,
  /// constrained connectors no member may run (they and their tasks are not
  /// in `unassigned`), and pack connectors whose tasks do not all run on the
  /// connector's member.
  bool placement = false;
  int64_t unplaced = 0;
  int64_t pack_split = 0;
};

/// A simulated group: config, members, time, and the assignors.
class Simulator {
 public:
  /// `scheduled.rebalance.max.delay.ms` (default kScheduledRebalanceMaxDelayMsDefault).
  void set_delay(int32_t ms) { max_delay_ms_ = ms; }
  /// Which assignor runs and which version is written (default sessioned).
  void set_protocol(connect::ConnectProtocol p) { protocol_ = p; }
  /// Creates connector `name`, or changes its task count (a config change).
  void connector(const std::string& name, int32_t tasks);
  /// Sets connector `name`'s placement (`placement.labels` / `placement.tasks`;
  /// kconnectd, not in Connect): a config change. An unconstraining value removes it.
  void placement(const std::string& name, const ConnectorPlacement& p);
  /// Deletes connector `name` and its tasks (a config change; no-op if absent).
  void remove(const std::string& name);
  /// Worker `name` joins with nothing running (no-op if it is a member).
  /// Its identity (MemberReport::url and group_instance_id, see
  /// worker_identity()) is, in order: `url` / `instance` when not empty,
  /// else that of worker `as` (its last join, or `as`'s default URL when it
  /// never joined) when not empty, else URL `http://NAME:8083/`, dynamic.
  /// `labels` are its `worker.labels` (MemberReport::labels; kconnectd).
  void join(const std::string& name, const std::string& as = {}, const std::string& url = {},
            const std::string& instance = {}, const Labels& labels = {});
  /// RoundContext::return_lost_to_owner for the following rounds (default off,
  /// Connect's behaviour).
  void set_return_lost_to_owner(bool on) { return_lost_to_owner_ = on; }
  /// RoundContext::no_delay_for_expired_static for the following rounds
  /// (default off, Connect's behaviour).
  void set_no_delay_for_expired_static(bool on) { no_delay_for_expired_static_ = on; }
  /// Worker `name` is gone; what it ran stops and is lost.
  void leave(const std::string& name);
  /// `name` is the leader from now on while it is a member.
  void set_leader(const std::string& name) { leader_override_ = name; }
  /// Simulated time moves forward by `ms`.
  void advance(int64_t ms) { now_ms_ += ms; }
  /// The next round's assignment is computed but not delivered.
  void lose_sync() { lose_next_sync_ = true; }
  /// One round.
  RoundReport rebalance();
  /// Rounds until nothing is revoked and no delay is pending (a pending delay
  /// advances time by that delay first); at most `max_rounds`.
  std::vector<RoundReport> stabilize(int max_rounds = 20);

  /// Numbers for the `final` line, over the current members.
  [[nodiscard]] Summary summary() const;
  /// Every configured connector and task runs on exactly one member (a
  /// constrained connector no member may run, and its tasks, excepted).
  [[nodiscard]] bool complete() const;
  /// Connector `connector` is unconstrained or some member matches its placement.labels.
  [[nodiscard]] bool placeable(const std::string& connector) const;
  /// What worker `name` runs (nullptr if it is not a member).
  [[nodiscard]] const Running* running(const std::string& name) const;
  /// Delay of the last round, ms.
  [[nodiscard]] int32_t last_delay() const { return last_delay_; }
  /// Safety violations seen so far, each one line: (a) two owners, (b) an item
  /// assigned while another member still ran it, (d) a stop or a start the
  /// assignment did not ask for.
  [[nodiscard]] const std::vector<std::string>& violations() const { return violations_; }
  /// Current simulated time, ms.
  [[nodiscard]] int64_t now() const { return now_ms_; }
  /// Number of members.
  [[nodiscard]] size_t members() const { return members_.size(); }
  /// Configured connectors and task counts.
  [[nodiscard]] const std::map<std::string, int32_t>& config() const { return config_; }
  /// Placement constraints by connector (only constraining ones).
  [[nodiscard]] const std::map<std::string, ConnectorPlacement>& placements() const { return placement_; }
  /// Worker `name`'s labels (empty when unlabelled or not a member).
  [[nodiscard]] Labels labels_of(const std::string& name) const;
  /// Constrained connectors no member could run in the last round (sorted).
  [[nodiscard]] const std::vector<std::string>& unplaced() const { return unplaced_; }

 private:
  struct Identity {
    std::string url;       // MemberReport::url
    std::string instance;  // MemberReport::group_instance_id ("" = dynamic)
    Labels labels;         // MemberReport::labels
  };
  struct Member {
    std::string name;
    Running run;
    int32_t last_completed_generation = -1;
    LeaderState state;  // this worker's assignor state (used while it leads)
    Identity identity;
  };
  Member* find(const std::string& name);
  Member* pick_leader();
  void stop_task(const ConnectorTaskId& t);
  void start_task(Member& m, const ConnectorTaskId& t);
  // Who ran what at the start of a round, for check (b).
  struct Owners {
    std::map<std::string, std::string> connectors;
    std::map<ConnectorTaskId, std::string> tasks;
  };
  AssignmentResult run_assignor(Member& leader, bool eager);
  void deliver(Member& m, const Assignment& a, bool eager, const Owners& before, const std::string& where,
               RoundReport::WorkerLine& line);
  void check_one_owner(const std::string& where);
  void check_placement(const std::string& where);

  int32_t max_delay_ms_ = kScheduledRebalanceMaxDelayMsDefault;
  connect::ConnectProtocol protocol_ = connect::ConnectProtocol::Sessioned;
  std::map<std::string, int32_t> config_;
  std::map<std::string, ConnectorPlacement> placement_;
  std::vector<std::string> unplaced_;
  int64_t config_offset_ = 0;
  std::vector<Member> members_;  // in join order
  std::string leader_override_;
  bool return_lost_to_owner_ = false;
  bool no_delay_for_expired_static_ = false;
  std::map<std::string, Identity> identities_;  // every worker's last join
  int64_t now_ms_ = 0;
  int32_t generation_ = 0;
  int32_t rounds_ = 0;
  int32_t last_delay_ = 0;
  bool lose_next_sync_ = false;
  std::map<ConnectorTaskId, std::string> last_runner_;
  int64_t moved_tasks_ = 0;
  int64_t stopped_tasks_ = 0;
  std::vector<std::string> violations_;
};

/// Prints one round block (header line plus one line per worker).
void print_round(std::ostream& out, const RoundReport& r);
/// Prints the `final ...` summary line.
void print_summary(std::ostream& out, const Summary& s);

/// One parsed scenario line.
struct Command {
  enum class Kind {
    SetDelay, SetProtocol, Connector, Delete, Join, Leave, Leader, Advance, Rebalance, LoseSync, Stabilize,
    ExpectBalanced, ExpectConnectorSpread, ExpectComplete, ExpectWorker, ExpectDelay, OptionReturnLostToOwner,
    OptionNoDelayForExpiredStatic
  };
  Kind kind = Kind::Rebalance;
  int line = 0;             ///< 1-based line in the file (0 when generated)
  std::string name;         ///< connector or worker name
  int64_t a = 0;            ///< first number (ms, tasks, N, connectors=N)
  int64_t b = 0;            ///< second number (tasks=M)
  connect::ConnectProtocol protocol = connect::ConnectProtocol::Sessioned;  ///< for SetProtocol
  std::string as;        ///< Join: `as V`, take worker V's identity ("" = own)
  std::string url;       ///< Join: `url=U` ("" = not given)
  std::string instance;  ///< Join: `instance=ID`, a static member ("" = not given)
  Labels labels;         ///< Join: `labels=k=v,..` (worker.labels); Connector: `labels=k=v,..` (placement.labels)
  bool pack = false;     ///< Connector: `tasks=pack` (placement.tasks)
};

/// A malformed line: where and what was expected.
struct ParseError {
  int line = 0;             ///< 1-based line
  std::string message;      ///< e.g. "expected `connector NAME TASKS`"
};

/// Result of parsing a scenario file.
struct ParsedScenario {
  std::vector<Command> commands;  ///< in file order
  std::vector<ParseError> errors; ///< empty when the file is well formed
};

/// Parses scenario text (assignor-scenarios.md format, plus kconnectd's
/// `join NAME labels=k=v,..` and `connector NAME TASKS [labels=k=v,..]
/// [tasks=spread|pack]`).
ParsedScenario parse_scenario(std::string_view text);

/// Writes commands back as scenario text (used to print shrunk property-test
/// counterexamples).
std::string to_scenario_text(const std::vector<Command>& commands);

/// Outcome of running a scenario.
struct RunOutcome {
  int failed_expects = 0;            ///< expects that did not hold
  Summary summary;                   ///< the final summary
  std::vector<std::string> violations;  ///< safety violations seen by the simulator
};

/// Applies a command that changes the simulated group, configs or clock
/// (delay, protocol, option, connector, delete, join, leave, leader, advance,
/// lose-sync). Returns false, doing nothing, for the commands that run
/// rounds or check expectations: the caller handles those.
bool apply_change(Simulator& sim, const Command& c);

/// Runs parsed commands, printing each round, each failed expect (with its
/// line) and the final line to `out`.
RunOutcome run_scenario(const std::vector<Command>& commands, std::ostream& out);

/// `kconnectd assign-sim FILE`: reads, parses and runs the file. Parse errors go
/// to `err` as "FILE:LINE: error: ..." and nothing runs. Returns the exit
/// status: 0 when every expect holds, 1 otherwise (failed expect, malformed
/// line, unreadable file, or a safety violation).
int assign_sim_main(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace kc::assignor::sim
