#include "cli/cli.h"

#include <charconv>
#include <iostream>

#include "core/support/escape.h"
#include "core/support/version.h"

namespace kl::cli {
namespace {

/// Passes text through terminalSafe() on its way to `dest` (kernel and range names from a
/// profile must not drive the terminal). Buffers up to 64 KiB; never splits a two-byte C1
/// sequence.
class TerminalSafeBuf : public std::streambuf {
 public:
  explicit TerminalSafeBuf(std::ostream& dest) : dest_(dest) {}
  ~TerminalSafeBuf() override { flushOut(true); }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      buf_ += static_cast<char>(c);
      if (buf_.size() >= 65536) flushOut(false);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    buf_.append(s, static_cast<size_t>(n));
    if (buf_.size() >= 65536) flushOut(false);
    return n;
  }
  int sync() override {
    flushOut(true);
    return dest_.flush() ? 0 : -1;
  }

 private:
  void flushOut(bool all) {
    size_t n = buf_.size();
    if (!all && n && static_cast<unsigned char>(buf_[n - 1]) == 0xc2) --n;
    dest_ << terminalSafe(std::string_view(buf_).substr(0, n));
    buf_.erase(0, n);
  }
  std::ostream& dest_;
  std::string buf_;
};

std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> r;
  return r;
}

const OptionSpec* findSpec(const std::vector<OptionSpec>& spec, std::string_view name) {
  for (const auto& s : spec)
    if (s.name == name) return &s;
  return nullptr;
}

void printTopHelp(std::ostream& out) {
  out << "kernlens " << versionString()
      << " - which line of your Python code launched each GPU kernel, and what it costs\n\n"
         "usage: kernlens <command> [options]\n"
         "       kernlens <command> --help\n\n"
         "commands:\n";
  size_t width = 0;
  for (const auto& [name, c] : registry()) width = std::max(width, name.size());
  for (const auto& [name, c] : registry())
    out << "  " << name << std::string(width + 2 - name.size(), ' ') << c.summary << "\n";
  out << "\nexit status: 0 success, 1 bad input (one-line reason on stderr), 2 bad usage\n";
}

}  // namespace

Registrar::Registrar(Command c) {
  std::string name = c.name;
  registry().emplace(std::move(name), std::move(c));
}

const std::map<std::string, Command>& commands() { return registry(); }

Args::Args(std::vector<std::string> argv, const std::vector<OptionSpec>& spec) {
  bool onlyPositional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (onlyPositional || a.size() < 2 || a[0] != '-' || a == "-") {
      positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      onlyPositional = true;
      continue;
    }
    std::string name = a;
    std::optional<std::string> inlineValue;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
      name = a.substr(0, eq);
      inlineValue = a.substr(eq + 1);
    }
    const OptionSpec* s = findSpec(spec, name);
    if (!s) throw UsageError("unknown option '" + name + "'");
    auto& vs = opts_[name];
    if (!vs.empty() && !s->repeatable) throw UsageError("option '" + name + "' given twice");
    if (!s->takesValue) {
      if (inlineValue) throw UsageError("option '" + name + "' takes no value");
      vs.emplace_back();
      continue;
    }
    if (s->arity > 1 && !inlineValue) {
      if (i + s->arity >= argv.size())
        throw UsageError("option '" + name + "' needs " + std::to_string(s->arity) + " values");
      for (int k = 0; k < s->arity; ++k) vs.push_back(argv[++i]);
      continue;
    }
    if (inlineValue) {
      vs.push_back(*inlineValue);
    } else {
      if (i + 1 >= argv.size()) throw UsageError("option '" + name + "' needs a value");
      vs.push_back(argv[++i]);
    }
  }
}

bool Args::has(std::string_view name) const { return opts_.find(name) != opts_.end(); }

std::optional<std::string> Args::get(std::string_view name) const {
  auto it = opts_.find(name);
  if (it == opts_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::getOr(std::string_view name, std::string fallback) const {
  auto v = get(name);
  return v ? *v : std::move(fallback);
}

std::vector<std::string> Args::values(std::string_view name) const {
  auto it = opts_.find(name);
  return it == opts_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<long long> Args::getInt(std::string_view name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  long long out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size())
    throw UsageError("option '" + std::string(name) + "' needs an integer, got '" + *v + "'");
  return out;
}

std::optional<double> Args::getDouble(std::string_view name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    double d = std::stod(*v, &used);
    if (used == v->size()) return d;
  } catch (const std::exception&) {}
  throw UsageError("option '" + std::string(name) + "' needs a number, got '" + *v + "'");
}

std::string Args::choice(std::string_view name, const std::vector<std::string>& allowed) const {
  auto v = get(name);
  if (!v) return allowed.front();
  for (const auto& a : allowed)
    if (a == *v) return a;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  throw UsageError("option '" + std::string(name) + "' must be one of " + list + ", got '" + *v + "'");
}

const char* formatName(Format f) {
  switch (f) {
    case Format::Text: return "text";
    case Format::Json: return "json";
    case Format::Csv: return "csv";
    case Format::Perfetto: return "perfetto";
    case Format::Html: return "html";
  }
  return "";
}

Format Args::format(const std::vector<Format>& allowed) const {
  std::vector<std::string> names;
  for (Format f : allowed) names.push_back(formatName(f));
  std::string chosen = choice("--format", names);
  for (Format f : allowed)
    if (chosen == formatName(f)) return f;
  return allowed.front();
}

void Args::expectPositional(size_t min, size_t max) const {
  if (positional_.size() < min) throw UsageError(min == 1 ? "missing argument" : "missing arguments");
  if (positional_.size() > max) throw UsageError("unexpected argument '" + positional_[max] + "'");
}

int runMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    printTopHelp(err);
    return 2;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    printTopHelp(out);
    return 0;
  }
  if (first == "--version" || first == "-V") {
    out << "kernlens " << versionString() << "\n";
    return 0;
  }
  auto it = registry().find(first);
  if (it == registry().end()) {
    err << "kernlens: unknown command '" << first << "' (see kernlens --help)\n";
    return 2;
  }
  const Command& cmd = it->second;
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const auto& a : rest) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      out << cmd.usage;
      if (!cmd.usage.empty() && cmd.usage.back() != '\n') out << "\n";
      return 0;
    }
  }
  try {
    Args parsed(std::move(rest), cmd.options);
    if (cmd.rawOutput) {
      Context ctx{out, err};
      return cmd.run(parsed, ctx);
    }
    TerminalSafeBuf safe(out);
    std::ostream safeOut(&safe);
    Context ctx{safeOut, err};
    int rc = cmd.run(parsed, ctx);
    safeOut.flush();
    return rc;
  } catch (const UsageError& e) {
    err << "kernlens " << cmd.name << ": " << terminalSafe(e.what()) << " (see kernlens " << cmd.name << " --help)\n";
    return 2;
  } catch (const InputError& e) {
    err << "kernlens " << cmd.name << ": " << terminalSafe(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    err << "kernlens " << cmd.name << ": internal error: " << terminalSafe(e.what()) << "\n";
    return 1;
  }
}

}  // namespace kl::cli
