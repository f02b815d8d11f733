#include "core/ncu/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kl::ncu {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string si(double v) {
  const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (v >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  char b[32];
  std::snprintf(b, sizeof b, "%g%s", v, units[i]);
  return b;
}

const char* colour(Bound b) {
  switch (b) {
    case Bound::Compute: return "#d62728";
    case Bound::Memory: return "#1f77b4";
    case Bound::Latency: return "#ff7f0e";
    case Bound::Balanced: return "#2ca02c";
    default: return "#7f7f7f";
  }
}

}  // namespace

std::string rooflineSvg(const std::vector<RooflineSvgPoint>& pts, const RooflineSvgOptions& opt) {
  const double W = opt.width, H = opt.height, L = 70, R = 20, T = 30, B = 50;
  std::vector<const RooflineSvgPoint*> ok;
  for (const auto& p : pts)
    if (p.intensity > 0 && p.flopsPerSec > 0 && std::isfinite(p.intensity) && std::isfinite(p.flopsPerSec))
      ok.push_back(&p);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"kl-roofline\" width=\"" + num(W) + "\" height=\"" +
                  num(H) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\">";
  s += "<text x=\"" + num(W / 2) + "\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">" + esc(opt.title) + "</text>";
  if (ok.empty()) {
    s += "<text x=\"" + num(W / 2) + "\" y=\"" + num(H / 2) +
         "\" text-anchor=\"middle\" font-size=\"12\">no kernel has a roofline point (FLOP and DRAM byte "
         "metrics missing)</text></svg>";
    return s;
  }
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (auto* p : ok) {
    xmin = std::min(xmin, p->intensity);
    xmax = std::max(xmax, p->intensity);
    ymin = std::min(ymin, p->flopsPerSec);
    ymax = std::max(ymax, p->flopsPerSec);
  }
  if (opt.peakFlopsPerSec) ymax = std::max(ymax, *opt.peakFlopsPerSec);
  if (opt.peakFlopsPerSec && opt.peakBytesPerSec) {
    double ridge = *opt.peakFlopsPerSec / *opt.peakBytesPerSec;
    xmin = std::min(xmin, ridge);
    xmax = std::max(xmax, ridge);
  }
  double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
  double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  if (ly1 <= ly0) ly1 = ly0 + 1;
  auto X = [&](double v) { return L + (std::log10(v) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto Y = [&](double v) { return H - B - (std::log10(v) - ly0) / (ly1 - ly0) * (H - T - B); };
  s += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"none\" stroke=\"#999\"/>";
  for (double e = lx0; e <= lx1; ++e)
    s += "<text x=\"" + num(X(std::pow(10, e))) + "\" y=\"" + num(H - B + 16) +
         "\" text-anchor=\"middle\" font-size=\"10\">" + si(std::pow(10, e)) + "</text>";
  for (double e = ly0; e <= ly1; ++e)
    s += "<text x=\"" + num(L - 6) + "\" y=\"" + num(Y(std::pow(10, e)) + 3) +
         "\" text-anchor=\"end\" font-size=\"10\">" + si(std::pow(10, e)) + "</text>";
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 12) +
       "\" text-anchor=\"middle\" font-size=\"11\">arithmetic intensity (FLOP / DRAM byte)</text>";
  s += "<text x=\"14\" y=\"" + num((T + H - B) / 2) + "\" transform=\"rotate(-90 14 " + num((T + H - B) / 2) +
       ")\" text-anchor=\"middle\" font-size=\"11\">FLOP/s</text>";
  if (opt.peakFlopsPerSec && opt.peakBytesPerSec) {
    double xa = std::pow(10, lx0), ridge = *opt.peakFlopsPerSec / *opt.peakBytesPerSec;
    double ya = std::max(xa * *opt.peakBytesPerSec, std::pow(10, ly0));
    double xaAdj = ya / *opt.peakBytesPerSec;
    s += "<polyline class=\"kl-roof\" fill=\"none\" stroke=\"#333\" stroke-width=\"2\" points=\"" + num(X(xaAdj)) +
         "," + num(Y(ya)) + " " + num(X(ridge)) + "," + num(Y(*opt.peakFlopsPerSec)) + " " + num(X(std::pow(10, lx1))) +
         "," + num(Y(*opt.peakFlopsPerSec)) + "\"/>";
  } else if (opt.peakFlopsPerSec) {
    s += "<line class=\"kl-roof\" stroke=\"#333\" stroke-width=\"2\" x1=\"" + num(L) + "\" x2=\"" + num(W - R) +
         "\" y1=\"" + num(Y(*opt.peakFlopsPerSec)) + "\" y2=\"" + num(Y(*opt.peakFlopsPerSec)) + "\"/>";
  }
  for (auto* p : ok) {
    s += "<circle class=\"kl-point\" cx=\"" + num(X(p->intensity)) + "\" cy=\"" + num(Y(p->flopsPerSec)) +
         "\" r=\"4\" fill=\"" + colour(p->bound) + "\"><title>" + esc(p->label) + " (" +
         std::string(boundName(p->bound)) + "): " + si(p->intensity) + " FLOP/B, " + si(p->flopsPerSec) +
         " FLOP/s</title></circle>";
  }
  s += "</svg>";
  return s;
}

}  // namespace kl::ncu
