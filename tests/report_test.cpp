// --report: the HTML page is self-contained and draws the timeline and plots, checked by
// rendering it in headless Chromium (installed by tools/test.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestSupport.hpp"
#include "bwsim/kernel/StatRegistry.hpp"

namespace bwsim {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportTest, HtmlReportRendersInHeadlessChromium) {
  const std::string html = ::testing::TempDir() + "bwsim_report.html";
  const test::Outcome run = test::bwsim("run gemm --config " BWSIM_SOURCE_DIR
                                        "/sim_configs/b200.yaml --m 256 --n 512 --k 512 --ctas 2 --report " + html);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string page = read(html);
  EXPECT_EQ(page.find("<script"), std::string::npos) << "self-contained, no scripts";
  EXPECT_EQ(page.find("http://") , page.find("http://www.w3.org/2000/svg")) << "no network references";
  EXPECT_NE(page.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_GT(count(page, "class=\"span\""), 50u);
  EXPECT_NE(page.find("w1 MMA"), std::string::npos);
  EXPECT_NE(page.find("<svg id=\"tensor\""), std::string::npos);
  EXPECT_NE(page.find("<svg id=\"bandwidth\""), std::string::npos);
  // Every declared statistic, one row each with its description.
  const std::string stats = page.substr(page.find("<table id=\"stats\">"));
  EXPECT_EQ(count(stats.substr(0, stats.find("</table>")), "<tr>"), stat_registry().entries().size());
  for (const StatRegistry::Entry& e : stat_registry().entries())
    EXPECT_NE(stats.find("<td>" + e.info.name + "</td>"), std::string::npos) << e.info.name;
  EXPECT_FALSE(std::filesystem::exists(html + ".trace.json")) << "the report's own trace is removed";

  const std::string chromium = "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars ";
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium")) << "tools/test.sh installs Debian's chromium";
  // The DOM after load holds the drawn timeline.
  const test::Outcome dom = test::run_command(chromium + "--dump-dom file://" + html + " 2>/dev/null");
  ASSERT_EQ(dom.exit_code, 0) << dom.output;
  EXPECT_NE(dom.output.find("id=\"timeline\""), std::string::npos);
  EXPECT_GT(count(dom.output, "class=\"span\""), 50u);
  // And it paints: a screenshot far larger than a blank page's.
  const std::string png = ::testing::TempDir() + "bwsim_report.png";
  std::filesystem::remove(png);
  const test::Outcome shot =
      test::run_command(chromium + "--window-size=1300,1600 --screenshot=" + png + " file://" + html);
  ASSERT_EQ(shot.exit_code, 0) << shot.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << shot.output;
  EXPECT_GT(std::filesystem::file_size(png), 30000u);
}

}  // namespace
}  // namespace bwsim
