// loom-plan --calibrate: fits the cost model to measured all-reduces (measure.cc) and stores the
// tuning table.
#include "calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <tuple>

#include "core/params.h"
#include "kernels/reduce.h"
#include "least_squares.h"
#include "plan/planner.h"

namespace loomplan {

using Clock = std::chrono::steady_clock;
using loom::Status;

namespace {

using loom::plan::AlgoFit;
using loom::plan::CostParams;
using Terms = loom::plan::CostModel::Terms;

// One calibration point: an algorithm (or "direct") forced at one (transport, ranks, size), its
// median time and the model's terms for it.
struct Point {
  std::string algo, transport;
  int ranks;
  uint64_t bytes;
  double us;
  Terms terms;
};

loom::plan::PlannerContext plannerFor(const CostParams& params, int ranks,
                                      const std::string& transport, const std::string& algo) {
  loom::plan::PlannerContext ctx;
  ctx.nranks = ranks;
  for (int r = 0; r < ranks; ++r) ctx.hostOf.push_back(transport == "tcp" ? r : 0);
  ctx.params = params;
  ctx.params.tuned.clear();  // the model's own terms
  ctx.readEnv = false;
  ctx.chunkBytes = static_cast<uint64_t>(loom::params::chunkBytes());
  if (!algo.empty() && algo != "direct") ctx.algo = "allreduce:" + algo;
  return ctx;
}

// The model's terms for a point: the variant (chunk, order) its forced planner picks under
// `params`; the direct path's own terms for "direct".
Status termsOf(const CostParams& params, Point* pt) {
  loom::plan::Planner pl(plannerFor(params, pt->ranks, pt->transport, pt->algo));
  LOOM_CHECK(pl.status());
  if (pt->algo == "direct") {
    pt->terms = pl.model().directTerms(pt->bytes);
    return Status();
  }
  const loom::sched::CollArgs args = allReduceArgs(pt->bytes);
  const loom::plan::Decision& d = pl.choose(args);
  if (!d.algo) return loom::internalError("calibrate: no decision for ", pt->algo);
  std::vector<loom::plan::Round> rounds;
  LOOM_CHECK(pl.rounds(args, d, &rounds));
  pt->terms = pl.model().terms(rounds, loom::plan::Planner::pipelined(pt->algo), pt->bytes);
  return Status();
}

// Predicted us of a point under a fit, as CostModel::price adds it up.
double predictUs(const AlgoFit& f, const Terms& t) {
  return f.baseUs + t.fixed * 1e6 + f.roundUs * t.rounds + f.wakeUs * t.wakes +
         t.transfer * 1e6 / f.bwEff;
}

// Least squares for y = base + roundUs R + wakeUs W + invEff T (R, W, T: the model's terms),
// weighted by 1/measured (relative error), with base, wakeUs >= 0, roundUs >= minRoundUs and
// invEff > 0: the best feasible solution over the subsets of {base, roundUs - minRoundUs, wakeUs}
// (invEff always in). minRoundUs < 0 lets the fit take back part of alpha, which two ranks'
// recursive doubling measured together with the per-call cost.
AlgoFit fitPoints(const std::vector<const Point*>& pts, double minRoundUs) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const Point* p : pts) {
    const Terms& t = p->terms;
    rows.push_back({1.0, t.rounds, t.wakes, t.transfer * 1e6});
    y.push_back(p->us - t.fixed * 1e6 - minRoundUs * t.rounds);
    w.push_back(1.0 / p->us);
  }
  AlgoFit best;
  double bestErr = -1;
  // invEff fitted, or held at 1 (when no subset with it fitted is feasible, noisy points).
  for (int mask = 0; mask < 16; ++mask) {
    const bool fixedEff = mask & 8;
    std::vector<int> cols;
    if (!fixedEff) cols.push_back(3);
    for (int c = 0; c < 3; ++c)
      if (mask & (1 << c)) cols.push_back(c);
    std::vector<double> yy = y, x(4, 0.0);
    if (fixedEff)
      for (size_t k = 0; k < rows.size(); ++k) yy[k] -= rows[k][3];
    if (!cols.empty() && !leastSquares(rows, yy, w, cols, &x)) continue;
    if (fixedEff) x[3] = 1;
    if (x[0] < 0 || x[1] < 0 || x[2] < 0 || x[3] <= 0) continue;
    AlgoFit f;
    f.baseUs = x[0];
    f.roundUs = x[1] + minRoundUs;
    f.wakeUs = x[2];
    f.bwEff = std::clamp(1.0 / x[3], 0.05, 20.0);
    double err = 0;
    for (const Point* p : pts) err += std::pow(predictUs(f, p->terms) / p->us - 1, 2);
    if (bestErr < 0 || err < bestErr) bestErr = err, best = f;
  }
  return best;
}

