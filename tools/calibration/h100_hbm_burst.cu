// A synchronized burst of HBM misses: G SMs each issue P 16 KiB TMA boxes at the same instant,
// and the program times how long the chip takes to deliver them. It asks whether the addresses
// of a burst matter: in a GEMM whose SMs wait on the same B tile, every SM asks for its A box of
// the same k-block at about the same time, so every line of the burst sits at the same offset
// within its row of A (rows 32 KiB apart); a burst spread over other offsets, or over contiguous
// boxes, moves the same bytes. Prints CSV: scenario,param,value (param = G), comment lines '#'.
//
// Data: a uint8 buffer of 132 x 4 bands of 128 rows, each row W bytes (box {128, 128} = 16 KiB,
// SWIZZLE_128B, L2 promotion 256B, as the GEMM twin's A). Every launch is preceded by an L2
// flush (cudaMemset of a 256 MiB scratch buffer), so every box comes from HBM.
//
// The program (k_burst): one launch of G CTAs of 32 threads, each asking for 133120 B of dynamic
// SMEM (one CTA per SM; read_cta_timings checks it); thread 0 of each: init one mbarrier; arrive
// on a global counter; CTA 0 waits for all G, then publishes T = %globaltimer + 20 us; each CTA
// spins until %globaltimer >= T (a common start within one ~32 ns timer tick), records its start,
// issues its P boxes (expect_tx of P x 16 KiB on the one barrier), waits, records its end.
// Box j (j = 0..P-1) of CTA c: rows 128 x (4c + j) .. + 127, column x (bytes):
// - same:      W = 32768, x = 128 x 40 (every line of the burst at one offset of its row);
// - staggered: W = 32768, x = 128 x ((c x 4 + j) x 37 % 256) (the offsets spread over the row);
// - same16k / same64k: as same with W = 16384 / 65536;
// - contiguous: W = 128 (each box one contiguous 16 KiB; the boxes next to each other).
// Rows (3 launches each, value = the median launch's):
// - burst_span_cycles_<pattern>_p<P>: last end - first start (%globaltimer) in SM cycles (the
//   clock from CTA 0's clock64 over its %globaltimer window);
// - burst_latency_cycles_<pattern>_p<P>: the median CTA's end - start in its own clock64;
// - a comment line: the clock, the three spans, the bytes per cycle the span implies.
// G = 16, 66, 132; P = 1, 2, 4.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_hbm_burst.cu -lcuda
#include "calibration_ptx.cuh"

#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kBoxRows = 128, kMaxP = 4, kBands = 132 * kMaxP;
constexpr unsigned kSmem = 133120;
constexpr size_t kFlushBytes = 256ull << 20;
constexpr unsigned long long kLeadNs = 20000;

enum Pattern : unsigned { kSame, kStaggered, kContiguous };

// The column (in 128-byte units) of box j of CTA c.
__device__ __forceinline__ unsigned box_col(unsigned pattern, unsigned band) {
  return pattern == kContiguous ? 0 : pattern == kSame ? 40 : (band * 37) % 256;
}

__global__ void k_burst(const __grid_constant__ CUtensorMap map, const unsigned char* data, unsigned long long width,
                        unsigned pattern, unsigned P, unsigned touch, unsigned* counter, unsigned long long* start_ns,
                        CtaTiming* out, unsigned* sink) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem) + 1023) & ~1023u, bar = base + kMaxP * kBox;
  mbar_init(bar, 1);
  fence_mbar_init();
  volatile unsigned long long* vstart = start_ns;
  if (touch) {  // one byte of every 16th row of each box, 64 columns away: its pages' TLB entries
    unsigned acc = 0;
    for (unsigned j = 0; j < P; ++j) {
      const unsigned band = kMaxP * blockIdx.x + j, col = (box_col(pattern, band) + 64) % 256;
      for (unsigned r = 0; r < kBoxRows; r += 16) {
        const unsigned long long row = 1ull * kBoxRows * band + r;
        acc += *reinterpret_cast<const volatile unsigned char*>(data + row * width + (width == 128 ? 0 : 128ull * col));
      }
    }
    if (acc == 12345) *sink = acc;
  }
  atomicAdd(counter, 1u);
  if (blockIdx.x == 0) {
    volatile unsigned* vcounter = counter;
    while (*vcounter < gridDim.x) {
    }
    *vstart = globaltimer() + kLeadNs;
    __threadfence();
  }
  unsigned long long t;
  while ((t = *vstart) == 0) {
  }
  while (globaltimer() < t) {
  }
  CtaTiming& o = out[blockIdx.x];
  o.smid = sm_id();
  o.ns0 = static_cast<long long>(globaltimer());
  o.c0 = clock64();
  mbar_arrive_expect_tx(bar, P * kBox);
  for (unsigned j = 0; j < P; ++j) {
    const unsigned band = kMaxP * blockIdx.x + j;
    const unsigned col = box_col(pattern, band);
    tma_load_2d(base + j * kBox, &map, static_cast<int>(128 * col), static_cast<int>(kBoxRows * band), bar);
  }
  mbar_wait(bar, 0);
  o.c1 = clock64();
  o.ns1 = static_cast<long long>(globaltimer());
}

// Reads the flush buffer (clean lines: no write-backs when a burst evicts them).
__global__ void k_read_flush(const uint4* buf, size_t n, unsigned* sink) {
  uint4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint4 v = buf[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
  }
  if (acc.x == 12345 && acc.y == 678) *sink = acc.x;
}

