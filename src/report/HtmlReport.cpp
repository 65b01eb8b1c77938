#include "bwsim/report/HtmlReport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include "bwsim/core/Error.hpp"
#include "bwsim/core/Trace.hpp"

namespace bwsim {
namespace {

constexpr int kBuckets = 200;       // points of the over-time plots
constexpr double kWidth = 1200;     // SVG width of the plots and timeline, pixels
constexpr double kRowHeight = 18;
constexpr double kLabelWidth = 190;

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

struct Span {
  int tid;
  Cycle start, dur;
  std::string name;
};

// A span's colour by what it is: waits grey, TMA blue, MMA green, the rest orange.
const char* colour(const Span& s) {
  if (s.tid == kTmaTrack) return "#4a78c2";
  if (s.tid == kMmaTrack) return "#3c9a4a";
  if (s.tid == kTmemTrack) return "#2a9d9d";
  if (s.tid == kCtaTrack) return "#b9a7d6";
  if (s.name.rfind("wait", 0) == 0 || s.name.rfind("bar.sync", 0) == 0 || s.name.rfind("barrier.cluster", 0) == 0)
    return "#c8c8c8";
  return "#e08a2c";
}

// A polyline plot of `values` (one per bucket) scaled to `max`.
std::string plot(const char* id, const char* title, const std::vector<double>& values, double max, const char* unit,
                 Cycle cycles) {
  const double h = 140;
  std::string pts;
  for (std::size_t i = 0; i < values.size(); ++i)
    pts += fmt::format("{:.1f},{:.1f} ", kLabelWidth + (i + 0.5) * (kWidth - kLabelWidth) / values.size(),
                       h - 10 - (max > 0 ? values[i] / max : 0) * (h - 30));
  return fmt::format(
      "<h2>{}</h2>\n<svg id=\"{}\" width=\"{}\" height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">"
      "<rect x=\"{}\" y=\"20\" width=\"{}\" height=\"{}\" fill=\"#f6f6f6\"/>"
      "<text x=\"4\" y=\"24\" font-size=\"12\">{:.3g} {}</text><text x=\"4\" y=\"{}\" font-size=\"12\">0</text>"
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">cycle {}</text>"
      "<polyline fill=\"none\" stroke=\"#3c9a4a\" stroke-width=\"1.5\" points=\"{}\"/></svg>\n",
      title, id, kWidth, h + 14, kLabelWidth, kWidth - kLabelWidth, h - 30, max, unit, h - 10, kWidth, h + 10, cycles,
      pts);
}

}  // namespace

void write_html_report(const std::string& html_path, const ReportInput& in) {
  std::ifstream tf(in.trace_path);
  if (!tf) throw InputError(fmt::format("--report: cannot read the trace '{}'", in.trace_path));
  const nlohmann::json trace = nlohmann::json::parse(tf, nullptr, false);
  if (trace.is_discarded()) throw InputError(fmt::format("--report: '{}' is not trace JSON", in.trace_path));

  std::map<int, std::string> track_names;  // SM 0's tracks
  std::vector<Span> spans;                 // SM 0's, in the window
  std::vector<double> mma_busy(kBuckets, 0), tma_bytes(kBuckets, 0);
  std::map<int, bool> sms;
  const double bucket = std::max<double>(1, static_cast<double>(in.cycles) / kBuckets);
  auto spread = [&](std::vector<double>& into, Cycle start, Cycle dur, double amount) {
    if (dur == 0) return;
    for (Cycle c = start; c < start + dur;) {  // bucket by bucket
      const auto b = static_cast<std::size_t>(std::min<double>(kBuckets - 1, c / bucket));
      const Cycle end = std::min<Cycle>(start + dur, static_cast<Cycle>((b + 1) * bucket) + 1);
      into[b] += amount * static_cast<double>(end - c) / static_cast<double>(dur);
      c = end;
    }
  };
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    const int pid = e.value("pid", -1), tid = e.value("tid", -1);
    if (ph == "M" && pid == 0 && e.value("name", "") == "thread_name") track_names[tid] = e["args"].value("name", "");
    if (ph != "X") continue;
    sms[pid] = true;
    const Cycle start = e.value("ts", Cycle{0}), dur = e.value("dur", Cycle{0});
    if (tid == kMmaTrack) spread(mma_busy, start, dur, static_cast<double>(dur));
    if (tid == kTmaTrack && e.contains("args")) spread(tma_bytes, start, dur, e["args"].value("bytes", 0.0));
    if (pid == 0 && start + dur >= in.window_begin && start <= in.window_end)
      spans.push_back(Span{tid, start, dur, e.value("name", "")});
  }
  const double nsm = std::max<std::size_t>(1, sms.size());
  for (double& v : mma_busy) v = v / (bucket * nsm);
  for (double& v : tma_bytes) v = v / (bucket * nsm);

