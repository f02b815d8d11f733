#include "core/runner/interpreter.h"

#include <fstream>

#include "core/runner/command.h"
#include "core/runner/process.h"

namespace kl::runner {

bool isPythonName(const std::string& word) {
  std::string name = std::filesystem::path(word).filename().string();
  if (name.rfind("python", 0) != 0) return false;
  std::string rest = name.substr(6);
  bool digitNext = true;  // python, python3, python3.11; not python-config or python3.
  for (char c : rest) {
    if (c >= '0' && c <= '9') {
      digitNext = false;
    } else if (c == '.' && !digitNext) {
      digitNext = true;
    } else {
      return false;
    }
  }
  return rest.empty() || !digitNext;
}

namespace {

/// An executable named by a word: through PATH when it has no '/', else against `cwd`.
std::optional<std::filesystem::path> resolve(const std::string& word, const std::filesystem::path& cwd) {
  if (word.find('/') == std::string::npos) return findExecutable(word);
  std::filesystem::path p(word);
  if (p.is_relative()) p = cwd / p;
  return findExecutable(p.lexically_normal().string());
}

/// The interpreter words of a `#!` line when it names a Python (`/usr/bin/env [-S] python3`,
/// `/opt/venv/bin/python`); empty otherwise.
std::string shebangPython(const std::filesystem::path& script) {
  std::ifstream in(script, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first) || first.rfind("#!", 0) != 0) return {};
  auto words = splitCommandLine(first.substr(2));
  if (!words || words->empty()) return {};
  size_t i = 0;
  if (std::filesystem::path((*words)[0]).filename() == "env") {
    i = 1;
    while (i < words->size() && (*words)[i].rfind('-', 0) == 0) ++i;  // env -S
  }
  if (i < words->size() && isPythonName((*words)[i])) return (*words)[i];
  return {};
}

}  // namespace

Result<std::filesystem::path> entryInterpreter(const std::vector<std::string>& entry, const std::filesystem::path& cwd,
                                               const std::string& override) {
  if (!override.empty()) {
    if (auto p = resolve(override, cwd)) return *p;
    return Error::notFound("python interpreter '" + override + "' not found (the --python flag / python setting)");
  }
  std::string want = "python3";
  std::string why = "the entry runs no Python by name";
  if (!entry.empty()) {
    const std::string& exe = entry[0];
    if (isPythonName(exe)) {
      want = exe;
      why = "the entry's interpreter";
    } else if (auto prog = resolve(exe, cwd)) {
      if (std::string py = shebangPython(*prog); !py.empty()) {
        want = py;
        why = "the interpreter of " + prog->filename().string() + "'s #! line";
      }
    }
  }
  if (auto p = resolve(want, cwd)) return *p;
  return Error::notFound("python interpreter '" + want + "' not found" +
                         (want.find('/') == std::string::npos ? " on PATH" : "") + " (" + why +
                         "; name one with --python or the python setting)");
}

}  // namespace kl::runner
