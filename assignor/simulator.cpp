// The assign-sim scenario simulator. Plain data structures (std::set/map):
// scenarios are small, and clarity matters more than speed here.
#include "assignor/simulator.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

namespace kc::assignor::sim {

Simulator::Member* Simulator::find(const std::string& name) {
  for (auto& m : members_)
    if (m.name == name) return &m;
  return nullptr;
}

const Running* Simulator::running(const std::string& name) const {
  for (const auto& m : members_)
    if (m.name == name) return &m.run;
  return nullptr;
}

void Simulator::connector(const std::string& name, int32_t tasks) {
  config_[name] = std::max(tasks, 0);
  ++config_offset_;
}

void Simulator::remove(const std::string& name) {
  placement_.erase(name);
  if (config_.erase(name) > 0) ++config_offset_;
}

void Simulator::placement(const std::string& name, const ConnectorPlacement& p) {
  if (p.constrains()) placement_[name] = p;
  else placement_.erase(name);
  ++config_offset_;
}

Labels Simulator::labels_of(const std::string& name) const {
  for (const auto& m : members_)
    if (m.name == name) return m.identity.labels;
  return {};
}

// Every connector and task runs on a member its placement.labels match.
// Changes: violations_.
void Simulator::check_placement(const std::string& where) {
  if (placement_.empty()) return;
  for (const auto& m : members_) {
    auto bad = [&](const std::string& c) {
      auto p = placement_.find(c);
      return p != placement_.end() && !labels_match(p->second.labels, m.identity.labels);
    };
    for (const auto& c : m.run.connectors)
      if (bad(c)) violations_.push_back(where + "connector " + c + " runs on " + m.name + " whose labels do not match");
    for (const auto& t : m.run.tasks)
      if (bad(t.connector))
        violations_.push_back(where + "task " + t.to_string() + " runs on " + m.name + " whose labels do not match");
  }
}

void Simulator::join(const std::string& name, const std::string& as, const std::string& url,
                     const std::string& instance, const Labels& labels) {
  if (find(name) != nullptr) return;
  auto identity_of = [&](const std::string& w) {
    auto it = identities_.find(w);
    return it != identities_.end() ? it->second : Identity{"http://" + w + ":8083/", {}};
  };
  Identity id = as.empty() ? Identity{"http://" + name + ":8083/", {}} : identity_of(as);
  if (!url.empty()) id.url = url;
  if (!instance.empty()) id.instance = instance;
  id.labels = labels;
  identities_[name] = id;
  members_.push_back(Member{name, {}, -1, {}, std::move(id)});
}

void Simulator::leave(const std::string& name) {
  auto it = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.name == name; });
  if (it == members_.end()) return;
  stopped_tasks_ += static_cast<int64_t>(it->run.tasks.size());
  members_.erase(it);
}

Simulator::Member* Simulator::pick_leader() {
  if (!leader_override_.empty())
    if (Member* m = find(leader_override_)) return m;
  return members_.empty() ? nullptr : &members_.front();
}

void Simulator::start_task(Member& m, const ConnectorTaskId& t) {
  auto it = last_runner_.find(t);
  if (it != last_runner_.end() && it->second != m.name) ++moved_tasks_;
  last_runner_[t] = m.name;
  m.run.tasks.insert(t);
}

// The leader's assignor over what every member runs now. Reads: members_,
// config_, now_ms_, protocol_. Changes: the leader's LeaderState (it advances
// even if the sync is then lost).
AssignmentResult Simulator::run_assignor(Member& leader, bool eager) {
  std::vector<MemberReport> reports;
  for (const auto& m : members_) {
    MemberReport rep;
    rep.member_id = m.name;
    rep.url = m.identity.url;
    rep.group_instance_id = m.identity.instance;
    rep.labels = m.identity.labels;
    rep.config_offset = config_offset_;
    rep.owned.connectors.assign(m.run.connectors.begin(), m.run.connectors.end());
    rep.owned.tasks.assign(m.run.tasks.begin(), m.run.tasks.end());
    reports.push_back(std::move(rep));
  }
  ConfigSnapshot snapshot{config_offset_, config_, placement_};
  RoundContext ctx;
  ctx.leader_id = leader.name;
  ctx.generation = generation_;
  ctx.last_completed_generation = leader.last_completed_generation;
  ctx.now_ms = now_ms_;
  ctx.protocol = protocol_;
  ctx.return_lost_to_owner = return_lost_to_owner_;
  ctx.no_delay_for_expired_static = no_delay_for_expired_static_;
  AssignmentResult result = eager ? EagerAssignor{}.assign(leader.state, reports, snapshot, ctx)
                                  : IncrementalCooperativeAssignor{max_delay_ms_}.assign(leader.state, reports,
                                                                                         snapshot, ctx);
  leader.state = result.state;
  unplaced_.clear();
  for (const auto& u : result.unplaced) unplaced_.push_back(u.connector);
  return result;
}

