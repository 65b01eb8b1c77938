// CUDA-core units of one SM and the softmax twin (issue 19): the latency and throughput of the FP32
// FMA, MUFU (ex2), FMNMX, FADD and F2FP (fp32 -> bf16x2) instructions, how many instructions a
// sub-partition issues per cycle, and FlashAttention-4's softmax row tile (plain and with half of its
// exponentials in software) as a whole. Prints CSV: scenario,param,cycles (comment lines start
// with '#'). Each row below is a program the simulator reproduces.
//
// Common frame (timed_loop): ONE CTA of T threads on one SM; warp w runs on sub-partition w % 4, so
// T = 128 * W puts W warps on each sub-partition (the latency rows: T = 32, one warp). Every thread
// runs `warm` iterations of the row's loop body, then __syncthreads(), clock64 (its warp's start),
// `iters` iterations, clock64 (its warp's end); lane 0 of each warp folds its start and end into SMEM
// (atomicMin / atomicMax), then __syncthreads(). span = the latest end - the earliest start over the
// CTA's warps (clock64 counts the SM's cycles for every warp of the SM). Thread 0 also reads
// %globaltimer with its start and after the closing __syncthreads; its clock64 delta over that
// %globaltimer delta is the SM clock of the launch (printed as sm_clock_mhz in the comment line after
// each row). The iteration loops are `#pragma unroll 1` loops around fully unrolled bodies of about
// 512 instructions (the loop's own counter, compare and branch are < 1% of them: cudacore_sass.csv,
// from run_cudacore.sh, lists the loop bodies' SASS). Each row is the launch of median span of 5
// launches (the comment line gives the min and max). Every chain starts from kernel arguments and
// threadIdx, and every thread stores its result to global memory at the end, so nothing folds.
//
// Rows (value = cycles x 100 where the name ends in _x100):
// - ffma_dependent_latency_x100 (param 1): one warp, one chain x = fma.rn.f32(x, a, b) (a, b kernel
//   arguments), 512 steps per iteration, 128 iterations (65536 FFMA). Value: span * 100 / 65536.
// - mufu_ex2_dependent_latency_x100 (param 1): the same frame, x = ex2.approx.ftz.f32(-x): x stays in
//   (0, 1]. The PTX is neg.f32 + ex2.approx.ftz.f32; MUFU, like FADD and FFMA, takes a negated source
//   operand, so ptxas should emit one MUFU.EX2 Rd, -Rx per step and no FADD/FMUL (.ftz spares the
//   non-ftz denormal scaling FMULs). cudacore_sass.csv shows the loop body: if it held 512 extra
//   instructions, their latency would have to be subtracted (fadd_dependent_latency_x100). Value:
//   span * 100 / 65536.
// - fmnmx_dependent_latency_x100 (param 1): x = max.f32(-x, floor), floor = -1e30: x flips sign each
//   step, so no max is idempotent and none can be merged with the next (FMNMX takes -x as an operand
//   modifier, as MUFU does).
// - fadd_dependent_latency_x100 (param 1): x = add.rn.f32(x, b), b = 1e-3.
// - f2fp_dependent_latency_x100 (param 1): x = cvt.rn.bf16x2.f32(x, b) with its 32-bit result read back
//   as the next float x: the chain goes register to register with no instruction in between (the upper
//   half is bf16(x), the lower half bf16(b): x stays finite and near its start). One F2FP per step.
// - ffma_throughput_x100, mufu_ex2_throughput_x100, fmnmx_throughput_x100, fadd_throughput_x100,
//   f2fp_throughput_x100 (param W = 1, 2, 4, 8): T = 128 * W threads, each runs 8 independent chains
//   of the latency rows' step (64 steps of 8 per iteration: 512 instructions), 512 / W iterations.
//   Value: cycles per warp instruction per sub-partition x 100 = span * 100 / (512 * iters * W), i.e.
//   span * 100 / 262144. A 32-lane pipe per sub-partition gives 100, a 16-lane one 200, a 4-lane one
//   (16 MUFU lanes per SM) 800.
// - issue_mix_2ffma_1alu_x100 (param W = 1, 2, 4): T = 128 * W threads, each with 8 FFMA chains
//   (x = fma(x, a, b)) and 4 LOP3 words updated together from the previous step (y_k = y_k ^ y_(k+1
//   mod 4) ^ u, lop3.b32 0x96: independent within a step, and no algebra merges them): per step 8 FFMA
//   and 4 LOP3, interleaved 2:1; 42 steps (504 instructions) per iteration, 512 / W iterations. Value:
//   span * 100 / (504 * iters * W). The FMA pipe needs 2 cycles for 2 FFMAs and the ALU 2 cycles
//   for a LOP3 (16 lanes), so separate pipes could take 1.5 instructions per cycle (67); one
//   instruction issued per cycle per sub-partition gives 100.
// - softmax_row_tile_cycles (param W = 1, 2): T = 128 * W threads; thread t owns row t of S (128
//   fp32 values from a pseudo-random [-4, 4) input, hash32 of its index), m = -inf, l = 0, c =
//   log2(e) / sqrt(128) (a kernel argument), and runs softmax_row_tile<false> (softmax_row.cuh: 128
//   max, 129 ex2, 130 FMA, 127 add, 1 mul, 64 cvt.rn.bf16x2.f32 and 16 st.shared.v4.b32 per row tile)
//   4 warm-up + 256 timed iterations, each storing its 64 packed words to dynamic SMEM, chunk j of
//   thread t at byte (j * T + t) * 16 (a warp's v4 store covers 512 contiguous bytes: conflict-free).
//   Value: span / 256, rounded: the cycles one row-tile iteration of all W warps of a sub-partition
//   takes. At the end each thread writes m, l, the sum of its last p and a weighted sum of its last
//   stored bf16 words to global memory; the program runs the same body on the CPU (exact exp2) for
//   every row and prints the largest relative differences in a comment line.
// - softmax_poly_half_row_tile_cycles (param W = 1, 2): the same with softmax_row_tile<true>: the odd
//   columns' 2^x by exp2_poly (FMNMX clamp, FADD.RM floor, 2 FADD, 3 FFMA, integer shift + add)
//   instead of MUFU.EX2 (FlashAttention-4's split of the exponentials between MUFU and the FMA pipe).
//
// run_cudacore.sh also compiles this file for sm_90a and sm_100a (cubins) and counts the SASS opcodes of
// each kernel's loop body (sass_counts.py): softmax_sass.csv for k_softmax, cudacore_sass.csv for
// the unit kernels.
//
// Shared pieces: CHECK, globaltimer, smem_addr, hash32 from calibration_ptx.cuh; the instruction helpers
// and the row-tile body from softmax_row.cuh.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_cudacore.cu -lcuda
#include "calibration_ptx.cuh"
#include "softmax_row.cuh"

