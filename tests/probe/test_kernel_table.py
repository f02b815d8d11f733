"""kernel_table + roofline on real tensors (no subprocess)."""

import types
import unittest

import probe_support  # noqa: F401  (puts the probe on sys.path)
import torch

from kernlens_probe import kernel_table, roofline


class FakeFunc:
    def __init__(self, name, overload="default", namespace="aten"):
        self.overloadpacket = types.SimpleNamespace(__name__=name)
        self._overloadname = overload
        self.namespace = namespace


def launches(name, args, out, gpu="h100", kwargs=None, overload="default"):
    op = kernel_table.Op(FakeFunc(name, overload), args, kwargs or {}, out, roofline.gpu(gpu))
    return kernel_table.launches_for(op)


class KernelTableTest(unittest.TestCase):
    def test_gemm_layouts_and_dtypes(self):
        x = torch.randn(64, 128)
        w = torch.randn(256, 128)
        (fwd,), ok = launches("mm", (x, w.t()), x @ w.t())
        self.assertTrue(ok)
        self.assertIn("_tn_n_", fwd.short)
        g = torch.randn(64, 256)
        (dgrad,), _ = launches("mm", (g, w), g @ w)
        self.assertIn("_nn_n_", dgrad.short)
        (wgrad,), _ = launches("mm", (g.t(), x), g.t() @ x)
        self.assertIn("_nt_n_", wgrad.short)
        self.assertEqual(fwd.flops, 2.0 * 64 * 256 * 128)
        xb, wb = x.bfloat16(), w.bfloat16()
        (b,), _ = launches("mm", (xb, wb.t()), xb @ wb.t())
        self.assertTrue(b.short.startswith("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize"), b.short)
        (j,), _ = launches("mm", (xb, wb.t()), xb @ wb.t(), gpu="h200")
        self.assertTrue(j.short.startswith("nvjet_tst_"), j.short)
        (a,), _ = launches("mm", (xb, wb.t()), xb @ wb.t(), gpu="a100")
        self.assertTrue(a.short.startswith("ampere_bf16_s16816gemm_bf16_"), a.short)
        # bf16 GEMMs on tensor cores are much faster than fp32 on SIMT in the model.
        big = torch.empty(4096, 4096)
        (f32,), _ = launches("mm", (big, big), big)
        (bf,), _ = launches("mm", (big.bfloat16(), big.bfloat16()), big.bfloat16())
        spec = roofline.gpu("h100")
        self.assertGreater(roofline.kernel_ns(spec, f32), 5 * roofline.kernel_ns(spec, bf))
        self.assertGreater(roofline.kernel_ns(roofline.gpu("a100"), bf), roofline.kernel_ns(spec, bf))

    def test_attention_families(self):
        q = torch.randn(2, 4, 128, 64).bfloat16()
        (k,), _ = launches("_scaled_dot_product_flash_attention", (q, q, q), (q,))
        self.assertEqual(k.short, "flash_fwd_kernel")
        bwd, _ = launches("_scaled_dot_product_flash_attention_backward", (q, q, q, q), (q, q, q))
        self.assertEqual([x.short for x in bwd], ["flash_bwd_dot_do_o_kernel",
                                                  "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
                                                  "flash_bwd_convert_dq_kernel"])
        qf = q.float()
        (e,), _ = launches("_scaled_dot_product_efficient_attention", (qf, qf, qf), (qf,))
        self.assertTrue(e.short.startswith("fmha_cutlassF_f32"), e.short)

    def test_other_families(self):
        x = torch.randn(8, 512)
        (ln,), _ = launches("native_layer_norm", (x, [512], None, None, 1e-5), (x, x, x))
        self.assertEqual(ln.short, "vectorized_layer_norm_kernel")
        (sm,), _ = launches("_softmax", (x, -1, False), x)
        self.assertEqual(sm.short, "softmax_warp_forward")
        (r,), _ = launches("sum", (x, [1]), x.sum(1), overload="dim_IntList")
        self.assertEqual(r.short, "reduce_kernel")
        self.assertEqual(launches("view", (x, [4096]), x.view(-1)), ([], True))
        (cp,), _ = launches("clone", (x,), x.clone())
        self.assertEqual((cp.kind, cp.copy_kind), ("memcpy", kernel_table.DTOD))
        (nc,), _ = launches("clone", (x.t(),), x.t().clone())
        self.assertEqual(nc.short, "elementwise_kernel")
        tensors = [torch.randn(10) for _ in range(130)]
        mt, _ = launches("_foreach_add_", (tensors, tensors), None, overload="List")
        self.assertEqual([m.short for m in mt], ["multi_tensor_apply_kernel"] * 3)  # 64 tensors per launch
        idx = torch.tensor([1, 2, 3])
        emb, _ = launches("embedding", (torch.randn(10, 4), idx), torch.randn(3, 4))
        self.assertEqual(emb[0].short, "indexSelectSmallIndex")

    def test_unmodelled_ops_are_reported(self):
        x = torch.randn(4)
        ls, ok = launches("some_new_op", (x,), x)
        self.assertFalse(ok)
        self.assertEqual([l.short for l in ls], ["vectorized_elementwise_kernel"])

    def test_duration_floor_and_memory_bound(self):
        spec = roofline.gpu("h100")
        small = torch.randn(4)
        (k,), _ = launches("relu", (small,), small)
        self.assertEqual(roofline.kernel_ns(spec, k), roofline.KERNEL_FLOOR_NS)
        big = torch.empty(64 << 20)
        (k,), _ = launches("relu", (big,), big)
        expect = 2 * big.numel() * 4 / (spec.bandwidth * roofline.EFF_MEMORY) * 1e9 + roofline.KERNEL_OVERHEAD_NS
        self.assertAlmostEqual(roofline.kernel_ns(spec, k), expect, delta=2)
        with self.assertRaises(ValueError):
            roofline.gpu("v100")


