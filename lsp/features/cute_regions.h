// Intra-kernel regions of CUTE DSL kernels in the editor: `kernlens.loadRegions` /
// `kernlens.clearRegions`, region inlay hints, and the code action "Time this region inside the
// kernel". Core work is core/cute (decode, summarize, tree-sitter tag map, planTimeRegion).
//
// The LSP methods these ride on belong to other features, so this file registers no second
// handler for them; it exposes providers instead:
//   - inlay hints: cuteRegionHints(), hooked into textDocument/inlayHint (inlay_hints.cpp) by
//     registerCuteRegions() through FeatureContext::hintProviders;
//   - code actions: cuteRegionCodeActions() / isCuteRegionAction() / cuteRegionEdit(), called by
//     textDocument/codeAction and codeAction/resolve (code_actions.cpp).
// Main loop only, except cuteRegionEdit() (pure; any thread over a Document snapshot).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/cute/regions.h"
#include "core/cute/source_map.h"
#include "core/results/format.h"
#include "core/support/result.h"
#include "lsp/server/documents.h"

namespace kl::lsp {

class Server;
struct FeatureContext;

/// A decoded buffer as the editor shows it.
struct LoadedRegions {
  std::string path;                   // the buffer file
  std::vector<cute::TagStats> stats;  // per tag id present in the buffer (ascending)
  /// Per stats entry: the name came from a tag file or kernel source (not the tag_<id> fallback).
  std::vector<bool> named;
  int64_t events = 0, units = 1, capacity = 0, overflow = 0;
  std::vector<std::string> warnings;  // decoder and tag-map warnings
  const cute::TagStats* find(int64_t tag) const;
};

/// Loaded regions + per-document tag maps (cached per document snapshot). Main loop only.
class CuteRegions {
 public:
  const std::shared_ptr<const LoadedRegions>& loaded() const { return loaded_; }
  void set(std::shared_ptr<const LoadedRegions> r) { loaded_ = std::move(r); }
  void clear() { loaded_.reset(); }
  /// Load/clear sequence: a load finishing after a newer load or clear is dropped.
  uint64_t nextSeq() { return ++seq_; }
  uint64_t seq() const { return seq_; }
  /// The tag map of the document's CURRENT text (re-computed after each edit).
  const cute::CuteSourceMap& mapOf(const Document& doc);
  void forget(const std::string& uri) { maps_.erase(uri); }

 private:
  struct Cached {
    python::SourceFilePtr source;  // the snapshot mapped (kept alive: identity check)
    cute::CuteSourceMap map;
  };
  std::shared_ptr<const LoadedRegions> loaded_;
  uint64_t seq_ = 0;
  std::map<std::string, Cached> maps_;
};

/// Tag-name equality between a kernel's constant and a loaded name: case-insensitive, an
/// optional `TAG_` prefix ignored on both ("TAG_LOAD" == "load").
bool sameTagName(const std::string& constant, const std::string& loadedName);

/// Whether a document's tag sites belong to the loaded buffer: no TAG_ constant of the document
/// names a loaded tag with another value, and at least one site shows a hint (see siteStats).
bool documentMatches(const LoadedRegions& loaded, const cute::CuteSourceMap& map);
/// The loaded stats a site shows: its tag id is in the buffer and, when the buffer's tag is
/// named, the site's constant has that name. Null otherwise.
const cute::TagStats* siteStats(const LoadedRegions& loaded, const cute::TagSite& site);

/// "◷ region TAG_LOAD: mean 1.30 µs · n=4 · 35 %" (`prefix`: the hints.prefix setting).
std::string regionHintLabel(const std::string& constant, const cute::TagStats& s, Units units = Units::Auto,
                            std::string_view prefix = results::kHintPrefix);

/// Inlay hints at the end of each region's anchor line within '\n'-lines
/// [firstLine, lastLine] of `doc`; empty when nothing is loaded or the document does not match.
std::vector<InlayHint> cuteRegionHints(CuteRegions& state, const Document& doc, uint32_t firstLine, uint32_t lastLine,
                                       Units units = Units::Auto, std::string_view prefix = results::kHintPrefix);

/// Code action kind of "Time this region inside the kernel".
inline constexpr const char* kCuteRegionActionKind = "refactor.rewrite.cute.region";
/// textDocument/codeAction provider: 0 or 1 CodeAction (no edit) for `params` when the selection holds statements
/// inside a `@cute.kernel` function of a document that parses cleanly; honours context.only. `data` = {uri, version,
/// action: "cute.timeRegion", firstLine, lastLine}.
std::vector<CodeAction> cuteRegionCodeActions(const Document& doc, const CodeActionParams& params);
/// True when a codeAction/resolve `data` belongs to cuteRegionCodeActions.
bool isCuteRegionAction(const json& data);
/// The WorkspaceEdit (documentChanges, versioned with doc's version) of core/cute
/// planTimeRegion for `data`; Error::Invalid naming the field ("params.data.firstLine: ...") for
/// malformed data, else its one-line error when the selection cannot be timed. The caller checks
/// that data.version is the document's current version.
Result<WorkspaceEdit> cuteRegionEdit(const Document& doc, const json& data);

/// Registers kernlens.loadRegions / kernlens.clearRegions and the hint provider (see top).
std::shared_ptr<CuteRegions> registerCuteRegions(Server& server, std::shared_ptr<FeatureContext> ctx);

}  // namespace kl::lsp