// The same terms with the per-round costs (roundUs, wakeUs) shared by all algorithms of a
// transport (the executor's and the transport's, not an algorithm's) and baseUs, bwEff per
// algorithm: one weighted least squares over all points, constraints by an active set (a
// negative base or wake term is dropped, a roundUs below minRoundUs held at it, a non-positive
// 1/bwEff held at 1), until feasible.
std::map<std::string, AlgoFit> fitShared(const std::vector<const Point*>& pts, double minRoundUs) {
  std::vector<std::string> algos;
  for (const Point* p : pts)
    if (std::find(algos.begin(), algos.end(), p->algo) == algos.end()) algos.push_back(p->algo);
  const size_t A = algos.size(), n = 2 + 2 * A;  // round, wake, then (base, invEff) per algo
  std::vector<bool> on(n, true), effFixed(A, false);
  std::vector<double> x(n, 0.0);
  for (int iter = 0; iter < int(n) + 2; ++iter) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y, w;
    for (const Point* p : pts) {
      const size_t k = std::find(algos.begin(), algos.end(), p->algo) - algos.begin();
      std::vector<double> row(n, 0.0);
      row[0] = p->terms.rounds, row[1] = p->terms.wakes;
      row[2 + 2 * k] = 1, row[3 + 2 * k] = p->terms.transfer * 1e6;
      double yy = p->us - p->terms.fixed * 1e6 - minRoundUs * p->terms.rounds;
      if (effFixed[k]) yy -= row[3 + 2 * k], row[3 + 2 * k] = 0;
      rows.push_back(row), y.push_back(yy), w.push_back(1.0 / p->us);
    }
    std::vector<int> cols;
    for (size_t c = 0; c < n; ++c)
      if (on[c] && !(c >= 2 && c % 2 == 1 && effFixed[(c - 3) / 2])) cols.push_back(int(c));
    if (!leastSquares(rows, y, w, cols, &x)) break;
    bool changed = false;
    for (size_t c = 0; c < n; ++c) {
      if (!on[c] || (c >= 2 && c % 2 == 1 && effFixed[(c - 3) / 2])) continue;
      if (c >= 2 && c % 2 == 1 && x[c] <= 0) effFixed[(c - 3) / 2] = true, changed = true;
      if ((c < 2 || c % 2 == 0) && x[c] < 0) on[c] = false, x[c] = 0, changed = true;
    }
    if (!changed) break;
  }
  std::map<std::string, AlgoFit> out;
  for (size_t k = 0; k < A; ++k) {
    AlgoFit f;
    f.roundUs = (on[0] ? std::max(0.0, x[0]) : 0) + minRoundUs;
    f.wakeUs = on[1] ? std::max(0.0, x[1]) : 0;
    f.baseUs = on[2 + 2 * k] ? std::max(0.0, x[2 + 2 * k]) : 0;
    f.bwEff = effFixed[k] || x[3 + 2 * k] <= 0 ? 1 : std::clamp(1.0 / x[3 + 2 * k], 0.05, 20.0);
    out[algos[k]] = f;
  }
  return out;
}

