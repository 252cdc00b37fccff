#pragma once
// The leader's round inputs, as the herder builds them from the
// coordinator's LeaderRound (Connect's performAssignment input): one
// assignor::MemberReport per decoded member and the assignor::RoundContext
// with this worker's options. Pure; used by the herder's on_leader /
// job_assign (membership.cpp) and by tests that run the real leader round
// without a whole herder (tests/integration/static_membership).

#include <string>
#include <vector>

#include "assignor/assignor.h"
#include "worker/coordinator/worker_coordinator.h"

namespace kc::herder {

/// One assignor::MemberReport per member of `round`, in its order: member id,
/// advertised URL, config offset, group.instance.id ("" = dynamic, KIP-345),
/// worker.labels (V1/V2 trailer, issue 29; empty for older builds) and, for V1/V2 metadata with an allocation, what the member runs now
/// (nothing owned when the allocation is null, as a freshly started worker
/// reports it).
std::vector<assignor::MemberReport> leader_round_reports(const coordinator::LeaderRound& round);

/// The worker options that shape the leader's round (HerderConfig fields of
/// the same names; defaults are the worker defaults).
struct LeaderRoundOptions {
  /// `scheduled.rebalance.return.to.owner.enable` (issue 26 item 2).
  bool return_lost_to_owner = true;
  /// `scheduled.rebalance.static.expiry.immediate` (issue 26 item 3).
  bool no_delay_for_expired_static = true;
};

/// The RoundContext of `round`: leader id and URL, generation, the leader's
/// last completed generation, the selected protocol, `draining` (member ids,
/// kconnectd's drain) and `opts`. now_ms is left 0: the caller sets it right
/// before the assignor runs (the herder after its config read).
assignor::RoundContext leader_round_context(const coordinator::LeaderRound& round, const LeaderRoundOptions& opts,
                                            std::vector<std::string> draining = {});

}  // namespace kc::herder
