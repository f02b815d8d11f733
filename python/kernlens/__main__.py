"""`python -m kernlens ARGS` and the `kernlens` console script: exec the packaged binary.

The process is replaced (os.execv), so stdin/stdout/stderr, signals and the exit status are the
binary's own: `kernlens lsp` speaks LSP over this process's stdio.
"""
import os
import sys

from kernlens import binary


def main() -> None:
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"kernlens: the packaged binary {exe} is missing or not executable; reinstall kernlens\n")
        sys.exit(127)
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()
