// Which part of a GEMM stage waits: h100_stage_ring.cu's 2-stage ring (a 1024-cycle clock for the
// MMA) with each stage's two parts timed on their own. A part loads A (16 KiB from HBM: the CTA's
// own 128 rows, 32 KiB apart), A2 (the same from a second band of rows), B (32 KiB: 256 rows of an
// 8 MiB operand every SM reads at the same k: cold, as the A stream evicted it since the last
// launch), B2 (B at k + 128), BH (B at k % 4: shared and hot in the L2) or BP (a 32 KiB box of the
// CTA's own, one of four cycled: hot, read by no other SM). With separate barriers part i
// completes on barrier i; with one barrier (as a GEMM's full barrier) both complete on barrier 0.
// Thread 0 issues and runs the MMA clock (it waits for every barrier of the stage); lane 0 of
// warp 1 + i waits on each phase of barrier i and records clock64 when it completes.
// Prints CSV: scenario,param,value (param = G SMs: 16, 66, 132):
// - stage_parts_<v>_cycles_per_kblock: as stage_ring's rows (median over the CTAs);
// - stage_parts_<v>_bar<i>_{even,odd}_latency: the median over CTAs and k-blocks 8..247 of
//   barrier i's completion minus the stage's issue, even and odd k apart (with the 256B L2
//   promotion, an odd k-block's A rows came in with the even one's: odd A is an L2 hit).
// Variants v (parts in issue order; "1": one barrier; "_quiet": no observers; "4": 4 stages):
// ab, ab_quiet, ab1, ab1_quiet, ba, ba1, aa, aa1, bb, bb1, abp, abp1, a, b, ab4, ab14, abh, abh1,
// bha (h: the hot shared BH in place of B).
// Each row: a warm-up launch and 3 measured ones, the value the median of the 3. No L2 flush.
// With arguments `v G` it runs that variant twice and prints nothing (for ncu); with `trace v G`
// twice, printing the second launch's issue and completion cycles of every k-block of CTAs 0-15
// (variant,lean,sms,cta,k,issue,done0,done1; from the CTA's start, -1 where a barrier has no part).
// A first argument `lean` (before any of these) runs the kernel's instantiation whose loops count
// the stage and phase instead of dividing k by the run-time stage count (three dependent u32
// divisions per k-block, one of them between the wait's return and the refill, as first measured;
// the other instantiation is that code unchanged), and names the rows stage_parts_lean_<v>_...:
// the first trace showed the issuing thread's next load 208 cycles after an observer's clock at
// the same completion whenever it had been waiting.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_stage_parts.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstring>
#include <vector>

constexpr unsigned kSteps = 256, kMaxStages = 4, kSmem = kMaxStages * 49152 + 2048;
constexpr unsigned long long kWidth = 32768;

// What a part of a stage loads: A (16 KiB, the CTA's own 128 rows, from HBM), A2 (the same from a
// second band of rows), B (32 KiB of the shared L2-resident operand at k), B2 (the same at k + 128),
// BP (a private L2-resident 32 KiB box of the CTA's own, one of four cycled).
enum Part : unsigned { kNone, kPartA, kPartA2, kPartB, kPartB2, kPartBP, kPartBH };
__host__ __device__ constexpr unsigned part_bytes(unsigned p) {
  return p == kNone ? 0 : (p == kPartA || p == kPartA2) ? 16384 : 32768;
}

struct Variant {
  const char* name;
  unsigned first, second, stages;
  bool one_barrier, observed;
};

struct Times {
  long long issue[kSteps], done[2][kSteps];
  long long c0, c1;
};

struct Maps {
  CUtensorMap a, b, bp;
};

__device__ __forceinline__ void load_part(const Maps& m, unsigned p, unsigned dst, unsigned bar, unsigned k) {
  const int x = static_cast<int>(128 * k), band = static_cast<int>(blockIdx.x);
  switch (p) {
    case kPartA: tma_load_2d(dst, &m.a, x, 128 * band, bar); break;
    case kPartA2: tma_load_2d(dst, &m.a, x, 128 * (132 + band), bar); break;
    case kPartB: tma_load_2d(dst, &m.b, x, 0, bar); break;
    case kPartB2: tma_load_2d(dst, &m.b, static_cast<int>(128 * ((k + 128) % kSteps)), 0, bar); break;
    case kPartBH: tma_load_2d(dst, &m.b, static_cast<int>(128 * (k % 4)), 0, bar); break;
    case kPartBP: tma_load_2d(dst, &m.bp, 0, 256 * (4 * band + static_cast<int>(k % 4)), bar); break;
    default: break;
  }
}

// The stage's parts in order; with one_barrier both complete on bar[0] (one expect_tx of their sum,
// as a GEMM's full barrier), otherwise part i on bar[i].
__device__ __forceinline__ void issue_stage(const Maps& m, const Variant& v, unsigned dst, const unsigned (&bar)[2],
                                            unsigned k) {
  const unsigned p[2] = {v.first, v.second};
  if (v.one_barrier) {
    mbar_arrive_expect_tx(bar[0], part_bytes(p[0]) + part_bytes(p[1]));
  } else {
    for (unsigned i = 0; i < 2; ++i)
      if (p[i] != kNone) mbar_arrive_expect_tx(bar[i], part_bytes(p[i]));
  }
  load_part(m, p[0], dst, bar[0], k);
  load_part(m, p[1], dst + part_bytes(p[0]), v.one_barrier ? bar[0] : bar[1], k);
}

