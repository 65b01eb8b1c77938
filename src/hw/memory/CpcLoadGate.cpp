#include "bwsim/hw/memory/CpcLoadGate.hpp"

namespace bwsim {

CpcLoadGate::CpcLoadGate(const ChipLayout& layout, std::uint64_t bytes_in_flight)
    : limit_(bytes_in_flight), sm_cpc_(layout.cpc), members_(layout.cpc.size()), queues_(layout.cpc.size()) {
  for (const std::uint32_t c : sm_cpc_) {
    if (c >= cpcs_.size()) cpcs_.resize(c + 1);
    ++cpcs_[c].sms;
  }
  for (std::uint32_t c = 1; c < cpcs_.size(); ++c) cpcs_[c].first = cpcs_[c - 1].first + cpcs_[c - 1].sms;
  std::vector<std::uint32_t> filled(cpcs_.size(), 0);
  for (std::uint32_t sm = 0; sm < sm_cpc_.size(); ++sm) {
    const std::uint32_t c = sm_cpc_[sm];
    members_[cpcs_[c].first + filled[c]++] = sm;
  }
}

void CpcLoadGate::reset() {
  for (Cpc& c : cpcs_) c.bytes = c.next = c.waiting = 0;
  for (ReusedFifo<Waiting>& q : queues_) q.clear();
}

bool CpcLoadGate::admit(std::uint32_t sm, std::uint32_t bytes, Admitted admitted, void* object, std::uint64_t slot) {
  if (!limit_) return true;
  Cpc& c = cpcs_[sm_cpc_[sm]];
  ReusedFifo<Waiting>& q = queues_[sm];
  // An SM's loads go in issue order, so one behind a waiting load of its own SM waits too.
  if (q.empty() && fits(c, bytes)) {
    c.bytes += bytes;
    return true;
  }
  q.push(Waiting{admitted, object, slot, bytes});
  ++c.waiting;
  return false;
}

void CpcLoadGate::release(std::uint32_t sm, std::uint32_t bytes) {
  if (!limit_) return;
  Cpc& c = cpcs_[sm_cpc_[sm]];
  c.bytes -= bytes;
  // The SMs' turns go round; an SM whose next load does not fit ends the round (no overtaking
  // by smaller loads of later SMs).
  while (c.waiting) {
    while (queues_[members_[c.first + c.next]].empty()) c.next = (c.next + 1) % c.sms;
    ReusedFifo<Waiting>& q = queues_[members_[c.first + c.next]];
    const Waiting w = q.front();
    if (!fits(c, w.bytes)) return;
    q.pop();
    --c.waiting;
    c.bytes += w.bytes;
    c.next = (c.next + 1) % c.sms;
    w.admitted(w.object, w.slot);
  }
}

}  // namespace bwsim
