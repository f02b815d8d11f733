// The subset of LSP 3.17 types kernlens uses, as plain structs with fromJson/toJson
// (see json_io.h). Field names follow the specification. Add a type here when a feature
// needs it (and a round-trip test in tests/unit/lsp/protocol_test.cpp).
//
// Positions: Position::character counts code units of the NEGOTIATED encoding (UTF-16 unless
// the client offered UTF-8). Convert only with lsp/server/positions.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsp/protocol/json_io.h"

namespace kl::lsp {

/// JSON-RPC and LSP error codes.
enum class ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  UnknownErrorCode = -32001,
  RequestFailed = -32803,
  ServerCancelled = -32802,
  ContentModified = -32801,
  RequestCancelled = -32800,
};

/// An error reply: code + one-line message.
struct ResponseError {
  ErrorCode code = ErrorCode::InternalError;
  std::string message;
};
json toJson(const ResponseError& e);

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // in code units of the negotiated position encoding
  friend bool operator==(const Position&, const Position&) = default;
  friend auto operator<=>(const Position&, const Position&) = default;
};
bool fromJson(const json& j, Position& out, JPath path);
json toJson(const Position& p);

struct Range {
  Position start;
  Position end;
  friend bool operator==(const Range&, const Range&) = default;
};
bool fromJson(const json& j, Range& out, JPath path);
json toJson(const Range& r);

// The JSON text of a value appended to `out`, exactly as json::dump writes it (keys sorted):
// for results assembled as text from pieces (RawJson, lsp/server/reply.h).
void appendJson(std::string& out, const Position& p);
void appendJson(std::string& out, const Range& r);
/// A JSON string literal (escaped; invalid UTF-8 replaced, as Server::send does).
void appendJson(std::string& out, std::string_view s);

struct Location {
  std::string uri;
  Range range;
};
bool fromJson(const json& j, Location& out, JPath path);
json toJson(const Location& l);

struct TextDocumentIdentifier {
  std::string uri;
};
bool fromJson(const json& j, TextDocumentIdentifier& out, JPath path);
json toJson(const TextDocumentIdentifier& t);

struct VersionedTextDocumentIdentifier {
  std::string uri;
  int32_t version = 0;
};
bool fromJson(const json& j, VersionedTextDocumentIdentifier& out, JPath path);
json toJson(const VersionedTextDocumentIdentifier& t);

struct TextDocumentPositionParams {
  TextDocumentIdentifier textDocument;
  Position position;
};
bool fromJson(const json& j, TextDocumentPositionParams& out, JPath path);

struct TextDocumentItem {
  std::string uri;
  std::string languageId;
  int32_t version = 0;
  std::string text;
};
bool fromJson(const json& j, TextDocumentItem& out, JPath path);

struct TextEdit {
  Range range;
  std::string newText;
};
bool fromJson(const json& j, TextEdit& out, JPath path);
json toJson(const TextEdit& e);

/// A versioned edit of one document (WorkspaceEdit.documentChanges element).
struct TextDocumentEdit {
  VersionedTextDocumentIdentifier textDocument;
  std::vector<TextEdit> edits;
};
json toJson(const TextDocumentEdit& e);

struct WorkspaceEdit {
  std::vector<TextDocumentEdit> documentChanges;
};
json toJson(const WorkspaceEdit& e);

struct Command {
  std::string title;
  std::string command;
  std::optional<json> arguments;  // an array when present
};
bool fromJson(const json& j, Command& out, JPath path);
json toJson(const Command& c);

enum class MarkupKind { PlainText, Markdown };
struct MarkupContent {
  MarkupKind kind = MarkupKind::Markdown;
  std::string value;
};
json toJson(const MarkupContent& m);

/// MarkupContent, or a plain string (read as plaintext), as hover and tooltip values may be.
bool fromJson(const json& j, MarkupContent& out, JPath path);

// ---- Language features ----

/// textDocument/hover params.
using HoverParams = TextDocumentPositionParams;

struct Hover {
  MarkupContent contents;
  std::optional<Range> range;
};
json toJson(const Hover& h);

struct InlayHintParams {
  TextDocumentIdentifier textDocument;
  /// Required by LSP; a client that omits it gets the hints of the whole document.
  std::optional<Range> range;
};
bool fromJson(const json& j, InlayHintParams& out, JPath path);

/// An inlay hint. `label` is a plain string (kernlens never sends label parts); `data` is the
/// producing feature's own (round-tripped by inlayHint/resolve).
struct InlayHint {
  Position position;
  std::string label;
  std::optional<int32_t> kind;  // 1 Type, 2 Parameter
  std::optional<MarkupContent> tooltip;
  std::optional<bool> paddingLeft;
  std::optional<bool> paddingRight;
  std::optional<json> data;
};
bool fromJson(const json& j, InlayHint& out, JPath path);
json toJson(const InlayHint& h);

struct CodeLensParams {
  TextDocumentIdentifier textDocument;
};
bool fromJson(const json& j, CodeLensParams& out, JPath path);

