// Power of one unit at a time (the power model's calibration, issue 18): kernels whose power is
// dominated by one unit run on G SMs for a fixed wall time while NVML measures the board's energy
// and the SM clock. Prints CSV to stdout:
//   load,sms,unit,rate_per_s,power_w,clock_mhz,nvml_mhz,temp_c,reasons
// and the clock/power trace of every load (one NVML sample every 20 ms from 1.5 s before the
// load to its end) to the file named by argv[1]:
//   load,sms,t_ms,sm_mhz,power_w,temp_c   (t_ms from the load's first launch)
// With a second file (argv[2]), every CTA of each measured launch as a row of it:
//   load,sms,cta,smid,work,cycles,ns   (does every SM run at one clock and one rate?)
// and further arguments name the loads to run (default: all).
//
// A load (run_load): 1.5 s idle (the board cools back and the clock recovers), then two launches
// back to back, warm-up (1.5 s) and measured (2.0 s): each CTA runs its loop until its own start
// + the duration (%globaltimer). power_w = the board's energy counter
// (nvmlDeviceGetTotalEnergyConsumption) over the measured launch / its wall time (host steady
// clock between the warm-up's and the measured launch's completion events). clock_mhz = sum over
// CTAs of clock64 deltas / sum of %globaltimer deltas (the SM clock the measured launch ran at,
// averaged). nvml_mhz: the mean of the NVML SM clock samples in the measured launch. rate_per_s
// = sum over CTAs of (work / its %globaltimer delta), in the row's unit. temp_c: the last sample.
// reasons: the OR of the samples' clock-event reasons in the measured launch (hex).
//
// Loads (G = sms; one CTA per SM, each asks for more than half an SM's SMEM):
// - idle: no kernel (the board idle, 3.5 s; the power of the last 2 s). unit: none.
// - spin: 128 threads that __nanosleep(10 us) until the deadline: SMs resident but idle.
// - fma: 1024 threads, 8 independent 2D rotations each (x' = c x - s y, y' = s x + c y: FMUL +
//   FFMA per coordinate, values keep changing); unit: warp-level FP32 instructions (4 per
//   rotation; run_power.sh counts FFMA/FMUL in the loop's SASS to confirm).
// - smem: 1024 threads, ld.shared.v4.u32 from a 64 KiB random buffer, 32 consecutive 16-byte
//   words per warp (conflict-free; immediate offsets; .volatile so that ptxas keeps all four words
//   of every load), one LOP3 per load folds two of its words
//   into a register; unit: bytes.
// - alu: 1024 threads, 8 independent chains of lop3.b32 (3-input XOR, 0x96) each; unit: warp-level
//   ALU instructions (the smem load's LOP3s are priced with it).
// - l2_32k / l2_4k: thread 0 of each CTA streams TMA boxes (2D uint8 map of 128-byte rows, 128B
//   swizzle) of 32 KiB / 4 KiB through stages holding 128 KiB, cycling over its own 96 KiB
//   region (all regions 12.4 MiB: L2-resident); unit: bytes. The two box sizes separate a cost
//   per TMA operation from a cost per byte.
// - hbm_32k: the same with 32 KiB boxes over its own 16 MiB region of a 2 GiB buffer (40x the
//   L2): every box from HBM; unit: bytes.
// - wgmma_bf16 / wgmma_e4m3 / wgmma_bf16_zero: 256 threads, two warpgroups each looping
//   { wgmma.fence; 32 x m64n256k16 bf16 (e4m3: m64n256k32) SS into its own 128 f32
//   accumulators; commit; wait_group 0 } on operands of pseudo-random values (bf16 in [-1, 1),
//   the GEMM twin's distribution; e4m3 of exponent -6..0) or zeros (_zero). unit: FLOP.
//   After each loop iteration the warpgroup's thread 0 checks the deadline and tells its
//   warpgroup through SMEM and bar.sync (a warpgroup leaves its loop as a whole).
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_power.cu -lcuda -ldl
#include "calibration_nvml.cuh"
#include "calibration_ptx.cuh"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

