// kernlens VS Code client: starts `kernlens lsp` over stdio through vscode-languageclient and
// adds the palette commands, a status-bar item and the server log channel.
//
// Command ids: the server's commands (kernlens.profileFunction, kernlens.loadProfile, ...) are
// auto-registered by vscode-languageclient from executeCommandProvider, so the palette commands
// here use distinct client-side ids (kernlens.client.*) and forward with
// workspace/executeCommand — registering the server ids again would fail with "command already
// exists", and a palette command must work before the server is up.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  WorkDoneProgressCancelNotification,
} from 'vscode-languageclient/node';
import { checkServer, serverInPythonEnv, ServerSource } from './server_check';
import { RunSummary, showRunPanel } from './run_view';

let client: LanguageClient | undefined;
/** Why the server is not running (set when the start-up check failed); commands report it. */
let serverError: string | undefined;
let status: vscode.StatusBarItem | undefined;
/** The status text of the current results (kernlens/results), shown when no run is going. */
let resultsStatus = { text: '$(pulse) kernlens', tooltip: 'kernlens — click for the run view' };

/** The part of the Python extension's API used here (both its current and its older form). */
interface PythonExtensionApi {
  environments?: { getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path?: string } | undefined };
  settings?: { getExecutionDetails?: (resource?: vscode.Uri) => { execCommand?: string[] } | undefined };
}

/**
 * The interpreter the Python extension (ms-python.python) has selected for the workspace, else the
 * `python.defaultInterpreterPath` setting; undefined when neither names one.
 */
async function selectedPythonInterpreter(): Promise<string | undefined> {
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const ext = vscode.extensions.getExtension<PythonExtensionApi | undefined>('ms-python.python');
  if (ext) {
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      const active = api?.environments?.getActiveEnvironmentPath?.(resource)?.path;
      if (typeof active === 'string' && active) return active;
      const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
      if (typeof exec === 'string' && exec) return exec;
    } catch {
      /* an older or failing Python extension: fall back to the setting */
    }
  }
  const configured = vscode.workspace.getConfiguration('python', resource).get<string>('defaultInterpreterPath', '');
  return configured || undefined;
}

/**
 * The kernlens binary: the kernlens.serverPath setting, else the bundled bin/kernlens, else the
 * `kernlens` of the selected Python interpreter's environment (`pip install kernlens`), else
 * `kernlens` on PATH.
 */
async function serverCommand(context: vscode.ExtensionContext): Promise<{ command: string; source: ServerSource }> {
  const configured = vscode.workspace.getConfiguration('kernlens').get<string>('serverPath', '');
  if (configured) return { command: configured, source: 'setting' };
  const bundled = context.asAbsolutePath(path.join('bin', 'kernlens'));
  if (fs.existsSync(bundled)) {
    // A .vsix unpacked by a tool that drops file modes leaves the server without its x bit.
    try {
      fs.accessSync(bundled, fs.constants.X_OK);
    } catch {
      try {
        fs.chmodSync(bundled, 0o755);
      } catch {
        /* reported by the version check below */
      }
    }
    return { command: bundled, source: 'bundled' };
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const fromPython = serverInPythonEnv(await selectedPythonInterpreter(), folder);
  if (fromPython) return { command: fromPython, source: 'python' };
  return { command: 'kernlens', source: 'path' };
}

/** The server's settings: every `kernlens.*` setting except the client's own. */
const SERVER_SETTINGS = ['entry', 'backend', 'nsysPath', 'launch', 'launchTemplate', 'python', 'rounds',
  'timeoutSeconds', 'gpu', 'strategy', 'keepRuns', 'hints', 'lenses', 'hover'];

/** The `kernlens` settings object sent as initializationOptions.kernlens. */
function settingsObject(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('kernlens');
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTINGS) out[key] = cfg.get(key);
  return out;
}

function setStatus(text: string, tooltip?: string): void {
  if (!status) return;
  status.text = text;
  status.tooltip = tooltip ?? 'kernlens — click for the run view';
  status.show();
}

/** What the server announces on every results change (kernlens/results). */
interface ResultsNotice {
  runId?: string;
  backend?: string;
  emulated?: boolean;
  files?: number;
  lines?: number;
  provisional?: boolean;
}

function onResults(n: ResultsNotice): void {
  if (!n.runId) {
    resultsStatus = { text: '$(pulse) kernlens', tooltip: 'kernlens: no results — profile a function or load a profile' };
  } else {
    const what = `${n.lines} lines${n.emulated ? ' (emulated)' : ''}`;
    resultsStatus = {
      text: `$(pulse) kernlens: ${what}`,
      tooltip: `kernlens: results of ${n.runId} (${n.backend}${n.emulated ? ', emulated GPU' : ''}): ${n.lines} lines in ${n.files} files — click for the run view`,
    };
  }
  if (!running) setStatus(resultsStatus.text, resultsStatus.tooltip);
}

/** A profiling run's progress, as ONE cancellable notification plus the status item. */
let running = false;
const runs = new Map<string, { report: (m?: string, pct?: number) => void; end: () => void }>();

