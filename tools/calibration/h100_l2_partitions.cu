// h100_l2_partitions: how much L2 room data costs when SMs of both L2 partitions read it, against
// data that SMs of one partition read. h100_l2_footprint.cu found that the L2 holds a footprint
// every SM reads only up to ~25 MiB and one split among the SMs to 32-48; the model explains both
// with two partitions that each keep a copy of what their own SMs read (sim_configs/h100.yaml
// `dies`). The ping-pong 128x128 8192^3 GEMM reads an A tile from two CTAs, often on different
// partitions, and silicon reads more of it from HBM than the model does. This program first finds
// which SMs share a partition, then streams footprints whose lines are read by SMs of one or of
// both partitions, and pairs of SMs that read one stream a set distance apart (the GEMM's A).
//
// CLI:
//   h100_l2_partitions map FILE       find the partitions; writes FILE ("smid partition gpc" lines)
//                                     and prints them as comment lines
//   h100_l2_partitions sweep FILE POINT...   POINT = MODE:PARAM (below); each point prints one row
// Run the sweep under Nsight Compute (run_l2_partitions.sh): every measured launch is a kernel
// named k_measure*, the warm-ups and flushes are not, so one ncu process (-k regex:k_measure)
// counts the DRAM bytes of every point's measured launch, in the order the rows are printed.
//
// map: a 1-CTA launch (its SM is the reference) reads 512 lines (64 KiB) per SM region, then one
// CTA per SM chases its own region's lines twice (ld.global.cg, each load's latency in clock64).
// If the partitions keep copies, the reference's partition now holds every line and the other
// partition only the lines homed there: an SM of the other partition finds its lines homed on the
// reference's side far (slow) on its first pass and near on its second, an SM of the reference's
// partition finds all of them near both times. The SMs are split in two at the largest gap in
// (first-pass mean - second-pass mean); the share of each SM's first-pass loads that were slow is
// printed (about half on the other side: the lines homed on the reference's side). GPCs: clusters of
// 2..16 CTAs (as h100_gpc_map.cu) join SMs into groups.
//
// sweep modes (footprint F MiB of 16 KiB boxes, n = 64 F; one CTA of 32 threads per SM with
// 133120 B of SMEM, thread 0 streams boxes through 4 stages; roles by %smid; a warm-up launch makes
// one pass over what each SM reads, the measured launch two):
//   shared:F        every SM reads all n boxes from a staggered start (h100_l2_footprint's shared)
//   split:F         each SM its own n/132 boxes (h100_l2_footprint's split)
//   pair_same:F     pairs of SMs of one partition (each partition pairs its own SMs), each pair a
//                   slice of n/pairs boxes, the second reader half a slice behind the first: every
//                   line read by two SMs of one partition, both partitions busy with their halves
//   pair_cross:F    the same with pairs of one SM of each partition: every line read from both
//   half0:F, half1:F  pairs within partition 0 (1) only, the other partition idle: every line read
//                   by two SMs of that partition, the whole footprint on one side
//   shared_half0:F  every SM of partition 0 reads all n boxes (staggered), partition 1 idle
//   check_same:F, check_cross:F  (placement check) warm-up: the SMs of partition 0 read their
//                   own slices; measured launch (one pass): each slice read by another SM of
//                   partition 0 (same) or by an SM of partition 1 (cross). With copies per
//                   partition, same crosses nothing and cross crosses for the lines homed in
//                   partition 0 (about half).
//   swap:F, stay:F  (the fabric between the partitions) the L2 flushed, then each partition's SMs
//                   warm a half of the footprint, a slice each; measured launch (one pass): swap:
//                   each slice read by the SM of the other partition with the same index (the lines
//                   homed on the warming side cross, both ways at once); stay: by another SM of the
//                   warming partition. swap's bytes per cycle against stay's: what crossing costs.
//   oneway:F, oneway_stay:F  the same for the first half only: partition 0's SMs warm it, then
//                   partition 1's (oneway) or partition 0's own (oneway_stay) read it, the other
//                   partition's SMs idle: the reader's side pays alone. oneway_cold /
//                   oneway_cold_stay: the same without the warm-up (every line from DRAM). A mode
//                   name ending _s8 (swap_s8, ...): the measured pass keeps 8 boxes in flight per
//                   SM instead of 4 (is crossing a rate or a latency?). oneway_back* (oneway_back,
//                   oneway_back_stay, oneway_back_cold, oneway_back_cold_stay): the same with the
//                   partitions exchanged (partition 1's SMs warm, partition 0's cross): the other
//                   direction. Every mode also prints partition_spans,ROW,MODE,F, then per partition
//                   (0, 1) its measuring CTAs, their median and longest span (clock64 cycles). A
//                   mode name ending _k (before any _s8: swap_k, oneway_k, ...): the boxes are the
//                   GEMM's, 128 rows 16 KiB apart read 128 bytes at a time with the 256B L2
//                   promotion, each CTA's slice the consecutive k-blocks of 128-row tiles; _k128
//                   the same with the 128B promotion; _c256: the modes' own boxes (rows 128 bytes
//                   apart) with the 256B promotion.
//   promo_even:F, promo_odd:F  rows 256 bytes apart read 128 at a time with the 256B L2 promotion:
//                   partition 0's SMs read their slices' first halves cold (the promotion brings the
//                   second halves), then other SMs of partition 0 read the first halves (even) or
//                   the second (odd): does the reader's partition keep a copy of promoted lines?
//   reref_x:Z, reref_y:Z, rerefp_*, rerefj_*  (does a line read twice outlast one read once?)
//                   after a flush every SM reads its slice of X (16 MiB) twice (rerefp: the second
//                   time another SM of its partition reads it, rerefc: an SM of the other
//                   partition; rerefj: pairs of SMs of one
//                   partition read it at once, once), then its slice of Y (16 MiB) once,
//                   then of Z (Z MiB, new lines) once; the measured launch reads X or Y once more.
//                   LRU loses X first, clock (second chance) Y first.
//   lagi_same:L, lagi_cross:L  the lag modes with the pairs' boxes interleaved (box j of pair i is
//                   box j x pairs + i of one region): the lines all pairs read between a leader and
//                   its follower are one contiguous run, whole 2 MiB pages of it, where the lag
//                   modes' are a window of a few boxes in each of 66 regions 6 MiB apart (do pages
//                   whose frames scatter over the L2's sets make the lag rows' loss gradual?).
//   lagr_same:L, lagr_cross:L  the lag modes with the leader's count published by a relaxed store
//                   (st.relaxed.gpu) instead of a release: the leaders stream at their own pace, not
//                   at a release's (does the gradual loss come from the L2 or from uneven leaders?).
//                   The lag modes print "spans,..." lines: the leaders' and followers' span spread.
//   lag_same:L, lag_cross:L  (the GEMM's A tile) pairs as pair_same / pair_cross, each pair its
//                   own 384 boxes (6 MiB; 66 pairs: 396 MiB, cold after a flush); the leader
//                   streams them once, publishing how many boxes have landed, and the follower
//                   reads box i once the leader's box i + L has landed. The measured launch's DRAM
//                   bytes over the leaders' bytes: 1 while the follower hits, 2 once it misses.
//                   Between the leader's and the follower's read of a line all leaders bring in
//                   about pairs x (L + 4 in flight) boxes.
// Row (stdout): row,<index>,<mode>,<param>,<footprint_bytes>,<active_sms>,<loaded_bytes>,<passes>,
// <cycles>,<clock_mhz>,<l2_bytes_per_cycle> (cycles: the slowest active CTA's clock64 span;
// clock: clock64 over %globaltimer, mean over active CTAs). The first point also prints
// "# cta_partition,<132 digits>": the partition of the SM that CTA c ran on, c = 0..131.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_l2_partitions.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

