#pragma once
// One streaming multiprocessor: its TMA unit, tensor memory, tcgen05 MMA pipe and wgmma pipe (the
// config gives the one its architecture has rates), and the hook that
// tells the dispatcher a CTA has finished (so the next CTA of the grid can start here).
#include <cstdint>

#include "bwsim/core/PortCalendar.hpp"
#include "bwsim/hw/sm/CorePipes.hpp"
#include "bwsim/hw/sm/SmemBackground.hpp"
#include "bwsim/hw/sm/SubPartition.hpp"
#include "bwsim/hw/tensor/sm100/MmaPipe.hpp"
#include "bwsim/hw/sm/SimContext.hpp"
#include "bwsim/hw/memory/TmaUnit.hpp"
#include "bwsim/hw/tensor/sm100/Tmem.hpp"
#include "bwsim/hw/tensor/sm90/WgmmaPipe.hpp"

namespace bwsim {

class Cta;

class Sm {
 public:
  using FinishFn = void (*)(void* context, Cta& cta);

  Sm(SimContext& ctx, std::uint32_t index)
      : index_(index),
        tma_(ctx, static_cast<int>(index)),
        tmem_(ctx.config.tmem.columns, ctx.functional()),
        mma_(ctx, static_cast<int>(index), tmem_),
        wgmma_(ctx, static_cast<int>(index), smem_background_),
        sub_partitions_{SubPartition(ctx), SubPartition(ctx), SubPartition(ctx), SubPartition(ctx)} {}
  Sm(const Sm&) = delete;
  Sm& operator=(const Sm&) = delete;
  std::uint32_t index() const { return index_; }
  TmaUnit& tma() { return tma_; }
  const TmaUnit& tma() const { return tma_; }
  Tmem& tmem() { return tmem_; }
  MmaPipe& mma() { return mma_; }
  const MmaPipe& mma() const { return mma_; }
  WgmmaPipe& wgmma() { return wgmma_; }
  const WgmmaPipe& wgmma() const { return wgmma_; }
  // TMEM ld/st datapath of each 32-lane quadrant: the cycle it is next free.
  Cycle& tmem_port_free(std::uint32_t quadrant) { return tmem_port_free_[quadrant]; }
  // The SMEM data port of generic ld.shared / st.shared: its banks move smem.bytes_per_cycle for
  // all the SM's warps together (its busy cycles).
  PortCalendar& smem_port() { return smem_port_; }
  // What wgmma operand reads and TMA load writes take of the SMEM's bandwidth (ld/st.shared get the
  // rest).
  SmemBackground& smem_background() { return smem_background_; }
  // A CUDA-core pipe of one sub-partition: the cycle it can take its next warp instruction.
  Cycle& pipe_free(std::uint32_t sub_partition, CorePipe pipe) {
    return pipe_free_[sub_partition][static_cast<std::size_t>(pipe)];
  }
  // Sub-partition `i` (warp w issues on w % 4): its scheduler shared by the warps' CUDA-core blocks.
  SubPartition& sub_partition(std::uint32_t i) { return sub_partitions_[i]; }
  CorePipeStats& pipe_stats() { return pipe_stats_; }
  const CorePipeStats& pipe_stats() const { return pipe_stats_; }

  void set_on_cta_finished(FinishFn fn, void* context) {
    on_finished_ = fn;
    finish_context_ = context;
  }
  void cta_finished(Cta& cta) {
    if (on_finished_) on_finished_(finish_context_, cta);
  }

 private:
  std::uint32_t index_;
  SmemBackground smem_background_;  // before the units that feed it
  TmaUnit tma_;
  Tmem tmem_;
  MmaPipe mma_;
  WgmmaPipe wgmma_;
  Cycle tmem_port_free_[4] = {};
  PortCalendar smem_port_;
  Cycle pipe_free_[kSubPartitions][static_cast<std::size_t>(CorePipe::kCount)] = {};
  SubPartition sub_partitions_[kSubPartitions];
  CorePipeStats pipe_stats_;
  FinishFn on_finished_ = nullptr;
  void* finish_context_ = nullptr;
};

}  // namespace bwsim
