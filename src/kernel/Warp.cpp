#include "bwsim/kernel/Warp.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "bwsim/hw/sm/Sm.hpp"

namespace bwsim {

std::uint32_t Warp::sm_idx() const { return cta_.sm().index(); }

void Warp::set_role(std::string_view role) {
  ws_.role = role;
  if (Tracer* t = cta_.tracer())
    t->thread_name(static_cast<int>(sm_idx()), static_cast<int>(ws_.trace_tid), fmt::format("w{} {}", ws_.index, role));
}

Cycle Warp::issue(Cycle cost) {
  const Cycle t = ws_.ready;
  ws_.ready += cost;
  ws_.account(Activity::Issue, cost);
  ++ws_.instructions;
  return t;
}

void Warp::trace_op(std::string_view name, Cycle at, Cycle cost) const {
  cta_.tracer()->span(static_cast<int>(sm_idx()), static_cast<int>(ws_.trace_tid), name, at, cost);
}

// ------------------------------------------------------------------------------- mbarrier

void Warp::mbarrier_init(MBarrierRef bar, std::uint32_t count, std::string_view name) {
  // Takes effect at issue: other warps may only use the barrier after a synchronisation.
  const Cycle t = issue(config().warp.issue_cycles);
  cta_.barrier_init(ws_, bar.offset, count, std::string(name));
  if (cta_.tracer()) trace_op(fmt::format("mbarrier.init {} count {}", cta_.barrier_label(bar.offset), count), t, config().warp.issue_cycles);
}

void Warp::barrier_op(BarrierOp op, MBarrierRef bar, std::uint32_t value) {
  const Cycle cost = config().warp.issue_cycles;
  const Cycle t = issue(cost);
  cta_.barrier_op_at(ws_, t + config().mbarrier.arrive_latency, op, bar.offset, value);
  if (cta_.tracer()) {
    static constexpr const char* names[] = {"mbarrier.arrive",     "mbarrier.arrive",      "mbarrier.arrive.expect_tx",
                                            "mbarrier.expect_tx",  "mbarrier.complete_tx", "mbarrier.inval",
                                            "bar.arrive"};
    trace_op(fmt::format("{} {} ({})", names[static_cast<int>(op)], cta_.barrier_label(bar.offset), value), t, cost);
  }
}

void Warp::mbarrier_arrive(MBarrierRef bar, std::uint32_t count) { barrier_op(BarrierOp::Arrive, bar, count); }
void Warp::mbarrier_arrive_expect_tx(MBarrierRef bar, std::uint32_t bytes) {
  barrier_op(BarrierOp::ArriveExpectTx, bar, bytes);
}
void Warp::mbarrier_expect_tx(MBarrierRef bar, std::uint32_t bytes) { barrier_op(BarrierOp::ExpectTx, bar, bytes); }
void Warp::mbarrier_complete_tx(MBarrierRef bar, std::uint32_t bytes) { barrier_op(BarrierOp::CompleteTx, bar, bytes); }
void Warp::mbarrier_inval(MBarrierRef bar) { barrier_op(BarrierOp::Inval, bar, 0); }

Warp::WaitAwaiter Warp::mbarrier_wait(MBarrierRef bar, std::uint32_t parity) {
  return WaitAwaiter{ws_, WaitKind::BarrierParity, bar.offset, parity & 1u};
}
Warp::WaitAwaiter Warp::mbarrier_wait(BarrierToken token) {
  return WaitAwaiter{ws_, WaitKind::BarrierToken, token.barrier, token.phase};
}
Warp::ProbeAwaiter Warp::mbarrier_test_wait_parity(MBarrierRef bar, std::uint32_t parity) {
  return ProbeAwaiter{*this, bar.offset, true, parity & 1u};
}
Warp::ProbeAwaiter Warp::mbarrier_test_wait(BarrierToken token) {
  return ProbeAwaiter{*this, token.barrier, false, token.phase};
}

bool Warp::ProbeAwaiter::await_ready() {
  // Evaluated once the warp's clock has caught up with the engine.
  if (w.ws_.ready <= w.cta_.ctx().now()) return true;
  w.ws_.wait = WaitKind::Delay;
  w.ws_.wait_slot = kDelayLatency;
  w.ws_.wait_value = w.ws_.ready;
  return false;
}

bool Warp::ProbeAwaiter::await_resume() {
  const MBarrier& b = w.cta_.live_barrier(w.ws_, barrier, by_parity ? "mbarrier.test_wait.parity" : "mbarrier.test_wait");
  const bool done = by_parity ? b.parity_completed(static_cast<std::uint32_t>(value)) : b.phase() > value;
  w.issue(w.config().warp.issue_cycles);
  return done;
}

Warp::ArriveAwaiter Warp::mbarrier_arrive_token(MBarrierRef bar, std::uint32_t count) {
  barrier_op(BarrierOp::ArriveToken, bar, count);
  // Resume once the arrival has landed (its event was scheduled first, so it runs first).
  ws_.wait = WaitKind::Delay;
  ws_.wait_slot = kDelayLatency;
  ws_.wait_value = ws_.ready - config().warp.issue_cycles + config().mbarrier.arrive_latency;
  return ArriveAwaiter{*this, bar.offset};
}

// ------------------------------------------------------------------------------- TMA

void Warp::check_map_in_gmem(const TensorMap& map, const char* op) {
  if (!cta_.ctx().gmem.contains(map.address(), map.footprint_bytes()))
    cta_.fail(Rule::TmaInvalid, ws_, op,
              fmt::format("the tensor map spans GMEM [{:#x}, +{}) outside every allocation", map.address().value,
                          map.footprint_bytes()),
              "build the tensor map over an allocated buffer with its real dimensions and strides");
}

void Warp::check_packed_coords(const TensorMap& map, const TensorCoords& coords, const char* op) {
  if (tma_packing(map.dtype()) && coords[0] % 16 != 0)
    cta_.fail(Rule::TmaInvalid, ws_, op,
              fmt::format("innermost coordinate {} of a {} tensor is not a multiple of 16", coords[0],
                          name_of(map.dtype())),
              "packed FP4/FP6 tensors move whole groups of 16 elements");
}

void Warp::tma_load(const TensorMap& map, SmemAddr dst, MBarrierRef bar, const TensorCoords& coords,
                    TmaLoadFlags flags) {
  const char* op = flags.multicast_mask ? "tma.load.multicast::cluster" : "tma.load";
  cta_.check_smem(ws_, op, dst.offset, map.box_bytes(), swizzle_alignment(map.swizzle()));
  check_packed_coords(map, coords, op);
  if (flags.cta_group_2) check_pair(op, false);
  const std::uint16_t dests = mask_or_self(flags.multicast_mask, op);
  // Every barrier the load will signal must be live now: a peer's only after the cluster
  // barrier that follows its initialisation.
  for (std::uint32_t r = 0; r < cta_.cluster().size(); ++r)
    if (dests >> r & 1u) {
      cta_.cluster().cta(flags.cta_group_2 ? r & ~1u : r).live_barrier(ws_, bar.offset, op);
      cta_.race_check([&dest = cta_.cluster().cta(r), &ws = ws_, b = dst.offset, e = dst.offset + map.box_bytes()] {
        races::tma_write(dest, ws, b, e);
      });
    }
  check_map_in_gmem(map, op);
  const Cycle cost = config().tma.issue_cycles;
  const Cycle t = issue(cost);
  cta_.sm().tma().load(cta_, ws_, map, coords, dst.offset, bar.offset, TmaDestinations{dests, flags.cta_group_2}, t);
  if (cta_.tracer()) trace_op(fmt::format("{} issue", op), t, cost);
}

void Warp::tma_store(const TensorMap& map, SmemAddr src, const TensorCoords& coords) {
  bulk_write(map, src, coords, GmemWrite::Copy);
}

void Warp::tma_reduce_add(const TensorMap& map, SmemAddr src, const TensorCoords& coords) {
  if (map.dtype() != DataType::F32)
    cta_.fail(Rule::TmaInvalid, ws_, "tma.reduce.add", fmt::format("a {} tensor map", name_of(map.dtype())),
              "bwsim models .add reductions of f32 tensors only");
  bulk_write(map, src, coords, GmemWrite::AddF32);
}

void Warp::bulk_write(const TensorMap& map, SmemAddr src, const TensorCoords& coords, GmemWrite how) {
  const char* op = how == GmemWrite::Copy ? "tma.store" : "tma.reduce.add";
  check_packed_coords(map, coords, op);
  cta_.check_smem(ws_, op, src.offset, map.box_bytes(), swizzle_alignment(map.swizzle()));
  check_map_in_gmem(map, op);
  cta_.check_no_live_barrier(ws_, op, src.offset, map.box_bytes());
  cta_.race_check([&cta = cta_, &ws = ws_, b = src.offset, e = src.offset + map.box_bytes(), op] {
    races::async_proxy_read(cta, ws, b, e, op);
  });
  const Cycle cost = config().tma.issue_cycles;
  const Cycle t = issue(cost);
  cta_.sm().tma().store(cta_, ws_, map, coords, src.offset, t, how);
  if (cta_.tracer()) trace_op(how == GmemWrite::Copy ? "tma.store issue" : "tma.reduce.add issue", t, cost);
}

void Warp::tma_prefetch(const TensorMap& map, const TensorCoords& coords) {
  const Cycle t = issue(config().tma.issue_cycles);
  cta_.sm().tma().prefetch(cta_, ws_, map, coords, t);
}

void Warp::bulk_commit_group() {
  issue(config().warp.issue_cycles);
  ws_.bulk.commit();
}

Warp::WaitAwaiter Warp::bulk_wait_group(std::uint32_t n) { return WaitAwaiter{ws_, WaitKind::BulkGroups, 0, n}; }
Warp::WaitAwaiter Warp::bulk_wait_group_read(std::uint32_t n) {
  return WaitAwaiter{ws_, WaitKind::BulkGroupsRead, 0, n};
}

void Warp::fence_proxy_async() {
  // The fence takes its cycles of the SM's SMEM port in the first free ones from the warp's clock
  // (behind the stores already there, its own among them); the warp goes on when they are done.
  const Cycle fenced = cta_.sm().smem_port().reserve(cta_.ctx().now(), ws_.ready, config().smem.proxy_fence_cycles);
  issue(std::max(ws_.ready + config().warp.issue_cycles, fenced) - ws_.ready);
  cta_.race_check([&cta = cta_, &ws = ws_] { races::proxy_fence(cta, ws); });
}

// ------------------------------------------------------------------------------- registers

Warp::WaitAwaiter Warp::setmaxnreg_inc(std::uint32_t n) {
  cta_.setmaxnreg_check(ws_, "setmaxnreg.inc", n, true);
  return WaitAwaiter{ws_, WaitKind::RegisterPool, 0, n};
}

void Warp::setmaxnreg_dec(std::uint32_t n) {
  cta_.setmaxnreg_check(ws_, "setmaxnreg.dec", n, false);
  issue(config().warp.issue_cycles);
  cta_.registers_release(ws_, n);
}

// ------------------------------------------------------------------------------- CTA sync

Warp::WaitAwaiter Warp::bar_sync(std::uint32_t id, std::uint32_t threads) {
  return WaitAwaiter{ws_, WaitKind::NamedBarrier, id, threads};
}
Warp::WaitAwaiter Warp::syncthreads() { return bar_sync(0, cta_.block_threads()); }

void Warp::bar_arrive(std::uint32_t id, std::uint32_t threads) {
  const Cycle t = issue(config().warp.issue_cycles);
  cta_.barrier_op_at(ws_, t, BarrierOp::NamedArrive, id, threads);
}

// ------------------------------------------------------------------------------- SMEM

void Warp::execute(CorePipe pipe, std::uint32_t instructions) {
  const PipeWork work[] = {{pipe, instructions}};
  execute(work);
}

// Each pipe takes its instructions back to back from when it is free; the pipes run side by side
// (an instruction stream mixing them interleaves), and the warp's issue slots bound the whole.
Warp::PipesReserved Warp::reserve_pipes(std::span<const PipeWork> work) {
  const Cycle issue = config().warp.issue_cycles;
  Cycle end = ws_.ready, issue_slots = 0;
  for (const PipeWork& w : work) {
    if (w.instructions == 0) continue;
    const Cycle occupancy = pipe_occupancy(w.pipe, config());
    Cycle& free = cta_.sm().pipe_free(ws_.index % kSubPartitions, w.pipe);
    free = std::max(ws_.ready, free) + w.instructions * occupancy;
    cta_.sm().pipe_stats().busy_cycles(w.pipe) += w.instructions * occupancy;
    end = std::max(end, free - occupancy + issue);  // the last instruction issues when its pipe takes it
    issue_slots += w.instructions * issue;
    ws_.instructions += w.instructions;
  }
  cta_.sm().pipe_stats().issue_cycles += issue_slots;
  return {std::max(end, ws_.ready + issue_slots), issue_slots};
}

void Warp::execute(std::span<const PipeWork> work) {
  const auto [end, issue_slots] = reserve_pipes(work);
  ws_.account(Activity::Issue, issue_slots);
  ws_.account(Activity::Compute, end - ws_.ready - issue_slots);
  if (cta_.tracer() && end > ws_.ready) {
    static constexpr const char* kNames[] = {"fma", "alu", "mufu", "cvt"};
    std::string name;
    for (const PipeWork& w : work)
      if (w.instructions)
        name += fmt::format("{}{} x{}", name.empty() ? "" : " ", kNames[static_cast<std::size_t>(w.pipe)], w.instructions);
    trace_op(name, ws_.ready, end - ws_.ready);
  }
  ws_.ready = end;
}

Warp::BlockAwaiter Warp::run(const CoreBlock& block) {
  if (!block.finished())
    throw std::logic_error(fmt::format("kernel {}: CoreBlock '{}' run before finish(config)", cta_.ctx().kernel, block.name()));
  return BlockAwaiter{*this, block};
}

void Warp::BlockAwaiter::await_suspend(std::coroutine_handle<> h) {
  start = w.ws_.ready;
  w.ws_.wait = WaitKind::CoreBlock;
  w.ws_.block = &block.profile();
  w.cta_.park(w.ws_, h);
}

void Warp::BlockAwaiter::await_resume() const {
  if (block.profile().instructions == 0) return;
  if (w.cta_.tracer()) {
    const CoreBlockProfile& p = block.profile();
    w.trace_op(fmt::format("{}: {} instr (fma {} alu {} mufu {} cvt {} other {})", block.name(), p.instructions,
                           block.count(CoreOp::Fma) + block.count(CoreOp::Fma2), block.count(CoreOp::Alu),
                           block.count(CoreOp::Mufu), block.count(CoreOp::Cvt), block.count(CoreOp::Other)),
               start, w.ws_.ready - start);
  }
}

void Warp::st_shared(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width) {
  store_shared(dst, data, width, true);
}
void Warp::ld_shared(SmemAddr src, std::span<std::byte> out, std::uint32_t width) { load_shared(src, out, width, true); }
// A timing run's tensor bytes are placeholders: copying them cost the main GEMM about a tenth of
// its host time (its epilogue staging, through cold host cache lines of every SM's SMEM).
void Warp::st_shared_tensor(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width) {
  store_shared(dst, data, width, functional());
}
void Warp::st_shared_tensor(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width, PipeWork made_by) {
  const PipeWork work[] = {made_by};
  store_shared(dst, data, width, functional(), reserve_pipes(work).end);
}
void Warp::ld_shared_tensor(SmemAddr src, std::span<std::byte> out, std::uint32_t width) {
  load_shared(src, out, width, functional());
}

void Warp::store_shared(SmemAddr dst, std::span<const std::byte> data, std::uint32_t width, bool move_bytes,
                        Cycle not_before) {
  const auto len = static_cast<std::uint32_t>(data.size());
  cta_.check_smem(ws_, "st.shared", dst.offset, len, 1);
  cta_.check_no_live_barrier(ws_, "st.shared", dst.offset, len);
  if (move_bytes) std::memcpy(cta_.smem().bytes(dst.offset, len).data(), data.data(), len);
  cta_.race_check([&cta = cta_, &ws = ws_, b = dst.offset, e = dst.offset + len] { races::generic_write(cta, ws, b, e); });
  smem_transfer("st.shared", dst.offset, len, width, not_before);
}

void Warp::load_shared(SmemAddr src, std::span<std::byte> out, std::uint32_t width, bool move_bytes) {
  const auto len = static_cast<std::uint32_t>(out.size());
  cta_.check_smem(ws_, "ld.shared", src.offset, len, 1);
  cta_.race_check([&cta = cta_, &ws = ws_, b = src.offset, e = src.offset + len] { races::generic_read(cta, ws, b, e); });
  if (move_bytes) std::memcpy(out.data(), cta_.smem().bytes(src.offset, len).data(), len);
  smem_transfer("ld.shared", src.offset, len, width);
}

void Warp::smem_transfer(const char* op, std::uint32_t offset, std::uint32_t bytes, std::uint32_t width,
                         Cycle not_before) {
  if (width == 0) {  // the widest aligned one; sub-word accesses count as 4-byte instructions
    width = 16;
    while (width > 4 && (offset % width != 0 || bytes % width != 0)) width /= 2;
  } else if ((width != 4 && width != 8 && width != 16) || offset % width != 0) [[unlikely]] {
    smem_width_invalid(op, offset, width);
  }
  const auto& c = config().smem;
  const std::uint32_t instructions = std::max<std::uint32_t>(1, (bytes + 32 * width - 1) / (32 * width));
  const Cycle path = instructions * c.instruction_cycles + (bytes + c.warp_bytes_per_cycle - 1) / c.warp_bytes_per_cycle;
  // The bytes take the SM's port in its first free cycles from the warp's clock on; the warp is
  // done when its own path and the port both are (and, for st_shared_tensor's conversions, its
  // last conversion has issued). The transfer counts as the warp's issue.
  // What wgmma operand reads and TMA load writes take meanwhile stretches the port cycles.
  const Cycle now = cta_.ctx().now();
  const Cycle port_cycles = cta_.sm().smem_background().stretch(
      now, ws_.ready, (bytes + c.bytes_per_cycle - 1) / c.bytes_per_cycle, static_cast<double>(c.bytes_per_cycle),
      config().tma.bytes_per_cycle);
  const Cycle port = cta_.sm().smem_port().reserve(now, ws_.ready, port_cycles);
  cta_.sm().pipe_stats().smem_bytes += bytes;
  issue(std::max({ws_.ready + path, port, not_before}) - ws_.ready);
  ws_.instructions += instructions - 1;
}

void Warp::smem_width_invalid(const char* op, std::uint32_t offset, std::uint32_t width) {
  if (width != 4 && width != 8 && width != 16)
    cta_.fail(Rule::SmemMisaligned, ws_, op, fmt::format("an access width of {} bytes per thread", width),
              "4 (.b32), 8 (.v2.b32) or 16 (.v4.b32)");
  cta_.fail(Rule::SmemMisaligned, ws_, op,
            fmt::format("SMEM address {:#x} is not aligned to the access width of {} bytes", offset, width),
            "a vector access needs its address aligned to its width: use a narrower one or align the buffer");
}

Warp::WaitAwaiter Warp::sleep(Cycle cycles) { return WaitAwaiter{ws_, WaitKind::Delay, kDelaySleep, cycles}; }

}  // namespace bwsim