// Member `m` carries out its assignment `a`: stops what was revoked (eager:
// everything), starts what was assigned, and records checks (b) and (d) in
// violations_. Changes: m, line, stopped_tasks_, the task movement counters.
void Simulator::deliver(Member& m, const Assignment& a, bool eager, const Owners& before, const std::string& where,
                        RoundReport::WorkerLine& line) {
  if (a.error != 0) {
    m.last_completed_generation = generation_;
    return;
  }
  if (eager) {
    // Eager: everything stops before the join, the full set starts after.
    line.revoked = m.run;
    stopped_tasks_ += static_cast<int64_t>(m.run.tasks.size());
    m.run = {};
  } else {
    for (const auto& c : a.revoked_connectors) {
      if (m.run.connectors.erase(c) == 0) violations_.push_back(where + m.name + " asked to stop connector " + c + " it does not run");
      line.revoked.connectors.insert(c);
    }
    for (const auto& t : a.revoked_tasks) {
      if (m.run.tasks.erase(t) == 0) {
        violations_.push_back(where + m.name + " asked to stop task " + t.to_string() + " it does not run");
      } else {
        ++stopped_tasks_;
      }
      line.revoked.tasks.insert(t);
    }
  }
  for (const auto& c : a.connectors) {
    if (!eager) {
      auto it = before.connectors.find(c);
      if (it != before.connectors.end())
        violations_.push_back(where + "connector " + c + " assigned to " + m.name + " while " + it->second +
                              " still ran it before the round's revocations");
    }
    if (!m.run.connectors.insert(c).second)
      violations_.push_back(where + "connector " + c + " assigned to " + m.name + " which already runs it");
    line.assigned.connectors.insert(c);
  }
  for (const auto& t : a.tasks) {
    if (!eager) {
      auto it = before.tasks.find(t);
      if (it != before.tasks.end())
        violations_.push_back(where + "task " + t.to_string() + " assigned to " + m.name + " while " + it->second +
                              " still ran it before the round's revocations");
    }
    if (m.run.tasks.count(t) != 0)
      violations_.push_back(where + "task " + t.to_string() + " assigned to " + m.name + " which already runs it");
    start_task(m, t);
    line.assigned.tasks.insert(t);
  }
  m.last_completed_generation = generation_;
}

// Check (a): no connector or task runs on two members. Changes: violations_.
void Simulator::check_one_owner(const std::string& where) {
  std::map<std::string, std::string> conn_owner;
  std::map<ConnectorTaskId, std::string> task_owner;
  for (const auto& m : members_) {
    for (const auto& c : m.run.connectors) {
      auto [it, fresh] = conn_owner.emplace(c, m.name);
      if (!fresh) violations_.push_back(where + "connector " + c + " runs on " + it->second + " and " + m.name);
    }
    for (const auto& t : m.run.tasks) {
      auto [it, fresh] = task_owner.emplace(t, m.name);
      if (!fresh) violations_.push_back(where + "task " + t.to_string() + " runs on " + it->second + " and " + m.name);
    }
  }
}