template <bool kLean>
__global__ void k_parts(const __grid_constant__ Maps m, const Variant v, Times* out) {
  extern __shared__ unsigned char smem[];
  const unsigned warp = threadIdx.x / 32, stages = v.stages;
  const unsigned stage_bytes = part_bytes(v.first) + part_bytes(v.second);
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + kMaxStages * 49152;
  auto bar = [&](unsigned i, unsigned s) { return bars + 8 * (i * kMaxStages + s); };
  Times* t = out + blockIdx.x;
  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < stages; ++s) {
      mbar_init(bar(0, s), 1);
      mbar_init(bar(1, s), 1);
    }
    fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x % 32 != 0) return;  // one thread per warp from here on
  const unsigned waits = (v.one_barrier || v.second == kNone) ? 1 : 2;
  if (warp >= 1) {  // observers: warp 1 + i records when barrier i completes each phase
    const unsigned i = warp - 1;
    if (!v.observed || i >= waits) return;
    if constexpr (kLean) {
      for (unsigned k = 0, s = 0, phase = 0; k < kSteps; ++k) {
        mbar_wait(bar(i, s), phase);
        t->done[i][k] = clock64();
        if (++s == stages) s = 0, phase ^= 1u;
      }
    } else {
      for (unsigned k = 0; k < kSteps; ++k) {
        mbar_wait(bar(i, k % stages), (k / stages) & 1u);
        t->done[i][k] = clock64();
      }
    }
    return;
  }
  auto issue = [&](unsigned s, unsigned k) {
    const unsigned b[2] = {bar(0, s), bar(1, s)};
    t->issue[k] = clock64();
    issue_stage(m, v, base + s * stage_bytes, b, k);
  };
  const long long c0 = clock64();
  for (unsigned k = 0; k < stages; ++k) issue(k, k);
  long long mma_end = 0;
  if constexpr (kLean) {  // the stage and phase counted, as gemm_sm90_twin.cu and CUTLASS do
    for (unsigned k = 0, s = 0, phase = 0, prev = 0; k < kSteps; ++k) {
      for (unsigned i = 0; i < waits; ++i) mbar_wait(bar(i, s), phase);
      while (clock64() < mma_end) {
      }
      mma_end = clock64() + 1024;  // MMA k starts: MMA k-1 is done, its stage is free
      const unsigned refill = k - 1 + stages;
      if (k >= 1 && refill < kSteps) issue(prev, refill);
      prev = s;
      if (++s == stages) s = 0, phase ^= 1u;
    }
  } else {  // as first measured: by run-time division (a dependent u32 division takes ~65 cycles)
    for (unsigned k = 0; k < kSteps; ++k) {
      for (unsigned i = 0; i < waits; ++i) mbar_wait(bar(i, k % stages), (k / stages) & 1u);
      while (clock64() < mma_end) {
      }
      mma_end = clock64() + 1024;  // MMA k starts: MMA k-1 is done, its stage is free
      const unsigned refill = k - 1 + stages;
      if (k >= 1 && refill < kSteps) issue((k - 1) % stages, refill);
    }
  }
  while (clock64() < mma_end) {
  }
  t->c0 = c0;
  t->c1 = clock64();
}

constexpr Variant kVariants[] = {
    {"ab", kPartA, kPartB, 2, false, true},     {"ab_quiet", kPartA, kPartB, 2, false, false},
    {"ab1", kPartA, kPartB, 2, true, true},     {"ab1_quiet", kPartA, kPartB, 2, true, false},
    {"ba", kPartB, kPartA, 2, false, true},     {"ba1", kPartB, kPartA, 2, true, true},
    {"aa", kPartA, kPartA2, 2, false, true},    {"aa1", kPartA, kPartA2, 2, true, true},
    {"bb", kPartB, kPartB2, 2, false, true},    {"bb1", kPartB, kPartB2, 2, true, true},
    {"abp", kPartA, kPartBP, 2, false, true},   {"abp1", kPartA, kPartBP, 2, true, true},
    {"a", kPartA, kNone, 2, false, true},       {"b", kPartB, kNone, 2, false, true},
    {"ab4", kPartA, kPartB, 4, false, true},    {"ab14", kPartA, kPartB, 4, true, true},
    {"abh", kPartA, kPartBH, 2, false, true},   {"abh1", kPartA, kPartBH, 2, true, true},
    {"bha", kPartBH, kPartA, 2, false, true}};

// Per launch: the median over CTAs of cycles per k-block, and the medians over CTAs and k-blocks
// 8..247 of barrier i's completion minus the stage's issue, even and odd k apart (with the 256B
// L2 promotion an odd k-block's A rows arrived with the even one's).
struct Result {
  double per_kblock, done[2][2];
};

