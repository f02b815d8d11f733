// `kernlens report FILE... -o report.html`: one self-contained HTML page.
#include <filesystem>

#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/report.h"
#include "core/ncu/classify.h"
#include "core/ncu/metrics.h"
#include "core/ncu/report.h"
#include "core/ncu/roofline.h"
#include "core/ncu/roofline_svg.h"
#include "core/profile/kernel_name.h"

namespace kl::cli {
namespace {

/// The roofline section from Nsight Compute CSVs (`--ncu`): one point per launch with the
/// metrics it needs; the chart says how many launches lacked them.
std::string rooflineSection(const std::vector<std::string>& files) {
  std::vector<ncu::RooflineSvgPoint> points;
  ncu::RooflineSvgOptions opt;
  size_t launches = 0, missing = 0;
  std::string absentExample;
  for (const auto& f : files) {
    auto rep = orFail(ncu::readNcuFile(f));
    for (const auto& l : rep.launches) {
      ++launches;
      auto p = ncu::rooflinePoint(l);
      if (!p.ok) {
        ++missing;
        if (absentExample.empty()) absentExample = p.missingText();
        continue;
      }
      if (!opt.peakFlopsPerSec && p.peakFlopsPerSec) opt.peakFlopsPerSec = p.peakFlopsPerSec;
      if (!opt.peakBytesPerSec && p.peakBytesPerSec) opt.peakBytesPerSec = p.peakBytesPerSec;
      auto cls = ncu::classify(ncu::extractMetrics(l));
      points.push_back({profile::displayName(l.kernelName), p.intensity, p.flopsPerSec, cls.bound});
    }
  }
  std::string html = ncu::rooflineSvg(points, opt);
  html += "<p class=\"muted\">" + std::to_string(points.size()) + " of " + std::to_string(launches) +
          " Nsight Compute launches plotted";
  if (missing)
    html += "; " + std::to_string(missing) + " lack the metrics a roofline needs; e.g. missing: " + absentExample;
  html += ".</p>";
  return html;
}

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Html});
  auto outPath = args.get("-o");
  if (!outPath) outPath = args.get("--output");
  if (!outPath) throw UsageError("report needs -o FILE.html");
  auto lp = loadProfile(c.files, ctx.err);
  noteEmulated(ctx.err, lp->model);  // the page itself shows an EMULATED banner
  const analysis::View v = lp->view(c.scope);
  OutputTarget out(outPath, ctx.out);
  analysis::ReportOptions ro;
  ro.title = lp->label;
  if (auto ncuFiles = args.values("--ncu"); !ncuFiles.empty())
    ro.extraSections.emplace_back("Roofline (Nsight Compute)", rooflineSection(ncuFiles));
  analysis::writeReport(out.stream(), v, ro);
  out.finish();
  if (*outPath != "-") ctx.err << "wrote " << *outPath << "\n";
  return 0;
}

Registrar reg{
    Command{"report", "one self-contained HTML report (timeline + analyses)",
            "usage: kernlens report FILE... -o report.html [--ncu NCU.csv]... [--gpu N] [--trim START END]\n\n"
            "Writes ONE HTML page with everything inline (no network access): a zoomable\n"
            "timeline with a lane per GPU stream and per CPU thread/range depth (items closer\n"
            "than 1/4000 of the span are merged; the 96 busiest lanes of each kind), diagnose\n"
            "findings, top kernels, streams, overlap, gaps, NCCL, memcpy, launch, threads,\n"
            "iterations and the range tree.\n\n"
            "  -o, --output FILE  the HTML file to write ('-' = standard output)\n"
            "  --ncu FILE         add an SVG roofline from an Nsight Compute CSV (repeatable)\n"
            "  --gpu N, --trim START END  as for the other commands\n"
            "Exit status: 0 success, 1 bad input, 2 bad usage.\n",
            profileOptions({{"-o"}, {"--output"}, {"--ncu", true, true}}), run}};

}  // namespace
}  // namespace kl::cli
