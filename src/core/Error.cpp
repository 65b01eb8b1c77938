#include "bwsim/core/Error.hpp"

#include <fmt/format.h>

namespace bwsim {
namespace {
std::string format_message(const std::string& kind, const SimLocation& w, const std::string& what,
                           const std::string& hint) {
  std::string who = w.warp >= 0 ? fmt::format("warp {}", w.warp) : std::string("hardware unit");
  const std::string cta = w.cluster_rank >= 0 ? fmt::format("CTA {} (cluster {} rank {})", w.cta, w.cluster, w.cluster_rank)
                                              : fmt::format("CTA {}", w.cta);
  std::string msg = fmt::format("[{}] kernel '{}', {}, {}, {} at cycle {}: {}", kind, w.kernel, cta, who, w.op,
                                w.cycle, what);
  if (!hint.empty()) msg += fmt::format("\n  hint: {}", hint);
  return msg;
}
}  // namespace

SimError::SimError(std::string kind, SimLocation where, std::string what, std::string hint)
    : std::runtime_error(format_message(kind, where, what, hint)),
      kind_(std::move(kind)),
      where_(std::move(where)),
      detail_(std::move(what)),
      hint_(std::move(hint)) {}

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::OverArrival: return "over-arrival";
    case Rule::TxOutOfRange: return "tx-out-of-range";
    case Rule::TxUnderflow: return "tx-underflow";
    case Rule::BarrierUninitialized: return "barrier-uninitialized";
    case Rule::BarrierInvalidated: return "barrier-invalidated";
    case Rule::BarrierReinitInUse: return "barrier-reinit-in-use";
    case Rule::BarrierBadInit: return "barrier-bad-init";
    case Rule::BarrierMisaligned: return "barrier-misaligned";
    case Rule::BarrierClobbered: return "barrier-clobbered";
    case Rule::StaleParity: return "stale-parity";
    case Rule::SmemOutOfBounds: return "smem-out-of-bounds";
    case Rule::SmemMisaligned: return "smem-misaligned";
    case Rule::TmaInvalid: return "tma-invalid";
    case Rule::NamedBarrierMisuse: return "named-barrier-misuse";
    case Rule::TmemOutOfAllocation: return "tmem-out-of-allocation";
    case Rule::TmemLaneQuadrant: return "tmem-lane-quadrant";
    case Rule::TmemAllocMisuse: return "tmem-alloc-misuse";
    case Rule::TmemAccessInvalid: return "tmem-access-invalid";
    case Rule::MmaInvalid: return "mma-invalid";
    case Rule::ClusterRankOutOfRange: return "cluster-rank-out-of-range";
    case Rule::CtaPairMisuse: return "cta-pair-misuse";
    case Rule::ClusterBarrierMisuse: return "cluster-barrier-misuse";
    case Rule::ClusterPeerExited: return "cluster-peer-exited";
    case Rule::RaceStageReuse: return "race-stage-reuse";
    case Rule::RaceEarlyRead: return "race-early-read";
    case Rule::RaceMissingProxyFence: return "race-missing-proxy-fence";
    case Rule::RaceEarlyAccumulatorRead: return "race-early-accumulator-read";
    case Rule::RaceAccumulatorOverwrite: return "race-accumulator-overwrite";
    case Rule::SetmaxnregMisuse: return "setmaxnreg-misuse";
    case Rule::WgmmaMisuse: return "wgmma-misuse";
    case Rule::ExitWithPendingStore: return "exit-with-pending-store";
  }
  return "unknown";
}

MisuseError::MisuseError(Rule rule, SimLocation where, std::string what, std::string hint)
    : SimError(std::string("misuse:") + rule_name(rule), std::move(where), std::move(what), std::move(hint)),
      rule_(rule) {}

DeadlockError::DeadlockError(SimLocation where, std::string report)
    : SimError("deadlock", std::move(where), std::move(report),
               "every warp is blocked and no event is pending; see each warp's wait above") {}

WatchdogError::WatchdogError(SimLocation where, std::string report)
    : SimError("watchdog", std::move(where), std::move(report),
               "raise --watchdog if the kernel is simply long, otherwise look for a livelock") {}

}  // namespace bwsim
