#include "bwsim/hw/memory/L2Policy.hpp"

#include "bwsim/hw/memory/L2Clock.hpp"
#include "bwsim/hw/memory/L2Lru.hpp"

namespace bwsim {
namespace {
template <class Policy>
std::unique_ptr<L2Policy> make(std::uint64_t capacity_blocks) {
  return std::make_unique<Policy>(capacity_blocks);
}
}  // namespace

const L2PolicyRegistry& l2_policies() {
  static const L2PolicyRegistry registry{
      "l2.policy",
      {{"lru", "exact least-recently-used over the whole capacity", &make<L2Lru>},
       {"clock", "second chance: FIFO ring, a hit's reference bit spares a block once", &make<L2Clock>}}};
  return registry;
}

}  // namespace bwsim