#include <algorithm>
#include <vector>

// ---- the timing frame -------------------------------------------------------------------------
// Written by thread 0 at the end of a launch.
struct Timing {
  long long span;    // latest warp end - earliest warp start of the timed iterations (clock64)
  long long cycles;  // thread 0: clock64 from its start to after the closing __syncthreads
  long long ns;      // thread 0: %globaltimer over the same interval
};

// `warm` iterations of body(), then the timed `iters` (see the file header). Every thread of the CTA
// calls it (it holds __syncthreads).
template <class Body>
__device__ __forceinline__ void timed_loop(Timing* out, int warm, int iters, Body&& body) {
  __shared__ unsigned long long first_start, last_end;
  if (threadIdx.x == 0) {
    first_start = ~0ull;
    last_end = 0;
  }
  long long start = 0, end = 0;
  unsigned long long ns0 = 0;
  // One loop nest for both phases, so that the body exists once in the SASS (its count is the SASS
  // of one iteration) and the warm-up runs the very code that is timed.
  int n = warm;
#pragma unroll 1
  for (int phase = 0; phase < 2; ++phase) {
    __syncthreads();
    ns0 = globaltimer();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < n; ++i) body();
    end = clock64();
    n = iters;
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMin(&first_start, static_cast<unsigned long long>(start));
    atomicMax(&last_end, static_cast<unsigned long long>(end));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    out->cycles = clock64() - start;
    out->ns = static_cast<long long>(globaltimer() - ns0);
    out->span = static_cast<long long>(last_end - first_start);
  }
}

