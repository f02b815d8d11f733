"""call_discovery on a program that hides its calls the ways real code does (in-process, no torch):
functools.partial, a library decorator (functools.lru_cache), a workspace decorator, __call__, a
factory, super(), a lambda, a comprehension, a callback, a thread. Each callee must be recorded
with the innermost WORKSPACE line that called it."""

import os
import tempfile
import textwrap
import threading
import unittest

import probe_support  # noqa: F401  (puts the probe on sys.path)

from kernlens_probe import call_discovery

PROGRAM = textwrap.dedent('''\
    import functools
    import threading

    def leaf(x):
        return x + 1

    def deco(f):
        def wrapper(*a):
            return f(*a)
        return wrapper

    @deco
    def decorated(x):
        return leaf(x)

    @functools.lru_cache(maxsize=None)
    def cached(x):
        return leaf(x)

    class Base:
        def run(self, x):
            return leaf(x)

    class Child(Base):
        def run(self, x):
            return super().run(x)

        def __call__(self, x):
            return self.run(x)

    def make():
        return Child()

    def apply(cb, x):
        return cb(x)

    def main():
        p = functools.partial(leaf, 1)
        p()
        decorated(2)
        cached(3)
        m = make()
        m(4)
        f = lambda x: leaf(x)
        f(5)
        [leaf(i) for i in range(2)]
        apply(leaf, 6)
        t = threading.Thread(target=leaf, args=(7,))
        t.start(); t.join()
    ''')


def parse(path):
    codes, edges, roots = {}, set(), set()
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "code":
            codes[f[1]] = (f[4], int(f[3]))
        elif f[0] == "edge":
            edges.add((codes[f[1]][0], int(f[2]), codes[f[3]][0]))
        elif f[0] == "root":
            roots.add(codes[f[1]][0])
    return codes, edges, roots


class CallDiscoveryTest(unittest.TestCase):
    def test_hidden_calls_recorded_from_their_workspace_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "prog.py")
            with open(path, "w") as f:
                f.write(PROGRAM)
            out = os.path.join(tmp, "calls.tsv")
            ns = {"__name__": "prog"}
            code = compile(PROGRAM, path, "exec")
            call_discovery.install(tmp, out)
            try:
                exec(code, ns)
                ns["main"]()
            finally:
                self.assertIsNone(call_discovery.finish())
            codes, edges, roots = parse(out)
            line = {text.strip(): i + 1 for i, text in enumerate(PROGRAM.splitlines())}
            want = [
                ("main", line["p()"], "leaf"),                          # functools.partial
                ("main", line["decorated(2)"], "deco.<locals>.wrapper"),  # workspace decorator
                ("deco.<locals>.wrapper", line["return f(*a)"], "decorated"),
                ("main", line["cached(3)"], "cached"),                  # library decorator skipped
                ("main", line["m = make()"], "make"),                   # factory
                ("main", line["m(4)"], "Child.__call__"),               # __call__
                ("Child.run", line["return super().run(x)"], "Base.run"),  # super()
                ("main", line["f(5)"], "main.<locals>.<lambda>"),       # lambda (named, looked through later)
                ("main", line["[leaf(i) for i in range(2)]"], "leaf"),  # comprehension is transparent
                ("apply", line["return cb(x)"], "leaf"),                # callback
            ]
            for e in want:
                self.assertIn(e, edges, "missing edge %s -> %s from line %d" % (e[0], e[2], e[1]))
            self.assertIn("leaf", roots)  # the thread's target: no workspace frame above it
            self.assertNotIn("<listcomp>", {q for q, _ in codes.values()})
            hits = {}
            for raw in open(out):
                f = raw.rstrip("\n").split("\t")
                if f[0] == "line" and codes[f[1]][0] == "leaf":
                    hits[int(f[2])] = int(f[3])
            self.assertGreaterEqual(hits.get(line["return x + 1"], 0), 9)
            self.assertIn("backward\t0\n", open(out).read().splitlines(keepends=True))

    def test_backward_passes_counted(self):
        import torch
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "calls.tsv")
            call_discovery.install(tmp, out)
            try:
                x = torch.randn(3, requires_grad=True)
                (x * 2).sum().backward()
                torch.autograd.grad((x * x).sum(), x)
            finally:
                self.assertIsNone(call_discovery.finish())
            self.assertIn("backward\t2\n", open(out).read().splitlines(keepends=True))


if __name__ == "__main__":
    unittest.main()
