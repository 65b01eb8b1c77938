#include "bwsim/cli/Sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bwsim/core/Error.hpp"

namespace bwsim {
namespace {

// A number in a sweep table: integers as they are, reals to 6 significant digits.
std::string table_cell(const StatValue& v) {
  return std::holds_alternative<double>(v) ? fmt::format("{:.6g}", std::get<double>(v))
                                           : std::to_string(std::get<std::uint64_t>(v));
}

using Axes = std::vector<std::pair<std::string, std::vector<std::string>>>;

Axes parse_axes(const KernelInfo& k, const RunFlags& f) {
  Axes axes;
  for (const std::string& spec : f.sweep_params) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    if (eq == std::string::npos || !f.params.at(k.name).contains(name)) {
      std::string valid;
      for (const auto& p : k.params) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", p.name);
      throw InputError(fmt::format("--param '{}': expected NAME=V1,V2,... with NAME one of {}", spec, valid));
    }
    std::vector<std::string> values;
    std::stringstream ss(spec.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) values.push_back(v);
    if (values.empty()) throw InputError(fmt::format("--param '{}': no values", spec));
    axes.emplace_back(name, std::move(values));
  }
  if (axes.empty()) throw InputError("bwsim sweep needs at least one --param NAME=V1,V2,...");
  return axes;
}

// Every combination of the axes' values, the last axis fastest.
std::vector<std::vector<std::string>> points_of(const Axes& axes) {
  std::vector<std::vector<std::string>> points;
  std::vector<std::size_t> at(axes.size(), 0);
  for (bool more = true; more;) {
    std::vector<std::string>& p = points.emplace_back();
    for (std::size_t i = 0; i < axes.size(); ++i) p.push_back(axes[i].second[at[i]]);
    more = false;
    for (std::size_t i = axes.size(); i-- > 0;) {
      if (++at[i] < axes[i].second.size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  return points;
}

// "i/N" -> {i, N}.
std::pair<std::uint32_t, std::uint32_t> parse_shard(const std::string& text) {
  unsigned i = 0, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &i, &slash, &n, &extra) != 3 || slash != '/' || n == 0 || i >= n)
    throw InputError(fmt::format("--shard: expected I/N with 0 <= I < N, got '{}'", text));
  return {i, n};
}

struct PointResult {
  KernelReport report;
  std::vector<StatSample> stats;
  std::exception_ptr error;
};

// Runs the points on `jobs` threads, each point with its own flags (its parameter values).
std::vector<PointResult> run_points(const KernelInfo& k, const HardwareConfig& cfg, const RunFlags& f, const Axes& axes,
                                    const std::vector<std::vector<std::string>>& points, std::uint32_t jobs) {
  std::vector<PointResult> results(points.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < points.size();) {
      try {
        RunFlags pf = f;
        pf.progress = pf.progress && jobs == 1;
        for (std::size_t a = 0; a < axes.size(); ++a) pf.params.at(k.name)[axes[a].first] = points[i][a];
        results[i].report = k.run(make_request(k, cfg, pf));
        results[i].stats = stat_registry().sample(results[i].report.run);
      } catch (...) {
        results[i].error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::uint32_t t = 1; t < std::min<std::size_t>(jobs, points.size()); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const PointResult& r : results)  // the first failing point's error, as a one-thread sweep raises it
    if (r.error) std::rethrow_exception(r.error);
  return results;
}

void write_csv_line(std::ostream& out, const std::vector<std::string>& cells) {
  for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << cells[c];
  out << "\n";
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void emit_slurm(const SweepOptions& s, const RunFlags& f, std::size_t points) {
  if (f.csv.empty()) throw InputError("--emit-slurm needs --csv FILE: the merged sweep's CSV (shards go beside it)");
  const std::uint32_t shards = s.shards ? s.shards : static_cast<std::uint32_t>(points);
  if (shards > points) throw InputError(fmt::format("--shards {}: the sweep has only {} points", shards, points));
  std::ofstream out(s.emit_slurm);
  if (!out) throw InputError(fmt::format("--emit-slurm {}: cannot write the file", s.emit_slurm));
  std::string command;
  for (const std::string& a : s.command) command += shell_quote(a) + " ";
  const std::string csv = std::filesystem::absolute(f.csv).string();
  const std::string exe = shell_quote(s.command.front());
  const std::size_t width = std::to_string(shards - 1).size();
  out << "#!/bin/bash\n"
      << fmt::format("# bwsim sweep as a Slurm job array: {} tasks, one shard of the {} points each. Submit with\n"
                     "#   sbatch {}\n"
                     "# and once every task is done, merge the shards into the whole sweep's CSV:\n"
                     "#   {} merge-csv {} {}.shard-*-of-{}.csv\n",
                     shards, points, shell_quote(s.emit_slurm), exe, shell_quote(csv), shell_quote(csv), shards)
      << "#SBATCH --job-name=bwsim-sweep\n"
      << fmt::format("#SBATCH --array=0-{}\n#SBATCH --cpus-per-task={}\n#SBATCH --output={}.shard-%a.log\n",
                     shards - 1, s.jobs, csv)
      << "set -euo pipefail\ni=$SLURM_ARRAY_TASK_ID\n"
      << fmt::format("shard_csv=$(printf '%s.shard-%0{}d-of-{}.csv' {} \"$i\")\n", width, shards, shell_quote(csv))
      << fmt::format("exec {}--jobs {} --shard \"$i/{}\" --csv \"$shard_csv\"\n", command, s.jobs, shards);
  fmt::print("slurm     {} ({} tasks; then: {} merge-csv {} {}.shard-*-of-{}.csv)\n", s.emit_slurm, shards,
             s.command.front(), f.csv, f.csv, shards);
}

}  // namespace

SweepTable run_sweep(const KernelInfo& k, const RunFlags& f, const SweepOptions& s) {
  const HardwareConfig cfg = load_config(f.config, f.overrides);
  const Axes axes = parse_axes(k, f);
  std::vector<std::vector<std::string>> points = points_of(axes);
  if (s.jobs == 0) throw InputError("--jobs must be at least 1");
  if (!s.shard.empty()) {
    const auto [i, n] = parse_shard(s.shard);
    const std::size_t begin = points.size() * i / n, end = points.size() * (i + 1) / n;
    points = std::vector<std::vector<std::string>>(points.begin() + static_cast<std::ptrdiff_t>(begin),
                                                   points.begin() + static_cast<std::ptrdiff_t>(end));
  }
  const std::vector<PointResult> results = run_points(k, cfg, f, axes, points, s.jobs);
  SweepTable t;
  for (const auto& [name, values] : axes) t.header.push_back(name);
  std::vector<std::string> figures;  // numeric kernel figures, from the first point
  if (!results.empty())
    for (const auto& [key, v] : results.front().report.figures.items())
      if (v.is_number()) figures.push_back(key);
  for (std::size_t p = 0; p < points.size(); ++p) {
    const KernelReport& r = results[p].report;
    std::vector<std::string> row = points[p];
    for (const StatSample& st : results[p].stats)
      if (st.info->headline) row.push_back(table_cell(st.value));
    for (const std::string& key : figures) {
      const auto& v = r.figures.value(key, nlohmann::json(0));
      row.push_back(v.is_number_float() ? fmt::format("{:.4g}", v.get<double>()) : v.dump());
    }
    if (r.checked) {
      row.push_back(r.check_passed ? "passed" : "FAILED");
      t.failed = t.failed || !r.check_passed;
    }
    t.rows.push_back(std::move(row));
  }
  for (const StatRegistry::Entry& e : stat_registry().entries())
    if (e.info.headline) t.header.push_back(e.info.name);
  t.header.insert(t.header.end(), figures.begin(), figures.end());
  if (f.check) t.header.push_back("check");
  return t;
}

int sweep_kernel(const KernelInfo& k, RunFlags& f, const SweepOptions& s) {
  if (!s.emit_slurm.empty()) {
    emit_slurm(s, f, points_of(parse_axes(k, f)).size());
    return 0;
  }
  const SweepTable t = run_sweep(k, f, s);
  std::vector<std::size_t> width(t.header.size());
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    width[c] = t.header[c].size();
    for (const auto& row : t.rows) width[c] = std::max(width[c], c < row.size() ? row[c].size() : 0);
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) out += fmt::format("{}{:>{}}", c ? "  " : "", cells[c], width[c]);
    return out + "\n";
  };
  fmt::print("{}", line(t.header));
  for (const auto& row : t.rows) fmt::print("{}", line(row));
  if (!f.csv.empty()) {
    std::ofstream out(f.csv);
    if (!out) throw InputError(fmt::format("--csv {}: cannot write the file", f.csv));
    write_csv_line(out, t.header);
    for (const auto& row : t.rows) write_csv_line(out, row);
    fmt::print("csv       {}\n", f.csv);
  }
  return t.failed ? 1 : 0;
}

void merge_sweep_csvs(const std::string& out, const std::vector<std::string>& shards) {
  if (shards.empty()) throw InputError("merge-csv needs the shards' CSV files");
  std::string header, body;
  for (const std::string& path : shards) {
    std::ifstream in(path);
    if (!in) throw InputError(fmt::format("merge-csv: cannot read {}", path));
    std::string first;
    if (!std::getline(in, first)) throw InputError(fmt::format("merge-csv: {} is empty", path));
    if (header.empty()) header = first;
    if (first != header) throw InputError(fmt::format("merge-csv: {} has another header than {}", path, shards.front()));
    for (std::string l; std::getline(in, l);) body += l + "\n";
  }
  std::ofstream o(out);
  if (!o) throw InputError(fmt::format("merge-csv: cannot write {}", out));
  o << header << "\n" << body;
}

}  // namespace bwsim