// ---- the unit loops ---------------------------------------------------------------------------
// The kernel arguments the chains start from and step with.
struct UnitArgs {
  float mul, add, floor;
  uint32_t u;
};

// One step of a chain: one instruction (see the file header).
struct Ffma {
  __device__ float operator()(float x, const UnitArgs& a) const { return fma_rn(x, a.mul, a.add); }
};
struct Ex2 {
  __device__ float operator()(float x, const UnitArgs&) const { return ex2(-x); }
};
struct Fmnmx {
  __device__ float operator()(float x, const UnitArgs& a) const { return max_f(-x, a.floor); }
};
struct Fadd {
  __device__ float operator()(float x, const UnitArgs& a) const { return add_rn(x, a.add); }
};
struct F2fp {
  __device__ float operator()(float x, const UnitArgs& a) const { return u2f(pack_bf16x2(x, a.add)); }
};

// K independent chains of Step per thread (K = 1: the latency rows; K = 8: the throughput rows).
template <class Step, int K>
struct Chains {
  static constexpr int kInstrPerStep = K;
  float x[K];
  __device__ explicit Chains(const UnitArgs& a) {
#pragma unroll
    for (int i = 0; i < K; ++i) x[i] = 0.5f + a.add * static_cast<float>(threadIdx.x + 1) + 0.03125f * i;
  }
  __device__ void step(const UnitArgs& a) {
#pragma unroll
    for (int i = 0; i < K; ++i) x[i] = Step()(x[i], a);
  }
  __device__ float result() const {
    float r = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) r += x[i];
    return r;
  }
};

// lop3.b32 with truth table 0x96: a ^ b ^ c (LOP3.LUT on the ALU pipe).
__device__ __forceinline__ uint32_t xor3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// 8 FFMA chains and 4 LOP3 words per thread, 2 FFMA : 1 LOP3 in each step.
struct IssueMix {
  static constexpr int kInstrPerStep = 12;
  float x[8];
  uint32_t y[4];
  __device__ explicit IssueMix(const UnitArgs& a) {
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = 0.5f + a.add * static_cast<float>(threadIdx.x + 1) + 0.03125f * i;
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k] = hash32(threadIdx.x * 4 + k) ^ a.u;
  }
  __device__ void step(const UnitArgs& a) {
    uint32_t n[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      x[2 * k] = fma_rn(x[2 * k], a.mul, a.add);
      x[2 * k + 1] = fma_rn(x[2 * k + 1], a.mul, a.add);
      n[k] = xor3(y[k], y[(k + 1) % 4], a.u);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k] = n[k];
  }
  __device__ float result() const {
    float r = static_cast<float>(y[0] ^ y[1] ^ y[2] ^ y[3]);
#pragma unroll
    for (int i = 0; i < 8; ++i) r += x[i];
    return r;
  }
};

// Steps per loop iteration: about 512 instructions.
template <class Op>
constexpr int kSteps = 512 / Op::kInstrPerStep;

template <class Op>
__global__ void __launch_bounds__(1024) k_units(Timing* out, UnitArgs a, int warm, int iters, float* sink) {
  Op op(a);
  timed_loop(out, warm, iters, [&] {
#pragma unroll
    for (int k = 0; k < kSteps<Op>; ++k) op.step(a);
  });
  sink[threadIdx.x] = op.result();
}