// The per-message terms of one transport from two ranks' recursive doubling (one exchange of
// the whole vector and one reduction of it per call): t(n) = alpha + [n > eager] bigAlpha +
// n / rate(n) + n / reduce, rate(n) = cacheRate for n <= cacheBytes, else rate, by weighted least
// squares for each pair of thresholds of a grid ("none" in it; twoLevel false keeps only that
// point, the one-level model). Every feasible grid point is a candidate; fitModel keeps the one
// whose per-algorithm fits predict all of the transport's points best.
struct LinkFit {
  double alphaUs = 0, bigAlphaUs = 0, eagerBytes = 1024, cacheBytes = 262144, cacheGBps = 0;
  double gbps = 1;
  bool footprint = false;  // the cache threshold holds the two ranks' footprint, not the message
};
std::vector<LinkFit> linkCandidates(const std::vector<std::pair<uint64_t, double>>& rd,
                                    double reduceGBps, bool twoLevel) {
  constexpr double kNone = 1e300;
  const std::vector<double> eagers =
      twoLevel ? std::vector<double>{256, 1024, 4096, 16384, kNone} : std::vector<double>{kNone};
  // Cache thresholds on the message, then on the footprint (two ranks: twice the message).
  std::vector<std::pair<double, bool>> caches = {{0, false}};
  if (twoLevel)
    for (bool footprint : {false, true})
      for (double c : {32768, 131072, 524288, 2097152})
        caches.push_back({c * (footprint ? 2 : 1), footprint});
  if (twoLevel) caches.push_back({8388608 * 2, true});
  std::vector<LinkFit> out;
  for (double e : eagers)
    for (auto [c, footprint] : caches) {
      std::vector<std::vector<double>> rows;
      std::vector<double> y, w;
      for (auto [n, us] : rd) {
        const double b = static_cast<double>(n), k = footprint ? 2 * b : b;
        rows.push_back({1.0, b > e ? 1.0 : 0.0, k <= c ? b : 0.0, k > c ? b : 0.0});
        y.push_back(us - b / (reduceGBps * 1e3));
        w.push_back(1.0 / us);
      }
      std::vector<int> cols = {0, 3};
      if (e < kNone) cols.push_back(1);
      if (c > 0) cols.push_back(2);
      std::vector<double> x;
      if (!leastSquares(rows, y, w, cols, &x)) continue;
      if (x[0] <= 0 || x[1] < 0 || x[3] <= 0 || (c > 0 && x[2] <= 0)) continue;
      LinkFit f;
      f.alphaUs = x[0];
      f.bigAlphaUs = e < kNone ? x[1] : 0;
      f.eagerBytes = e < kNone ? e : 1024;
      f.cacheBytes = c > 0 ? c : 262144;
      f.footprint = footprint;
      f.cacheGBps = c > 0 ? std::min(100.0, 1e-3 / x[2]) : 0;
      f.gbps = std::min(100.0, 1e-3 / x[3]);
      out.push_back(f);
    }
  return out;
}

void applyLink(const LinkFit& f, bool shm, CostParams* out) {
  if (shm) {
    out->shmAlphaUs = f.alphaUs, out->shmGBps = f.gbps, out->shmBigAlphaUs = f.bigAlphaUs;
    out->shmEagerBytes = f.eagerBytes, out->shmCacheBytes = f.cacheBytes;
    out->shmCacheGBps = f.cacheGBps;
    out->shmCacheFootprint = f.footprint;
    out->hostMemGBps = out->shmGBps * std::max(1.0, out->cores);
  } else {
    out->tcpAlphaUs = f.alphaUs, out->tcpGBps = f.gbps, out->tcpBigAlphaUs = f.bigAlphaUs;
    out->tcpEagerBytes = f.eagerBytes, out->tcpCacheBytes = f.cacheBytes;
    out->tcpCacheGBps = f.cacheGBps;
    out->tcpCacheFootprint = f.footprint;
  }
}

