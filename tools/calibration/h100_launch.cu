// The GPU-side cost of a kernel launch: 1000 empty kernels captured in one CUDA graph run back to
// back (no host submission in between); the time per kernel in SM cycles at the device's clock.
// Prints one CSV row: kernel_launch_gap,1,<cycles>.
// Build: nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a h100_launch.cu
#include <cuda_runtime.h>

#include <cstdio>

__global__ void k_empty() {}

int main() {
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess || khz == 0) return 1;
  cudaStream_t s;
  cudaStreamCreate(&s);
  const int n = 1000;
  cudaGraph_t graph;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < n; ++i) k_empty<<<1, 32, 0, s>>>();
  cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec;
  if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return 1;
  cudaGraphLaunch(exec, s);  // warm-up
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s);
  cudaGraphLaunch(exec, s);
  cudaEventRecord(b, s);
  if (cudaEventSynchronize(b) != cudaSuccess) return 1;
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  std::printf("kernel_launch_gap,1,%.0f\n", ms * 1e6 / n * khz / 1e6);
  return 0;
}
