#pragma once
// What every hardware unit of one kernel launch shares: the event engine, the config, the
// mode, GMEM and the optional tracer.
#include <string>
#include <vector>

#include "bwsim/check/RaceCheckThread.hpp"
#include "bwsim/config/HardwareConfig.hpp"
#include "bwsim/core/Engine.hpp"
#include "bwsim/core/Trace.hpp"
#include "bwsim/hw/memory/GlobalMemory.hpp"
#include "bwsim/hw/memory/MemorySystem.hpp"
#include "bwsim/hw/sm/CrossSmCensus.hpp"

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
  std::uint32_t trace_sms = 0;        // how many SMs are traced: the first that get CTAs
  std::vector<std::uint8_t> traced;   // per SM: 1 when it is one of them
  std::uint32_t traced_count = 0;
  std::vector<PhaseFlip>* phase_flips = nullptr;  // recorded when set
  bool check_races = true;                         // check/RaceChecker on every async access
  RaceCheckThread* race_thread = nullptr;          // where the checks run; nullptr: inline
  CrossSmCensus* cross_sm = nullptr;               // noted when set (SimOptions::cross_sm_census)

  bool functional() const { return mode == Mode::Functional; }
  // The tracer for events of SM `sm`, or nullptr when the run is not traced or the SM filtered out
  // (callers test it before formatting anything).
  Tracer* tracer_for(std::uint32_t sm) const { return tracer && traced[sm] ? tracer : nullptr; }
  // SM `sm` gets a CTA: it is traced if fewer than trace_sms SMs are.
  void trace_if_room(std::uint32_t sm) {
    if (!tracer || traced[sm] || traced_count == trace_sms) return;
    traced[sm] = 1;
    ++traced_count;
  }
  Cycle now() const { return engine.now(); }
  // Runs the race-checking step `f` (a lambda capturing pointers and numbers) when races are
  // checked: now, or in order on the race-checking thread. Its steps read and write the checker's
  // state only (records, vector clocks); what they need of the simulation's they capture.
  template <class F>
  void race_check(F f) {
    if (!check_races) return;
    if (race_thread) race_thread->post(f);
    else f();
  }
  // The same for a step that may absorb the next of its kind on the thread (RaceCheckThread::
  // post_or_absorb); inline each runs as it comes.
  template <class F>
  void race_check_absorbing(const F& f) {
    if (!check_races) return;
    if (race_thread) race_thread->post_or_absorb(f);
    else f();
  }
  // The running event performs a coupling operation whose shared state is affected `lead` cycles on.
  void couple(Coupling k, Cycle lead) {
    if (cross_sm) cross_sm->note(k, engine.running_seq(), lead);
  }
  // ... affected at cycle `at` (not before now).
  void couple_at(Coupling k, Cycle at) { couple(k, at > now() ? at - now() : 0); }
};

}  // namespace bwsim
