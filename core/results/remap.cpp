#include "core/results/remap.h"

#include <git2.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "core/support/text_delta.h"

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
  static_cast<std::vector<Hunk>*>(payload)->push_back({h->old_start, h->old_lines, h->new_start, h->new_lines});
  return 0;
}

size_t lineCount(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1; }

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
  int rc = git_diff_buffers(oldText.data(), oldText.size(), "a.py", newText.data(), newText.size(), "b.py", &opts,
                            nullptr, nullptr, onHunk, nullptr, &hunks);
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
  if (!file.hasSnapshot || file.snapshot == liveText) return remapFile(file, liveText, {});
  return remapFile(file, liveText, functionSpans(std::string(liveText)));
}

RemappedFile remapFile(const FileResult& file, std::string_view liveText, const std::vector<FunctionSpan>& liveSpans) {
  RemappedFile out;
  auto identity = [&] {
    out.sourceIndex.resize(file.lines.size());
    std::iota(out.sourceIndex.begin(), out.sourceIndex.end(), 0u);
  };
  if (!file.hasSnapshot || file.snapshot == liveText) {
    out.file = file;
    identity();
    return out;
  }
  out.stale = true;
  out.file.path = file.path;
  out.file.snapshot = file.snapshot;
  out.file.hasSnapshot = file.hasSnapshot;
  auto map = diffLines(file.snapshot, liveText);
  if (!map) {
    out.dropped = static_cast<uint32_t>(file.lines.size());
    return out;
  }
  for (uint32_t i = 0; i < file.lines.size(); ++i) {
    const auto& l = file.lines[i];
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
    out.sourceIndex.push_back(i);
  }
  computeFunctions(out.file, liveSpans);
  return out;
}

LineDelta lineDelta(std::string_view oldText, std::string_view newText) {
  LineDelta d;
  TextDelta t = textDelta(oldText, newText);
  if (t.identical()) {
    d.identical = true;
    return d;
  }
  auto newlines = [](std::string_view s) { return static_cast<uint32_t>(std::count(s.begin(), s.end(), '\n')); };
  // Head: old lines whose text and line break lie in the common prefix.
  d.head = newlines(oldText.substr(0, t.prefix));
  // Tail: old lines inside the common suffix that still start a line in the new text (the
  // first may start right at the suffix when a line break precedes it in both texts).
  size_t oldCut = t.oldCut(), newCut = t.newCut();
  d.tail = newlines(oldText.substr(0, oldCut));
  bool startsLine = (oldCut == 0 || oldText[oldCut - 1] == '\n') && (newCut == 0 || newText[newCut - 1] == '\n');
  if (!startsLine) ++d.tail;
  // Only the middle differs: the shift is the difference of its line counts.
  d.shift = static_cast<int32_t>(static_cast<int64_t>(newlines(newText.substr(t.prefix, newCut - t.prefix))) -
                                 newlines(oldText.substr(t.prefix, oldCut - t.prefix)));
  return d;
}

uint32_t applyLineDelta(RemappedFile& file, const LineDelta& delta, const std::vector<FunctionSpan>& liveSpans,
                        bool stale) {
  auto& lines = file.file.lines;
  bool hasIndex = file.sourceIndex.size() == lines.size();
  size_t out = 0;
  uint32_t dropped = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    LineResult& l = lines[i];
    if (!delta.keeps(l.line, l.lastLine)) {
      ++dropped;
      continue;
    }
    l.line = static_cast<uint32_t>(delta.map(l.line));
    l.lastLine = static_cast<uint32_t>(delta.map(l.lastLine));
    if (out != i) {
      lines[out] = std::move(l);
      if (hasIndex) file.sourceIndex[out] = file.sourceIndex[i];
    }
    ++out;
  }
  lines.resize(out);
  if (hasIndex) file.sourceIndex.resize(out);
  file.dropped += dropped;
  file.stale = stale;
  computeFunctions(file.file, liveSpans);
  return dropped;
}

}  // namespace kl::results
