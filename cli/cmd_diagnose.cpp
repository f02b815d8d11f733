// `kernlens diagnose FILE...`: rule-based findings with facts, hypotheses and evidence.
#include "cli/cli.h"
#include "cli/profile_common.h"
#include "core/analysis/diagnose.h"
#include "core/support/format.h"
#include "core/support/json_writer.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  auto c = parseCommon(args, {Format::Text, Format::Json});
  auto lp = loadProfile(c.files, ctx.err);
  const analysis::View v = lp->view(c.scope);
  auto r = analysis::computeDiagnose(v);
  if (c.format == Format::Json) return printJson(ctx.out, r, v);
  auto& o = ctx.out;
  noteEmulated(o, lp->model);
  if (r.findings.empty()) o << "No rule fired.\n";
  for (const auto& f : r.findings) {
    o << "[" << analysis::severityName(f.severity) << "] " << f.title << "  (" << f.id << ")\n";
    for (const auto& x : f.facts) o << "  fact: " << x << "\n";
    o << "  hypothesis: " << f.hypothesis << "\n";
    for (const auto& e : f.evidence) {
      o << "  evidence: " << e.what << " " << e.name.substr(0, 100);
      if (e.start >= 0) o << " at " << formatDuration(static_cast<double>(v.rel(e.start)));
      o << ", " << formatDuration(static_cast<double>(e.durationNs)) << "; " << e.note << "\n";
    }
    o << "\n";
  }
  o << "rules checked:\n";
  for (const auto& ch : r.checked)
    o << "  " << (ch.fired ? "FIRED " : "ok    ") << ch.id << ": " << ch.measured << "\n";
  return 0;
}

Registrar reg{Command{"diagnose", "rule-based findings with evidence",
                      "usage: kernlens diagnose FILE... [--format text|json] [--gpu N] [--trim START END]\n\n"
                      "Runs the rules below; each finding lists FACTS measured in the profile, a\n"
                      "HYPOTHESIS (a likely cause the profile alone cannot prove) and EVIDENCE (names,\n"
                      "durations, timestamps relative to the profile start).\n"
                      "  cpu_bound_launch     GPU idle gaps where the next op was launched only after the\n"
                      "                       gap began (>= 5% of the active span)\n"
                      "  nccl_exposed         NCCL time not overlapped with compute (> 50% of NCCL time)\n"
                      "  launch_bound_tiny    >= 30% of kernels shorter than their own launch call\n"
                      "  host_copies_in_step  HtoD/DtoH copies inside step ranges\n"
                      "  excessive_sync       >= 10 synchronising calls taking >= 5% of the window\n\n" +
                          commonOptionsHelp(false),
                      profileOptions(), run}};

}  // namespace
}  // namespace kl::cli
