#pragma once
// One streaming multiprocessor: its TMA unit and the hook that tells the dispatcher a CTA
// has finished (so the next CTA of the grid can start here).
#include <cstdint>

#include "bwsim/hw/SimContext.hpp"
#include "bwsim/hw/TmaUnit.hpp"

namespace bwsim {

class Cta;

class Sm {
 public:
  using FinishFn = void (*)(void* context, Cta& cta);

  Sm(SimContext& ctx, std::uint32_t index) : index_(index), tma_(ctx, static_cast<int>(index)) {}
  std::uint32_t index() const { return index_; }
  TmaUnit& tma() { return tma_; }
  const TmaUnit& tma() const { return tma_; }

  void set_on_cta_finished(FinishFn fn, void* context) {
    on_finished_ = fn;
    finish_context_ = context;
  }
  void cta_finished(Cta& cta) {
    if (on_finished_) on_finished_(finish_context_, cta);
  }

 private:
  std::uint32_t index_;
  TmaUnit tma_;
  FinishFn on_finished_ = nullptr;
  void* finish_context_ = nullptr;
};

}  // namespace bwsim