/// A code lens: `command` is filled by codeLens/resolve; `data` is the feature's own.
struct CodeLens {
  Range range;
  std::optional<Command> command;
  std::optional<json> data;
};
bool fromJson(const json& j, CodeLens& out, JPath path);
json toJson(const CodeLens& l);

struct CodeActionContext {
  json diagnostics = json::array();  // the client's diagnostics, not interpreted
  /// Requested kinds; absent: every kind.
  std::optional<std::vector<std::string>> only;
  /// Whether an action of `kind` passes `only`: an entry equals `kind` or is a dot-prefix of it
  /// ("refactor" admits "refactor.rewrite.nvtx.wrap").
  bool wants(std::string_view kind) const;
};
bool fromJson(const json& j, CodeActionContext& out, JPath path);

struct CodeActionParams {
  TextDocumentIdentifier textDocument;
  Range range;
  CodeActionContext context;
};
bool fromJson(const json& j, CodeActionParams& out, JPath path);

/// A code action: offered with `data` (the feature's own) and no edit; codeAction/resolve fills
/// `edit`. Read back from the client, `edit` is ignored (it is recomputed).
struct CodeAction {
  std::string title;
  std::optional<std::string> kind;
  std::optional<json> diagnostics;
  std::optional<bool> isPreferred;
  std::optional<WorkspaceEdit> edit;
  std::optional<Command> command;
  std::optional<json> data;
};
bool fromJson(const json& j, CodeAction& out, JPath path);
json toJson(const CodeAction& a);

enum class DiagnosticSeverity : int { Error = 1, Warning = 2, Information = 3, Hint = 4 };
struct Diagnostic {
  Range range;
  DiagnosticSeverity severity = DiagnosticSeverity::Information;
  std::string code;
  std::string source;
  std::string message;
};
json toJson(const Diagnostic& d);

struct PublishDiagnosticsParams {
  std::string uri;
  std::optional<int32_t> version;
  std::vector<Diagnostic> diagnostics;
};
json toJson(const PublishDiagnosticsParams& p);

struct DidOpenTextDocumentParams {
  TextDocumentItem textDocument;
};
bool fromJson(const json& j, DidOpenTextDocumentParams& out, JPath path);

/// One didChange entry: with a range it is incremental, without it replaces the whole text.
struct TextDocumentContentChangeEvent {
  std::optional<Range> range;
  std::string text;
};
bool fromJson(const json& j, TextDocumentContentChangeEvent& out, JPath path);

struct DidChangeTextDocumentParams {
  VersionedTextDocumentIdentifier textDocument;
  std::vector<TextDocumentContentChangeEvent> contentChanges;
};
bool fromJson(const json& j, DidChangeTextDocumentParams& out, JPath path);

struct DidCloseTextDocumentParams {
  TextDocumentIdentifier textDocument;
};
bool fromJson(const json& j, DidCloseTextDocumentParams& out, JPath path);

/// The client capabilities the server reads, flattened (clangd style); `raw` keeps the rest.
struct ClientCapabilities {
  std::vector<std::string> positionEncodings;  // general.positionEncodings, in preference order
  bool workDoneProgress = false;               // window.workDoneProgress
  bool showDocument = false;                   // window.showDocument.support
  bool applyEdit = false;                      // workspace.applyEdit
  bool configuration = false;                  // workspace.configuration
  bool inlayHintRefresh = false;               // workspace.inlayHint.refreshSupport
  bool codeLensRefresh = false;                // workspace.codeLens.refreshSupport
  bool hoverMarkdown = false;                  // textDocument.hover.contentFormat has markdown
  json raw = json::object();
};
bool fromJson(const json& j, ClientCapabilities& out, JPath path);

struct InitializeParams {
  std::optional<int64_t> processId;
  std::optional<std::string> rootUri;
  std::optional<std::string> rootPath;
  std::vector<std::string> workspaceFolders;  // folder URIs
  ClientCapabilities capabilities;
  json initializationOptions;  // null when absent
  /// initializationOptions.resultsNotification: the client wants `kernlens/results`.
  bool resultsNotification = false;
  std::string clientName;     // clientInfo.name ("" when absent), e.g. "Neovim", "Visual Studio Code"
  std::string clientVersion;  // clientInfo.version, e.g. "0.7.2"
};
bool fromJson(const json& j, InitializeParams& out, JPath path);

struct ExecuteCommandParams {
  std::string command;
  json arguments = json::array();
};
bool fromJson(const json& j, ExecuteCommandParams& out, JPath path);

struct CancelParams {
  json id;  // number or string
};
bool fromJson(const json& j, CancelParams& out, JPath path);

struct DidChangeConfigurationParams {
  json settings;
};
bool fromJson(const json& j, DidChangeConfigurationParams& out, JPath path);

struct WorkDoneProgressCancelParams {
  json token;  // number or string
};
bool fromJson(const json& j, WorkDoneProgressCancelParams& out, JPath path);

enum class MessageType : int { Error = 1, Warning = 2, Info = 3, Log = 4 };

}  // namespace kl::lsp
