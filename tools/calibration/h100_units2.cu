// Unit microbenchmarks, second set: how the L2 serves TMA streams of shared data, the cost of a
// launch's first TMA load, TMA store completion, and whether the L2's bandwidth follows the SM
// clock. Prints CSV: scenario,param,cycles (comment lines start with '#'). Each row below is a
// program the simulator reproduces.
//
// Common pieces (as in h100_ubench.cu): tensor maps of 128-byte rows (uint8, dims {128, rows},
// box {128, box_rows}, SWIZZLE_128B, L2 promotion 128B), loads by
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes into 1024-byte
// aligned SMEM, completion by mbarrier.try_wait.parity loops. Kernels of 32 threads, plain
// launches (no cluster attribute), thread 0 does everything; the others return at once.
//
// Rows:
// - tma_stream_all_sms_l2_bytes_per_cycle_x100 (param = bytes in flight per CTA: 65536, 131072)
//   and tma_stream_all_sms_l2_shared_bytes_per_cycle_x100 (same params): the program of
//   h100_ubench.cu's tma_stream_all_sms_l2 row. A 2 GiB buffer of 128-byte rows is written
//   (cudaMemset, which evicts the L2); one CTA per SM (132); CTA c streams 512 boxes of 32 KiB
//   (256 rows) through `param / 32768` stages (one box and one mbarrier per stage; the box of
//   load i goes to stage i % stages, which is reused once its previous box has arrived) from a
//   256 KiB region of 2048 rows, cycling through its 8 boxes (load i reads rows
//   first_row + (i*256) % 2048). Distinct (the h100_ubench row): first_row = c*2048, 33 MiB in
//   all. Shared: first_row = 0 for every CTA (all 132 CTAs cycle through the SAME 256 KiB, each
//   starting at its first box). Before the rows, one warm-up launch of the distinct program
//   with 8 loads per CTA (4 stages) makes the 33 MiB L2-resident. Timing: every CTA reads
//   %globaltimer and clock64 after its barrier inits and %globaltimer after its last wait; the
//   grid's span = max(end) - min(start) over CTAs; CTA 0's clock64 delta / its globaltimer
//   delta gives the SM clock. Value: 132 * 512 * 32768 bytes / (span_ns * clock GHz) * 100.
//   The distinct and shared rows of one param run back to back (distinct first).
//   With --stream-depths the program prints only these two rows, at 1..6 boxes in flight.
// - tma_stream_all_sms_l2_shared_offset_bytes_per_cycle_x100 (param STEP = 0, 1, 2, 4, 8, 16; only
//   with --shared-offsets): every SM streams one 4 MiB region of 128 boxes of 32 KiB, 4 in flight,
//   CTA c starting at box c x STEP, so SMs read each line STEP boxes apart in time.
// - tma_stream_all_sms_l2_shared_half_bytes_per_cycle_x100 (param 131072): the same with
//   first_row = (c % 2) * 2048: CTAs of even blockIdx share region 0, odd ones region 1.
// - tma_first_load_latency (param 16384 = box bytes): one CTA, a fresh launch; thread 0 reads
//   clock64 as its first instruction, inits one mbarrier (count 1) +
//   fence.mbarrier_init.release.cluster, arrive.expect_tx 16384, one TMA load of a 16 KiB box
//   (128 rows x 128 B) at rows 0..127 of an 8 MiB buffer, try_wait parity 0 until done, clock64:
//   value = cycles from entry to completion (the launch's first use of its tensor map, passed
//   by value as a __grid_constant__ parameter; the box is L2-resident: the buffer was memset
//   and every earlier launch loaded it).
//   tma_second_load_latency (param 16384): in the same launch, right after: clock64,
//   arrive.expect_tx, one TMA load of the box at rows 1024..1151 (also loaded by every earlier
//   launch) into the same SMEM, try_wait parity 1, clock64; value = that difference.
//   One warm-up launch, then 20 launches (each synchronized); each row is the upper median
//   (sorted[10]) of its 20 values.
// - tma_store_latency (param 8192 = box bytes): one CTA; thread 0 fills a 64x64 bf16 box
//   (8 KiB, 1024-byte aligned SMEM, 128B-swizzle layout irrelevant: any bytes) with st.shared,
//   then fence.proxy.async.shared::cta; then 108 iterations of { t0 = clock64;
//   cp.async.bulk.tensor.2d.global.shared::cta.bulk_group of the box to coordinates (0, 0) of a
//   64x64 bf16 matrix (bf16 tensor map, box {64, 64}, SWIZZLE_128B, L2 promotion 256B: the
//   gemm_sm90 epilogue's map; the 8 KiB destination was memset and is rewritten every
//   iteration: L2-resident); cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;
//   t1 = clock64 }; the first 8 iterations are discarded; value = sum(t1 - t0) over the other
//   100 / 100, rounded to the nearest cycle.
//   tma_store_read_latency (param 8192): the same with cp.async.bulk.wait_group.read 0 (the
//   source SMEM may be reused; the global write need not be done).
// - tma_stream_all_sms_l2_idle_bytes_per_ns_x100 / _idle_clock_mhz and
//   tma_stream_all_sms_l2_after_burst_bytes_per_ns_x100 / _after_burst_clock_mhz (param
//   131072): the distinct stream program above at 4 stages (its warm-up launch of 8 loads per
//   CTA, then the timed launch of 512 loads per CTA), enqueued on the default stream right after
//   (idle) cudaDeviceSynchronize + 100 ms host sleep, or (after_burst) 30 back-to-back launches
//   of gemm_sm90_twin.cu's cooperative GEMM (rows_per_wg 64, tile_n 256, 4 stages, raster m,
//   swizzle 1, grid 132) at M = N = K = 8192 on bf16 data of k_fill (about 45 ms of tensor
//   work), with no host synchronization between the GEMMs and the stream (the GEMM data,
//   384 MiB, evicts the stream's 33 MiB, which the warm-up launch brings back, about 10 us).
//   Values: 132 * 512 * 32768 bytes / span_ns * 100 (bytes per ns x100), and CTA 0's clock64
//   delta / its globaltimer delta in MHz (integers). Five rounds of (idle, after_burst); all
//   rows printed in that order. A comment line per after_burst round gives the last GEMM
//   launch's SM clock (gemm_sm90_twin's clock_mhz rule) and span.
//
// The GEMM (k_gemm, Cfg, GemmParams, k_fill, the bf16 make_map) comes from gemm_sm90_twin.cu,
// included here with its main renamed; the shared PTX and host helpers (smem_addr, mbar_*,
// fence_*, tma_load_2d, tma_stream_loop (the stream loop, shared with h100_loaded.cu), tma_store_2d,
// bulk_commit, bulk_wait_0, CHECK, the uint8 make_map) from calibration_ptx.cuh.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_units2.cu -lcuda
#include "calibration_ptx.cuh"

