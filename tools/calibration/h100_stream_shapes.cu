// What holds an all-SM stream of L2 hits at ~7.4 TB/s of read sectors, when the same L2 serves
// 8-9 TB/s of them in the 4096^3 GEMMs (h100_l2_merge_ncu.csv)? The box's shape and row pitch and
// the bytes in flight, one at a time: every SM streams L2-resident boxes of data no other SM of its
// GPC reads at the same time (so nothing is joined: h100_l2_merge_ncu.csv), one thread issuing,
// STAGES boxes in flight.
//
// Prints CSV rows tma_stream_shape_<variant>_bytes_per_ns_x100,<bytes in flight per SM>,<value>
// (aggregate bytes per ns x 100 from the first CTA's start to the last one's end; the header's
// nvidia-smi clock converts to cycles):
// - contig32k: 32 KiB boxes of 256 contiguous 128-byte rows, each SM its own 256 KiB (as
//   h100_units2.cu's tma_stream_all_sms_l2_bytes_per_cycle_x100);
// - contig16k: 16 KiB boxes of 128 contiguous rows, each SM its own 256 KiB;
// - pitch8k16k: 16 KiB boxes of 128 rows 8 KiB apart, 128 bytes wide, consecutive loads walking
//   along the rows (x) as a K-major GEMM operand's k-blocks do; CTA c reads row block c % 16 (16
//   MiB in all), starting at k-block 8 x (c / 16) so that the SMs sharing rows (one per GPC) are
//   8 k-blocks apart;
// - pitch4k32k: the same with 32 KiB boxes of 256 rows 4 KiB apart;
// - contig32k_p256, pitch8k16k_p256, contig32k_pnone: contig32k and pitch8k16k with the map's L2
//   promotion 256B instead of 128B (gemm_sm90_twin.cu's maps), and contig32k with none.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_stream_shapes.cu -lcuda
#include "calibration_ptx.cuh"

#include <cstdio>

enum class Walk { Rows, Columns };

__global__ void k_stream(const __grid_constant__ CUtensorMap map, unsigned box_bytes, unsigned box_rows,
                         unsigned stages, unsigned loads, Walk walk, unsigned region_boxes,
                         unsigned long long* span) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  const unsigned base = init_stage_ring(smem, stages, box_bytes);
  const unsigned bars = base + stages * box_bytes;
  atomicMin(&span[0], globaltimer());
  const unsigned c = blockIdx.x;
  tma_staged_loop(&map, base, bars, box_bytes, stages, loads, [&](unsigned i) {
    if (walk == Walk::Rows)  // own region: region_boxes boxes of consecutive rows
      return make_int2(0, static_cast<int>((c * region_boxes + i % region_boxes) * box_rows));
    // row block c % 16, k-block (8 (c / 16) + i) % region_boxes
    return make_int2(static_cast<int>(((8 * (c / 16) + i) % region_boxes) * 128), static_cast<int>((c % 16) * box_rows));
  });
  atomicMax(&span[1], globaltimer());
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const unsigned sms = static_cast<unsigned>(prop.multiProcessorCount);
  std::printf("# device,%s,sms,%d\nscenario,param,cycles\n", prop.name, prop.multiProcessorCount);
  void* buf;
  const size_t bytes = 64ull << 20;
  CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMemset(buf, 1, bytes));
  unsigned long long* span;
  CHECK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));

  struct Variant {
    const char* name;
    CUtensorMap map;
    unsigned box_rows, box_bytes;
    Walk walk;
    unsigned region_boxes;
  };
  const Variant variants[] = {
      {"contig32k", make_map(buf, sms * 2048, 256), 256, 32768, Walk::Rows, 8},
      {"contig16k", make_map(buf, sms * 2048, 128), 128, 16384, Walk::Rows, 16},
      {"pitch8k16k", make_strided_map(buf, 8192, 16 * 128, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B), 128, 16384,
       Walk::Columns, 64},
      {"pitch4k32k", make_strided_map(buf, 4096, 16 * 256, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_128B), 256, 32768,
       Walk::Columns, 32},
      {"contig32k_p256", make_map(buf, sms * 2048, 256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), 256, 32768, Walk::Rows,
       8},
      {"pitch8k16k_p256", make_strided_map(buf, 8192, 16 * 128, 128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), 128, 16384,
       Walk::Columns, 64},
      {"contig32k_pnone", make_map(buf, sms * 2048, 256, CU_TENSOR_MAP_L2_PROMOTION_NONE), 256, 32768, Walk::Rows, 8},
  };
  for (const Variant& v : variants) {
    for (const unsigned in_flight : {65536u, 131072u, 196608u}) {
      const unsigned stages = in_flight / v.box_bytes;
      const unsigned loads = (16u << 20) / v.box_bytes;  // 16 MiB per SM
      const unsigned smem = stages * v.box_bytes + 2048;
      CHECK(cudaFuncSetAttribute(k_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      double best = 0;
      for (int rep = 0; rep < 3; ++rep) {  // the first warms the L2; the best of the three kept
        const unsigned long long init[2] = {~0ull, 0};
        CHECK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
        k_stream<<<sms, 32, smem>>>(v.map, v.box_bytes, v.box_rows, stages, loads, v.walk, v.region_boxes, span);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        unsigned long long h[2];
        CHECK(cudaMemcpy(h, span, sizeof(h), cudaMemcpyDeviceToHost));
        const double rate = static_cast<double>(sms) * loads * v.box_bytes / static_cast<double>(h[1] - h[0]);
        if (rep > 0 && rate > best) best = rate;
      }
      std::printf("tma_stream_shape_%s_bytes_per_ns_x100,%u,%lld\n", v.name, in_flight,
                  static_cast<long long>(best * 100));
      std::fflush(stdout);
    }
  }
  return 0;
}
