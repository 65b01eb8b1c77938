#pragma once
// What every hardware unit of one kernel launch shares: the event engine, the config, the
// mode, GMEM and the optional tracer.
#include <string>
#include <vector>

#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Engine.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/hw/memory/GlobalMemory.hpp"
#include "bwsim/hw/memory/MemorySystem.hpp"

namespace bwsim {

// One mbarrier phase completion, for tests that pin a barrier's history.
struct PhaseFlip {
  std::uint32_t cta = 0;
  std::uint32_t offset = 0;
  std::string name;
  std::uint64_t phase = 0;  // the phase that completed (0 first)
  Cycle cycle = 0;
};

// Functional mode moves real bytes and checks them; timing mode keeps every event but skips
// data, so both produce the same cycle counts.
enum class Mode : std::uint8_t { Functional, Timing };

struct SimContext {
  Engine engine;
  const HardwareConfig& config;
  Mode mode;
  std::string kernel;
  GlobalMemory& gmem;
  MemorySystem& memory;  // L2 and HBM, shared by every SM
  Tracer* tracer = nullptr;
  std::uint32_t trace_sms = 0;  // SMs 0 .. trace_sms-1 are traced
  std::vector<PhaseFlip>* phase_flips = nullptr;  // recorded when set
  bool check_races = true;                         // check/RaceChecker on every async access

  bool functional() const { return mode == Mode::Functional; }
  // The tracer for events of SM `sm`, or nullptr when the run is not traced or the SM filtered out
  // (callers test it before formatting anything).
  Tracer* tracer_for(std::uint32_t sm) const { return sm < trace_sms ? tracer : nullptr; }
  Cycle now() const { return engine.now(); }
};

}  // namespace bwsim
