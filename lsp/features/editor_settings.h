// The presentation settings of the editor features, read from `kernlens.*` (see
// docs/editor-features.md). The current value lives in the FeatureContext (feature_context.h),
// re-read after initialize and each didChangeConfiguration.
#pragma once

#include <string>

#include "core/results/format.h"

namespace kl::lsp {

class Settings;

struct EditorSettings {
  bool hintsEnabled = true;                      // hints.enabled
  double minShare = 0.01;                        // hints.minShare: hide lines below this share of their function
  double thresholdMs = 0.0;                      // hints.thresholdMs: hide lines below this absolute time
  Units units = Units::Auto;                     // hints.units
  std::string hintPrefix{results::kHintPrefix};  // hints.prefix: the glyph before the time ("" = none)
  bool lensesEnabled = true;                     // lenses.enabled
  bool profileLenses = true;                     // lenses.profileUnprofiled: "▶ Profile" on functions without results
  std::string hoverFormat = "auto";              // hover.format: auto | markdown | plaintext

  /// The values in `s`; a missing or mistyped key keeps its default (Settings::get logs it).
  static EditorSettings read(const Settings& s);
  friend bool operator==(const EditorSettings&, const EditorSettings&) = default;
};

}  // namespace kl::lsp
