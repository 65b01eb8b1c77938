#pragma once
// The bytes of TMA loads that one CPC (a group of TPCs of a GPC that share one port towards the
// L2, hw/sm/ChipLayout) may have in flight: l2.cpc_load_bytes_in_flight. A load that would take
// its CPC past it waits, in a queue of its own SM, until earlier loads of the CPC have landed;
// the SMs of a CPC take turns (strict round robin: the SM whose turn it is waits for room, later
// SMs behind it) as room frees. With every SM asking for more than its share, an SM gets the
// CPC's room over the SMs it shares it with: the SMs of a CPC that lost a TPC to floor-sweeping
// (2 TPCs, 4 SMs, where the others have 6) hold more bytes in flight and, at the same latency, get
// more bandwidth (our H100/H200 tile logs, README "Calibration"). 0: no gate.
#include <cstdint>
#include <vector>

#include "bwsim/core/ReusedFifo.hpp"
#include "bwsim/hw/sm/ChipLayout.hpp"

namespace bwsim {

class CpcLoadGate {
 public:
  // What to call when a waiting load may go: `admitted(object, slot)` (the TMA unit's request).
  using Admitted = void (*)(void* object, std::uint64_t slot);

  CpcLoadGate(const ChipLayout& layout, std::uint64_t bytes_in_flight);
  // Whether the gate holds loads back at all (a config without one admits every load at once).
  bool active() const { return limit_ != 0; }
  // A new launch: nothing in flight.
  void reset();
  // SM `sm` asks to send a load of `bytes`: true if it may go now (its bytes are counted in flight);
  // otherwise it waits and `admitted(object, slot)` is called once it may.
  bool admit(std::uint32_t sm, std::uint32_t bytes, Admitted admitted, void* object, std::uint64_t slot);
  // A load of `bytes` by SM `sm` landed: its room goes to the CPC's waiting loads, SM by SM in turn.
  void release(std::uint32_t sm, std::uint32_t bytes);

 private:
  struct Waiting {
    Admitted admitted;
    void* object;
    std::uint64_t slot;
    std::uint32_t bytes;
  };
  struct Cpc {
    std::uint64_t bytes = 0;      // in flight
    std::uint32_t first = 0;      // its SMs are members_[first .. first + sms - 1], in SM order
    std::uint32_t sms = 0;
    std::uint32_t next = 0;       // the SM (offset) whose turn is next
    std::uint32_t waiting = 0;    // loads waiting over its SMs
  };
  bool fits(const Cpc& c, std::uint32_t bytes) const { return c.bytes == 0 || c.bytes + bytes <= limit_; }

  std::uint64_t limit_;
  std::vector<Cpc> cpcs_;
  std::vector<std::uint32_t> sm_cpc_;
  std::vector<std::uint32_t> members_;  // the SMs CPC by CPC
  std::vector<ReusedFifo<Waiting>> queues_;  // per SM: its waiting loads, in issue order
};

}  // namespace bwsim