bool g_lean = false;  // the `lean` argument: the loops count the stage and phase

Result launch(const Maps& m, const Variant& v, unsigned g, Times* dout) {
  CHECK(cudaMemset(dout, 0, sizeof(Times) * g));
  if (g_lean) {
    k_parts<true><<<g, 96, kSmem>>>(m, v, dout);
  } else {
    k_parts<false><<<g, 96, kSmem>>>(m, v, dout);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<Times> h(g);
  CHECK(cudaMemcpy(h.data(), dout, sizeof(Times) * g, cudaMemcpyDeviceToHost));
  std::vector<double> per, lat[2][2];
  for (const Times& t : h) {
    per.push_back(static_cast<double>(t.c1 - t.c0) / kSteps);
    for (unsigned k = 8; k < kSteps - 8; ++k)
      for (unsigned i = 0; i < 2; ++i)
        if (t.done[i][k]) lat[i][k % 2].push_back(static_cast<double>(t.done[i][k] - t.issue[k]));
  }
  Result r{median(per), {}};
  for (unsigned i = 0; i < 2; ++i)
    for (unsigned p = 0; p < 2; ++p) r.done[i][p] = lat[i][p].empty() ? 0 : median(lat[i][p]);
  return r;
}

int main(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "lean")) {
    g_lean = true;
    --argc;
    ++argv;
  }
  CHECK(cudaFuncSetAttribute(k_parts<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(k_parts<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const unsigned long long a_rows = 2ull * 132 * 128, b_rows = 256, bp_rows = 132ull * 4 * 256;
  void *a_data, *b_data, *bp_data;
  CHECK(cudaMalloc(&a_data, kWidth * a_rows));
  CHECK(cudaMalloc(&b_data, kWidth * b_rows));
  CHECK(cudaMalloc(&bp_data, 128 * bp_rows));
  CHECK(cudaMemset(a_data, 0, kWidth * a_rows));
  CHECK(cudaMemset(b_data, 0, kWidth * b_rows));
  CHECK(cudaMemset(bp_data, 0, 128 * bp_rows));
  Maps m;
  m.a = make_strided_map(a_data, kWidth, a_rows, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  m.b = make_strided_map(b_data, kWidth, b_rows, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  m.bp = make_strided_map(bp_data, 128, bp_rows, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  Times* dout;
  CHECK(cudaMalloc(&dout, sizeof(Times) * 132));
  const bool trace = argc == 4 && !std::strcmp(argv[1], "trace");
  if (trace || argc == 3) {  // one variant: a warm-up launch, then one for ncu or for the trace
    const char* name = argv[argc - 2];
    const Variant* v = std::find_if(std::begin(kVariants), std::end(kVariants),
                                    [&](const Variant& x) { return !std::strcmp(x.name, name); });
    if (v == std::end(kVariants)) {
      std::fprintf(stderr, "unknown variant %s\n", name);
      return 2;
    }
    const unsigned g = static_cast<unsigned>(std::atoi(argv[argc - 1]));
    launch(m, *v, g, dout);
    launch(m, *v, g, dout);
    if (!trace) return 0;
    std::vector<Times> h(g);
    CHECK(cudaMemcpy(h.data(), dout, sizeof(Times) * g, cudaMemcpyDeviceToHost));
    std::printf("variant,lean,sms,cta,k,issue,done0,done1\n");
    for (unsigned c = 0; c < std::min(g, 16u); ++c)
      for (unsigned k = 0; k < kSteps; ++k) {
        const Times& t = h[c];
        auto rel = [&](long long x) { return x ? x - t.c0 : -1ll; };
        std::printf("%s,%d,%u,%u,%u,%lld,%lld,%lld\n", v->name, g_lean ? 1 : 0, g, c, k, rel(t.issue[k]),
                    rel(t.done[0][k]), rel(t.done[1][k]));
      }
    return 0;
  }
  std::printf("scenario,param,value\n");
  const char* parity[2] = {"even", "odd"};
  for (const Variant& v : kVariants) {
    for (unsigned g : {16u, 66u, 132u}) {
      launch(m, v, g, dout);  // warm-up: B into the L2
      std::vector<double> per, lat[2][2];
      for (int l = 0; l < 3; ++l) {
        const Result r = launch(m, v, g, dout);
        per.push_back(r.per_kblock);
        for (unsigned i = 0; i < 2; ++i)
          for (unsigned p = 0; p < 2; ++p) lat[i][p].push_back(r.done[i][p]);
      }
      std::printf("stage_parts_%s%s_cycles_per_kblock,%u,%.0f\n", g_lean ? "lean_" : "", v.name, g, median(per));
      for (unsigned i = 0; i < 2; ++i)
        for (unsigned p = 0; p < 2; ++p)
          if (median(lat[i][p]) > 0)
            std::printf("stage_parts_%s%s_bar%u_%s_latency,%u,%.0f\n", g_lean ? "lean_" : "", v.name, i, parity[p], g,
                        median(lat[i][p]));
      std::fflush(stdout);
    }
  }
  return 0;
}