  // Timeline rows: SM 0's warps in index order, then the CTA, TMA and MMA tracks.
  std::vector<int> rows;
  for (const auto& [tid, name] : track_names)
    if (tid < 1000 || tid == kTmaTrack || tid == kMmaTrack || tid == kTmemTrack || tid == kCtaTrack) rows.push_back(tid);
  const double span_w = kWidth - kLabelWidth;
  const double scale = span_w / static_cast<double>(std::max<Cycle>(1, in.window_end - in.window_begin));
  std::string timeline = fmt::format(
      "<svg id=\"timeline\" width=\"{}\" height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n", kWidth,
      rows.size() * kRowHeight + 24);
  for (std::size_t r = 0; r < rows.size(); ++r)
    timeline += fmt::format("<text x=\"2\" y=\"{:.0f}\" font-size=\"12\">{}</text>\n", (r + 1) * kRowHeight - 5,
                            escape(track_names[rows[r]]));
  std::size_t drawn = 0;
  for (const Span& s : spans) {
    const auto row = std::find(rows.begin(), rows.end(), s.tid);
    if (row == rows.end()) continue;
    const Cycle a = std::max(s.start, in.window_begin), b = std::min(s.start + s.dur, in.window_end);
    timeline += fmt::format(
        "<rect class=\"span\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"><title>{} "
        "[{}, +{})</title></rect>\n",
        kLabelWidth + (a - in.window_begin) * scale, (row - rows.begin()) * kRowHeight + 2,
        std::max(0.5, (b - a) * scale), kRowHeight - 4, colour(s), escape(s.name), s.start, s.dur);
    ++drawn;
  }
  timeline += fmt::format("<text x=\"{}\" y=\"{:.0f}\" font-size=\"12\" text-anchor=\"end\">cycles {} .. {}</text>",
                          kWidth, rows.size() * kRowHeight + 18, in.window_begin, in.window_end);
  timeline += "</svg>\n";

  std::string figures;
  for (const auto& [k, v] : in.summary.items())
    if (v.is_primitive() && !v.is_null())
      figures += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", escape(k),
                             escape(v.is_string()         ? v.get<std::string>()
                                    : v.is_number_float() ? fmt::format("{:.4g}", v.get<double>())
                                                          : v.dump()));
  std::string stats;
  for (const StatSample& s : in.stats)
    stats += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(s.info->name),
                         escape(format_value(s.info->unit, s.value)), escape(s.info->description));

  std::ofstream out(html_path);
  if (!out) throw InputError(fmt::format("--report {}: cannot write the file", html_path));
  out << fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bwsim report: {}</title>\n"
      "<style>body{{font-family:sans-serif;margin:16px}} td{{padding:1px 10px}} pre{{background:#f6f6f6;padding:8px}}"
      "</style></head><body>\n<h1>bwsim: {}</h1>\n<p>{}</p>\n<table>{}</table>\n<h2>Where the time went</h2>\n"
      "<pre>{}</pre>\n<h2>SM 0 timeline ({} spans; orange: issue, grey: waits, blue: TMA, green: MMA)</h2>\n{}{}{}"
      "<h2>Statistics</h2>\n<table id=\"stats\">{}</table>\n</body></html>\n",
      escape(in.summary.value("kernel", "")), escape(in.summary.value("kernel", "")),
      escape(in.summary.value("problem", "")), figures, escape(in.stall_table), drawn, timeline,
      plot("tensor", "Tensor-pipe utilisation (traced SMs)", mma_busy, 1.0, "busy", in.cycles),
      plot("bandwidth", "TMA bytes per cycle per SM (traced SMs)", tma_bytes,
           std::max(1.0, *std::max_element(tma_bytes.begin(), tma_bytes.end())), "B/cycle", in.cycles),
      stats);
}

}  // namespace bwsim
