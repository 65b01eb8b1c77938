// TMA reduce-add against TMA store: what an f32 reduction through the L2 costs (the attention
// backward accumulates dQ this way). Prints CSV: scenario,param,value (param = G, the CTAs), and
// comment lines '#'.
//
// Data: an f32 tensor of R rows x 128 columns (512-byte rows); boxes of 32 rows x 128 columns
// (16 KiB), no swizzle. A CTA (one per SM, 32 threads, 66 KiB of dynamic SMEM for its one-CTA-
// per-SM residency) holds one box of SMEM data and issues N boxes in a loop with up to P in flight
// (cp.async.bulk.wait_group.read P-1 after each commit), then waits for all (wait_group 0):
// - op store: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group;
// - op reduce: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group (f32 add).
// Destinations: CTA c's box i is band (c x N + i) % bands:
// - l2: bands = 4 per CTA (2 MiB per 32 CTAs: 8.4 MB for 132, resident in the L2 after the
//   warm-up launch);
// - hbm: bands = N per CTA, N = 64 (132 x 64 x 16 KiB = 138 MB, past the 50 MB L2), the L2
//   flushed (a 256 MiB memset) before each launch.
// Rows (median of 3 launches):
// - <op>_<dest>_p<P>_bytes_per_cycle,G: G x N x 16 KiB over the median CTA's clock64 span;
// - <op>_<dest>_p<P>_cycles_per_box,G: the median CTA's span over N;
// - '#' lines: the SM clock (clock64 over %globaltimer) and the three launches' spans.
// One box alone (G = 1, N = 1, P = 1): <op>_<dest>_latency_cycles (issue to wait_group 0).
// First, a check that the adds happen: zeros, then four reduce launches of 132 CTAs over the l2
// bands (each band takes N / 4 adds of 1.0 per launch), so every element must be N.
// Run: bash run_program.sh h100_tma_reduce (CSV=h200_tma_reduce.csv on the H200).
#include "calibration_ptx.cuh"

#include <string>
#include <vector>

constexpr unsigned kCols = 128, kBoxRows = 32, kBox = kCols * kBoxRows * 4;  // 16 KiB
constexpr unsigned kSmem = 66 * 1024;
constexpr size_t kFlushBytes = 256ull << 20;
constexpr unsigned kMaxCtas = 132, kHbmN = 64;

__device__ __forceinline__ void tma_reduce_add_2d(const CUtensorMap* map, unsigned src, int x, int y) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   map),
               "r"(x), "r"(y), "r"(src)
               : "memory");
}

template <int P>
__device__ __forceinline__ void wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(P - 1) : "memory");
}

template <int P>
__global__ void k_stream(const __grid_constant__ CUtensorMap map, unsigned reduce, unsigned n, unsigned bands,
                         CtaTiming* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  float* data = reinterpret_cast<float*>(smem);
  for (unsigned i = threadIdx.x; i < kBox / 4; i += 32) data[i] = 1.0f;
  fence_proxy_async();
  __syncwarp();
  if (threadIdx.x != 0) return;
  const unsigned src = smem_addr(smem);
  CtaTiming& o = out[blockIdx.x];
  o.smid = sm_id();
  o.ns0 = static_cast<long long>(globaltimer());
  o.c0 = clock64();
  for (unsigned i = 0; i < n; ++i) {
    const int band = static_cast<int>((blockIdx.x * n + i) % bands);
    if (reduce) tma_reduce_add_2d(&map, src, 0, band * static_cast<int>(kBoxRows));
    else tma_store_2d(&map, src, 0, band * static_cast<int>(kBoxRows));
    bulk_commit();
    wait_read<P>();
  }
  bulk_wait_0();
  o.c1 = clock64();
  o.ns1 = static_cast<long long>(globaltimer());
}

struct Setup {
  float* data;
  void* flush;
  CtaTiming* out;
  CUtensorMap map;
  unsigned long long rows;
};

CUtensorMap f32_map(float* base, unsigned long long rows) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {kCols, rows};
  const cuuint64_t strides[1] = {kCols * 4};
  const cuuint32_t box[2] = {kCols, kBoxRows};
  const cuuint32_t estr[2] = {1, 1};
  if (encode_tiled()(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed\n");
    std::exit(1);
  }
  return m;
}