struct Device {
  unsigned* counter;
  unsigned long long* start_ns;
  CtaTiming* out;
  void* flush;
  unsigned* sink;
  const unsigned char* data;
};

// One burst's set-up: the map and its row width, the pattern, and how the L2 is emptied.
struct Burst {
  const CUtensorMap* map;
  unsigned long long width;
  Pattern pattern;
  bool read_flush;  // flush by reading 256 MiB (clean lines) instead of cudaMemset (dirty ones)
  bool touch;       // touch every box's pages before the burst (TLB entries)
};

struct Launch {
  double span = 0, latency = 0, mhz = 0;
};

Launch launch(const Device& d, const Burst& b, unsigned P, unsigned G) {
  if (b.read_flush)
    k_read_flush<<<528, 512>>>(static_cast<const uint4*>(d.flush), kFlushBytes / sizeof(uint4), d.sink);
  else
    CHECK(cudaMemset(d.flush, 1, kFlushBytes));
  CHECK(cudaMemset(d.counter, 0, sizeof(unsigned)));
  CHECK(cudaMemset(d.start_ns, 0, sizeof(unsigned long long)));
  CHECK(cudaDeviceSynchronize());
  k_burst<<<G, 32, kSmem>>>(*b.map, d.data, b.width, b.pattern, P, b.touch ? 1u : 0u, d.counter, d.start_ns, d.out,
                            d.sink);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  const std::vector<CtaTiming> t = read_cta_timings(d.out, G);
  Launch l;
  l.mhz = t[0].mhz();
  long long first = t[0].ns0, last = t[0].ns1;
  std::vector<double> lat;
  for (const CtaTiming& c : t) {
    first = std::min(first, c.ns0);
    last = std::max(last, c.ns1);
    lat.push_back(c.cycles());
  }
  l.span = static_cast<double>(last - first) * l.mhz / 1000.0;
  l.latency = median(lat);
  return l;
}

void row(const Device& d, const Burst& b, const std::string& name, unsigned P, unsigned G) {
  std::vector<Launch> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(launch(d, b, P, G));
  std::vector<unsigned> order = {0, 1, 2};
  std::sort(order.begin(), order.end(), [&](unsigned x, unsigned y) { return runs[x].span < runs[y].span; });
  const Launch& m = runs[order[1]];
  const std::string suffix = name + "_p" + std::to_string(P);
  std::printf("burst_span_cycles_%s,%u,%.0f\n", suffix.c_str(), G, m.span);
  std::printf("burst_latency_cycles_%s,%u,%.0f\n", suffix.c_str(), G, m.latency);
  std::printf("# %s G %u: clock_mhz %.0f, spans %.0f %.0f %.0f, %.0f B/clk over the span\n", suffix.c_str(), G, m.mhz,
              runs[0].span, runs[1].span, runs[2].span, 1.0 * G * P * kBox / m.span);
  std::fflush(stdout);
}

int main() {
  CHECK(cudaFuncSetAttribute(k_burst, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const unsigned long long rows = 1ull * kBands * kBoxRows;
  void* data;
  CHECK(cudaMalloc(&data, 65536ull * rows));  // the widest map's bytes (4.4 GiB)
  CHECK(cudaMemset(data, 0, 65536ull * rows));
  Device d;
  d.data = static_cast<const unsigned char*>(data);
  CHECK(cudaMalloc(&d.flush, kFlushBytes));
  CHECK(cudaMemset(d.flush, 1, kFlushBytes));
  CHECK(cudaMalloc(&d.counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&d.start_ns, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d.out, sizeof(CtaTiming) * 132));
  CHECK(cudaMalloc(&d.sink, sizeof(unsigned)));
  const auto pr = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  const CUtensorMap w32k = make_strided_map(data, 32768, rows, kBoxRows, pr);
  const CUtensorMap w16k = make_strided_map(data, 16384, rows, kBoxRows, pr);
  const CUtensorMap w64k = make_strided_map(data, 65536, rows, kBoxRows, pr);
  const CUtensorMap w128 = make_strided_map(data, 128, rows, kBoxRows, pr);
  std::printf("scenario,param,value\n");
  launch(d, Burst{&w32k, 32768, kSame, false, false}, 4, 132);  // warm-up (clocks)
  // How the L2 is emptied and whether the pages were touched: memset (m) or read (r) flush,
  // untouched or touched (t).
  for (const bool read_flush : {false, true})
    for (const bool touch : {false, true}) {
      const std::string how = std::string(read_flush ? "r" : "m") + (touch ? "t" : "");
      for (unsigned P : {1u, 2u, 4u})
        for (unsigned G : {16u, 66u, 132u}) {
          if (how != "m" && G != 132) continue;  // the conditions at the full chip only
          row(d, Burst{&w32k, 32768, kSame, read_flush, touch}, "same_" + how, P, G);
          row(d, Burst{&w32k, 32768, kStaggered, read_flush, touch}, "staggered_" + how, P, G);
          row(d, Burst{&w128, 128, kContiguous, read_flush, touch}, "contiguous_" + how, P, G);
          if (how != "m" && how != "rt") continue;
          row(d, Burst{&w16k, 16384, kSame, read_flush, touch}, "same16k_" + how, P, G);
          row(d, Burst{&w64k, 65536, kSame, read_flush, touch}, "same64k_" + how, P, G);
        }
    }
  return 0;
}
