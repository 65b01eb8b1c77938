// TMA load latency under full-chip load: one SM times single TMA loads while every other SM runs
// the all-SM L2 stream of h100_units2.cu. Prints CSV: scenario,param,cycles (comment lines start
// with '#'). Each row below is a program the simulator reproduces.
//
// Common pieces (as in h100_units2.cu): tensor maps of 128-byte rows (uint8, dims {128, rows},
// box {128, box_rows}, SWIZZLE_128B, L2 promotion 128B), loads by
// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes into 1024-byte
// aligned SMEM, completion by mbarrier.try_wait.parity loops. Kernels of 32 threads, plain
// launches (no cluster attribute), thread 0 does everything; the others return at once.
//
// Data: one buffer of 132 * 2048 + 8192 rows of 128 B (34 MiB, cudaMemset), L2-resident: region c
// (c = 0..131) = rows c*2048 .. c*2048+2047 (256 KiB), the probe region = rows 270336 ..
// 270336+8191 (1 MiB). Two maps of it: the stream map (box 256 rows = 32 KiB) and the probe map
// (box 128 rows = 16 KiB).
//
// The program (k_loaded): one launch of 132 CTAs (one per SM: every launch asks for 133120 B of
// dynamic SMEM, more than half an SM's, so no SM can hold two; the host checks that the 132
// %smid values differ), 32 threads each.
// - Streaming CTAs 1..131 (bytes in flight per CTA = param): with param 0 they return at once.
//   Otherwise the all-SM L2 stream program of h100_units2.cu (its k_tma_stream_grid loop, here
//   the shared tma_stream_loop of calibration_ptx.cuh): init param/32768 mbarriers (count 1),
//   read %globaltimer, then 2048 loads of 32 KiB boxes through param/32768 stages (the box of
//   load i goes to stage i % stages, reused once its previous box has arrived) from a 256 KiB
//   region of 2048 rows, cycling through its 8 boxes (load i reads rows
//   first_row + (i*256) % 2048), then %globaltimer. Distinct: first_row = c*2048 (CTA c its own
//   region c, 32.75 MiB over the 131 CTAs); shared: first_row = 0 for every CTA (all 131 cycle
//   through region 0, each starting at its first box).
// - The probe CTA 0: init one mbarrier (count 1) + fence.mbarrier_init.release.cluster; one
//   untimed priming load of the probe stage (below, box 0; it takes the launch's tensor-map
//   descriptor fetches out of the timed loads); spin on clock64 until 20000 cycles have passed
//   (the stream reaches steady state); read %globaltimer and clock64; then 64 dependent loads,
//   load i (i = 0..63) of box j = i % 8: { t0 = clock64; mbarrier.arrive.expect_tx (stage
//   bytes); the stage's TMA load(s); try_wait.parity until the phase completes; t1 = clock64;
//   st.global t1 - t0 }; then %globaltimer and clock64 again (the probe window and its clock).
//   16 KiB stage (rows tma_latency_under_load_{distinct,shared}): one probe-map box of 128 rows
//   at probe rows j*128 (expect_tx 16384). 48 KiB stage (rows ..._48k): the GEMM's stage, a
//   16 KiB "A" box (probe map, probe rows j*128) into SMEM [0, 16 KiB) and a 32 KiB "B" box
//   (stream map, 256 rows at probe rows 1024 + j*256) into [16 KiB, 48 KiB), both loads issued
//   back to back completing on the one mbarrier (expect_tx 49152).
// Value of one launch: the upper median (sorted[32]) of its 64 latencies, in SM cycles.
//
// Rows (param = bytes in flight per streaming CTA):
// - tma_latency_under_load_distinct / _shared, params 0, 32768, 65536, 131072 (1, 2, 4 stages):
//   the 16 KiB probe. Param 0 is the same program in both (no streaming CTAs).
// - tma_latency_under_load_distinct_48k / _shared_48k, params 0 and 131072: the 48 KiB probe.
// Each row: 5 launches (each synchronized), the row's value is the median (sorted[2]) of the 5
// launch values. Before all rows, two warm-up launches bring every region and the probe boxes
// into the L2: the distinct and the shared program at 131072, each with the 48 KiB probe.
// A comment line follows each row: the SM clock of the probe window (CTA 0's clock64 delta / its
// %globaltimer delta, MHz, median of the 5 launches), the 10th/50th/90th percentile and maximum of
// all 320 latencies, the stream's aggregate bytes per ns during the launch (131 * 2048 * 32768
// bytes / (latest streaming CTA end - earliest start)), and by how many ns the first streaming
// CTA to finish outlasted the probe window (minimum over the 5 launches; must be > 0).
//
// Shared helpers (CHECK, the uint8 make_map, sm_id, smem_addr, mbar_*, fence_mbar_init, globaltimer,
// tma_load_2d, tma_stream_loop) come from calibration_ptx.cuh.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_loaded.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <string>
#include <vector>

