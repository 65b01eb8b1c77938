// How long after one SM's read of an L2 line does a second SM's read of it still join the first
// (reach the L2 slices once)? h100_l2_merge_ncu.csv shows reads are joined before the slices, only
// within a GPC; this measures the window, for lines the L2 holds (hits) and lines it must fetch
// from HBM (misses).
//
// The SMs work in pairs that read the same boxes: PAIRING tpc pairs SM 2t with 2t + 1 (one TPC);
// PAIRING gpc pairs SM s with s ^ 16 for s < 64 (the same GPC on the H100s we measured,
// h100_gpc_map.csv: GPC g holds SMs 2g, 2g + 1, 2g + 16, 2g + 17, ...; a different TPC), the SMs
// from 64 on idle; PAIRING cross pairs SM s with s ^ 2 for s < 64 (GPC g with g ^ 1 by that map:
// the partner in another GPC, whose reads are not joined before the slices), the SMs from 64 on idle. Each pair has its own data, so no read is shared beyond the pair. Both SMs of a
// pair issue load j of 16 KiB boxes at the same clock64 offset j x PACE from one common
// %globaltimer tick, the partner (the higher SM) DELAY cycles later; 4 boxes in flight. The pace
// keeps the whole chip at a fraction of the L2's and HBM's rates, so loads issue on schedule.
// MODE hit: each pair cycles over 8 boxes (128 KiB) that a warm-up launch left in the L2.
// MODE miss: each pair reads 64 boxes never read before (the L2 flushed by a 256 MiB memset).
//
// Usage: h100_join_window arrivals: the arrivals variant (k_pair_arrivals, below), gpc pairing,
// with no background load, hot rings or streams from HBM, printing its rows (run_join_window.sh). h100_join_window
// arrivals_cold: the same with boxes never read before, for gpc and cross pairs (CSV=<tag>_join_
// window_arrivals_cold.csv bash run_program.sh h100_join_window arrivals_cold); arrivals_cold_hbm: the
// cold pairs while the other SMs stream from HBM (background 2), partners up to 6144 cycles late,
// as the GEMM's readers of one A tile in different GPCs find each other's fills under HBM load. Or
// h100_join_window MODE PAIRING DELAY: one launch (after a warm-up launch in hit mode), for
// ncu (run_join_window.sh counts the sectors that reach the slices). Prints one row
// mode,pairing,delay_cycles,sms,loads,box_bytes (sms: the SMs that read; the sectors they ask for
// are sms x loads x box_bytes / 32).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_join_window.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr unsigned kBoxBytes = 16384, kBoxRows = 128, kStages = 4, kLoads = 64, kPace = 2000;
constexpr unsigned kHitBoxes = 8, kPairs = 80;  // pair index < 80 for either pairing (132 SMs)

// One CTA per SM; role[smid]: 0 idle, 1 leader, 2 partner.
// pairing: 0 tpc, 1 gpc, 2 cross (the usage above).
__global__ void k_pair_stream(const __grid_constant__ CUtensorMap map, bool hit, unsigned pairing, unsigned delay,
                              unsigned long long start, unsigned* role) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned s = sm_id();
  if (pairing != 0 && s >= 64) {
    role[s] = 0;
    return;
  }
  const unsigned bit = pairing == 1 ? 16u : 2u;
  const unsigned pair = pairing == 0 ? s >> 1 : s & ~bit;
  const bool partner = pairing == 0 ? (s & 1u) != 0 : (s & bit) != 0;
  role[s] = partner ? 2 : 1;
  const unsigned base = init_stage_ring(smem, kStages, kBoxBytes);
  const unsigned bars = base + kStages * kBoxBytes;
  const unsigned boxes = hit ? kHitBoxes : kLoads;
  wait_globaltimer(start);
  const long long c0 = clock64() + (partner ? delay : 0);
  for (unsigned i = 0; i < kLoads + kStages; ++i) {
    const unsigned st = i % kStages;
    if (i >= kStages) mbar_wait(bars + 8 * st, ((i - kStages) / kStages) & 1);
    if (i < kLoads) {
      while (clock64() < c0 + static_cast<long long>(i) * kPace) {
      }
      mbar_arrive_expect_tx(bars + 8 * st, kBoxBytes);
      tma_load_2d(base + st * kBoxBytes, &map, 0, static_cast<int>((pair * boxes + i % boxes) * kBoxRows),
                  bars + 8 * st);
    }
  }
}

