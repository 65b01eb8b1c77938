#pragma once
// The chip: its SMs in TPCs (2 SMs), GPCs and dies (hw/sm/ChipLayout), and the block scheduler's
// placement rules: a cluster's CTAs all on SMs of one GPC (so of one die), ranks 2i and 2i+1 on
// the two SMs of one TPC, and no SM beyond its resident-CTA, shared-memory, warp and register
// limits. CTAs go breadth-first: an SM gets a second CTA only when no SM with fewer can take it,
// a TPC's second SM only when every TPC has one, and among equals the GPC with the fewest CTAs
// first; clusters go to the GPC with the fewest CTAs. So a grid smaller than the chip spreads
// over every GPC and both dies, as on the H100: in the tile logs of grids 66, 100 and 120
// (tools/calibration/h100_gemm_loads_tiles_private_l2_a_g*.csv) 66 CTAs take one SM of each of the
// 66 TPCs, and at 100 and 120 each GPC that is not full holds as many as the others, within one.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/hw/sm/Sm.hpp"

namespace bwsim {

// What one resident CTA takes from its SM.
struct CtaFootprint {
  std::uint32_t smem = 0;  // dynamic shared memory plus the system's reservation
  std::uint32_t warps = 0;
  std::uint32_t registers = 0;
};

// Where a cluster was placed: each rank's SM and its slot among that SM's resident CTAs.
struct Placement {
  std::vector<std::uint32_t> sms, slots;
};

// How many clusters of `cluster_size` CTAs (one per SM) run at once: what CUTLASS sizes a
// persistent grid by (cudaOccupancyMaxActiveClusters).
std::uint32_t max_active_clusters(const HardwareConfig& config, std::uint32_t cluster_size);

class Gpu {
 public:
  Gpu(SimContext& ctx, Sm::FinishFn on_cta_finished, void* context);

  std::uint32_t sm_count() const { return static_cast<std::uint32_t>(sms_.size()); }
  Sm& sm(std::uint32_t i) { return sms_[i]; }
  const Sm& sm(std::uint32_t i) const { return sms_[i]; }
  std::uint32_t gpcs() const { return layout_.gpcs(); }
  std::uint32_t gpc_sms(std::uint32_t gpc) const { return layout_.gpc_sms(gpc); }

  // Why clusters of `cluster_size` CTAs of this footprint can never be resident ("" if they can).
  std::string never_fits(const CtaFootprint& cta, std::uint32_t cluster_size) const;
  // Places a cluster if it fits now (and takes its resources); false if it must wait.
  bool place(const CtaFootprint& cta, std::uint32_t cluster_size, Placement& out);
  // A CTA placed by `place` has retired: its SM gets the resources back.
  void release(std::uint32_t sm, std::uint32_t slot, const CtaFootprint& cta);
  // SMs that have held at least one CTA.
  std::uint32_t sms_used() const;

 private:
  struct Load {
    std::uint32_t ctas = 0, smem = 0, warps = 0, registers = 0;
    std::uint64_t slots = 0;  // bit i: slot i taken
    bool used = false;
  };
  bool fits(std::uint32_t sm, const CtaFootprint& cta, std::uint32_t level) const;
  bool place_one(const CtaFootprint& cta, Placement& out) const;
  bool place_in(std::uint32_t gpc, const CtaFootprint& cta, std::uint32_t cluster_size, std::uint32_t level,
                Placement& out) const;

  const HardwareConfig& config_;
  std::deque<Sm> sms_;
  ChipLayout layout_;
  std::vector<Load> load_;
  std::vector<std::uint32_t> gpc_ctas_;  // CTAs resident on each GPC
  std::vector<std::uint32_t> gpc_order_;  // scratch: GPCs in the order a cluster tries them
};

}  // namespace bwsim
