#pragma once
// Bulk async-groups of one issuing thread (cp.async.bulk.commit_group / wait_group[.read]):
// TMA stores join the open group; commit closes it; wait_group N waits until all but the N
// most recent committed groups are complete (wait_group.read: until their SMEM reads are done).
#include <cstdint>
#include <vector>

namespace bwsim {

class BulkGroups {
 public:
  // A new operation joins the open group; returns its group id.
  std::uint64_t add_op() {
    ++open_.reads;
    ++open_.writes;
    return base_ + committed_.size();
  }
  void commit() {
    committed_.push_back(open_);
    open_ = {};
  }
  void read_done(std::uint64_t group) { find(group).reads--; }
  void write_done(std::uint64_t group) {
    find(group).writes--;
    while (!committed_.empty() && committed_.front().reads == 0 && committed_.front().writes == 0) {
      committed_.erase(committed_.begin());
      ++base_;
    }
  }
  // True when every committed group except the `allowed` most recent ones has finished
  // (its SMEM reads, if reads_only, else its global writes).
  bool satisfied(std::uint32_t allowed, bool reads_only) const {
    const std::size_t n = committed_.size();
    for (std::size_t i = 0; i + allowed < n; ++i)
      if ((reads_only ? committed_[i].reads : committed_[i].writes) != 0) return false;
    return true;
  }
  bool idle() const { return committed_.empty() && open_.writes == 0; }
  // True while a store of any group still reads its SMEM.
  bool reads_pending() const {
    if (open_.reads) return true;
    for (const Group& g : committed_)
      if (g.reads) return true;
    return false;
  }

 private:
  struct Group {
    std::uint32_t reads = 0;
    std::uint32_t writes = 0;
  };
  Group& find(std::uint64_t id) { return id == base_ + committed_.size() ? open_ : committed_[id - base_]; }
  std::uint64_t base_ = 0;  // id of committed_[0]
  std::vector<Group> committed_;
  Group open_;
};

}  // namespace bwsim
