// HBM latency under load: one probe SM times 16 KiB TMA boxes read from HBM while other SMs read
// their own HBM data at a controlled rate. It separates what h100_hbm_boxes.csv mixes: the load
// of the whole chip (bytes per cycle from HBM), the number of SMs making it, where those SMs are,
// and the probe SM's own boxes in flight. Prints CSV: scenario,param,value (comment lines start
// with '#').
//
// Data: one buffer of 128-byte rows (uint8, dims {128, rows}, box {128, 128} = 16 KiB,
// SWIZZLE_128B, L2 promotion 256B, as h100_hbm_boxes.cu's W = 128 map): region c (c = 1..131)
// = rows (c - 1) * 131072 .. + 131071 (16 MiB, 1024 boxes) for background CTA c; the probe's
// region = the 257 boxes after the last one. Every launch is preceded by an L2 flush
// (cudaMemset of a 256 MiB scratch buffer), so every box comes from HBM.
//
// The program (k_hbm_loaded): one launch of 1 + B CTAs (B = 0..131) of 32 threads, each asking
// for 133120 B of dynamic SMEM (one CTA per SM; the host checks the %smid values differ), thread
// 0 of each does everything.
// - Background CTA c >= 1: with a smid filter (below) it returns at once unless its %smid passes.
//   Otherwise: init S mbarriers (count 1); then loads k = 0, 1, .. of its region's boxes in
//   order (box k to stage k % S, issued once the stage's previous box has arrived and at least
//   D cycles (clock64) after the previous issue); after each wait it counts the box if the
//   last flag value it read was 1; after each issue it reads the flag (ld.volatile.global, so
//   the read overlaps the boxes in flight); it stops issuing when that value is 2 or its region
//   is used up (counted as "exhausted"), then waits for its boxes in flight.
// - The probe CTA 0: init N mbarriers; one untimed priming load (box 0 of its region: the
//   launch's descriptor fetch); spin 60000 cycles (the background reaches a steady state); set
//   the flag to 1 (st.volatile.global + __threadfence) and read %globaltimer and clock64; then
//   64 loads of boxes 1..64 through N stages (box i to stage i % N, issued once the stage's
//   previous box has arrived), each load's issue-to-arrival time measured when N = 1; clock64
//   and %globaltimer; set the flag to 2.
// Values of one launch: the probe's latency = the upper median of its 64 load times (N = 1) or
//   its round trip per box = N x (probe cycles / 64) (N > 1, Little's law); the background's
//   bytes per probe cycle = (boxes counted) x 16384 / (probe window ns x probe MHz / 1000).
//
// Rows (3 launches each; value = the median launch; a comment line gives the probe's clock in
// MHz, the three launch values, the background's bytes per cycle, the number of active
// background CTAs and whether any ran out of data):
// - hbm_probe_round_alone, param N = 1, 2, 3, 4, 6, 8: no background (B = 0).
// - hbm_probe_latency_s<S>_d<D>, param B: N = 1, B background CTAs with S stages and issue
//   spacing D: S = 1, 2, 4 with D = 0 for B = 15, 31, 65, 131; S = 4 with D = 1000, 2000, 4000,
//   8000, 16000 for B = 131 (131 SMs each with about one box in flight at a chosen rate).
//   hbm_probe_bg_bytes_per_cycle_x100_s<S>_d<D>, param B: the background's rate in those runs.
// - hbm_probe_round_bg131_s4_d4000, param N = 2, 4: the probe's own boxes in flight under load.
// - hbm_probe_latency_smid_{low,spread}_s<S>, param S = 2, 4: B = 131 launched, active only the
//   CTAs with %smid 1..16 ("low": SMs next to each other) or %smid % 8 == 1 ("spread", 16 or 17
//   SMs across the chip), N = 1; hbm_probe_bg_bytes_per_cycle_x100_smid_{low,spread}: their rate.
// - l2_probe_latency_s<S>_d0, param B (first; argument `hot` stops after them): the probe reloads
//   its primed box (an L2 hit) under the background of S stages; l2_probe_bg_..._s<S>_d0 its rate.
// - Shared background (argument `shared` stops after these): every background CTA reads region
//   1's boxes in the same order, so for each line one request misses and B - 1 wait on it.
//   hbm_probe_latency_shared_s<S> / l2_probe_latency_shared_s<S>, param B: the probe's cold box
//   (from HBM) or hot box meanwhile; shared_bg_round_s<S>, param B: an active background CTA's
//   cycles per box x S (its round trip).
// - pair_hot_latency_s<S>[_shared_s2], param B = 0, 65, 131 (N = 2): the probe issues a cold box
//   (stage 0) and right behind it its primed hot box (stage 1), timing each: the row is the hot
//   box's median, the _cold row the cold box's; beside B SMs streaming their own data (or, for
//   _shared, waiting on shared cold lines).
//
// Shared helpers (CHECK, make_map, sm_id, smem_addr, mbar_*, fence_mbar_init, globaltimer,
// tma_load_2d) come from calibration_ptx.cuh.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_hbm_loaded.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kBoxRows = 128, kBgBoxes = 1024, kProbeLoads = 64;
constexpr unsigned kStageBytes = 6 * 32768;  // 8 stages of 16 KiB or 6 of 32 KiB
constexpr unsigned kSmem = kStageBytes + 2048;  // > half an SM's SMEM: one CTA per SM
constexpr unsigned kSpinCycles = 60000;
constexpr unsigned long long kRegionRows = 1ull * kBgBoxes * kBoxRows;
constexpr size_t kFlushBytes = 256ull << 20;