constexpr unsigned kBox = 16384, kBoxRows = 128, kStages = 4, kSmem = 133120;
constexpr unsigned kMapLines = 512, kLineWords = 32;  // 64 KiB of 128-byte lines per SM's probe region
constexpr unsigned kLagBoxes = 384;                   // boxes per pair in the lag modes

// ---- map ------------------------------------------------------------------------------------

// One CTA: every line of every SM's region once (the reference partition gets all of them).
__global__ void k_map_ref(const unsigned* regions, unsigned words, unsigned* sink, unsigned* ref_sm) {
  unsigned s = 0;
  for (unsigned w = threadIdx.x * kLineWords; w < words; w += blockDim.x * kLineWords) s += ld_cg(regions + w);
  if (threadIdx.x == 0) *ref_sm = sm_id();
  sink[threadIdx.x] = s;
}

// One CTA per SM: thread 0 chases its SM's region twice; lat[smid][pass][j] is the latency of the
// chain's j-th load (the STS of the loaded index waits for it, then clock64 is read), followed by
// each pass's total cycles (lat[smid][2 * kMapLines + pass]).
__global__ void k_map_probe(const unsigned* regions, unsigned* lat) {
  extern __shared__ unsigned char smem[];
  __shared__ unsigned sink;
  __shared__ unsigned local[2 * kMapLines];
  if (threadIdx.x != 0) return;
  const unsigned sm = sm_id();
  const unsigned* r = regions + static_cast<size_t>(sm) * kMapLines * kLineWords;
  const unsigned sink_addr = smem_addr(&sink);
  unsigned idx = 0;
  long long pass_cycles[2];
  for (unsigned pass = 0; pass < 2; ++pass) {
    const long long p0 = clock_now();
    for (unsigned j = 0; j < kMapLines; ++j) {
      const long long t0 = clock_now();
      idx = ld_cg(r + idx);
      asm volatile("st.shared.u32 [%0], %1;" ::"r"(sink_addr), "r"(idx) : "memory");
      const long long t1 = clock_now();
      local[pass * kMapLines + j] = static_cast<unsigned>(t1 - t0);
    }
    pass_cycles[pass] = clock_now() - p0;  // the chain is dependent: this total is real in any case
  }
  smem[0] = 1;
  unsigned* o = lat + static_cast<size_t>(sm) * (2 * kMapLines + 2);
  for (unsigned k = 0; k < 2 * kMapLines; ++k) o[k] = local[k];
  o[2 * kMapLines] = static_cast<unsigned>(pass_cycles[0]);
  o[2 * kMapLines + 1] = static_cast<unsigned>(pass_cycles[1]);
}

__global__ void k_where(unsigned* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  out[blockIdx.x] = sm_id();
  smem[0] = 1;
}

