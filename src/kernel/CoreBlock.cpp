#include "bwsim/kernel/CoreBlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace bwsim {

CoreBlock::Value CoreBlock::op(CoreOp op, std::initializer_list<Value> inputs) {
  if (finished_) throw std::logic_error(fmt::format("CoreBlock '{}': an instruction added after finish()", name_));
  if (inputs.size() > 3) throw std::invalid_argument(fmt::format("CoreBlock '{}': an instruction reads at most 3 values", name_));
  CoreInstr in;
  in.op = op;
  std::size_t i = 0;
  for (const Value& v : inputs) in.inputs[i++] = v.producer;
  code_.push_back(in);
  return {static_cast<std::uint32_t>(code_.size() - 1)};
}

void CoreBlock::finish(const HardwareConfig& config) {
  if (order_ == Order::AsCompiled) code_ = list_schedule(code_, config);
  profile_ = schedule_alone(code_, config);
  finished_ = true;
}

std::uint32_t CoreBlock::count(CoreOp op) const {
  return static_cast<std::uint32_t>(std::count_if(code_.begin(), code_.end(), [&](const CoreInstr& in) { return in.op == op; }));
}

}  // namespace bwsim
