#include "bwsim/kernel/Pipeline.hpp"

#include <fmt/format.h>

namespace bwsim {

void PipelineBarriers::init(Warp& w, std::uint32_t full_arrivals, std::uint32_t empty_arrivals) const {
  for (std::uint32_t i = 0; i < stages_; ++i) {
    w.mbarrier_init(full(i), full_arrivals, fmt::format("{}.full[{}]", name_, i));
    w.mbarrier_init(empty(i), empty_arrivals, fmt::format("{}.empty[{}]", name_, i));
  }
}

Task PipelineBarriers::producer_tail(Warp& w, PipelineState state) const {
  for (std::uint32_t i = 0; i < stages_; ++i) {
    co_await w.mbarrier_wait(empty(state.index), state.phase);
    ++state;
  }
}

}  // namespace bwsim
