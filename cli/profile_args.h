// `kernlens profile`'s flags as a typed planner::ProfileRequest: the one translation of the
// flags, used by the command itself and by the MCP tool `profile` (cli/cmd_mcp.cpp), which turns
// its arguments into these flags.
#pragma once

#include <vector>

#include "cli/cli.h"
#include "core/planner/profile_request.h"

namespace kl::cli {

/// The options `kernlens profile` accepts.
std::vector<OptionSpec> profileCommandOptions();

/// The request of the flags (--format aside), checked by planner::checkRequest: UsageError naming
/// the flag at fault ("--focus: ..."), InputError for a --root that is not a directory.
planner::ProfileRequest profileRequestFromArgs(const Args& args);

}  // namespace kl::cli
