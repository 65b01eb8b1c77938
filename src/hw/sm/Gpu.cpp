#include "bwsim/hw/sm/Gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <tuple>

namespace bwsim {

std::uint32_t max_active_clusters(const HardwareConfig& config, std::uint32_t cluster_size) {
  const ChipLayout layout = chip_layout(config);
  std::uint32_t clusters = 0;
  for (std::uint32_t g = 0; g < layout.gpcs(); ++g)
    clusters += layout.gpc_sms(g) / cluster_size;
  return clusters;
}

Gpu::Gpu(SimContext& ctx, Sm::FinishFn on_cta_finished, void* context)
    : config_(ctx.config),
      layout_(chip_layout(ctx.config)),
      load_(ctx.config.sm.count),
      gpc_ctas_(layout_.gpcs()),
      gpc_order_(layout_.gpcs()) {
  for (std::uint32_t i = 0; i < config_.sm.count; ++i) {
    sms_.emplace_back(ctx, i);
    sms_.back().set_on_cta_finished(on_cta_finished, context);
  }
}

std::string Gpu::never_fits(const CtaFootprint& cta, std::uint32_t cluster_size) const {
  if (cta.smem > config_.sm.smem_bytes)
    return fmt::format("a CTA needs {} bytes of shared memory (with the {} reserved per CTA, sm.smem_reserved_per_cta); "
                       "an SM has {} (sm.smem_bytes)",
                       cta.smem, config_.sm.smem_reserved_per_cta, config_.sm.smem_bytes);
  if (cta.registers > config_.sm.registers)
    return fmt::format("a CTA needs {} registers; an SM has {} (sm.registers)", cta.registers, config_.sm.registers);
  std::uint32_t largest = 0;
  for (std::uint32_t g = 0; g < gpcs(); ++g) largest = std::max(largest, gpc_sms(g));
  if (cluster_size > largest)
    return fmt::format("a cluster of {} CTAs must run on SMs of one GPC, and the largest GPC of the {} config has {} "
                       "SMs ({} SMs in {} GPCs, sm.gpcs)",
                       cluster_size, config_.name, largest, config_.sm.count, config_.sm.gpcs);
  return {};
}

bool Gpu::fits(std::uint32_t sm, const CtaFootprint& cta, std::uint32_t level) const {
  const Load& l = load_[sm];
  return l.ctas <= level && l.ctas < config_.sm.max_ctas && l.smem + cta.smem <= config_.sm.smem_bytes &&
         l.warps + cta.warps <= config_.sm.max_warps && l.registers + cta.registers <= config_.sm.registers;
}

// A cluster: pairs of ranks take both SMs of a TPC; an odd last rank takes any SM left.
bool Gpu::place_in(std::uint32_t gpc, const CtaFootprint& cta, std::uint32_t cluster_size, std::uint32_t level,
                   Placement& out) const {
  out.sms.clear();
  const std::uint32_t first = layout_.gpc_first[gpc], end = layout_.gpc_end(gpc);
  for (std::uint32_t sm = first; sm + 1 < end && out.sms.size() + 1 < cluster_size; sm += 2)
    if (fits(sm, cta, level) && fits(sm + 1, cta, level)) {
      out.sms.push_back(sm);
      out.sms.push_back(sm + 1);
    }
  if (out.sms.size() + 1 == cluster_size)
    for (std::uint32_t sm = first; sm < end && out.sms.size() < cluster_size; ++sm)
      if (fits(sm, cta, level) && std::find(out.sms.begin(), out.sms.end(), sm) == out.sms.end()) out.sms.push_back(sm);
  return out.sms.size() == cluster_size;
}

// One CTA: the SM with the fewest CTAs, then the TPC with the fewest (one CTA on every TPC before
// a second on any), then the GPC with the fewest, then the lowest index.
bool Gpu::place_one(const CtaFootprint& cta, Placement& out) const {
  const std::uint32_t n = sm_count();
  std::uint32_t best = n;
  auto key = [&](std::uint32_t sm) {
    const std::uint32_t partner = sm ^ 1u;
    return std::tuple{load_[sm].ctas, partner < n ? load_[partner].ctas : 0u, gpc_ctas_[layout_.gpc[sm]], sm};
  };
  for (std::uint32_t sm = 0; sm < n; ++sm)
    if (fits(sm, cta, load_[sm].ctas) && (best == n || key(sm) < key(best))) best = sm;
  out.sms.assign(best < n ? 1 : 0, best);
  return best < n;
}

bool Gpu::place(const CtaFootprint& cta, std::uint32_t cluster_size, Placement& out) {
  bool placed = cluster_size == 1 && place_one(cta, out);
  if (cluster_size > 1) {
    // GPCs with the fewest CTAs first, so clusters spread over the GPCs (and dies).
    std::iota(gpc_order_.begin(), gpc_order_.end(), 0u);
    std::stable_sort(gpc_order_.begin(), gpc_order_.end(), [&](auto a, auto b) { return gpc_ctas_[a] < gpc_ctas_[b]; });
    for (std::uint32_t level = 0; level < config_.sm.max_ctas && !placed; ++level)
      for (std::uint32_t g : gpc_order_)
        if ((placed = place_in(g, cta, cluster_size, level, out))) break;
  }
  if (!placed) return false;
  out.slots.clear();
  for (std::uint32_t sm : out.sms) {
    Load& l = load_[sm];
    const auto slot = static_cast<std::uint32_t>(std::countr_one(l.slots));
    l.slots |= std::uint64_t{1} << slot;
    ++l.ctas;
    ++gpc_ctas_[layout_.gpc[sm]];
    l.smem += cta.smem;
    l.warps += cta.warps;
    l.registers += cta.registers;
    l.used = true;
    out.slots.push_back(slot);
  }
  return true;
}

void Gpu::release(std::uint32_t sm, std::uint32_t slot, const CtaFootprint& cta) {
  Load& l = load_[sm];
  l.slots &= ~(std::uint64_t{1} << slot);
  --l.ctas;
  --gpc_ctas_[layout_.gpc[sm]];
  l.smem -= cta.smem;
  l.warps -= cta.warps;
  l.registers -= cta.registers;
}

std::uint32_t Gpu::sms_used() const {
  return static_cast<std::uint32_t>(std::count_if(load_.begin(), load_.end(), [](const Load& l) { return l.used; }));
}

}  // namespace bwsim
