// h100_gpc_map: which SMs share a GPC, and how many TPCs each GPC has. A thread block cluster runs
// on the SMs of one GPC, so the SMs of one cluster are GPC-mates: launches of clusters of 2..16 CTAs
// (one CTA per SM: each asks for more than half an SM's shared memory), each CTA recording its
// %smid and %clusterid, join SMs into groups (union-find over all launches); the groups are the
// GPCs. Independently, cudaOccupancyMaxActiveClusters for each cluster size C counts the clusters
// of C one-per-SM CTAs the chip holds at once: sum over GPCs of floor(SMs in the GPC / C), which the
// groups' sizes must reproduce for every C.
// Output: "# gpc,<index>,<SM count>,<smids>" per group, then CSV rows
// gpc_map_max_active_clusters,<C>,<count> for C = 1..16 (16 needs the non-portable size attribute).
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_gpc_map.cu -lcuda
#include "calibration_ptx.cuh"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

constexpr unsigned kSmem = 133120;  // > half of an SM's 228 KiB: one CTA per SM

__global__ void k_where(unsigned* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  unsigned cluster;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
  out[2 * blockIdx.x] = sm_id();
  out[2 * blockIdx.x + 1] = cluster;
  smem[0] = 1;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  CHECK(cudaFuncSetAttribute(k_where, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK(cudaFuncSetAttribute(k_where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  unsigned* out;
  CHECK(cudaMalloc(&out, 2 * 1024 * sizeof(unsigned)));
  std::vector<int> parent(1024);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<int> seen(1024, 0);
  std::vector<int> max_active(17, 0);
  for (int c = 1; c <= 16; ++c) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = cluster_launch(c, kSmem, attr);
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, k_where, &cfg));
    max_active[c] = clusters;
    if (clusters == 0) continue;
    for (int rep = 0; rep < 4; ++rep) {  // several launches: placements may differ
      cfg.gridDim = dim3(clusters * c);
      CHECK(cudaLaunchKernelEx(&cfg, k_where, out));
      CHECK(cudaDeviceSynchronize());
      std::vector<unsigned> h(2 * clusters * c);
      CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
      std::map<unsigned, int> first_of_cluster;
      for (int b = 0; b < clusters * c; ++b) {
        // Clusters are numbered per launch; CTAs of one cluster are consecutive in blockIdx.x.
        const unsigned sm = h[2 * b], cl = static_cast<unsigned>(b / c);
        seen[sm] = 1;
        auto it = first_of_cluster.find(cl);
        if (it == first_of_cluster.end()) first_of_cluster[cl] = static_cast<int>(sm);
        else parent[find_root(parent, static_cast<int>(sm))] = find_root(parent, it->second);
      }
    }
  }
  std::map<int, std::vector<int>> groups;
  for (int sm = 0; sm < sms; ++sm)
    if (seen[sm]) groups[find_root(parent, sm)].push_back(sm);
  int g = 0;
  for (const auto& [root, members] : groups) {
    std::printf("# gpc,%d,%zu,", g++, members.size());
    for (size_t i = 0; i < members.size(); ++i) std::printf("%s%d", i ? " " : "", members[i]);
    std::printf("\n");
  }
  std::printf("scenario,param,value\n");
  for (int c = 1; c <= 16; ++c) std::printf("gpc_map_max_active_clusters,%d,%d\n", c, max_active[c]);
  CHECK(cudaFree(out));
  return 0;
}
