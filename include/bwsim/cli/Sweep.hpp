#pragma once
// bwsim sweep: a kernel run at every combination of parameter lists (--param NAME=V1,V2,...), the
// last list fastest; a table and a CSV. The points run on `jobs` threads (each run is independent;
// rows come out in point order), a sweep can be split into shards (--shard i/N: the i-th of N
// contiguous blocks of points; merge_sweep_csvs joins their CSVs back into the whole sweep's), and
// the shards can be written as a Slurm job array (emit_slurm).
#include <cstdint>
#include <string>
#include <vector>

#include "bwsim/cli/KernelRun.hpp"

namespace bwsim {

struct SweepOptions {
  std::uint32_t jobs = 1;
  std::string shard;  // "i/N"; empty: the whole sweep
  // --emit-slurm FILE: write a job-array script of `shards` tasks, each running `command` (the
  // sweep's own command line: the executable, "sweep", the kernel and its options) on its shard
  // with its CSV beside f.csv, instead of running anything.
  std::string emit_slurm;
  std::uint32_t shards = 0;  // 0: one per point
  std::vector<std::string> command;
};

// The sweep's table: the axes, the headline statistics and the kernel's numeric figures (and the
// check) per point, in point order.
struct SweepTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  bool failed = false;  // a checked point did not pass
};
SweepTable run_sweep(const KernelInfo& k, const RunFlags& f, const SweepOptions& s);

// Runs the sweep (or emits it as a Slurm job array), prints its table and writes f.csv; the exit
// code (1 when a checked point failed).
int sweep_kernel(const KernelInfo& k, RunFlags& f, const SweepOptions& s);

// The CSV of a whole sweep from its shards' CSVs in shard order: one header (every shard's must be
// the same), then every shard's rows.
void merge_sweep_csvs(const std::string& out, const std::vector<std::string>& shards);

}  // namespace bwsim
