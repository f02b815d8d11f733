"""kernel_table + roofline on real tensors (no subprocess)."""

import os
import re
import types
import unittest
import warnings

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


REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "real")


def real_kernel_names(rel):
    """Demangled kernel names of a real trace under tests/data/real (Kineto .json.gz or nsys
    .sqlite.gz; see tests/data/real/README.md for origin and licence)."""
    import gzip
    import json
    import sqlite3
    import tempfile
    path = os.path.join(REAL, rel)
    if rel.endswith(".json.gz"):
        doc = json.load(gzip.open(path))
        return {e["name"] for e in doc["traceEvents"] if e.get("cat") in ("kernel", "Kernel")}
    with tempfile.NamedTemporaryFile(suffix=".sqlite") as tmp:
        tmp.write(gzip.open(path).read())
        tmp.flush()
        db = sqlite3.connect(tmp.name)
        try:
            return {r[0] for r in db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                              "JOIN StringIds s ON s.id = k.demangledName")}
        finally:
            db.close()


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
        # 16-bit GEMMs on Hopper: cuBLASLt nvjet kernels, in the grammar of the names a real H100
        # and H200 ran (tests/data/real/nsys/mfu_2gpu_before.sqlite.gz, H100;
        # fuser_h200_*.sqlite.gz, H200); addmm with a 1-D bias fuses it (`bias_`), as there.
        real16 = real_kernel_names("nsys/mfu_2gpu_before.sqlite.gz") | real_kernel_names("fuser_h200_xent_nvtx.sqlite.gz")
        nvjet = [n for n in real16 if n.startswith("nvjet_")]
        self.assertTrue(nvjet)
        grammar = re.compile(r"nvjet_tst_\d+x\d+_64x\d+_\dx\d_[hv]_bz_(coop[AB]_)?(bias_)?[TN]{3}$")
        for n in nvjet:
            self.assertRegex(n, grammar)
        self.assertRegex(b.short, grammar)
        bias = torch.randn(256).bfloat16()
        (bb,), _ = launches("addmm", (bias, xb, wb.t()), xb @ wb.t())
        self.assertRegex(bb.short, grammar)
        self.assertIn("_bias_TN", bb.short)
        self.assertTrue(any("_bias_TN" in n for n in nvjet))
        (j,), _ = launches("mm", (xb, wb.t()), xb @ wb.t(), gpu="h200")
        self.assertRegex(j.short, grammar)
        # fp32 (no TF32) on Hopper: the sm80 FFMA kernels a real H100 ran; every name the model
        # gives for these shapes is one of the names in that trace.
        real32 = {n for n in real_kernel_names("nsys/h100_2gpu_1s.sqlite.gz") if "_ffma_" in n}
        self.assertTrue(real32)
        for m, n in ((64, 256), (512, 512), (512, 64), (16, 16), (64, 4096)):
            (f,), _ = launches("mm", (torch.empty(m, 128), torch.empty(n, 128).t()), torch.empty(m, n))
            self.assertIn(f.short, real32)
        (a,), _ = launches("mm", (xb, wb.t()), xb @ wb.t(), gpu="a100")
        self.assertTrue(a.short.startswith("ampere_bf16_s16816gemm_bf16_"), a.short)
        # bf16 GEMMs on tensor cores are much faster than fp32 on SIMT in the model.
        big = torch.empty(4096, 4096)
        (f32,), _ = launches("mm", (big, big), big)
        (bf,), _ = launches("mm", (big.bfloat16(), big.bfloat16()), big.bfloat16())
        spec = roofline.gpu("h100")
        self.assertGreater(roofline.kernel_ns(spec, f32), 5 * roofline.kernel_ns(spec, bf))
        self.assertGreater(roofline.kernel_ns(roofline.gpu("a100"), bf), roofline.kernel_ns(spec, bf))

    def test_attention_backend_choice(self):
        """select_sdp_backend as CUDA PyTorch 2.x: H100 prefers cuDNN for 16-bit, A100 flash;
        fp32 goes to the memory-efficient kernel; a mask rules flash out; a disabled backend is
        skipped (torch.backends.cuda.enable_*_sdp, what sdpa_kernel sets)."""
        q = torch.randn(1, 8, 141, 64).bfloat16()
        (h,), _ = launches("_scaled_dot_product_flash_attention_for_cpu", (q, q, q), (q,))
        self.assertTrue(h.short.startswith("cudnn_generated_fort_native_sdpa_sm90_flash_fprop"), h.short)
        # flash on A100, named as a real H100 ran pytorch_flash for this shape (bf16, d 64, s 141)
        (a,), _ = launches("_scaled_dot_product_flash_attention_for_cpu", (q, q, q), (q,), gpu="a100")
        seen = [n for n in real_kernel_names("tracelens_h100_bert_small_infer.json.gz") if "flash_fwd_kernel" in n]
        self.assertEqual([a.demangled], seen)
        self.assertEqual(a.grid, (2, 1, 8))
        mask = torch.ones(141, 141, dtype=torch.bool)
        (m,), _ = launches("_scaled_dot_product_flash_attention_for_cpu", (q, q, q), (q,), gpu="a100",
                           kwargs={"attn_mask": mask})
        self.assertTrue(m.short.startswith("fmha_cutlassF_bf16"), m.short)
        prev = torch.backends.cuda.cudnn_sdp_enabled()
        torch.backends.cuda.enable_cudnn_sdp(False)
        try:
            (f,), _ = launches("_scaled_dot_product_flash_attention_for_cpu", (q, q, q), (q,))
        finally:
            torch.backends.cuda.enable_cudnn_sdp(prev)
        self.assertEqual(f.short, "flash_fwd_kernel")
        bwd, _ = launches("_scaled_dot_product_flash_attention_for_cpu_backward", (q, q, q, q, q, q), (q, q, q))
        self.assertEqual(len(bwd), 2)
        self.assertIn("flash_bprop", bwd[0].short)

    def test_attention_families(self):
        q = torch.randn(2, 4, 128, 64).bfloat16()
        (k,), _ = launches("_scaled_dot_product_flash_attention", (q, q, q), (q,), gpu="a100")
        self.assertEqual(k.short, "flash_fwd_kernel")
        bwd, _ = launches("_scaled_dot_product_flash_attention_backward", (q, q, q, q), (q, q, q), gpu="a100")
        self.assertEqual([x.short for x in bwd], ["flash_bwd_dot_do_o_kernel",
                                                  "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
                                                  "flash_bwd_convert_dq_kernel"])
        qf = q.float()
        (e,), _ = launches("_scaled_dot_product_efficient_attention", (qf, qf, qf), (qf,))
        self.assertTrue(e.short.startswith("fmha_cutlassF_f32"), e.short)
        # CPU PyTorch's variant (what the emulator sees on torch >= 2.1): the kernel a GPU picks.
        (c,), ok = launches("_scaled_dot_product_flash_attention_for_cpu", (q, q, q, 0.0, True), (q,), gpu="a100")
        self.assertTrue(ok)
        self.assertEqual(c.short, "flash_fwd_kernel")
        self.assertLess(c.flops, k.flops)  # causal: half the work
        (c32,), _ = launches("_scaled_dot_product_flash_attention_for_cpu", (qf, qf, qf), (qf,))
        self.assertTrue(c32.short.startswith("fmha_cutlassF_f32"), c32.short)
        bwd, ok = launches("_scaled_dot_product_flash_attention_for_cpu_backward", (q, q, q, q, q, q), (q, q, q), gpu="a100")
        self.assertTrue(ok)
        self.assertEqual(bwd[1].short, "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel")

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

    def test_foreach_names_and_chunking(self):
        # Names as CUDA PyTorch's ATen writes them (copied from a real V100 Kineto trace,
        # hta_v100_ns_resolution_rank0: SGD with momentum, foreach).
        ns = "at::native::(anonymous namespace)::"
        ps = [torch.randn(300) for _ in range(5)]
        (mul,), _ = launches("_foreach_mul_", (ps, 0.9), None, overload="Scalar")
        sig = ns + "TensorListMetadata<1>, " + ns + "BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float"
        self.assertEqual(mul.demangled, "void %smulti_tensor_apply_kernel<%s>(%s)" % (ns, sig, sig))
        (add,), _ = launches("_foreach_add_", (ps, ps), None, overload="List", kwargs={"alpha": 0.1})
        sig = ns + "TensorListMetadata<2>, " + ns + "BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float"
        self.assertEqual(add.demangled, "void %smulti_tensor_apply_kernel<%s>(%s)" % (ns, sig, sig))
        (oop,), _ = launches("_foreach_add", (ps, ps), [p + p for p in ps], overload="List")
        self.assertIn("BinaryOpListAlphaFunctor<float, 3, 2, 2>", oop.demangled)  # as in param_rtx2080ti
        # Chunking (MultiTensorApply.cuh): 64 KiB-element chunks, at most 320 blocks and (depth 2)
        # 64 tensors per launch. Three tensors of 200 chunks: 320 blocks (tensor 2 cut after 120
        # chunks), then its last 80 + 200 = 280 blocks.
        big = [torch.empty(200 * 65536) for _ in range(3)]
        ls, _ = launches("_foreach_add_", (big, big), None, overload="List")
        self.assertEqual([l.grid[0] for l in ls], [320, 280])
        self.assertEqual(sum(l.flops for l in ls), 2 * 3 * 200 * 65536)
        # 130 small tensors + 1 empty: 64 + 64 + 2 tensors per launch, blocks = tensors.
        small = [torch.randn(10) for _ in range(130)] + [torch.empty(0)]
        ls, _ = launches("_foreach_add_", (small, small), None, overload="List")
        self.assertEqual([l.grid[0] for l in ls], [64, 64, 2])
        # Depth 3 (addcmul_ in place: 48 tensors per launch).
        ls, _ = launches("_foreach_addcmul_", (small, small, small, 0.5), None, overload="Scalar")
        self.assertEqual([l.grid[0] for l in ls], [48, 48, 34])
        self.assertIn("PointwiseOpScalarFunctor<float, 3, 3, 0>", ls[0].demangled)
        # Off the fast route (mixed dtypes): one elementwise kernel per tensor.
        mixed = [torch.randn(10), torch.randn(10).double()]
        ls, _ = launches("_foreach_add_", (mixed, mixed), None, overload="List")
        self.assertEqual(len(ls), 2)
        self.assertNotIn("multi_tensor_apply_kernel", [l.short for l in ls])
        # _foreach_norm: the partial norms, then lpnorm_cleanup.
        ls, _ = launches("_foreach_norm", (ps, 2), [p.norm() for p in ps], overload="Scalar")
        self.assertEqual([l.short for l in ls], ["multi_tensor_apply_kernel", "lpnorm_cleanup"])

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


