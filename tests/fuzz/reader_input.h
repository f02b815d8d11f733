// What the reader fuzz targets do with one input, shared with the replay test of their corpora
// and past crash inputs (tests/unit/attribution/fuzz_regression_test.cpp): read the bytes as an
// nsys SQLite image or a Kineto JSON trace (plain or gzip), attribute, and walk every op's
// result. Any input must yield a model or a Result error; crashes and sanitizer reports are bugs.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"

namespace kl::fuzz {

inline void readNsysInput(std::string_view bytes) {
  auto m = profile::readNsysSqliteImage(bytes, "fuzz.sqlite");
  if (!m.ok()) return;
  auto a = attribution::attribute(*m);
  if (a.ok())
    for (uint32_t i = 0; i < m->gpuOps.size(); ++i) (void)a->path(*m, i);
}

inline void readKinetoInput(std::string_view text) {
  auto m = profile::readKinetoJsonText(text, "fuzz.json");
  if (!m.ok()) return;
  auto a = attribution::attribute(*m);
  if (a.ok())
    for (uint32_t i = 0; i < m->gpuOps.size(); ++i) (void)attribution::sourceOf(*m, *a, i);
}

}  // namespace kl::fuzz
