// The kernlens command line: subcommands register themselves (one file each, cli/cmd_*.cpp).
// Conventions for every subcommand: `--help`; exit 0 on success, 2 on bad usage (UsageError),
// 1 on bad input with a one-line reason on stderr (InputError, or a kl::Error from core).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One option a command accepts. `takesValue` options read the next argument (or `=value`);
/// `repeatable` ones may be given several times (values() returns all). An option with
/// `arity` > 1 reads that many following arguments (`--trim START END`), or one `--opt=value`;
/// values() returns them.
struct OptionSpec {
  std::string name;  // "--format"
  bool takesValue = true;
  bool repeatable = false;
  int arity = 1;
};

/// An output format (--format), parsed once; commands switch on it.
enum class Format { Text, Json, Csv, Perfetto, Html };
/// "text", "json", "csv", "perfetto", "html" (the option's spelling).
const char* formatName(Format f);

/// Parsed arguments of one subcommand. Unknown options are a UsageError.
class Args {
 public:
  Args(std::vector<std::string> argv, const std::vector<OptionSpec>& spec);

  bool has(std::string_view name) const;
  std::optional<std::string> get(std::string_view name) const;
  std::string getOr(std::string_view name, std::string fallback) const;
  std::vector<std::string> values(std::string_view name) const;
  /// An integer option; UsageError if it does not parse.
  std::optional<long long> getInt(std::string_view name) const;
  std::optional<double> getDouble(std::string_view name) const;
  /// One of `allowed` (first is the default); UsageError otherwise.
  std::string choice(std::string_view name, const std::vector<std::string>& allowed) const;
  /// --format: one of `allowed` (the first is the default); UsageError (one line) otherwise.
  Format format(const std::vector<Format>& allowed) const;

  const std::vector<std::string>& positional() const { return positional_; }
  /// Exactly n positionals (UsageError otherwise).
  void expectPositional(size_t min, size_t max = static_cast<size_t>(-1)) const;

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> opts_;
  std::vector<std::string> positional_;
};

struct Context {
  std::ostream& out;
  std::ostream& err;
};

struct Command {
  std::string name;
  std::string summary;  // one line for `kernlens --help`
  std::string usage;    // full text for `kernlens <name> --help`
  std::vector<OptionSpec> options;
  std::function<int(const Args&, Context&)> run;
  /// Output passes unchanged (source text, the LSP stream). Otherwise ctx.out shows control
  /// characters as "\x1b" (terminalSafe): names from a profile cannot drive the terminal.
  bool rawOutput = false;
};

/// Registers at static-initialisation time: `static Registrar r{Command{...}};`
struct Registrar {
  explicit Registrar(Command c);
};

const std::map<std::string, Command>& commands();

/// Unwraps a core Result or throws InputError with its message.
template <typename T>
T orFail(Result<T> r) {
  if (!r.ok()) throw InputError(r.error().message);
  return std::move(r).value();
}
inline void orFail(Result<void> r) {
  if (!r.ok()) throw InputError(r.error().message);
}

/// Runs the CLI; returns the process exit code.
int runMain(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace kl::cli