RoundReport Simulator::rebalance() {
  RoundReport r;
  r.round = ++rounds_;
  r.generation = ++generation_;
  Member* leader = pick_leader();
  if (leader == nullptr) {
    r.leader = "-";
    lose_next_sync_ = false;
    return r;
  }
  r.leader = leader->name;

  const bool eager = protocol_ == connect::ConnectProtocol::Eager;
  const AssignmentResult result = run_assignor(*leader, eager);
  r.config_mismatch = result.config_mismatch;
  r.delay_ms = result.assignments.empty() ? 0 : result.assignments.front().assignment.delay_ms;
  last_delay_ = r.delay_ms;
  for (const auto& ma : result.assignments)
    if (!ma.assignment.revoked_connectors.empty() || !ma.assignment.revoked_tasks.empty()) r.revoked_any = true;

  std::vector<RoundReport::WorkerLine> lines(members_.size());
  if (lose_next_sync_) {
    lose_next_sync_ = false;
    r.sync_lost = true;
  } else {
    Owners before;
    for (const auto& m : members_) {
      for (const auto& c : m.run.connectors) before.connectors.emplace(c, m.name);
      for (const auto& t : m.run.tasks) before.tasks.emplace(t, m.name);
    }
    const std::string where = "round " + std::to_string(r.round) + ": ";
    for (size_t i = 0; i < members_.size(); ++i)
      deliver(members_[i], result.assignments[i].assignment, eager, before, where, lines[i]);
    check_one_owner(where);
    check_placement(where);
  }
  for (size_t i = 0; i < members_.size(); ++i) {
    lines[i].name = members_[i].name;
    lines[i].running = members_[i].run;
  }
  std::sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  r.workers = std::move(lines);
  return r;
}

std::vector<RoundReport> Simulator::stabilize(int max_rounds) {
  std::vector<RoundReport> out;
  for (int i = 0; i < max_rounds; ++i) {
    out.push_back(rebalance());
    const RoundReport& r = out.back();
    if (!r.sync_lost && !r.config_mismatch && !r.revoked_any && r.delay_ms == 0) break;
    if (r.delay_ms > 0) advance(r.delay_ms);
  }
  return out;
}

bool Simulator::placeable(const std::string& connector) const {
  auto p = placement_.find(connector);
  if (p == placement_.end()) return true;
  return std::any_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return labels_match(p->second.labels, m.identity.labels); });
}

bool Simulator::complete() const {
  std::map<std::string, int> conns;
  std::map<ConnectorTaskId, int> tasks;
  for (const auto& m : members_) {
    for (const auto& c : m.run.connectors) ++conns[c];
    for (const auto& t : m.run.tasks) ++tasks[t];
  }
  for (const auto& [name, count] : config_) {
    if (!placeable(name)) continue;  // no member may run it: it waits, unassigned
    auto it = conns.find(name);
    if (it == conns.end() || it->second != 1) return false;
    for (int32_t t = 0; t < count; ++t) {
      auto jt = tasks.find(ConnectorTaskId{name, t});
      if (jt == tasks.end() || jt->second != 1) return false;
    }
  }
  return true;
}

