#pragma once
// Pieces the microbenchmark programs (Ubench*.cpp) share: the 128-byte-row tensor map of the
// calibration programs, and the staged TMA load loop that every stream of them runs.
#include <array>
#include <cstdint>

#include "bwsim/core/Median.hpp"
#include "bwsim/hw/sm/ChipLayout.hpp"
#include "bwsim/kernel/Simulator.hpp"

namespace bwsim {

inline constexpr std::uint32_t kUbenchRowBytes = 128;

// calibration_ptx.cuh's make_map: uint8 rows of 128 bytes, box {128, box_rows}, 128B swizzle
// (silicon's map asks the 128B L2 promotion, a line: the model fetches a line either way).
inline TensorMap ubench_box_map(GmemAddr base, std::uint32_t rows, std::uint32_t box_rows,
                                L2Promotion promotion = L2Promotion::None) {
  return TensorMap::tiled({.dtype = DataType::U8, .address = base, .dims = {kUbenchRowBytes, rows},
                           .strides = {kUbenchRowBytes}, .box = {kUbenchRowBytes, box_rows}, .swizzle = Swizzle::B128,
                           .l2_promotion = promotion});
}

// calibration_ptx.cuh's make_strided_map: uint8 rows of `width` bytes, box {128, box_rows} (one
// 128-byte column of box_rows rows), 128B swizzle, L2 promotion `promotion`.
inline TensorMap ubench_strided_map(GmemAddr base, std::uint64_t width, std::uint64_t rows, std::uint32_t box_rows,
                                    L2Promotion promotion) {
  return TensorMap::tiled({.dtype = DataType::U8, .address = base, .dims = {width, rows}, .strides = {width},
                           .box = {kUbenchRowBytes, box_rows}, .swizzle = Swizzle::B128, .l2_promotion = promotion});
}

// h100_epilogue.cu's epilogue chunks (UbenchEpilogue*.cpp): D is 1024 x 1024 bf16 stored in 64 x
// 64 boxes, 128B-swizzled, each box an 8 KiB chunk of which every warp of a warpgroup converts and
// stores 2 KiB; a warpgroup runs 256 of them.
inline constexpr std::uint32_t kEpilogueChunks = 256, kEpilogueChunkBytes = 8192, kEpilogueWarpBytes = kEpilogueChunkBytes / 4;
inline TensorMap epilogue_chunk_map(Simulator& sim) {
  return TensorMap::tiled({.dtype = DataType::BF16, .address = sim.gmem().alloc(1024 * 1024 * 2), .dims = {1024, 1024},
                           .strides = {1024 * 2}, .box = {64, 64}, .swizzle = Swizzle::B128});
}
// A warp's 2 KiB of the chunk at `buf`: 32 values per thread, 16 cvt.rn.bf16x2.f32 issued between
// its 16 st.shared.b32 (timing mode: the bytes are not moved).
inline void store_epilogue_chunk(Warp& w, SmemAddr buf) {
  static const std::array<std::byte, kEpilogueWarpBytes> staged{};
  w.st_shared_tensor(buf + (w.warp_idx() % 4) * kEpilogueWarpBytes, staged, 4, {CorePipe::Cvt, 16});
}

// The silicon %smid the model's SM `sm` plays in the programs that give roles by %smid: SM i of
// GPC g is 16 (i / 2) + 2 g + i % 2, h100_gpc_map.csv's numbering (GPC g holds %smid 2g, 2g + 1,
// 2g + 16, 2g + 17, ...) for the first 8 SMs of each GPC (%smid below 64); beyond, not silicon's.
inline std::uint32_t silicon_smid(const ChipLayout& layout, std::uint32_t sm) {
  const std::uint32_t gpc = layout.gpc[sm], i = sm - layout.gpc_first[gpc];
  return 16 * (i / 2) + 2 * gpc + i % 2;
}

// `stages` SMEM buffers of `box_bytes` from `base` on, their mbarriers right after them; load k
// goes to buffer k % stages once that buffer's previous box has arrived (tma_stream_loop of
// calibration_ptx.cuh). The caller initialises the barriers (init_barriers) and fences as its
// hardware twin does.
struct StagedLoads {
  const TensorMap& map;
  std::uint32_t base, box_bytes, stages;

  MBarrierRef barrier(std::uint32_t s) const { return MBarrierRef{base + stages * box_bytes + 8 * s}; }
  // The dynamic SMEM the buffers and their barriers take, from address 0.
  std::uint32_t smem_bytes() const { return base + stages * box_bytes + 8 * stages; }
  void init_barriers(Warp& w) const {
    for (std::uint32_t s = 0; s < stages; ++s) w.mbarrier_init(barrier(s), 1);
  }
  // `loads` loads, then the wait for the last of them; `issue(k)` is called as load k is issued
  // and returns its box coordinates, `landed(k)` as the wait that sees load k land returns.
  template <class Issue, class Landed = void (*)(std::uint32_t)>
  Task run(Warp& w, std::uint32_t loads, Issue issue, Landed landed = [](std::uint32_t) {}) const {
    for (std::uint32_t k = 0; k < loads + stages; ++k) {
      const std::uint32_t s = k % stages;
      if (k >= stages) {
        co_await w.mbarrier_wait(barrier(s), ((k - stages) / stages) & 1u);
        landed(k - stages);
      }
      if (k >= loads) continue;
      w.mbarrier_arrive_expect_tx(barrier(s), box_bytes);
      w.tma_load(map, SmemAddr{base + s * box_bytes}, barrier(s), issue(k));
    }
  }
};

}  // namespace bwsim