constexpr unsigned kStreamBox = 32768, kStreamBoxRows = 256, kRegionRows = 2048, kStreamLoads = 2048;
constexpr unsigned kProbeLoads = 64, kProbeBoxes = 8, kSpinCycles = 20000;
constexpr unsigned kSmem = 4 * kStreamBox + 2048;  // > half of an SM's 228 KiB: one CTA per SM
// out layout (long long): [0, 64) probe latencies; 64..67 probe window ns0, ns1, clk0, clk1;
// then per CTA c at 128 + 4c: stream start ns, end ns, %smid.
constexpr unsigned kOutPerCta = 4, kOutCtaBase = 128;

__global__ void k_loaded(const __grid_constant__ CUtensorMap stream_map, const __grid_constant__ CUtensorMap probe_map,
                         unsigned stages, unsigned shared_region, unsigned probe_row, unsigned probe48,
                         long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  long long* cta_out = out + kOutCtaBase + kOutPerCta * blockIdx.x;
  cta_out[2] = smid;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u;
  if (blockIdx.x != 0) {  // streaming CTA
    if (stages == 0) return;
    const unsigned bars = base + stages * kStreamBox;
    for (unsigned s = 0; s < stages; ++s) mbar_init(bars + 8 * s, 1);
    const unsigned long long ns0 = globaltimer();
    const unsigned first_row = shared_region ? 0u : blockIdx.x * kRegionRows;
    tma_stream_loop(&stream_map, base, bars, kStreamBox, kStreamBoxRows, first_row, kRegionRows, stages,
                    kStreamLoads);
    const unsigned long long ns1 = globaltimer();
    cta_out[0] = static_cast<long long>(ns0);
    cta_out[1] = static_cast<long long>(ns1);
    return;
  }
  // probe CTA
  const unsigned bar = base + 49152;
  const unsigned bytes = probe48 ? 49152u : 16384u;
  mbar_init(bar, 1);
  fence_mbar_init();
  auto load = [&](unsigned j) {
    mbar_arrive_expect_tx(bar, bytes);
    tma_load_2d(base, &probe_map, 0, static_cast<int>(probe_row + j * 128), bar);
    if (probe48) tma_load_2d(base + 16384, &stream_map, 0, static_cast<int>(probe_row + 1024 + j * 256), bar);
  };
  load(0);  // priming (descriptor fetch), untimed
  mbar_wait(bar, 0);
  const long long spin0 = clock64();
  while (clock64() - spin0 < kSpinCycles) {
  }
  const unsigned long long ns0 = globaltimer();
  const long long c0 = clock64();
  for (unsigned i = 0; i < kProbeLoads; ++i) {
    const long long t0 = clock64();
    load(i % kProbeBoxes);
    mbar_wait(bar, (i + 1) & 1);
    const long long t1 = clock64();
    out[i] = t1 - t0;
  }
  const unsigned long long ns1 = globaltimer();
  const long long c1 = clock64();
  out[64] = static_cast<long long>(ns0);
  out[65] = static_cast<long long>(ns1);
  out[66] = c0;
  out[67] = c1;
}

struct Result {
  long long value;     // upper median of the 64 latencies
  double mhz;          // probe window clock
  double stream_bpns;  // stream aggregate bytes per ns (0 without streaming CTAs)
  long long margin_ns; // first streaming CTA end - probe window end
  std::vector<long long> lat;
};

