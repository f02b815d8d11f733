#include "core/results/remap.h"

#include <git2.h>

#include <algorithm>
#include <string>

namespace kl::results {

namespace {

/// libgit2 is reference-counted: one init per process lifetime of this guard.
struct Libgit2 {
  Libgit2() { git_libgit2_init(); }
  ~Libgit2() { git_libgit2_shutdown(); }
  Libgit2(const Libgit2&) = delete;
  Libgit2& operator=(const Libgit2&) = delete;
};

void ensureLibgit2() { static Libgit2 guard; }

struct Hunk {
  int oldStart, oldLines, newStart, newLines;
};

int onHunk(const git_diff_delta*, const git_diff_hunk* h, void* payload) {
  static_cast<std::vector<Hunk>*>(payload)->push_back(
      {h->old_start, h->old_lines, h->new_start, h->new_lines});
  return 0;
}

size_t lineCount(std::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

}  // namespace

Result<LineMap> diffLines(std::string_view oldText, std::string_view newText) {
  LineMap out;
  size_t n = lineCount(oldText);
  out.oldToNew.assign(n, -1);
  if (oldText == newText) {
    for (size_t i = 0; i < n; ++i) out.oldToNew[i] = static_cast<int32_t>(i);
    return out;
  }
  out.identical = false;
  ensureLibgit2();
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.context_lines = 0;
  opts.interhunk_lines = 0;
  opts.flags = GIT_DIFF_FORCE_TEXT;
  std::vector<Hunk> hunks;
  int rc = git_diff_buffers(oldText.data(), oldText.size(), "a.py", newText.data(), newText.size(),
                            "b.py", &opts, nullptr, nullptr, onHunk, nullptr, &hunks);
  if (rc != 0) {
    const git_error* e = git_error_last();
    return Error::internal(std::string("line diff failed: ") + (e && e->message ? e->message : "libgit2"));
  }
  // Hunk lines are 1-based. A pure insertion (oldLines == 0) comes after old line oldStart.
  int64_t offset = 0;
  size_t cursor = 0;  // next 0-based old line to map
  auto mapUntil = [&](size_t end) {
    for (; cursor < end && cursor < n; ++cursor)
      out.oldToNew[cursor] = static_cast<int32_t>(static_cast<int64_t>(cursor) + offset);
  };
  for (const auto& h : hunks) {
    if (h.oldLines == 0) {
      mapUntil(static_cast<size_t>(h.oldStart));  // old lines 1..oldStart are before the insertion
    } else {
      mapUntil(static_cast<size_t>(h.oldStart - 1));
      cursor = std::max(cursor, static_cast<size_t>(h.oldStart - 1 + h.oldLines));  // changed: -1
    }
    offset += h.newLines - h.oldLines;
  }
  mapUntil(n);
  return out;
}

RemappedFile remapFile(const FileResult& file, std::string_view liveText) {
  RemappedFile out;
  out.file = file;
  if (!file.hasSnapshot) return out;
  if (file.snapshot == liveText) return out;
  out.stale = true;
  out.file.lines.clear();
  out.file.functions.clear();
  auto map = diffLines(file.snapshot, liveText);
  if (!map) {
    out.dropped = static_cast<uint32_t>(file.lines.size());
    return out;
  }
  for (const auto& l : file.lines) {
    bool kept = true;
    for (uint32_t x = l.line; x <= l.lastLine && kept; ++x)
      kept = map->map(x) >= 0 && map->map(x) - map->map(l.line) == static_cast<int32_t>(x - l.line);
    if (!kept) {
      ++out.dropped;
      continue;
    }
    LineResult moved = l;
    moved.line = static_cast<uint32_t>(map->map(l.line));
    moved.lastLine = static_cast<uint32_t>(map->map(l.lastLine));
    out.file.lines.push_back(std::move(moved));
  }
  computeFunctions(out.file, functionSpans(std::string(liveText)));
  return out;
}

}  // namespace kl::results
