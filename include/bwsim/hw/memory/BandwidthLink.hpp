#pragma once
// A link of `bytes_per_cycle` (fractional) that requests reserve in the order they arrive (a
// fluid FIFO: a request's bytes occupy the link for bytes / rate cycles after it is free), so many
// SMs streaming at once share its rate.
#include <cstdint>

#include "bwsim/core/Cycle.hpp"

namespace bwsim {

class BandwidthLink {
 public:
  explicit BandwidthLink(double bytes_per_cycle) : bytes_per_cycle_(bytes_per_cycle) {}
  void reset() { free_ = busy_ = bytes_ = 0; }
  // Moves `bytes` starting no earlier than `arrival`; returns the cycle the last byte is through.
  Cycle transfer(Cycle arrival, std::uint64_t bytes);
  Cycle busy_cycles() const { return static_cast<Cycle>(busy_); }
  double bytes_per_cycle() const { return bytes_per_cycle_; }
  // Bytes through the link by cycle `t`, for a `t` no earlier than the last request's arrival.
  double bytes_through(Cycle t) const {
    const double waiting = free_ - static_cast<double>(t);
    return waiting > 0 ? bytes_ - waiting * bytes_per_cycle_ : bytes_;
  }

 private:
  double bytes_per_cycle_;
  double free_ = 0;  // the link is free from this (fractional) cycle on
  double busy_ = 0;
  double bytes_ = 0;  // all requests' bytes
};

}  // namespace bwsim