// Per CTA: its work (the load's unit), its clock64 and %globaltimer deltas, and its SM.
struct CtaOut {
  unsigned long long work, cycles, ns, smid;
};

constexpr unsigned kSmemPerCta = 120 * 1024;  // > half of 228 KiB: one CTA per SM

// The CTA's start (thread 0) and its record at the end (after every thread is done).
struct CtaClock {
  unsigned long long ns0;
  long long c0;
  __device__ void start() {
    ns0 = globaltimer();
    c0 = clock64();
  }
  __device__ void finish(CtaOut* out, unsigned long long work) const {
    out[blockIdx.x].work = work;
    out[blockIdx.x].cycles = static_cast<unsigned long long>(clock64() - c0);
    out[blockIdx.x].ns = globaltimer() - ns0;
    out[blockIdx.x].smid = sm_id();
  }
};

__global__ void k_spin(unsigned long long dur, CtaOut* out) {
  CtaClock clk;
  clk.start();
  while (globaltimer() - clk.ns0 < dur) __nanosleep(10000);
  __syncthreads();
  if (threadIdx.x == 0) clk.finish(out, 0);
}

// The frame of the 1024-thread loads (fma, alu, smem): thread 0 starts the CTA's clock, then every
// warp runs body(it) for it = 0, 1, ... until its lane 0 sees the deadline (a warp leaves as a
// whole); each iteration is worth `per_iteration` units per warp; thread 0 records the CTA.
template <class Body>
__device__ void warps_until(unsigned long long dur, unsigned long long per_iteration, CtaOut* out, Body&& body) {
  __shared__ unsigned long long work;
  __shared__ CtaClock clk;
  if (threadIdx.x == 0) {
    work = 0;
    clk.start();
  }
  __syncthreads();
  unsigned long long iters = 0;
  for (unsigned it = 0;; ++it) {
    body(it);
    ++iters;
    const unsigned stop = (threadIdx.x & 31) == 0 ? globaltimer() - clk.ns0 >= dur : 0;
    if (__shfl_sync(0xffffffffu, stop, 0)) break;
  }
  if ((threadIdx.x & 31) == 0) atomicAdd(&work, iters * per_iteration);
  __syncthreads();
  if (threadIdx.x == 0) clk.finish(out, work);
}

// A result that never takes the value `unlikely` in practice: written when it does, so that the
// compiler keeps the work that produced it.
template <class T>
__device__ void keep_live(T result, T unlikely, CtaOut* out) {
  if (result == unlikely) out[blockIdx.x].cycles = 0;
}

__global__ void __launch_bounds__(1024, 1) k_fma(unsigned long long dur, CtaOut* out) {
  const float angle = 1e-3f * static_cast<float>(threadIdx.x + 1);
  const float c = cosf(angle), s = sinf(angle);
  float x[8], y[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    x[i] = 1.0f + 0.1f * i;
    y[i] = 0.5f - 0.05f * i;
  }
  warps_until(dur, 64 * 8 * 4, out, [&](unsigned) {  // warp-level FP32 instructions
#pragma unroll 8
    for (int j = 0; j < 64; ++j) {
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float nx = fmaf(c, x[i], -s * y[i]);
        y[i] = fmaf(s, x[i], c * y[i]);
        x[i] = nx;
      }
    }
  });
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) sum += x[i] + y[i];
  keep_live(sum, 1234.5f, out);
}

__global__ void __launch_bounds__(1024, 1) k_alu(unsigned long long dur, CtaOut* out) {
  const unsigned y = hash32(threadIdx.x + 1), z = hash32(threadIdx.x + 1000);
  unsigned x[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = hash32(threadIdx.x * 8 + i);
  warps_until(dur, 64 * 8, out, [&](unsigned) {  // warp-level LOP3 instructions
#pragma unroll 8
    for (int j = 0; j < 64; ++j) {
#pragma unroll
      for (int i = 0; i < 8; ++i) asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(x[i]) : "r"(y), "r"(z));
    }
  });
  unsigned sum = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) sum ^= x[i];
  keep_live(sum, 0x12345678u, out);
}

