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
} from 'vscode-languageclient/node';
import { checkServer, ServerSource } from './server_check';

let client: LanguageClient | undefined;
/** Why the server is not running (set when the start-up check failed); commands report it. */
let serverError: string | undefined;
let status: vscode.StatusBarItem | undefined;

/** The kernlens binary: setting, else the bundled bin/kernlens, else `kernlens` on PATH. */
function serverCommand(context: vscode.ExtensionContext): { command: string; source: ServerSource } {
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
  return { command: 'kernlens', source: 'path' };
}


/** The `kernlens` settings object sent as initializationOptions.kernlens. */
function settingsObject(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('kernlens');
  return {
    entry: cfg.get('entry'),
    backend: cfg.get('backend'),
    nsysPath: cfg.get('nsysPath'),
    launch: cfg.get('launch'),
    launchTemplate: cfg.get('launchTemplate'),
    hints: cfg.get('hints'),
    lenses: cfg.get('lenses'),
  };
}

function setStatus(text: string, tooltip?: string): void {
  if (!status) return;
  status.text = text;
  status.tooltip = tooltip ?? 'kernlens — click for the server log';
  status.show();
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
  status.command = 'kernlens.client.showOutput';
  context.subscriptions.push(output, status);
  setStatus('$(pulse) kernlens');

  const { command, source } = serverCommand(context);
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
    initializationOptions: { kernlens: settingsObject() },
    synchronize: { configurationSection: 'kernlens' },
    outputChannel: output,
    middleware: {
      // Mirror server progress (profiling rounds) in the status bar.
      handleWorkDoneProgress: (token, params, next) => {
        if (params.kind === 'begin') setStatus(`$(sync~spin) kernlens: ${params.title}${params.message ? ' — ' + params.message : ''}`);
        else if (params.kind === 'report') setStatus(`$(sync~spin) kernlens: ${params.message ?? ''}`);
        else setStatus(`$(pulse) kernlens${params.message ? ': ' + params.message : ''}`);
        next(token, params);
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

  // Scripting (not in the palette): load a given path without a dialog.
  context.subscriptions.push(
    vscode.commands.registerCommand('kernlens.client.loadProfileFrom', (p: string) => loadProfile(p)),
  );

  if (!client) return; // the commands stay registered and report serverError
  await client.start();
  setStatus('$(pulse) kernlens', `kernlens server: ${command}`);

  // KERNLENS_LOAD_PROFILE: load this profile as soon as the server is up (used by the e2e test;
  // also handy in a devcontainer).
  const autoload = process.env.KERNLENS_LOAD_PROFILE;
  if (autoload) await loadProfile(autoload);
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
