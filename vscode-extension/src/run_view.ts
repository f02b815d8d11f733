// "kernlens: Show run": one webview panel with the summary the server answers to
// kernlens.runSummary — backend (emulated or not), rounds and why the run stopped, the hottest
// lines of all files (click to open the line), the GPU work no line owns with its reason — and
// buttons for the HTML report and the Perfetto trace. The panel is re-used and re-filled.
import * as vscode from 'vscode';

export interface RunLine {
  path: string;
  file: string;
  uri: string;
  line: number; // 1-based
  time: string;
  share: string;
  kind: 'line' | 'call';
  text: string;
  kernels: number;
}

export interface RunSummary {
  runId: string;
  headline: string;
  backend: string;
  emulated: boolean;
  gpu: string;
  command: string;
  status?: string;
  error?: string;
  rounds: number;
  stopReason: string;
  why: string;
  totalGpu: string;
  mappedShare: string;
  profile: string;
  runDir?: string;
  logPath?: string;
  provisional: boolean;
  hottest: RunLine[];
  unmapped: { name: string; time?: string; launches?: number; reason: string }[];
  unmappedTotal: string;
}

export interface RunActions {
  exportRun: (format: 'html' | 'perfetto') => Promise<void>;
  showLog: () => void;
}

let panel: vscode.WebviewPanel | undefined;
let messages: vscode.Disposable | undefined;  // the handler of the summary shown

function esc(s: string | number | undefined): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function html(s: RunSummary, nonce: string): string {
  const rows = s.hottest.map((l, i) => `<tr>
      <td class="num">${esc(l.time)}${l.kind === 'call' ? ' total' : ''}</td><td class="num">${esc(l.share)}</td>
      <td><a href="#" data-i="${i}">${esc(l.path)}:${l.line}</a></td>
      <td class="code">${esc(l.text)}</td><td class="num">${l.kind === 'call' ? 'calls' : esc(l.kernels)}</td></tr>`).join('');
  const unmapped = s.unmapped.length === 0 ? '<p>Every GPU op maps to a workspace line.</p>'
    : `<table><tr><th>kernel</th><th class="num">time</th><th class="num">launches</th><th>why unmapped</th></tr>${
      s.unmapped.map((u) => `<tr><td class="code">${esc(u.name.length > 60 ? u.name.slice(0, 59) + '…' : u.name)}</td>
        <td class="num">${esc(u.time ?? '')}</td><td class="num">${esc(u.launches ?? '')}</td><td>${esc(u.reason)}</td></tr>`).join('')}</table>`;
  const facts: [string, string][] = [
    ['run', s.runId + (s.provisional ? ' (still running: provisional)' : '')],
    ['backend', s.backend + (s.emulated ? ' — EMULATED GPU: every duration is modelled' : '')],
    ['GPU', s.gpu || 'unknown'],
    ['rounds', s.rounds ? `${s.rounds}${s.stopReason ? ' — ' + s.stopReason : ''}${s.why ? ': ' + s.why : ''}` : (s.stopReason || '—')],
    ['GPU time', `${s.totalGpu} in the profile, ${s.mappedShare || '?'} on workspace lines`],
  ];
  if (s.command) facts.push(['entry', s.command]);
  if (s.error) facts.push(['error', s.error]);
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>
 body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
 table { border-collapse: collapse; margin: 4px 0 12px; }
 td, th { padding: 2px 8px; text-align: left; border-bottom: 1px solid var(--vscode-editorWidget-border, #8884); }
 .num { text-align: right; white-space: nowrap; } .code { font-family: var(--vscode-editor-font-family); }
 button { margin-right: 8px; } h2 { font-size: 1.1em; margin: 12px 0 4px; }
 .emulated { color: var(--vscode-editorWarning-foreground); font-weight: bold; }
</style></head><body>
<h1 style="font-size:1.3em">kernlens run</h1>
${s.emulated ? '<p class="emulated">Emulated GPU: the numbers are modelled, not measured.</p>' : ''}
<table>${facts.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</table>
<button id="report">Open report</button><button id="trace">Export Perfetto trace</button><button id="log">Show log</button>
<h2>Hottest lines</h2>
<table id="hottest"><tr><th class="num">GPU</th><th class="num">share</th><th>line</th><th>code</th><th class="num">kernels</th></tr>${rows}</table>
<h2>Unmapped GPU work${s.unmapped.length ? ' (' + esc(s.unmappedTotal) + ')' : ''}</h2>
${unmapped}
<script nonce="${nonce}">
 const vscode = acquireVsCodeApi();
 document.querySelectorAll('a[data-i]').forEach((a) => a.addEventListener('click', (e) => {
   e.preventDefault(); vscode.postMessage({ open: Number(a.dataset.i) });
 }));
 for (const id of ['report', 'trace', 'log'])
   document.getElementById(id).addEventListener('click', () => vscode.postMessage({ action: id }));
</script></body></html>`;
}

export function showRunPanel(context: vscode.ExtensionContext, summary: RunSummary, actions: RunActions): void {
  if (!panel) {
    panel = vscode.window.createWebviewPanel('kernlens.run', 'kernlens run', vscode.ViewColumn.Beside,
      { enableScripts: true, retainContextWhenHidden: true });
    panel.onDidDispose(() => { panel = undefined; messages?.dispose(); messages = undefined; }, undefined, context.subscriptions);
  }
  const nonce = Math.random().toString(36).slice(2) + Date.now().toString(36);
  panel.title = `kernlens run ${summary.runId}`;
  panel.webview.html = html(summary, nonce);
  messages?.dispose();
  messages = panel.webview.onDidReceiveMessage(async (m: { open?: number; action?: string }) => {
    if (m.open !== undefined) {
      const l = summary.hottest[m.open];
      if (!l) return;
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(l.uri));
      const pos = new vscode.Position(Math.max(0, l.line - 1), 0);
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(pos, pos) });
    } else if (m.action === 'report') {
      await actions.exportRun('html');
    } else if (m.action === 'trace') {
      await actions.exportRun('perfetto');
    } else if (m.action === 'log') {
      actions.showLog();
    }
  });
  panel.reveal();
}
