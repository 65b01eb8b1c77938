#include "bwsim/core/PortCalendar.hpp"

#include <algorithm>
#include <iterator>

namespace bwsim {

void PortCalendar::drop_before(Cycle now) {
  while (head_ < busy_.size() && busy_[head_].second <= now) ++head_;
  if (head_ > 64 && 2 * head_ > busy_.size()) {
    busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

Cycle PortCalendar::free_from(Cycle now, Cycle from) {
  drop_before(now);
  // Intervals neither touch nor overlap, so the one holding `from` (if any) ends at a free cycle.
  const auto it = std::lower_bound(busy_.begin() + static_cast<std::ptrdiff_t>(head_), busy_.end(), from,
                                   [](const std::pair<Cycle, Cycle>& b, Cycle t) { return b.second <= t; });
  return it != busy_.end() && it->first <= from ? it->second : from;
}

Cycle PortCalendar::reserve(Cycle now, Cycle from, Cycle cycles) {
  drop_before(now);
  if (cycles == 0) return from;
  if (head_ == busy_.size() || busy_.back().second <= from) {  // free from `from` on: the walk's last case
    if (head_ != busy_.size() && busy_.back().second == from) busy_.back().second = from + cycles;
    else busy_.emplace_back(from, from + cycles);
    return from + cycles;
  }
  const auto first = busy_.begin() + static_cast<std::ptrdiff_t>(head_);
  auto it = std::lower_bound(first, busy_.end(), from,
                             [](const std::pair<Cycle, Cycle>& b, Cycle t) { return b.second <= t; });
  Cycle t = from, need = cycles;
  while (true) {
    if (it != busy_.end() && it->first <= t) {  // busy from t on: skip to the interval's end
      t = std::max(t, it->second);
      ++it;
      continue;
    }
    // Free from t to the next interval: take what is needed or the whole gap.
    const Cycle take = it == busy_.end() ? need : std::min(need, it->first - t);
    const Cycle piece_end = t + take;
    const bool joins_before = it != busy_.begin() + static_cast<std::ptrdiff_t>(head_) && std::prev(it)->second == t;
    const bool joins_after = it != busy_.end() && piece_end == it->first;
    need -= take;
    if (joins_before && joins_after) {  // the gap is filled: one interval
      std::prev(it)->second = it->second;
      it = busy_.erase(it);
      t = std::prev(it)->second;
    } else if (joins_after) {
      it->first = t;
      t = it->second;
      ++it;
    } else if (joins_before) {
      std::prev(it)->second = piece_end;
    } else {
      it = busy_.insert(it, {t, piece_end}) + 1;
    }
    if (need == 0) return piece_end;
  }
}

}  // namespace bwsim