// The arrivals variant (ARRIVALS mode): the pairs issue one box at a time, load j at the pace
// kArrivalPace from the common tick (the partner DELAY cycles later), and log when it arrives
// (%globaltimer, common to all SMs): a partner's load that joined arrives with its leader's. With
// `background` 1, the SMs from 64 on (idle in gpc pairing) stream their own L2-resident 128 KiB
// rings unpaced, 4 x 32 KiB in flight, to load the L2 while the pairs run; with `background` 2
// they stream the same way through data of their own that no launch read recently (19 MiB each,
// 1.3 GB in all), so the load is HBM's and the L2's fills.
constexpr unsigned kArrivalPace = 4000, kBackgroundLoads = 600;
// `bit` pairs SM s with s ^ bit (16: the same GPC, 2: another GPC, by the map above); `cold`: each
// load reads a box no one read before (the L2 flushed before the launch) instead of cycling over
// the pair's 8 L2-resident ones, so the leader's read misses and the partner's finds it in flight
// or just landed.
__global__ void k_pair_arrivals(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap bg_map,
                                const __grid_constant__ CUtensorMap bg_hbm_map, unsigned delay, unsigned background,
                                unsigned bit, bool cold, unsigned long long start,
                                unsigned long long* arrival, unsigned* lat, unsigned* role,
                                unsigned long long* clk) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned s = sm_id();
  if (s >= 64) {
    role[s] = 0;
    if (!background) return;
    const unsigned base = init_stage_ring(smem, kStages, 2 * kBoxBytes);
    wait_globaltimer(start);
    const unsigned ring = background == 1 ? 4 : kBackgroundLoads;  // boxes of 2 x kBoxRows rows
    tma_stream_loop(background == 1 ? &bg_map : &bg_hbm_map, base, base + kStages * 2 * kBoxBytes, 2 * kBoxBytes,
                    2 * kBoxRows, (s - 64) * ring * 2 * kBoxRows, ring * 2 * kBoxRows, kStages, kBackgroundLoads);
    return;
  }
  const unsigned pair = s & ~bit;
  const bool partner = (s & bit) != 0;
  role[s] = partner ? 2 : 1;
  const unsigned base = init_stage_ring(smem, 1, kBoxBytes);
  const unsigned bar = base + kBoxBytes;
  wait_globaltimer(start);
  const long long c0 = clock64() + (partner ? delay : 0);
  if (s == 0) {
    clk[0] = clock64();
    clk[1] = globaltimer();
  }
  for (unsigned j = 0; j < kLoads; ++j) {
    while (clock64() < c0 + static_cast<long long>(j) * kArrivalPace) {
    }
    mbar_arrive_expect_tx(bar, kBoxBytes);
    const long long issued = clock64();
    const unsigned box = cold ? pair * kLoads + j : pair * kHitBoxes + j % kHitBoxes;
    tma_load_2d(base, &map, 0, static_cast<int>(box * kBoxRows), bar);
    mbar_wait(bar, j & 1);
    arrival[s * kLoads + j] = globaltimer();
    lat[s * kLoads + j] = static_cast<unsigned>(clock64() - issued);
  }
  if (s == 0) {
    clk[2] = clock64();
    clk[3] = globaltimer();
  }
}

