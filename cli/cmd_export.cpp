// `kernlens export FILE... --format csv|json|perfetto [-o OUT]`: one row per GPU op, or a
// Chrome/Perfetto trace.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/export_table.h"
#include "core/analysis/perfetto.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Csv, Format::Json, Format::Perfetto});
  auto outPath = args.get("-o");
  if (!outPath) outPath = args.get("--output");
  if (c.format == Format::Perfetto && !outPath) throw UsageError("--format perfetto needs -o FILE");
  auto lp = loadProfile(c.files, ctx.err);
  // The rows and the trace are data for other tools: the note goes to stderr (the trace's
  // metadata also carries "emulated").
  noteEmulated(ctx.err, lp->model);
  const analysis::View v = lp->view(c.scope);
  OutputTarget out(outPath, ctx.out);
  if (c.format == Format::Csv)
    analysis::writeOpsCsv(out.stream(), v);
  else if (c.format == Format::Json)
    analysis::writeOpsJson(out.stream(), v);
  else {
    auto st = analysis::writePerfetto(out.stream(), v);
    out.finish();
    ctx.err << "wrote " << *outPath << ": " << st.events << " events on " << st.tracks << " tracks ("
            << st.overlapTracks << " extra tracks for overlapping slices)\n";
    return 0;
  }
  out.finish();
  return 0;
}

Registrar reg{Command{"export", "GPU ops as CSV/JSON rows, or a Perfetto trace",
                      "usage: kernlens export FILE... --format csv|json|perfetto [-o OUT] [--gpu N]\n"
                      "                       [--trim START END]\n\n"
                      "csv / json: one row per GPU op with exactly the columns\n"
                      "  kind,name,short_name,start_ns,end_ns,duration_ns,device,stream,pid,tid,\n"
                      "  correlation_id,rank,nvtx_path,innermost_range,unattributed_reason\n"
                      "kind = kernel|memcpy|memset (graph for nsys whole-graph rows); start/end in the\n"
                      "file's own ns timeline; pid = OS pid of the op's process; tid = OS tid of the\n"
                      "launching thread; nvtx_path = range texts outermost -> innermost joined by ' > ';\n"
                      "unattributed_reason = no_launch_call | outside_ranges | empty. Empty (JSON: null)\n"
                      "where unknown. CSV follows RFC 4180 (CRLF, quoted fields). Default csv.\n"
                      "perfetto: Chrome trace JSON (X/M events, µs rebased to the first event, strictly\n"
                      "nested slices per track) for https://ui.perfetto.dev; needs -o.\n\n"
                      "  -o, --output OUT  write to OUT instead of standard output\n"
                      "  --gpu N, --trim START END  as for the other commands (times relative to the\n"
                      "                    first event; ns or with a unit)\n"
                      "Exit status: 0 success, 1 bad input, 2 bad usage.\n",
                      profileOptions({{"-o"}, {"--output"}}), run}};

}  // namespace
}  // namespace kl::cli
