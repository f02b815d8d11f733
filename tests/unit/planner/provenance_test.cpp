// Inductor provenance parser on synthetic generated code (PyTorch 1.13 here has no Inductor).
#include "core/planner/provenance.h"

#include "doctest/doctest.h"

using namespace kl::planner;

TEST_CASE("output code + FX graph dump give kernel -> original lines") {
  const char* out = R"(
# kernel path: /tmp/torchinductor_root/ab/cabc.py
# Topologically Sorted Source Nodes: [h, relu], Original ATen: [aten.addmm, aten.relu]
# Source node to ATen node mapping:
#   h => addmm
triton_poi_fused_addmm_relu_0 = async_compile.triton('triton_poi_fused_addmm_relu_0', '''
import triton
''', device_str='cuda')

# Source Nodes: [gelu], Original ATen: [aten.gelu]
triton_poi_fused_gelu_1 = async_compile.triton('triton_poi_fused_gelu_1', '''
''')
no_comment_kernel = async_compile.triton('no_comment_kernel', '''
''')
)";
  auto k = parseInductorOutputCode(out);
  REQUIRE(k.count("triton_poi_fused_addmm_relu_0"));
  CHECK(k["triton_poi_fused_addmm_relu_0"].sourceNodes == std::vector<std::string>{"h", "relu"});
  CHECK(k["triton_poi_fused_addmm_relu_0"].atenOps == std::vector<std::string>{"aten.addmm", "aten.relu"});
  CHECK(k["triton_poi_fused_gelu_1"].sourceNodes == std::vector<std::string>{"gelu"});
  CHECK_FALSE(k.count("no_comment_kernel"));

  const char* fx = R"(
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[512, 256]", primals_3: "f32[64, 256]"):
        # File: /work/mlp.py:20 in forward, code: h = F.relu(self.fc1(x))
        h: "f32[64, 512]" = torch.ops.aten.addmm.default(primals_2, primals_3, permute)
        relu: "f32[64, 512]" = torch.ops.aten.relu.default(h);  h = None
        # File: /work/mlp.py:21 in forward, code: h = F.gelu(self.fc2(h))
        gelu = torch.ops.aten.gelu.default(addmm_1)
        return (gelu,)
)";
  auto n = parseFxGraphLocations(fx);
  REQUIRE(n.count("relu"));
  CHECK(n["relu"].line == 20);
  CHECK(n["relu"].file == "/work/mlp.py");
  CHECK(n["relu"].function == "forward");
  CHECK(n["gelu"].line == 21);
  CHECK(n["gelu"].code == "h = F.gelu(self.fc2(h))");
  CHECK_FALSE(n.count("class"));

  auto p = joinProvenance(k, n);
  REQUIRE(p.size() == 2);
  CHECK(p[0].kernel == "triton_poi_fused_addmm_relu_0");
  REQUIRE(p[0].lines.size() == 1);  // h and relu are both line 20: one location
  CHECK(p[0].lines[0].line == 20);
  CHECK(p[1].lines[0].line == 21);
}

TEST_CASE("malformed provenance text yields nothing, never a crash") {
  CHECK(parseInductorOutputCode("# Source Nodes: [unterminated\nx = async_compile.triton(").empty());
  CHECK(parseFxGraphLocations("# File: nowhere\n# File: a.py:x in f, code: y\nz = 1").empty());
  CHECK(parseFxGraphLocations("").empty());
}
