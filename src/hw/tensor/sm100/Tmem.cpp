#include "bwsim/hw/tensor/sm100/Tmem.hpp"

#include <algorithm>

namespace bwsim {

Tmem::Tmem(std::uint32_t columns, bool holds_data)
    : columns_(columns),
      owner_(columns / kTmemGranule, nullptr),
      cells_(holds_data ? static_cast<std::size_t>(kTmemLanes) * columns : 1) {}

std::uint32_t Tmem::free_columns() const {
  return static_cast<std::uint32_t>(std::count(owner_.begin(), owner_.end(), nullptr)) * kTmemGranule;
}

std::int64_t Tmem::try_allocate(const Cta& cta, std::uint32_t ncols) {
  const std::uint32_t granules = ncols / kTmemGranule;
  for (std::uint32_t g = 0; g + granules <= owner_.size(); g += granules) {
    const auto first = owner_.begin() + g;
    if (std::all_of(first, first + granules, [](const Cta* o) { return o == nullptr; })) {
      std::fill(first, first + granules, &cta);
      ++epoch_;
      return static_cast<std::int64_t>(g) * kTmemGranule;
    }
  }
  return -1;
}

bool Tmem::owned_by(const Cta& cta, std::uint32_t column, std::uint32_t ncols) const {
  if (ncols == 0 || column + ncols > columns_) return false;
  for (std::uint32_t g = column / kTmemGranule; g <= (column + ncols - 1) / kTmemGranule; ++g)
    if (owner_[g] != &cta) return false;
  return true;
}

bool Tmem::release(const Cta& cta, std::uint32_t column, std::uint32_t ncols) {
  if (column % kTmemGranule != 0 || ncols % kTmemGranule != 0 || !owned_by(cta, column, ncols)) return false;
  std::fill(owner_.begin() + column / kTmemGranule, owner_.begin() + (column + ncols) / kTmemGranule, nullptr);
  ++epoch_;
  return true;
}

std::uint32_t Tmem::held_by(const Cta& cta) const {
  return static_cast<std::uint32_t>(std::count(owner_.begin(), owner_.end(), &cta)) * kTmemGranule;
}

void Tmem::add_waiter(WarpState& ws) { waiters_.push_back(&ws); }

void Tmem::remove_waiter(WarpState& ws) { std::erase(waiters_, &ws); }

}  // namespace bwsim
