#include "bwsim/kernel/KernelRegistry.hpp"

#include <fmt/format.h>

#include "bwsim/core/Error.hpp"
#include "bwsim/kernels/Fmha.hpp"
#include "bwsim/kernels/FmhaBackward.hpp"
#include "bwsim/kernels/Gemm.hpp"
#include "bwsim/kernels/GemmSm90.hpp"
#include "bwsim/kernels/TmaCopy.hpp"
#include "bwsim/kernels/TmaStream.hpp"
#include "bwsim/kernels/Ubench.hpp"

namespace bwsim {

const std::string& KernelArgs::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw InputError(fmt::format("missing kernel parameter --{}", name));
  return it->second;
}

std::uint64_t parse_integer(const std::string& t, const std::string& what, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t v = 0;
  const bool ok = !t.empty() && t.size() <= 18 && t.find_first_not_of("0123456789") == std::string::npos;
  if (ok) v = std::stoull(t);
  if (!ok || v < lo || v > hi) throw InputError(fmt::format("{} must be an integer in {}..{}, got '{}'", what, lo, hi, t));
  return v;
}

std::uint64_t KernelArgs::integer(const std::string& name, std::uint64_t lo, std::uint64_t hi) const {
  return parse_integer(text(name), "--" + name, lo, hi);
}

bool KernelArgs::flag(const std::string& name) const {
  const std::string& t = text(name);
  if (t != "0" && t != "1" && !t.empty())
    throw InputError(fmt::format("--{}: 0 or 1 (or the flag alone for 1), got '{}'", name, t));
  return t != "0";
}

double KernelArgs::real(const std::string& name, double lo, double hi) const {
  const std::string& t = text(name);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !(v >= lo && v <= hi))
    throw InputError(fmt::format("--{} must be a number in {}..{}, got '{}'", name, lo, hi, t));
  return v;
}

namespace {
std::vector<KernelInfo>& registry() {
  static std::vector<KernelInfo> kernels = [] {
    std::vector<KernelInfo> k = gemm_kernel_infos();
    k.push_back(gemm_sm90_kernel_info());
    k.push_back(gemm_sm90_loads_kernel_info());
    k.push_back(tma_copy_kernel_info());
    k.push_back(tma_stream_kernel_info());
    k.push_back(ubench_kernel_info());
    k.push_back(fmha_kernel_info());
    k.push_back(fmha_bwd_kernel_info());
    return k;
  }();
  return kernels;
}
}  // namespace

const std::vector<KernelInfo>& kernel_registry() { return registry(); }

void register_kernel(KernelInfo kernel) {
  if (kernel.name.empty() || !kernel.run) throw InputError("register_kernel: a kernel needs a name and a runner");
  if (find_kernel(kernel.name)) throw InputError(fmt::format("register_kernel: '{}' is taken", kernel.name));
  registry().push_back(std::move(kernel));
}

const KernelInfo* find_kernel(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace bwsim
