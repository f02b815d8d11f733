#include "lsp/features/editor_settings.h"

#include "lsp/server/settings.h"

namespace kl::lsp {

EditorSettings EditorSettings::read(const Settings& s) {
  EditorSettings e;
  e.hintsEnabled = s.get<bool>("hints.enabled", true);
  e.minShare = s.get<double>("hints.minShare", 0.01);
  e.thresholdMs = s.get<double>("hints.thresholdMs", 0.0);
  e.units = parseUnits(s.get<std::string>("hints.units", "auto"));
  e.hintPrefix = s.get<std::string>("hints.prefix", std::string(results::kHintPrefix));
  e.lensesEnabled = s.get<bool>("lenses.enabled", true);
  e.profileLenses = s.get<bool>("lenses.profileUnprofiled", true);
  e.hoverFormat = s.get<std::string>("hover.format", "auto");
  return e;
}

}  // namespace kl::lsp