// ARRIVALS mode: for the background off (0), hot (1) and from HBM (2) and each delay, a warm-up
// launch and a logged one (the warm-up without background when it is 2: it only makes the pairs'
// boxes hot); one row each: arrivals,background,delay_cycles,cycles_per_ns,lead_latency_cycles,
// partner_latency_cycles (medians, issue to arrival), partner_minus_lead_ns (median of load j's
// arrival difference) and joined (the share of partner loads arriving less than DELAY / 2 after
// their leader's: a joined load arrives with it, one served on its own about DELAY later).
// COLD (arrivals_cold mode): the pairs read boxes never read before, the L2 flushed before each
// logged launch (no warm-up), for gpc and cross pairings; rows arrivals_cold,<pairing>,... with
// the same columns after the first two (arrivals_cold_hbm: background 2 only, longer delays).
static int arrivals(unsigned sms, bool cold, bool hbm_loaded) {
  // Backgrounds (0 off, 1 hot rings, 2 from HBM) and partner delays of each mode.
  const std::vector<unsigned> backgrounds = hbm_loaded ? std::vector<unsigned>{2u}
                                            : cold     ? std::vector<unsigned>{0u, 1u}
                                                       : std::vector<unsigned>{0u, 1u, 2u};
  const std::vector<unsigned> delays = hbm_loaded ? std::vector<unsigned>{0u, 256u, 512u, 1024u, 2048u, 3072u, 4096u, 6144u}
                                                  : std::vector<unsigned>{0u, 32u, 64u, 128u, 256u, 512u, 1024u, 2048u};
  const unsigned rows = kPairs * (cold ? kLoads : kHitBoxes) * kBoxRows, bg_rows = 80 * 8 * 2 * kBoxRows;
  const unsigned bg_hbm_rows = backgrounds.back() == 2 ? (sms - 64) * kBackgroundLoads * 2 * kBoxRows : 2 * kBoxRows;
  void *data, *bg, *bg_hbm;
  CHECK(cudaMalloc(&data, static_cast<size_t>(rows) * 128));
  CHECK(cudaMemset(data, 1, static_cast<size_t>(rows) * 128));
  CHECK(cudaMalloc(&bg, static_cast<size_t>(bg_rows) * 128));
  CHECK(cudaMemset(bg, 1, static_cast<size_t>(bg_rows) * 128));
  CHECK(cudaMalloc(&bg_hbm, static_cast<size_t>(bg_hbm_rows) * 128));
  CHECK(cudaMemset(bg_hbm, 1, static_cast<size_t>(bg_hbm_rows) * 128));
  const CUtensorMap map = make_map(data, rows, kBoxRows), bg_map = make_map(bg, bg_rows, 2 * kBoxRows),
                    bg_hbm_map = make_map(bg_hbm, bg_hbm_rows, 2 * kBoxRows);
  unsigned long long *arrival, *clk;
  unsigned *lat, *role;
  CHECK(cudaMalloc(&arrival, sizeof(unsigned long long) * 256 * kLoads));
  CHECK(cudaMalloc(&lat, sizeof(unsigned) * 256 * kLoads));
  CHECK(cudaMalloc(&role, sizeof(unsigned) * 256));
  CHECK(cudaMalloc(&clk, 4 * sizeof(unsigned long long)));
  const unsigned smem = kStages * 2 * kBoxBytes + 2048;
  CHECK(cudaFuncSetAttribute(k_pair_arrivals, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::vector<unsigned long long> h_arr(256 * kLoads);
  std::vector<unsigned> h_lat(256 * kLoads), h_role(256);
  const size_t flush_bytes = cold ? 256ull << 20 : 0;
  void* flush = nullptr;
  if (cold) CHECK(cudaMalloc(&flush, flush_bytes));
  std::printf(cold ? "mode,pairing,background,delay_cycles,cycles_per_ns,lead_latency_cycles,partner_latency_cycles,"
                     "partner_minus_lead_ns,joined\n"
                   : "mode,background,delay_cycles,cycles_per_ns,lead_latency_cycles,partner_latency_cycles,"
                     "partner_minus_lead_ns,joined\n");
  for (const unsigned bit : cold ? std::vector<unsigned>{16u, 2u} : std::vector<unsigned>{16u})
  for (const unsigned background : backgrounds)
    for (const unsigned delay : delays) {
      for (int rep = cold ? 1 : 0; rep < 2; ++rep) {  // warm-up (hot boxes only), then the logged launch
        if (cold) CHECK(cudaMemset(flush, 2, flush_bytes));  // the pairs' boxes out of the L2
        CHECK(cudaMemset(role, 0, sizeof(unsigned) * 256));
        const unsigned long long start = paced_launch_start();
        k_pair_arrivals<<<sms, 32, smem>>>(map, bg_map, bg_hbm_map, delay, rep == 0 && background == 2 ? 0 : background,
                                           bit, cold, start, arrival, lat, role, clk);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
      }
      unsigned long long h_clk[4];
      CHECK(cudaMemcpy(h_clk, clk, sizeof(h_clk), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h_arr.data(), arrival, sizeof(unsigned long long) * h_arr.size(), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h_lat.data(), lat, sizeof(unsigned) * h_lat.size(), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(h_role.data(), role, sizeof(unsigned) * h_role.size(), cudaMemcpyDeviceToHost));
      const double per_ns = static_cast<double>(h_clk[2] - h_clk[0]) / static_cast<double>(h_clk[3] - h_clk[1]);
      std::vector<unsigned> lead, part, diff;
      unsigned joined = 0, partner_loads = 0;
      for (unsigned s = 0; s < 64 && s < sms; ++s) {
        if (h_role[s] != 2 || h_role[s & ~bit] != 1) continue;
        for (unsigned j = 1; j < kLoads; ++j) {
          const long long d = static_cast<long long>(h_arr[s * kLoads + j]) -
                              static_cast<long long>(h_arr[(s & ~bit) * kLoads + j]);
          diff.push_back(static_cast<unsigned>(std::max(0ll, d)));
          ++partner_loads;
          if (static_cast<double>(d) * per_ns < delay / 2.0) ++joined;
          lead.push_back(h_lat[(s & ~bit) * kLoads + j]);
          part.push_back(h_lat[s * kLoads + j]);
        }
      }
      if (cold) std::printf("arrivals_cold,%s,", bit == 16u ? "gpc" : "cross");
      else std::printf("arrivals,");
      std::printf("%u,%u,%.3f,%u,%u,%u,%.3f\n", background, delay, per_ns, median(lead), median(part),
                  median(diff), partner_loads ? static_cast<double>(joined) / partner_loads : 0.0);
      std::fflush(stdout);
    }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && (!std::strcmp(argv[1], "arrivals") || !std::strcmp(argv[1], "arrivals_cold") ||
                    !std::strcmp(argv[1], "arrivals_cold_hbm"))) {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const bool hbm_loaded = !std::strcmp(argv[1], "arrivals_cold_hbm");
    return arrivals(static_cast<unsigned>(prop.multiProcessorCount), hbm_loaded || !std::strcmp(argv[1], "arrivals_cold"),
                    hbm_loaded);
  }
  if (argc != 4 || (std::strcmp(argv[1], "hit") && std::strcmp(argv[1], "miss")) ||
      (std::strcmp(argv[2], "tpc") && std::strcmp(argv[2], "gpc") && std::strcmp(argv[2], "cross"))) {
    std::fprintf(stderr, "usage: h100_join_window hit|miss tpc|gpc|cross DELAY_CYCLES, or h100_join_window "
                         "arrivals|arrivals_cold|arrivals_cold_hbm\n");
    return 2;
  }
  const bool hit = !std::strcmp(argv[1], "hit");
  const unsigned pairing = !std::strcmp(argv[2], "tpc") ? 0u : !std::strcmp(argv[2], "gpc") ? 1u : 2u;
  const unsigned delay = static_cast<unsigned>(std::atoi(argv[3]));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  const unsigned boxes = hit ? kHitBoxes : kLoads;
  const unsigned rows = kPairs * boxes * kBoxRows;
  void* data;
  CHECK(cudaMalloc(&data, static_cast<size_t>(rows) * 128));
  CHECK(cudaMemset(data, 1, static_cast<size_t>(rows) * 128));
  const CUtensorMap map = make_map(data, rows, kBoxRows);
  unsigned* role;
  CHECK(cudaMalloc(&role, sizeof(unsigned) * 256));
  CHECK(cudaMemset(role, 0, sizeof(unsigned) * 256));
  const unsigned smem = kStages * kBoxBytes + 2048;
  CHECK(cudaFuncSetAttribute(k_pair_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const size_t flush_bytes = 256ull << 20;
  void* flush;
  CHECK(cudaMalloc(&flush, flush_bytes));
  auto launch = [&] {
    const unsigned long long start = paced_launch_start();
    k_pair_stream<<<sms, 32, smem>>>(map, hit, pairing, delay, start, role);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  if (hit) launch();  // warm-up: the pairs' rings into the L2
  else CHECK(cudaMemset(flush, 2, flush_bytes));  // the data out of the L2
  CHECK(cudaDeviceSynchronize());
  launch();
  std::vector<unsigned> h_role(256);
  CHECK(cudaMemcpy(h_role.data(), role, sizeof(unsigned) * h_role.size(), cudaMemcpyDeviceToHost));
  const auto active = static_cast<unsigned>(std::count_if(h_role.begin(), h_role.end(), [](unsigned r) { return r != 0; }));
  std::printf("mode,pairing,delay_cycles,sms,loads,box_bytes\n");
  std::printf("%s,%s,%u,%u,%u,%u\n", argv[1], argv[2], delay, active, kLoads, kBoxBytes);
  return 0;
}