Summary Simulator::summary() const {
  Summary s;
  s.rounds = rounds_;
  s.moved_tasks = moved_tasks_;
  s.stopped_tasks = stopped_tasks_;
  // Placement groups: selector text -> (selector, connectors); without
  // constraints one group of everything over every member.
  struct Group {
    Labels selector;
    std::vector<std::string> connectors;
  };
  std::map<std::string, Group> groups;
  std::set<std::string> pack;
  for (const auto& [name, count] : config_) {
    auto p = placement_.find(name);
    const std::string key = p == placement_.end() ? std::string() : format_labels(p->second.labels);
    Group& g = groups[key];
    if (p != placement_.end()) {
      g.selector = p->second.labels;
      if (p->second.tasks == PlacementTasks::Pack) pack.insert(name);
    }
    g.connectors.push_back(name);
  }
  if (groups.empty()) groups[""];
  auto tasks_of = [](const Member& m, const std::string& name) {
    auto first = m.run.tasks.lower_bound(ConnectorTaskId{name, std::numeric_limits<int32_t>::min()});
    int64_t n = 0;
    for (auto it = first; it != m.run.tasks.end() && it->connector == name; ++it) ++n;
    return n;
  };
  for (const auto& [key, g] : groups) {
    std::vector<const Member*> eligible;
    for (const auto& m : members_)
      if (labels_match(g.selector, m.identity.labels)) eligible.push_back(&m);
    if (eligible.empty()) continue;
    const bool everything = placement_.empty();
    int64_t cmin = std::numeric_limits<int64_t>::max(), cmax = 0, tmin = cmin, tmax = 0;
    for (const Member* m : eligible) {
      int64_t nc = 0, nt = 0;
      if (everything) {
        nc = static_cast<int64_t>(m->run.connectors.size());
        nt = static_cast<int64_t>(m->run.tasks.size());
      } else {
        for (const auto& name : g.connectors) {
          nc += m->run.connectors.count(name) > 0 ? 1 : 0;
          if (pack.count(name) == 0) nt += tasks_of(*m, name);
        }
      }
      cmin = std::min(cmin, nc);
      cmax = std::max(cmax, nc);
      tmin = std::min(tmin, nt);
      tmax = std::max(tmax, nt);
    }
    s.connector_spread = std::max(s.connector_spread, cmax - cmin);
    s.task_spread = std::max(s.task_spread, tmax - tmin);
    for (const auto& name : g.connectors) {
      if (pack.count(name) > 0) continue;
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
      for (const Member* m : eligible) {
        const int64_t n = tasks_of(*m, name);
        lo = std::min(lo, n);
        hi = std::max(hi, n);
      }
      s.per_connector_task_spread = std::max(s.per_connector_task_spread, hi - lo);
    }
  }
  s.balanced = s.connector_spread <= 1 && s.task_spread <= 1;
  std::set<std::string> conns;
  std::set<ConnectorTaskId> tasks;
  for (const auto& m : members_) {
    conns.insert(m.run.connectors.begin(), m.run.connectors.end());
    tasks.insert(m.run.tasks.begin(), m.run.tasks.end());
  }
  s.placement = !placement_.empty();
  for (const auto& [name, count] : config_) {
    if (!placeable(name)) {
      ++s.unplaced;
      continue;
    }
    if (conns.count(name) == 0) ++s.unassigned;
    for (int32_t t = 0; t < count; ++t)
      if (tasks.count(ConnectorTaskId{name, t}) == 0) ++s.unassigned;
  }
  for (const auto& name : pack) {
    for (const auto& m : members_) {
      const int64_t n = tasks_of(m, name);
      if (n > 0 && m.run.connectors.count(name) == 0) {
        ++s.pack_split;
        break;
      }
    }
  }
  return s;
}

namespace {

template <class Set, class F>
void print_list(std::ostream& out, const Set& set, F to_string) {
  out << '[';
  bool first = true;
  for (const auto& x : set) {
    if (!first) out << ',';
    first = false;
    out << to_string(x);
  }
  out << ']';
}

std::string str(const std::string& s) { return s; }
std::string str_task(const ConnectorTaskId& t) { return t.to_string(); }

}  // namespace

void print_round(std::ostream& out, const RoundReport& r) {
  out << "round " << r.round << " gen=" << r.generation << " leader=" << r.leader << " delay=" << r.delay_ms;
  if (r.sync_lost) out << " sync=lost";
  if (r.config_mismatch) out << " error=CONFIG_MISMATCH";
  out << '\n';
  for (const auto& w : r.workers) {
    out << "  " << w.name << " connectors=";
    print_list(out, w.running.connectors, str);
    out << " tasks=";
    print_list(out, w.running.tasks, str_task);
    out << " +connectors=";
    print_list(out, w.assigned.connectors, str);
    out << " +tasks=";
    print_list(out, w.assigned.tasks, str_task);
    out << " -connectors=";
    print_list(out, w.revoked.connectors, str);
    out << " -tasks=";
    print_list(out, w.revoked.tasks, str_task);
    out << '\n';
  }
}

void print_summary(std::ostream& out, const Summary& s) {
  out << "final rounds=" << s.rounds << " balanced=" << (s.balanced ? "yes" : "no")
      << " connector_spread=" << s.connector_spread << " task_spread=" << s.task_spread
      << " per_connector_task_spread=" << s.per_connector_task_spread << " unassigned=" << s.unassigned
      << " moved_tasks=" << s.moved_tasks << " stopped_tasks=" << s.stopped_tasks;
  if (s.placement) out << " unplaced=" << s.unplaced << " pack_split=" << s.pack_split;
  out << '\n';
}