class CudnnRnnTest(unittest.TestCase):
    """nn.LSTM/GRU/RNN as CUDA PyTorch runs them: one aten::_cudnn_rnn (and _cudnn_rnn_backward)
    with cuDNN's STANDARD algorithm (input GEMM, then per time step a recurrent GEMM and the
    elementwise cell kernel), PERSIST_STATIC for eligible half-precision calls."""

    @staticmethod
    def call(module, x, name, *extra, spec="h100"):
        args = (x,) + extra + (module._flat_weights, module.bias, module.num_layers, float(module.dropout),
                               module.training, module.bidirectional)
        if extra and isinstance(extra[0], torch.Tensor) and extra[0].dtype == torch.long:  # packed
            return kernel_table.rnn_call(name, args, roofline.gpu(spec))
        return kernel_table.rnn_call(name, args + (module.batch_first,), roofline.gpu(spec))

    def test_lstm_standard_forward_and_backward(self):
        t, b, i, h, layers = 5, 3, 8, 16, 2
        lstm = torch.nn.LSTM(i, h, num_layers=layers)
        x = torch.randn(t, b, i)
        hx = [torch.zeros(layers, b, h), torch.zeros(layers, b, h)]
        c = self.call(lstm, x, "lstm", hx)
        self.assertIsNotNone(c)
        fwd = c.forward_launches()
        self.assertEqual(len(fwd), layers * (1 + 2 * t))
        cells = [k for k in fwd if k.short == "elemWiseRNNcell"]
        self.assertEqual(len(cells), layers * t)
        self.assertIn("(cudnnRNNMode_t)2", cells[0].demangled)
        gemms = [k for k in fwd if k.gemm]
        self.assertEqual(len(gemms), layers * (1 + t))
        self.assertEqual(gemms[0].flops, 2.0 * t * b * i * 4 * h)       # input projection, all steps
        self.assertEqual(gemms[1].flops, 2.0 * b * h * 4 * h)           # one recurrent step
        self.assertEqual(gemms[1 + t].flops, 2.0 * t * b * h * 4 * h)   # layer 2's input is layer 1's output
        bwd = c.backward_launches()
        self.assertEqual(sum(k.short == "LSTM_elementWise_bp1" for k in bwd), layers * t)
        self.assertEqual(sum(1 for k in bwd if k.gemm), layers * (t + 1) + 2 * layers)
        self.assertFalse(any(k.short == "elemWiseRNNcell" for k in bwd))

    def test_gru_bidirectional_batch_first_and_rnn_tanh(self):
        t, b, i, h = 4, 2, 8, 16
        gru = torch.nn.GRU(i, h, batch_first=True, bidirectional=True)
        c = self.call(gru, torch.randn(b, t, i), "gru", torch.zeros(2, b, h))
        self.assertEqual((c.steps, c.batches[0], c.dirs), (t, b, 2))
        cells = [k for k in c.forward_launches() if k.short == "elemWiseRNNcell"]
        self.assertEqual(len(cells), 2 * t)
        self.assertIn("(cudnnRNNMode_t)3", cells[0].demangled)
        self.assertEqual(sum(k.short == "GRU_elementWise_bp1" for k in c.backward_launches()), 2 * t)
        rnn = torch.nn.RNN(i, h, nonlinearity="tanh", bias=False)
        c = self.call(rnn, torch.randn(t, b, i), "rnn_tanh", torch.zeros(1, b, h))
        cells = [k for k in c.forward_launches() if k.short == "elemWiseRNNcell"]
        self.assertIn("(cudnnRNNMode_t)1, (cudnnRNNBiasMode_t)0", cells[0].demangled)
        self.assertEqual(sum(k.short == "RNN_elementWise_bp1" for k in c.backward_launches()), t)

    def test_packed_sequence_steps_follow_the_batch_sizes(self):
        lstm = torch.nn.LSTM(8, 16)
        seqs = [torch.randn(n, 8) for n in (4, 3, 1)]
        packed = torch.nn.utils.rnn.pack_sequence(seqs)
        c = self.call(lstm, packed.data, "lstm", packed.batch_sizes, [torch.zeros(1, 3, 16)] * 2)
        self.assertTrue(c.packed)
        self.assertEqual(c.batches, [3, 2, 2, 1])
        self.assertEqual(c.rows, 8)
        fwd = c.forward_launches()
        self.assertEqual(sum(k.short == "elemWiseRNNcell" for k in fwd), 4)
        self.assertEqual([k.gemm[0] for k in fwd if k.gemm], [8, 3, 2, 2, 1])  # rows per GEMM

    def test_half_precision_takes_the_persistent_kernel(self):
        lstm = torch.nn.LSTM(128, 128).half()
        x = torch.randn(6, 4, 128).half()
        c = self.call(lstm, x, "lstm", [torch.zeros(1, 4, 128).half()] * 2)
        self.assertTrue(c.persistent)
        self.assertEqual([k.short for k in c.forward_launches()][1:], ["RNN_blockPersist_fp_LSTM"])
        self.assertIn("RNN_blockPersist_bp_LSTM", [k.short for k in c.backward_launches()])
        # fp32 or sizes that are not multiples of 128: the standard algorithm.
        c32 = self.call(torch.nn.LSTM(128, 128), x.float(), "lstm", [torch.zeros(1, 4, 128)] * 2)
        self.assertFalse(c32.persistent)

    def test_training_dropout_between_layers_and_bias_gradients(self):
        # cuDNN, as the sample's real nsys statistics show it: one GENERIC_elementWise_bp2 per
        # layer (bias gradient) and one cudnn::initstates per process for the dropout state.
        t, b, i, h, layers = 5, 3, 8, 16, 3
        lstm = torch.nn.LSTM(i, h, num_layers=layers, dropout=0.2, bidirectional=True)
        hx = [torch.zeros(2 * layers, b, h)] * 2
        c = self.call(lstm, torch.randn(t, b, i), "lstm", hx)
        fwd = [k.short for k in c.forward_launches(init_dropout_state=True)]
        self.assertEqual(fwd[0], "initstates")
        self.assertEqual(fwd.count("RNN_dropout_fp"), layers - 1)  # on every layer's output but the last
        # ... between the layers: after layer 1's cells, before layer 2's input GEMM.
        first = fwd.index("RNN_dropout_fp")
        self.assertEqual(fwd[1:first].count("elemWiseRNNcell"), 2 * t)
        self.assertEqual(fwd.count("initstates"), 1)
        self.assertNotIn("initstates", [k.short for k in c.forward_launches()])  # later calls
        bwd = c.backward_launches()
        shorts = [k.short for k in bwd]
        self.assertEqual(shorts.count("RNN_dropout_bp"), layers - 1)
        bias = [k for k in bwd if k.short == "GENERIC_elementWise_bp2"]
        self.assertEqual(len(bias), layers * 2)  # per layer and direction
        self.assertIn("GENERIC_elementWise_bp2<float, float, float, 4, (cudnnRNNBiasMode_t)2>", bias[0].demangled)
        # Inference, no dropout, no biases: none of them.
        lstm.eval()
        c = self.call(lstm, torch.randn(t, b, i), "lstm", hx)
        self.assertFalse({"initstates", "RNN_dropout_fp"} & {k.short for k in c.forward_launches(True)})
        gru = torch.nn.GRU(i, h, num_layers=2, bias=False, dropout=0.5)
        c = self.call(gru, torch.randn(t, b, i), "gru", torch.zeros(2, b, h))
        shorts = [k.short for k in c.backward_launches()]
        self.assertEqual((shorts.count("GENERIC_elementWise_bp2"), shorts.count("RNN_dropout_bp")), (0, 1))

    def test_unknown_arguments_are_left_alone(self):
        x = torch.randn(3, 2, 4)
        self.assertIsNone(kernel_table.rnn_call("lstm", (x,), roofline.gpu("h100")))
        self.assertIsNone(kernel_table.rnn_call("lstm_cell", (x, [x], [x, x]), roofline.gpu("h100")))
        self.assertIsNone(kernel_table.rnn_call("gru", (x.long(), x, [x, x], True, 1, 0.0, True, False, False),
                                                roofline.gpu("h100")))


