// Open documents: what the client has open, at which version, with the parsed Python source.
//
// A Document is an immutable snapshot (shared_ptr<const Document>): background work keeps the
// snapshot it started with while the main loop installs newer ones. The store itself is main
// loop state (not thread-safe). Each change produces a new snapshot whose SourceFile is an
// incremental re-parse of the previous one (core/python SourceFile::edit).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/python/source_file.h"
#include "core/support/result.h"
#include "lsp/protocol/protocol.h"
#include "lsp/server/positions.h"

namespace kl::lsp {

class Document {
 public:
  Document(std::string uri, std::string languageId, int32_t version, PositionEncoding encoding,
           python::SourceFilePtr source, std::string fallbackText);

  const std::string& uri() const { return uri_; }
  const std::string& languageId() const { return languageId_; }
  int32_t version() const { return version_; }
  PositionEncoding encoding() const { return encoding_; }
  /// The full text (UTF-8).
  const std::string& text() const { return source_ ? source_->text() : fallbackText_; }
  /// The parsed source; null only if the parser itself failed (grammar not loadable).
  const python::SourceFilePtr& source() const { return source_; }

  /// LSP position (in this document's encoding) → byte offset, clamped (see positions.h).
  uint32_t offsetAt(Position pos) const { return lines_.offsetAt(text(), pos, encoding_); }
  /// Byte offset → LSP position.
  Position positionAt(uint32_t offset) const { return lines_.positionAt(text(), offset, encoding_); }
  /// Byte range → LSP range.
  Range rangeOf(uint32_t begin, uint32_t end) const { return {positionAt(begin), positionAt(end)}; }
  uint32_t lineCount() const { return lines_.lineCount(); }

  // Lines as core numbers them (0-based, '\n'-terminated; results, the Python model), which may
  // differ from LSP lines when the text has lone '\r's.
  /// Position of the end of core line `line` (before its line break, clamped to the text).
  Position lineEndPosition(uint32_t line) const;
  /// Range from the start of core line `first` to the end of core line `last`.
  Range lineRange(uint32_t first, uint32_t last) const;
  /// Core line of an LSP position.
  uint32_t lineOf(Position pos) const;

 private:
  friend class DocumentStore;  // reuses lines_ for the first change of a didChange
  std::string uri_;
  std::string languageId_;
  int32_t version_;
  PositionEncoding encoding_;
  python::SourceFilePtr source_;
  std::string fallbackText_;
  LineTable lines_;
};
using DocumentPtr = std::shared_ptr<const Document>;

class DocumentStore {
 public:
  /// The encoding must be set (after initialize) before documents are opened.
  void setEncoding(PositionEncoding e) { encoding_ = e; }
  PositionEncoding encoding() const { return encoding_; }

  /// didOpen: (re)places the document. Never fails (a parser failure is logged).
  DocumentPtr open(const TextDocumentItem& item);
  /// didChange: applies full and incremental changes in order. Error::NotFound when the
  /// document is not open; Error::Invalid for a range with start after end (the document is
  /// left unchanged, as clangd does).
  Result<DocumentPtr> change(const DidChangeTextDocumentParams& params);
  /// didClose. Returns false if it was not open.
  bool close(const std::string& uri);

  /// The current snapshot, or null.
  DocumentPtr get(const std::string& uri) const;
  std::vector<DocumentPtr> all() const;

 private:
  PositionEncoding encoding_ = PositionEncoding::Utf16;
  std::map<std::string, DocumentPtr> docs_;
};

}  // namespace kl::lsp
