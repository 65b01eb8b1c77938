#pragma once
// GMEM as host buffers at simulated device addresses. In timing mode buffers have a size but
// no bytes, so full-size problems cost no host memory.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bwsim/core/ZeroedArray.hpp"

namespace bwsim {

struct GmemAddr {
  std::uint64_t value = 0;
  GmemAddr operator+(std::uint64_t off) const { return GmemAddr{value + off}; }
  friend bool operator==(GmemAddr, GmemAddr) = default;
};

class GlobalMemory {
 public:
  // `page_bytes` (l2.page_bytes, 0: none): buffers of a page or more start on a page.
  explicit GlobalMemory(bool holds_data, std::uint64_t page_bytes = 0) : holds_data_(holds_data), page_bytes_(page_bytes) {}

  bool holds_data() const { return holds_data_; }
  // Allocates `bytes` at a 256-byte aligned address, or a page-aligned one for a buffer of a page
  // or more, as cudaMalloc does (h200_alloc_alignment.csv: buffers of 3, 6 and 396 MiB at offset 0
  // of a 2 MiB page; ones of 4 KiB, 1 MiB and 5000 B at offsets 0, 4096 and 1052672, so not on
  // pages of their own; between 1 and 3 MiB not measured). Smaller buffers are packed 256 bytes
  // apart after the last, where the driver may put them elsewhere. In functional mode more than
  // 16 GiB in all is an InputError.
  GmemAddr alloc(std::uint64_t bytes);
  // True if [addr, addr+len) lies inside one allocation.
  bool contains(GmemAddr addr, std::uint64_t len) const;
  // Host view of [addr, addr+len); throws InputError outside any allocation.
  // Returns an empty span in timing mode.
  std::span<std::byte> bytes(GmemAddr addr, std::uint64_t len);

 private:
  struct Buffer {
    std::uint64_t base;
    std::uint64_t size;
    ZeroedArray<std::byte> data;  // functional mode: zero pages until written (no clearing pass)
  };
  const Buffer* find(std::uint64_t addr, std::uint64_t len) const;

  // A host-memory guard for functional runs (not a hardware limit): a full-size problem belongs in
  // timing mode.
  static constexpr std::uint64_t kMaxHeldBytes = 16ull << 30;
  bool holds_data_;
  std::uint64_t page_bytes_;
  std::uint64_t held_ = 0;
  std::uint64_t next_ = 0x7f0000000000ull;
  std::vector<Buffer> buffers_;  // sorted by base (allocation order)
};

}  // namespace bwsim
