#include "bwsim/kernels/AttentionCommon.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "bwsim/core/Error.hpp"
#include "bwsim/hw/numeric/NumberFormats.hpp"

namespace bwsim::attention {

std::vector<KernelParam> shape_params(std::vector<KernelParam> then) {
  std::vector<KernelParam> p{{"batch", "sequences", "2"},
                             {"heads", "query heads", "4"},
                             {"kv-heads", "K/V heads (GQA/MQA); 0: as many as query heads", "0"},
                             {"seqlen", "tokens per sequence (queries and keys)", "1000"},
                             {"seqlens", "variable lengths, one per sequence (sets the batch), e.g. 100,700,1000", ""}};
  p.insert(p.end(), std::make_move_iterator(then.begin()), std::make_move_iterator(then.end()));
  return p;
}

Shape shape_from_cli(const KernelArgs& a) {
  Shape s;
  s.batch = static_cast<std::uint32_t>(a.integer("batch", 0, 1u << 16));
  s.heads = static_cast<std::uint32_t>(a.integer("heads", 0, 1024));
  s.kv_heads = static_cast<std::uint32_t>(a.integer("kv-heads", 0, 1024));
  s.seqlen = static_cast<std::uint32_t>(a.integer("seqlen", 0, 1u << 20));
  if (const std::string& list = a.text("seqlens"); !list.empty()) {
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      s.seqlens.push_back(static_cast<std::uint32_t>(
          parse_integer(list.substr(at, comma - at), "each length of --seqlens (e.g. 100,700,1000)", 1, 1u << 20)));
      at = comma + 1;
    }
    s.batch = static_cast<std::uint32_t>(s.seqlens.size());
    s.seqlen = *std::max_element(s.seqlens.begin(), s.seqlens.end());
  }
  return s;
}

void validate_shape(const Shape& s, std::uint64_t ctas_per_head) {
  if (s.batch == 0 || s.heads == 0) throw InputError("--batch and --heads must be at least 1");
  if (s.seqlen == 0) throw InputError("--seqlen 0: a sequence needs at least one token");
  if (!s.seqlens.empty() && s.seqlens.size() != s.batch)
    throw InputError(fmt::format("{} sequence lengths for a batch of {}", s.seqlens.size(), s.batch));
  for (std::uint32_t len : s.seqlens)
    if (len == 0 || len > s.seqlen)
      throw InputError(fmt::format("--seqlens: a length of {}; each must be in 1..{} (the padded length)", len, s.seqlen));
  const std::uint32_t kvh = s.kv_heads ? s.kv_heads : s.heads;
  if (s.heads % kvh != 0)
    throw InputError(fmt::format("--kv-heads {}: the {} query heads must split evenly over the K/V heads", kvh, s.heads));
  const std::uint64_t ctas = static_cast<std::uint64_t>(s.batch) * s.heads * ctas_per_head;
  if (ctas >= (1ull << 31))
    throw InputError(fmt::format("batch {} x {} heads x seqlen {}: {} CTAs, more than a grid can have", s.batch, s.heads,
                                 s.seqlen, ctas));
}

std::span<std::uint32_t> tmem_registers(const Warp& w, std::vector<std::uint32_t>& own, std::size_t n) {
  static std::vector<std::uint32_t> untouched(32 * 256);
  if (!w.functional()) return std::span(untouched).first(n);
  own.resize(n);
  return own;
}

void fill_random(std::span<std::byte> bytes, DataType t, std::uint32_t seed, float range) {
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < bytes.size() / 2; ++i) {
    x = x * 1664525u + 1013904223u;
    store_from_float(t, (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * 2 * range, &bytes[2 * i]);
  }
}

}  // namespace bwsim::attention
