// h100_gemm_loads: the TMA loads of gemm_sm90_twin.cu's persistent GEMM without its math, to see
// whether the memory side alone gives some SMs a faster pace. The twin's ping-pong 128x128 CTAs
// run at per-SM paces that differ by 10-13% with the whole chip loaded (the same SMs every run,
// whatever tiles they get) and not at grid 66 or 100 (h100_gemm_sm90_tiles_*.csv).
//
// Kernel k_loads: grid CTAs of 32 threads (SMEM for S stages of the parts' boxes, (BM + BN) x 128 B
// for both, and at least 116 KiB, so one per SM); thread 0 walks the CTA's tiles in the twin's static persistent order
// (tile_of: raster, swizzle) and, per k-block, loads the twin's A box {64, BM} at (kb*64, m*BM) and
// B box {64, BN} at (kb*64, n*BN) into stage i % S on one mbarrier per stage, waiting for the
// stage's previous loads to land before reusing it: S stages in flight, no consumer. It records
// its %smid and, per tile, %globaltimer when the tile's first loads go out (the twin's --tile-log).
// Operands: bf16 M x K and N x K, the twin's maps (make_map: SWIZZLE_128B, L2 promotion 256B, or
// 128B with --promotion 128).
// CLI: --m --n --k --rows BM --tile-n BN --stages S --grid G (0: min(tiles, SMs)) --raster m|n
//      --reps R (3) --tile-log FILE --parts ab|a|b (both boxes of a stage, or only A's or B's)
//      --promotion 128|256 (256)
//      --private-a hbm|l2: each CTA's A boxes from rows of its own (rows blockIdx.x * BM), not the
//      tile's, so no other SM reads them: "hbm" walks the whole K (132 x BM x K x 2 bytes, more than
//      the L2 holds at K 4096: every tile's A comes from HBM again), "l2" cycles through the first 4
//      k-blocks (64 KiB per SM: hot in the L2 after the first tile). B stays the tile's, shared.
//      --a-copies C: C copies of A (other allocations, so other physical pages), launch r reading
//      copy r % C; --log-reps: a tile log of every launch (FILE.r0 the warm-up, FILE.r1 ...), not
//      only the last one's in FILE: does a GPC's pace follow the pages it reads, or the launch?
//      --kb-log 1: the tile log has every k-block's issue (the twin's --kb-log)
//      --probe-homes FILE (with --private-a l2): after the launches, which L2 partition holds each
//      line the CTAs' private A rows are read from (k_homes, per copy of A): the L2 flushed, the SM
//      of smid 0 (GPC 0) reads every such line once, then the SM of smid 2 (GPC 1, the other
//      partition on the H200: h200.yaml dies.of_gpc) and then that of smid 8 (GPC 4, the first
//      one's) each read them once more, a dependent chain, each load's latency in clock64. If each
//      partition keeps a copy of what its SMs read, the second reader finds the lines homed in the
//      first reader's partition slow and the third finds every line near. FILE: copy,region,row,
//      line,far,near (region r: CTA r's rows; line: its 128-byte lines 0-3 of the row).
// Prints one CSV row: m,n,k,bm,bn,stages,grid,cycles,clock_mhz (the last launch: the longest-lived
// CTA's span in cycles at its clock64 / %globaltimer rate) and writes FILE in the twin's format.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_gemm_loads.cu -lcuda
#include "calibration_ptx.cuh"

#define main gemm_sm90_twin_main
#include "gemm_sm90_twin.cu"
#undef main

#include <string>
#include <vector>