// ---------------------------------------------------------------- parsing

namespace {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

bool parse_int(std::string_view s, int64_t& v, int64_t lo, int64_t hi) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= lo && v <= hi;
}

bool parse_kv(std::string_view s, std::string_view key, int64_t& v) {
  if (s.size() <= key.size() + 1 || s.substr(0, key.size()) != key || s[key.size()] != '=') return false;
  return parse_int(s.substr(key.size() + 1), v, 0, std::numeric_limits<int32_t>::max());
}

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

}  // namespace

ParsedScenario parse_scenario(std::string_view text) {
  ParsedScenario out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto w = split_words(line);
    if (w.empty()) {
      if (end == text.size()) break;
      continue;
    }
    Command c;
    c.line = line_no;
    auto fail = [&](const std::string& expected) {
      out.errors.push_back({line_no, "expected `" + expected + "`, got `" + std::string(line) + "`"});
    };
    const std::string& op = w[0];
    using K = Command::Kind;
    if (op == "set") {
      if (w.size() == 3 && w[1] == "delay" && parse_int(w[2], c.a, 0, kMaxInt32)) {
        c.kind = K::SetDelay;
      } else if (w.size() == 3 && w[1] == "protocol" && (w[2] == "eager" || w[2] == "compatible" || w[2] == "sessioned")) {
        c.kind = K::SetProtocol;
        c.protocol = w[2] == "eager"        ? connect::ConnectProtocol::Eager
                     : w[2] == "compatible" ? connect::ConnectProtocol::Compatible
                                            : connect::ConnectProtocol::Sessioned;
      } else {
        fail("set delay MS` or `set protocol eager|compatible|sessioned");
        continue;
      }
    } else if (op == "connector") {
      bool ok = w.size() >= 3 && parse_int(w[2], c.a, 0, 1'000'000);
      for (size_t i = 3; i < w.size() && ok; ++i) {
        if (w[i].starts_with("labels=") && c.labels.empty()) {
          auto l = parse_labels(std::string_view(w[i]).substr(7));
          ok = l.ok() && !l->empty();
          if (ok) c.labels = *l;
        } else if (w[i] == "tasks=pack" || w[i] == "tasks=spread") {
          c.pack = w[i] == "tasks=pack";
        } else {
          ok = false;
        }
      }
      if (!ok) {
        fail("connector NAME TASKS [labels=K=V,..] [tasks=spread|pack]");
        continue;
      }
      c.kind = K::Connector;
      c.name = w[1];
    } else if (op == "join" && w.size() >= 2) {
      c.kind = K::Join;
      c.name = w[1];
      bool ok = true;
      for (size_t i = 2; i < w.size() && ok; ++i) {
        if (w[i] == "as" && i + 1 < w.size() && c.as.empty()) c.as = w[++i];
        else if (w[i].starts_with("url=") && w[i].size() > 4 && c.url.empty()) c.url = w[i].substr(4);
        else if (w[i].starts_with("instance=") && w[i].size() > 9 && c.instance.empty()) c.instance = w[i].substr(9);
        else if (w[i].starts_with("labels=") && c.labels.empty()) {
          auto l = parse_labels(std::string_view(w[i]).substr(7));
          ok = l.ok() && !l->empty();
          if (ok) c.labels = *l;
        } else ok = false;
      }
      if (!ok) {
        fail("join NAME [as WORKER] [url=URL] [instance=ID] [labels=K=V,..]");
        continue;
      }
    } else if (op == "option") {
      const bool known = w.size() == 3 && (w[1] == "return-lost-to-owner" || w[1] == "no-delay-for-expired-static");
      if (!known || (w[2] != "on" && w[2] != "off")) {
        fail("option return-lost-to-owner|no-delay-for-expired-static on|off");
        continue;
      }
      c.kind = w[1] == "return-lost-to-owner" ? K::OptionReturnLostToOwner : K::OptionNoDelayForExpiredStatic;
      c.a = w[2] == "on" ? 1 : 0;
    } else if (op == "delete" || op == "join" || op == "leave" || op == "leader") {
      if (w.size() != 2) {
        fail(op + " NAME");
        continue;
      }
      c.kind = op == "delete" ? K::Delete : op == "join" ? K::Join : op == "leave" ? K::Leave : K::Leader;
      c.name = w[1];
    } else if (op == "advance") {
      if (w.size() != 2 || !parse_int(w[1], c.a, 0, std::numeric_limits<int64_t>::max() / 4)) {
        fail("advance MS");
        continue;
      }
      c.kind = K::Advance;
    } else if (op == "rebalance" || op == "lose-sync" || op == "stabilize") {
      if (w.size() != 1) {
        fail(op);
        continue;
      }
      c.kind = op == "rebalance" ? K::Rebalance : op == "lose-sync" ? K::LoseSync : K::Stabilize;
    } else if (op == "expect") {
      if (w.size() == 2 && w[1] == "balanced") {
        c.kind = K::ExpectBalanced;
      } else if (w.size() == 2 && w[1] == "complete") {
        c.kind = K::ExpectComplete;
      } else if (w.size() == 3 && w[1] == "connector-spread" && parse_int(w[2], c.a, 0, kMaxInt32)) {
        c.kind = K::ExpectConnectorSpread;
      } else if (w.size() == 3 && w[1] == "delay" && parse_int(w[2], c.a, 0, kMaxInt32)) {
        c.kind = K::ExpectDelay;
      } else if (w.size() == 4 && w[1] != "balanced" && w[1] != "complete" && w[1] != "delay" &&
                 w[1] != "connector-spread" && parse_kv(w[2], "connectors", c.a) && parse_kv(w[3], "tasks", c.b)) {
        c.kind = K::ExpectWorker;
        c.name = w[1];
      } else {
        fail("expect balanced|complete|connector-spread N|delay MS|W connectors=N tasks=M");
        continue;
      }
    } else {
      fail("one of set, option, connector, delete, join, leave, leader, advance, rebalance, lose-sync, stabilize, "
           "expect");
      continue;
    }
    out.commands.push_back(std::move(c));
    if (end == text.size()) break;
  }
  return out;
}