// GPC index of every SM: clusters of 2..16 one-per-SM CTAs run in one GPC (h100_gpc_map.cu's
// union-find); groups numbered by their smallest SM.
std::vector<int> gpc_of_sm(int sms) {
  CHECK(cudaFuncSetAttribute(k_where, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(k_where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  unsigned* out;
  CHECK(cudaMalloc(&out, 1024 * sizeof(unsigned)));
  std::vector<int> parent(sms);
  std::iota(parent.begin(), parent.end(), 0);
  for (int c = 2; c <= 16; ++c) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_launch(c, kSmem, attr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, k_where, &cfg) != cudaSuccess || clusters == 0) continue;
    for (int rep = 0; rep < 2; ++rep) {
      cfg.gridDim = dim3(clusters * c);
      CHECK(cudaLaunchKernelEx(&cfg, k_where, out));
      CHECK(cudaDeviceSynchronize());
      std::vector<unsigned> h(clusters * c);
      CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
      for (int b = 0; b < clusters * c; ++b)  // CTAs of one cluster are consecutive
        if (b % c) parent[find_root(parent, static_cast<int>(h[b]))] = find_root(parent, static_cast<int>(h[b - b % c]));
    }
  }
  CHECK(cudaFree(out));
  std::map<int, int> index;  // root -> GPC number, by smallest member
  std::vector<int> gpc(sms);
  for (int s = 0; s < sms; ++s) {
    const int root = find_root(parent, s);
    if (!index.count(root)) {
      const int next = static_cast<int>(index.size());
      index[root] = next;
    }
    gpc[s] = index[root];
  }
  return gpc;
}

int run_map(const char* file) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  // The driver's page for device memory (what L2SetIndex's l2.page_bytes stands for): the
  // granularity of cuMemCreate, the unit in which physical frames back virtual addresses.
  CUmemAllocationProp alloc{};
  alloc.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  alloc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  alloc.location.id = 0;
  size_t least = 0, recommended = 0;
  if (cuMemGetAllocationGranularity(&least, &alloc, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
      cuMemGetAllocationGranularity(&recommended, &alloc, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS)
    std::printf("# map,allocation_granularity_bytes,minimum,%zu,recommended,%zu\n", least, recommended);
  // Where cudaMalloc puts buffers of a few sizes, as offsets within a 2 MiB page (does a large
  // buffer start on a page? GlobalMemory::alloc assumes so).
  std::printf("# map,cudamalloc_offset_in_2mib_page");
  std::vector<void*> probes;
  for (const size_t bytes : {size_t{4096}, size_t{1} << 20, size_t{3} << 20, size_t{6} << 20, size_t{396} << 20, size_t{5000}}) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, bytes));
    probes.push_back(p);
    std::printf(",%zu:%zu", bytes, static_cast<size_t>(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20)));
  }
  std::printf("\n");
  for (void* p : probes) CHECK(cudaFree(p));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  // Each region: a cycle through its lines in one random order (the same for every SM), line 0 first.
  std::vector<unsigned> order(kMapLines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(12345);
  std::shuffle(order.begin() + 1, order.end(), rng);
  std::vector<unsigned> host(static_cast<size_t>(sms) * kMapLines * kLineWords, 0);
  for (unsigned s = 0; s < sms; ++s)
    for (unsigned k = 0; k < kMapLines; ++k)
      host[(static_cast<size_t>(s) * kMapLines + order[k]) * kLineWords] = order[(k + 1) % kMapLines] * kLineWords;
  unsigned *regions, *sink, *ref, *lat;
  CHECK(cudaMalloc(&regions, host.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(regions, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&sink, 1024 * sizeof(unsigned)));
  CHECK(cudaMalloc(&ref, sizeof(unsigned)));
  const size_t per_sm = 2 * kMapLines + 2;
  CHECK(cudaMalloc(&lat, sms * per_sm * sizeof(unsigned)));
  CHECK(cudaMemset(lat, 0, sms * per_sm * sizeof(unsigned)));
  k_map_ref<<<1, 1024>>>(regions, static_cast<unsigned>(host.size()), sink, ref);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFuncSetAttribute(k_map_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem - 8192));
  k_map_probe<<<sms, 32, kSmem - 8192>>>(regions, lat);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned ref_sm = 0;
  CHECK(cudaMemcpy(&ref_sm, ref, sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::vector<unsigned> h(sms * per_sm);
  CHECK(cudaMemcpy(h.data(), lat, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  // Per SM: each pass's cycles per load (from its total), the median of the second pass's
  // per-load latencies, and the difference of the passes.
  std::vector<double> first(sms), second(sms), diff(sms), second_median(sms);
  for (unsigned s = 0; s < sms; ++s) {
    const unsigned* l = &h[s * per_sm];
    std::vector<double> sec(l + kMapLines + 1, l + 2 * kMapLines);
    first[s] = static_cast<double>(l[2 * kMapLines]) / kMapLines;
    second[s] = static_cast<double>(l[2 * kMapLines + 1]) / kMapLines;
    diff[s] = first[s] - second[s];
    second_median[s] = median(sec);
  }
  // Split at the largest gap of the sorted differences; partition 0 is the reference SM's side.
  std::vector<unsigned> by(sms);
  std::iota(by.begin(), by.end(), 0u);
  std::sort(by.begin(), by.end(), [&](unsigned x, unsigned y) { return diff[x] < diff[y]; });
  unsigned cut = 1;
  double gap = -1;
  for (unsigned i = 1; i < sms; ++i)
    if (diff[by[i]] - diff[by[i - 1]] > gap) {
      gap = diff[by[i]] - diff[by[i - 1]];
      cut = i;
    }
  std::vector<int> part(sms);
  for (unsigned i = 0; i < sms; ++i) part[by[i]] = i < cut ? 0 : 1;
  if (part[ref_sm] != 0)
    for (int& p : part) p = 1 - p;
  // Per SM, the share of its first pass's loads that were slow (above its second-pass median + 50
  // cycles): about half (the lines homed on the other side) for partition 1, none for partition 0.
  // (Line k of one SM's region and of another's are different addresses, homed independently.)
  std::vector<double> slow(sms, 0), slow_mean(2, 0);
  for (unsigned s = 0; s < sms; ++s) {
    for (unsigned k = 1; k < kMapLines; ++k) slow[s] += h[s * per_sm + k] > second_median[s] + 50 ? 1 : 0;
    slow[s] /= kMapLines - 1;
  }
  const std::vector<int> gpc = gpc_of_sm(static_cast<int>(sms));
  std::ofstream f(file);
  unsigned n0 = 0;
  for (unsigned s = 0; s < sms; ++s) {
    f << s << " " << part[s] << " " << gpc[s] << "\n";
    n0 += part[s] == 0 ? 1 : 0;
    slow_mean[part[s]] += slow[s];
    std::printf("# sm,%u,gpc,%d,partition,%d,first_pass_cycles_per_load,%.1f,second_pass_cycles_per_load,%.1f,"
                "second_pass_median_latency,%.0f,first_pass_slow_share,%.3f\n", s,
                gpc[s], part[s], first[s], second[s], second_median[s], slow[s]);
  }
  std::map<int, std::pair<int, int>> gpc_parts;  // gpc -> SMs in partition 0, 1
  for (unsigned s = 0; s < sms; ++s) (part[s] ? gpc_parts[gpc[s]].second : gpc_parts[gpc[s]].first)++;
  for (const auto& [g, c] : gpc_parts) std::printf("# gpc,%d,partition0_sms,%d,partition1_sms,%d\n", g, c.first, c.second);
  std::printf("# map,reference_sm,%u,partition0_sms,%u,partition1_sms,%u,largest_gap_cycles,%.1f,"
              "diff_range,%.1f..%.1f,first_pass_slow_share_partition0,%.3f,partition1,%.3f\n",
              ref_sm, n0, sms - n0, gap, diff[by[0]], diff[by[sms - 1]], slow_mean[0] / std::max(n0, 1u),
              slow_mean[1] / std::max(sms - n0, 1u));
  CHECK(cudaFree(regions));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(ref));
  CHECK(cudaFree(lat));
  return 0;
}

// ---- sweep ------------------------------------------------------------------------------------
struct Role {  // what the CTA on one SM reads: boxes first .. first + count - 1 from `start`, cyclically
  unsigned first, count, start, pair;  // count 0: idle. Lag modes: pair, start = 1 for the leader.
};

// kmajor: the map is K-major (make_strided_map, rows kKmajorPitch bytes apart) and box b is the
// (b % kKmajorBoxes)-th 128-byte column of row block b / kKmajorBoxes: a CTA's consecutive boxes are
// the consecutive k-blocks of one 128-row operand tile, as the GEMM reads A and B.
constexpr unsigned kKmajorPitch = 16384, kKmajorBoxes = kKmajorPitch / 128;
__device__ __forceinline__ void read_role(const CUtensorMap* map, const Role* roles, unsigned passes, CtaTiming* out,
                                          unsigned stages = kStages, int x = 0, bool kmajor = false) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned sm = sm_id();
  const Role r = sm < gridDim.x ? roles[sm] : Role{0, 0, 0, 0};  // roles[] has one entry per SM
  CtaTiming* o = out + blockIdx.x;
  o->smid = sm;
  o->ns0 = o->ns1 = o->c0 = o->c1 = 0;
  if (!r.count) return;
  const unsigned base = init_stage_ring(smem, stages, kBox), bars = base + stages * kBox;
  o->ns0 = static_cast<long long>(globaltimer());
  o->c0 = clock64();
  if (kmajor)
    tma_staged_loop(map, base, bars, kBox, stages, r.count * passes, [&](unsigned i) {
      const unsigned b = r.first + (r.start + i) % r.count;
      return make_int2(static_cast<int>((b % kKmajorBoxes) * 128), static_cast<int>((b / kKmajorBoxes) * kBoxRows));
    });
  else
    tma_stream_loop(map, base, bars, kBox, kBoxRows, kBoxRows * r.first, kBoxRows * r.count, stages, r.count * passes,
                    r.start, x);
  o->ns1 = static_cast<long long>(globaltimer());
  o->c1 = clock64();
}
// The same loop under two names: ncu profiles the k_measure launches only.
__global__ void k_warm(const __grid_constant__ CUtensorMap map, const Role* roles, unsigned passes, CtaTiming* out,
                       unsigned kmajor = 0) {
  read_role(&map, roles, passes, out, kStages, 0, kmajor != 0);
}
__global__ void k_measure(const __grid_constant__ CUtensorMap map, const Role* roles, unsigned passes, CtaTiming* out,
                          unsigned stages, int x, unsigned kmajor) {
  read_role(&map, roles, passes, out, stages, x, kmajor != 0);
}

// Lag modes: the leader (start = 1) streams its pair's `count` boxes once and publishes after each
// landed box how many have landed (done[32 * pair], st.release.gpu); the follower issues box i
// once that count reaches min(i + lag + 1, count) (ld.acquire.gpu, polled with a 64 ns sleep).
// Free modes (`free_run`): the follower waits so only for box 0, then streams unpaced, and its
// timing starts at its first issue: does a follower that hits its leader's lines catch up?
__global__ void k_measure_lag(const __grid_constant__ CUtensorMap map, const Role* roles, unsigned lag, unsigned* done,
                              CtaTiming* out, unsigned free_run, unsigned relaxed, unsigned stride) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned sm = sm_id();
  const Role r = sm < gridDim.x ? roles[sm] : Role{0, 0, 0, 0};
  CtaTiming* o = out + blockIdx.x;
  o->smid = sm;
  o->ns0 = o->ns1 = o->c0 = o->c1 = 0;
  if (!r.count) return;
  const bool leader = r.start == 1;
  unsigned* flag = done + 32 * r.pair;
  const unsigned base = init_stage_ring(smem, kStages, kBox), bars = base + kStages * kBox;
  o->ns0 = static_cast<long long>(globaltimer());
  o->c0 = clock64();
  for (unsigned i = 0; i < r.count + kStages; ++i) {
    const unsigned s = i % kStages;
    if (i >= kStages) {
      mbar_wait(bars + 8 * s, ((i - kStages) / kStages) & 1);
      // (A release store per box costs the leader about half a microsecond on an H200: in the free
      // modes it publishes only until its follower has started.)
      if (leader && relaxed)  // lagr modes: no release, so no wait for the leader's earlier accesses
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(i - kStages + 1) : "memory");
      else if (leader && (!free_run || i - kStages + 1 <= lag + 1))
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(i - kStages + 1) : "memory");
    }
    if (i < r.count) {
      if (!leader && (!free_run || i == 0)) {
        const unsigned need = min(i + lag + 1, r.count);
        for (;;) {
          unsigned v;
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
          if (v >= need) break;
          __nanosleep(64);
        }
        if (free_run) {
          o->ns0 = static_cast<long long>(globaltimer());
          o->c0 = clock64();
        }
      }
      mbar_arrive_expect_tx(bars + 8 * s, kBox);
      tma_load_2d(base + s * kBox, &map, 0, static_cast<int>((r.first + i * stride) * kBoxRows), bars + 8 * s);
    }
  }
  o->ns1 = static_cast<long long>(globaltimer());
  o->c1 = clock64();
}