__global__ void __launch_bounds__(1024, 1) k_smem(unsigned long long dur, CtaOut* out) {
  extern __shared__ unsigned char smem[];
  const unsigned base = (smem_addr(smem) + 15) & ~15u;
  for (unsigned i = threadIdx.x; i < 65536 / 4; i += blockDim.x)
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(base + 4 * i), "r"(hash32(i * 2654435761u + blockIdx.x)) : "memory");
  __syncthreads();
  unsigned acc = 0;
  warps_until(dur, 16 * 512, out, [&](unsigned it) {  // bytes: 16 loads of 512 B per warp
    // 16 loads: 4 groups of the thread's word in each 16 KiB quarter (immediate offsets, no
    // address arithmetic per load); the window slides by 512 B per iteration.
    const unsigned a0 = base + ((16 * threadIdx.x + it * 512) & 16383);
#pragma unroll
    for (unsigned g = 0; g < 4; ++g) {
      unsigned v[4][4];
      asm volatile(
          "ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%16];\n"
          "ld.volatile.shared.v4.u32 {%4, %5, %6, %7}, [%16+16384];\n"
          "ld.volatile.shared.v4.u32 {%8, %9, %10, %11}, [%16+32768];\n"
          "ld.volatile.shared.v4.u32 {%12, %13, %14, %15}, [%16+49152];"
          : "=r"(v[0][0]), "=r"(v[0][1]), "=r"(v[0][2]), "=r"(v[0][3]), "=r"(v[1][0]), "=r"(v[1][1]), "=r"(v[1][2]),
            "=r"(v[1][3]), "=r"(v[2][0]), "=r"(v[2][1]), "=r"(v[2][2]), "=r"(v[2][3]), "=r"(v[3][0]), "=r"(v[3][1]),
            "=r"(v[3][2]), "=r"(v[3][3])
          : "r"(a0));
#pragma unroll
      for (int l = 0; l < 4; ++l) acc ^= v[l][0] ^ v[l][2];  // one LOP3 per load
    }
  });
  keep_live(acc, 0x12345678u, out);
}