// How the model's choices fare on measured points: per (ranks, size) of the points the candidate
// with the lowest prediction against the fastest measured; `regret` sums log(measured choice /
// measured best), `met` counts the (ranks, size) where that ratio is <= 1.10, of `groups`.
struct Regret {
  double regret = 0;
  int met = 0, groups = 0;
};
Regret regretOf(const std::vector<const Point*>& pts, const std::vector<double>& pred) {
  std::map<std::pair<int, uint64_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < pts.size(); ++i) groups[{pts[i]->ranks, pts[i]->bytes}].push_back(i);
  Regret r;
  for (const auto& [key, idx] : groups) {
    size_t choice = idx[0], best = idx[0];
    for (size_t i : idx) {
      if (pred[i] < pred[choice]) choice = i;
      if (pts[i]->us < pts[best]->us) best = i;
    }
    const double ratio = pts[choice]->us / pts[best]->us;
    r.regret += std::log(ratio);
    r.met += ratio <= 1.10;
    ++r.groups;
  }
  return r;
}

// Fits every algorithm over `tr` twice (the second time the forced planners pick their variants,
// chunk and order, with the first fit in place, as the library will); `err`: the sum of squared
// relative errors of the result over the transport's points, `regret`: its choices on them.
Status fitAlgos(std::vector<Point>& pts, const std::string& tr, bool sharedRounds, CostParams* out,
                double* err, Regret* regret) {
  for (int pass = 0; pass < 2; ++pass) {
    std::map<std::string, std::vector<const Point*>> by;
    for (Point& p : pts)
      if (p.transport == tr) {
        LOOM_CHECK(termsOf(*out, &p));
        by[p.algo + "." + tr].push_back(&p);
      }
    const double alphaUs = tr == "shm" ? out->shmAlphaUs : out->tcpAlphaUs;
    std::vector<const Point*> schedules;  // every algorithm but the direct path (own terms)
    for (const auto& [which, sel] : by) {
      if (sel[0]->algo == "direct" || !sharedRounds)
        out->fits[which] = fitPoints(sel, sel[0]->algo == "direct" ? 0.0 : -0.9 * alphaUs);
      else
        schedules.insert(schedules.end(), sel.begin(), sel.end());
    }
    if (!schedules.empty())
      for (auto& [algo, f] : fitShared(schedules, -0.9 * alphaUs)) out->fits[algo + "." + tr] = f;
  }
  *err = 0;
  std::vector<const Point*> sel;
  std::vector<double> pred;
  for (Point& p : pts)
    if (p.transport == tr) {
      LOOM_CHECK(termsOf(*out, &p));
      pred.push_back(predictUs(out->fits[p.algo + "." + tr], p.terms));
      sel.push_back(&p);
      *err += std::pow(pred.back() / p.us - 1, 2);
    }
  *regret = regretOf(sel, pred);
  return Status();
}

// Link terms and algorithm fits of both transports on `pts`.
constexpr double kErrSlack = 1.5;
Status fitModel(std::vector<Point>& pts, bool twoLevel, CostParams* out) {
  const bool cma = loom::params::shmCma() != "off";
  out->fits.clear();
  out->shmCmaGBps = 0;
  for (const std::string tr : {"shm", "tcp"}) {
    std::vector<std::pair<uint64_t, double>> rd;
    double cmaUs = 0;
    uint64_t cmaN = 0;
    for (const Point& p : pts) {
      if (p.algo != "rd" || p.ranks != 2 || p.transport != tr) continue;
      if (tr == "shm" && cma && p.bytes >= out->shmCmaBytes) {
        if (p.bytes > cmaN) cmaN = p.bytes, cmaUs = p.us;
        continue;
      }
      rd.push_back({p.bytes, p.us});
    }
    if (rd.size() < 3)
      return loom::invalidArgument("calibrate: needs two-rank rd over ", tr, " at 3 sizes or more");
    // Among the link fits whose algorithm fits predict the times about as well as the best
    // (squared relative error within kErrSlack x), the one whose choices are within 10% of the
    // fastest most often, then lose least.
    std::vector<std::tuple<double, Regret, CostParams>> tried;
    for (const LinkFit& f : linkCandidates(rd, out->reduceGBps, twoLevel)) {
      CostParams c = *out;
      applyLink(f, tr == "shm", &c);
      if (cmaN > 0 && tr == "shm") {
        const double t =
            cmaUs * 1e-6 - f.alphaUs * 1e-6 - f.bigAlphaUs * 1e-6 - cmaN / (c.reduceGBps * 1e9);
        c.shmCmaGBps = std::min(100.0, cmaN / std::max(1e-9, t) / 1e9);
      }
      // The message latency as CPU work of the shared cores (1) or as waiting (0); without
      // shared cores the two are the same model, fitted once.
      const std::vector<double> shares =
          c.cores > 0 ? std::vector<double>{1.0, 0.0} : std::vector<double>{1.0};
      for (double share : shares)
        for (bool sharedRounds : {false, true}) {
          CostParams cs = c;
          (tr == "shm" ? cs.shmAlphaCpu : cs.tcpAlphaCpu) = share;
          double err = 0;
          Regret regret;
          LOOM_CHECK(fitAlgos(pts, tr, sharedRounds, &cs, &err, &regret));
          tried.emplace_back(err, regret, cs);
        }
    }
    if (tried.empty())
      return loom::systemError("calibrate: the two-rank rd times over ", tr,
                               " fit no positive latency and per-byte cost (they do not grow "
                               "with the size: a disturbed measurement; measure more rounds or "
                               "larger sizes)");
    double least = std::get<0>(tried[0]);
    for (const auto& t : tried) least = std::min(least, std::get<0>(t));
    const std::tuple<double, Regret, CostParams>* pick = nullptr;
    for (const auto& t : tried)
      if (std::get<0>(t) <= kErrSlack * least &&
          (!pick || std::get<1>(t).met > std::get<1>(*pick).met ||
           (std::get<1>(t).met == std::get<1>(*pick).met &&
            std::get<1>(t).regret < std::get<1>(*pick).regret)))
        pick = &t;
    *out = std::get<2>(*pick);
  }
  return Status();
}