function startRunProgress(token: string | number, title: string, message: string | undefined, cancellable: boolean): void {
  running = true;
  setStatus(`$(sync~spin) kernlens: ${message ?? 'starting'}`, title);
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable },
    (progress, ct) => new Promise<void>((resolve) => {
      let reported = 0;
      ct.onCancellationRequested(() => {
        void client?.sendNotification(WorkDoneProgressCancelNotification.type, { token });
        setStatus('$(sync~spin) kernlens: cancelling');
      });
      const report = (m?: string, pct?: number) => {
        const increment = pct !== undefined ? Math.max(0, pct - reported) : undefined;
        if (pct !== undefined) reported = Math.max(reported, pct);
        progress.report({ message: m, increment });
        if (m) setStatus(`$(sync~spin) kernlens: ${m}`, title);
      };
      report(message);
      runs.set(String(token), { report, end: resolve });
    }),
  );
}

function endRunProgress(token: string | number, message: string | undefined): void {
  const r = runs.get(String(token));
  runs.delete(String(token));
  r?.end();
  running = runs.size > 0;
  if (!running) setStatus(resultsStatus.text, resultsStatus.tooltip);
  if (message) {
    void vscode.window.showInformationMessage(`kernlens: ${message}`, 'Show run').then((pick) => {
      if (pick) void vscode.commands.executeCommand('kernlens.client.showRun');
    });
  }
}

/** Forwards a command to the server (after it is running). */
async function runServerCommand(command: string, args: unknown[]): Promise<unknown> {
  if (!client) throw new Error(serverError ?? 'the language server is not running');
  if (client.state !== State.Running) await client.start();
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

function activeUri(): { editor: vscode.TextEditor; uri: string } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showWarningMessage('kernlens: open a Python file first');
    return undefined;
  }
  return { editor, uri: editor.document.uri.toString() };
}

