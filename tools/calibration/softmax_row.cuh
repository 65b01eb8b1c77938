// softmax_row.cuh: the row-tile body of the softmax twin (issue 19) and the one-instruction helpers
// that it and h100_cudacore.cu's unit loops use.
//
// Every helper is __host__ __device__. On the device it is exactly one PTX instruction, so that ptxas
// sees the instruction we mean (fma.rn.f32 -> FFMA, ex2.approx.ftz.f32 -> MUFU.EX2, max.f32 -> FMNMX,
// add.rn.f32 -> FADD, mul.rn.f32 -> FMUL, add.rm.f32 -> FADD.RM, cvt.rn.bf16x2.f32 ->
// F2FP.BF16.F32.PACK_AB; the explicit .rn keeps ptxas from contracting a mul and an add into an FMA).
// On the host it is the IEEE operation that rounds the same way, except ex2, which is the exact exp2
// there: the CPU reference of h100_cudacore.cu runs this very body, so the only difference between the
// two is MUFU.EX2's approximation. The asm statements are not volatile: each result feeds the next
// step, so the compiler keeps them, and it may schedule them like compiled code.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#define TWIN_HD __host__ __device__ __forceinline__
// #pragma unroll in the device pass only (the host compiler has no such pragma and would warn).
#ifdef __CUDA_ARCH__
#define TWIN_UNROLL _Pragma("unroll")
#else
#define TWIN_UNROLL
#endif

// ---- bit casts --------------------------------------------------------------------------------
TWIN_HD uint32_t f2u(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  return u;
#endif
}
TWIN_HD float u2f(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof(x));
  return x;
#endif
}

// ---- one instruction each ----------------------------------------------------------------------
// a * b + c, one rounding (FFMA).
TWIN_HD float fma_rn(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  float d;
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c));
  return d;
#else
  return std::fma(a, b, c);
#endif
}
// a * b (FMUL).
TWIN_HD float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  float d;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return a * b;
#endif
}
// a + b (FADD).
TWIN_HD float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  float d;
  asm("add.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return a + b;
#endif
}
// max(a, b) (FMNMX); a NaN operand yields the other one, as std::fmax.
TWIN_HD float max_f(float a, float b) {
#ifdef __CUDA_ARCH__
  float d;
  asm("max.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return std::fmax(a, b);
#endif
}
// 2^x: MUFU.EX2 on the device (ex2.approx.ftz.f32: about 2 ulp, subnormals flushed, 2^-inf = +0);
// the exact value, rounded to float, on the host.
TWIN_HD float ex2(float x) {
#ifdef __CUDA_ARCH__
  float d;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(x));
  return d;
#else
  return static_cast<float>(std::exp2(static_cast<double>(x)));
#endif
}
// bf16 of `hi` in the upper half, bf16 of `lo` in the lower half, round to nearest even
// (F2FP.BF16.F32.PACK_AB). The pack of elements 2k, 2k+1 is pack_bf16x2(p[2k+1], p[2k]): element 2k
// at the lower address, as a bf16 pair in memory. The host rounding is for finite values (all here).
TWIN_HD uint32_t pack_bf16x2(float hi, float lo) {
#ifdef __CUDA_ARCH__
  uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  auto bf16 = [](float x) {
    const uint32_t u = f2u(x);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  };
  return (bf16(hi) << 16) | bf16(lo);
#endif
}
// The two bf16 halves of a packed word as floats.
TWIN_HD float bf16_lo(uint32_t w) { return u2f(w << 16); }
TWIN_HD float bf16_hi(uint32_t w) { return u2f(w & 0xffff0000u); }

// 1.5 * 2^23: at this magnitude a float's ulp is 1, so kMagic + x rounded down is kMagic + floor(x)
// exactly (|x| < 2^22), and floor(x) sits, as a two's-complement integer, in the low mantissa bits.
constexpr float kMagic = 12582912.0f;
// kMagic + floor(x), by one add.rm.f32 (FADD.RM) on the device: the FMA-pipe floor of FlashAttention-4's
// software exp2 (cvt.rmi.f32.f32 would be FRND, which runs on the MUFU/XU pipe the trick avoids).
TWIN_HD float floor_magic(float x) {
#ifdef __CUDA_ARCH__
  float d;
  asm("add.rm.f32 %0, %1, 0f4B400000;" : "=f"(d) : "f"(x));
  return d;
#else
  return kMagic + std::floor(x);
#endif
}

// ---- software 2^x on the FMA and ALU pipes (FlashAttention-4's exp2 emulation) ------------------
// 2^f for f in [0, 1): 1 + f (c1 + f (c2 + f c3)), the minimax fit of the RELATIVE error with c0 = 1
// held (so 2^0 is exact): Remez exchange on 4 points gives a max relative error of 8.56e-5 in exact
// arithmetic, 8.57e-5 with these float coefficients evaluated by fp32 FMAs (FlashAttention-4's degree-3
// set: 8.76e-5). bf16 keeps 8 bits (relative 3.9e-3), so degree 3 is enough for P.
constexpr float kExp2C1 = 0.695116758f;   // 0x3f31f32c
constexpr float kExp2C2 = 0.227644995f;   // 0x3e691bc5
constexpr float kExp2C3 = 0.0770670399f;  // 0x3d9dd553

