// `kernlens profile`'s text: the focus source annotated with per-line GPU time and kernels, then
// the other mapped lines, the unmapped kernels, the stop reason, overhead and notes; labelled
// EMULATED when emulated. Each line's figures are its results::LineView's (core/results/
// line_view.h), worded as the editor words them.
#pragma once

#include <string>

#include "core/planner/loop.h"
#include "core/planner/workspace_index.h"
#include "core/results/line_view.h"

namespace kl::cli {

struct ProfileTextOptions {
  int maxKernelsPerLine = 4;
  bool allFiles = true;  // after the focus source, the other files' lines (callees, callers)
};

/// One line's annotation: "420 µs + bwd 910 µs · 15 launches · 3 invocations · ATOMIC (library) ·
/// optimizer · kernelA x3, bwd:kernelB, +2 more".
std::string lineAnnotation(const results::LineView& v, int maxKernels);

std::string renderProfileText(const planner::LoopResult& r, planner::WorkspaceIndex& index,
                              const ProfileTextOptions& opts = {});

}  // namespace kl::cli
