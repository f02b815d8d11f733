// Untrusted text (kernel and range names, paths from a profile) made safe for where it is shown.
#pragma once

#include <string>
#include <string_view>

namespace kl {

/// For a terminal: C0 control characters except '\n' and '\t' (ESC, CR, BEL, ...) and DEL become
/// "\x1b"-style text, C1 controls (U+0080..U+009F, which some terminals obey like ESC [) become
/// "\u009b". The result is also a valid JSON string body when the input was one, since JSON
/// writers already escape C0 and "\u009b" is JSON's own escape. Everything else is unchanged.
std::string terminalSafe(std::string_view s);

/// For Markdown (hovers), inside a line: terminalSafe, '\n' and '\t' shown as "\n"/"\t", and
/// the punctuation that opens links, emphasis, HTML, code spans or table cells
/// (\ ` * _ { } [ ] < > | ~) backslash-escaped.
std::string markdownSafe(std::string_view s);

}  // namespace kl