// ---- the softmax twin ---------------------------------------------------------------------------
// st.shared.v4.b32 of 4 words at addr + kOffset (an immediate offset, as FA4's stores of P).
template <int kOffset>
__device__ __forceinline__ void st_shared_v4(unsigned addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0+%5], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d),
               "n"(kOffset)
               : "memory");
}

// Thread t's row digest at the end of a run.
struct RowOut {
  float m, l, sum, packed;
};

template <bool kPoly, int W>
__global__ void __launch_bounds__(128 * W, 1)
    k_softmax(Timing* out, const float* rows, float c, int warm, int iters, RowOut* res) {
  constexpr int kThreads = 128 * W;
  extern __shared__ __align__(16) unsigned char smem[];  // 16 chunks of kThreads x 16 bytes
  const unsigned t = threadIdx.x;
  float s[kRowCols];
  const float4* row = reinterpret_cast<const float4*>(rows + t * kRowCols);
#pragma unroll
  for (int q = 0; q < kRowCols / 4; ++q) {
    const float4 v = row[q];
    s[4 * q] = v.x;
    s[4 * q + 1] = v.y;
    s[4 * q + 2] = v.z;
    s[4 * q + 3] = v.w;
  }
  float m = -INFINITY, l = 0.0f;
  const unsigned addr = smem_addr(smem) + 16 * t;
  auto store = [addr](auto j, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
    st_shared_v4<decltype(j)::value * kThreads * 16>(addr, w0, w1, w2, w3);
  };
  timed_loop(out, warm, iters, [&] { softmax_row_tile<kPoly>(s, m, l, c, store); });

  RowOut r{m, l, row_sum(s), 0.0f};
  const uint4* words = reinterpret_cast<const uint4*>(smem);
#pragma unroll
  for (int j = 0; j < kRowCols / 8; ++j) {
    const uint4 w = words[j * kThreads + t];  // this thread's own stores: no barrier needed
    r.packed = weigh_chunk(r.packed, j, w.x, w.y, w.z, w.w);
  }
  res[t] = r;
}

// ---- host ---------------------------------------------------------------------------------------
constexpr int kLaunches = 5;

// The median-span launch of kLaunches, with the min and max spans.
struct Measured {
  Timing t;
  long long lo, hi;
  double mhz() const { return t.ns > 0 ? static_cast<double>(t.cycles) * 1000.0 / static_cast<double>(t.ns) : 0.0; }
};

Timing* g_timing = nullptr;  // device: one Timing

template <class Kernel, class... Args>
Measured measure(Kernel k, unsigned threads, unsigned smem, Args... args) {
  if (smem > 48 * 1024) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<Timing> runs(kLaunches);
  for (Timing& r : runs) {
    CHECK(cudaMemset(g_timing, 0, sizeof(Timing)));
    k<<<1, threads, smem>>>(g_timing, args...);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&r, g_timing, sizeof(Timing), cudaMemcpyDeviceToHost));
    if (r.span <= 0) {  // (a %globaltimer that did not tick only costs the clock readout: 0 MHz)
      std::fprintf(stderr, "h100_cudacore: a launch of %u threads recorded no span (%lld)\n", threads, r.span);
      std::exit(1);
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Timing& a, const Timing& b) { return a.span < b.span; });
  return {runs[kLaunches / 2], runs.front().span, runs.back().span};
}

void print_row(const char* name, int param, long long value, const Measured& r, const char* what) {
  std::printf("%s,%d,%lld\n", name, param, value);
  std::printf("# %s,%d: span %lld cycles (median of %d launches; min %lld, max %lld), %s, sm_clock_mhz %.0f\n",
              name, param, r.t.span, kLaunches, r.lo, r.hi, what, r.mhz());
  std::fflush(stdout);
}