struct Parts {
  std::vector<unsigned> sms[2];  // smids of partition 0 and 1, ascending
  std::vector<int> of;           // partition of each smid
};

Parts read_parts(const char* file, unsigned sms) {
  Parts p;
  p.of.assign(sms, -1);
  std::ifstream f(file);
  unsigned s;
  int part, gpc;
  while (f >> s >> part >> gpc)
    if (s < sms && (part == 0 || part == 1)) {
      p.of[s] = part;
      p.sms[part].push_back(s);
    }
  if (p.sms[0].size() + p.sms[1].size() != sms || p.sms[0].empty() || p.sms[1].empty()) {
    std::fprintf(stderr, "bad partition map %s\n", file);
    std::exit(1);
  }
  return p;
}

// Pairs {a, b}: within each partition (SM i with SM i + half of that partition's list) or across
// (the i-th SM of each partition).
std::vector<std::pair<unsigned, unsigned>> make_pairs(const Parts& p, bool cross, int only = -1) {
  std::vector<std::pair<unsigned, unsigned>> pairs;
  if (cross) {
    for (size_t i = 0; i < std::min(p.sms[0].size(), p.sms[1].size()); ++i)
      pairs.push_back(i % 2 ? std::make_pair(p.sms[1][i], p.sms[0][i]) : std::make_pair(p.sms[0][i], p.sms[1][i]));
    return pairs;
  }
  std::vector<std::pair<unsigned, unsigned>> side[2];
  for (int g = 0; g < 2; ++g) {
    if (only >= 0 && g != only) continue;
    const size_t h = p.sms[g].size() / 2;
    for (size_t i = 0; i < h; ++i) side[g].push_back({p.sms[g][i], p.sms[g][i + h]});
  }
  // Interleave the two sides so that consecutive slices alternate partitions.
  for (size_t i = 0; i < std::max(side[0].size(), side[1].size()); ++i)
    for (int g = 0; g < 2; ++g)
      if (i < side[g].size()) pairs.push_back(side[g][i]);
  return pairs;
}

