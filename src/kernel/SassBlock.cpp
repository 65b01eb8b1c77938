#include "bwsim/kernel/SassBlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Opcodes that write no register (their first operand is read).
bool writes_nothing(std::string_view op) {
  return starts(op, "ST") || starts(op, "BRA") || starts(op, "RED") || starts(op, "BAR") || starts(op, "EXIT") ||
         starts(op, "NOP") || starts(op, "RET") || starts(op, "CALL") || starts(op, "WARPSYNC");
}

// The registers an operand names: R4, P0, UR5, UP1 (RZ, PT, URZ, UPT name none); a 64- or
// 128-bit access (".64", ".128") spans 2 or 4 consecutive R registers.
std::vector<std::string> registers(const std::string& operand, std::uint32_t width) {
  static const std::regex reg(R"(\b(U?R|U?P)(\d+)\b)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(operand.begin(), operand.end(), reg); it != std::sregex_iterator(); ++it) {
    const std::string kind = (*it)[1];
    const int n = std::stoi((*it)[2]);
    const std::uint32_t span = kind == "R" ? width : 1;
    for (std::uint32_t k = 0; k < span; ++k) out.push_back(kind + std::to_string(n + static_cast<int>(k)));
  }
  return out;
}

}  // namespace

CoreOp sass_op(std::string_view op) {
  const std::string_view base = op.substr(0, op.find('.'));
  if (base == "FFMA2" || base == "FADD2" || base == "FMUL2") return CoreOp::Fma2;
  if (base == "FFMA" || base == "FADD" || base == "FMUL" || base == "IMAD" || base == "FSWZADD") return CoreOp::Fma;
  if (base == "HFMA2" || base == "HADD2" || base == "HMUL2") return op == "HFMA2.MMA" ? CoreOp::Other : CoreOp::Fma;
  if (base == "MUFU") return CoreOp::Mufu;
  if (base == "F2FP" || base == "F2F" || base == "F2I" || base == "I2F" || base == "I2FP" || base == "F2IP")
    return CoreOp::Cvt;
  if (base == "FMNMX" || base == "FMNMX3" || base == "IMNMX" || base == "LOP3" || base == "IADD3" || base == "SHF" ||
      base == "LEA" || base == "ISETP" || base == "FSETP" || base == "SEL" || base == "FSEL" || base == "MOV" ||
      base == "IABS" || base == "PRMT" || base == "VIADD" || base == "PLOP3" || base == "FCHK" || base == "SHL" ||
      base == "SHR")
    return CoreOp::Alu;
  return CoreOp::Other;  // STS, LDS, BRA, UIADD3, ... : an issue slot
}

CoreBlock sass_block(std::string name, std::string_view listing, const HardwareConfig& config) {
  // "/*0410*/  @!P0 FMNMX R141, R20, R12, !PT ;"
  static const std::regex line_re(R"(^\s*/\*[0-9a-fA-F]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*))");
  CoreBlock b(std::move(name));
  std::map<std::string, CoreBlock::Value> last;  // register -> its last writer
  std::istringstream in{std::string(listing)};
  std::string text;
  while (std::getline(in, text)) {
    std::smatch m;
    if (!std::regex_search(text, m, line_re)) continue;
    const std::string op = m[2], operands = m[3], guard = m[1];
    const std::uint32_t width = op.find(".128") != std::string::npos  ? 4
                                : op.find(".64") != std::string::npos ? 2
                                                                      : 1;
    std::vector<std::string> parts;
    std::stringstream ss(operands);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    std::vector<std::string> written, read = registers(guard, 1);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::vector<std::string> regs = registers(parts[i], parts[i].find('[') == std::string::npos ? width : 1);
      std::vector<std::string>& into = i == 0 && !writes_nothing(op) ? written : read;
      into.insert(into.end(), regs.begin(), regs.end());
    }
    // Up to 3 producers (a CoreInstr's inputs): the latest writers of the registers read, which are
    // the last ready but for a long-latency result written earlier (a store's 5 registers).
    std::vector<std::uint32_t> producers;
    for (const std::string& r : read)
      if (auto it = last.find(r); it != last.end()) producers.push_back(it->second.producer);
    std::sort(producers.rbegin(), producers.rend());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    CoreBlock::Value inputs[3];
    for (std::size_t k = 0; k < std::min<std::size_t>(3, producers.size()); ++k) inputs[k] = {producers[k]};
    const CoreBlock::Value v = b.op(sass_op(op), {inputs[0], inputs[1], inputs[2]});
    for (const std::string& r : written) last[r] = v;
  }
  if (b.code().empty()) throw InputError(fmt::format("SASS block '{}': no instruction in the listing", b.name()));
  b.finish(config);
  return b;
}

std::string sass_listing_section(std::string_view listings, std::string_view header) {
  std::istringstream in{std::string(listings)};
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (starts(line, "== ")) {
      if (inside) break;
      inside = starts(line, header);
      continue;
    }
    if (inside) out += line + "\n";
  }
  if (out.empty()) throw InputError(fmt::format("SASS listings: no section '{}'", header));
  return out;
}

}  // namespace bwsim
