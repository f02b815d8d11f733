#!/usr/bin/env bash
# ctest-labels: slow
# The probe runs in the interpreter the user's entry runs, in whichever venv that is:
#   - `VENV_B/bin/python prog.py`, `python3 prog.py` with VENV_B first on PATH, and a `#!VENV_B`
#     script all run the program (and the probe) in VENV_B (the program reports its sys.prefix);
#   - --python overrides the entry's interpreter;
#   - an interpreter without torch, or with a PyTorch older than the probe supports, gets one
#     clear line (no traceback from inside the probe) and a failed run.
# VENV_B is a second venv made here from the project venv's Python, seeing the project venv's
# packages through a .pth file (no second PyTorch download), with a module of its own.
set -euo pipefail
: "${KERNLENS:?}" "${KL_PYTHON:?}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL probe_interpreters: $*" >&2; exit 1; }

site_of() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
mkvenv() {  # mkvenv DIR [with-project-packages]
  "$KL_PYTHON" -m venv --without-pip "$1"
  if [[ ${2:-} == with ]]; then site_of "$KL_PYTHON" > "$(site_of "$1/bin/python")/project_venv.pth"; fi
}
mkvenv "$T/venv_b" with
echo 'NAME = "venv_b"' > "$(site_of "$T/venv_b/bin/python")/kl_which_venv.py"
mkvenv "$T/venv_none"                      # no torch at all
mkvenv "$T/venv_old"                       # a PyTorch 1.13 (its metadata and version only)
old=$(site_of "$T/venv_old/bin/python")
mkdir -p "$old/torch" "$old/torch-1.13.1.dist-info"
echo '__version__ = "1.13.1"' > "$old/torch/__init__.py"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\n' > "$old/torch-1.13.1.dist-info/METADATA"

mkdir -p "$T/ws"
cat > "$T/ws/prog.py" <<'PY'
import sys

import torch


def main(out):
    try:
        import kl_which_venv
        which = kl_which_venv.NAME
    except ImportError:
        which = "no-marker"
    layer = torch.nn.Linear(16, 16)
    y = layer(torch.randn(8, 16))
    with open(out, "w") as f:
        f.write("%s %s %d\n" % (sys.prefix, which, y.numel()))


if __name__ == "__main__":
    main(sys.argv[1])
PY

profile() {  # profile NAME ENTRY [flags...]: runs the loop, leaves $T/NAME.{json,err}
  local name=$1 entry=$2; shift 2
  (cd "$T/ws" && "$KERNLENS" profile --root "$T/ws" --entry "$entry" --focus "${FOCUS:-prog.py::main}" --backend emulate \
     --rounds 1 --no-store --no-baseline --format json "$@" > "$T/$name.json" 2> "$T/$name.err")
}
expect_env() {  # expect_env NAME PREFIX MARKER
  local got; got=$(cat "$T/ws/$1.txt" 2>/dev/null) || { cat "$T/$1.err"; fail "$1: the program did not run"; }
  [[ $got == "$2 $3 128" ]] || fail "$1: ran in '$got', want '$2 $3 128'"
  grep -q '"lines"' "$T/$1.json" || fail "$1: no line map"
  echo "ok $1: $got"
}
B=$(cd "$T/venv_b" && pwd)
A=$("$KL_PYTHON" -c 'import sys; print(sys.prefix)')

profile venv_path "$B/bin/python prog.py venv_path.txt"
expect_env venv_path "$B" venv_b

PATH="$B/bin:$PATH" profile path_python3 "python3 prog.py path_python3.txt"
expect_env path_python3 "$B" venv_b

printf '#!%s\n' "$B/bin/python" | cat - "$T/ws/prog.py" > "$T/ws/shebang.py"; chmod +x "$T/ws/shebang.py"
FOCUS=shebang.py::main profile shebang "./shebang.py shebang.txt"
expect_env shebang "$B" venv_b

profile override "$B/bin/python prog.py override.txt" --python "$KL_PYTHON"
expect_env override "$A" no-marker

one_line_error() {  # one_line_error NAME ENTRY PATTERN
  local rc=0
  profile "$1" "$2" || rc=$?
  [[ $rc -ne 0 ]] || fail "$1: the run succeeded"
  grep -Eq "$3" "$T/$1.err" || { cat "$T/$1.err"; fail "$1: no line matching /$3/"; }
  ! grep -q Traceback "$T/$1.err" || { cat "$T/$1.err"; fail "$1: a traceback instead of one line"; }
  echo "ok $1: $(grep -Eo "$3.*" "$T/$1.err" | head -1)"
}
one_line_error no_torch "$T/venv_none/bin/python prog.py x.txt" "cannot import torch: the emulate backend needs PyTorch 2\.[0-9]+ or later"
one_line_error old_torch "$T/venv_old/bin/python prog.py x.txt" "PyTorch 1\.13\.1 in .* is not supported: kernlens needs PyTorch 2\.[0-9]+ or later"
one_line_error missing "$T/nowhere/bin/python prog.py x.txt" "python interpreter '.*nowhere/bin/python' not found"
echo "probe_interpreters: ok"
