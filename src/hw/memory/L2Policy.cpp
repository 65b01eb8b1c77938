#include "bwsim/hw/memory/L2Policy.hpp"

#include "bwsim/hw/memory/L2Clock.hpp"
#include "bwsim/hw/memory/L2Lru.hpp"
#include "bwsim/hw/memory/L2SetLru.hpp"
#include "bwsim/hw/memory/L2SetRrip.hpp"

namespace bwsim {
namespace {
template <class Policy>
std::unique_ptr<L2Policy> make(std::uint64_t capacity_blocks, L2SetGeometry /*fully associative: no sets*/) {
  return std::make_unique<Policy>(capacity_blocks);
}
template <class Policy>
std::unique_ptr<L2Policy> make_sets(std::uint64_t capacity_blocks, L2SetGeometry geometry) {
  return std::make_unique<Policy>(capacity_blocks, geometry);
}
}  // namespace

const L2PolicyRegistry& l2_policies() {
  static const L2PolicyRegistry registry{
      "l2.policy",
      {{"lru", "exact least-recently-used over the whole capacity", &make<L2Lru>},
       {"clock", "second chance: FIFO ring, a hit's reference bit spares a block once", &make<L2Clock>},
       {"set_lru", "set-associative (l2.ways), least-recently-used within each set", &make_sets<L2SetLru>},
       {"set_rrip", "set-associative (l2.ways), re-reference prediction: blocks read once go first", &make_sets<L2SetRrip>}}};
  return registry;
}

}  // namespace bwsim