if __name__ == "__main__":
    unittest.main()


class FusedOpModelsTest(unittest.TestCase):
    """Ops CUDA PyTorch runs as fused kernels: modelled, not the generic elementwise fallback."""

    def test_native_mha_fast_path(self):
        b, l, e, h = 2, 8, 32, 4
        q = torch.randn(b, l, e)
        w_in, b_in, w_out, b_out = torch.randn(3 * e, e), torch.randn(3 * e), torch.randn(e, e), torch.randn(e)
        got, ok = launches("_native_multi_head_attention", (q, q, q, e, h, w_in, b_in, w_out, b_out), (q,))
        self.assertTrue(ok)
        shorts = [x.short for x in got]
        self.assertEqual(len(got), 6)
        self.assertIn("transform_bias_rescale_qkv_kernel", shorts)
        self.assertIn("softmax_warp_forward", shorts)
        gemms = [x for x in got if x.gemm]
        self.assertEqual(len(gemms), 4)
        self.assertEqual(gemms[0].flops, 2.0 * b * l * 3 * e * e)  # packed in-projection
        self.assertEqual(gemms[1].gemm[3], b * h)                   # batched Q.K^T

    def test_group_norm_embedding_bag_unsafe_split(self):
        x = torch.randn(2, 8, 4, 4)
        got, ok = launches("native_group_norm", (x, torch.ones(8), torch.zeros(8), 2, 8, 16, 4, 1e-5), (x,))
        self.assertTrue(ok)
        self.assertEqual([g.short for g in got][:2], ["RowwiseMomentsCUDAKernel", "ComputeFusedParamsCUDAKernel"])
        w = torch.randn(10, 6)
        idx = torch.tensor([1, 2, 4, 5, 4, 3])
        (k,), ok = launches("_embedding_bag", (w, idx, torch.tensor([0, 3]), False, 1), (torch.zeros(2, 6),))
        self.assertTrue(ok)
        self.assertEqual(k.short, "EmbeddingBag_updateOutputKernel_sum_mean")
        got, ok = launches("unsafe_split", (x, 2), (x,))
        self.assertEqual((got, ok), ([], True))
