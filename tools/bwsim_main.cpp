// The bwsim executable: the command line over the built-in kernels.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "bwsim/cli/Cli.hpp"

// The run's output is flushed and the process ends without tearing down what the run built: the OS
// reclaims it at once, where destroying it (the recycled blocks unmapped one by one) took a few
// percent of a short run.
#ifdef BWSIM_PROFILE_GENERATE
extern "C" void __gcov_dump();  // an instrumented build's (BWSIM_PGO=generate) profile, which exit handlers would write
#endif

int main(int argc, char** argv) {
  const int code = bwsim::cli_main(argc, argv);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#ifdef BWSIM_PROFILE_GENERATE
  __gcov_dump();
#endif
  std::_Exit(code);
}