#define main gemm_sm90_twin_main
#include "gemm_sm90_twin.cu"
#undef main

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

__device__ __forceinline__ void bulk_wait_read_0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

// TMA streaming into every SM (h100_ubench.cu's k_tma_stream_grid with the region choice
// generalized): CTA c streams `loads` boxes from region c % regions of `region_rows` rows
// (regions = grid size: every CTA its own, as in h100_ubench.cu; 1: all the same; 2: halves),
// starting at box c x first_box_step of its region (0: every CTA at the region's first box).
__global__ void k_tma_stream_grid(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned box_rows,
                                  unsigned region_rows, unsigned regions, unsigned stages, unsigned loads,
                                  long long* out, unsigned first_box_step) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  auto bar = [&](unsigned s) { return base + stages * box_bytes + 8 * s; };
  for (unsigned s = 0; s < stages; ++s) mbar_init(bar(s), 1);
  long long ns0, ns1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
  const long long c0 = clock64();
  const unsigned first_row = (blockIdx.x % regions) * region_rows;
  tma_stream_loop(&map, base, bar(0), box_bytes, box_rows, first_row, region_rows, stages, loads,
                  blockIdx.x * first_box_step);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
  atomicMin(reinterpret_cast<unsigned long long*>(&out[0]), static_cast<unsigned long long>(ns0));
  atomicMax(reinterpret_cast<unsigned long long*>(&out[1]), static_cast<unsigned long long>(ns1));
  if (blockIdx.x == 0) {
    out[2] = clock64() - c0;
    out[3] = ns1 - ns0;
  }
}