// The modes whose pairs stream one cold region once: lag_* (the follower paced L boxes behind) and
// free_* (the follower unpaced once it has started); *_cross pairs SMs of both partitions.
bool streamed_pairs(const std::string& mode) {
  return mode.rfind("lag_", 0) == 0 || mode.rfind("lagr_", 0) == 0 || mode.rfind("lagi_", 0) == 0 ||
         mode.rfind("free_", 0) == 0;
}
bool cross_pairs(const std::string& mode) { return mode.size() > 6 && mode.compare(mode.size() - 6, 6, "_cross") == 0; }

struct Phase {  // a launch before the warm-up (the reref modes): every SM's role, its passes
  std::vector<Role> roles;
  unsigned passes = 1;
};

struct Plan {
  std::vector<Phase> before;  // after the flush, before the warm-up
  std::vector<Role> warm, measure;
  unsigned boxes = 0;   // footprint in boxes (the lag modes: the leaders' boxes)
  unsigned region = 0;  // boxes allocated when not the footprint's (the reref modes)
  unsigned passes = 2;
  bool flush = false;   // a flush before everything (the lag modes always)
  unsigned box_stride = 1;  // the lag modes: boxes between a pair's consecutive boxes
};

constexpr unsigned kRerefMib = 16;  // the reref modes' X and Y, each

