#include "bwsim/core/HostCores.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace bwsim {

unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace bwsim