std::string to_scenario_text(const std::vector<Command>& commands) {
  std::ostringstream o;
  using K = Command::Kind;
  for (const auto& c : commands) {
    switch (c.kind) {
      case K::SetDelay: o << "set delay " << c.a; break;
      case K::SetProtocol:
        o << "set protocol "
          << (c.protocol == connect::ConnectProtocol::Eager        ? "eager"
              : c.protocol == connect::ConnectProtocol::Compatible ? "compatible"
                                                                   : "sessioned");
        break;
      case K::Connector:
        o << "connector " << c.name << ' ' << c.a;
        if (!c.labels.empty()) o << " labels=" << format_labels(c.labels);
        if (c.pack) o << " tasks=pack";
        break;
      case K::Delete: o << "delete " << c.name; break;
      case K::Join:
        o << "join " << c.name;
        if (!c.as.empty()) o << " as " << c.as;
        if (!c.url.empty()) o << " url=" << c.url;
        if (!c.instance.empty()) o << " instance=" << c.instance;
        if (!c.labels.empty()) o << " labels=" << format_labels(c.labels);
        break;
      case K::OptionReturnLostToOwner: o << "option return-lost-to-owner " << (c.a != 0 ? "on" : "off"); break;
      case K::OptionNoDelayForExpiredStatic:
        o << "option no-delay-for-expired-static " << (c.a != 0 ? "on" : "off");
        break;
      case K::Leave: o << "leave " << c.name; break;
      case K::Leader: o << "leader " << c.name; break;
      case K::Advance: o << "advance " << c.a; break;
      case K::Rebalance: o << "rebalance"; break;
      case K::LoseSync: o << "lose-sync"; break;
      case K::Stabilize: o << "stabilize"; break;
      case K::ExpectBalanced: o << "expect balanced"; break;
      case K::ExpectConnectorSpread: o << "expect connector-spread " << c.a; break;
      case K::ExpectComplete: o << "expect complete"; break;
      case K::ExpectWorker: o << "expect " << c.name << " connectors=" << c.a << " tasks=" << c.b; break;
      case K::ExpectDelay: o << "expect delay " << c.a; break;
    }
    o << '\n';
  }
  return o.str();
}

