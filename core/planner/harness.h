// Branch extraction (`--harness auto|always`): a small generated script that imports the focus
// function's module, builds the object (for a method) and synthetic inputs, warms up and runs a few
// iterations — profiled instead of an entry that never reaches the focus function.
//
// Inputs, per parameter of the focus function (self excluded), first match wins:
//  1. a `# kernlens: shapes x=(8,128,512), mask=(8,128)` comment (on the def line, the lines just
//     above the def/decorators, or the first body line) -> torch.randn(shape)
//  2. a `# kernlens: args n=4, causal=True` comment -> that Python expression
//  3. a default value -> left to the default
//  4. otherwise the input cannot be synthesised: Error::Unsupported naming the parameters.
// Constructor (a method's class): a user factory "module:function" (settings) returning the object;
// else the class is called with the `# kernlens: args` values of its __init__ (same comment rules)
// and defaults; a required parameter without either is Error::Unsupported ("set a factory").
// Tensors go to `cuda` when available, else `cpu`; nn.Modules are moved there too.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/planner/workspace_index.h"

namespace kl::planner {

struct HarnessRequest {
  std::filesystem::path workspace;
  std::string path;      // workspace-relative file of the focus function
  std::string qualName;  // "f", "Class.method" (nested functions are refused)
  std::string factory;   // "module:function" or ""
  int warmup = 1;
  int iterations = 3;
};

struct Harness {
  std::string script;              // Python source
  std::string module;              // dotted module imported
  std::string sysPath;             // directory put first on sys.path
  std::vector<std::string> notes;  // how each input was synthesised
};

Result<Harness> generateHarness(WorkspaceIndex& index, const HarnessRequest& req);

/// Parses "x=(8,128,512), m=(4,)" (the text after "shapes") into (name, shape text) pairs.
Result<std::vector<std::pair<std::string, std::string>>> parseShapesComment(std::string_view text);

}  // namespace kl::planner