// The algorithm the cost model alone picks for a point's communicator and size.
std::string modelChoice(const CostParams& params, const Point& p) {
  loom::plan::PlannerContext ctx = plannerFor(params, p.ranks, p.transport, "");
  ctx.directBytes = p.transport == "shm" ? directBytes() : 0;
  loom::plan::Planner pl(ctx);
  const loom::plan::Decision& d = pl.choose(allReduceArgs(p.bytes));
  return d.algo ? d.algo->name : "";
}

// The tuning table: per (transport, ranks, size) the measured fastest algorithm, unless the cost
// model's own choice measured within kTie of it (then the model's, so that the table overrides
// the model only where the measurement clearly disagrees); buckets up to the geometric middle
// between measured sizes (the last up to the largest size measured), equal neighbours merged.
constexpr double kTie = 1.05;
void tuningTable(const std::vector<Point>& pts, CostParams* out) {
  std::map<std::string, std::map<uint64_t, std::map<std::string, double>>> us;
  std::map<std::string, std::map<uint64_t, const Point*>> any;
  for (const Point& p : pts) {
    const std::string which = p.transport + "." + std::to_string(p.ranks);
    us[which][p.bytes][p.algo] = p.us;
    any[which][p.bytes] = &p;
  }
  out->tuned.clear();
  for (const auto& [which, bySize] : us) {
    std::vector<std::pair<uint64_t, std::string>> v;
    for (auto it = bySize.begin(); it != bySize.end(); ++it) {
      const auto& t = it->second;
      auto best = std::min_element(
          t.begin(), t.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      std::string pick = best->first;
      auto m = t.find(modelChoice(*out, *any[which][it->first]));
      if (m != t.end() && m->second <= kTie * best->second) pick = m->first;
      auto next = std::next(it);
      const uint64_t upTo =
          next == bySize.end()
              ? it->first
              : static_cast<uint64_t>(std::sqrt(double(it->first) * double(next->first)));
      if (!v.empty() && v.back().second == pick)
        v.back().first = upTo;
      else
        v.push_back({upTo, pick});
    }
    for (auto& [upTo, algo] : v) out->tuned[which][upTo] = algo;
  }
}

// A number after "key": in a --measure line (0 when absent).
double jsonNumber(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  return at == line.npos ? 0 : std::strtod(line.c_str() + at + key.size() + 3, nullptr);
}

// Calibration points from --measure lines: per (transport, ranks, size, algorithm) the median
// of every round of every file that measured it, so that several runs (minutes apart, in
// different states of the machine) pool into one point instead of one run deciding.
Status readPoints(const std::vector<std::string>& files, const std::vector<std::string>& algos,
                  std::vector<Point>* pts) {
  std::map<std::tuple<std::string, int, uint64_t, std::string>, std::vector<double>> rounds;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) return loom::invalidArgument("calibrate: cannot read --from-json file ", file);
    for (std::string line; std::getline(in, line);) {
      line.erase(std::remove(line.begin(), line.end(), ' '), line.end());  // json.dumps spacing
      if (line.empty() || line[0] != '{') continue;
      const std::string tr = line.find("\"transport\":\"tcp\"") != line.npos ? "tcp" : "shm";
      const int ranks = static_cast<int>(jsonNumber(line, "ranks"));
      const auto bytes = static_cast<uint64_t>(jsonNumber(line, "size"));
      for (const std::string& a : algos) {
        const std::string head = "\"" + a + "\":{\"median_us\":";
        const size_t at = line.find(head);
        if (at == line.npos) continue;
        std::vector<double>& v = rounds[{tr, ranks, bytes, a}];
        const size_t end = line.find('}', at);
        const size_t list = line.find("\"rounds_us\":[", at);
        if (list != line.npos && list < end) {
          for (const char* c = line.c_str() + list + 13; *c != ']' && *c;) {
            char* next = nullptr;
            const double us = std::strtod(c, &next);
            if (next == c) break;
            if (us > 0) v.push_back(us);
            c = *next == ',' ? next + 1 : next;
          }
        } else if (const double us = std::strtod(line.c_str() + at + head.size(), nullptr);
                   us > 0) {
          v.push_back(us);
        }
      }
    }
  }
  for (auto& [key, v] : rounds) {
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double us = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    pts->push_back(
        {std::get<3>(key), std::get<0>(key), std::get<1>(key), std::get<2>(key), us, {}});
  }
  if (pts->empty()) return loom::invalidArgument("calibrate: no measurement lines in --from-json");
  return Status();
}

