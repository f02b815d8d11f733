// `kernlens ncu import FILE...` and `kernlens ncu drill`: Nsight Compute results into the kernel
// catalogue (.kernlens/kernlens.db).
#include <iostream>

#include "cli/cli.h"
#include "cli/ncu_output.h"
#include "core/ncu/drill.h"

namespace kl::cli {
namespace {

int runImport(const Args& args, Context& ctx) {
  std::vector<std::filesystem::path> files;
  for (size_t i = 1; i < args.positional().size(); ++i) files.emplace_back(args.positional()[i]);
  if (files.empty()) throw UsageError("ncu import needs at least one FILE");
  Format format = args.format({Format::Text, Format::Json});
  auto cat = orFail(ncu::Catalog::open(catalogPath(args)));
  ncu::ImportOptions opt{args.getOr("--model", ""), args.getOr("--run", "")};
  auto sum = orFail(cat.importFiles(files, opt));
  if (format == Format::Json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& k : sum.kernels) arr.push_back(kernelJson(k));
    ctx.out << arr.dump(2) << "\n";
    return 0;
  }
  for (const auto& f : sum.files) {
    ctx.out << f.path.string() << ": " << ncu::formatName(f.format);
    if (f.alreadyImported)
      ctx.out << ", already imported (same content), nothing added";
    else
      ctx.out << ", " << f.launchesAdded << " launch(es) added, " << f.launchesMerged << " merged";
    ctx.out << "\n";
  }
  printKernelTable(ctx.out, sum.kernels);
  return 0;
}

int runDrillCmd(const Args& args, Context& ctx) {
  ncu::DrillRequest r;
  r.entry = args.getOr("--entry", "");
  r.range = args.getOr("--range", "");
  if (r.entry.empty()) throw UsageError("ncu drill needs --entry \"CMD\"");
  if (r.range.empty()) throw UsageError("ncu drill needs --range \"kl:...\"");
  r.domain = args.getOr("--domain", "");
  if (auto c = args.getInt("--count")) {
    if (*c < 1) throw UsageError("--count must be at least 1");
    r.useLaunchCount = true;
    r.launchCount = static_cast<int>(*c);
  }
  r.ncu = args.getOr("--ncu", "ncu");
  if (args.has("--print-command")) {
    ctx.out << ncu::drillProfileCommand(r) << "\n" << ncu::drillExportCommand(r) << "\n";
    return 0;
  }
  std::filesystem::path root = args.getOr("--root", ".");
  auto cat = orFail(ncu::Catalog::open(catalogPath(args)));
  ncu::ImportOptions opt{args.getOr("--model", ""), args.getOr("--run", "")};
  auto res = ncu::runDrill(r, root, cat, opt);
  if (!res.ok()) {
    ctx.out << ncu::drillProfileCommand(r) << "\n" << ncu::drillExportCommand(r) << "\n";
    throw InputError(res.error().message);
  }
  ctx.out << "profiled: " << res->profileCommand << "\nimported: " << res->csvPath.string() << "\n";
  printKernelTable(ctx.out, res->imported.kernels);
  return 0;
}

int run(const Args& args, Context& ctx) {
  if (args.positional().empty()) throw UsageError("missing subcommand (import or drill)");
  const std::string& sub = args.positional()[0];
  if (sub == "import") return runImport(args, ctx);
  if (sub == "drill") {
    args.expectPositional(1, 1);
    return runDrillCmd(args, ctx);
  }
  throw UsageError("unknown subcommand '" + sub + "' (import or drill)");
}

Registrar reg{Command{"ncu",
                      "import Nsight Compute CSVs into the kernel catalogue; drill into a range with ncu",
                      "usage: kernlens ncu import FILE... [--model NAME] [--run ID] [--db PATH] [--root DIR]\n"
                      "                             [--format text|json]\n"
                      "       kernlens ncu drill --entry \"CMD\" --range \"kl:...\" [--print-command] [--domain D]\n"
                      "                             [--count N] [--ncu PATH] [--model NAME] [--run ID] [--db PATH]\n"
                      "\n"
                      "import: reads Nsight Compute CSV output of any layout (details page, raw page,\n"
                      "  --print-summary per-kernel, the 2020 layout with 'Kernel Time') and nsys cuda_gpu_kern_sum\n"
                      "  CSVs; classifies every launch (compute/memory/latency/balanced/unknown) and stores it in\n"
                      "  the catalogue. Several files of one launch (details + section files) are merged; a file\n"
                      "  already imported (same content) is not counted twice. --format json prints the catalogue's\n"
                      "  objects for the kernels in these files.\n"
                      "drill: builds the ncu command that profiles only the kernels launched inside the NVTX\n"
                      "  push/pop range (--nvtx --nvtx-include \"RANGE/\" --kernel-id :::1, or -c N with --count),\n"
                      "  runs it when ncu is on PATH, exports the report as CSV and imports it.\n"
                      "  --print-command only prints the two commands.\n"
                      "\n"
                      "  --db PATH      catalogue database (default: <root>/.kernlens/kernlens.db)\n"
                      "  --root DIR     workspace root (default: .)\n",
                      {{"--model"},
                       {"--run"},
                       {"--db"},
                       {"--root"},
                       {"--format"},
                       {"--entry"},
                       {"--range"},
                       {"--domain"},
                       {"--count"},
                       {"--ncu"},
                       {"--print-command", false}},
                      run}};

}  // namespace
}  // namespace kl::cli
