// Numbers and units as Nsight Compute prints them, normalised to base units.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kl::ncu {

/// Parses an ncu number: plain (`3995313115.40`), with thousands separators (`1,275,068,416`,
/// `9,495.42`), or European-style (`27.595.520`, `1.234,5`). `n/a`, empty and non-numeric text
/// give nullopt.
std::optional<double> parseNumber(std::string_view text);

/// A unit reduced to its base: value_in_base = value * factor.
struct UnitScale {
  std::string base;  // "byte", "byte/s", "ns", "Hz", "%", "cycle", "inst", ... or the unit as given
  double factor = 1;
  bool known = false;  // false: the unit was not recognised and is kept unchanged (factor 1)
};

/// Normalises auto-scaled units: `Kbyte`/`Mbyte`/`Gbyte` (decimal prefixes), `Gbyte/s`,
/// `Gbyte/second`, `nsecond`/`ns`/`usecond`/`us`/`msecond`/`ms`/`second`/`s` (to ns),
/// `hz`/`Khz`/`Mhz`/`Ghz` and `cycle/second`/`cycle/usecond`/`cycle/nsecond` (to Hz),
/// SI-prefixed `cycle`/`inst`/`warp`/`thread`, `%`. Unknown units are returned unchanged.
UnitScale normaliseUnit(std::string_view unit);

}  // namespace kl::ncu
