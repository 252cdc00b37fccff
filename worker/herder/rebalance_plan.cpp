#include "worker/herder/rebalance_plan.h"

#include <algorithm>
#include <cstdint>

#include "common/strings.h"
#include "worker/herder/id_lists.h"

namespace kc::herder {

namespace {

std::string mark_text(const TaskMark& m) {
  return m.first.to_string() + " " + storage::status_state_name(m.second.state) + " g" +
         std::to_string(m.second.generation);
}

bool running_or_paused(StatusState s) { return s == StatusState::Running || s == StatusState::Paused; }

}  // namespace

// ------------------------------------------------------------------ revocation

RevocationPlan plan_revocation(const std::set<std::string>& owned_c, const std::set<ConnectorTaskId>& owned_t,
                               const std::set<std::string>& running_c, const std::set<ConnectorTaskId>& running_t) {
  RevocationPlan p;
  for (const auto& c : running_c)
    if (!owned_c.count(c)) p.stop_connectors.push_back(c);
  for (const auto& t : running_t)
    if (!owned_t.count(t)) p.stop_tasks.push_back(t);
  return p;
}

std::string to_string(const RevocationPlan& p) {
  if (p.empty()) return "nothing to stop";
  return "stop connectors " + names_to_string(p.stop_connectors) + " tasks " + ids_to_string(p.stop_tasks);
}

RevocationPlan plan_revoke_all(const std::set<std::string>& known_c, const std::set<ConnectorTaskId>& known_t) {
  return plan_revocation({}, {}, known_c, known_t);  // an empty assignment: nothing is kept
}

// ------------------------------------------------------------------ before JoinGroup

BeforeJoinPlan plan_before_join(bool revoke_all, bool hand_over, int pending_stops) {
  using S = WorkerState;
  BeforeJoinPlan p;
  if (revoke_all) {
    p.step = BeforeJoinStep::RevokeAll;
    p.give_up_assignment = true;
    p.state = S::Revoking;
    p.why = "eager rebalance or generation reset: everything stops before JoinGroup";
    p.then = S::Joining;
    p.then_why = "everything stopped; JoinGroup";
  } else if (hand_over) {
    p.step = BeforeJoinStep::HandOver;
    p.give_up_connectors = true;
    p.holds_join_gate = true;
    p.state = S::Revoking;
    p.why = "drain: this worker's connectors stop before JoinGroup";
    p.then = S::Joining;
    p.then_why = "connectors handed over; JoinGroup";
  } else if (pending_stops > 0) {
    p.step = BeforeJoinStep::AwaitStops;
    p.state = S::Revoking;
    p.why = "revocations still stopping; JoinGroup waits";
    p.then = S::Joining;
    p.then_why = "revocations stopped; JoinGroup";
  } else {
    p.why = "JoinGroup";
  }
  return p;
}

const char* to_string(BeforeJoinStep s) {
  switch (s) {
    case BeforeJoinStep::RevokeAll: return "revoke all";
    case BeforeJoinStep::HandOver: return "hand over";
    case BeforeJoinStep::AwaitStops: return "await stops";
    case BeforeJoinStep::Join: return "join";
  }
  return "?";
}

std::string to_string(const BeforeJoinPlan& p) {
  std::string s = std::string(to_string(p.step)) + ": " + worker_state_name(p.state);
  if (p.then) s += std::string(", then ") + worker_state_name(*p.then);
  return s;
}

// ------------------------------------------------------------------ config catch-up

ConfigCatchUpPlan plan_config_catch_up(int64_t snapshot_offset, int64_t assignment_offset, int retry_backoff_ms) {
  if (snapshot_offset == assignment_offset) return {};
  ConfigCatchUpPlan p;
  p.apply = false;
  p.lagging = snapshot_offset < assignment_offset;
  p.delay_ms = p.lagging ? static_cast<int>(std::min<int64_t>(int64_t{retry_backoff_ms} * 10, INT32_MAX)) : 0;
  p.reason = p.lagging ? "config topic lagging" : "config offset overshoots the assignment";
  return p;
}

// ------------------------------------------------------------------ the leader's round result

bool leader_round_is_current(uint64_t round_seq, uint64_t current_round) { return round_seq == current_round; }

// ------------------------------------------------------------------ hand-over hold

int64_t hand_over_hold_bound_ms(int64_t graceful_ms, int64_t session_ms, int64_t poll_ms) {
  return graceful_ms + session_ms + 2 * poll_ms;
}

HoldDecision decide_hand_over_hold(const std::optional<StatusValue>& status, const std::string& worker_id,
                                   std::optional<int64_t> waiting_since_ms, int64_t now_ms, int64_t bound_ms) {
  const bool held = status && status->worker_id != worker_id && status->trace == storage::kHandOverTrace &&
                    running_or_paused(status->state);
  if (!held) return {};
  const int64_t since = waiting_since_ms.value_or(now_ms);
  const int64_t waited = now_ms - since;
  if (waited < bound_ms) return {HoldVerdict::Wait, !waiting_since_ms.has_value(), waited};
  return {HoldVerdict::GiveUp, false, waited};
}

const char* to_string(HoldVerdict v) {
  switch (v) {
    case HoldVerdict::Start: return "start";
    case HoldVerdict::Wait: return "wait";
    case HoldVerdict::GiveUp: return "give up";
  }
  return "?";
}

std::string to_string(const HoldDecision& d) {
  switch (d.verdict) {
    case HoldVerdict::Start: return "start";
    case HoldVerdict::Wait:
      return d.first ? std::string("wait (first)") : "wait " + std::to_string(d.waited_ms) + " ms";
    case HoldVerdict::GiveUp: return "give up after " + std::to_string(d.waited_ms) + " ms";
  }
  return "?";
}

// ------------------------------------------------------------------ drain

DrainAcceptance decide_drain_request(bool is_leader, const std::string& leader_url, const std::string& member_id,
                                     const std::vector<std::string>& round_members,
                                     const std::set<std::string>& draining) {
  if (!is_leader)
    return {409, "this worker is not the leader" + (leader_url.empty() ? "" : "; the leader is " + leader_url), false};
  const bool other = std::any_of(round_members.begin(), round_members.end(),
                                 [&](const auto& id) { return id != member_id && !draining.count(id); });
  if (!other) return {409, kNoOtherWorker, false};
  return {202, "draining", !draining.count(member_id)};
}

std::set<std::string> draining_members_in_round(const std::set<std::string>& draining,
                                                const std::vector<std::string>& round_members) {
  std::set<std::string> out;
  for (const auto& id : draining)
    if (std::count(round_members.begin(), round_members.end(), id)) out.insert(id);
  return out;
}

DrainProgress decide_drain_progress(bool applied, bool owns_nothing) {
  return applied && owns_nothing ? DrainProgress::Done : DrainProgress::AskLeader;
}

const char* to_string(DrainProgress p) { return p == DrainProgress::Done ? "done" : "ask the leader"; }

DrainHandOverPlan plan_drain_hand_over(const std::set<std::string>& running_c,
                                       const std::set<ConnectorTaskId>& running_t,
                                       const std::vector<ConnectorTaskId>& tasks,
                                       const std::map<ConnectorTaskId, StatusValue>& task_statuses,
                                       const std::string& worker_id, int32_t generation) {
  DrainHandOverPlan p;
  p.stop_connectors.assign(running_c.begin(), running_c.end());
  for (const auto& t : tasks) {
    if (!running_t.count(t)) continue;
    auto it = task_statuses.find(t);
    const StatusValue* st = it == task_statuses.end() ? nullptr : &it->second;
    const bool own = st && st->worker_id == worker_id;
    if (own && st->state == StatusState::Failed) continue;
    const StatusState state = own && st->state == StatusState::Paused ? StatusState::Paused : StatusState::Running;
    p.marks.emplace_back(t, StatusValue{state, std::string(storage::kHandOverTrace), worker_id,
                                        own ? st->generation : generation});
  }
  return p;
}

std::string to_string(const DrainHandOverPlan& p) {
  return "stop connectors " + names_to_string(p.stop_connectors) + " mark " + bracketed_list(p.marks, mark_text);
}

// ------------------------------------------------------------------ hand-over moves

HandOverMoves plan_hand_over_moves(assignor::AssignmentResult res,
                                   const std::vector<assignor::MemberReport>& reports,
                                   const std::map<ConnectorTaskId, StatusValue>& task_statuses) {
  HandOverMoves out;
  out.result = std::move(res);
  auto& r = out.result;
  if (r.config_mismatch || r.moved.empty()) return out;
  auto index_of = [&](const std::string& id) {
    return static_cast<size_t>(std::find_if(r.assignments.begin(), r.assignments.end(),
                                            [&](const auto& x) { return x.member_id == id; }) -
                               r.assignments.begin());
  };
  std::vector<std::vector<ConnectorTaskId>> taken(r.assignments.size());  // per new owner, sorted
  for (const auto& mv : r.moved) {
    const size_t to = index_of(mv.to), from = index_of(mv.from);
    if (to >= r.assignments.size() || from >= reports.size()) continue;
    auto st = task_statuses.find(mv.task);
    if (st == task_statuses.end() || !running_or_paused(st->second.state) ||
        reports[from].url.find("//" + st->second.worker_id + "/") == std::string::npos)
      continue;  // old owner's status unknown: the follow-up round places it
    taken[to].push_back(mv.task);
  }
  for (size_t i = 0; i < taken.size(); ++i) {
    for (const auto& t : taken[i]) {
      const auto& st = task_statuses.at(t);
      out.marks.emplace_back(t, StatusValue{st.state, std::string(storage::kHandOverTrace), st.worker_id,
                                            st.generation});
    }
    add_sorted(r.assignments[i].assignment.tasks, taken[i]);
    out.moved.insert(out.moved.end(), taken[i].begin(), taken[i].end());
  }
  if (out.moved.empty()) return out;
  // The leader's memory: this round's, plus the tasks placed at once.
  add_sorted(r.state.previous_assignment.tasks, out.moved);
  const std::set<ConnectorTaskId> moved_set(out.moved.begin(), out.moved.end());
  std::erase_if(r.state.previous_revocation.tasks, [&](const auto& t) { return moved_set.count(t) > 0; });
  std::sort(out.moved.begin(), out.moved.end());
  return out;
}

std::string to_string(const HandOverMoves& m) {
  if (m.moved.empty()) return "no moves";
  std::string s;
  for (const auto& ma : m.result.assignments) {
    std::vector<ConnectorTaskId> got;
    for (const auto& t : ma.assignment.tasks)
      if (std::binary_search(m.moved.begin(), m.moved.end(), t)) got.push_back(t);
    if (got.empty()) continue;
    s += (s.empty() ? "move " : "; move ") + ids_to_string(got) + " -> " + ma.member_id;
  }
  return s;
}

// ------------------------------------------------------------------ the leader's round

assignor::ConfigSnapshot assignor_snapshot(const ClusterConfigState& snap) {
  assignor::ConfigSnapshot cs;
  cs.offset = snap.offset;
  for (const auto& name : snap.connectors()) {
    auto tc = snap.task_counts.find(name);
    cs.connectors[name] = (tc == snap.task_counts.end() || snap.inconsistent.count(name)) ? 0 : tc->second;
    auto cfg = snap.connector_configs.find(name);
    if (cfg == snap.connector_configs.end()) continue;
    auto p = connector_placement(cfg->second);
    if (p.constrains()) cs.placement[name] = std::move(p);
  }
  return cs;
}

assignor::ConnectorPlacement connector_placement(const ConfigMap& config) {
  assignor::ConnectorPlacement p;
  if (auto it = config.find("placement.labels"); it != config.end()) {
    auto l = kc::parse_labels(it->second);
    // Validation refuses a bad value; one that reached the config topic
    // anyway (an older build's write) matches no worker: never a wrong host.
    if (l) p.labels = std::move(*l);
    else p.labels = {{std::string(kUnmatchableLabelKey), it->second}};
  }
  if (auto it = config.find("placement.tasks"); it != config.end() && kc::trim(it->second) == "pack")
    p.tasks = assignor::PlacementTasks::Pack;
  return p;
}

std::optional<std::string> placement_refusal(const ConfigMap& connector_config, const Labels& worker_labels) {
  const auto p = connector_placement(connector_config);
  if (kc::labels_match(p.labels, worker_labels)) return std::nullopt;
  const auto it = connector_config.find("placement.labels");
  return "placement.labels=" + (it == connector_config.end() ? std::string() : it->second) +
         " does not match this worker's labels {" + kc::format_labels(worker_labels) +
         "}; the leader placed it here anyway, so the leader is likely an older build that ignores "
         "placement.labels: upgrade every worker before pinning connectors";
}

HandOverMoves plan_leader_round(bool hand_over_enabled, const assignor::LeaderState& state,
                                const std::vector<assignor::MemberReport>& reports,
                                const assignor::ConfigSnapshot& cs, const assignor::RoundContext& ctx,
                                int32_t scheduled_rebalance_max_delay_ms,
                                const std::map<ConnectorTaskId, StatusValue>& task_statuses) {
  if (ctx.protocol == connect::ConnectProtocol::Eager)
    return plan_hand_over_moves(assignor::EagerAssignor{}.assign(state, reports, cs, ctx), reports, task_statuses);
  assignor::RoundContext with_placement = ctx;
  with_placement.hand_over_placement = hand_over_enabled;
  return plan_hand_over_moves(
      assignor::IncrementalCooperativeAssignor{scheduled_rebalance_max_delay_ms}.assign(state, reports, cs,
                                                                                       with_placement),
      reports, task_statuses);
}

// ------------------------------------------------------------------ task configs (leader)

GenerationVerdict decide_task_config_generation(GenerationTrigger trigger, const GenerationFacts& f) {
  using T = GenerationTrigger;
  const GenerationVerdict leader_generates = f.in_flight ? GenerationVerdict::AfterCurrent : GenerationVerdict::Generate;
  switch (trigger) {
    case T::ConnectorConfigRecord:
    case T::BecameLeader: return f.is_leader ? leader_generates : GenerationVerdict::None;
    case T::TasksCommitted: return f.is_leader && f.inconsistent ? leader_generates : GenerationVerdict::None;
    case T::ConnectorRequest: return f.is_leader ? leader_generates : GenerationVerdict::ForwardToLeader;
    case T::GenerationFinished:
      return f.is_leader && f.again_requested ? GenerationVerdict::Generate : GenerationVerdict::None;
  }
  return GenerationVerdict::None;
}

const char* to_string(GenerationVerdict v) {
  switch (v) {
    case GenerationVerdict::None: return "none";
    case GenerationVerdict::Generate: return "generate";
    case GenerationVerdict::AfterCurrent: return "generate after the current one";
    case GenerationVerdict::ForwardToLeader: return "forward to the leader";
  }
  return "?";
}

bool generation_failed_for(const std::string& c, const ClusterConfigState& snap,
                           const std::map<std::string, GenerationFailure>& failures) {
  auto f = failures.find(c);
  auto stored = snap.connector_configs.find(c);
  return f != failures.end() && stored != snap.connector_configs.end() && stored->second == f->second.config;
}

std::vector<std::string> connectors_needing_task_configs(const ClusterConfigState& snap,
                                                         const std::set<std::string>& in_flight,
                                                         const std::map<std::string, GenerationFailure>& failures) {
  std::vector<std::string> out;
  for (const auto& [name, conf] : snap.connector_configs) {
    if (snap.target_state(name) == TargetState::Stopped) continue;
    auto tc = snap.task_counts.find(name);
    if (tc != snap.task_counts.end() && tc->second > 0 && !snap.inconsistent.count(name)) continue;
    if (in_flight.count(name) || generation_failed_for(name, snap, failures)) continue;
    out.push_back(name);
  }
  return out;
}

TaskConfigSource task_config_source(const std::string& c, const ClusterConfigState& snap) {
  if (!snap.connector_configs.count(c)) return TaskConfigSource::Nothing;
  if (snap.target_state(c) == TargetState::Stopped) return TaskConfigSource::WriteEmpty;
  return TaskConfigSource::Plugin;
}

const char* to_string(TaskConfigSource s) {
  switch (s) {
    case TaskConfigSource::Nothing: return "nothing";
    case TaskConfigSource::WriteEmpty: return "write empty";
    case TaskConfigSource::Plugin: return "plugin";
  }
  return "?";
}

bool task_configs_need_write(const std::string& c, const std::vector<ConfigMap>& generated,
                             const ClusterConfigState& snap) {
  auto count = snap.task_counts.find(c);
  if (count == snap.task_counts.end() || snap.inconsistent.count(c) ||
      static_cast<size_t>(std::max(count->second, 0)) != generated.size())
    return true;
  for (size_t i = 0; i < generated.size(); ++i) {
    auto tc = snap.task_config(ConnectorTaskId{c, static_cast<int32_t>(i)});
    if (!tc || *tc != generated[i]) return true;
  }
  return false;
}

FailureStatusPlan plan_generation_failure_statuses(const std::map<std::string, GenerationFailure>& failures,
                                                   const ClusterConfigState& snap,
                                                   const std::map<std::string, StatusValue>& connector_statuses,
                                                   const std::string& worker_id) {
  FailureStatusPlan p;
  for (const auto& [c, f] : failures) {
    auto stored = snap.connector_configs.find(c);
    if (stored == snap.connector_configs.end() || stored->second != f.config ||
        snap.target_state(c) == TargetState::Stopped) {
      p.forget.push_back(c);
      continue;
    }
    auto cur = connector_statuses.find(c);
    const StatusValue* st = cur == connector_statuses.end() ? nullptr : &cur->second;
    if (st && st->state == StatusState::Failed && st->trace == f.trace) continue;
    p.writes.emplace_back(c, StatusValue{StatusState::Failed, f.trace, st ? st->worker_id : worker_id,
                                         st ? st->generation : -1});
  }
  return p;
}

TaskConfigRetryPlan plan_task_config_retry(bool written, int backoff_ms) {
  if (written) return {};
  return {true, backoff_ms, std::min(backoff_ms * 2, kTaskConfigRetryMaxMs)};
}

bool task_config_retry_due(bool cancelled, bool stopping, bool is_leader) {
  return !cancelled && !stopping && is_leader;
}

std::string to_string(const FailureStatusPlan& p) {
  return "forget " + names_to_string(p.forget) + " write " +
         bracketed_list(p.writes, [](const auto& w) { return w.first + " FAILED"; });
}

int64_t scheduled_rejoin_after_ms(int64_t delay_ms, int64_t last_round_ms) {
  if (delay_ms <= 0) return 0;
  const int64_t lead = std::clamp<int64_t>(last_round_ms - kScheduledRejoinMarginMs, 0,
                                           std::max<int64_t>(0, delay_ms - kScheduledRejoinMarginMs));
  return delay_ms - lead;
}

int64_t early_resume_max_age_ms(int64_t session_timeout_ms, int64_t heartbeat_interval_ms,
                                int64_t scheduled_rebalance_max_delay_ms, bool was_leader) {
  const int64_t held = was_leader ? 0 : scheduled_rebalance_max_delay_ms / 2;
  return std::max<int64_t>(0, session_timeout_ms - heartbeat_interval_ms + held);
}

namespace {

/// Why the status `st` keeps a kept item from an early resume, or "".
std::string early_resume_obstacle(const std::optional<StatusValue>& st, const std::string& worker_id) {
  if (!st) return "";
  if (st->worker_id != worker_id) return "its status was written by " + st->worker_id;
  if (st->trace && *st->trace == storage::kHandOverTrace) return "it was being handed over";
  return "";
}

template <class Map, class Key>
std::optional<StatusValue> find_status(const Map& m, const Key& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

}  // namespace

EarlyResumePlan plan_early_resume(const connect::Assignment& kept, const ClusterConfigState& configs,
                                  const std::map<std::string, StatusValue>& connector_statuses,
                                  const std::map<ConnectorTaskId, StatusValue>& task_statuses,
                                  const std::string& worker_id) {
  EarlyResumePlan p;
  p.resume = kept;
  p.resume.connectors.clear();
  p.resume.tasks.clear();
  p.resume.revoked_connectors.clear();
  p.resume.revoked_tasks.clear();
  p.resume.delay_ms = 0;
  p.resume.error = 0;
  // Checked against these configs: a leader's older offset must not make
  // the worker catch up and rejoin before starting anything.
  p.resume.config_offset = configs.offset;
  for (const auto& c : kept.connectors) {
    std::string why = configs.contains(c) ? early_resume_obstacle(find_status(connector_statuses, c), worker_id)
                                          : "no config";
    if (why.empty()) p.resume.connectors.push_back(c);
    else p.skipped.push_back(c + ": " + why);
  }
  for (const auto& t : kept.tasks) {
    std::string why = configs.task_configs.count(t) == 0 ? "no task config"
                                                         : early_resume_obstacle(find_status(task_statuses, t), worker_id);
    if (why.empty()) p.resume.tasks.push_back(t);
    else p.skipped.push_back(t.to_string() + ": " + why);
  }
  return p;
}

}  // namespace kc::herder