// A launch's first TMA load (entry to completion, barrier init included), then a second one.
__global__ void k_tma_first_load(const __grid_constant__ CUtensorMap map, unsigned box_bytes, int second_row,
                                 long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const long long t0 = clock64();
  const unsigned dst = (smem_addr(smem) + 1023) & ~1023u;
  const unsigned b = dst + box_bytes;
  mbar_init(b, 1);
  fence_mbar_init();
  mbar_arrive_expect_tx(b, box_bytes);
  tma_load_2d(dst, &map, 0, 0, b);
  mbar_wait(b, 0);
  const long long t1 = clock64();
  const long long t2 = clock64();
  mbar_arrive_expect_tx(b, box_bytes);
  tma_load_2d(dst, &map, 0, second_row, b);
  mbar_wait(b, 1);
  const long long t3 = clock64();
  out[0] = t1 - t0;
  out[1] = t3 - t2;
}

// TMA store of one 64x64 bf16 box, waited for with wait_group 0 (kRead: wait_group.read 0).
template <bool kRead>
__global__ void k_tma_store_latency(const __grid_constant__ CUtensorMap map, long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned src = (smem_addr(smem) + 1023) & ~1023u;
  for (unsigned i = 0; i < 8192; i += 4) asm volatile("st.shared.u32 [%0], %1;" ::"r"(src + i), "r"(i) : "memory");
  fence_proxy_async();
  const int iters = 100;
  long long total = 0;
  for (int i = 0; i < iters + 8; ++i) {
    const long long t0 = clock64();
    tma_store_2d(&map, src, 0, 0);
    bulk_commit();
    if (kRead)
      bulk_wait_read_0();
    else
      bulk_wait_0();
    const long long t1 = clock64();
    if (i >= 8) total += t1 - t0;
  }
  out[0] = (total + iters / 2) / iters;
}

