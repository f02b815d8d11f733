#!/usr/bin/env python3
"""`kernlens mcp` driven by the official MCP Python SDK (`mcp`, pinned in requirements/dev.in).

Usage: mcp_client.py KERNLENS WORKSPACE SOURCE_DIR
WORKSPACE holds a copy of samples/mlp, slow.py (a program that runs for minutes), the real exports
under profiles/ and a bert/ tree for the Kineto trace's Python stacks (made by mcp_python_sdk.sh).

Checks: initialize, every tool's input/output schemas, profile on samples/mlp (emulate) against
samples/mlp/expected_lines.txt with progress notifications, where_from / line_costs / explain_line
from the stored run and from a real trace, the analyses on real exports equal to the CLI's
`--format json` (one producer, one schema tag), the store's runs as resources, a cancelled long run
that leaves no process, and malformed requests (JSON-RPC errors naming the field; the server goes
on). Exits non-zero with the first failure.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

KERNLENS, WS, SRC = sys.argv[1], sys.argv[2], sys.argv[3]
TOOLS = {
    "profile": "kernlens/profile@1",
    "where_from": "kernlens/lines@1",
    "line_costs": "kernlens/lines@1",
    "explain_line": "kernlens/lines@1",
    "summary": "kernlens/summary@1",
    "diagnose": "kernlens/diagnose@1",
    "diff": "kernlens/diff@1",
    "sync": "kernlens/sync@1",
    "nccl": "kernlens/nccl@1",
}
ALEXNET = "profiles/hta_a100_alexnet_small.json.gz"
TRITON = "profiles/hta_a100_triton_tiny.json.gz"
NCCL = "profiles/hta_a100_nccl_2ranks_rank0.json.gz"
BERT = "profiles/tracelens_h100_bert_small_infer.json.gz"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def processes(marker):
    """Pids whose command line contains `marker` (this process excluded)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            out.append((int(pid), cmd))
    return out