const UnitArgs kArgs{0.999f, 1e-3f, -1e30f, 0x9e3779b9u};
constexpr int kUnitWarm = 2;
float* g_sink = nullptr;  // device: one float per thread

// A unit row: the latency row (one warp, one chain) or a throughput row at W warps per sub-partition.
template <class Op>
void unit_row(const char* name, int w, bool latency) {
  const unsigned threads = latency ? 32 : 128 * w;
  const int iters = latency ? 128 : 512 / w;
  const Measured r = measure(k_units<Op>, threads, 0, kArgs, kUnitWarm, iters, g_sink);
  const double instr = static_cast<double>(Op::kInstrPerStep) * kSteps<Op> * iters;  // per warp
  char what[160];
  std::snprintf(what, sizeof(what), "%.0f instructions per warp, %u warps", instr, threads / 32);
  print_row(name, latency ? 1 : w, std::llround(100.0 * static_cast<double>(r.t.span) / (instr * (latency ? 1 : w))),
            r, what);
}

template <class Step>
void unit_rows(const char* unit) {
  char name[96];
  std::snprintf(name, sizeof(name), "%s_throughput_x100", unit);
  for (int w : {1, 2, 4, 8}) unit_row<Chains<Step, 8>>(name, w, false);
}

// The CPU reference's store: chunk j into words[4j..4j+3]. (__host__ __device__ like the body that
// calls it: nvcc rejects a host-only callee there.)
struct WordStore {
  uint32_t* words;
  template <class J>
  TWIN_HD void operator()(J, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) const {
    uint32_t* w = words + 4 * J::value;
    w[0] = w0;
    w[1] = w1;
    w[2] = w2;
    w[3] = w3;
  }
};

// The CPU reference: the same body (softmax_row.cuh, exact exp2) for `tiles` row tiles of one row.
template <bool kPoly>
RowOut reference_row(const float* row, float c, int tiles) {
  float s[kRowCols];
  std::copy(row, row + kRowCols, s);
  float m = -INFINITY, l = 0.0f;
  uint32_t words[kRowCols / 2] = {};
  for (int it = 0; it < tiles; ++it) softmax_row_tile<kPoly>(s, m, l, c, WordStore{words});
  RowOut r{m, l, row_sum(s), 0.0f};
  for (int j = 0; j < kRowCols / 8; ++j)
    r.packed = weigh_chunk(r.packed, j, words[4 * j], words[4 * j + 1], words[4 * j + 2], words[4 * j + 3]);
  return r;
}

constexpr int kSoftmaxWarm = 4, kSoftmaxIters = 256, kMaxRows = 256;
bool g_check_failed = false;

