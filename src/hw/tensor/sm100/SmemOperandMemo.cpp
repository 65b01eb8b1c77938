#include "bwsim/hw/tensor/sm100/SmemOperandMemo.hpp"

namespace bwsim {

bool SmemOperandMemo::decoded(SmemDescriptor d, SmemDescriptorFields& out) const {
  if (!has_decoded_ || without_start_address(d) != decoded_rest_) return false;
  out = decoded_;
  out.start_address = start_address_of(d);
  return true;
}

void SmemOperandMemo::keep(SmemDescriptor d, const SmemDescriptorFields& f) {
  decoded_rest_ = without_start_address(d);
  decoded_ = f;
  has_decoded_ = true;
}

SmemSpan SmemOperandMemo::span(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t,
                               std::uint32_t rows, std::uint32_t k_times) {
  const SpanKey key{f.leading_byte_offset, f.stride_byte_offset, rows, k_times, f.layout, major, kind, t};
  // (The offsets depend on no other field: not the base offset, and LBO mode 1 is rejected.)
  if (!has_span_ || key != span_key_) {
    offsets_ = mma_operand_span_offsets(f, major, kind, t, rows, k_times);
    span_key_ = key;
    has_span_ = true;
  }
  return span_at(f.start_address, offsets_);
}

}  // namespace bwsim
