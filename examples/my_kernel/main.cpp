// my_bwsim: bwsim's whole command line (list, run, sweep, --trace, --report, --stats, its exit
// codes) with this project's kernel added to the built-in ones.
#include <bwsim/cli/Cli.hpp>

#include "colsum.hpp"

int main(int argc, char** argv) {
  bwsim::register_kernel(colsum::kernel_info());
  return bwsim::cli_main(argc, argv);
}