// --probe-homes: the CTA on SM role_sm reads lines 0-3 of every private row of A (regions x bm
// rows, pitch_bytes apart) once, each load's address depending on the previous load's value
// (v & zero, zero = 0 at run time) and its latency taken after an STS of the value waits for it;
// lat (if not null) gets one latency per line, in the order read.
__global__ void k_homes(const unsigned char* a, size_t pitch_bytes, unsigned regions, unsigned bm, unsigned role_sm,
                        unsigned zero, unsigned* lat, unsigned* sink) {
  __shared__ unsigned stored;
  if (threadIdx.x != 0 || sm_id() != role_sm) return;
  const unsigned stored_addr = smem_addr(&stored);
  unsigned v = 0, j = 0;
  for (unsigned row = 0; row < regions * bm; ++row)
    for (unsigned line = 0; line < 4; ++line, ++j) {
      const unsigned* p = reinterpret_cast<const unsigned*>(a + row * pitch_bytes + line * 128) + (v & zero);
      const long long t0 = clock_now();
      v = ld_cg(p);
      asm volatile("st.shared.u32 [%0], %1;" ::"r"(stored_addr), "r"(v) : "memory");
      const long long t1 = clock_now();
      if (lat) lat[j] = static_cast<unsigned>(t1 - t0);
    }
  sink[0] = v;
}

// timing per CTA: start ns, start clock, end ns, end clock.
__global__ void k_loads(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                        const GemmParams p, unsigned bm, unsigned bn, unsigned parts, unsigned private_a,
                        long long* tim, long long* tile_log) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  if (threadIdx.x != 0) return;
  const unsigned base = (smem_addr(smem_raw) + 1023) & ~1023u;
  // A stage holds the boxes of the parts loaded (A's then B's), so B alone fits more stages.
  const unsigned a_bytes = (parts & 1) ? bm * 128 : 0, bytes = a_bytes + ((parts & 2) ? bn * 128 : 0);
  const unsigned stage_bytes = bytes, S = p.stages;
  auto bar = [&](unsigned s) { return base + S * stage_bytes + 8 * s; };
  for (unsigned s = 0; s < S; ++s) mbar_init(bar(s), 1);
  fence_mbar_init();
  tile_log[blockIdx.x * log_stride(p)] = sm_id();
  tim[blockIdx.x * 4 + 0] = static_cast<long long>(globaltimer());
  tim[blockIdx.x * 4 + 1] = clock64();
  const unsigned tiles = p.tiles_m * p.tiles_n;
  // The stage and its parity are counted, not divided out of the load index: with i % S and
  // (i - S) / S (run-time divisors) the loop itself took 278 cycles per load, which held B's boxes
  // alone below what the L2 delivers (h200_box_stream.csv, README "The producer loop's own cost").
  unsigned i = 0, j = 0, s = 0, odd = 0;
  bool wrapped = false;  // i >= S: the stage holds an earlier load, waited for with parity odd ^ 1
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x, ++j) {
    unsigned m, n;
    tile_of(p, t, m, n);
    for (unsigned kb = 0; kb < p.k_tiles; ++kb, ++i) {
      if (wrapped) mbar_wait(bar(s), odd ^ 1u);
      log_issue(tile_log, p, j, kb);
      mbar_arrive_expect_tx(bar(s), bytes);
      // private_a: 0 the tile's rows; 1 the CTA's own rows over all of K; 2 its own, first 4 k-blocks
      const unsigned a_row = private_a ? blockIdx.x * bm : m * bm, a_kb = private_a == 2 ? kb & 3u : kb;
      if (parts & 1)
        tma_load_2d(base + s * stage_bytes, &tmA, static_cast<int>(a_kb * 64), static_cast<int>(a_row), bar(s));
      if (parts & 2)
        tma_load_2d(base + s * stage_bytes + a_bytes, &tmB, static_cast<int>(kb * 64), static_cast<int>(n * bn),
                    bar(s));
      if (++s == S) {
        s = 0;
        odd ^= 1u;
        wrapped = true;
      }
    }
  }
  for (unsigned k = i > S ? i - S : 0; k < i; ++k) mbar_wait(bar(k % S), (k / S) & 1u);
  tim[blockIdx.x * 4 + 2] = static_cast<long long>(globaltimer());
  tim[blockIdx.x * 4 + 3] = clock64();
}

