#pragma once
// Straight-line CUDA-core code for Warp::run, written as the instructions it compiles to: each
// call appends one warp instruction and returns its result, which later instructions read. Build
// a block once (for example when the kernel starts), then run it as often as needed: its schedule
// alone is derived once, by `finish`, and running it costs O(1) events however long it is.
//
//   CoreBlock b("row max");
//   CoreBlock::Value m = b.input();
//   for (int i = 0; i < 8; ++i) m = b.alu({m, b.input()});  // FMNMX chain
//   b.finish(config);
#include <initializer_list>
#include <string>
#include <vector>

#include "bwsim/hw/sm/CoreInstructions.hpp"

namespace bwsim {

class CoreBlock {
 public:
  // An instruction's result, or a register live on entry (`input`): ready when the block starts.
  struct Value {
    std::uint32_t producer = kNoInput;
  };

  // How `finish` orders the instructions: as written (machine code, e.g. a SASS listing, which the
  // compiler already scheduled) or as compiled (source-level code: list-scheduled the way a
  // compiler hides latencies, hw/sm/CoreInstructions list_schedule).
  enum class Order { AsWritten, AsCompiled };

  explicit CoreBlock(std::string name, Order order = Order::AsWritten) : name_(std::move(name)), order_(order) {}

  Value input() const { return {}; }
  // One warp instruction of `op` reading `inputs` (at most 3).
  Value op(CoreOp op, std::initializer_list<Value> inputs = {});
  Value fma(std::initializer_list<Value> inputs = {}) { return op(CoreOp::Fma, inputs); }
  Value fma2(std::initializer_list<Value> inputs = {}) { return op(CoreOp::Fma2, inputs); }
  Value alu(std::initializer_list<Value> inputs = {}) { return op(CoreOp::Alu, inputs); }
  Value mufu(std::initializer_list<Value> inputs = {}) { return op(CoreOp::Mufu, inputs); }
  Value cvt(std::initializer_list<Value> inputs = {}) { return op(CoreOp::Cvt, inputs); }

  // Schedules the block alone on `config`'s sub-partition; required before Warp::run. Throws
  // ConfigError for an instruction the config's SM lacks (FFMA2 without pipes.paired_fp32).
  void finish(const HardwareConfig& config);

  const std::string& name() const { return name_; }
  const std::vector<CoreInstr>& code() const { return code_; }
  bool finished() const { return finished_; }
  const CoreBlockProfile& profile() const { return profile_; }
  // Instructions per op (for tests and reports).
  std::uint32_t count(CoreOp op) const;

 private:
  std::string name_;
  Order order_;
  std::vector<CoreInstr> code_;
  CoreBlockProfile profile_;
  bool finished_ = false;
};

}  // namespace bwsim
