// The start-up check of the server binary, free of the vscode API so it is tested with plain node
// (tests/e2e/vscode_server_check.sh).
import { execFile } from 'child_process';

/** Where the server binary came from: the setting, the .vsix (bin/kernlens), or PATH. */
export type ServerSource = 'setting' | 'bundled' | 'path';

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
    source === 'setting' ? `kernlens.serverPath = ${command}` : source === 'bundled' ? `the bundled ${command}` : '`kernlens` on PATH';
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
