// `kernlens version`: the version and the versions of the libraries it was built with.
#include <sqlite3.h>
#include <tree_sitter/api.h>

#include "cli/cli.h"
#include "core/runner/backend.h"
#include "core/support/version.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  ctx.out << "kernlens " << versionString() << "\n"
          << "sqlite " << sqlite3_libversion() << "\n"
          << "tree-sitter language ABI " << TREE_SITTER_LANGUAGE_VERSION << "\n";
  auto probe = runner::findProbeDir();
  ctx.out << "probe " << (probe ? probe->string() : std::string("not found (set KERNLENS_PROBE_DIR)")) << "\n";
  return 0;
}

Registrar reg{Command{"version",
                      "print the version of kernlens and its libraries",
                      "usage: kernlens version\n\nPrints the kernlens version, the versions of the "
                      "libraries it was built with, and the probe directory it will use.\n",
                      {},
                      run}};

}  // namespace
}  // namespace kl::cli
