// The second MCP client of `kernlens mcp`: the official TypeScript SDK (pinned by
// package-lock.json), so two independent implementations accept the server.
// Usage: node client.mjs KERNLENS WORKSPACE PROFILE   (run by tests/e2e/mcp_typescript_sdk.sh)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [kernlens, ws, profile] = process.argv.slice(2);
const fail = (what) => {
  console.error(`FAIL: ${what}`);
  process.exit(1);
};

const transport = new StdioClientTransport({ command: kernlens, args: ["mcp", "--root", ws, "--threads", "1"], stderr: "inherit" });
const client = new Client({ name: "kernlens-ts-test", version: "0.0.0" });
await client.connect(transport);
const info = client.getServerVersion();
if (info?.name !== "kernlens") fail(`server info ${JSON.stringify(info)}`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
const want = ["diagnose", "diff", "explain_line", "line_costs", "nccl", "profile", "summary", "sync", "where_from"];
if (JSON.stringify(names) !== JSON.stringify(want)) fail(`tools ${names}`);

// callTool validates structuredContent against the tool's outputSchema (ajv) itself.
const r = await client.callTool({ name: "summary", arguments: { profile, top: 5 } });
if (r.isError) fail(`summary: ${r.content?.[0]?.text}`);
const doc = r.structuredContent;
if (doc?.schema !== "kernlens/summary@1") fail(`schema ${doc?.schema}`);
if (!(doc.totals?.kernel_ns > 0)) fail(`no kernel time: ${JSON.stringify(doc.totals)}`);

let err;
try {
  await client.callTool({ name: "summary", arguments: { profile, top: -1 } });
} catch (e) {
  err = e;
}
if (!err || err.code !== -32602 || !String(err.message).includes("params.arguments.top")) fail(`bad top: ${err}`);

await client.close();
console.log(`PASS mcp ts client: ${tools.length} tools, summary of ${profile}: ${doc.totals.kernels} kernels`);
