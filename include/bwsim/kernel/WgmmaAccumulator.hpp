#pragma once
// The f32 accumulator fragment of one m64nN wgmma in one warp's registers: N/2 per thread,
// counted against the warp's register budget (setmaxnreg) while it lives. The program reads and
// writes it through values(), which is checked: before the wgmma.wait_group that retires the last
// wgmma writing it, a read is a located race (PTX: the registers are undefined until then), and a
// wgmma after such an access needs a wgmma.fence first.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace bwsim {

class Warp;
struct WarpState;

class WgmmaAccumulator {
 public:
  // A fragment for N columns (a multiple of 8 in 8..256) owned by warp `w`.
  WgmmaAccumulator(Warp& w, std::uint32_t n);
  ~WgmmaAccumulator();
  WgmmaAccumulator(const WgmmaAccumulator&) = delete;
  WgmmaAccumulator& operator=(const WgmmaAccumulator&) = delete;

  std::uint32_t n() const { return n_; }
  std::uint32_t registers() const { return n_ / 2; }  // per thread
  // Lane-major values (lane * N/2 + register; wgmma_accumulator_coord() says where each lies in
  // the tile); empty in timing mode. A located race error if a wgmma writing it is not retired.
  std::span<float> values();

 private:
  friend class Warp;
  Warp& w_;
  std::uint32_t n_;
  // Shared with the pipe's pending writes, so a fragment destroyed before its wgmma lands is not
  // written after it is gone.
  std::shared_ptr<std::vector<float>> data_;
  std::uint64_t written_group_ = 0;  // 1 + the warp's commit group of the last wgmma writing it (0: none)
  std::uint64_t touched_at_ = 0;     // the warp's wgmma.fence count when the program last accessed it
};

}  // namespace bwsim
