// The versioned schema tags of kernlens's JSON documents: a field (the first one the CLI writes) of
// every document that the CLI's `--format json` and the MCP server's structured tool output share
// ("schema": "kernlens/<name>@N"). A change that removes or retypes a field bumps N; adding a
// field does not. Documented in docs/agents.md; checked by tests/e2e/mcp_client.py.
#pragma once

namespace kl::json_schema {

inline constexpr const char* kProfile = "kernlens/profile@1";    // kernlens profile, the MCP tool `profile`
inline constexpr const char* kLines = "kernlens/lines@1";        // kernlens map, where_from / line_costs / explain_line
inline constexpr const char* kSummary = "kernlens/summary@1";    // kernlens summary
inline constexpr const char* kDiagnose = "kernlens/diagnose@1";  // kernlens diagnose
inline constexpr const char* kDiff = "kernlens/diff@1";          // kernlens diff
inline constexpr const char* kSync = "kernlens/sync@1";          // kernlens sync
inline constexpr const char* kNccl = "kernlens/nccl@1";          // kernlens nccl

}  // namespace kl::json_schema