// How well `params` predicts `pts`, per transport and over 8 KiB-512 KiB.
void printQuality(const char* name, const std::vector<Point>& pts,
                  const std::vector<double>& pred) {
  for (const char* tr : {"shm", "tcp", "all"})
    for (bool mid : {false, true}) {
      int n = 0, in10 = 0, in25 = 0;
      std::vector<double> err;
      for (size_t i = 0; i < pts.size(); ++i) {
        const Point& p = pts[i];
        if ((std::string(tr) != "all" && p.transport != tr) ||
            (mid && (p.bytes < 8192 || p.bytes > 524288)))
          continue;
        const double e = std::abs(pred[i] / p.us - 1);
        ++n, in10 += e <= 0.1, in25 += e <= 0.25;
        err.push_back(e);
      }
      if (!n) continue;
      std::sort(err.begin(), err.end());
      std::fprintf(
          stderr,
          "# %-9s %-3s %-13s %3d points: within 10%% %3d, within 25%% %3d, median |error| %.1f%%\n",
          name, tr, mid ? "8 KiB-512 KiB" : "all sizes", n, in10, in25, 100 * err[err.size() / 2]);
    }
}

// The model's own choices on the calibration points (in-sample): per transport, how often the
// algorithm with the lowest prediction measured within 10% of the fastest.
void printChoices(const char* name, const std::vector<Point>& pts,
                  const std::vector<double>& pred) {
  for (const std::string tr : {"shm", "tcp"}) {
    std::vector<const Point*> sel;
    std::vector<double> p;
    for (size_t i = 0; i < pts.size(); ++i)
      if (pts[i].transport == tr) sel.push_back(&pts[i]), p.push_back(pred[i]);
    const Regret r = regretOf(sel, p);
    std::fprintf(stderr,
                 "# %-9s %-3s the model's own choice measured within 10%% of the fastest at %d of "
                 "%d (ranks, size) points\n",
                 name, tr.c_str(), r.met, r.groups);
  }
}

