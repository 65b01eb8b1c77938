// The cluster operations of the Warp handle: identity, barrier.cluster, mapa, remote mbarrier
// arrives and distributed shared memory (PTX "Cluster of CTAs"; CUTLASS cute/arch/cluster_sm90).
#include <fmt/format.h>

#include <cstring>

#include "bwsim/check/RaceChecker.hpp"
#include "bwsim/hw/sm/Cluster.hpp"
#include "bwsim/kernel/Warp.hpp"

namespace bwsim {

namespace {
// The two SMs of a TPC are the closest pair a cluster can have (DSMEM and remote arrives are faster).
bool same_tpc(const Cta& a, const Cta& b) { return a.sm().index() / 2 == b.sm().index() / 2; }
}  // namespace

std::uint32_t Warp::cluster_nctarank() const { return cta_.cluster().size(); }
std::uint32_t Warp::cluster_idx() const { return cta_.cluster().id(); }
ClusterShape Warp::cluster_shape() const { return cta_.cluster().shape(); }

std::array<std::uint32_t, 3> Warp::cluster_cta_coord() const {
  const ClusterShape& s = cta_.cluster().shape();
  const std::uint32_t r = cta_.rank();
  return {r % s.x, (r / s.x) % s.y, r / (s.x * s.y)};
}

Cta& Warp::peer(std::uint32_t rank, const char* op) {
  const std::uint32_t size = cta_.cluster().size();
  if (rank >= size)
    cta_.fail(Rule::ClusterRankOutOfRange, ws_, op, fmt::format("rank {} is outside the cluster of {} CTAs", rank, size),
              "address ranks 0 .. %cluster_nctarank - 1");
  return cta_.cluster().cta(rank);
}

std::uint16_t Warp::mask_or_self(std::uint16_t mask, const char* op) {
  const std::uint32_t size = cta_.cluster().size();
  if (mask == 0) return static_cast<std::uint16_t>(1u << cta_.rank());
  if (mask >> size)
    cta_.fail(Rule::ClusterRankOutOfRange, ws_, op,
              fmt::format("CTA mask {:#06x} names ranks outside the cluster of {} CTAs", mask, size),
              "build the mask from ranks 0 .. %cluster_nctarank - 1");
  return mask;
}

void Warp::check_pair(const char* op, bool leader) {
  const std::uint32_t size = cta_.cluster().size();
  if (size % 2 != 0)
    cta_.fail(Rule::CtaPairMisuse, ws_, op, fmt::format("the cluster has {} CTA{}: no CTA pair", size, size == 1 ? "" : "s"),
              "launch with an even cluster size (ranks 2i and 2i+1 form a pair on one TPC)");
  if (leader && cta_.rank() % 2 != 0)
    cta_.fail(Rule::CtaPairMisuse, ws_, op,
              fmt::format("issued from rank {}, the pair's peer; only the leader (rank {}) issues it", cta_.rank(),
                          cta_.rank() - 1),
              "issue cta_group::2 MMAs from the even-rank CTA of the pair");
}

void Warp::cluster_arrive() { cluster_arrive_as("barrier.cluster.arrive", true); }

void Warp::cluster_arrive_relaxed() { cluster_arrive_as("barrier.cluster.arrive.relaxed", false); }

void Warp::cluster_arrive_as(const char* op, bool release) {
  if (ws_.cluster_arrived)
    cta_.fail(Rule::ClusterBarrierMisuse, ws_, op, "the warp arrives again without barrier.cluster.wait in between",
              "pair every barrier.cluster.arrive with a barrier.cluster.wait");
  const Cycle t = issue(config().warp.issue_cycles);
  ws_.cluster_arrive_release = release;
  // The release fence's cost grows with the CTAs it must reach.
  const std::uint32_t size = cta_.cluster().size();
  const Cycle fence = release ? config().cluster.barrier_release_latency +
                                    (size > 2 ? (size - 2) * config().cluster.barrier_release_per_cta : 0)
                              : 0;
  cta_.cluster().barrier_arrive(ws_, t + fence);
  if (cta_.tracer()) trace_op(op, t, 1);
}

Warp::WaitAwaiter Warp::cluster_wait() {
  if (!ws_.cluster_arrived)
    cta_.fail(Rule::ClusterBarrierMisuse, ws_, "barrier.cluster.wait", "the warp waits without having arrived",
              "call barrier.cluster.arrive before barrier.cluster.wait");
  ws_.cluster_arrived = false;
  return WaitAwaiter{ws_, WaitKind::ClusterBarrier, 0, ws_.cluster_arrive_phase};
}

void Warp::fence_mbarrier_init() {
  issue(config().warp.issue_cycles);
  cta_.fence_barrier_inits(ws_);
}

ClusterSmemAddr Warp::mapa(SmemAddr addr, std::uint32_t rank) {
  peer(rank, "mapa");
  issue(config().warp.issue_cycles);
  return ClusterSmemAddr{rank, addr.offset};
}

ClusterBarrierRef Warp::mapa(MBarrierRef bar, std::uint32_t rank) {
  peer(rank, "mapa");
  issue(config().warp.issue_cycles);
  return ClusterBarrierRef{rank, bar.offset};
}

void Warp::mbarrier_arrive(ClusterBarrierRef bar, std::uint32_t count) {
  const char* op = "mbarrier.arrive.shared::cluster";
  Cta& target = peer(bar.rank, op);
  target.check_resident_for(ws_, op);
  target.live_barrier(ws_, bar.offset, op);
  const Cycle t = issue(config().warp.issue_cycles);
  const Cycle latency = &target == &cta_        ? config().mbarrier.arrive_latency
                        : same_tpc(target, cta_) ? config().cluster.remote_arrive_latency_pair
                                                 : config().cluster.remote_arrive_latency;
  target.barrier_op_at(ws_, t + latency, BarrierOp::Arrive, bar.offset, count);
  if (cta_.tracer())
    trace_op(fmt::format("{} {} ({})", op, target.barrier_label(bar.offset), count), t, config().warp.issue_cycles);
}

void Warp::st_shared_cluster(ClusterSmemAddr dst, std::span<const std::byte> data) {
  const char* op = "st.shared::cluster";
  Cta& target = peer(dst.rank, op);
  target.check_resident_for(ws_, op);
  const auto len = static_cast<std::uint32_t>(data.size());
  target.check_smem(ws_, op, dst.offset, len, 1);
  target.check_no_live_barrier(ws_, op, dst.offset, len);
  const std::uint32_t bw = config().smem.bytes_per_cycle;
  const Cycle t = issue((len + bw - 1) / bw);
  cta_.cluster().dsmem_store_at(ws_, t + (&target == &cta_ ? 0 : config().cluster.dsmem_store_latency), dst.rank,
                                dst.offset, data);
}

void Warp::bulk_copy_to_cluster(ClusterSmemAddr dst, SmemAddr src, std::uint32_t bytes, ClusterBarrierRef bar) {
  const char* op = "cp.async.bulk.shared::cluster";
  Cta& target = peer(dst.rank, op);
  if (bar.rank != dst.rank)
    cta_.fail(Rule::TmaInvalid, ws_, op,
              fmt::format("the barrier is in CTA {} but the bytes go to CTA {}", bar.rank, dst.rank),
              "complete_tx is signalled on a barrier of the destination CTA");
  if (bytes == 0 || bytes % 16 || src.offset % 16 || dst.offset % 16)
    cta_.fail(Rule::SmemMisaligned, ws_, op,
              fmt::format("{} bytes from {:#x} to {:#x}", bytes, src.offset, dst.offset),
              "a bulk copy moves a non-zero multiple of 16 bytes between 16-byte aligned addresses");
  cta_.check_smem(ws_, op, src.offset, bytes, 16);
  target.check_resident_for(ws_, op);
  target.check_smem(ws_, op, dst.offset, bytes, 16);
  target.live_barrier(ws_, bar.offset, op);
  cta_.race_check([&cta = cta_, &target, &ws = ws_, s = src.offset, d = dst.offset, bytes, op] {
    races::async_proxy_read(cta, ws, s, s + bytes, op);
    races::tma_write(target, ws, d, d + bytes);
  });
  const Cycle t = issue(config().tma.issue_cycles);
  const std::uint32_t bw = config().smem.bytes_per_cycle;
  cta_.sm().pipe_stats().smem_bytes += bytes;
  cta_.cluster().bulk_copy_at(ws_, t + (bytes + bw - 1) / bw + (&target == &cta_ ? 0 : config().cluster.dsmem_store_latency),
                              dst.rank, dst.offset, cta_.smem().bytes(src.offset, bytes), bar.offset);
  if (cta_.tracer()) trace_op(fmt::format("{} {} B -> CTA {}", op, bytes, dst.rank), t, config().tma.issue_cycles);
}

void Warp::ld_shared_cluster(ClusterSmemAddr src, std::span<std::byte> out) {
  const char* op = "ld.shared::cluster";
  Cta& target = peer(src.rank, op);
  target.check_resident_for(ws_, op);
  const auto len = static_cast<std::uint32_t>(out.size());
  target.check_smem(ws_, op, src.offset, len, 1);
  std::memcpy(out.data(), target.smem().bytes(src.offset, len).data(), len);
  if (&target != &cta_) cta_.ctx().couple(Coupling::Cluster, 0);  // the peer's SMEM as it is now
  const std::uint32_t bw = config().smem.bytes_per_cycle;
  const Cycle t = issue((len + bw - 1) / bw);
  // The value is usable a round trip later: the warp's next instruction waits for it.
  const Cycle latency = &target == &cta_        ? 0
                        : same_tpc(target, cta_) ? config().cluster.dsmem_load_latency_pair
                                                 : config().cluster.dsmem_load_latency;
  const Cycle ready = std::max(ws_.ready, t + latency);
  ws_.account(Activity::Latency, ready - ws_.ready);
  ws_.ready = ready;
}

}  // namespace bwsim