class FastPathAndTransposeTest(unittest.TestCase):
    """nn.TransformerEncoderLayer's inference fast path, nested-tensor padding ops and transposed
    convolutions as CUDA PyTorch launches them."""

    def test_transformer_encoder_layer_fast_path(self):
        b, l, e, h, ff = 2, 8, 32, 4, 64
        layer = torch.nn.TransformerEncoderLayer(e, h, ff, batch_first=True)
        a = layer.self_attn
        x = torch.randn(b, l, e)
        args = (x, e, h, a.in_proj_weight, a.in_proj_bias, a.out_proj.weight, a.out_proj.bias, False, False, 1e-5,
                layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
                layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias)
        got, ok = launches("_transformer_encoder_layer_fwd", args, x)
        self.assertTrue(ok)
        shorts = [k.short for k in got]
        self.assertEqual(shorts.count("vectorized_layer_norm_kernel"), 2)
        self.assertEqual(shorts.count("transform_bias_rescale_qkv_kernel"), 1)
        gemms = [k for k in got if k.gemm]
        self.assertEqual(len(gemms), 6)  # qkv, QK^T, AV, out-proj, linear1, linear2
        self.assertEqual(gemms[4].flops, 2.0 * b * l * e * ff)
        relu = [k for k in got if "clamp" in k.demangled]
        self.assertEqual(len(relu), 1)  # activation="relu" (use_gelu False)
        # norm_first: a layer norm before the attention, none at the end.
        args = args[:8] + (True,) + args[9:]
        got, _ = launches("_transformer_encoder_layer_fwd", args, x)
        self.assertEqual(got[0].short, "vectorized_layer_norm_kernel")
        self.assertNotEqual(got[-1].short, "vectorized_layer_norm_kernel")

    def test_nested_tensor_padding_ops(self):
        x = torch.randn(2, 3, 4)
        keep = torch.tensor([[True, True, True], [True, True, False]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "nested tensors are in prototype stage"
            nested = torch._nested_tensor_from_mask(x, keep)
        got, ok = launches("_nested_tensor_from_mask", (x, keep), nested)
        self.assertTrue(ok)
        self.assertEqual([k.short for k in got], ["reduce_kernel", "memcpy", "remove_padding_kernel"])
        got, ok = launches("_nested_tensor_from_mask_left_aligned", (x, keep), True)
        self.assertEqual([k.short for k in got], ["reduce_kernel", "memcpy"])
        padded = torch.nested.to_padded_tensor(nested, 0.0)
        (k,), ok = launches("to_padded_tensor", (nested, 0.0), padded)
        self.assertEqual(k.short, "add_padding_2")
        # The encoder layer on the nested batch: its GEMMs over the 5 real tokens, not 6.
        e, h = 4, 2
        layer = torch.nn.TransformerEncoderLayer(e, h, 8, batch_first=True)
        a = layer.self_attn
        args = (nested, e, h, a.in_proj_weight, a.in_proj_bias, a.out_proj.weight, a.out_proj.bias, False, False,
                1e-5, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
                layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias)
        got, ok = launches("_transformer_encoder_layer_fwd", args, nested)
        self.assertTrue(ok)
        self.assertEqual([k.gemm[0] for k in got if k.gemm and k.gemm[3] == 1][0], 5)

    def test_transposed_convolution_is_a_dgrad(self):
        x, w = torch.randn(1, 4, 8, 8), torch.randn(4, 8, 3, 3)
        out = torch.nn.functional.conv_transpose2d(x, w, stride=2)
        (k,), ok = launches("convolution", (x, w, None, [2, 2], [0, 0], [1, 1], True, [0, 0], 1), out)
        self.assertTrue(ok)
        self.assertIn("_xmma_dgrad_implicit_gemm_", k.short)
        self.assertEqual(k.flops, 2.0 * x.numel() * 8 * 9)
        (f,), _ = launches("convolution", (out, w.transpose(0, 1).contiguous(), None, [1, 1], [0, 0], [1, 1], False,
                                           [0, 0], 1), torch.empty(1, 4, 15, 15))
        self.assertIn("_xmma_fprop_implicit_gemm_", f.short)
        g = torch.randn_like(out)
        bwd, _ = launches("convolution_backward", (g, x, w, None, [2, 2], [0, 0], [1, 1], True, [0, 0], 1,
                                                   [True, True, False]), (x, w, None))
        self.assertEqual([("fprop" in k.short, "wgrad" in k.short) for k in bwd], [(True, False), (False, True)])
        # With a bias: its gradient is one sum reduction.
        bwd, ok = launches("convolution_backward", (g, x, w, [8], [2, 2], [0, 0], [1, 1], True, [0, 0], 1,
                                                   [True, True, True]), (x, w, torch.zeros(8)))
        self.assertTrue(ok)
        self.assertEqual(bwd[-1].short, "reduce_kernel")
        self.assertIn("sum_functor<float, float, float>", bwd[-1].demangled)


class EmbeddingBagBackwardTest(unittest.TestCase):
    def test_dense_backward_by_mode(self):
        g, idx = torch.randn(2, 6), torch.tensor([1, 2, 3, 4])
        args = (g, idx, torch.tensor([0, 0, 1, 1]), torch.tensor([2, 2]), torch.tensor([]), 10, False)
        got, ok = launches("_embedding_bag_dense_backward", args + (1, None, -1), torch.zeros(10, 6))
        self.assertTrue(ok)
        self.assertEqual([k.short for k in got][1:], ["DeviceRadixSortOnesweepKernel", "compute_grad_weight_bags",
                                                      "sum_and_scatter"])
        got, ok = launches("_embedding_bag_dense_backward", args + (2, None, -1), torch.zeros(10, 6))
        self.assertEqual([k.short for k in got][1:], ["EmbeddingBag_accGradParametersKernel_max"])


def real_op_kernels(path, op_name):
    """[(op args, [kernel names])] for every `op_name` event of a real Kineto trace: the kernels
    whose launch (runtime event on the op's thread, inside the op's interval) correlates."""
    import gzip
    import json
    doc = json.load(gzip.open(path))
    ev = doc["traceEvents"]
    by_corr = {}
    for e in ev:
        if e.get("cat") in ("kernel", "Kernel"):
            by_corr.setdefault(e["args"].get("correlation"), []).append(e["name"])
    runtime = [e for e in ev if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver")]
    out = []
    for o in ev:
        if o.get("cat") in ("cpu_op", "Operator") and o.get("name") == op_name:
            t0, t1 = o["ts"], o["ts"] + o["dur"]
            names = [k for r in runtime if r["tid"] == o["tid"] and t0 <= r["ts"] <= t1
                     for k in by_corr.get(r["args"].get("correlation"), [])]
            out.append((o.get("args", {}), names))
    return out


# What identifies a kernel across ATen versions and vendors: the functor of an elementwise kernel
# (with its dispatch lambda numbers and argument types), the reduction's ops, a named kernel's
# template. Launch-bounds / vector-width / ROCm-vs-CUDA loop details are left out.
KERNEL_KEYS = re.compile(r"FillFunctor<[^>]*>|MeanOps<[^>]*>|max_pool_\w+<[^>]*>|adaptive_average_pool<[^>]*>|"
                         r"\w+_cuda(?:_kernel)?\([^)]*\)::\{lambda\(\)#1\}::operator\(\)\(\) const::"
                         r"\{lambda\(\)#\d+\}::operator\(\)\(\) const::\{lambda\([^)]*\)#1\}")


class RealProfileOpsTest(unittest.TestCase):
    """The emulator's launches for an op against the kernels the same op (same shapes and dtypes)
    launched in real profiles in tests/data/real: same count, same kernel identity in order, and
    the strided (non-vectorized) path where the real run took it."""

    DATA = os.path.join(probe_support.SOURCE_DIR, "tests", "data", "real")
    DTYPES = {"c10::BFloat16": torch.bfloat16, "float": torch.float32, "c10::Half": torch.float16}

    def check(self, real, ours):
        self.assertEqual(len(ours), len(real), ([k.short for k in ours], real))
        for got, want in zip(ours, real):
            keys = KERNEL_KEYS.findall(want)
            self.assertTrue(keys, want)
            self.assertEqual(KERNEL_KEYS.findall(got.demangled), keys, (got.demangled, want))
            self.assertEqual("vectorized" in got.demangled, "vectorized" in want, (got.demangled, want))

    def test_mse_loss_forward_and_backward_as_on_a_real_gpu(self):
        path = os.path.join(self.DATA, "tracelens_mi300x_resnet_actckpt_rank0.json.gz")
        fwd = real_op_kernels(path, "aten::mse_loss")
        self.assertTrue(fwd)
        for args, real in fwd:  # mean reduction (MeanOps)
            dt = self.DTYPES[args["Input type"][0]]
            x, t = (torch.randn(args["Input Dims"][i], dtype=dt) for i in (0, 1))
            got, ok = launches("mse_loss", (x, t, 1), torch.zeros((), dtype=dt))
            self.assertTrue(ok)
            self.check(real, got)
        # The outer aten::mse_loss_backward (zeros_like + the _out kernel); the inner one, with
        # grad_input given, launches only the kernel.
        bwd = real_op_kernels(path, "aten::mse_loss_backward")
        outer = [(a, r) for a, r in bwd if len(a["Input Dims"]) == 4]
        inner = [(a, r) for a, r in bwd if len(a["Input Dims"]) == 5]
        self.assertTrue(outer and inner)
        for (args, real), overload in ((outer[0], "default"), (inner[0], "grad_input")):
            dt = self.DTYPES[args["Input type"][1]]
            x, t = (torch.randn(args["Input Dims"][i], dtype=dt) for i in (1, 2))
            g = torch.tensor(1.0, dtype=dt)
            got, ok = launches("mse_loss_backward", (g, x, t, int(args["Concrete Inputs"][3])), torch.zeros_like(x),
                               overload=overload)
            self.assertTrue(ok)
            self.check(real, got)
        # Other reductions: none = the loss kernel alone; sum = a sum reduction.
        x = torch.randn(4, 8)
        got, _ = launches("mse_loss", (x, x, 0), x)
        self.assertEqual([k.short for k in got], ["vectorized_elementwise_kernel"])
        got, _ = launches("mse_loss", (x, x, 2), x.sum())
        self.assertIn("sum_functor", got[1].demangled)

    def test_max_pool2d_forward_and_backward_as_on_a_real_gpu(self):
        path = os.path.join(self.DATA, "kineto_v100_resnet50_2021_callstack.json.gz")
        for op, name in (("max_pool2d_with_indices", "aten::max_pool2d_with_indices"),
                         ("max_pool2d_with_indices_backward", "aten::max_pool2d_with_indices_backward")):
            real = real_op_kernels(path, name)
            self.assertTrue(real)
            args, kernels = real[0]
            dims = args["Input Dims"]
            if op == "max_pool2d_with_indices":
                x = torch.randn(dims[0])
                y, idx = torch.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)
                got, ok = launches(op, (x, [3, 3], [2, 2], [1, 1]), (y, idx))
            else:
                g, x = torch.randn(dims[0]), torch.randn(dims[1])
                got, ok = launches(op, (g, x, [3, 3], [2, 2], [1, 1], [1, 1], False,
                                        torch.zeros(dims[7], dtype=torch.long)), torch.zeros_like(x))
            self.assertTrue(ok)
            self.check(kernels, got)

    def test_adaptive_avg_pool2d_as_on_a_real_gpu(self):
        # AlexNet's 6x6 adaptive pooling (A100; the trace has no shapes: those of AlexNet).
        real = real_op_kernels(os.path.join(self.DATA, "hta_a100_alexnet_small.json.gz"), "aten::_adaptive_avg_pool2d")
        self.assertTrue(real)
        x = torch.randn(2, 256, 13, 13)
        got, ok = launches("_adaptive_avg_pool2d", (x, [6, 6]), torch.nn.functional.adaptive_avg_pool2d(x, 6))
        self.assertTrue(ok)
        self.check(real[0][1], got)


class RnnCellTest(unittest.TestCase):
    """The fused cell ops (cuda/RNN.cu): kernel template arguments <scalar_t, accscalar_t,
    index_type, indexing_kind>, launch config (getApplyBlock 512 threads, at most 4 blocks per SM)
    and the bias sums of backward."""

    def test_fused_cell_kernels(self):
        ig, cx = torch.randn(4, 64), torch.randn(4, 16)
        (fwd,), ok = launches("_thnn_fused_lstm_cell", (ig, ig, cx, None, None), (cx, cx, ig))
        self.assertTrue(ok)
        self.assertTrue(fwd.demangled.startswith(
            "void at::native::(anonymous namespace)::kernel::lstm_cell_forward<float, float, int, 1>("
            "at::cuda::detail::TensorInfo<float, int>, "), fwd.demangled)
        self.assertEqual(fwd.demangled.count("TensorInfo"), 8)
        self.assertEqual((fwd.grid, fwd.block), ((1, 1, 1), (512, 1, 1)))
        strided = torch.randn(16, 4).t()
        (fwd,), _ = launches("_thnn_fused_lstm_cell", (ig, ig, strided, None, None), (cx, cx, ig))
        self.assertIn("<float, float, int, 2>", fwd.demangled)
        bwd, _ = launches("_thnn_fused_lstm_cell_backward_impl", (cx, None, cx, cx, ig, True), (ig, cx, ig[0]))
        self.assertEqual([k.short for k in bwd], ["lstm_cell_backward", "reduce_kernel"])
        bwd, _ = launches("_thnn_fused_lstm_cell_backward_impl", (cx, None, cx, cx, ig, False), (ig, cx))
        self.assertEqual([k.short for k in bwd], ["lstm_cell_backward"])
        h = torch.randn(8192, 1024).half()
        (g,), _ = launches("_thnn_fused_gru_cell", (torch.empty(8192, 3072).half(),) * 2 + (h, None, None),
                           (h, torch.empty(8192, 5120).half()))
        self.assertIn("gru_cell_forward<c10::Half, float, int, 1>", g.demangled)
        self.assertEqual(g.grid[0], 132 * 4)  # capped at 4 blocks per SM
        bwd, _ = launches("_thnn_fused_gru_cell_backward", (h, torch.empty(8192, 5120).half(), True), (h,) * 5)
        self.assertEqual([k.short for k in bwd], ["gru_cell_backward", "reduce_kernel", "reduce_kernel"])


class LossAndPaddingTest(unittest.TestCase):
    """Launch counts per op from ATen's CUDA code (Loss.cpp, cuda/Loss.cu, PadNd.cpp)."""

    def test_other_losses_padding(self):
        # Counts per op from ATen's CUDA code (Loss.cpp / cuda/Loss.cu / PadNd.cpp).
        x, t = torch.rand(4, 8), torch.rand(4, 8)
        for name in ("smooth_l1_loss", "huber_loss"):
            got, ok = launches(name, (x, t, 1, 1.0), torch.zeros(()))
            self.assertTrue(ok)
            self.assertEqual([k.short for k in got], ["vectorized_elementwise_kernel", "reduce_kernel"])
            self.assertIn(name.replace("_loss", "") + "_kernel_cuda", got[0].demangled)
            got, _ = launches(name + "_backward", (torch.tensor(1.0), x, t, 1, 1.0), x)
            self.assertEqual([k.short for k in got], ["vectorized_elementwise_kernel", "elementwise_kernel"])
        got, ok = launches("binary_cross_entropy", (x, t, None, 1), torch.zeros(()))
        self.assertEqual([k.kind for k in got], ["kernel", "kernel", "memcpy"])  # loss, mean, copy into loss
        got, _ = launches("binary_cross_entropy_backward", (torch.tensor(1.0), x, t, x, 1), x)
        self.assertEqual(len(got), 3)  # gradient, mul_(weight), div_(numel)
        got, ok = launches("constant_pad_nd", (x, [1, 1]), torch.zeros(4, 10))
        self.assertTrue(ok)
        self.assertEqual([k.short for k in got], ["vectorized_elementwise_kernel", "elementwise_kernel"])

    def test_bce_with_logits_is_its_composite(self):
        # Loss.cpp: log_sigmoid, rsub, mul_, sub_, mean; with pos_weight 4 more; backward sigmoid,
        # sub, mul_(grad) (strided: grad is a broadcast scalar), div_ for the mean.
        x, t = torch.randn(4, 8), torch.rand(4, 8)
        got, ok = launches("binary_cross_entropy_with_logits", (x, t, None, None, 1), torch.zeros(()))
        self.assertTrue(ok)
        self.assertEqual(len(got), 5)
        self.assertEqual(got[-1].short, "reduce_kernel")
        got, _ = launches("binary_cross_entropy_with_logits", (x, t, None, torch.ones(8), 1), torch.zeros(()))
        self.assertEqual(len(got), 9)
        got, ok = launches("binary_cross_entropy_with_logits_backward", (torch.tensor(1.0), x, t, None, None, 1), x)
        self.assertTrue(ok)
        self.assertEqual([k.short for k in got], ["vectorized_elementwise_kernel", "vectorized_elementwise_kernel",
                                                  "elementwise_kernel", "vectorized_elementwise_kernel"])

    def test_avg_pool2d(self):
        # cuda/AveragePool2d.cu: one kernel forward, one backward (every input gradient written).
        x = torch.randn(2, 4, 8, 8)
        y = torch.nn.functional.avg_pool2d(x, 2)
        (f,), ok = launches("avg_pool2d", (x, [2, 2]), y)
        self.assertTrue(ok)
        self.assertIn("avg_pool2d_out_cuda_frame<float, float>(", f.demangled)
        (b,), ok = launches("avg_pool2d_backward", (y, x, [2, 2]), x)
        self.assertIn("avg_pool2d_backward_out_cuda_frame<float, float, int>(", b.demangled)
        xl = x.to(memory_format=torch.channels_last)
        (f,), _ = launches("avg_pool2d", (xl, [2, 2]), y)
        self.assertEqual(f.short, "avg_pool2d_out_cuda_frame_nhwc")
