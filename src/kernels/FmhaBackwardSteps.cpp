#include "bwsim/kernels/FmhaBackwardSteps.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <numbers>
#include <cstring>
#include <vector>

#include "bwsim/core/Bits.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"
#include "bwsim/kernels/AttentionBackwardCode.hpp"
#include "bwsim/kernels/AttentionOperands.hpp"

namespace bwsim {
namespace {

using attention::kChunk;
using attention::kChunkBytes;
constexpr std::uint32_t kRows = 128, kWarpRows = 32;
constexpr MBarrierRef kFull{0};
constexpr std::int32_t i32(std::uint64_t v) { return static_cast<std::int32_t>(v); }

constexpr std::uint32_t kWarpBytes = kWarpRows * 128;  // a warp's rows of one 64-column chunk

// Element (row, col) of a warp's 32 rows of a 16-bit tile (64-column chunks of 4 KiB, each in
// the 128-byte swizzle).
float row_value(std::span<const std::byte> rows, DataType t, std::uint32_t row, std::uint32_t col) {
  return load_as_float(t, &rows[col / kChunk * kWarpBytes + swizzle_offset(Swizzle::B128, row * 128 + col % kChunk * 2)]);
}

}  // namespace

// SMEM: the barrier, O and dO tiles from 1024, the LSE row, then D and LSE log2 rows, then a
// 16 KiB zero box.
RunResult run_bwd_preprocess(Simulator& sim, const BwdPreTensors& t) {
  const std::uint32_t chunks = t.headdim / kChunk, m_blocks = (t.seqlen + kRows - 1) / kRows;
  const std::uint32_t o_at = 1024, do_at = o_at + chunks * kChunkBytes, lse_at = do_at + chunks * kChunkBytes;
  const std::uint32_t out_at = lse_at + 512, zero_at = out_at + 1024, smem = zero_at + kChunkBytes;
  const std::uint32_t group = t.heads / t.kv_heads;
  const CoreBlock row_code = bwd_dot_block(t.headdim, sim.config());
  auto program = [&](Warp& w) -> Task {
    const std::uint32_t bh = w.cta_idx() / m_blocks, m = w.cta_idx() % m_blocks, q = w.warp_idx();
    w.set_role(fmt::format("Pre w{}", q));
    const TensorMap& o = *t.o;
    if (q == 0) {
      w.mbarrier_init(kFull, 1, "pre.full");
      w.mbarrier_arrive_expect_tx(kFull, 2 * chunks * kChunkBytes + 512);
      for (std::uint32_t c = 0; c < chunks; ++c) {
        w.tma_load(o, SmemAddr{o_at + c * kChunkBytes}, kFull, {i32(c * kChunk), i32(m * kRows), i32(bh)});
        w.tma_load(*t.d_o, SmemAddr{do_at + c * kChunkBytes}, kFull, {i32(c * kChunk), i32(m * kRows), i32(bh)});
      }
      w.tma_load(*t.lse, SmemAddr{lse_at}, kFull, {i32(m * kRows), i32(bh)});
    }
    std::vector<std::byte> zeros(kWarpRows * 128);
    w.st_shared_tensor(SmemAddr{zero_at + q * kWarpRows * 128}, zeros);  // this warp's rows of the zero box
    co_await w.syncthreads();
    co_await w.mbarrier_wait(kFull, 0);
    // The warp's 32 rows of O and dO (4 KiB of every chunk) and of the LSE.
    std::vector<std::byte> o_rows(chunks * kWarpBytes), do_rows(chunks * kWarpBytes);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      w.ld_shared_tensor(SmemAddr{o_at + c * kChunkBytes + q * kWarpBytes}, std::span(o_rows).subspan(c * kWarpBytes, kWarpBytes));
      w.ld_shared_tensor(SmemAddr{do_at + c * kChunkBytes + q * kWarpBytes}, std::span(do_rows).subspan(c * kWarpBytes, kWarpBytes));
    }
    std::vector<float> lse(kWarpRows), delta(kWarpRows), lse_log2(kWarpRows);
    w.ld_shared_tensor(SmemAddr{lse_at + q * kWarpRows * 4}, std::as_writable_bytes(std::span(lse)));
    co_await w.run(row_code);
    if (w.functional())
      for (std::uint32_t r = 0; r < kWarpRows; ++r) {
        float sum = 0;
        for (std::uint32_t c = 0; c < t.headdim; ++c)
          sum += row_value(o_rows, o.dtype(), r, c) * row_value(do_rows, o.dtype(), r, c);
        delta[r] = sum;
        lse_log2[r] = std::isinf(lse[r]) ? 0.0f : lse[r] * static_cast<float>(std::numbers::log2e);
      }
    w.st_shared_tensor(SmemAddr{out_at + q * kWarpRows * 4}, std::as_bytes(std::span(delta)));
    w.st_shared_tensor(SmemAddr{out_at + 512 + q * kWarpRows * 4}, std::as_bytes(std::span(lse_log2)));
    w.fence_proxy_async();
    co_await w.syncthreads();
    if (q == 0) {
      w.tma_store(*t.delta, SmemAddr{out_at}, {i32(m * kRows), i32(bh)});
      w.tma_store(*t.lse_log2, SmemAddr{out_at + 512}, {i32(m * kRows), i32(bh)});
      for (std::uint32_t c = 0; c < t.headdim / 32; ++c) {
        if (t.dq_acc) w.tma_store(*t.dq_acc, SmemAddr{zero_at}, {i32(c * 32), i32(m * kRows), i32(bh)});
        if (t.dk_acc && bh % t.heads % group == 0) {  // the group's first head zeroes its K/V head's sums
          const std::uint32_t kv = bh / t.heads * t.kv_heads + bh % t.heads / group;
          w.tma_store(*t.dk_acc, SmemAddr{zero_at}, {i32(c * 32), i32(m * kRows), i32(kv)});
          w.tma_store(*t.dv_acc, SmemAddr{zero_at}, {i32(c * 32), i32(m * kRows), i32(kv)});
        }
      }
      w.bulk_commit_group();
      co_await w.bulk_wait_group(0);
    }
  };
  return sim.launch("fmha_bwd_pre",
                    LaunchConfig{.grid_ctas = t.bh * m_blocks, .block_threads = 128, .dynamic_smem_bytes = smem},
                    program);
}

