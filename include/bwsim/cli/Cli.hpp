#pragma once
// The whole bwsim command line as a function, so that a user's own program can offer it for its
// own kernels: register them (register_kernel, KernelRegistry.hpp), then return cli_main(argc,
// argv) from main. The commands: list, run KERNEL, sweep KERNEL, fidelity KERNEL, describe-config,
// compare, stats-table; `--config` defaults to the B200 config shipped with bwsim.
//
// Exit codes: 0 success; 1 the result check failed; 2 bad input (flags, config, kernel
// parameters, launch); 3 the simulation detected a misuse (incl. an async race); 4 internal
// error; 5 deadlock; 6 the watchdog expired (livelock or a run longer than --watchdog).
namespace bwsim {

int cli_main(int argc, char** argv);

}  // namespace bwsim