enum Filter : unsigned { kAll = 0, kSmidLow = 1, kSmidSpread = 2 };

// out: [0, 64) the probe's load times; then per CTA kOutPerCta values from kOutCtaBase.
constexpr unsigned kOutCtaBase = 64, kOutPerCta = 8;
// per CTA: 0 start ns, 1 end ns, 2 start clock, 3 end clock, 4 smid, 5 counted boxes,
// 6 active (1) or filtered out (0), 7 exhausted (1)

__global__ void k_hbm_loaded(const __grid_constant__ CUtensorMap map, unsigned probe_stages, unsigned bg_stages,
                             unsigned bg_spacing, unsigned filter, unsigned long long probe_row, unsigned probe_box_rows,
                             const __grid_constant__ CUtensorMap probe_map, unsigned probe_hot, unsigned bg_shared,
                             unsigned* flag, long long* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned smid = sm_id();
  long long* o = out + kOutCtaBase + kOutPerCta * blockIdx.x;
  o[4] = smid;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bars = base + kStageBytes;
  volatile unsigned* vflag = flag;
  if (blockIdx.x != 0) {  // background
    const bool active = filter == kAll || (filter == kSmidLow && smid >= 1 && smid <= 16) ||
                        (filter == kSmidSpread && smid % 8 == 1);
    o[6] = active;
    if (!active) return;
    const unsigned S = bg_stages;
    for (unsigned s = 0; s < S; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
    const unsigned long long first_row = bg_shared ? 0 : (blockIdx.x - 1) * kRegionRows;  // shared: region 1
    o[0] = static_cast<long long>(globaltimer());
    o[2] = clock64();
    unsigned state = 0, counted = 0, k = 0;
    long long last_issue = clock64() - bg_spacing;
    for (;; ++k) {
      const unsigned s = k % S;
      if (k >= S) {
        mbar_wait(bars + 8 * s, ((k - S) / S) & 1u);
        if (state == 1) ++counted;
      }
      if (state == 2) break;
      if (k >= kBgBoxes) {
        o[7] = 1;
        break;
      }
      while (clock64() - last_issue < static_cast<long long>(bg_spacing)) {
      }
      last_issue = clock64();
      mbar_arrive_expect_tx(bars + 8 * s, kBox);
      tma_load_2d(base + s * kBox, &map, 0, static_cast<int>(first_row + 1ull * k * kBoxRows), bars + 8 * s);
      state = *vflag;
    }
    // drain: the boxes still in flight (issued k - S + 1 .. k - 1, those not yet waited for)
    for (unsigned j = (k >= S ? k - S + 1 : 0); j < k; ++j) mbar_wait(bars + 8 * (j % S), (j / S) & 1u);
    o[1] = static_cast<long long>(globaltimer());
    o[3] = clock64();
    o[5] = counted;
    return;
  }
  // probe
  const unsigned N = probe_stages, probe_box = probe_box_rows * 128;
  for (unsigned s = 0; s < N; ++s) mbar_init(bars + 8 * s, 1);
  fence_mbar_init();
  mbar_arrive_expect_tx(bars, probe_box);  // priming load (descriptor fetch), untimed; stage 0's phase 0
  tma_load_2d(base, &probe_map, 0, static_cast<int>(probe_row), bars);
  mbar_wait(bars, 0);
  const long long spin0 = clock64();
  while (clock64() - spin0 < kSpinCycles) {
  }
  *vflag = 1;
  __threadfence();
  o[0] = static_cast<long long>(globaltimer());
  o[2] = clock64();
  if (probe_hot == 2) {  // pairs: a cold box (stage 0) then the primed, hot one (stage 1)
    for (unsigned j = 0; j < kProbeLoads / 2; ++j) {
      const long long t_cold = clock64();
      mbar_arrive_expect_tx(bars, probe_box);
      tma_load_2d(base, &probe_map, 0, static_cast<int>(probe_row + (j + 1ull) * probe_box_rows), bars);
      const long long t_hot = clock64();
      mbar_arrive_expect_tx(bars + 8, probe_box);
      tma_load_2d(base + probe_box, &probe_map, 0, static_cast<int>(probe_row), bars + 8);
      mbar_wait(bars + 8, j & 1u);
      out[2 * j + 1] = clock64() - t_hot;
      mbar_wait(bars, (j + 1) & 1u);
      out[2 * j] = clock64() - t_cold;
    }
    o[3] = clock64();
    o[1] = static_cast<long long>(globaltimer());
    __threadfence();
    *vflag = 2;
    return;
  }
  // load i (i = 0..63) is box i + 1 into stage i % N; stage 0 already completed one phase
  auto phase_of = [&](unsigned i) { return ((i / N) + (i % N == 0 ? 1u : 0u)) & 1u; };
  for (unsigned i = 0; i < kProbeLoads + N; ++i) {
    if (i >= N) {
      const unsigned j = i - N;
      mbar_wait(bars + 8 * (j % N), phase_of(j));
      if (N == 1) out[j] = clock64() - out[j];
    }
    if (i >= kProbeLoads) continue;
    const unsigned s = i % N;
    if (N == 1) out[i] = clock64();
    mbar_arrive_expect_tx(bars + 8 * s, probe_box);
    const unsigned long long box = probe_hot ? 0 : i + 1;  // hot: the primed box again (an L2 hit)
    tma_load_2d(base + s * probe_box, &probe_map, 0, static_cast<int>(probe_row + box * probe_box_rows), bars + 8 * s);
  }
  o[3] = clock64();
  o[1] = static_cast<long long>(globaltimer());
  __threadfence();
  *vflag = 2;
}

struct Launch {
  double probe = 0;  // latency (N = 1) or round trip per box (N > 1), probe cycles
  double bg_bpc = 0;  // background bytes per probe cycle during the probe window
  double probe2 = 0;  // pairs: the cold box's latency
  double bg_round = 0;  // an active background CTA's cycles per box x its stages (its round trip)
  double mhz = 0;
  unsigned active = 0;
  bool exhausted = false;
  std::vector<long long> smids;  // active background CTAs' SMs
  long long probe_smid = -1;
};

struct Run {
  unsigned probe_stages, bg_ctas, bg_stages, bg_spacing, filter;
  unsigned long long probe_row = 131ull * kRegionRows;  // after the background regions
  bool probe32 = false;                                  // 32 KiB probe boxes (256 rows)
  bool probe_hot = false;                                // the probe reloads its primed box: L2 hits
  bool probe_pair = false;  // the probe loads a cold box then the primed one, timing each
  bool bg_shared = false;  // every background CTA reads region 1's boxes, in the same order
};

// What every launch uses: the two maps of the buffer (16 and 32 KiB boxes), the flag, the output
// and the L2 flush buffer.
struct Device {
  CUtensorMap box16, box32;
  unsigned* flag;
  long long* out;
  void* flush;
};

Launch launch(const Device& d, const Run& r) {
  const unsigned grid = 1 + r.bg_ctas;
  CHECK(cudaMemset(d.flush, 1, kFlushBytes));
  CHECK(cudaMemset(d.flag, 0, sizeof(unsigned)));
  CHECK(cudaMemset(d.out, 0, sizeof(long long) * (kOutCtaBase + kOutPerCta * grid)));
  CHECK(cudaDeviceSynchronize());
  k_hbm_loaded<<<grid, 32, kSmem>>>(d.box16, r.probe_stages, r.bg_stages, r.bg_spacing, r.filter, r.probe_row,
                                    r.probe32 ? 256u : 128u, r.probe32 ? d.box32 : d.box16, r.probe_pair ? 2u : r.probe_hot ? 1u : 0u,
                                    r.bg_shared ? 1u : 0u, d.flag, d.out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<long long> h(kOutCtaBase + kOutPerCta * grid);
  CHECK(cudaMemcpy(h.data(), d.out, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<long long> all_smids;
  Launch l;
  const long long* p = &h[kOutCtaBase];
  const double probe_ns = static_cast<double>(p[1] - p[0]), probe_cycles = static_cast<double>(p[3] - p[2]);
  l.mhz = probe_cycles / (probe_ns / 1000.0);
  l.probe_smid = p[4];
  all_smids.push_back(p[4]);
  if (r.probe_pair) {  // probe = the hot box's median, probe2 = the cold box's
    std::vector<long long> cold, hot;
    for (unsigned j = 0; j < kProbeLoads / 2; ++j) {
      cold.push_back(h[2 * j]);
      hot.push_back(h[2 * j + 1]);
    }
    std::sort(cold.begin(), cold.end());
    std::sort(hot.begin(), hot.end());
    l.probe = static_cast<double>(hot[hot.size() / 2]);
    l.probe2 = static_cast<double>(cold[cold.size() / 2]);
  } else if (r.probe_stages == 1) {
    std::vector<long long> t(h.begin(), h.begin() + kProbeLoads);
    std::sort(t.begin(), t.end());
    l.probe = static_cast<double>(t[kProbeLoads / 2]);
  } else {
    l.probe = r.probe_stages * probe_cycles / kProbeLoads;
  }
  double boxes = 0;
  for (unsigned c = 1; c < grid; ++c) {
    const long long* o = &h[kOutCtaBase + kOutPerCta * c];
    all_smids.push_back(o[4]);
    if (!o[6]) continue;
    ++l.active;
    l.smids.push_back(o[4]);
    boxes += static_cast<double>(o[5]);
    l.exhausted = l.exhausted || o[7];
  }
  l.bg_bpc = boxes * kBox / probe_cycles;
  if (boxes > 0) l.bg_round = r.bg_stages * probe_cycles * l.active / boxes;
  std::sort(all_smids.begin(), all_smids.end());
  if (std::adjacent_find(all_smids.begin(), all_smids.end()) != all_smids.end()) {
    std::fprintf(stderr, "two CTAs on one SM\n");
    std::exit(1);
  }
  return l;
}

// Three launches; prints the row(s) and the comment; returns the median launch.
Launch row(const Device& d, const Run& r, const std::string& name,
           unsigned param, const std::string& bg_name = "", const std::string& round_name = "") {
  std::vector<Launch> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(launch(d, r));
  std::vector<unsigned> order = {0, 1, 2};
  std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return runs[a].probe < runs[b].probe; });
  const Launch& m = runs[order[1]];
  std::printf("%s,%u,%.0f\n", name.c_str(), param, m.probe);
  if (!bg_name.empty()) {
    std::vector<double> bpc = {runs[0].bg_bpc, runs[1].bg_bpc, runs[2].bg_bpc};
    std::sort(bpc.begin(), bpc.end());
    std::printf("%s,%u,%.0f\n", bg_name.c_str(), param, 100.0 * bpc[1]);
  }
  if (r.probe_pair) std::printf("%s_cold,%u,%.0f\n", name.c_str(), param, m.probe2);
  if (!round_name.empty()) {
    std::vector<double> rt = {runs[0].bg_round, runs[1].bg_round, runs[2].bg_round};
    std::sort(rt.begin(), rt.end());
    std::printf("%s,%u,%.0f\n", round_name.c_str(), param, rt[1]);
  }
  std::printf("# %s %u: clock_mhz %.0f, launch values %.0f %.0f %.0f, background B/clk %.1f %.1f %.1f, active %u%s, probe smid %lld",
              name.c_str(), param, m.mhz, runs[0].probe, runs[1].probe, runs[2].probe, runs[0].bg_bpc, runs[1].bg_bpc,
              runs[2].bg_bpc, m.active, (runs[0].exhausted || runs[1].exhausted || runs[2].exhausted) ? ", EXHAUSTED" : "",
              m.probe_smid);
  if (m.active > 0 && m.active <= 32) {
    std::vector<long long> s = m.smids;
    std::sort(s.begin(), s.end());
    std::printf(", background smids");
    for (long long v : s) std::printf(" %lld", v);
  }
  std::printf("\n");
  std::fflush(stdout);
  return m;
}

int main(int argc, char** argv) {
  const std::string mode = argc == 2 ? argv[1] : "";
  CHECK(cudaFuncSetAttribute(k_hbm_loaded, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const auto rows = static_cast<unsigned>(131 * kRegionRows + 257 * 256);  // 17.2 M rows of 128 B
  void* data;
  CHECK(cudaMalloc(&data, 128ull * rows));
  CHECK(cudaMemset(data, 0, 128ull * rows));
  Device d;
  d.box16 = make_map(data, rows, kBoxRows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  d.box32 = make_map(data, rows, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  CHECK(cudaMalloc(&d.flush, kFlushBytes));
  CHECK(cudaMalloc(&d.out, sizeof(long long) * (kOutCtaBase + kOutPerCta * 132)));
  CHECK(cudaMalloc(&d.flag, sizeof(unsigned)));
  std::printf("scenario,param,value\n");
  auto name = [](const char* what, unsigned s, unsigned gap) {
    return std::string(what) + "_s" + std::to_string(s) + "_d" + std::to_string(gap);
  };
  launch(d, Run{1, 131, 4, 0, kAll});  // warm-up (clocks)
  // The hot probe: the L2-hit latency of a 16 KiB box under the background's HBM load.
  for (unsigned s : {1u, 2u, 4u})
    for (unsigned b : {0u, 15u, 31u, 65u, 131u}) {
      Run r{1, b, s, 0, kAll};
      r.probe_hot = true;
      row(d, r, name("l2_probe_latency", s, 0), b, name("l2_probe_bg_bytes_per_cycle_x100", s, 0));
    }
  if (mode == "hot") return 0;
  // The shared background: B CTAs read the same cold boxes in the same order, so for each line
  // one request misses and the other B - 1 wait on it; the HBM moves one CTA's worth of bytes.
  // The probe (a cold box from HBM, or a hot one) is timed while those requests wait.
  for (bool hot : {false, true})
    for (unsigned s : {1u, 2u, 4u})
      for (unsigned b : {1u, 15u, 31u, 65u, 131u}) {
        Run r{1, b, s, 0, kAll};
        r.bg_shared = true;
        r.probe_hot = hot;
        const std::string probe = hot ? "l2_probe_latency_shared_s" : "hbm_probe_latency_shared_s";
        row(d, r, probe + std::to_string(s), b, "", hot ? "" : "shared_bg_round_s" + std::to_string(s));
      }
  // Pairs: the probe issues a cold box, then a hot one right behind it; does the hit wait for
  // the miss? Alone, beside 131 SMs streaming their own data (1 or 2 boxes each), and beside 131
  // SMs waiting on shared cold lines.
  for (unsigned s : {1u, 2u})
    for (unsigned b : {0u, 65u, 131u}) {
      Run r{2, b, s, 0, kAll};  // two probe stages: the cold box's and the hot box's
      r.probe_pair = true;
      row(d, r, "pair_hot_latency_s" + std::to_string(s), b);
    }
  {
    Run r{2, 131, 2, 0, kAll};
    r.probe_pair = r.bg_shared = true;
    row(d, r, "pair_hot_latency_shared_s2", 131);
  }
  if (mode == "shared") return 0;
  for (unsigned n : {1u, 2u, 3u, 4u, 6u, 8u}) row(d, Run{n, 0, 1, 0, kAll}, "hbm_probe_round_alone", n);
  for (unsigned n : {1u, 2u, 4u, 6u}) {
    Run r{n, 0, 1, 0, kAll};
    r.probe32 = true;
    row(d, r, "hbm_probe_round_alone_box32k", n);
  }
  for (unsigned mib : {0u, 512u, 1024u, 1536u})
    for (unsigned n : {1u, 4u, 8u}) {
      Run r{n, 0, 1, 0, kAll};
      r.probe_row = mib * 8192ull;  // 8192 rows of 128 B per MiB
      row(d, r, "hbm_probe_round_alone_at" + std::to_string(mib) + "mib", n);
    }
  for (unsigned s : {1u, 2u, 4u})
    for (unsigned b : {15u, 31u, 65u, 131u})
      row(d, Run{1, b, s, 0, kAll}, name("hbm_probe_latency", s, 0), b,
          name("hbm_probe_bg_bytes_per_cycle_x100", s, 0));
  for (unsigned gap : {1000u, 2000u, 4000u, 8000u, 16000u})
    row(d, Run{1, 131, 4, gap, kAll}, name("hbm_probe_latency", 4, gap), 131,
        name("hbm_probe_bg_bytes_per_cycle_x100", 4, gap));
  for (unsigned n : {2u, 4u}) row(d, Run{n, 131, 4, 4000, kAll}, "hbm_probe_round_bg131_s4_d4000", n);
  for (unsigned f : {kSmidLow, kSmidSpread})
    for (unsigned s : {2u, 4u}) {
      const std::string which = f == kSmidLow ? "low" : "spread";
      row(d, Run{1, 131, s, 0, f}, "hbm_probe_latency_smid_" + which + "_s" + std::to_string(s), s,
          "hbm_probe_bg_bytes_per_cycle_x100_smid_" + which);
    }
  return 0;
}