// SMEM: the barrier, the fp32 source boxes (32 columns x 128 rows each) from 1024, then the
// 16-bit result (rows of `cols`).
RunResult run_bwd_convert(Simulator& sim, std::span<const BwdConvertJob> jobs) {
  std::vector<std::uint32_t> first(jobs.size() + 1, 0);  // the first CTA of each job
  std::uint32_t cols = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    first[i + 1] = first[i] + jobs[i].slabs * ((jobs[i].rows + kRows - 1) / kRows);
    cols = std::max(cols, jobs[i].cols);
  }
  // Two buffers of source boxes: a part lands in one while the warps add the other.
  const std::uint32_t part_bytes = cols / 32 * kRows * 128, src_at = 1024, dst_at = src_at + 2 * part_bytes,
                      smem = dst_at + kRows * cols * 2;
  const CoreBlock row_code = bwd_convert_block(cols, sim.config());
  auto program = [&](Warp& w) -> Task {
    std::size_t j = 0;
    while (w.cta_idx() >= first[j + 1]) ++j;
    const BwdConvertJob& job = jobs[j];
    const std::uint32_t m_blocks = (job.rows + kRows - 1) / kRows, at = w.cta_idx() - first[j];
    const std::uint32_t slab = at / m_blocks, m = at % m_blocks, q = w.warp_idx(), boxes = job.cols / 32;
    w.set_role(fmt::format("Post w{}", q));
    const MBarrierRef full[2] = {kFull, MBarrierRef{kFull.offset + 8}};
    if (q == 0) {
      w.mbarrier_init(full[0], 1, "post.full[0]");
      w.mbarrier_init(full[1], 1, "post.full[1]");
    }
    co_await w.syncthreads();
    const auto [part0, part_end] = job.live ? job.live(slab, m) : std::pair<std::uint32_t, std::uint32_t>{0, 1};
    auto fetch = [&](std::uint32_t k) {  // part k into buffer (k - part0) % 2
      const std::uint32_t buf = (k - part0) % 2;
      w.mbarrier_arrive_expect_tx(full[buf], boxes * kRows * 128);
      for (std::uint32_t c = 0; c < boxes; ++c)
        w.tma_load(*job.src, SmemAddr{src_at + buf * part_bytes + c * kRows * 128}, full[buf],
                   {i32(c * 32), i32(m * kRows), i32(slab * job.parts + k)});
    };
    if (q == 0)
      for (std::uint32_t k = part0; k < std::min(part_end, part0 + 2); ++k) fetch(k);
    std::vector<float> in(kWarpRows * job.cols), sum(kWarpRows * job.cols, 0.0f);
    for (std::uint32_t k = part0; k < part_end; ++k) {
      const std::uint32_t i = k - part0, buf = i % 2;
      co_await w.mbarrier_wait(full[buf], (i / 2) & 1u);
      for (std::uint32_t c = 0; c < boxes; ++c)
        w.ld_shared_tensor(SmemAddr{src_at + buf * part_bytes + c * kRows * 128 + q * kWarpRows * 128},
                    std::as_writable_bytes(std::span(in).subspan(c * kWarpRows * 32, kWarpRows * 32)));
      if (k > part0)  // the part's FADD per value (FADD2 per pair with paired fp32)
        w.execute(CorePipe::Fma, w.config().pipes.paired_fp32 ? job.cols / 2 : job.cols);
      if (w.functional())
        for (std::size_t e = 0; e < in.size(); ++e) sum[e] = k > part0 ? sum[e] + in[e] : in[e];
      if (k + 2 < part_end) {
        co_await w.syncthreads();  // every warp has read the buffer before part k + 2 lands in it
        if (q == 0) fetch(k + 2);
      }
    }
    co_await w.run(row_code);
    std::vector<std::byte> out(kWarpRows * job.cols * 2);
    if (w.functional())
      for (std::uint32_t r = 0; r < kWarpRows; ++r)
        for (std::uint32_t c = 0; c < job.cols; ++c)
          store_from_float(job.dst->dtype(), sum[c / 32 * kWarpRows * 32 + r * 32 + c % 32] * job.scale,
                           &out[(r * job.cols + c) * 2]);
    const SmemAddr rows{dst_at + q * kWarpRows * job.cols * 2};
    w.st_shared_tensor(rows, out);
    w.fence_proxy_async();
    w.tma_store(*job.dst, rows, {0, i32(m * kRows + q * kWarpRows), i32(slab)});
    w.bulk_commit_group();
    co_await w.bulk_wait_group(0);
  };
  return sim.launch("fmha_bwd_post",
                    LaunchConfig{.grid_ctas = first.back(), .block_threads = 128, .dynamic_smem_bytes = smem}, program);
}

}  // namespace bwsim