// --probe-homes FILE: k_homes by smid 0 (every line once), smid 2 (latencies "far") and smid 8
// (latencies "near") on each copy of A, the L2 flushed (a 256 MiB memset) before each copy.
void probe_homes(const std::string& path, const std::vector<__nv_bfloat16*>& copies, size_t pitch, int regions,
                 unsigned bm) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  const size_t lines = static_cast<size_t>(regions) * bm * 4;
  unsigned *lat, *sink;
  void* flush;
  CHECK(cudaMalloc(&lat, 2 * lines * sizeof(unsigned)));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&flush, 256u << 20));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // One CTA per SM (116 KiB of SMEM each) so that the roles' SMs each hold one.
  CHECK(cudaFuncSetAttribute(k_homes, cudaFuncAttributeMaxDynamicSharedMemorySize, 116 * 1024));
  std::fprintf(f, "copy,region,row,line,far,near\n");
  std::vector<unsigned> h(2 * lines);
  for (size_t c = 0; c < copies.size(); ++c) {
    const auto* a = reinterpret_cast<const unsigned char*>(copies[c]);
    CHECK(cudaMemset(flush, static_cast<int>(c + 1), 256u << 20));
    k_homes<<<sms, 32, 116 * 1024>>>(a, pitch, regions, bm, 0, 0, nullptr, sink);
    k_homes<<<sms, 32, 116 * 1024>>>(a, pitch, regions, bm, 2, 0, lat, sink);
    k_homes<<<sms, 32, 116 * 1024>>>(a, pitch, regions, bm, 8, 0, lat + lines, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), lat, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t j = 0; j < lines; ++j)
      std::fprintf(f, "%zu,%zu,%zu,%zu,%u,%u\n", c, j / (bm * 4), j / 4 % bm, j % 4, h[j], h[lines + j]);
  }
  std::fclose(f);
  CHECK(cudaFree(lat));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(flush));
}

