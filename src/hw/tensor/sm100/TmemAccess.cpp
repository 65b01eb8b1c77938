#include "bwsim/hw/tensor/sm100/TmemAccess.hpp"

namespace bwsim {

std::uint32_t tmem_lanes(TmemShape shape) { return shape == TmemShape::S32x32b ? 32 : 16; }

// 32-bit columns of one repetition.
static std::uint32_t columns_per_rep(TmemShape shape) {
  switch (shape) {
    case TmemShape::S32x32b: return 1;
    case TmemShape::S16x64b: return 2;
    case TmemShape::S16x128b: return 4;
    case TmemShape::S16x256b: return 8;
    case TmemShape::S16x32bx2: return 1;
  }
  return 1;
}

// Registers per thread of one repetition: the shape's bits / 32 threads / 32 bits.
static std::uint32_t regs_per_rep(TmemShape shape) {
  switch (shape) {
    case TmemShape::S32x32b: return 1;
    case TmemShape::S16x64b: return 1;
    case TmemShape::S16x128b: return 2;
    case TmemShape::S16x256b: return 4;
    case TmemShape::S16x32bx2: return 1;
  }
  return 1;
}

std::uint32_t tmem_regs_per_thread(TmemShape shape, std::uint32_t num) {
  if (num == 0 || num > 128 || (num & (num - 1)) != 0) return 0;
  const std::uint32_t regs = regs_per_rep(shape) * num;
  return regs > 128 ? 0 : regs;  // the ISA caps an access at 128 registers per thread
}

std::uint32_t tmem_columns(TmemShape shape, std::uint32_t num, bool pack16) {
  return columns_per_rep(shape) * num * (pack16 ? 2 : 1);
}

TmemCell tmem_cell(TmemShape shape, std::uint32_t t, std::uint32_t r, std::uint32_t half_split) {
  switch (shape) {
    case TmemShape::S32x32b: return {t, r};
    case TmemShape::S16x64b: return {t / 4 + 8 * (t % 2), (t / 2) % 2 + 2 * r};
    case TmemShape::S16x128b: return {t / 4 + 8 * (r % 2), t % 4 + 4 * (r / 2)};
    case TmemShape::S16x256b: return {t / 4 + 8 * ((r / 2) % 2), 2 * (t % 4) + r % 2 + 8 * (r / 4)};
    case TmemShape::S16x32bx2: return {t % 16, r + (t / 16) * half_split};
  }
  return {};
}

const char* name_of(TmemShape shape) {
  switch (shape) {
    case TmemShape::S32x32b: return "32x32b";
    case TmemShape::S16x64b: return "16x64b";
    case TmemShape::S16x128b: return "16x128b";
    case TmemShape::S16x256b: return "16x256b";
    case TmemShape::S16x32bx2: return "16x32bx2";
  }
  return "?";
}

std::uint32_t tmem_copy_rows(TmemCopyShape shape) {
  switch (shape) {
    case TmemCopyShape::S128x256b:
    case TmemCopyShape::S128x128b: return 128;
    case TmemCopyShape::S4x256b: return 4;
    case TmemCopyShape::S64x128bWarpx2_02_13:
    case TmemCopyShape::S64x128bWarpx2_01_23: return 64;
    case TmemCopyShape::S32x128bWarpx4: return 32;
  }
  return 0;
}

std::uint32_t tmem_copy_columns(TmemCopyShape shape) {
  return shape == TmemCopyShape::S128x256b || shape == TmemCopyShape::S4x256b ? 8 : 4;
}

std::uint32_t tmem_copy_lane_span(TmemCopyShape shape) { return shape == TmemCopyShape::S4x256b ? 97 : 128; }

TmemCopyLanes tmem_copy_lanes(TmemCopyShape shape, std::uint32_t r) {
  switch (shape) {
    case TmemCopyShape::S128x256b:
    case TmemCopyShape::S128x128b: return {1, {r}};
    case TmemCopyShape::S4x256b: return {1, {32 * r}};
    case TmemCopyShape::S64x128bWarpx2_02_13: return {2, {r, r + 64}};
    case TmemCopyShape::S64x128bWarpx2_01_23: return r < 32 ? TmemCopyLanes{2, {r, r + 32}} : TmemCopyLanes{2, {r + 32, r + 64}};
    case TmemCopyShape::S32x128bWarpx4: return {4, {r, r + 32, r + 64, r + 96}};
  }
  return {};
}

const char* name_of(TmemCopyShape shape) {
  switch (shape) {
    case TmemCopyShape::S128x256b: return "128x256b";
    case TmemCopyShape::S128x128b: return "128x128b";
    case TmemCopyShape::S4x256b: return "4x256b";
    case TmemCopyShape::S64x128bWarpx2_02_13: return "64x128b.warpx2::02_13";
    case TmemCopyShape::S64x128bWarpx2_01_23: return "64x128b.warpx2::01_23";
    case TmemCopyShape::S32x128bWarpx4: return "32x128b.warpx4";
  }
  return "?";
}

}  // namespace bwsim