Result launch(const CUtensorMap& sm, const CUtensorMap& pm, unsigned ctas, unsigned stages, bool shared, bool probe48,
              long long* dout) {
  const unsigned probe_row = ctas * kRegionRows;
  const size_t n = kOutCtaBase + kOutPerCta * ctas;
  CHECK(cudaMemset(dout, 0, n * sizeof(long long)));
  k_loaded<<<ctas, 32, kSmem>>>(sm, pm, stages, shared ? 1u : 0u, probe_row, probe48 ? 1u : 0u, dout);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<long long> h(n);
  CHECK(cudaMemcpy(h.data(), dout, n * sizeof(long long), cudaMemcpyDeviceToHost));
  Result r;
  r.lat.assign(h.begin(), h.begin() + kProbeLoads);
  std::vector<long long> s = r.lat;
  std::sort(s.begin(), s.end());
  r.value = s[kProbeLoads / 2];
  r.mhz = static_cast<double>(h[67] - h[66]) / (static_cast<double>(h[65] - h[64]) / 1000.0);
  std::vector<long long> smids;
  long long start = 0x7fffffffffffffffll, end = 0, first_end = 0x7fffffffffffffffll;
  for (unsigned c = 0; c < ctas; ++c) {
    const long long* v = &h[kOutCtaBase + kOutPerCta * c];
    smids.push_back(v[2]);
    if (c == 0 || stages == 0) continue;
    start = std::min(start, v[0]);
    end = std::max(end, v[1]);
    first_end = std::min(first_end, v[1]);
  }
  std::sort(smids.begin(), smids.end());
  if (std::adjacent_find(smids.begin(), smids.end()) != smids.end()) {
    std::fprintf(stderr, "two CTAs on one SM\n");
    std::exit(1);
  }
  r.stream_bpns = stages ? static_cast<double>(ctas - 1) * kStreamLoads * kStreamBox / static_cast<double>(end - start)
                         : 0.0;
  r.margin_ns = stages ? first_end - h[65] : 0;
  return r;
}

void row(const char* name, unsigned param, const CUtensorMap& sm, const CUtensorMap& pm, unsigned ctas, bool shared,
         bool probe48, long long* dout) {
  std::vector<long long> vals, all;
  std::vector<double> mhz;
  double bpns = 0;
  long long margin = 0x7fffffffffffffffll;
  for (int l = 0; l < 5; ++l) {
    const Result r = launch(sm, pm, ctas, param / kStreamBox, shared, probe48, dout);
    vals.push_back(r.value);
    mhz.push_back(r.mhz);
    bpns += r.stream_bpns / 5;
    margin = std::min(margin, r.margin_ns);
    all.insert(all.end(), r.lat.begin(), r.lat.end());
  }
  std::sort(vals.begin(), vals.end());
  std::sort(mhz.begin(), mhz.end());
  std::sort(all.begin(), all.end());
  const size_t n = all.size();
  std::printf("%s,%u,%lld\n", name, param, vals[2]);
  std::printf("# %s,%u: clock_mhz %.0f, latency p10 %lld p50 %lld p90 %lld max %lld, launch values", name, param,
              mhz[2], all[n / 10], all[n / 2], all[n * 9 / 10], all[n - 1]);
  for (long long v : vals) std::printf(" %lld", v);
  if (param)
    std::printf(", stream_bytes_per_ns %.0f, stream outlasted probe by >= %lld ns", bpns, margin);
  std::printf("\n");
  if (param && margin <= 0) std::printf("# WARNING: the stream ended before the probe window did\n");
  std::fflush(stdout);
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned ctas = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%d,l2_bytes,%d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  std::printf("scenario,param,cycles\n");
  std::fflush(stdout);

  const unsigned rows = ctas * kRegionRows + 8192;
  void* buf;
  CHECK(cudaMalloc(&buf, 128ull * rows));
  CHECK(cudaMemset(buf, 1, 128ull * rows));
  const CUtensorMap sm = make_map(buf, rows, kStreamBoxRows);  // 32 KiB boxes
  const CUtensorMap pm = make_map(buf, rows, 128);             // 16 KiB boxes
  long long* dout;
  CHECK(cudaMalloc(&dout, (kOutCtaBase + kOutPerCta * ctas) * sizeof(long long)));
  CHECK(cudaFuncSetAttribute(k_loaded, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));

  // warm-up: every region and the probe boxes into the L2 (full-length launches: the stream
  // touches its 8 boxes within the first 8 loads)
  launch(sm, pm, ctas, 4, false, true, dout);
  launch(sm, pm, ctas, 4, true, true, dout);

  for (int shared = 0; shared < 2; ++shared) {
    const std::string name = std::string("tma_latency_under_load_") + (shared ? "shared" : "distinct");
    for (unsigned param : {0u, 32768u, 65536u, 131072u}) row(name.c_str(), param, sm, pm, ctas, shared, false, dout);
  }
  for (int shared = 0; shared < 2; ++shared) {
    const std::string name = std::string("tma_latency_under_load_") + (shared ? "shared" : "distinct") + "_48k";
    for (unsigned param : {0u, 131072u}) row(name.c_str(), param, sm, pm, ctas, shared, true, dout);
  }
  CHECK(cudaFree(dout));
  CHECK(cudaFree(buf));
  return 0;
}