Plan make_plan(const std::string& mode, unsigned param, const Parts& p, unsigned sms) {
  Plan plan;
  plan.warm.assign(sms, Role{0, 0, 0, 0});
  const unsigned n = param * 64;
  auto pairs_plan = [&](const std::vector<std::pair<unsigned, unsigned>>& pairs) {
    const unsigned m = static_cast<unsigned>(pairs.size()), slice = n / m;
    for (unsigned i = 0; i < m; ++i) {
      plan.warm[pairs[i].first] = Role{i * slice, slice, 0, i};
      plan.warm[pairs[i].second] = Role{i * slice, slice, slice / 2, i};
    }
    plan.boxes = m * slice;
  };
  auto all_read_all = [&](const std::vector<unsigned>& readers) {
    const unsigned k = static_cast<unsigned>(readers.size());
    for (unsigned i = 0; i < k; ++i) plan.warm[readers[i]] = Role{0, n, i * n / k, 0};
    plan.boxes = n;
  };
  std::vector<unsigned> all(sms);
  std::iota(all.begin(), all.end(), 0u);
  if (streamed_pairs(mode)) {  // each pair its own kLagBoxes boxes; the first of a pair leads
    const auto pairs = make_pairs(p, cross_pairs(mode));
    plan.measure.assign(sms, Role{0, 0, 0, 0});
    if (mode.rfind("lagi_", 0) == 0) plan.box_stride = static_cast<unsigned>(pairs.size());  // box j of pair i at j x pairs + i
    for (unsigned i = 0; i < pairs.size(); ++i) {
      const unsigned first = plan.box_stride == 1 ? i * kLagBoxes : i;
      plan.measure[pairs[i].first] = Role{first, kLagBoxes, 1, i};
      plan.measure[pairs[i].second] = Role{first, kLagBoxes, 0, i};
    }
    plan.boxes = static_cast<unsigned>(pairs.size()) * kLagBoxes;
    plan.passes = 1;
    return plan;
  }
  if (mode == "shared") {
    all_read_all(all);
  } else if (mode == "shared_half0") {
    all_read_all(p.sms[0]);
  } else if (mode == "split") {
    const unsigned count = n / sms;
    for (unsigned s = 0; s < sms; ++s) plan.warm[s] = Role{s * count, count, 0, s};
    plan.boxes = sms * count;
  } else if (mode == "pair_same") {
    pairs_plan(make_pairs(p, false));
  } else if (mode == "pair_cross") {
    pairs_plan(make_pairs(p, true));
  } else if (mode == "half0" || mode == "half1") {
    pairs_plan(make_pairs(p, false, mode == "half0" ? 0 : 1));
  } else if (mode == "check_same" || mode == "check_cross") {
    const std::vector<unsigned>& a = p.sms[0];
    const unsigned k = static_cast<unsigned>(std::min(a.size(), p.sms[1].size())), slice = n / k;
    plan.measure.assign(sms, Role{0, 0, 0, 0});
    for (unsigned i = 0; i < k; ++i) {
      plan.warm[a[i]] = Role{i * slice, slice, 0, i};
      // same: the slice of the SM half the list away (likely another GPC); cross: partition 1's i-th SM.
      const unsigned reader = mode == "check_same" ? a[(i + k / 2) % k] : p.sms[1][i];
      plan.measure[reader] = Role{i * slice, slice, 0, i};
    }
    plan.boxes = k * slice;
    plan.passes = 1;
    return plan;
  } else if (mode == "promo_even" || mode == "promo_odd") {
    // Rows 256 bytes apart, boxes of their first 128 (L2 promotion 256B): partition 0's SMs read
    // their slices cold, which brings each row's second 128 bytes into the L2 too; then another SM
    // of partition 0 reads each slice's first halves again (even) or the promoted second halves
    // (odd). Lines homed in partition 1 cross in the odd pass unless partition 0 kept a copy of
    // what was promoted.
    const std::vector<unsigned>& a = p.sms[0];
    const unsigned k = static_cast<unsigned>(a.size()), slice = n / 2 / k;
    plan.measure.assign(sms, Role{0, 0, 0, 0});
    for (unsigned i = 0; i < k; ++i) {
      plan.warm[a[i]] = Role{i * slice, slice, 0, i};
      plan.measure[a[(i + k / 2) % k]] = Role{i * slice, slice, 0, i};
    }
    plan.boxes = k * slice;
    plan.passes = 1;
    return plan;
  } else if (mode.rfind("reref", 0) == 0) {
    // Does a line read twice outlast one read once? After a flush every SM reads its slice of X
    // (16 MiB) twice (rerefp: the second time another SM of its partition reads it), then its
    // slice of Y (16 MiB) once, then of Z (PARAM MiB of new lines) once; the measured launch
    // reads X (reref_x) or Y (reref_y) once more. Recency alone (LRU) loses X first; a policy
    // that keeps re-read lines (clock's second chance) loses Y first. rerefj: X read once by
    // pairs of SMs of one partition at the same time (each pair a slice, both from its start: the
    // second reader's requests join the first's in flight, as a GEMM's A tile is read).
    // partner: SM s's slice read by another SM of its partition ('p') or of the other ('c').
    auto slices = [&](unsigned first, unsigned boxes, char partner) {
      std::vector<Role> roles(sms, Role{0, 0, 0, 0});
      for (unsigned s = 0; s < sms; ++s) {
        const std::vector<unsigned>& side = p.sms[p.of[s]];
        const size_t i = std::find(side.begin(), side.end(), s) - side.begin();
        const std::vector<unsigned>& other = p.sms[1 - p.of[s]];
        const unsigned reader = partner == 'p' ? side[(i + side.size() / 2) % side.size()]
                                : partner == 'c' ? other[i % other.size()] : s;
        roles[reader] = Role{first + s * (boxes / sms), boxes / sms, 0, s};
      }
      return roles;
    };
    const char partner = mode[5];  // reref_*, rerefp_*, rerefc_*, rerefj_*
    if (partner == 'c' && p.sms[0].size() != p.sms[1].size()) {
      std::fprintf(stderr, "%s needs partitions of as many SMs (%zu and %zu)\n", mode.c_str(), p.sms[0].size(), p.sms[1].size());
      std::exit(1);
    }
    const unsigned side = kRerefMib * 64;
    if (partner == 'j') {
      const auto pairs = make_pairs(p, false);
      const unsigned m = static_cast<unsigned>(pairs.size()), slice = side / m;
      std::vector<Role> joined(sms, Role{0, 0, 0, 0});
      for (unsigned i = 0; i < m; ++i) joined[pairs[i].first] = joined[pairs[i].second] = Role{i * slice, slice, 0, i};
      plan.before = {Phase{joined, 1}, Phase{slices(side, side, '_'), 1}};
    } else if (partner != '_') {
      plan.before = {Phase{slices(0, side, '_'), 1}, Phase{slices(0, side, partner), 1}, Phase{slices(side, side, '_'), 1}};
    } else {
      plan.before = {Phase{slices(0, side, '_'), 2}, Phase{slices(side, side, '_'), 1}};
    }
    plan.warm = slices(2 * side, n, '_');
    plan.measure = slices(mode.back() == 'x' ? 0 : side, side, '_');
    plan.boxes = sms * (side / sms);
    plan.region = 2 * side + n;
    plan.passes = 1;
    plan.flush = true;
    return plan;
  } else if (mode.rfind("oneway_back", 0) == 0) {
    // oneway_back*: oneway* with the partitions' roles exchanged (partition 1's SMs warm the first
    // half, partition 0's read it, or partition 1's own): the crossing the other way.
    Parts swapped = p;
    std::swap(swapped.sms[0], swapped.sms[1]);
    return make_plan("oneway" + mode.substr(std::string("oneway_back").size()), param, swapped, sms);
  } else if (mode == "swap" || mode == "stay" || mode == "oneway" || mode == "oneway_stay" || mode == "oneway_cold" ||
             mode == "oneway_cold_stay") {
    // The footprint's first half warmed by partition 0's SMs, its second by partition 1's, each SM
    // a slice; measured (one pass): swap: each slice read by the SM of the other partition with
    // the same index, so the lines homed on the warming side cross the fabric, in both directions
    // at once; stay: by another SM of the warming partition (near copies and home hits only).
    // oneway / oneway_stay: the same for the first half only (partition 1's SMs read what
    // partition 0's warmed, or partition 0's own SMs do; the other partition's SMs idle).
    const bool cross = mode == "swap" || mode == "oneway" || mode == "oneway_cold",
               both = mode == "swap" || mode == "stay", cold = mode == "oneway_cold" || mode == "oneway_cold_stay";
    const unsigned k = static_cast<unsigned>(std::min(p.sms[0].size(), p.sms[1].size())), half = n / 2,
                   slice = half / k;
    plan.measure.assign(sms, Role{0, 0, 0, 0});
    for (int g = 0; g < (both ? 2 : 1); ++g)
      for (unsigned i = 0; i < k; ++i) {
        const Role role{g * half + i * slice, slice, 0, i};
        if (!cold) plan.warm[p.sms[g][i]] = role;
        plan.measure[cross ? p.sms[1 - g][i] : p.sms[g][(i + k / 2) % k]] = role;
      }
    plan.boxes = (both ? 2 : 1) * k * slice;
    plan.passes = 1;
    return plan;
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    std::exit(1);
  }
  plan.measure = plan.warm;
  return plan;
}

