#pragma once
// A tensor core's last SMEM operand of one kind (an MMA's A, its B, a tcgen05.cp's source), kept
// so that the next one is decoded and spanned by an addition. A kernel's K loop issues MMAs whose
// descriptors differ only in their start address (CUTLASS advances it by each k-block's bytes); a
// descriptor's other fields, its validity and the offsets of its span's corners from the start
// address depend on every bit but those, so a descriptor equal to the last one outside the start
// address reuses them. The results are those of decode() and mma_operand_span() exactly
// (tests/smem_operand_memo_test.cpp).
#include <cstdint>

#include "bwsim/hw/tensor/sm100/UmmaDescriptor.hpp"

namespace bwsim {

class SmemOperandMemo {
 public:
  // The fields of `d` if its bits outside the start address are the last kept descriptor's.
  bool decoded(SmemDescriptor d, SmemDescriptorFields& out) const;
  // Keeps `d`, valid, decoded into `f`.
  void keep(SmemDescriptor d, const SmemDescriptorFields& f);
  // mma_operand_span(f, major, kind, t, rows, k_times), from the corner offsets of the last
  // operand of this shape.
  SmemSpan span(const SmemDescriptorFields& f, Major major, MmaKind kind, DataType t, std::uint32_t rows,
                std::uint32_t k_times = 1);
  // The corner offsets of the last span().
  const SpanOffsets& offsets() const { return offsets_; }

 private:
  std::uint64_t decoded_rest_ = 0;  // the kept descriptor without its start address
  SmemDescriptorFields decoded_{};
  bool has_decoded_ = false;

  struct SpanKey {
    std::uint32_t lbo, sbo, rows, k_times;
    UmmaLayout layout;
    Major major;
    MmaKind kind;
    DataType type;
    bool operator==(const SpanKey&) const = default;
  };
  SpanKey span_key_{};
  SpanOffsets offsets_{};
  bool has_span_ = false;
};

}  // namespace bwsim
