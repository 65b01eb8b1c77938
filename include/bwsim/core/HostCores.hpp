#pragma once
// The host cores this process may run on.

namespace bwsim {

// Its affinity mask's count (a container's CPU limit shows there, not in the host's count), or
// std::thread::hardware_concurrency() where that cannot be read; at least 1.
unsigned usable_cores();

}  // namespace bwsim
