#pragma once
// Small integer helpers shared by the units and the kernels.
#include <cstdint>

namespace bwsim {

// `v` rounded up to a multiple of `a`.
constexpr std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

// A 64-bit mix (the first half of MurmurHash3's fmix64): spread hash values and deterministic
// pseudo-random draws from structured keys.
constexpr std::uint64_t mix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

// The next draw of a splitmix64 stream (Steele, Lea, Flood 2014) whose state is `state`: a
// seed-reproducible sequence of independent-looking 64-bit values.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace bwsim