// A softmax row at W warps per sub-partition, then its comparison with the CPU reference.
template <bool kPoly, int W>
void softmax_row(const char* name, const float* d_rows, const std::vector<float>& h_rows, float c, RowOut* d_res) {
  constexpr unsigned kThreads = 128 * W;
  const unsigned smem = kRowCols / 8 * kThreads * 16;
  const Measured r = measure(k_softmax<kPoly, W>, kThreads, smem, d_rows, c, kSoftmaxWarm, kSoftmaxIters, d_res);
  char what[160];
  std::snprintf(what, sizeof(what), "%d row tiles per warp after %d warm-up, %u warps", kSoftmaxIters, kSoftmaxWarm,
                kThreads / 32);
  print_row(name, W, std::llround(static_cast<double>(r.t.span) / kSoftmaxIters), r, what);

  std::vector<RowOut> got(kThreads);
  CHECK(cudaMemcpy(got.data(), d_res, kThreads * sizeof(RowOut), cudaMemcpyDeviceToHost));
  double worst[4] = {0, 0, 0, 0};
  for (unsigned t = 0; t < kThreads; ++t) {
    const RowOut want = reference_row<kPoly>(&h_rows[t * kRowCols], c, kSoftmaxWarm + kSoftmaxIters);
    const float g[4] = {got[t].m, got[t].l, got[t].sum, got[t].packed};
    const float e[4] = {want.m, want.l, want.sum, want.packed};
    for (int k = 0; k < 4; ++k) {
      const double d = std::fabs(static_cast<double>(g[k]) - e[k]) / std::max(1e-30, std::fabs(static_cast<double>(e[k])));
      worst[k] = std::isfinite(g[k]) ? std::max(worst[k], d) : INFINITY;
    }
  }
  const bool ok = std::all_of(worst, worst + 4, [](double d) { return d < 1e-2; });
  g_check_failed = g_check_failed || !ok;
  std::printf("# %s,%d: %s vs the CPU (same body, exact exp2, %d tiles, %u rows): max relative difference "
              "m %.2e, l %.2e, sum of last p %.2e, weighted bf16 words %.2e\n",
              name, W, ok ? "ok" : "CHECK FAILED", kSoftmaxWarm + kSoftmaxIters, kThreads, worst[0], worst[1],
              worst[2], worst[3]);
  std::fflush(stdout);
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device,%s,sms,%d\n", prop.name, prop.multiProcessorCount);
  std::printf("scenario,param,cycles\n");
  std::fflush(stdout);
  CHECK(cudaMalloc(&g_timing, sizeof(Timing)));
  CHECK(cudaMalloc(&g_sink, 1024 * sizeof(float)));

  unit_row<Chains<Ffma, 1>>("ffma_dependent_latency_x100", 1, true);
  unit_row<Chains<Ex2, 1>>("mufu_ex2_dependent_latency_x100", 1, true);
  unit_row<Chains<Fmnmx, 1>>("fmnmx_dependent_latency_x100", 1, true);
  unit_row<Chains<Fadd, 1>>("fadd_dependent_latency_x100", 1, true);
  unit_row<Chains<F2fp, 1>>("f2fp_dependent_latency_x100", 1, true);

  unit_rows<Ffma>("ffma");
  unit_rows<Ex2>("mufu_ex2");
  unit_rows<Fmnmx>("fmnmx");
  unit_rows<Fadd>("fadd");
  unit_rows<F2fp>("f2fp");
  for (int w : {1, 2, 4}) unit_row<IssueMix>("issue_mix_2ffma_1alu_x100", w, false);

  // The softmax input: row t, column i = hash32(t * 128 + i) mapped to [-4, 4).
  std::vector<float> h_rows(static_cast<size_t>(kMaxRows) * kRowCols);
  for (size_t i = 0; i < h_rows.size(); ++i)
    h_rows[i] = static_cast<float>(hash32(static_cast<uint32_t>(i)) >> 8) * (8.0f / 16777216.0f) - 4.0f;
  float* d_rows;
  RowOut* d_res;
  CHECK(cudaMalloc(&d_rows, h_rows.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_res, kMaxRows * sizeof(RowOut)));
  CHECK(cudaMemcpy(d_rows, h_rows.data(), h_rows.size() * sizeof(float), cudaMemcpyHostToDevice));
  const float c = static_cast<float>(1.4426950408889634 / std::sqrt(128.0));  // log2(e) / sqrt(d), d = 128
  softmax_row<false, 1>("softmax_row_tile_cycles", d_rows, h_rows, c, d_res);
  softmax_row<false, 2>("softmax_row_tile_cycles", d_rows, h_rows, c, d_res);
  softmax_row<true, 1>("softmax_poly_half_row_tile_cycles", d_rows, h_rows, c, d_res);
  softmax_row<true, 2>("softmax_poly_half_row_tile_cycles", d_rows, h_rows, c, d_res);

  CHECK(cudaFree(d_rows));
  CHECK(cudaFree(d_res));
  CHECK(cudaFree(g_sink));
  CHECK(cudaFree(g_timing));
  if (g_check_failed) std::fprintf(stderr, "h100_cudacore: a softmax result differs from the CPU reference\n");
  return 0;
}