struct Launch {
  double span = 0, mhz = 0;
};

template <int P>
Launch launch(const Setup& s, bool reduce, unsigned g, unsigned n, unsigned bands, bool flush) {
  if (flush) CHECK(cudaMemset(s.flush, 0, kFlushBytes));
  CHECK(cudaFuncSetAttribute(k_stream<P>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  k_stream<P><<<g, 32, kSmem>>>(s.map, reduce ? 1u : 0u, n, bands, s.out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<CtaTiming> t = read_cta_timings(s.out, g);
  std::vector<double> spans;
  for (const CtaTiming& c : t) spans.push_back(c.cycles());
  Launch l;
  l.span = median(spans);
  l.mhz = t[0].mhz();
  return l;
}

template <int P>
void row(const Setup& s, bool reduce, bool hbm, unsigned g) {
  const unsigned n = kHbmN, bands = hbm ? g * n : 4 * g;
  launch<P>(s, reduce, g, n, bands, hbm);  // warm-up (and, for l2, the lines resident)
  std::vector<Launch> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(launch<P>(s, reduce, g, n, bands, hbm));
  std::vector<double> spans;
  for (const Launch& l : runs) spans.push_back(l.span);
  const double span = median(spans);
  const std::string name = std::string(reduce ? "reduce" : "store") + (hbm ? "_hbm" : "_l2") + "_p" + std::to_string(P);
  std::printf("%s_bytes_per_cycle,%u,%.1f\n", name.c_str(), g, 1.0 * g * n * kBox / span);
  std::printf("%s_cycles_per_box,%u,%.0f\n", name.c_str(), g, span / n);
  std::printf("# %s G %u: clock_mhz %.0f, spans %.0f %.0f %.0f\n", name.c_str(), g, runs[0].mhz, runs[0].span,
              runs[1].span, runs[2].span);
  std::fflush(stdout);
}

void latency(const Setup& s, bool reduce, bool hbm) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) v.push_back(launch<1>(s, reduce, 1, 1, 1, hbm).span);
  std::printf("%s_%s_latency_cycles,1,%.0f\n", reduce ? "reduce" : "store", hbm ? "hbm" : "l2", median(v));
}

// Every element of the first 4 x G bands after `launches` reduce launches of G CTAs x n boxes
// over 4 G bands: each band gets n / 4 adds of 1.0 per launch.
bool check(const Setup& s, unsigned g, unsigned n, unsigned launches) {
  std::vector<float> h(4ull * g * kBoxRows * kCols);
  CHECK(cudaMemcpy(h.data(), s.data, h.size() * 4, cudaMemcpyDeviceToHost));
  const float want = static_cast<float>(launches) * n / 4;
  for (float x : h)
    if (x != want) {
      std::printf("# check FAILED: %g != %g\n", x, want);
      return false;
    }
  std::printf("# check: every element of the l2 bands is %g after %u launches of adds of 1.0\n", want, launches);
  return true;
}

int main() {
  Setup s;
  s.rows = 1ull * kMaxCtas * kHbmN * kBoxRows;
  CHECK(cudaMalloc(&s.data, s.rows * kCols * 4));
  CHECK(cudaMalloc(&s.flush, kFlushBytes));
  CHECK(cudaMalloc(&s.out, sizeof(CtaTiming) * kMaxCtas));
  s.map = f32_map(s.data, s.rows);
  std::printf("scenario,param,value\n");
  // The adds are right: zero, then 4 launches (warm-up + 3) of G = 132 over the l2 bands.
  CHECK(cudaMemset(s.data, 0, s.rows * kCols * 4));
  row<2>(s, true, false, 132);
  if (!check(s, 132, kHbmN, 4)) return 1;
  for (const bool hbm : {false, true})
    for (const bool reduce : {false, true}) latency(s, reduce, hbm);
  for (const unsigned g : {1u, 16u, 66u, 132u})
    for (const bool hbm : {false, true})
      for (const bool reduce : {false, true}) {
        row<1>(s, reduce, hbm, g);
        row<2>(s, reduce, hbm, g);
        row<4>(s, reduce, hbm, g);
      }
  return 0;
}
