// Triton / Inductor provenance: which ORIGINAL source lines a fused kernel (`triton_poi_fused_...`)
// came from. Triton kernels are attributed like any other kernel (to the line that calls the
// compiled code); this adds, where Inductor left provenance, the lines that were fused into it.
//
// What Inductor writes (PyTorch 2.x, TORCH_COMPILE_DEBUG=1 or TORCH_LOGS=output_code), and what is
// read here:
//  - output_code.py: before each kernel definition / launch a comment
//      `# Topologically Sorted Source Nodes: [h, relu], Original ATen: [aten.addmm, aten.relu]`
//    (older 2.0/2.1: `# Source Nodes: [...], Original ATen: [...]`) and the definition
//      `triton_poi_fused_addmm_relu_0 = async_compile.triton('triton_poi_fused_addmm_relu_0', '''`
//    -> kernel name -> FX source node names and ATen ops.
//  - fx_graph_readable.py / ir_pre_fusion.txt style graph dumps: before each node
//      `# File: /abs/model.py:20 in forward, code: h = F.relu(self.fc1(x))`
//      `relu: "f32[8, 512]" = torch.ops.aten.relu.default(addmm);  addmm = None`
//    -> FX node name -> file, line, function, code.
// Joining both gives kernel -> original lines. Not read: the JSON provenance-tracking files of
// recent PyTorch (their layout changed between releases). PyTorch 1.13 (Debian's, used here) has no
// Inductor at all, so on this machine no provenance exists; the parser is tested on synthetic text.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kl::planner {

struct KernelOrigin {
  std::vector<std::string> sourceNodes;  // FX node names ("relu", "l__self___fc1")
  std::vector<std::string> atenOps;      // "aten.relu"
};

struct NodeLocation {
  std::string file;      // as written by Inductor (absolute)
  uint32_t line = 0;     // 1-based
  std::string function;  // "forward"
  std::string code;      // the source line's text
};

/// kernel name -> origin, from Inductor's generated code.
std::map<std::string, KernelOrigin> parseInductorOutputCode(std::string_view text);
/// FX node name -> location, from a readable graph dump. A node takes the `# File:` comment
/// directly above it (comments of the same statement group cover every node until the next one).
std::map<std::string, NodeLocation> parseFxGraphLocations(std::string_view text);

struct KernelProvenance {
  std::string kernel;
  std::vector<NodeLocation> lines;  // distinct (file, line), in node order
};

/// kernel -> original lines (kernels whose nodes have no location are omitted).
std::vector<KernelProvenance> joinProvenance(const std::map<std::string, KernelOrigin>& kernels,
                                             const std::map<std::string, NodeLocation>& nodes);

}  // namespace kl::planner