int main(int argc, char** argv) {
  int m = 4096, n = 4096, k = 4096, bm = 128, bn = 128, stages = 6, grid_arg = 0, reps = 3;
  CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  unsigned parts = 3;      // --parts ab (both boxes), a or b
  unsigned private_a = 0;  // --private-a hbm (1) or l2 (2)
  int a_copies = 1;
  bool log_reps = false, kb_log = false;
  std::string homes_path;
  bool raster_m = true;
  std::string log_path;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string key = argv[a], v = argv[a + 1];
    if (key == "--m") m = std::stoi(v);
    else if (key == "--n") n = std::stoi(v);
    else if (key == "--k") k = std::stoi(v);
    else if (key == "--rows") bm = std::stoi(v);
    else if (key == "--tile-n") bn = std::stoi(v);
    else if (key == "--stages") stages = std::stoi(v);
    else if (key == "--grid") grid_arg = std::stoi(v);
    else if (key == "--raster") raster_m = v != "n";
    else if (key == "--reps") reps = std::stoi(v);
    else if (key == "--tile-log") log_path = v;
    else if (key == "--a-copies" && std::stoi(v) > 0) a_copies = std::stoi(v);
    else if (key == "--log-reps" && (v == "0" || v == "1")) log_reps = v == "1";
    else if (key == "--probe-homes") homes_path = v;
    else if (key == "--kb-log" && (v == "0" || v == "1")) kb_log = v == "1";
    else if (key == "--private-a" && (v == "hbm" || v == "l2")) private_a = v == "hbm" ? 1u : 2u;
    else if (key == "--promotion") {
      if (v != "128" && v != "256") {
        std::fprintf(stderr, "--promotion: 128 or 256, got %s\n", v.c_str());
        return 1;
      }
      promotion = v == "128" ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    }
    else if (key == "--parts") parts = (v.find('a') != std::string::npos ? 1u : 0u) | (v.find('b') != std::string::npos ? 2u : 0u);
    else {
      std::fprintf(stderr, "unknown argument %s\n", key.c_str());
      return 1;
    }
  }
  if (!homes_path.empty() && private_a != 2) {
    std::fprintf(stderr, "--probe-homes needs --private-a l2\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  GemmParams p;
  p.M = m;
  p.N = n;
  p.K = k;
  p.tiles_m = (m + bm - 1) / bm;
  p.tiles_n = (n + bn - 1) / bn;
  p.k_tiles = (k + 63) / 64;
  p.stages = static_cast<unsigned>(stages);
  p.raster_m = raster_m ? 1 : 0;
  p.swizzle = 1;
  const unsigned tiles = p.tiles_m * p.tiles_n;
  const int grid = grid_arg > 0 ? grid_arg : static_cast<int>(std::min<unsigned>(tiles, prop.multiProcessorCount));
  p.log_tiles = (tiles + grid - 1) / grid;
  p.log_kblocks = kb_log ? 1 : 0;
  // Private A rows: one band of BM rows per CTA, so A has at least grid x BM rows.
  const int a_rows = private_a ? std::max(m, grid * bm) : m;
  std::vector<__nv_bfloat16*> A(a_copies);
  std::vector<CUtensorMap> tmA(a_copies);
  __nv_bfloat16* B;
  for (int c = 0; c < a_copies; ++c) {
    CHECK(cudaMalloc(&A[c], static_cast<size_t>(a_rows) * k * 2));
    k_fill<<<1024, 256>>>(A[c], static_cast<size_t>(a_rows) * k, 1u);
    tmA[c] = make_map(A[c], a_rows, k, bm, 64, promotion);
  }
  CHECK(cudaMalloc(&B, static_cast<size_t>(n) * k * 2));
  k_fill<<<1024, 256>>>(B, static_cast<size_t>(n) * k, 2u);
  const CUtensorMap tmB = make_map(B, n, k, bn, 64, promotion);
  long long *tim, *tile_log;
  CHECK(cudaMalloc(&tim, static_cast<size_t>(grid) * 4 * sizeof(long long)));
  CHECK(cudaMalloc(&tile_log, static_cast<size_t>(grid) * log_stride(p) * sizeof(long long)));
  const unsigned stage_bytes = ((parts & 1) ? bm : 0) * 128 + ((parts & 2) ? bn : 0) * 128;
  // At least 116 KiB, so that one CTA fits an SM (228 KiB) whatever the stages hold.
  const size_t smem = std::max<size_t>(1024 + static_cast<size_t>(stages) * stage_bytes + 8 * stages, 116 * 1024);
  CHECK(cudaFuncSetAttribute(k_loads, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  // The last launch's span: the longest-lived CTA's, in cycles at its clock64 / %globaltimer rate.
  double cycles = 0, mhz = 0;
  std::vector<long long> h(static_cast<size_t>(grid) * 4);
  for (int r = 0; r < 1 + reps; ++r) {
    k_loads<<<grid, 32, smem>>>(tmA[r % a_copies], tmB, p, bm, bn, parts, private_a, tim, tile_log);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), tim, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    long long t0 = h[0], t1 = 0, life = -1;
    for (int c = 0; c < grid; ++c) {
      t0 = std::min(t0, h[4 * c]);
      t1 = std::max(t1, h[4 * c + 2]);
      if (h[4 * c + 2] - h[4 * c] > life) {
        life = h[4 * c + 2] - h[4 * c];
        mhz = static_cast<double>(h[4 * c + 3] - h[4 * c + 1]) / (static_cast<double>(life) / 1000.0);
      }
    }
    cycles = static_cast<double>(t1 - t0) * mhz / 1000.0;
    if (log_reps && !log_path.empty()) write_tile_log(log_path + ".r" + std::to_string(r), p, grid, tile_log, mhz);
  }
  std::printf("%d,%d,%d,%d,%d,%d,%d,%.0f,%.0f\n", m, n, k, bm, bn, stages, grid, cycles, mhz);
  if (!log_path.empty()) write_tile_log(log_path, p, grid, tile_log, mhz);
  if (!homes_path.empty()) probe_homes(homes_path, A, static_cast<size_t>(k) * 2, grid, bm);
  for (__nv_bfloat16* a : A) CHECK(cudaFree(a));
  CHECK(cudaFree(B));
  CHECK(cudaFree(tim));
  CHECK(cudaFree(tile_log));
  return 0;
}
