#pragma once
// The two tcgen05.mma descriptors, bit for bit as the hardware reads them (PTX ISA, tcgen05
// "Shared memory descriptor" and "Instruction descriptor"; CUTLASS mma_sm100_desc.hpp):
// encoders for kernels, decoders with validation for the MMA pipe, and the canonical-layout
// address function that maps an operand element to its SMEM byte.
#include <cstdint>
#include <optional>
#include <string>

#include "bwsim/hw/numeric/DataType.hpp"
#include "bwsim/hw/memory/Swizzle.hpp"

namespace bwsim {

// Which dimension is contiguous in SMEM: K (the usual "TN" GEMM operand) or M/N.
enum class Major : std::uint8_t { K, MN };

// The layout-type field (bits 61-63) of the SMEM descriptor.
enum class UmmaLayout : std::uint8_t { SwizzleNone = 0, Swizzle128BBase32B = 1, Swizzle128B = 2, Swizzle64B = 4, Swizzle32B = 6 };

// 64-bit SMEM matrix descriptor.
struct SmemDescriptor {
  std::uint64_t raw = 0;
};

struct SmemDescriptorFields {
  std::uint32_t start_address = 0;  // bytes (the field holds >> 4)
  std::uint32_t leading_byte_offset = 0;  // bytes (LBO)
  std::uint32_t stride_byte_offset = 0;   // bytes (SBO)
  std::uint32_t base_offset = 0;          // 3 bits
  bool lbo_mode = false;
  UmmaLayout layout = UmmaLayout::SwizzleNone;
};

SmemDescriptor encode(const SmemDescriptorFields& f);
// Decodes; an error text if a fixed field or the layout code is invalid.
std::optional<std::string> decode(SmemDescriptor d, SmemDescriptorFields& out);

Swizzle swizzle_of(UmmaLayout l);
UmmaLayout umma_layout_of(Swizzle s);

// The SMEM byte address of element (mn, k) of an operand described by `f` with elements of
// `elem_bytes` and the given major-ness (canonical layouts, swizzle applied to the address).
std::uint32_t operand_address(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t mn,
                              std::uint32_t k);

// The SMEM bytes an operand of rows x k elements can touch, [begin, end): its corner elements'
// addresses widened to their 128-byte rows (a swizzle permutes 16-byte chunks only inside a row).
struct SmemSpan {
  std::uint32_t begin, end;
};
SmemSpan operand_span(const SmemDescriptorFields& f, Major major, std::uint32_t elem_bytes, std::uint32_t rows,
                      std::uint32_t k);

// The MMA kinds bwsim models.
enum class MmaKind : std::uint8_t { F16, TF32, F8F6F4 };
std::string_view name_of(MmaKind k);

// 32-bit instruction descriptor (dense).
struct InstrDescriptor {
  std::uint32_t raw = 0;
};

struct InstrDescriptorFields {
  DataType a_type = DataType::BF16, b_type = DataType::BF16;
  DataType d_type = DataType::F32;
  Major a_major = Major::K, b_major = Major::K;
  bool negate_a = false, negate_b = false;
  bool saturate = false;
  bool sparse = false;
  std::uint32_t m = 128, n = 256;
};

// The descriptor for `kind` (the format codes depend on it); throws InputError if a type is not
// one the kind takes.
InstrDescriptor encode(MmaKind kind, const InstrDescriptorFields& f);
// Decodes for `kind`; an error text for reserved codes or unsupported fields.
std::optional<std::string> decode(MmaKind kind, InstrDescriptor d, InstrDescriptorFields& out);

// K per instruction for the kind: always 32 bytes of input.
std::uint32_t mma_k(MmaKind kind);

}  // namespace bwsim
