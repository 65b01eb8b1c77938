#pragma once
// What every hardware unit of one kernel launch shares: the event engine, the config, the
// mode, GMEM and the optional tracer.
#include <string>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Engine.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/hw/GlobalMemory.hpp"

namespace bwsim {

// Functional mode moves real bytes and checks them; timing mode keeps every event but skips
// data, so both produce the same cycle counts.
enum class Mode : std::uint8_t { Functional, Timing };

struct SimContext {
  Engine engine;
  const HardwareConfig& config;
  Mode mode;
  std::string kernel;
  GlobalMemory& gmem;
  Tracer* tracer = nullptr;

  bool functional() const { return mode == Mode::Functional; }
  Cycle now() const { return engine.now(); }
};

}  // namespace bwsim
