#include "lsp/server/documents.h"

#include <optional>

#include "core/support/log.h"

namespace kl::lsp {

Document::Document(std::string uri, std::string languageId, int32_t version, PositionEncoding encoding,
                   python::SourceFilePtr source, std::string fallbackText)
    : uri_(std::move(uri)),
      languageId_(std::move(languageId)),
      version_(version),
      encoding_(encoding),
      source_(std::move(source)),
      fallbackText_(source_ ? std::string() : std::move(fallbackText)),
      lines_(text()) {}

Position Document::lineEndPosition(uint32_t line) const {
  const std::string& t = text();
  uint32_t off = 0;
  if (source_) {
    const auto& li = source_->lines();
    if (line >= li.lineCount()) return positionAt(static_cast<uint32_t>(t.size()));
    off = li.lineEnd(line, t);
  } else {
    uint32_t l = 0;
    while (off < t.size() && l < line) {
      if (t[off] == '\n') ++l;
      ++off;
    }
    while (off < t.size() && t[off] != '\n') ++off;
  }
  // lineEnd may include a '\r' of a CRLF ending: stop before it.
  while (off > 0 && off <= t.size() && t[off - 1] == '\r') --off;
  return positionAt(off);
}

Range Document::lineRange(uint32_t first, uint32_t last) const {
  const std::string& t = text();
  uint32_t start = 0;
  if (source_) {
    const auto& li = source_->lines();
    start = first < li.lineCount() ? li.lineStart(first) : static_cast<uint32_t>(t.size());
  } else {
    for (uint32_t l = 0; start < t.size() && l < first; ++start)
      if (t[start] == '\n') ++l;
  }
  return {positionAt(start), lineEndPosition(last)};
}

uint32_t Document::lineOf(Position pos) const {
  uint32_t off = offsetAt(pos);
  if (source_) return source_->lines().toLineCol(off).line;
  const std::string& t = text();
  uint32_t l = 0;
  for (uint32_t i = 0; i < off && i < t.size(); ++i)
    if (t[i] == '\n') ++l;
  return l;
}

namespace {
/// Parses `text`; on parser failure logs and returns null (the document keeps plain text).
python::SourceFilePtr parseOrNull(const std::string& uri, std::string text) {
  auto parsed = python::SourceFile::parse(std::move(text));
  if (parsed) return *parsed;
  kl::log::error("lsp: cannot parse " + uri + ": " + parsed.error().message);
  return nullptr;
}
}  // namespace

DocumentPtr DocumentStore::open(const TextDocumentItem& item) {
  if (docs_.count(item.uri)) kl::log::warn("lsp: didOpen of an already open document " + item.uri);
  auto doc = std::make_shared<const Document>(item.uri, item.languageId, item.version, encoding_,
                                              parseOrNull(item.uri, item.text), item.text);
  docs_[item.uri] = doc;
  return doc;
}

Result<DocumentPtr> DocumentStore::change(const DidChangeTextDocumentParams& params) {
  const std::string& uri = params.textDocument.uri;
  auto it = docs_.find(uri);
  if (it == docs_.end()) return Error::notFound("didChange for a document that is not open: " + uri);
  const Document& old = *it->second;
  if (params.textDocument.version <= old.version())
    kl::log::warn("lsp: didChange of " + uri + " goes from version " + std::to_string(old.version()) + " to " +
                  std::to_string(params.textDocument.version));

  // Convert each change to a byte edit against the text produced by the previous changes
  // (the first against the old document's line table; later ones need a fresh table).
  std::string text = old.text();
  std::vector<python::TextEdit> edits;
  bool reparse = false;  // a full replacement: parse from scratch
  std::optional<LineTable> fresh;
  bool textIsOld = true;
  for (size_t i = 0; i < params.contentChanges.size(); ++i) {
    const auto& c = params.contentChanges[i];
    if (!c.range) {
      text = c.text;
      edits.clear();
      reparse = true;
      textIsOld = false;
      continue;
    }
    if (c.range->end < c.range->start)
      return Error::invalid("didChange of " + uri + ": contentChanges[" + std::to_string(i) +
                            "] has its start after its end");
    if (!textIsOld) fresh.emplace(text);
    const LineTable& lines = textIsOld ? old.lines_ : *fresh;
    textIsOld = false;
    uint32_t start = lines.offsetAt(text, c.range->start, encoding_);
    uint32_t end = lines.offsetAt(text, c.range->end, encoding_);
    python::TextEdit e{start, end, c.text};
    python::applyEdit(text, e);
    edits.push_back(std::move(e));
  }

  python::SourceFilePtr source;
  if (reparse || !old.source()) {
    // Edits after the full replacement are already in `text`.
    source = parseOrNull(uri, text);
  } else {
    auto edited = old.source()->edit(edits);
    if (edited) {
      source = *edited;
    } else {
      kl::log::error("lsp: incremental re-parse of " + uri + " failed (" + edited.error().message +
                     "); parsing from scratch");
      source = parseOrNull(uri, text);
    }
  }
  auto doc = std::make_shared<const Document>(uri, old.languageId(), params.textDocument.version, encoding_,
                                              std::move(source), std::move(text));
  it->second = doc;
  return DocumentPtr(doc);
}

bool DocumentStore::close(const std::string& uri) { return docs_.erase(uri) > 0; }

DocumentPtr DocumentStore::get(const std::string& uri) const {
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second;
}

std::vector<DocumentPtr> DocumentStore::all() const {
  std::vector<DocumentPtr> out;
  for (const auto& [uri, d] : docs_) out.push_back(d);
  return out;
}

}  // namespace kl::lsp
