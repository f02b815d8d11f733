// `kernlens annotate`: wrap functions or lines of one Python file in kernlens NVTX ranges.
#include <charconv>
#include <filesystem>

#include "cli/cli.h"
#include "core/nvtx/engine.h"
#include "core/nvtx/file_io.h"

namespace kl::cli {
namespace {

uint32_t parseLineNumber(std::string_view s, const std::string& arg) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v == 0)
    throw UsageError("--lines needs A-B with 1 <= A <= B, got '" + arg + "'");
  return v;
}

nvtx::RangeRequest parseLines(const std::string& arg) {
  size_t dash = arg.find('-');
  std::string_view a = std::string_view(arg).substr(0, dash);
  std::string_view b = dash == std::string::npos ? a : std::string_view(arg).substr(dash + 1);
  uint32_t first = parseLineNumber(a, arg), last = parseLineNumber(b, arg);
  if (last < first) throw UsageError("--lines needs A-B with 1 <= A <= B, got '" + arg + "'");
  return nvtx::RangeRequest::statements(first - 1, last - 1);
}

/// Writes to -o OUT, over FILE (--in-place), or to stdout.
void emit(const Args& args, Context& ctx, const std::string& file, const std::string& text) {
  if (args.has("--in-place")) {
    orFail(nvtx::writeFileAtomically(file, text));
  } else if (auto out = args.get("-o")) {
    orFail(nvtx::writeFileAtomically(*out, text));
  } else {
    ctx.out << text;
  }
}

int run(const Args& args, Context& ctx) {
  args.expectPositional(1, 1);
  const std::string file = args.positional()[0];
  int modes = (args.has("--function") ? 1 : 0) + (args.has("--lines") ? 1 : 0) + (args.has("--all-functions") ? 1 : 0);
  if (modes == 0) throw UsageError("say what to wrap: --function, --lines or --all-functions");
  if (modes > 1) throw UsageError("--function, --lines and --all-functions exclude each other");
  if (args.has("--in-place") && args.has("-o")) throw UsageError("-o and --in-place exclude each other");
  std::vector<nvtx::RangeRequest> requests;
  for (const auto& l : args.values("--lines")) requests.push_back(parseLines(l));
  for (const auto& q : args.values("--function")) {
    if (q.empty()) throw UsageError("--function needs a qualified name");
    requests.push_back(nvtx::RangeRequest::functionBody(q));
  }

  std::filesystem::path root = args.getOr("--root", ".");
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) throw InputError("--root " + root.string() + ": not a directory");
  root = std::filesystem::absolute(root, ec).lexically_normal();
  nvtx::Options opt;
  opt.relPath = orFail(nvtx::relativeToWorkspace(root, std::filesystem::absolute(file, ec)));
  std::string text = orFail(nvtx::readWholeFile(file));
  auto source = orFail(python::SourceFile::parse(std::move(text)));
  if (args.has("--all-functions")) {
    requests = nvtx::allFunctionBodies(*source);
    opt.skipUnwrappable = true;
  }
  size_t before = orFail(nvtx::strip(*source)).ranges.size();
  auto edit = orFail(nvtx::annotate(*source, requests, opt));
  for (const auto& sk : edit.skipped)
    ctx.err << "kernlens annotate: note: skipped " << sk.request.qualName << ": " << sk.reason << "\n";
  size_t placed = edit.ranges - before;
  emit(args, ctx, file, edit.newText);
  ctx.err << "kernlens annotate: " << placed << " range" << (placed == 1 ? "" : "s") << " added to " << opt.relPath
          << "\n";
  return 0;
}

Registrar reg{Command{"annotate",
                      "wrap functions or lines of a Python file in kernlens NVTX ranges",
                      "usage: kernlens annotate FILE (--function QUALNAME | --lines A-B | --all-functions)\n"
                      "                         [-o OUT | --in-place] [--root DIR]\n"
                      "\n"
                      "Wraps code of FILE in `with torch.cuda.nvtx.range(\"kl:<path>:<first>-<last>[:<label>]\"):`\n"
                      "ranges that `kernlens strip` removes again byte for byte. Ranges already in FILE are kept.\n"
                      "\n"
                      "  --function QUALNAME  the body of this function (Class.method, f.<locals>.g); repeatable\n"
                      "  --lines A-B          the statements on lines A..B (1-based; A alone for one line);\n"
                      "                       repeatable. Clause headers widen to the whole statement, `;`-joined\n"
                      "                       statements and one-line bodies to their whole line\n"
                      "  --all-functions      every function body (functions that cannot be wrapped are skipped\n"
                      "                       with a note on stderr)\n"
                      "  -o OUT               write the result to OUT (atomically) instead of stdout\n"
                      "  --in-place           replace FILE atomically (temporary file + rename)\n"
                      "  --root DIR           workspace root for the path in range names (default: .)\n"
                      "\n"
                      "exit status: 0 success, 1 bad input (unreadable file, syntax error, nothing to wrap),\n"
                      "2 bad usage. See docs/annotations.md for every rule.\n",
                      {{"--function", true, true},
                       {"--lines", true, true},
                       {"--all-functions", false, false},
                       {"-o", true, false},
                       {"--in-place", false, false},
                       {"--root", true, false}},
                      run,
                      /*rawOutput=*/true}};

}  // namespace
}  // namespace kl::cli