bool apply_change(Simulator& sim, const Command& c) {
  using K = Command::Kind;
  switch (c.kind) {
    case K::SetDelay: sim.set_delay(static_cast<int32_t>(c.a)); return true;
    case K::SetProtocol: sim.set_protocol(c.protocol); return true;
    case K::Connector: {
      sim.connector(c.name, static_cast<int32_t>(c.a));
      const ConnectorPlacement p{c.labels, c.pack ? PlacementTasks::Pack : PlacementTasks::Spread};
      if (p.constrains() || sim.placements().count(c.name) > 0) sim.placement(c.name, p);
      return true;
    }
    case K::Delete: sim.remove(c.name); return true;
    case K::Join: sim.join(c.name, c.as, c.url, c.instance, c.labels); return true;
    case K::OptionReturnLostToOwner: sim.set_return_lost_to_owner(c.a != 0); return true;
    case K::OptionNoDelayForExpiredStatic: sim.set_no_delay_for_expired_static(c.a != 0); return true;
    case K::Leave: sim.leave(c.name); return true;
    case K::Leader: sim.set_leader(c.name); return true;
    case K::Advance: sim.advance(c.a); return true;
    case K::LoseSync: sim.lose_sync(); return true;
    default: return false;
  }
}

RunOutcome run_scenario(const std::vector<Command>& commands, std::ostream& out) {
  Simulator sim;
  RunOutcome res;
  using K = Command::Kind;
  auto failed = [&](const Command& c, const std::string& what) {
    ++res.failed_expects;
    out << "FAILED line " << c.line << ": " << what << '\n';
  };
  for (const auto& c : commands) {
    if (apply_change(sim, c)) continue;
    switch (c.kind) {
      case K::Rebalance: print_round(out, sim.rebalance()); break;
      case K::Stabilize:
        for (const auto& r : sim.stabilize()) print_round(out, r);
        break;
      case K::ExpectBalanced: {
        const Summary s = sim.summary();
        if (!s.balanced)
          failed(c, "expect balanced: connector_spread=" + std::to_string(s.connector_spread) +
                        " task_spread=" + std::to_string(s.task_spread));
        break;
      }
      case K::ExpectConnectorSpread: {
        const Summary s = sim.summary();
        if (s.per_connector_task_spread > c.a)
          failed(c, "expect connector-spread " + std::to_string(c.a) +
                        ": per_connector_task_spread=" + std::to_string(s.per_connector_task_spread));
        break;
      }
      case K::ExpectComplete:
        if (!sim.complete())
          failed(c, "expect complete: unassigned=" + std::to_string(sim.summary().unassigned));
        break;
      case K::ExpectWorker: {
        const Running* r = sim.running(c.name);
        const auto nc = r ? static_cast<int64_t>(r->connectors.size()) : -1;
        const auto nt = r ? static_cast<int64_t>(r->tasks.size()) : -1;
        if (r == nullptr)
          failed(c, "expect " + c.name + ": no such member");
        else if (nc != c.a || nt != c.b)
          failed(c, "expect " + c.name + " connectors=" + std::to_string(c.a) + " tasks=" + std::to_string(c.b) +
                        ": has connectors=" + std::to_string(nc) + " tasks=" + std::to_string(nt));
        break;
      }
      case K::ExpectDelay:
        if (sim.last_delay() != c.a)
          failed(c, "expect delay " + std::to_string(c.a) + ": delay=" + std::to_string(sim.last_delay()));
        break;
      default: break;  // changes: apply_change above
    }
  }
  res.summary = sim.summary();
  res.violations = sim.violations();
  for (const auto& v : res.violations) out << "VIOLATION " << v << '\n';
  print_summary(out, res.summary);
  return res;
}

int assign_sim_main(const std::string& path, std::ostream& out, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << path << ": error: cannot open file\n";
    return 1;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  ParsedScenario parsed = parse_scenario(text);
  if (!parsed.errors.empty()) {
    for (const auto& e : parsed.errors) err << path << ':' << e.line << ": error: " << e.message << '\n';
    return 1;
  }
  RunOutcome res = run_scenario(parsed.commands, out);
  return res.failed_expects == 0 && res.violations.empty() ? 0 : 1;
}

}  // namespace kc::assignor::sim