// Cody-Waite reduction 2^x = 2^j * 2^f, j = floor(x), f = x - j in [0, 1): clamp (FMNMX), j by the
// round-down magic add (FADD.RM), j as a float (FADD), f (FADD), 2^f by Horner (3 FFMA), then j added to
// the exponent field as an integer: the bits of kMagic + j are (150 << 23) | (2^22 + j), and shifting
// them left by 23 leaves exactly j << 23 (mod 2^32), so one shift and one add (or one LEA) finish it.
// The clamp to -127 keeps the exponent field >= 0 (2^-127 and below come out as denormal-sized junk,
// which FlashAttention-4 accepts too: P is tiny there).
TWIN_HD float exp2_poly(float x) {
  x = max_f(x, -127.0f);
  const float r = floor_magic(x);
  const float j = add_rn(r, -kMagic);
  const float f = add_rn(x, -j);
  const float q = fma_rn(fma_rn(fma_rn(kExp2C3, f, kExp2C2), f, kExp2C1), f, 1.0f);
  return u2f(f2u(q) + (f2u(r) << 23));
}

// ---- compile-time loop ----------------------------------------------------------------------------
// f(std::integral_constant<int, 0>{}), ..., f(std::integral_constant<int, N - 1>{}), in order: the
// index is a constant expression inside f (the SMEM stores take it as an immediate offset).
template <class F, int... I>
TWIN_HD void static_for_impl(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
TWIN_HD void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

// ---- the row tile ----------------------------------------------------------------------------------
constexpr int kRowCols = 128;

// One row tile of the online softmax, as one thread of FlashAttention-4's softmax warpgroup does it
// with the 128 columns of its row of S (loaded from TMEM there; registers here):
//   m_new = max(m, max_i s[i])            8 partial maxes (i mod 8), a tree of 7, then m: 128 max.f32
//   neg_mc = m_new * (-c)                 1 mul.f32 (-c is loop invariant)
//   corr = 2^(m c - m_new c)              1 fma.rn.f32 + 1 ex2 (2^-inf = 0 on the first tile)
//   p[i] = 2^(s[i] c - m_new c)           128 x (fma.rn.f32 + ex2); kPoly: the odd i use exp2_poly
//   l = l * corr + sum_i p[i]             8 partial sums (120 add.f32), a tree of 7, 1 fma.rn.f32
//   P packed to bf16 pairs                64 cvt.rn.bf16x2.f32
//   store(j, w0, w1, w2, w3), j = 0..15   the 4 words of elements 8j..8j+7 (FA4: tcgen05.st of P)
// and leaves p in s (the next tile's input: in (0, 1], so values stay bounded and nothing is loop
// invariant) and m_new in m. Everything is unrolled: straight-line code, one copy per call.
template <bool kPoly, class Store>
TWIN_HD void softmax_row_tile(float (&s)[kRowCols], float& m, float& l, float c, Store&& store) {
  float part[8];
TWIN_UNROLL
  for (int k = 0; k < 8; ++k) part[k] = s[k];
TWIN_UNROLL
  for (int i = 8; i < kRowCols; ++i) part[i % 8] = max_f(part[i % 8], s[i]);
TWIN_UNROLL
  for (int w = 4; w >= 1; w /= 2) {
TWIN_UNROLL
    for (int k = 0; k < w; ++k) part[k] = max_f(part[k], part[k + w]);
  }
  const float m_new = max_f(m, part[0]);
  const float neg_mc = mul_rn(m_new, -c);
  const float corr = ex2(fma_rn(m, c, neg_mc));

TWIN_UNROLL
  for (int i = 0; i < kRowCols; ++i) {
    const float x = fma_rn(s[i], c, neg_mc);
    s[i] = (kPoly && (i & 1)) ? exp2_poly(x) : ex2(x);
  }

TWIN_UNROLL
  for (int k = 0; k < 8; ++k) part[k] = s[k];
TWIN_UNROLL
  for (int i = 8; i < kRowCols; ++i) part[i % 8] = add_rn(part[i % 8], s[i]);
TWIN_UNROLL
  for (int w = 4; w >= 1; w /= 2) {
TWIN_UNROLL
    for (int k = 0; k < w; ++k) part[k] = add_rn(part[k], part[k + w]);
  }
  l = fma_rn(l, corr, part[0]);

  static_for<kRowCols / 8>([&](auto j) {
    constexpr int b = 8 * decltype(j)::value;
    store(j, pack_bf16x2(s[b + 1], s[b]), pack_bf16x2(s[b + 3], s[b + 2]), pack_bf16x2(s[b + 5], s[b + 4]),
          pack_bf16x2(s[b + 7], s[b + 6]));
  });
  m = m_new;
}

// ---- the digest of a row after the run (outside the timed loop) ----------------------------------------
// sum_i s[i], in index order.
TWIN_HD float row_sum(const float (&s)[kRowCols]) {
  float sum = 0.0f;
TWIN_UNROLL
  for (int i = 0; i < kRowCols; ++i) sum = add_rn(sum, s[i]);
  return sum;
}
// acc + sum (i + 1) * bf16 element i over the 8 elements of stored chunk j (words w0..w3). Read back
// from SMEM after the run, it checks that every chunk landed at the thread's own address with its row's
// values (rows converge to different values: each has its own m). It cannot see the order of the two
// halves of a word: by then the p of one row are equal to within bf16.
TWIN_HD float weigh_chunk(float acc, int j, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  const uint32_t w[4] = {w0, w1, w2, w3};
TWIN_UNROLL
  for (int k = 0; k < 4; ++k) {
    const int i = 8 * j + 2 * k;
    acc = fma_rn(static_cast<float>(i + 1), bf16_lo(w[k]), acc);
    acc = fma_rn(static_cast<float>(i + 2), bf16_hi(w[k]), acc);
  }
  return acc;
}