std::vector<double> predictions(const CostParams& params, std::vector<Point>& pts) {
  std::vector<double> pred;
  for (Point& p : pts) {
    if (!termsOf(params, &p).ok()) {
      pred.push_back(0);
      continue;
    }
    auto it = params.fits.find(p.algo + "." + p.transport);
    pred.push_back(predictUs(it == params.fits.end() ? AlgoFit() : it->second, p.terms));
  }
  return pred;
}

}  // namespace

loom::Status calibrate(const std::vector<std::string>& fromJson, CostParams* out, bool verbose,
                       double reduceGBps, const SelfMeasure& self) {
  // The local reduction rate, on this core.
  const size_t big = 4 << 20;
  std::vector<float> a(big / 4, 1.0f), b(big / 4, 2.0f);
  out->reduceGBps = reduceGBps;
  for (int trial = 0; trial < 5 && reduceGBps <= 0;
       ++trial) {  // the best of 5: a busy core only slows it down
    auto t0 = Clock::now();
    for (int i = 0; i < 5; ++i)
      loom::kernels::reduce(a.data(), a.data(), b.data(), a.size(), loom::DataType::kFloat32,
                            loom::RedOp::kSum);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    out->reduceGBps = std::max(out->reduceGBps, 5.0 * big / s / 1e9);
  }
  out->cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  out->shmCmaBytes = static_cast<double>(loom::params::shmCmaThreshold());
  std::vector<std::string> algos;
  for (const loom::algo::AlgoInfo* ai : loom::algo::algosFor(loom::sched::CollType::kAllReduce))
    algos.push_back(ai->name);
  algos.push_back("direct");
  std::vector<Point> pts;
  int rounds = 0;
  if (!fromJson.empty()) {
    LOOM_CHECK(readPoints(fromJson, algos, &pts));
  } else {  // every algorithm forced, over shm and tcp, 8 B to self.maxBytes x4
    MeasureSpec m;
    for (uint64_t s = 8; s <= self.maxBytes; s *= 4) m.sizes.push_back(s);
    m.rounds = rounds = self.rounds;
    for (const char* tr : {"shm", "tcp"})
      for (int ranks : self.ranks) {
        m.transport = tr;
        m.ranks = ranks;
        m.directBytes = std::string(tr) == "shm" ? directBytes() : 0;
        m.algos = algos;  // the direct path only where a communicator has one (one host, shm)
        if (m.directBytes == 0) m.algos.pop_back();
        if (verbose) std::cerr << "# measuring " << tr << " " << ranks << " ranks\n";
        Measured r;
        LOOM_CHECK(measureAllReduce(m, &r));
        for (size_t i = 0; i < m.algos.size(); ++i)
          for (size_t s = 0; s < m.sizes.size(); ++s)
            if (!r.us[i][s].empty())
              pts.push_back({m.algos[i], tr, ranks, m.sizes[s], r.medianUs(i, s), {}});
      }
  }
  // The one-level model (one latency and one rate per transport) for comparison, then the
  // two-level one, which is kept.
  CostParams one = *out;
  LOOM_CHECK(fitModel(pts, false, &one));
  const std::vector<double> predOne = predictions(one, pts);
  LOOM_CHECK(fitModel(pts, true, out));
  const std::vector<double> pred = predictions(*out, pts);
  tuningTable(pts, out);
  if (verbose) {
    std::cerr << "# calibration: measured (median of "
              << (rounds ? std::to_string(rounds) : std::string("the --measure"))
              << " interleaved rounds) against the fitted model (two-level; one-level), us\n";
    for (size_t i = 0; i < pts.size(); ++i) {
      const Point& p = pts[i];
      std::fprintf(stderr, "%s np%d %llu B %s: measured %.2f predicted %.2f (one-level %.2f)\n",
                   p.transport.c_str(), p.ranks, static_cast<unsigned long long>(p.bytes),
                   p.algo.c_str(), p.us, pred[i], predOne[i]);
    }
    printQuality("one-level", pts, predOne);
    printQuality("two-level", pts, pred);
    printChoices("one-level", pts, predOne);
    printChoices("two-level", pts, pred);
  }
  return Status();
}

}  // namespace loomplan
