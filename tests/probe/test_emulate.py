"""The emulate backend end to end: kernels per kl: range, schema, threads, crashes, determinism."""

import collections
import json
import re
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from probe_support import ATTRIBUTION_SQL, DATA, PYTHON, make_workspace, query, run_probe, tmpdir

GEMM_PREFIX = "sm80_xmma_gemm_f32f32_f32f32_f32_"  # fp32 on H100: the FFMA kernels a real H100 ran


def run_emulate(test, name, entry, extra=(), gpu="h100"):
    tmp = tmpdir(test)
    ws, ov = make_workspace(tmp, name)
    out = os.path.join(tmp, "out.sqlite")
    status = os.path.join(tmp, "status.json")
    r = run_probe(["--backend", "emulate", "--gpu", gpu, "--overlay", ov, "--out", out, "--status", status]
                  + list(extra), entry, ws)
    with open(status) as f:
        doc = json.load(f)
    return r, out, doc, ws


def per_range(db):
    """{range text: Counter(kernel short name)} over all launches, and the launches outside."""
    ranges = collections.defaultdict(collections.Counter)
    for _, name, _, text in query(db, ATTRIBUTION_SQL):
        ranges[text][name] += 1
    return ranges


SEQ = re.compile(r"^(.*), seq = (\d+)$")


def backward_per_range(db):
    """Launches of the `pt_autograd_0` thread, followed by hand through emit_nvtx's ranges: the
    innermost backward-node range around the launch -> the last forward range with the same seq
    that started before it -> the innermost kl: range around that forward range on its thread.
    {kl: range text or None: Counter(kernel short name)}."""
    auto = query(db, """SELECT t.globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId
                        WHERE s.value = 'pt_autograd_0'""")
    if not auto:
        return {}
    tid = auto[0][0]
    nvtx = query(db, 'SELECT start, "end", text, globalTid FROM NVTX_EVENTS WHERE eventType = 59')
    nodes = [(a, b, t) for a, b, t, g in nvtx if g == tid and "Backward" in t]
    fwd = [(a, b, SEQ.match(t), g) for a, b, t, g in nvtx if g != tid and SEQ.match(t) and "Backward" not in t]
    kl = [(a, b, t, g) for a, b, t, g in nvtx if t.startswith("kl:")]
    out = collections.defaultdict(collections.Counter)
    launches = query(db, """SELECT r.start, r."end", s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r
                            JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
                            JOIN StringIds s ON s.id = k.shortName WHERE r.globalTid = ?""", (tid,))
    for start, end, name in launches:
        inside = [n for n in nodes if n[0] <= start and end <= n[1]]
        node = max(inside, key=lambda n: n[0]) if inside else None
        m = SEQ.match(node[2]) if node else None
        cands = [f for f in fwd if m and f[2].group(2) == m.group(2) and f[0] < node[0]]
        f = max(cands, key=lambda f: f[0]) if cands else None
        around = [k for k in kl if f and k[3] == f[3] and k[0] <= f[0] and f[1] <= k[1]]
        out[max(around, key=lambda k: k[0])[2] if around else None][name] += 1
    return out


class EmulateMlpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r, cls.db, cls.status, cls.ws = run_emulate(cls, "mlp", ["python", "train.py", "--steps", "2"])

    @classmethod
    def addCleanup(cls, fn, *a):  # tmpdir() from a classmethod: clean at class teardown
        cls._cleanups_cls = getattr(cls, "_cleanups_cls", []) + [(fn, a)]

    @classmethod
    def tearDownClass(cls):
        for fn, a in getattr(cls, "_cleanups_cls", []):
            fn(*a)

    def test_runs_and_reports(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertIn("final loss", self.r.stdout)
        self.assertEqual(self.status["outputs"], [self.db])
        self.assertEqual(self.status["summary"]["unmodelled_ops"], {})
        self.assertEqual(self.status["summary"]["emulator_errors"], 0)

    def test_gemms_elementwise_optimizer_in_the_right_ranges(self):
        rs = per_range(self.db)
        steps = 2
        # Each Linear forward: exactly one GEMM per invocation ("tn": weight is a transposed view).
        for line in ("kl:mlpmod/model.py:12-12", "kl:mlpmod/model.py:14-14"):
            self.assertEqual(sum(rs[line].values()), steps, (line, rs[line]))
            (name, n), = rs[line].items()
            self.assertTrue(name.startswith(GEMM_PREFIX + "tn_n_"), name)
        # Activation: one elementwise kernel.
        self.assertEqual(rs["kl:mlpmod/model.py:13-13"], collections.Counter({"vectorized_elementwise_kernel": steps}))
        # Backward: launched from the emulated autograd device thread (as CUDA PyTorch does), so no
        # kl: range of the thread that called backward() holds them.
        self.assertFalse([k for k in rs["kl:train.py:21-21"] if k.startswith(GEMM_PREFIX)], rs["kl:train.py:21-21"])
        # emit_nvtx's sequence ranges lead each one to the forward line that created its node:
        # 2 GEMMs per Linear, dgrad (nn) + wgrad (nt), on that Linear's line.
        bw = backward_per_range(self.db)
        for line in ("kl:mlpmod/model.py:12-12", "kl:mlpmod/model.py:14-14"):
            gemms = {k: v for k, v in bw[line].items() if k.startswith(GEMM_PREFIX)}
            self.assertEqual(sum(gemms.values()), 2 * steps, (line, bw[line]))
            self.assertEqual(sum(v for k, v in gemms.items() if "_nt_n_" in k), steps, (line, bw[line]))
        self.assertGreaterEqual(bw["kl:mlpmod/model.py:13-13"]["vectorized_elementwise_kernel"], steps)  # relu bwd
        self.assertEqual(bw["kl:train.py:20-20"]["softmax_warp_backward"], steps)
        self.assertEqual(bw["kl:train.py:20-20"]["nll_loss_backward_reduce_cuda_kernel_2d"], steps)
        self.assertFalse([k for k in bw.get(None, {}) if k.startswith(GEMM_PREFIX)], bw.get(None))
        # The engine's own work (bias grads reduced to the input's shape) has no forward op.
        self.assertEqual(bw[None]["reduce_kernel"], 2 * steps)
        # Optimizer: SGD(foreach=True) -> multi_tensor_apply_kernel only.
        self.assertEqual(set(rs["kl:train.py:22-22"]), {"multi_tensor_apply_kernel"})
        self.assertEqual(sum(rs["kl:train.py:22-22"].values()), steps)
        # Forward range of train.py holds the loss kernels, the model's kernels are in inner ranges.
        fwd = rs["kl:train.py:20-20"]
        self.assertEqual(fwd["softmax_warp_forward"], steps)
        self.assertEqual(fwd["nll_loss_forward_reduce_cuda_kernel_2d"], steps)
        self.assertFalse([k for k in fwd if k.startswith(GEMM_PREFIX)], fwd)
        # zero_grad(set_to_none=True) launches nothing.
        self.assertNotIn("kl:train.py:19-19", rs)

    def test_outside_ranges_only_setup_and_item(self):
        outside = per_range(self.db)[None]
        # model.to(device): 4 HtoD parameter copies; randn/randint with device=: 2 kernels;
        # loss.item(): 1 DtoH copy. Parameter init (CPU in a GPU program) launches nothing.
        # Plus every launch of the autograd thread (its own thread: no kl: range by rule 2).
        backward = sum(backward_per_range(self.db).values(), collections.Counter())
        self.assertEqual(outside - backward,
                         collections.Counter({"memcpy": 5, "distribution_elementwise_grid_stride_kernel": 2}))
        self.assertEqual(sum(outside.values()) - sum(backward.values()), 7)
        kinds = query(self.db, "SELECT copyKind, count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1 ORDER BY 1")
        self.assertEqual(kinds, [(1, 4), (2, 1)])

    def test_launch_rows_and_stream(self):
        rows = query(self.db, """SELECT r.start, r."end", k.start, k."end", s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
                                 JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
                                 JOIN StringIds s ON s.id = r.nameId ORDER BY k.start""")
        self.assertTrue(rows)
        prev_end = 0
        for rs, re_, ks, ke, api in rows:
            self.assertEqual(api, "cudaLaunchKernel_v7000")
            self.assertLess(rs, re_)
            self.assertGreaterEqual(ks, re_ + 3000)       # queue latency after the launch call
            self.assertGreaterEqual(ks, prev_end)          # one in-order stream
            self.assertGreaterEqual(ke - ks, 2000)         # duration floor
            prev_end = ke
        n_corr = query(self.db, "SELECT count(DISTINCT correlationId), count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME")[0]
        self.assertEqual(n_corr[0], n_corr[1])
        streams = query(self.db, "SELECT DISTINCT streamId, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")
        self.assertEqual(streams, [(7, 0)])

    def test_global_ids_and_metadata(self):
        pid, = query(self.db, "SELECT pid FROM PROCESSES")[0]
        gpid, = query(self.db, "SELECT globalPid FROM PROCESSES")[0]
        self.assertEqual(gpid, (1 << 48) | (pid << 24))
        for (gtid,) in query(self.db, "SELECT DISTINCT globalTid FROM NVTX_EVENTS"):
            self.assertEqual(gtid & ~0xFFFFFF, gpid)
        self.assertEqual(query(self.db, "SELECT DISTINCT eventType, domainId FROM NVTX_EVENTS"), [(59, 0)])
        meta = dict(query(self.db, "SELECT name, value FROM META_DATA_EXPORT"))
        self.assertIn("emulated", meta["EXPORT_PRODUCT_VERSION"])
        self.assertEqual(meta["EXPORT_SCHEMA_VERSION"], "3.25.0")
        cap = dict(query(self.db, "SELECT name, value FROM META_DATA_CAPTURE"))
        self.assertEqual(cap["KERNLENS_EMULATED"], "1")
        self.assertEqual(cap["KERNLENS_STATUS"], "complete")
        gpu = query(self.db, "SELECT name, smCount, computeMajor FROM TARGET_INFO_GPU")
        self.assertEqual(gpu, [("NVIDIA H100 80GB HBM3 (emulated)", 132, 9)])

    def test_schema_matches_reference(self):
        ref = sqlite3.connect(":memory:")
        with open(os.path.join(DATA, "..", "fixtures", "nsys-schema.sql")) as f:
            ref.executescript(f.read())
        out = sqlite3.connect(self.db)
        tables = [t for (t,) in out.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        self.assertIn("CUPTI_ACTIVITY_KIND_KERNEL", tables)
        for t in tables:
            want = ref.execute("PRAGMA table_info(%s)" % t).fetchall()
            got = out.execute("PRAGMA table_info(%s)" % t).fetchall()
            self.assertTrue(want, "table %s is not in the reference schema" % t)
            self.assertEqual([c[1:] for c in got], [c[1:] for c in want], t)
        ref.close()
        out.close()


class EmulateMoreTest(unittest.TestCase):
    def test_deterministic_kernels_and_durations(self):
        seqs = []
        for _ in range(2):
            r, db, _, _ = run_emulate(self, "mlp", ["python", "train.py", "--steps", "1"])
            self.assertEqual(r.returncode, 0, r.stderr)
            seqs.append(query(db, """SELECT s.value, k."end" - k.start, k.gridX, k.gridY, k.correlationId
                                     FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
                                     ORDER BY k.correlationId"""))
        self.assertTrue(seqs[0])
        self.assertEqual(seqs[0], seqs[1])

    def test_gpu_models_change_durations(self):
        totals = {}
        for gpu in ("a100", "h200"):
            r, db, _, _ = run_emulate(self, "mlp", ["python", "train.py", "--steps", "1"], gpu=gpu)
            self.assertEqual(r.returncode, 0, r.stderr)
            totals[gpu] = query(db, 'SELECT sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL')[0][0]
            names = [n for (n,) in query(db, "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")]
            if gpu == "a100":
                self.assertTrue(any(n.startswith("ampere_sgemm_") for n in names), names)
        self.assertGreater(totals["a100"], totals["h200"])

    def test_two_threads_get_their_own_global_tids(self):
        r, db, status, _ = run_emulate(self, "threads", ["python", "threads_sample.py"])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = query(db, ATTRIBUTION_SQL)
        by_range = collections.defaultdict(set)
        counts = collections.Counter()
        for _, name, gtid, text in rows:
            by_range[text].add(gtid)
            counts[(text, name.startswith(GEMM_PREFIX))] += 1
        worker = by_range["kl:threads_sample.py:10-10"]
        main = by_range["kl:threads_sample.py:19-19"]
        self.assertEqual(len(worker), 1)
        self.assertEqual(len(main), 1)
        self.assertNotEqual(worker, main)
        self.assertEqual(counts[("kl:threads_sample.py:10-10", True)], 3)   # 3 GEMMs on the worker
        self.assertEqual(counts[("kl:threads_sample.py:19-19", True)], 2)   # 2 GEMMs on main
        self.assertEqual(counts[("kl:threads_sample.py:19-19", False)], 2)  # 2 relu
        names = dict((g, n) for n, g in query(db, "SELECT s.value, t.globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"))
        self.assertEqual(names[next(iter(worker))], "kl-worker")
        nvtx_tids = {g for (g,) in query(db, "SELECT DISTINCT globalTid FROM NVTX_EVENTS")}
        self.assertEqual(nvtx_tids, worker | main)

    def test_crash_exits_nonzero_with_traceback_and_partial_export(self):
        r, db, status, ws = run_emulate(self, "mlp", ["python", "train.py", "--steps", "1", "--crash"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("Traceback (most recent call last):", r.stderr)
        self.assertIn('File "%s"' % os.path.join(ws, "train.py"), r.stderr)
        self.assertIn("ValueError: boom after training", r.stderr)
        self.assertEqual(status["exit_code"], 1)
        self.assertEqual(status["entry_error"], "ValueError: boom after training")
        self.assertEqual(status["outputs"], [db])
        cap = dict(query(db, "SELECT name, value FROM META_DATA_CAPTURE"))
        self.assertTrue(cap["KERNLENS_STATUS"].startswith("partial"), cap["KERNLENS_STATUS"])
        self.assertGreater(query(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0], 10)
        # The range the exception leaves is closed (PyTorch 2.x's nvtx.range pops in a finally;
        # one still open at the end would be closed at capture end) and still owns its kernel.
        stop = query(db, "SELECT stopTime FROM ANALYSIS_DETAILS")[0][0]
        (start, end), = query(db, "SELECT start, \"end\" FROM NVTX_EVENTS WHERE text = 'kl:train.py:24-25'")
        self.assertIsNotNone(end)
        self.assertLess(start, end)
        self.assertLessEqual(end, stop)
        self.assertEqual(per_range(db)["kl:train.py:24-25"], collections.Counter({"vectorized_elementwise_kernel": 1}))

    def test_export_error_is_one_line(self):
        tmp = tmpdir(self)
        ws, ov = make_workspace(tmp, "mlp")
        out = os.path.join(tmp, "missing-dir", "out.sqlite")
        r = run_probe(["--backend", "emulate", "--overlay", ov, "--out", out], ["python", "train.py"], ws)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "kernlens-probe: error: output directory does not exist: %s"
                         % os.path.dirname(out))

    def test_child_process_writes_its_own_export(self):
        tmp = tmpdir(self)
        ws, ov = make_workspace(tmp, "threads")
        with open(os.path.join(ws, "spawn.py"), "w") as f:
            f.write("import subprocess, sys\nsys.exit(subprocess.call([sys.executable, 'threads_sample.py']))\n")
        out = os.path.join(tmp, "out.sqlite")
        status = os.path.join(tmp, "status.json")
        r = run_probe(["--backend", "emulate", "--overlay", ov, "--out", out, "--status", status],
                      ["python", "spawn.py"], ws)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(status) as f:
            doc = json.load(f)
        self.assertEqual(len(doc["children"]), 1, doc)
        child = doc["children"][0]
        self.assertEqual(child["path"], os.path.join(tmp, "out.pid%d.sqlite" % child["pid"]))
        self.assertEqual(len(per_range(child["path"])["kl:threads_sample.py:10-10"]), 1)
        # The parent never imported torch: its export exists and holds no kernels.
        self.assertEqual(query(out, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), [(0,)])


if __name__ == "__main__":
    unittest.main()


LABEL_PROGRAM = r'''
import gc, sys, torch
labels = [line.rstrip("\n") for line in open(sys.argv[1], encoding="utf-8")]
for i, label in enumerate(labels):
    text = label + " #" + str(i)  # a new str object each time, freed after the range
    with torch.cuda.nvtx.range(text):
        torch.ones(64) * 2
    del text
    junk = ["z" * 48 + str(k) for k in range(2000)]  # reuse freed memory
    del junk
    gc.collect()
torch.cuda.nvtx.mark(labels[0] + " mark")
'''


class EmulateLabelsTest(unittest.TestCase):
    """The emulator writes NVTX range texts unchanged (an editor fixture once had garbled kl:
    labels: the bytes 16-32 of long labels overwritten, as by a freed buffer)."""

    def test_range_texts_round_trip_byte_for_byte(self):
        tmp = tmpdir(self)
        labels = ["kl:app.py:3-3:x = torch.ones(64) * 2  # a long label, longer than 32 bytes",
                  "kl:app.py:4-4:µs 火 'quotes' ? and UTF-8 after the first 16 bytes",
                  "plain range " + "r" * 100]
        with open(os.path.join(tmp, "app.py"), "w") as f:
            f.write(LABEL_PROGRAM)
        with open(os.path.join(tmp, "labels.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(labels) + "\n")
        out = os.path.join(tmp, "out.sqlite")
        r = run_probe(["--backend", "emulate", "--out", out], ["python3", "app.py", "labels.txt"], tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        want = sorted(l + " #" + str(i) for i, l in enumerate(labels))
        got = sorted(t for (t,) in query(out, "SELECT text FROM NVTX_EVENTS WHERE eventType = 59"))
        self.assertEqual(got, want)
        self.assertEqual(query(out, "SELECT text FROM NVTX_EVENTS WHERE eventType = 34"), [(labels[0] + " mark",)])



class EmulatedProgram:
    """Test mixin: runs PROGRAM (written as SCRIPT) once under the emulate backend and once plainly
    on the CPU; the lines starting "grads " must be the same (emulation does not change the
    program)."""
    PROGRAM = SCRIPT = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kl-probe-prog-")
        with open(os.path.join(cls.tmp, cls.SCRIPT), "w") as f:
            f.write(cls.PROGRAM)
        cls.db = os.path.join(cls.tmp, "out.sqlite")
        status = os.path.join(cls.tmp, "status.json")
        cls.r = run_probe(["--backend", "emulate", "--out", cls.db, "--status", status], ["python3", cls.SCRIPT], cls.tmp)
        with open(status) as f:
            cls.status = json.load(f)
        cls.plain = subprocess.run([PYTHON, cls.SCRIPT], cwd=cls.tmp, capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_the_program_computes_the_same_numbers(self):
        self.assertEqual(self.plain.returncode, 0, self.plain.stderr)
        grads = [l for l in self.r.stdout.splitlines() if l.startswith("grads ")]
        self.assertTrue(grads)
        self.assertEqual(grads, [l for l in self.plain.stdout.splitlines() if l.startswith("grads ")])


# The head of the test programs: `rng` opens a kl: range (NVTX exists under the probe; a plain
# CPU run of the same program has none), `d` is an explicit device (the emulated GPU).
PROGRAM_HEAD = r'''
import contextlib, torch, torch.nn as nn, torch.nn.functional as F
try:
    torch.cuda.nvtx.range_pop()
    rng = torch.cuda.nvtx.range
except RuntimeError:
    rng = lambda _: contextlib.nullcontext()
torch.manual_seed(0)
d = "cpu"
'''


RNN_PROGRAM = PROGRAM_HEAD + r'''
lstm = nn.LSTM(8, 16, num_layers=2, dropout=0.3).to(d)  # training: cuDNN drops out between the layers
gru = nn.GRU(8, 16, batch_first=True, bidirectional=True).to(d)
x = torch.randn(5, 3, 8).to(d)
for _ in range(2):
    y, _ = lstm(x)
    with rng("kl:rnn.py:10-10:gru"):
        z, _ = gru(x.transpose(0, 1))
    (y.sum() + z.sum()).backward()
with torch.no_grad():
    lstm(x)
print("grads %.6f %.6f" % (sum(p.grad.abs().sum().item() for p in lstm.parameters()),
                           sum(p.grad.abs().sum().item() for p in gru.parameters())))
'''


class EmulateCudnnRnnTest(EmulatedProgram, unittest.TestCase):
    """nn.LSTM/nn.GRU run as cuDNN RNN calls (aten::_cudnn_rnn): the cell kernels per time step,
    none of CPU PyTorch's per-step small ops; the backward kernels on pt_autograd_0 inside the
    node's emit_nvtx range, linked to the forward call; the program's numbers unchanged."""

    PROGRAM, SCRIPT = RNN_PROGRAM, "rnn.py"

    def kernels(self, where=""):
        return query(self.db, """SELECT s.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
                                 JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName """ + where)

    def test_cell_kernels_per_step_and_nothing_unmodelled(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertEqual(self.status["summary"]["unmodelled_ops"], {})
        cells = [d for s, d in self.kernels() if s == "elemWiseRNNcell"]
        # LSTM: 2 layers x 5 steps, 3 calls; GRU: 2 directions x 5 steps, 2 calls.
        self.assertEqual(sum("(cudnnRNNMode_t)2" in d for d in cells), 30)
        self.assertEqual(sum("(cudnnRNNMode_t)3" in d for d in cells), 20)
        shorts = collections.Counter(s for s, _ in self.kernels())
        self.assertEqual(shorts["LSTM_elementWise_bp1"], 20)
        self.assertEqual(shorts["GRU_elementWise_bp1"], 20)
        # Dropout between the LSTM's 2 layers, in training mode (the no_grad call too): the state
        # initialised once per process, one kernel per forward call and per backward. Bias
        # gradients: one kernel per layer and direction per backward (as in cuDNN's real profiles).
        self.assertEqual((shorts["initstates"], shorts["RNN_dropout_fp"], shorts["RNN_dropout_bp"]), (1, 3, 2))
        self.assertEqual(shorts["GENERIC_elementWise_bp2"], 2 * 2 + 2 * 2)
        # CPU PyTorch's decomposition (per-step sigmoid/tanh/mul...) launches nothing.
        self.assertFalse([d for _, d in self.kernels() if "igmoid" in d or "anh" in d])

    def test_gru_forward_kernels_in_its_range_backward_linked_to_it(self):
        fwd = per_range(self.db)["kl:rnn.py:10-10:gru"]
        self.assertEqual(fwd["elemWiseRNNcell"], 20)
        self.assertNotIn("GRU_elementWise_bp1", fwd)
        bwd = backward_per_range(self.db)
        self.assertEqual(bwd["kl:rnn.py:10-10:gru"]["GRU_elementWise_bp1"], 20)
        self.assertEqual(bwd[None]["LSTM_elementWise_bp1"], 20)  # the LSTM ran outside every kl: range
        nodes = query(self.db, "SELECT text FROM NVTX_EVENTS WHERE text LIKE 'CudnnRnnBackward, seq = %'")
        self.assertEqual(len(nodes), 4)
        calls = query(self.db, "SELECT text FROM NVTX_EVENTS WHERE text LIKE 'aten::_cudnn_rnn, seq = %'")
        self.assertEqual(len(calls), 4)  # the forward calls' ranges, named as emit_nvtx names them


FAST_PATH_PROGRAM = r'''
import warnings
import torch, torch.nn as nn
warnings.simplefilter("ignore")
torch.manual_seed(0)
d = "cpu"  # an explicit device: the emulated GPU
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2).to(d).eval()
mha = nn.MultiheadAttention(32, 4, batch_first=True).to(d).eval()
x = torch.randn(2, 8, 32).to(d)
pad = torch.zeros(2, 8, dtype=torch.bool)
pad[1, 6:] = True
pad = pad.to(d)
with torch.no_grad():
    enc(x)
    enc(x, src_key_padding_mask=pad)
    mha(x, x, x, need_weights=False)
'''


class EmulateFastPathTest(unittest.TestCase):
    """Inference under torch.no_grad: nn.TransformerEncoder and nn.MultiheadAttention take the
    fused fast paths CUDA PyTorch takes (the emulator's own TorchFunctionMode must not turn them
    off), and every op on them is modelled."""

    def test_fused_paths_are_taken_and_modelled(self):
        tmp = tmpdir(self)
        with open(os.path.join(tmp, "fast.py"), "w") as f:
            f.write(FAST_PATH_PROGRAM)
        db, status = os.path.join(tmp, "out.sqlite"), os.path.join(tmp, "status.json")
        r = run_probe(["--backend", "emulate", "--out", db, "--status", status], ["python3", "fast.py"], tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(status) as f:
            self.assertEqual(json.load(f)["summary"]["unmodelled_ops"], {})
        shorts = collections.Counter(s for (s,) in query(db, """SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
                                                               JOIN StringIds s ON s.id = k.shortName"""))
        # 2 layers x 2 encoder calls + 1 MultiheadAttention call, each one fused attention.
        self.assertEqual(shorts["transform_bias_rescale_qkv_kernel"], 5)
        self.assertEqual(shorts["remove_padding_kernel"], 1)   # the padded batch becomes nested
        self.assertEqual(shorts["add_padding_2"], 1)           # and padded again at the end
        self.assertNotIn("does not model", r.stderr)


CELL_PROGRAM = PROGRAM_HEAD + r'''
lc, gc = nn.LSTMCell(8, 16).to(d), nn.GRUCell(8, 16, bias=True).to(d)
x = torch.randn(5, 3, 8).to(d)
h, c, g = torch.zeros(3, 16).to(d), torch.zeros(3, 16).to(d), torch.zeros(3, 16).to(d)
for t in range(5):
    with rng("kl:cell.py:14-14:lstm"):
        h, c = lc(x[t], (h, c))
    with rng("kl:cell.py:16-16:gru"):
        g = gc(x[t], g)
with rng("kl:cell.py:18-18:loss"):
    loss = F.mse_loss(h, g)
loss.backward()
print("grads %.5f %.5f" % (sum(p.grad.abs().sum().item() for p in lc.parameters()),
                           sum(p.grad.abs().sum().item() for p in gc.parameters())))
try:  # the fused op itself, which CPU PyTorch has no kernel for
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(torch.randn(3, 64).to(d), torch.randn(3, 64).to(d), c.detach())
    print("fused", tuple(ws.shape))
except NotImplementedError:
    pass
'''


class EmulateRnnCellTest(EmulatedProgram, unittest.TestCase):
    """nn.LSTMCell / nn.GRUCell as CUDA PyTorch runs them (RNN.cpp's GPU branch, cuda/RNN.cu): per
    call two gate GEMMs and ONE fused cell kernel, none of CPU PyTorch's per-gate ops; in backward
    one fused backward kernel and the bias-gradient sums (one for the LSTM, two for the GRU) on
    pt_autograd_0, linked to the call's line; F.mse_loss forward and backward modelled; the
    program's gradients those of a plain CPU run."""

    PROGRAM, SCRIPT = CELL_PROGRAM, "cell.py"

    def test_forward_two_gemms_and_one_fused_kernel_per_call(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        self.assertEqual(self.status["summary"]["unmodelled_ops"], {})
        ranges = per_range(self.db)
        for cell, text in (("lstm", "kl:cell.py:14-14:lstm"), ("gru", "kl:cell.py:16-16:gru")):
            fwd = ranges[text]
            gemms = sum(n for k, n in fwd.items() if k.startswith(GEMM_PREFIX + "tn_"))
            self.assertEqual((gemms, fwd["%s_cell_forward" % cell]), (10, 5), fwd)
            self.assertEqual(sum(fwd.values()), 15, fwd)  # nothing else: no per-gate sigmoid/tanh/mul
        loss = ranges["kl:cell.py:18-18:loss"]
        self.assertEqual(sum(loss.values()), 2, loss)  # the mse kernel and its mean reduction
        names = [d for (d,) in query(self.db, """SELECT d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
                                                  JOIN StringIds d ON d.id = k.demangledName""")]
        self.assertEqual(sum("kernel::lstm_cell_forward<float, float, int, 1>(" in n for n in names), 6)
        self.assertIn("fused (3, 64)", self.r.stdout)  # torch.ops.aten._thnn_fused_lstm_cell ran
        self.assertFalse([n for n in names if "igmoid" in n or "anh" in n])

    def test_backward_fused_kernels_and_bias_sums_linked_to_the_call(self):
        bwd = backward_per_range(self.db)
        lstm, gru = bwd["kl:cell.py:14-14:lstm"], bwd["kl:cell.py:16-16:gru"]
        self.assertEqual(lstm["lstm_cell_backward"], 5)
        self.assertEqual(gru["gru_cell_backward"], 5)
        self.assertEqual(lstm["reduce_kernel"], 5)    # grad_gates.sum(0), for both biases
        self.assertEqual(gru["reduce_kernel"], 10)    # input- and hidden-gate sums
        # wgrad GEMMs of both matmuls per call; dgrad of the hidden-state matmul after step 0.
        for k in (lstm, gru):
            self.assertEqual(sum(n for name, n in k.items() if "_nt_n_" in name), 10, k)
            self.assertEqual(sum(n for name, n in k.items() if "_nn_n_" in name), 4, k)
        nodes = query(self.db, "SELECT text FROM NVTX_EVENTS WHERE text LIKE 'ThnnFusedLstmCellBackward0, seq = %'")
        self.assertEqual(len(nodes), 5)
        mse = bwd["kl:cell.py:18-18:loss"]
        # mse_loss_backward for the input and for the target (both require grad): fill + strided kernel each.
        self.assertEqual((mse["vectorized_elementwise_kernel"], mse["elementwise_kernel"]), (2, 2), mse)


AUTOCAST_PROGRAM = PROGRAM_HEAD + r'''
import warnings
lin = nn.Linear(256, 256).to(d)
x = torch.randn(64, 256).to(d)
with rng("kl:ac.py:1-1:fp32"):
    y0 = lin(x)
with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
    with rng("kl:ac.py:2-2:bf16"):
        y1 = lin(x)
        y2 = lin(y1)
    with torch.autocast(device_type="cuda", enabled=False):
        with rng("kl:ac.py:3-3:off"):
            y3 = lin(x)
(y0.sum() + y2.sum() + y3.sum()).backward()
print("grads %.6f" % lin.weight.grad.abs().sum().item())
'''


class EmulateCudaAutocastTest(EmulatedProgram, unittest.TestCase):
    """torch.autocast("cuda", bfloat16) on a CPU-only machine disables itself (the program computes
    in fp32, with torch's own warning on the user's line); the emulator launches what a GPU runs
    in the region: the GEMMs as cuBLASLt bf16 kernels (nvjet_* on H100, the family real H100
    traces name) after a cast kernel per fp32 input, the weight cast once per region (autocast's
    cache); outside the region and under autocast(enabled=False) fp32 GEMMs without casts."""
    SCRIPT = "ac.py"
    PROGRAM = AUTOCAST_PROGRAM

    def kernels_in(self, text):
        return query(self.db, """SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
            JOIN StringIds s ON s.id = k.shortName JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
            JOIN NVTX_EVENTS n ON n.text = ? AND r.start >= n.start AND r."end" <= n."end" AND r.globalTid = n.globalTid
            ORDER BY k.start""", (text,))

    def test_bf16_region_runs_nvjet_gemms_after_casts(self):
        names = [n for (n,) in self.kernels_in("kl:ac.py:2-2:bf16")]
        gemms = [n for n in names if "gemm" in n or n.startswith("nvjet")]
        self.assertEqual(len(gemms), 2, names)
        self.assertTrue(all(n.startswith("nvjet_tst_") for n in gemms), gemms)
        casts = [n for n in names if "elementwise" in n]
        # lin(x): x, the weight and the bias cast; lin(y1): nothing -- y1 is bf16 on the GPU (fp32
        # only in the CPU run), the weight and bias come from autocast's cache.
        self.assertEqual(len(casts), 3, names)
        self.assertTrue(names.index(gemms[0]) == 3 and names[-1] == gemms[1], names)

    def test_outside_and_disabled_regions_run_fp32_gemms(self):
        for text in ("kl:ac.py:1-1:fp32", "kl:ac.py:3-3:off"):
            names = [n for (n,) in self.kernels_in(text)]
            self.assertEqual(len(names), 1, (text, names))
            self.assertTrue(names[0].startswith("sm80_xmma_gemm_f32f32"), (text, names))

    def test_the_warning_is_the_programs_own(self):
        want = [l for l in self.plain.stderr.splitlines() if "Disabling autocast" in l]
        got = [l for l in self.r.stderr.splitlines() if "Disabling autocast" in l]
        self.assertEqual(len(want), 1, self.plain.stderr)  # enabled=False does not warn
        self.assertEqual(got, want)


# A training step whose clocks behave as on a busy machine. The probe maps the legacy profiler's
# backward-node records (CLOCK_REALTIME) onto the launches' timeline (CLOCK_MONOTONIC) through an
# offset of the two clocks; a thread preempted between the reads of that offset made it wrong by
# the preemption (milliseconds), every node range moved away from its launches, and the backward
# GEMMs fell back to "backward work of no forward line". BUSY = "late" makes every realtime read
# come 2 ms after the monotonic read before it (a real sleep: the worst such interleaving, always).
BUSY_CLOCK_PROGRAM = PROGRAM_HEAD + r'''
import os, time
if os.environ.get("BUSY") == "late":
    _realtime = time.time_ns
    def _late_realtime():
        time.sleep(0.002)
        return _realtime()
    time.time_ns = _late_realtime
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(d)
x = torch.randn(8, 16).to(d)
for _ in range(2):
    with rng("kl:busy.py:19-19"):
        h = model[0](x)
    with rng("kl:busy.py:21-21"):
        y = model[2](model[1](h))
    y.sum().backward()
print("grads %.6f" % sum(p.grad.abs().sum().item() for p in model.parameters()))
'''


class EmulateBusyClockTest(unittest.TestCase):
    """Backward kernels reach the same forward lines whether or not the machine delays the clock
    reads: the run with every realtime read 2 ms late links exactly what the quiet run links."""

    def run_program(self, busy):
        tmp = tmpdir(self)
        with open(os.path.join(tmp, "busy.py"), "w") as f:
            f.write(BUSY_CLOCK_PROGRAM)
        db = os.path.join(tmp, "out.sqlite")
        r = run_probe(["--backend", "emulate", "--out", db], ["python3", "busy.py"], tmp, env={"BUSY": busy})
        self.assertEqual(r.returncode, 0, r.stderr)
        return db, r.stdout

    def test_delayed_clock_reads_link_the_same_backward_kernels(self):
        quiet_db, quiet_out = self.run_program("")
        busy_db, busy_out = self.run_program("late")
        self.assertEqual(quiet_out, busy_out)
        quiet, busy = backward_per_range(quiet_db), backward_per_range(busy_db)
        # 2 steps x (dgrad + wgrad) GEMMs per Linear; model[0]'s dgrad is not needed (x needs no grad).
        gemms = lambda c: sum(v for k, v in c.items() if k.startswith(GEMM_PREFIX))
        self.assertEqual(gemms(quiet["kl:busy.py:19-19"]), 2, quiet)
        self.assertEqual(gemms(quiet["kl:busy.py:21-21"]), 4, quiet)
        self.assertFalse(gemms(quiet.get(None, collections.Counter())), quiet)
        self.assertEqual(busy, quiet)
