// The start-up check of the server binary, free of the vscode API so it is tested with plain node
// (tests/e2e/vscode_server_check.sh).
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Where the server binary came from: the setting, the .vsix (bin/kernlens), the selected Python
 * interpreter's environment (`pip install kernlens` puts the command beside the interpreter), or PATH.
 */
export type ServerSource = 'setting' | 'bundled' | 'python' | 'path';

/**
 * The `kernlens` command of a Python environment, given its interpreter as the Python extension
 * reports it (`<env>/bin/python`, or the environment's folder), with `${workspaceFolder}` expanded;
 * undefined when there is none, or the interpreter is a bare name (a PATH lookup, done last anyway).
 * The interpreter path is not resolved through symlinks: a venv's bin/python links to the base
 * interpreter, and the command lives in the venv's bin/.
 */
export function serverInPythonEnv(interpreter: string | undefined, workspaceFolder?: string): string | undefined {
  if (!interpreter) return undefined;
  let p = interpreter.trim();
  if (workspaceFolder) p = p.split('${workspaceFolder}').join(workspaceFolder);
  if (p.startsWith('~/') && process.env.HOME) p = path.join(process.env.HOME, p.slice(2));
  if (!path.isAbsolute(p)) {
    if (!p.includes(path.sep) || !workspaceFolder) return undefined;
    p = path.join(workspaceFolder, p);
  }
  let isDir = false;
  try {
    isDir = fs.statSync(p).isDirectory();
  } catch {
    return undefined;
  }
  const candidate = isDir ? path.join(p, 'bin', 'kernlens') : path.join(path.dirname(p), 'kernlens');
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile() ? candidate : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `<server> --version` and compares it with this extension's version. Returns an error text
 * when the server cannot run at all (missing binary, missing shared libraries), a warning text
 * when the versions differ, or nothing when all is well.
 */
export function checkServer(
  command: string,
  source: ServerSource,
  expected: string,
): Promise<{ error?: string; warning?: string; version?: string }> {
  const where =
    source === 'setting'
      ? `kernlens.serverPath = ${command}`
      : source === 'bundled'
        ? `the bundled ${command}`
        : source === 'python'
          ? `the Python environment's ${command}`
          : '`kernlens` on PATH';
  return new Promise((resolve) => {
    execFile(command, ['--version'], { timeout: 15000 }, (err, stdout, stderr) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const reason =
          code === 'ENOENT'
            ? 'not found'
            : code === 'EACCES'
              ? 'not executable'
              : (String(stderr).split('\n').find((l) => l.trim()) ?? err.message).trim();
        resolve({ error: `kernlens: the language server could not start (${where}: ${reason}).` });
        return;
      }
      const m = /kernlens\s+(\S+)/.exec(String(stdout));
      const version = m ? m[1] : undefined;
      if (!version) resolve({ error: `kernlens: ${where} did not print a kernlens version.` });
      else if (version !== expected)
        resolve({
          version,
          warning: `kernlens: the server is version ${version} but the extension is ${expected} (${where}); install matching versions or set kernlens.serverPath.`,
        });
      else resolve({ version });
    });
  });
}
