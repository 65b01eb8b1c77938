#include "bwsim/hw/sm/MBarrier.hpp"

namespace bwsim {

void MBarrier::init(std::uint32_t count) {
  status_ = Status::Live;
  phase_ = 0;
  expected_ = count;
  pending_ = count;
  tx_ = 0;
}

MBarrier::Outcome MBarrier::settle() {
  if (tx_ > kTxLimit || tx_ < -kTxLimit) return Outcome::TxOutOfRange;
  if (pending_ != 0) return Outcome::Pending;
  if (tx_ < 0) return Outcome::TxUnderflow;
  if (tx_ > 0) return Outcome::Pending;
  ++phase_;
  pending_ = expected_;
  return Outcome::PhaseCompleted;
}

MBarrier::Outcome MBarrier::arrive(std::uint32_t count, std::uint32_t tx_bytes) {
  if (count > pending_) return Outcome::OverArrival;
  tx_ += tx_bytes;
  pending_ -= count;
  return settle();
}

MBarrier::Outcome MBarrier::expect_tx(std::uint32_t bytes) {
  tx_ += bytes;
  return settle();
}

MBarrier::Outcome MBarrier::complete_tx(std::uint32_t bytes) {
  tx_ -= bytes;
  return settle();
}

}  // namespace bwsim
