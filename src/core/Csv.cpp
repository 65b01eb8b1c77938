#include "bwsim/core/Csv.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

std::vector<std::string> split(const std::string& line, std::size_t fields) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string part; f.size() + 1 < fields && std::getline(ss, part, ',');) f.push_back(part);
  std::string rest;
  std::getline(ss, rest);
  f.push_back(rest);
  return f;
}

std::ifstream open(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open", path));
  return in;
}

}  // namespace

std::vector<std::string> read_csv_header(const std::string& path) {
  std::ifstream in = open(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string part; std::getline(ss, part, ',');) f.push_back(part);
      return f;
    }
  return {};
}

std::vector<std::vector<std::string>> read_csv_rows(const std::string& path, std::size_t fields) {
  std::ifstream in = open(path);
  std::vector<std::vector<std::string>> rows;
  bool header = true;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> f = split(line, fields);
    if (f.size() != fields) throw InputError(fmt::format("{}:{}: expected {} fields in '{}'", path, number, fields, line));
    f.push_back(fmt::format("{}:{}", path, number));
    rows.push_back(std::move(f));
  }
  return rows;
}

}  // namespace bwsim
