// h100_l2_slices: how evenly the L2's slices share the lines of an address pattern. The model's L2 is one
// pooled link (sim_configs/h100.yaml `l2.gbytes_per_second`), as if every box spread its lines
// evenly over the slices. A GEMM's operand box is 64-128 rows of one 128-byte line each, the rows a
// whole K apart (16 KiB at K = 8192 bf16): if the slice hash maps such strided rows onto a few
// slices, those slices are hot while the box streams, and the SMs reading it slow down for as long
// as they read that region. Nsight Compute reports lts__t_sectors per slice only as its sum, mean,
// max and min over the slices (no per-slice values), and that is enough: the busiest slice's
// sectors beyond the idlest one's say how many of the pattern's lines it holds.
//
// CLI: h100_l2_slices PATTERN...   each PATTERN is LINES:STRIDE:OFFSET (bytes) and is one launch of
// k_lines: one CTA of 256 threads reads LINES lines at OFFSET + i * STRIDE of a 1 GiB buffer,
// each line as one warp's 32 x 4-byte ld.global.cg (one 128-byte request), REPS = 64 times over,
// so the slices' sector counts are 64 x 4 x LINES plus the first pass's misses. LINES is 1..4096,
// STRIDE and OFFSET multiples of 128 (one request per line), all within the buffer; every pattern
// is checked before the first launch. Run it under ncu with lts__t_sectors.{sum,avg,max,min}
// (run_l2_slices.sh); stdout has one "pattern,<index>,<lines>,<stride>,<offset>" line per launch,
// in launch order.
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_l2_slices.cu -lcuda
#include "calibration_ptx.cuh"

namespace {
constexpr int kReps = 64;
constexpr std::size_t kBufferBytes = std::size_t{1} << 30;

__global__ void k_lines(const unsigned* base, unsigned lines, unsigned long long stride, unsigned long long offset,
                        unsigned* sink) {
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned sum = 0;
  for (int r = 0; r < kReps; ++r)
    for (unsigned i = warp; i < lines; i += blockDim.x / 32) {
      const char* line = reinterpret_cast<const char*>(base) + offset + i * stride;
      sum += ld_cg(reinterpret_cast<const unsigned*>(line) + lane);
    }
  if (sum == 0x9e3779b9u) sink[threadIdx.x] = sum;  // keeps the loads; practically never stores
}
}  // namespace

struct Pattern {
  unsigned lines;
  unsigned long long stride, offset;
};

// LINES:STRIDE:OFFSET as the CLI says, or false.
bool parse(const char* text, Pattern& p) {
  long long lines = 0;
  unsigned long long stride = 0, offset = 0;
  char end = 0;
  if (std::sscanf(text, "%lld:%llu:%llu%c", &lines, &stride, &offset, &end) != 3) return false;
  if (lines < 1 || lines > 4096 || stride % 128 || offset % 128 || stride > kBufferBytes || offset > kBufferBytes)
    return false;
  p = {static_cast<unsigned>(lines), stride, offset};
  return offset + (p.lines - 1ull) * stride + 128 <= kBufferBytes;  // no overflow: each term < 2^43
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: h100_l2_slices LINES:STRIDE:OFFSET...\n");
    return 2;
  }
  std::vector<Pattern> patterns(argc - 1);
  for (int p = 1; p < argc; ++p)
    if (!parse(argv[p], patterns[p - 1])) {
      std::fprintf(stderr, "bad pattern '%s': LINES 1..4096, STRIDE and OFFSET multiples of 128, within 1 GiB\n",
                   argv[p]);
      return 2;
    }
  unsigned* buffer = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&buffer, kBufferBytes));
  CHECK(cudaMemset(buffer, 1, kBufferBytes));
  CHECK(cudaMalloc(&sink, 1024 * sizeof(unsigned)));
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const Pattern& p = patterns[i];
    k_lines<<<1, 256>>>(buffer, p.lines, p.stride, p.offset, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("pattern,%zu,%u,%llu,%llu\n", i, p.lines, p.stride, p.offset);
  }
  CHECK(cudaFree(buffer));
  CHECK(cudaFree(sink));
  return 0;
}
