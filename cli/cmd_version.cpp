// `kernlens version`: the version and the versions of the libraries it was built with.
#include <sqlite3.h>
#include <tree_sitter/api.h>

#include "cli/cli.h"
#include "core/support/version.h"

namespace kl::cli {
namespace {

int run(const Args& args, Context& ctx) {
  args.expectPositional(0, 0);
  ctx.out << "kernlens " << versionString() << "\n"
          << "sqlite " << sqlite3_libversion() << "\n"
          << "tree-sitter language ABI " << TREE_SITTER_LANGUAGE_VERSION << "\n";
  return 0;
}

Registrar reg{Command{"version", "print the version of kernlens and its libraries",
                      "usage: kernlens version\n\nPrints the kernlens version and the versions of "
                      "the libraries it was built with.\n",
                      {}, run}};

}  // namespace
}  // namespace kl::cli