function reportError(what: string): (e: unknown) => void {
  return (e: unknown) => {
    const msg = e instanceof Error ? e.message : String(e);
    void vscode.window.showErrorMessage(`kernlens: ${what} failed: ${msg}`);
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('kernlens');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = 'kernlens.client.showRun';
  context.subscriptions.push(output, status);
  setStatus('$(pulse) kernlens');

  const { command, source } = await serverCommand(context);
  const expected = String((context.extension.packageJSON as { version?: string }).version ?? '');
  const check = await checkServer(command, source, expected);
  output.appendLine(`kernlens server: ${command} (${source}) version ${check.version ?? 'unknown'}; extension ${expected}`);
  if (check.error) {
    setStatus('$(error) kernlens: no server', check.error);
    output.appendLine(check.error);
    serverError = check.error;
    void vscode.window.showErrorMessage(`${check.error} Set kernlens.serverPath to a kernlens binary.`, 'Open Settings').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'kernlens.serverPath');
    });
  }
  if (check.warning) {
    output.appendLine(check.warning);
    void vscode.window.showWarningMessage(check.warning, 'Open Settings').then((pick) => {
      if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'kernlens.serverPath');
    });
  }
  // No `transport`: with TransportKind.stdio the client appends `--stdio` to the arguments;
  // `kernlens lsp` speaks stdio by default.
  const serverOptions: ServerOptions = {
    run: { command, args: ['lsp'] },
    debug: { command, args: ['lsp'] },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'python' }],
    initializationOptions: { kernlens: settingsObject(), resultsNotification: true },
    synchronize: { configurationSection: 'kernlens' },
    outputChannel: output,
    middleware: {
      // The server's progress (profiling rounds) as a cancellable notification and the one
      // status item: vscode-languageclient would show it as a second, uncancellable status
      // item (ProgressLocation.Window), so `begin` and `report` are not passed on.
      handleWorkDoneProgress: (token, params, next) => {
        if (params.kind === 'begin') startRunProgress(token, params.title, params.message, params.cancellable ?? false);
        else if (params.kind === 'report') runs.get(String(token))?.report(params.message, params.percentage);
        else {
          endRunProgress(token, params.message);
          next(token, params);
        }
      },
    },
  };
  if (!serverError) client = new LanguageClient('kernlens', 'kernlens', serverOptions, clientOptions);

  const reg = (id: string, fn: () => Promise<unknown> | void) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('kernlens.client.profileFunction', () => {
    const a = activeUri();
    if (!a) return;
    const pos = a.editor.selection.active;
    return runServerCommand('kernlens.profileFunction', [
      { uri: a.uri, position: { line: pos.line, character: pos.character } },
    ]).catch(reportError('Profile this function'));
  });
  reg('kernlens.client.refineHere', () => {
    const a = activeUri();
    if (!a) return;
    const s = a.editor.selection;
    return runServerCommand('kernlens.refineHere', [
      {
        uri: a.uri,
        range: {
          start: { line: s.start.line, character: s.start.character },
          end: { line: s.end.line, character: s.end.character },
        },
      },
    ]).catch(reportError('Refine NVTX here'));
  });
  reg('kernlens.client.loadProfile', async () => {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      openLabel: 'Load profile',
      filters: { Profiles: ['sqlite', 'json', 'gz', 'csv'], 'All files': ['*'] },
    });
    if (!picked || picked.length === 0) return;
    return loadProfile(picked[0].fsPath);
  });
  reg('kernlens.client.cancel', () =>
    runServerCommand('kernlens.cancel', []).catch(reportError('Cancel profiling')));
  reg('kernlens.client.clearResults', () =>
    runServerCommand('kernlens.clearResults', []).then(() => setStatus('$(pulse) kernlens')).catch(reportError('Clear results')));
  reg('kernlens.client.toggleHints', async () => {
    const cfg = vscode.workspace.getConfiguration('kernlens');
    const on = cfg.get<boolean>('hints.enabled', true);
    await cfg.update('hints.enabled', !on, vscode.ConfigurationTarget.Global);
    setStatus(`$(pulse) kernlens: hints ${on ? 'off' : 'on'}`);
  });
  reg('kernlens.client.removeRanges', async () => {
    if (!activeUri()) return;
    await vscode.commands.executeCommand('editor.action.sourceAction', {
      kind: 'source.removeNvtx',
      apply: 'first',
    });
  });
  reg('kernlens.client.showOutput', () => output.show(true));
  reg('kernlens.client.showRun', async () => {
    try {
      const summary = (await runServerCommand('kernlens.runSummary', [])) as RunSummary | null;
      if (!summary) {
        void vscode.window.showInformationMessage('kernlens: no results yet — profile a function or load a profile');
        return;
      }
      showRunPanel(context, summary, {
        exportRun: (format) => exportRun(format),
        showLog: () => output.show(true),
      });
    } catch (e) {
      reportError('Show run')(e);
    }
  });
  reg('kernlens.client.openReport', () => exportRun('html'));
  reg('kernlens.client.exportTrace', () => exportRun('perfetto'));
  reg('kernlens.client.keepAnnotations', async () => {
    const pick = await vscode.window.showWarningMessage(
      'kernlens: add the NVTX ranges of the last profiling run to your files? (one undoable edit per file)',
      { modal: true }, 'Keep ranges');
    if (pick !== 'Keep ranges') return;
    try {
      const r = (await runServerCommand('kernlens.keepAnnotations', [])) as {
        applied: boolean; files: number; ranges: number; refused: string[];
      };
      const refused = r.refused.length ? ` Not kept: ${r.refused.join('; ')}` : '';
      if (r.applied) void vscode.window.showInformationMessage(`kernlens: kept the run's ranges in ${r.files} file(s).${refused}`);
      else void vscode.window.showWarningMessage(`kernlens: nothing kept.${refused}`);
    } catch (e) {
      reportError('Keep annotations')(e);
    }
  });

  // Scripting (not in the palette): load a given path without a dialog.
  context.subscriptions.push(
    vscode.commands.registerCommand('kernlens.client.loadProfileFrom', (p: string) => loadProfile(p)),
  );

  if (!client) return; // the commands stay registered and report serverError
  context.subscriptions.push(client.onNotification('kernlens/results', (n: ResultsNotice) => onResults(n)));
  await client.start();
  if (!running) setStatus(resultsStatus.text, resultsStatus.tooltip);

  // KERNLENS_LOAD_PROFILE: load this profile as soon as the server is up (used by the e2e test;
  // also handy in a devcontainer).
  const autoload = process.env.KERNLENS_LOAD_PROFILE;
  if (autoload) await loadProfile(autoload);
}

/** Writes the run's HTML report (opened in a panel) or Perfetto trace (path shown). */
async function exportRun(format: 'html' | 'perfetto'): Promise<void> {
  try {
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `kernlens: writing the ${format === 'html' ? 'report' : 'Perfetto trace'}` },
      () => runServerCommand('kernlens.exportRun', [{ format }]) as Promise<{ path: string }>);
    if (format === 'html') {
      const panel = vscode.window.createWebviewPanel('kernlens.report', `kernlens report`, vscode.ViewColumn.Active,
        { enableScripts: true });
      panel.webview.html = fs.readFileSync(r.path, 'utf8');
    } else {
      const pick = await vscode.window.showInformationMessage(
        `kernlens: Perfetto trace written to ${r.path} (open it at ui.perfetto.dev)`, 'Copy path');
      if (pick) await vscode.env.clipboard.writeText(r.path);
    }
  } catch (e) {
    reportError(format === 'html' ? 'Open report' : 'Export Perfetto trace')(e);
  }
}

async function loadProfile(file: string): Promise<void> {
  try {
    setStatus('$(sync~spin) kernlens: loading profile');
    const r = (await runServerCommand('kernlens.loadProfile', [file])) as {
      files: number;
      lines: number;
      emulated: boolean;
    };
    setStatus(
      `$(pulse) kernlens: ${r.lines} lines${r.emulated ? ' (emulated)' : ''}`,
      `kernlens: ${path.basename(file)} — ${r.lines} lines in ${r.files} files`,
    );
  } catch (e) {
    setStatus('$(error) kernlens');
    reportError('Load profile')(e);
  }
}

export function deactivate(): Thenable<void> | undefined {
  return client ? client.stop() : undefined;
}
