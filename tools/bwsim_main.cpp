// The bwsim executable: the command line over the built-in kernels.
#include "bwsim/cli/Cli.hpp"

int main(int argc, char** argv) { return bwsim::cli_main(argc, argv); }