// Thread 0 streams boxes of box_bytes (box_rows 128-byte rows) through stages filling kInFlight bytes,
// from rows first_row .. first_row + region_rows (CTA c: first_row = c * region_rows), until the
// deadline (checked every 16 loads), then waits for the boxes in flight.
constexpr unsigned kInFlight = 131072;
__global__ void k_stream(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned region_rows,
                         unsigned long long dur, CtaOut* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned stages = kInFlight / box_bytes, box_rows = box_bytes / 128;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + kInFlight;
  for (unsigned s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  CtaClock clk;
  clk.start();
  const unsigned long long first_row = static_cast<unsigned long long>(blockIdx.x) * region_rows;
  unsigned long long loads = ~0ull >> 1;  // set when the deadline passes
  for (unsigned long long i = 0; i < loads + stages; ++i) {
    const unsigned s = static_cast<unsigned>(i % stages);
    if (i >= stages) mbar_wait(bars + 8 * s, static_cast<unsigned>((i - stages) / stages) & 1u);
    if (i < loads && i % 16 == 0 && globaltimer() - clk.ns0 >= dur) loads = i;
    if (i < loads) {
      mbar_arrive_expect_tx(bars + 8 * s, box_bytes);
      const int row = static_cast<int>(first_row + (i * box_rows) % region_rows);
      tma_load_2d(base + s * box_bytes, &map, 0, row, bars + 8 * s);
    }
  }
  clk.finish(out, loads * box_bytes);
}

// Two warpgroups, each: loop { fence; 32 wgmmas m64n256 (bf16 k16 / e4m3 k32) SS; commit;
// wait_group 0 } until the deadline. Operands: A tiles of 64 x 128 B per warpgroup at base,
// base + 8192; B of 256 x 128 B at base + 16384 (K-major 128B swizzle descriptors as in
// h100_wgmma.cu; slice kk of the 128-byte rows at +32 B).
template <bool kE4m3>
__global__ void __launch_bounds__(256, 1) k_wgmma(int random, unsigned long long dur, CtaOut* out) {
  extern __shared__ unsigned char smem[];
  constexpr unsigned kOperandBytes = 2 * 8192 + 256 * 128;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  for (unsigned i = threadIdx.x; i < kOperandBytes / 4; i += blockDim.x) {
    const uint32_t h = hash32(i * 2654435761u ^ hash32(blockIdx.x + 1));
    uint32_t v = 0;
    if (random && !kE4m3) {  // two bf16 in [-1, 1): the top 16 bits of (h-derived float)
      const float lo = static_cast<float>(h & 0xffff) * (2.0f / 65536.0f) - 1.0f;
      const float hi = static_cast<float>(h >> 16) * (2.0f / 65536.0f) - 1.0f;
      v = (__float_as_uint(lo) >> 16) | (__float_as_uint(hi) & 0xffff0000u);
    } else if (random) {  // four e4m3: sign, exponent field 1..7 (2^-6 .. 2^0), mantissa
      for (int b = 0; b < 4; ++b) {
        const uint32_t r = h >> (8 * b);
        v |= ((r & 0x80u) | ((1u + (r >> 3) % 7u) << 3) | (r & 7u)) << (8 * b);
      }
    }
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(base + 4 * i), "r"(v) : "memory");
  }
  fence_proxy_async();
  __shared__ volatile unsigned stop_flag[2][2];
  __shared__ unsigned long long work;
  CtaClock clk;
  if (threadIdx.x == 0) {
    work = 0;
    clk.start();
  }
  __syncthreads();
  const unsigned wg = threadIdx.x / 128;
  const uint64_t da = gmma_desc(base + wg * 8192), db = gmma_desc(base + 16384);
  const unsigned long long wg_ns0 = globaltimer();
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  unsigned long long iters = 0;
  for (unsigned it = 0;; ++it) {
    fence_regs(d);
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const uint64_t a = da + 2 * (i % 4), b = db + 2 * (i % 4);
      if constexpr (kE4m3)
        asm volatile(WG_SS_E4M3(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(a), "l"(b), "r"(1u));
      else
        asm volatile(WG_SS_BF16(256, WG_ACC128, 128, 129, 130) : ACC_OPS_128(d) : "l"(a), "l"(b), "r"(1u));
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(d);
    ++iters;
    if (threadIdx.x % 128 == 0) stop_flag[wg][it & 1] = globaltimer() - wg_ns0 >= dur;
    asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");
    if (stop_flag[wg][it & 1]) break;
  }
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
  const unsigned long long flop_per_wgmma = 2ull * 64 * 256 * (kE4m3 ? 32 : 16);
  if (threadIdx.x % 128 == 0) atomicAdd(&work, iters * 32 * flop_per_wgmma + (sum == 1234.5f ? 1 : 0));
  __syncthreads();
  if (threadIdx.x == 0) clk.finish(out, work);
}

// ---- host ------------------------------------------------------------------------------------
constexpr unsigned long long kWarmNs = 1'500'000'000ull, kMeasureNs = 2'000'000'000ull;
constexpr double kCoolS = 1.5;

struct Ctx {
  Nvml nvml;
  Sampler sampler{nvml, 20};
  FILE* trace = nullptr;
  FILE* cta_log = nullptr;           // per CTA of each measured launch (argv[2], optional)
  std::vector<std::string> only;     // the loads to run (argv[3...]; empty: all)
  CtaOut* out[2] = {nullptr, nullptr};  // warm-up, measured
};

// One kernel launch of `sms` CTAs for `dur` ns writing to `out`.
using Launch = std::function<void(unsigned sms, unsigned long long dur, CtaOut* out)>;

void run_load(Ctx& ctx, const char* load, unsigned sms, const char* unit, const Launch& launch) {
  if (!ctx.only.empty() && std::find(ctx.only.begin(), ctx.only.end(), load) == ctx.only.end()) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(kCoolS));
  const double t_first = now_s();
  double t1, t2;
  unsigned long long e1, e2;
  std::vector<CtaOut> h(sms);
  if (sms == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kWarmNs * 1e-9));
    t1 = now_s();
    e1 = ctx.nvml.energy_mj();
    std::this_thread::sleep_for(std::chrono::duration<double>(kMeasureNs * 1e-9));
    t2 = now_s();
    e2 = ctx.nvml.energy_mj();
  } else {
    for (CtaOut* o : ctx.out) CHECK(cudaMemset(o, 0, sms * sizeof(CtaOut)));
    cudaEvent_t warm, done;
    CHECK(cudaEventCreateWithFlags(&warm, cudaEventBlockingSync));
    CHECK(cudaEventCreateWithFlags(&done, cudaEventBlockingSync));
    launch(sms, kWarmNs, ctx.out[0]);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(warm));
    launch(sms, kMeasureNs, ctx.out[1]);
    CHECK(cudaEventRecord(done));
    CHECK(cudaGetLastError());
    CHECK(cudaEventSynchronize(warm));
    t1 = now_s();
    e1 = ctx.nvml.energy_mj();
    CHECK(cudaEventSynchronize(done));
    t2 = now_s();
    e2 = ctx.nvml.energy_mj();
    CHECK(cudaMemcpy(h.data(), ctx.out[1], h.size() * sizeof(CtaOut), cudaMemcpyDeviceToHost));
    CHECK(cudaEventDestroy(warm));
    CHECK(cudaEventDestroy(done));
  }
  const std::vector<Sampler::Sample> during = ctx.sampler.between(t1, t2);
  double mhz = 0;
  for (const Sampler::Sample& s : during) mhz += s.sm_mhz;
  mhz = during.empty() ? 0 : mhz / during.size();
  const unsigned temp = during.empty() ? 0 : during.back().temp_c;
  unsigned long long reasons = 0;
  for (const Sampler::Sample& s : during) reasons |= s.reasons;
  const double watts = static_cast<double>(e2 - e1) / 1000.0 / (t2 - t1);
  double rate = 0, cycles = 0, ns = 0;
  for (const CtaOut& o : h) {
    if (o.ns) rate += static_cast<double>(o.work) / (static_cast<double>(o.ns) * 1e-9);
    cycles += static_cast<double>(o.cycles);
    ns += static_cast<double>(o.ns);
  }
  std::printf("%s,%u,%s,%.6g,%.1f,%.0f,%.0f,%u,%llx\n", load, sms, unit, rate, watts,
              ns > 0 ? cycles / ns * 1000.0 : 0.0, mhz, temp, reasons);
  std::fflush(stdout);
  if (ctx.cta_log)
    for (unsigned c = 0; c < h.size(); ++c)
      std::fprintf(ctx.cta_log, "%s,%u,%u,%llu,%llu,%llu,%llu\n", load, sms, c, h[c].smid, h[c].work, h[c].cycles,
                   h[c].ns);
  for (const Sampler::Sample& s : ctx.sampler.between(t_first - kCoolS, t2))
    std::fprintf(ctx.trace, "%s,%u,%.0f,%u,%.1f,%u,%llx\n", load, sms, (s.t_s - t_first) * 1000.0, s.sm_mhz,
                 s.power_w, s.temp_c, s.reasons);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: h100_power TRACE.csv [CTA_LOG.csv [LOAD...]]\n");
    return 2;
  }
  Ctx ctx;
  if (argc > 2) {
    ctx.cta_log = std::fopen(argv[2], "w");
    if (!ctx.cta_log) {
      std::fprintf(stderr, "cannot write %s\n", argv[2]);
      return 2;
    }
    std::fprintf(ctx.cta_log, "load,sms,cta,smid,work,cycles,ns\n");
  }
  for (int i = 3; i < argc; ++i) ctx.only.push_back(argv[i]);
  ctx.trace = std::fopen(argv[1], "w");
  if (!ctx.trace) {
    std::fprintf(stderr, "cannot write %s\n", argv[1]);
    return 2;
  }
  std::fprintf(ctx.trace, "load,sms,t_ms,sm_mhz,power_w,temp_c\n");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned all = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%u,power_limit_w,%.0f\n", prop.name, all, ctx.nvml.power_limit_w());
  std::printf("load,sms,unit,rate_per_s,power_w,clock_mhz,nvml_mhz,temp_c,reasons\n");
  for (CtaOut*& o : ctx.out) CHECK(cudaMalloc(&o, all * sizeof(CtaOut)));

  // Streams: L2-resident regions of 96 KiB (768 rows) per CTA; HBM regions of 16 MiB.
  constexpr unsigned kL2Rows = 768, kHbmRows = 131072;
  unsigned char* buf;
  const size_t buf_bytes = static_cast<size_t>(all) * kHbmRows * 128;
  CHECK(cudaMalloc(&buf, buf_bytes));
  CHECK(cudaMemset(buf, 0x5a, buf_bytes));
  const CUtensorMap map32k = make_map(buf, all * kHbmRows, 256);
  const CUtensorMap map4k = make_map(buf, all * kHbmRows, 32);
  CHECK(cudaFuncSetAttribute(k_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, kInFlight + 2048));
  CHECK(cudaFuncSetAttribute(k_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));
  CHECK(cudaFuncSetAttribute(k_fma, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));
  CHECK(cudaFuncSetAttribute(k_alu, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));
  CHECK(cudaFuncSetAttribute(k_spin, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));
  CHECK(cudaFuncSetAttribute(k_wgmma<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));
  CHECK(cudaFuncSetAttribute(k_wgmma<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemPerCta));

  const Launch spin = [](unsigned g, unsigned long long d, CtaOut* o) { k_spin<<<g, 128, kSmemPerCta>>>(d, o); };
  const Launch fma = [](unsigned g, unsigned long long d, CtaOut* o) { k_fma<<<g, 1024, kSmemPerCta>>>(d, o); };
  const Launch alu = [](unsigned g, unsigned long long d, CtaOut* o) { k_alu<<<g, 1024, kSmemPerCta>>>(d, o); };
  const Launch smem = [](unsigned g, unsigned long long d, CtaOut* o) { k_smem<<<g, 1024, kSmemPerCta>>>(d, o); };
  auto stream = [&](const CUtensorMap& map, unsigned box, unsigned rows) -> Launch {
    return [&map, box, rows](unsigned g, unsigned long long d, CtaOut* o) {
      k_stream<<<g, 32, kInFlight + 2048>>>(map, box, rows, d, o);
    };
  };
  auto wgmma = [](bool e4m3, int random) -> Launch {
    return [e4m3, random](unsigned g, unsigned long long d, CtaOut* o) {
      if (e4m3)
        k_wgmma<true><<<g, 256, kSmemPerCta>>>(random, d, o);
      else
        k_wgmma<false><<<g, 256, kSmemPerCta>>>(random, d, o);
    };
  };

  run_load(ctx, "idle", 0, "none", spin);
  run_load(ctx, "spin", all, "none", spin);
  run_load(ctx, "spin", all / 2, "none", spin);
  run_load(ctx, "fma", all, "fp32_warp_instructions", fma);
  run_load(ctx, "fma", all / 2, "fp32_warp_instructions", fma);
  run_load(ctx, "alu", all, "alu_warp_instructions", alu);
  run_load(ctx, "smem", all, "bytes", smem);
  run_load(ctx, "l2_32k", all, "bytes", stream(map32k, 32768, kL2Rows));
  run_load(ctx, "l2_4k", all, "bytes", stream(map4k, 4096, kL2Rows));
  run_load(ctx, "hbm_32k", all, "bytes", stream(map32k, 32768, kHbmRows));
  for (unsigned g : {8u, 16u, all / 4, all / 2, 3 * all / 4, all})
    run_load(ctx, "wgmma_bf16", g, "flop", wgmma(false, 1));
  run_load(ctx, "wgmma_e4m3", all / 2, "flop", wgmma(true, 1));
  run_load(ctx, "wgmma_e4m3", all, "flop", wgmma(true, 1));
  for (unsigned g : {all / 4, all / 2, 3 * all / 4, all})
    run_load(ctx, "wgmma_bf16_zero", g, "flop", wgmma(false, 0));
  std::fclose(ctx.trace);
  if (ctx.cta_log) std::fclose(ctx.cta_log);
  CHECK(cudaFree(buf));
  return 0;
}
