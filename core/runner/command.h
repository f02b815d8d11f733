// Command lines: POSIX-shell word splitting of a user's entry command, quoting for /bin/sh, and
// expansion of launch templates with {cmd}, {cwd}, {out} placeholders.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/result.h"

namespace kl::runner {

/// Splits a command line like /bin/sh does for a simple command: blanks separate words,
/// '...' is literal, "..." allows \" \\ \$ \` escapes, a backslash outside quotes escapes the
/// next character. No expansion ($VAR, globs) happens. Error::Invalid for an unterminated
/// quote, a trailing backslash or an empty command.
Result<std::vector<std::string>> splitCommandLine(std::string_view line);

/// One word quoted for /bin/sh: unchanged when it only holds safe characters
/// ([A-Za-z0-9_@%+=:,./-]), else in single quotes with embedded ' written as '\''.
std::string shellQuote(std::string_view word);
/// Every word quoted and joined with spaces.
std::string shellJoin(const std::vector<std::string>& argv);

/// Expands a launch template. Placeholders: {cmd} (the command line, each word shell-quoted),
/// {cwd} and {out} (paths, quoted), `{{` and `}}` for literal braces; anything else in braces is
/// an Error::Invalid naming it. Quoting follows the template's own quoting context at the
/// placeholder, so the value survives one round of shell parsing per level: inside '...' every
/// ' of the value becomes '\'' (the `ssh host 'cd {cwd} && {cmd}'` pattern: the local shell
/// removes the outer quotes, the remote shell sees the quoted words); inside "..." the
/// characters " $ ` \ are backslash-escaped. {cmd} is required.
Result<std::string> expandTemplate(std::string_view tmpl, const std::map<std::string, std::string>& values);

}  // namespace kl::runner
