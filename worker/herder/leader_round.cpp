// See leader_round.h.
#include "worker/herder/leader_round.h"

#include <utility>

namespace kc::herder {

std::vector<assignor::MemberReport> leader_round_reports(const coordinator::LeaderRound& round) {
  std::vector<assignor::MemberReport> reports;
  reports.reserve(round.members.size());
  for (const auto& m : round.members) {
    assignor::MemberReport rep;
    rep.member_id = m.member_id;
    rep.url = m.metadata.url;
    rep.config_offset = m.metadata.config_offset;
    rep.group_instance_id = m.group_instance_id;
    rep.labels = m.metadata.labels;
    if (m.metadata.allocation) {
      rep.owned.connectors = m.metadata.allocation->connectors;
      rep.owned.tasks = m.metadata.allocation->tasks;
    }
    reports.push_back(std::move(rep));
  }
  return reports;
}

assignor::RoundContext leader_round_context(const coordinator::LeaderRound& round, const LeaderRoundOptions& opts,
                                            std::vector<std::string> draining) {
  assignor::RoundContext ctx;
  ctx.leader_id = round.leader_id;
  ctx.leader_url = round.leader_url;
  ctx.generation = round.generation;
  ctx.last_completed_generation = round.last_completed_generation;
  ctx.protocol = round.protocol;
  ctx.draining_members = std::move(draining);
  ctx.return_lost_to_owner = opts.return_lost_to_owner;
  ctx.no_delay_for_expired_static = opts.no_delay_for_expired_static;
  return ctx;
}

}  // namespace kc::herder
