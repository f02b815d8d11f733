// Which Python runs the probe: the interpreter the user's entry command would run, so the probe
// (standard library + torch only) works in the user's own venv or conda env.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/support/result.h"

namespace kl::runner {

/// The interpreter for an entry command (already split into words), with relative paths taken
/// against `cwd` (the entry's working directory) and bare names through PATH:
///   `python[3[.11]] …` or any path to one (`.venv/bin/python`) → that interpreter;
///   a script whose first line is a python shebang (`torchrun`, `./train.py`) → its interpreter
///   (`#!/usr/bin/env python3` → python3 through PATH);
///   anything else (`bash run.sh`, `srun …`) → `python3` through PATH.
/// `override` (the `--python` flag / `python` setting), when not empty, wins over all of these.
/// Error::NotFound naming what was looked for when no such executable exists.
Result<std::filesystem::path> entryInterpreter(const std::vector<std::string>& entry, const std::filesystem::path& cwd,
                                               const std::string& override = {});

/// True for a word that names a Python interpreter by its file name: python, python3, python3.11.
bool isPythonName(const std::string& word);

}  // namespace kl::runner