def cli_json(*args):
    r = subprocess.run([KERNLENS, *args, "--format", "json"], cwd=WS, capture_output=True, text=True)
    check(r.returncode == 0, f"kernlens {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


async def call(session, name, args, **kw):
    r = await session.call_tool(name, args, **kw)
    check(not r.is_error, f"{name} {args}: isError: {r.content[0].text if r.content else ''}")
    doc = r.structured_content
    check(doc["schema"] == TOOLS[name], f"{name}: schema {doc.get('schema')}")
    check(json.loads(r.content[0].text) == doc, f"{name}: the text content is not the structured content")
    return doc


async def expect_error(session, name, args, field):
    try:
        await session.call_tool(name, args)
    except MCPError as e:
        check(e.code == -32602, f"{name} {args}: code {e.code} ({e.message})")
        check(field in e.message and "\n" not in e.message, f"{name} {args}: message does not name {field}: {e.message}")
        return e.message
    raise AssertionError(f"{name} {args}: no JSON-RPC error")


async def schemas(session):
    tools = (await session.list_tools()).tools
    check({t.name for t in tools} == set(TOOLS), f"tools {sorted(t.name for t in tools)}")
    for t in tools:
        for s in (t.input_schema, t.output_schema):
            jsonschema.Draft202012Validator.check_schema(s)
        check(t.input_schema["type"] == "object" and t.input_schema.get("additionalProperties") is False,
              f"{t.name}: input schema must be a closed object")
        check(t.output_schema["properties"]["schema"]["const"] == TOOLS[t.name], f"{t.name}: output schema tag")
        check(t.description and t.title, f"{t.name}: no description")
    print(f"tools: {len(tools)} with valid input and output schemas")


async def profile_mlp(session):
    progress = []

    async def on_progress(p, total, message):
        progress.append(message)

    doc = await call(session, "profile", {"entry": "python3 mlp.py --steps 2", "focus": "mlp.py::MLP.forward",
                                           "backend": "emulate", "baseline": False}, progress_callback=on_progress)
    check(any(re.search(r"round \d+/\d+", m or "") for m in progress), f"progress {progress}")
    check(doc["emulated"] is True and doc["converged"], f"profile: {doc['stop_reason']}")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    r = subprocess.run([sys.executable, f"{SRC}/tests/e2e/planner_check.py", f.name,
                        f"{SRC}/samples/mlp/expected_lines.txt"], capture_output=True, text=True)
    os.unlink(f.name)
    check(r.returncode == 0, f"profile lines differ from samples/mlp/expected_lines.txt: {r.stdout}{r.stderr}")
    print(f"profile: {len(doc['lines'])} lines as expected, {len(progress)} progress notifications")


async def line_tools(session):
    doc = await call(session, "where_from", {"kernel": "gemm"})
    lines = {(l["file"], l["line"]) for l in doc["lines"]}
    check({("mlp.py", 20), ("mlp.py", 21), ("mlp.py", 22)} <= lines, f"where_from gemm: {sorted(lines)}")
    check(all(re.search("gemm", k["name"]) for l in doc["lines"] for k in l["kernels"]), "a kernel that does not match")
    check(doc["kernels_shown"]["launches"] == sum(k["launches"] for l in doc["lines"] for k in l["kernels"]), "totals")
    cli = cli_json("map", "--store", "--kernel", "gemm")
    check(cli == doc, "where_from differs from kernlens map --store --kernel gemm --format json")
    doc = await call(session, "line_costs", {"file": "mlp.py"})
    check(doc["lines"] and all(l["file"] == "mlp.py" for l in doc["lines"]), "line_costs")
    doc = await call(session, "explain_line", {"file": "mlp.py", "line": 21})
    check(len(doc["lines"]) == 1 and doc["lines"][0]["line"] == 21, f"explain_line: {doc['lines']}")
    names = [k["name"] for k in doc["lines"][0]["kernels"]]
    check(any("Gelu" in n for n in names) and doc["lines"][0]["text"].strip().startswith("h = F.gelu"), names)
    # From a given real trace (Kineto Python stacks): the lines of bert's modeling file.
    doc = await call(session, "where_from", {"kernel": ".", "profile": BERT})
    check(doc["source"] == "python-stacks" and doc["lines"], "where_from on the BERT trace found no line")
    check(all(l["file"].endswith("modeling_bert.py") for l in doc["lines"]), "bert lines")
    bert = doc["lines"][0]["file"]
    costs = await call(session, "line_costs", {"file": bert, "profile": BERT})
    check(len(costs["lines"]) == len(doc["lines"]), "line_costs on the BERT trace")
    one = await call(session, "explain_line", {"file": bert, "line": doc["lines"][0]["line"], "profile": BERT})
    check(len(one["lines"]) == 1 and one["lines"][0]["kernels"], f"explain_line on the BERT trace: {one['lines']}")
    print(f"where_from / line_costs / explain_line: stored run and real trace ({len(doc['lines'])} bert lines)")


async def analyses(session):
    for name, args, cli in [
        ("summary", {"profile": ALEXNET}, ["summary", ALEXNET]),
        ("diagnose", {"profile": ALEXNET}, ["diagnose", ALEXNET]),
        ("sync", {"profile": ALEXNET}, ["sync", ALEXNET]),
        ("nccl", {"profile": NCCL}, ["nccl", NCCL]),
        ("diff", {"a": ALEXNET, "b": TRITON}, ["diff", ALEXNET, TRITON, "--no-fail"]),
    ]:
        doc = await call(session, name, args)
        check(doc == cli_json(*cli), f"{name}: differs from kernlens {' '.join(cli)} --format json")
    doc = await call(session, "nccl", {"profile": NCCL, "top": 3})
    check(doc["nccl_ns"] > 0, "nccl: no NCCL time in the 2-rank export")
    r = await session.call_tool("summary", {"profile": "mlp.py"})
    check(r.is_error and "\n" not in r.content[0].text, f"a bad profile must be isError with one line: {r}")
    print("summary / diagnose / sync / nccl / diff on real exports: equal to the CLI's JSON")


async def resources(session):
    res = (await session.list_resources()).resources
    uris = [str(r.uri) for r in res]
    check(uris[0] == "kernlens://runs" and len(uris) >= 2, f"resources {uris}")
    runs = json.loads((await session.read_resource("kernlens://runs")).contents[0].text)["runs"]
    check(runs and runs[0]["backend"] == "emulate", f"runs {runs}")
    one = json.loads((await session.read_resource(runs[0]["uri"])).contents[0].text)
    check(one["run"]["id"] == runs[0]["id"] and one["rounds"], f"run {one.keys()}")
    try:
        await session.read_resource("kernlens://runs/nope")
        raise AssertionError("an unknown resource must be an error")
    except MCPError as e:
        check("params.uri" in e.message, e.message)
    print(f"resources: {len(runs)} stored runs")
    return one


async def malformed(session):
    await expect_error(session, "nope", {}, "params.name")
    await expect_error(session, "profile", {"focus": "mlp.py::MLP.forward"}, "params.arguments.entry")
    await expect_error(session, "profile", {"entry": "python3 mlp.py", "focus": "mlp.py::MLP.forward", "rounds": "x"},
                       "params.arguments.rounds")
    await expect_error(session, "profile", {"entry": "python3 mlp.py", "focus": "mlp.py"}, "params.arguments.focus")
    await expect_error(session, "profile", {"entry": "python3 mlp.py", "focus": "nope.py::f"}, "params.arguments.focus")
    await expect_error(session, "profile", {"entry": "python3 mlp.py", "focus": "mlp.py::MLP.forward", "backend": "x"},
                       "params.arguments.backend")
    await expect_error(session, "summary", {"profile": ALEXNET, "colour": 1}, "params.arguments.colour")
    await expect_error(session, "summary", {"profile": "../../../../../../etc/passwd"}, "params.arguments.profile")
    await expect_error(session, "explain_line", {"file": "mlp.py", "line": 0}, "params.arguments.line")
    await expect_error(session, "where_from", {"kernel": "("}, "params.arguments.kernel")
    await session.send_ping()
    print("malformed tool calls: JSON-RPC errors naming the field; the server goes on")


async def cancel_long_run(session):
    started = anyio.Event()

    async def on_progress(p, total, message):
        started.set()

    async def run():
        await session.call_tool("profile", {"entry": "python3 slow.py", "focus": "slow.py::work", "backend": "emulate",
                                            "baseline": False, "discovery": False, "rounds": 1},
                                progress_callback=on_progress)
        raise AssertionError("the long run finished before it was cancelled")

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(120):
            await started.wait()
            while not processes("slow.py"):
                await anyio.sleep(0.2)
        tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the abandoned request
    with anyio.fail_after(15):
        while processes("slow.py"):
            await anyio.sleep(0.2)
    await session.send_ping()
    runs = json.loads((await session.read_resource("kernlens://runs")).contents[0].text)["runs"]
    check(runs[0]["status"] == "cancelled", f"the cancelled run is stored as {runs[0]['status']}")
    print("cancel: the long run stopped, no process left, stored as cancelled")


async def raw_lines():
    """Malformed JSON-RPC that no SDK sends, on a plain pipe."""
    p = subprocess.Popen([KERNLENS, "mcp", "--root", WS, "--threads", "1"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    msgs = [
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),  # before initialize
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 3}}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "summary", "arguments": []}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "no/such"}),
        json.dumps({"id": 6, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    ]
    out, _ = p.communicate("\n".join(msgs) + "\n", timeout=30)
    answers = [json.loads(l) for l in out.splitlines()]
    by_id = {a.get("id"): a for a in answers}
    check(by_id[None]["error"]["code"] == -32700, f"parse error: {answers}")
    check(by_id[1]["error"]["code"] == -32002, "before initialize")
    check(by_id[2]["result"]["protocolVersion"] == "2025-11-25", "initialize")
    check(by_id[3]["error"]["code"] == -32602 and "params.name" in by_id[3]["error"]["message"], by_id[3])
    check(by_id[4]["error"]["code"] == -32602 and "params.arguments" in by_id[4]["error"]["message"], by_id[4])
    check(by_id[5]["error"]["code"] == -32601, by_id[5])
    check(by_id[6]["error"]["code"] == -32600, by_id[6])
    check(by_id[7]["result"] == {}, by_id[7])
    check(p.returncode == 0, f"exit status {p.returncode} at end of input")
    print("raw: parse error, wrong types, unknown method, missing jsonrpc answered; exit 0 at end of input")


async def main():
    params = StdioServerParameters(command=KERNLENS, args=["mcp", "--root", WS, "--threads", "2", "--log-level", "warn"], cwd="/")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "kernlens", init.server_info)
            check(init.protocol_version == "2025-11-25", init.protocol_version)
            check(init.capabilities.tools is not None and init.capabilities.resources is not None, init.capabilities)
            await schemas(session)
            r = await session.call_tool("where_from", {"kernel": "gemm"})
            check(r.is_error and "no stored run" in r.content[0].text, f"where_from before any run: {r}")
            await profile_mlp(session)
            await line_tools(session)
            await analyses(session)
            await resources(session)
            await malformed(session)
            await cancel_long_run(session)
    await raw_lines()
    check(not processes(f"mcp --root {WS}"), "a kernlens mcp process is left")


anyio.run(main)
print("PASS mcp_client")
