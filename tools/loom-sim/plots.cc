#include "plots.h"

#include <cstdlib>
#include <fstream>

#include "sim/report.h"

namespace loom::simtool {
namespace {

Status runGnuplot(const std::string& script) {
  std::string cmd = "gnuplot '" + script + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) return systemError("gnuplot failed on ", script);
  return Status();
}

std::string quoted(const std::string& s) {
  std::string o;
  for (char c : s) o += (c == '"' || c == '_') ? ' ' : c;
  return "\"" + o + "\"";
}

}  // namespace

Status plotBusbw(const std::string& dir, const std::string& title,
                 const std::vector<BusbwSeries>& series) {
  std::string dat = dir + "/busbw.dat", gp = dir + "/busbw.gp";
  std::ofstream d(dat);
  for (const BusbwSeries& s : series) {
    d << "# " << s.name << "\n";
    for (const auto& p : s.points) d << p.first << " " << p.second << "\n";
    d << "\n\n";
  }
  d.close();
  std::ofstream g(gp);
  g << "set terminal pngcairo size 1000,600 noenhanced\nset output '" << dir << "/busbw.png'\n"
    << "set title " << quoted(title) << "\nset logscale x 2\nset format x '%.0b%B'\n"
    << "set xlabel 'message size (bytes)'\nset ylabel 'busbw (GB/s)'\nset key left top\n"
    << "set grid\nplot ";
  for (size_t i = 0; i < series.size(); ++i)
    g << (i ? ", " : "") << "'" << dat << "' index " << i << " with linespoints title "
      << quoted(series[i].name);
  g << "\n";
  g.close();
  if (!d || !g) return systemError("cannot write ", dat, " or ", gp);
  return runGnuplot(gp);
}

Status plotUtilisation(const std::string& dir, const std::string& tag, const std::string& title,
                       const sim::Net& net, const sim::SimResult& r) {
  std::vector<sim::LevelUtil> lv = sim::utilisationByLevel(net, r);
  std::string dat = dir + "/util_" + tag + ".dat", gp = dir + "/util_" + tag + ".gp";
  std::ofstream d(dat);
  for (const sim::LevelUtil& u : lv) {
    d << "# " << sim::linkLevelName(u.level) << "\n";
    for (size_t i = 0; i < u.sorted.size(); ++i)
      d << (u.sorted.size() > 1 ? static_cast<double>(i) / (u.sorted.size() - 1) : 0.0) << " "
        << u.sorted[i] * 100 << "\n";
    d << "\n\n";
  }
  d.close();
  std::ofstream g(gp);
  g << "set terminal pngcairo size 1000,600 noenhanced\nset output '" << dir << "/util_" << tag
    << ".png'\nset title " << quoted(title) << "\nset xlabel 'links of the level, busiest first'"
    << "\nset ylabel 'utilisation (% of makespan at full rate)'\nset yrange [0:105]\nset grid\n"
    << "set key outside right\n"
    << "plot ";
  for (size_t i = 0; i < lv.size(); ++i)
    g << (i ? ", " : "") << "'" << dat << "' index " << i << " with lines lw 2 title '"
      << sim::linkLevelName(lv[i].level) << " (" << lv[i].links << " links)'";
  g << "\n";
  g.close();
  LOOM_CHECK(runGnuplot(gp));
  std::vector<sim::GroupUtil> gu = sim::utilisationByGroup(net, r);
  if (gu.size() < 2) return Status();
  std::string gdat = dir + "/util_groups_" + tag + ".dat",
              ggp = dir + "/util_groups_" + tag + ".gp";
  std::ofstream gd(gdat);
  gd << "# group meanLocal maxLocal meanGlobal maxGlobal (%)\n";
  for (const sim::GroupUtil& u : gu)
    gd << u.group << " " << u.meanLocal * 100 << " " << u.maxLocal * 100 << " "
       << u.meanGlobal * 100 << " " << u.maxGlobal * 100 << "\n";
  gd.close();
  std::ofstream gg(ggp);
  gg << "set terminal pngcairo size 1000,600 noenhanced\nset output '" << dir << "/util_groups_"
     << tag << ".png'\nset title " << quoted(title + " per group") << "\nset style data histograms"
     << "\nset style fill solid 0.8\nset xlabel 'group'\nset ylabel 'utilisation (%)'\n"
     << "set yrange [0:105]\nset grid y\nplot '" << gdat << "' using 2:xtic(1) title "
     << "'mean local', '' using 3 title 'max local', '' using 4 title 'mean global', '' using 5 "
     << "title 'max global'\n";
  gg.close();
  return runGnuplot(ggp);
}

}  // namespace loom::simtool