int run_sweep(const char* file, int argc, char** argv) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  const Parts parts = read_parts(file, sms);
  CHECK(cudaFuncSetAttribute(k_warm, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(k_measure, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(k_measure_lag, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  Role* roles;
  CtaTiming* timing;
  unsigned* done;
  CHECK(cudaMalloc(&roles, sms * sizeof(Role)));
  CHECK(cudaMalloc(&timing, sms * sizeof(CtaTiming)));
  CHECK(cudaMalloc(&done, 32 * sms * sizeof(unsigned)));
  // The lag modes' flush: 160 MiB read once, split among all SMs (evicts what the memset left).
  const unsigned flush_boxes = 160 * 64;
  void* flush_region;
  CHECK(cudaMalloc(&flush_region, static_cast<size_t>(flush_boxes) * kBox));
  CHECK(cudaMemset(flush_region, 3, static_cast<size_t>(flush_boxes) * kBox));
  const CUtensorMap flush_map = make_map(flush_region, flush_boxes * kBoxRows, kBoxRows);
  std::vector<Role> flush_roles(sms);
  for (unsigned s = 0; s < sms; ++s) flush_roles[s] = Role{s * (flush_boxes / sms), flush_boxes / sms, 0, s};
  for (int a = 0; a < argc; ++a) {
    const std::string point = argv[a];
    const size_t colon = point.find(':');
    std::string mode = point.substr(0, colon);
    const bool deep = mode.size() > 3 && mode.compare(mode.size() - 3, 3, "_s8") == 0;  // 8 boxes in flight per SM
    if (deep) mode.resize(mode.size() - 3);
    // Contiguous boxes with the 256B L2 promotion: _c256. GEMM-like boxes: _k with the 256B L2
    // promotion (the GEMM's), _k128 with 128B.
    const bool c256 = mode.size() > 5 && mode.compare(mode.size() - 5, 5, "_c256") == 0;
    if (c256) mode.resize(mode.size() - 5);
    const bool k128 = mode.size() > 5 && mode.compare(mode.size() - 5, 5, "_k128") == 0;
    if (k128) mode.resize(mode.size() - 3);
    const bool kmajor = mode.size() > 2 && mode.compare(mode.size() - 2, 2, "_k") == 0;
    if (kmajor) mode.resize(mode.size() - 2);
    const unsigned param = static_cast<unsigned>(std::stoul(point.substr(colon + 1)));
    const bool lag = streamed_pairs(mode), free_run = mode.rfind("free_", 0) == 0;
    const Plan plan = make_plan(mode, param, parts, sms);
    const unsigned region_boxes = plan.region ? plan.region : lag ? plan.boxes : param * 64;
    void* region;
    CHECK(cudaMalloc(&region, static_cast<size_t>(region_boxes) * kBox));
    CHECK(cudaMemset(region, 7, static_cast<size_t>(region_boxes) * kBox));
    const bool promo = mode == "promo_even" || mode == "promo_odd";  // rows of 256 bytes, promotion 256B
    const CUtensorMap map = kmajor ? make_strided_map(region, kKmajorPitch, region_boxes, kBoxRows,
                                                      k128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                                           : CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
                            : promo ? make_strided_map(region, 256, region_boxes * kBoxRows / 2, kBoxRows,
                                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
                                  : make_map(region, region_boxes * kBoxRows, kBoxRows,
                                             c256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    if (lag) {
      CHECK(cudaMemset(done, 0, 32 * sms * sizeof(unsigned)));
      CHECK(cudaMemcpy(roles, flush_roles.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
      k_warm<<<sms, 32, kSmem>>>(flush_map, roles, 1, timing);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(roles, plan.measure.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
      k_measure_lag<<<sms, 32, kSmem>>>(map, roles, param, done, timing, free_run ? 1u : 0u,
                                        mode.rfind("lagr_", 0) == 0 ? 1u : 0u,
                                        plan.box_stride);
    } else {
      if (plan.flush || mode == "swap" || mode == "stay" || mode.rfind("oneway", 0) == 0 || promo) {  // the memset's lines out first
        CHECK(cudaMemcpy(roles, flush_roles.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
        k_warm<<<sms, 32, kSmem>>>(flush_map, roles, 1, timing);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
      }
      for (const Phase& ph : plan.before) {
        CHECK(cudaMemcpy(roles, ph.roles.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
        k_warm<<<sms, 32, kSmem>>>(map, roles, ph.passes, timing, kmajor);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
      }
      CHECK(cudaMemcpy(roles, plan.warm.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
      k_warm<<<sms, 32, kSmem>>>(map, roles, 1, timing, kmajor);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(roles, plan.measure.data(), sms * sizeof(Role), cudaMemcpyHostToDevice));
      k_measure<<<sms, 32, kSmem>>>(map, roles, plan.passes, timing, deep ? 8u : kStages, mode == "promo_odd" ? 128 : 0,
                                    kmajor);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const std::vector<CtaTiming> t = read_cta_timings(timing, sms);
    if (a == 0) {
      std::string cta_part;
      for (const CtaTiming& c : t) cta_part += static_cast<char>('0' + parts.of[c.smid]);
      std::printf("# cta_partition,%s\n", cta_part.c_str());
    }
    long long cycles = 0;
    double mhz = 0, loaded = 0;
    unsigned active = 0;
    for (const CtaTiming& c : t) {
      if (c.c1 == 0) continue;
      ++active;
      cycles = std::max(cycles, c.c1 - c.c0);
      mhz += c.mhz();
      const Role& r = plan.measure[c.smid];
      loaded += static_cast<double>(r.count) * (lag ? 1 : plan.passes) * kBox;
    }
    mhz /= std::max(active, 1u);
    if (lag && !free_run) {  // the spread of the leaders' and the followers' spans (globaltimer, ns)
      std::vector<long long> spans[2];
      for (const CtaTiming& c : t)
        if (c.c1 != 0) spans[plan.measure[c.smid].start == 1 ? 0 : 1].push_back(c.ns1 - c.ns0);
      for (auto& v : spans) std::sort(v.begin(), v.end());
      const size_t n = spans[0].size();
      if (n && spans[1].size() == n)
        std::printf("spans,%d,%s,%u,leader_ns p10 %lld p50 %lld p90 %lld max %lld,follower_ns p10 %lld p50 %lld p90 %lld max %lld\n",
                    a, mode.c_str(), param, spans[0][n / 10], spans[0][n / 2], spans[0][9 * n / 10], spans[0][n - 1],
                    spans[1][n / 10], spans[1][n / 2], spans[1][9 * n / 10], spans[1][n - 1]);
    }
    if (free_run) {  // per pair: the follower's start and end behind its leader's (globaltimer, ns)
      std::vector<long long> lead_ns0(sms, -1), lead_ns1(sms, -1), start_gap, end_gap;
      for (const CtaTiming& c : t)
        if (c.c1 != 0 && plan.measure[c.smid].start == 1) {
          lead_ns0[plan.measure[c.smid].pair] = c.ns0;
          lead_ns1[plan.measure[c.smid].pair] = c.ns1;
        }
      for (const CtaTiming& c : t) {
        const Role& r = plan.measure[c.smid];
        if (c.c1 == 0 || r.start == 1 || lead_ns0[r.pair] < 0) continue;
        start_gap.push_back(c.ns0 - lead_ns0[r.pair]);
        end_gap.push_back(c.ns1 - lead_ns1[r.pair]);
      }
      std::sort(start_gap.begin(), start_gap.end());
      std::sort(end_gap.begin(), end_gap.end());
      const size_t n = end_gap.size();
      if (n) std::printf("free,%d,%s,%u,pairs %zu,start_gap_ns p10 %lld p50 %lld p90 %lld,end_gap_ns p10 %lld p50 %lld p90 %lld\n",
                         a, mode.c_str(), param, n, start_gap[n / 10], start_gap[n / 2], start_gap[9 * n / 10],
                         end_gap[n / 10], end_gap[n / 2], end_gap[9 * n / 10]);
    }
    {  // each partition's readers: the median and the longest span (clock64 cycles), and how many
      std::vector<long long> spans[2];
      for (const CtaTiming& c : t)
        if (c.c1 != 0) spans[parts.of[c.smid] ? 1 : 0].push_back(c.c1 - c.c0);
      for (auto& v : spans) std::sort(v.begin(), v.end());
      std::printf("partition_spans,%d,%s%s%s,%u", a, mode.c_str(), kmajor ? (k128 ? "_k128" : "_k") : c256 ? "_c256" : "", deep ? "_s8" : "",
                  param);
      for (const auto& v : spans)
        std::printf(",%zu,%lld,%lld", v.size(), v.empty() ? 0 : v[v.size() / 2], v.empty() ? 0 : v.back());
      std::printf("\n");
    }
    std::printf("row,%d,%s%s%s,%u,%llu,%u,%.0f,%u,%lld,%.0f,%.1f\n", a, mode.c_str(), kmajor ? (k128 ? "_k128" : "_k") : c256 ? "_c256" : "",
                deep ? "_s8" : "", param,
                static_cast<unsigned long long>(plan.boxes) * kBox, active, loaded, plan.passes, cycles, mhz,
                loaded / static_cast<double>(std::max(cycles, 1LL)));
    std::fflush(stdout);
    CHECK(cudaFree(region));
  }
  CHECK(cudaFree(flush_region));
  CHECK(cudaFree(roles));
  CHECK(cudaFree(timing));
  CHECK(cudaFree(done));
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "map") return run_map(argv[2]);
  if (argc >= 4 && std::string(argv[1]) == "sweep") return run_sweep(argv[2], argc - 3, argv + 3);
  std::fprintf(stderr, "usage: h100_l2_partitions map FILE | sweep FILE MODE:PARAM...\n");
  return 1;
}