// ---- host -----------------------------------------------------------------------------------
// One k_tma_stream_grid launch: its result buffer (device memory), enqueued without a sync.
struct StreamLaunch {
  long long* out = nullptr;
  double bytes = 0;
  void init(double total_bytes) {
    if (!out) CHECK(cudaMalloc(&out, 4 * sizeof(long long)));
    const long long h[4] = {0x7fffffffffffffffll, 0, 0, 0};
    CHECK(cudaMemcpy(out, h, sizeof(h), cudaMemcpyHostToDevice));
    bytes = total_bytes;
  }
  void enqueue(const CUtensorMap& map, unsigned ctas, unsigned box_bytes, unsigned box_rows, unsigned region_rows,
               unsigned regions, unsigned stages, unsigned loads, unsigned first_box_step = 0) {
    const unsigned smem = stages * box_bytes + 2048;
    CHECK(cudaFuncSetAttribute(k_tma_stream_grid, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    k_tma_stream_grid<<<ctas, 32, smem>>>(map, box_bytes, box_rows, region_rows, regions, stages, loads, out,
                                          first_box_step);
    CHECK(cudaGetLastError());
  }
  // After the launch is done: span_ns, CTA 0's clock in GHz.
  void read(double& span_ns, double& ghz) const {
    long long h[4];
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    span_ns = static_cast<double>(h[1] - h[0]);
    ghz = static_cast<double>(h[2]) / static_cast<double>(h[3]);
  }
};

// Aggregate bytes per SM clock x100 of one k_tma_stream_grid launch (h100_ubench.cu's stream_grid).
long long stream_grid(const CUtensorMap& map, unsigned ctas, unsigned box_bytes, unsigned box_rows,
                      unsigned region_rows, unsigned regions, unsigned stages, unsigned loads,
                      unsigned first_box_step = 0) {
  StreamLaunch l;
  l.init(static_cast<double>(ctas) * loads * box_bytes);
  l.enqueue(map, ctas, box_bytes, box_rows, region_rows, regions, stages, loads, first_box_step);
  double span, ghz;
  l.read(span, ghz);
  CHECK(cudaFree(l.out));
  return static_cast<long long>(l.bytes / (span * ghz) * 100);
}

// gemm_sm90_twin's cooperative 64/256 GEMM at one size, set up as its run() does.
struct GemmBurst {
  using C = Cfg<true, 64, 256>;
  __nv_bfloat16 *A = nullptr, *B = nullptr, *D = nullptr;
  long long* tim = nullptr;
  CUtensorMap tmA, tmB, tmD;
  GemmParams p;
  size_t smem = 0;
  int grid = 0;
  void init(int mnk, int sms) {
    const int S = C::max_stages();
    p.M = p.N = p.K = mnk;
    p.tiles_m = (mnk + C::BM - 1) / C::BM;
    p.tiles_n = (mnk + C::BN - 1) / C::BN;
    p.k_tiles = (mnk + 63) / 64;
    p.stages = S;
    p.raster_m = 1;
    p.swizzle = 1;
    grid = static_cast<int>(std::min<unsigned>(p.tiles_m * p.tiles_n, sms));
    smem = C::smem_bytes(S);
    const size_t n = static_cast<size_t>(mnk) * mnk;
    CHECK(cudaMalloc(&A, n * 2));
    CHECK(cudaMalloc(&B, n * 2));
    CHECK(cudaMalloc(&D, n * 2));
    k_fill<<<1024, 256>>>(A, n, 1u);
    k_fill<<<1024, 256>>>(B, n, 2u);
    CHECK(cudaGetLastError());
    tmA = make_map(A, mnk, mnk, C::BM, 64);
    tmB = make_map(B, mnk, mnk, C::BN, 64);
    tmD = make_map(D, mnk, mnk, 64, 64);
    CHECK(cudaMalloc(&tim, static_cast<size_t>(grid) * kTimSlots * sizeof(long long)));
    CHECK(cudaFuncSetAttribute(k_gemm<true, 64, 256, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)));
    CHECK(cudaDeviceSynchronize());
  }
  void enqueue(int launches) {
    for (int i = 0; i < launches; ++i) {
      k_gemm<true, 64, 256, false><<<grid, 384, smem>>>(tmA, tmB, tmD, p, tim, nullptr, nullptr);
      CHECK(cudaGetLastError());
    }
  }
  // The last launch's clock (the longest-lived CTA's clock64 / globaltimer, in MHz) and span.
  void last(double& mhz, double& span_ns) const {
    std::vector<long long> ht(static_cast<size_t>(grid) * kTimSlots);
    CHECK(cudaMemcpy(ht.data(), tim, ht.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    long long t_start = ht[0], t_end = 0, life = -1;
    mhz = 0;
    for (int c = 0; c < grid; ++c) {
      const long long* v = &ht[static_cast<size_t>(c) * kTimSlots];
      t_start = std::min(t_start, v[0]);
      const int w = v[4] > v[2] ? 1 : 0;
      const long long end_ns = v[2 + 2 * w], end_clk = v[3 + 2 * w];
      t_end = std::max(t_end, end_ns);
      if (end_ns - v[0] > life) {
        life = end_ns - v[0];
        mhz = life > 0 ? static_cast<double>(end_clk - v[1]) / (static_cast<double>(life) / 1000.0) : 0.0;
      }
    }
    span_ns = static_cast<double>(t_end - t_start);
  }
  void release() {
    CHECK(cudaFree(A));
    CHECK(cudaFree(B));
    CHECK(cudaFree(D));
    CHECK(cudaFree(tim));
  }
};

// Small single-CTA launches whose kernel writes out[0..1]; returns them.
template <class Kernel, class... Args>
void launch1(Kernel k, unsigned smem, long long* res, Args... args) {
  long long* out;
  CHECK(cudaMalloc(&out, 2 * sizeof(long long)));
  CHECK(cudaMemset(out, 0, 2 * sizeof(long long)));
  if (smem > 48 * 1024) CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  k<<<1, 32, smem>>>(args..., out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(res, out, 2 * sizeof(long long), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(out));
}

// --stream-depths: only the all-SM distinct and shared streams, at 1..6 boxes of 32 KiB in flight
// per SM (params 32768..196608): is the shared stream's rate at 128 KiB (10783 B/clk) a cap or
// still latency-bound (it is 7100 at 64 KiB)?
void stream_depths(unsigned sms) {
  const unsigned big_rows = 16u * 1024 * 1024;  // 2 GiB, as below
  void* big;
  CHECK(cudaMalloc(&big, 128ull * big_rows));
  CHECK(cudaMemset(big, 1, 128ull * big_rows));
  const CUtensorMap m = make_map(big, big_rows, 256);
  stream_grid(m, sms, 32768, 256, 2048, sms, 4, 8);  // warm-up: the 33 MiB into the L2
  for (unsigned stages = 1; stages <= 6; ++stages) {
    std::printf("tma_stream_all_sms_l2_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                stream_grid(m, sms, 32768, 256, 2048, sms, stages, 512));
    std::printf("tma_stream_all_sms_l2_shared_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                stream_grid(m, sms, 32768, 256, 2048, 1, stages, 512));
    std::fflush(stdout);
  }
  CHECK(cudaFree(big));
}

// --shared-offsets: every SM streams the same 4 MiB region of 128 boxes of 32 KiB (4 in flight), CTA
// c starting at box c x STEP: SMs read the same lines STEP boxes apart in time instead of in step
// (STEP 0: all together; the region's 132-box distinct twin for reference). Does a line that
// another SM read a little earlier cost the L2 what a distinct line does?
void shared_offsets(unsigned sms) {
  const unsigned big_rows = 16u * 1024 * 1024;
  void* big;
  CHECK(cudaMalloc(&big, 128ull * big_rows));
  CHECK(cudaMemset(big, 1, 128ull * big_rows));
  const CUtensorMap m = make_map(big, big_rows, 256);
  constexpr unsigned kRegionRows = 128 * 256;  // 128 boxes
  stream_grid(m, sms, 32768, 256, kRegionRows, 1, 4, 128);  // warm-up: the region into the L2
  for (const unsigned step : {0u, 1u, 2u, 4u, 8u, 16u}) {
    std::printf("tma_stream_all_sms_l2_shared_offset_bytes_per_cycle_x100,%u,%lld\n", step,
                stream_grid(m, sms, 32768, 256, kRegionRows, 1, 4, 512, step));
    std::fflush(stdout);
  }
  CHECK(cudaFree(big));
}

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%d,l2_bytes,%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  std::printf("scenario,param,cycles\n");
  std::fflush(stdout);
  if (argc > 1 && std::string(argv[1]) == "--stream-depths") {
    stream_depths(sms);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--shared-offsets") {
    shared_offsets(sms);
    return 0;
  }

  // ---- first and second TMA load of a launch ----
  {
    void* buf;
    const unsigned rows_total = 64 * 1024;  // 8 MiB: L2-resident
    CHECK(cudaMalloc(&buf, 128ull * rows_total));
    CHECK(cudaMemset(buf, 1, 128ull * rows_total));
    const CUtensorMap m = make_map(buf, rows_total, 128);  // 16 KiB boxes
    const unsigned smem = 16384 + 2048;
    long long r[2];
    launch1(k_tma_first_load, smem, r, m, 16384u, 1024);  // warm-up
    std::vector<long long> first, second;
    for (int i = 0; i < 20; ++i) {
      launch1(k_tma_first_load, smem, r, m, 16384u, 1024);
      first.push_back(r[0]);
      second.push_back(r[1]);
    }
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    std::printf("tma_first_load_latency,16384,%lld\n", first[10]);
    std::printf("tma_second_load_latency,16384,%lld\n", second[10]);
    CHECK(cudaFree(buf));
  }

  // ---- TMA store completion ----
  {
    void* dst;
    CHECK(cudaMalloc(&dst, 64 * 64 * 2));
    CHECK(cudaMemset(dst, 0, 64 * 64 * 2));
    const CUtensorMap m = make_map(dst, 64, 64, 64, 64);
    const unsigned smem = 8192 + 1024;
    long long r[2];
    launch1(k_tma_store_latency<false>, smem, r, m);
    std::printf("tma_store_latency,8192,%lld\n", r[0]);
    launch1(k_tma_store_latency<true>, smem, r, m);
    std::printf("tma_store_read_latency,8192,%lld\n", r[0]);
    CHECK(cudaFree(dst));
  }
  std::fflush(stdout);

  // ---- all-SM streams: distinct, shared and half-shared regions ----
  const unsigned big_rows = 16u * 1024 * 1024;  // 2 GiB
  void* big;
  CHECK(cudaMalloc(&big, 128ull * big_rows));
  CHECK(cudaMemset(big, 1, 128ull * big_rows));
  const CUtensorMap m = make_map(big, big_rows, 256);  // 32 KiB boxes
  stream_grid(m, sms, 32768, 256, 2048, sms, 4, 8);   // warm-up: the 33 MiB into the L2
  for (unsigned stages : {2u, 4u}) {
    std::printf("tma_stream_all_sms_l2_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                stream_grid(m, sms, 32768, 256, 2048, sms, stages, 512));
    std::printf("tma_stream_all_sms_l2_shared_bytes_per_cycle_x100,%u,%lld\n", stages * 32768,
                stream_grid(m, sms, 32768, 256, 2048, 1, stages, 512));
  }
  std::printf("tma_stream_all_sms_l2_shared_half_bytes_per_cycle_x100,%u,%lld\n", 4 * 32768,
              stream_grid(m, sms, 32768, 256, 2048, 2, 4, 512));
  std::fflush(stdout);

  // ---- the stream after a tensor burst vs after idling ----
  GemmBurst gemm;
  gemm.init(8192, static_cast<int>(sms));
  StreamLaunch warm, timed;
  const double bytes = static_cast<double>(sms) * 512 * 32768;
  for (int round = 0; round < 5; ++round) {
    for (int burst = 0; burst < 2; ++burst) {
      warm.init(static_cast<double>(sms) * 8 * 32768);
      timed.init(bytes);
      CHECK(cudaDeviceSynchronize());
      if (!burst) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      } else {
        gemm.enqueue(30);
      }
      warm.enqueue(m, sms, 32768, 256, 2048, sms, 4, 8);
      timed.enqueue(m, sms, 32768, 256, 2048, sms, 4, 512);
      double span, ghz;
      timed.read(span, ghz);
      const char* tag = burst ? "after_burst" : "idle";
      std::printf("tma_stream_all_sms_l2_%s_bytes_per_ns_x100,131072,%.0f\n", tag, bytes / span * 100);
      std::printf("tma_stream_all_sms_l2_%s_clock_mhz,131072,%.0f\n", tag, ghz * 1000);
      if (burst) {
        double mhz, gspan;
        gemm.last(mhz, gspan);
        std::printf("# after_burst round %d: last GEMM launch clock_mhz %.0f span_ns %.0f\n", round, mhz, gspan);
      }
      std::fflush(stdout);
    }
  }
  gemm.release();
  CHECK(cudaFree(warm.out));
  CHECK(cudaFree(timed.out));
  CHECK(cudaFree(big));
  return 0;
}
