// file: URIs <-> local paths (RFC 8089 / RFC 3986), the one place the server parses or builds a
// document URI. POSIX paths only: no Windows drive letters or UNC hosts.
//
//   file:///home/u/a%20b.py          -> /home/u/a b.py
//   file://localhost/home/u/x.py     -> /home/u/x.py   (localhost names this machine)
//   file:/home/u/x.py                -> /home/u/x.py   (no authority, RFC 8089)
//   file://server/share/x.py         -> nullopt        (a remote host)
//   untitled:Untitled-1, https://... -> nullopt        (not a file)
//
// Percent-escapes decode to bytes (UTF-8 paths stay UTF-8); a malformed escape ("%zz", "%4"),
// an escaped NUL or '/' ("%00", "%2F") rejects the URI rather than guessing. `?query` and
// `#fragment` are not part of the path. The scheme and "localhost" match case-insensitively.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kl::lsp {

/// The absolute local path a `file:` URI names; nullopt for other schemes, a remote host, a
/// relative path or a malformed percent-escape.
std::optional<std::filesystem::path> uriToPath(std::string_view uri);

/// The `file://` URI of an absolute path: unreserved bytes (A-Z a-z 0-9 - . _ ~) and '/' as they
/// are, every other byte (spaces, '%', '#', '?', non-ASCII UTF-8) as an upper-case %XX escape.
/// uriToPath(pathToUri(p)) == p for every absolute POSIX path p.
std::string pathToUri(const std::filesystem::path& path);

}  // namespace kl::lsp
