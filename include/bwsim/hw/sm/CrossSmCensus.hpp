#pragma once
// How a run's events couple the SMs: the facts a partition of the chip over host threads would
// have to synchronize on (docs/parallel-simulation.md). An event that does none of the operations
// below touches one SM's state only. Each operation is noted with its lead: the cycles from the
// event that performs it to the cycle at which the state it shares is affected (the lookahead a
// conservative parallel simulation could use across that coupling). Recorded only when
// SimOptions::cross_sm_census is set: the units test a pointer, nothing more, when it is not.
#include <array>
#include <bit>
#include <cstdint>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

enum class Coupling : std::uint8_t {
  MemoryRequest,  // a TMA load, store, reduce or prefetch reaching the shared L2/HBM
  MemoryReply,    // the answer reaching the SM (lead from the request's start: a load's box landing, a write done)
  CpcGate,        // the CPC's load gate (bytes in flight shared by its SMs)
  Cluster,        // another CTA of the cluster: remote arrive, DSMEM store or load, multicast, pair MMA
  Launch,         // the grid scheduler: a cluster retiring frees SMs for the next
  kCount
};
inline constexpr const char* kCouplingNames[] = {"memory_request", "memory_reply", "cpc_gate", "cluster", "launch"};

struct CouplingCount {
  std::uint64_t operations = 0;
  std::uint64_t events = 0;  // events performing at least one
  Cycle min_lead = kNever;
  std::array<std::uint64_t, 24> lead_log2{};  // operations by lead: [0] lead 0, [i] 2^(i-1) <= lead < 2^i
};

struct CrossSmCensus {
  std::array<CouplingCount, static_cast<std::size_t>(Coupling::kCount)> kinds{};
  std::uint64_t coupled_events = 0;  // events performing any coupling operation

  // Notes one operation of kind `k` by the event with sequence number `event`.
  void note(Coupling k, std::uint64_t event, Cycle lead) {
    CouplingCount& c = kinds[static_cast<std::size_t>(k)];
    ++c.operations;
    if (last_[static_cast<std::size_t>(k)] != event + 1) {
      last_[static_cast<std::size_t>(k)] = event + 1;
      ++c.events;
    }
    if (last_any_ != event + 1) {
      last_any_ = event + 1;
      ++coupled_events;
    }
    if (lead < c.min_lead) c.min_lead = lead;
    const auto bucket = static_cast<std::size_t>(std::bit_width(lead));
    ++c.lead_log2[bucket < c.lead_log2.size() ? bucket : c.lead_log2.size() - 1];
  }

 private:
  std::array<std::uint64_t, static_cast<std::size_t>(Coupling::kCount)> last_{};  // event + 1 last noted
  std::uint64_t last_any_ = 0;
};

}  // namespace bwsim
