// `kernlens report FILE... -o report.html`: one self-contained HTML page.
#include <filesystem>

#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/report.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {"html"});
  auto outPath = args.get("-o");
  if (!outPath) outPath = args.get("--output");
  if (!outPath) throw UsageError("report needs -o FILE.html");
  auto lp = loadProfile(c.files);
  analysis::View v(lp->model, c.scope, &lp->attr);
  OutputTarget out(outPath, ctx.out);
  analysis::ReportOptions ro;
  ro.title = lp->label;
  analysis::writeReport(out.stream(), v, ro);
  out.finish();
  if (*outPath != "-") ctx.err << "wrote " << *outPath << "\n";
  return 0;
}

Registrar reg{Command{"report", "one self-contained HTML report (timeline + analyses)",
                      "usage: kernlens report FILE... -o report.html [--gpu N] [--trim START END]\n\n"
                      "Writes ONE HTML page with everything inline (no network access): a zoomable\n"
                      "timeline with a lane per GPU stream and per CPU thread/range depth (items closer\n"
                      "than 1/4000 of the span are merged; the 96 busiest lanes of each kind), diagnose\n"
                      "findings, top kernels, streams, overlap, gaps, NCCL, memcpy, launch, threads,\n"
                      "iterations and the range tree.\n\n"
                      "  -o, --output FILE  the HTML file to write ('-' = standard output)\n"
                      "  --gpu N, --trim START END  as for the other commands\n"
                      "Exit status: 0 success, 1 bad input, 2 bad usage.\n",
                      profileOptions({{"-o"}, {"--output"}}), run}};

}  // namespace
}  // namespace kl::cli
