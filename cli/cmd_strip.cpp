// `kernlens strip`: remove every kernlens NVTX range from a Python file, giving back its exact
// original bytes. Ranges the user wrote are never touched.
#include "cli/cli.h"
#include "core/nvtx/engine.h"
#include "core/nvtx/file_io.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(1, 1);
  const std::string file = args.positional()[0];
  if (args.has("--in-place") && args.has("-o")) throw UsageError("-o and --in-place exclude each other");
  std::string text = orFail(nvtx::readWholeFile(file));
  auto source = orFail(python::SourceFile::parse(std::move(text)));
  auto stripped = orFail(nvtx::strip(*source));
  if (args.has("--in-place")) {
    if (stripped.text != source->text()) orFail(nvtx::writeFileAtomically(file, stripped.text));
  } else if (auto out = args.get("-o")) {
    orFail(nvtx::writeFileAtomically(*out, stripped.text));
  } else {
    ctx.out << stripped.text;
  }
  size_t n = stripped.ranges.size();
  ctx.err << "kernlens strip: removed " << n << " range" << (n == 1 ? "" : "s")
          << (stripped.removedImport ? " and the import kernlens added" : "") << "\n";
  return 0;
}

Registrar reg{Command{"strip",
                      "remove kernlens NVTX ranges from a Python file (exact original bytes)",
                      "usage: kernlens strip FILE [-o OUT | --in-place]\n"
                      "\n"
                      "Removes every `with ...nvtx.range(\"kl:...\"):` range kernlens manages, and the\n"
                      "`import torch  # kl:import` line it added, restoring the original bytes exactly.\n"
                      "Ranges with other names, decorators and push/pop pairs are never touched.\n"
                      "\n"
                      "  -o OUT       write the result to OUT (atomically) instead of stdout\n"
                      "  --in-place   replace FILE atomically (temporary file + rename)\n"
                      "\n"
                      "exit status: 0 success, 1 bad input (unreadable file, syntax error, an edited range that\n"
                      "cannot be removed exactly), 2 bad usage.\n",
                      {{"-o", true, false}, {"--in-place", false, false}},
                      run,
                      /*rawOutput=*/true}};

}  // namespace
}  // namespace kl::cli
