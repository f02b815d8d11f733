#!/usr/bin/env bash
# ctest-labels: slow
# `pip install kernlens` like a user: the wheel and the sdist that `make wheel` builds
# (scripts/build-wheel.sh), each installed into its own fresh venv, and used from there only:
#   - the `kernlens` command is the venv's (bin/kernlens, a console script), `kernlens --version`,
#     `python -m kernlens --version`; `kernlens version` names the probe inside the installed package;
#   - `kernlens summary` on a real nsys export (kernel count checked against sqlite3);
#   - `kernlens profile --backend emulate` on samples/mlp, run by the venv's `python3` (its own
#     PyTorch), every kernel family on its expected line (samples/mlp/expected_lines.txt).
# The wheel: `auditwheel repair`ed (the libraries manylinux does not promise are in kernlens.libs/,
# the binary resolves them from there, not from /lib) and tagged manylinux. The sdist's wheel is
# built on this machine, for it: linked against the system's libraries, as any local build. The sdist: built by
# `pip install kernlens-<ver>.tar.gz`; with -dev packages hidden, or no compilers on PATH, it
# fails with the one line naming what is missing.
# Offline: the build backend and tools are the project venv's (requirements/wheel.txt), so the
# sdist is built with --no-build-isolation; each fresh venv sees the project venv's packages
# (PyTorch, the backend) through a .pth file instead of a second multi-GB copy of PyTorch.
# Time: the wheel's and the sdist's CMake trees sit beside their sources as KL_BINARY_DIR does, so
# ccache (CMakeLists.txt) serves their objects from the main build's; the log prints each step's time.
# ctest-resource-lock: wheel-build
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}" "${KL_PYTHON:?}"
S=$KL_SOURCE_DIR
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
step_start=$SECONDS
took() { echo "time: $1 $((SECONDS - step_start)) s"; step_start=$SECONDS; }
VERSION=$("$KERNLENS" --version | awk '{print $2; exit}')
[[ -n $VERSION ]] || fail "no version from the build's binary"
unset KERNLENS_PROBE_DIR
BASE=/usr/bin/python3
# The project venv's package directories (those its own .pth files add included).
PROJECT_SITES=$("$KL_PYTHON" -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))')

# 1. make wheel
bash "$S/scripts/build-wheel.sh" "$KL_BINARY_DIR" "$T/dist"
took "make wheel (sdist + wheel + auditwheel)"
SDIST=$T/dist/kernlens-$VERSION.tar.gz
[[ -f $SDIST ]] || fail "no $SDIST; made: $(ls "$T/dist")"
WHEELS=("$T"/dist/kernlens-"$VERSION"-py3-none-manylinux_*_x86_64.whl)
[[ ${#WHEELS[@]} == 1 && -f ${WHEELS[0]} ]] || fail "expected one manylinux wheel; made: $(ls "$T/dist")"
WHEEL=${WHEELS[0]}
echo "wheel: $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1)); sdist: $(du -h "$SDIST" | cut -f1)"

# The wheel's contents, read with zipfile (independent of pip).
/usr/bin/python3 - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["kernlens/bin/kernlens", "kernlens/__main__.py", "kernlens/share/kernlens/probe/kernlens_probe/__main__.py",
        "kernlens/share/kernlens/probe/sitecustomize.py"]
missing = [n for n in need if n not in names]
assert not missing, f"wheel lacks {missing}"
assert any(n.startswith("kernlens/share/kernlens/queries/") and n.endswith(".scm") for n in names), "no queries"
libs = [n for n in names if n.startswith("kernlens.libs/")]
for want in ("libgit2", "libtree-sitter", "libsqlite3"):
    assert any(n.split("/")[-1].startswith(want) for n in libs), f"{want} not bundled: {libs}"
z = zipfile.ZipFile(sys.argv[1])
ep = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
text = z.read(ep[0]).decode()
assert "kernlens = kernlens.__main__:main" in text, text
# RECORD lists every other file with its sha256 and size (PEP 376/427), checked here.
import base64, csv, hashlib, io
record = [n for n in names if n.endswith(".dist-info/RECORD")][0]
rows = {r[0]: r for r in csv.reader(io.StringIO(z.read(record).decode())) if r}
for n in names:
    if n.endswith("/") or n == record:
        continue
    assert n in rows, f"{n} is not in RECORD"
    data = z.read(n)
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert rows[n][1] == digest and rows[n][2] == str(len(data)), f"RECORD is wrong for {n}"
# The bundled libraries' copyright notices: at least libgit2's and tree-sitter's, and one per
# Debian package whose library was bundled (never fewer notices than packages named in the SBOM).
notices = [n for n in names if "/licenses/bundled/" in n and n.endswith(".copyright")]
for want in ("libgit2", "libtree-sitter"):
    assert any(n.split("/")[-1].startswith(want) for n in notices), f"no copyright notice for {want}: {notices}"
import json
sbom = json.loads(z.read([n for n in names if n.endswith("sboms/auditwheel.cdx.json")][0]))
debs = {c["name"] for c in sbom["components"] if c.get("purl", "").startswith("pkg:deb/")}
missing_notices = [d for d in debs if not any(n.endswith(f"/{d}.copyright") for n in notices)]
assert not missing_notices, f"no copyright notice for bundled {missing_notices}"
print(f"wheel contents ok: {len(libs)} bundled libraries, {len(notices)} copyright notices, RECORD verified")
PY
# The sdist carries the grammar (no npm at build time) and none of the tests.
tar -tzf "$SDIST" > "$T/sdist.txt"
grep -q "^kernlens-$VERSION/grammars/tree-sitter-python-.*\.tgz$" "$T/sdist.txt" || fail "the sdist lacks the grammar tarball"
grep -q "^kernlens-$VERSION/pyproject.toml$" "$T/sdist.txt" || fail "the sdist lacks pyproject.toml"
! grep -q "^kernlens-$VERSION/tests/" "$T/sdist.txt" || fail "the sdist carries the tests"

new_venv() {   # DIR: a fresh venv from the base interpreter that also sees the project venv's packages
  "$BASE" -m venv "$1"
  local site
  site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PROJECT_SITES" > "$site/zz-kernlens-test-project-venv.pth"
}

check_venv() {   # VENV LIBS: the pip-installed kernlens, used as a user of that venv would; LIBS:
  # bundled (the repaired wheel: libgit2, tree-sitter, SQLite from kernlens.libs/) or system (built
  # from the sdist on this machine, against its -dev packages: from the system's library path)
  local v=$1 libs=$2 site
  site=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # As `source $v/bin/activate` leaves it: the venv's bin first on PATH.
  local PATH="$v/bin:$PATH"
  [[ $(command -v kernlens) == "$v/bin/kernlens" ]] || fail "kernlens on PATH is $(command -v kernlens), not $v/bin/kernlens"
  [[ $(command -v python3) == "$v/bin/python3" ]] || fail "python3 on PATH is not the venv's"
  [[ $(kernlens --version) == "kernlens $VERSION" ]] || fail "kernlens --version: $(kernlens --version)"
  [[ $(python -m kernlens --version) == "kernlens $VERSION" ]] || fail "python -m kernlens --version: $(python -m kernlens --version)"
  local probe
  probe=$(kernlens version | sed -n 's/^probe //p')
  [[ $probe == "$(realpath "$site")/kernlens/share/kernlens/probe" ]] ||
    fail "the venv's kernlens uses the probe '$probe', not the one in $site/kernlens"
  # The bundled libraries, not the machine's: ldd on the installed binary.
  ldd "$site/kernlens/bin/kernlens" > "$T/ldd.txt"
  ! grep -q "not found" "$T/ldd.txt" || fail "unresolved libraries: $(grep 'not found' "$T/ldd.txt")"
  local lib
  for lib in libgit2 libtree-sitter libsqlite3; do
    local at
    at=$(awk -v l="$lib" 'index($1, l) == 1 {print $3}' "$T/ldd.txt")
    [[ -n $at ]] || fail "the installed binary does not load $lib"
    if [[ $libs == bundled ]]; then
      [[ $(dirname "$(realpath "$at")") == "$(realpath "$site")/kernlens.libs" ]] ||
        fail "the installed binary loads $lib from '$at', not from $site/kernlens.libs"
    else
      [[ $at != "$site"* ]] || fail "the sdist's binary loads $lib from the package ($at)"
    fi
  done

  local db=$T/real.sqlite
  [[ -f $db ]] || gzip -dc "$S/tests/data/real/fuser_h200_xent_nvtx.sqlite.gz" > "$db"
  local want got
  want=$(sqlite3 "$db" "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
  kernlens summary "$db" --format json > "$T/summary.json"
  got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["kernels"])' "$T/summary.json")
  [[ $got == "$want" ]] || fail "summary counted $got kernels, sqlite3 counts $want"

  # The venv's python3 runs the program and the probe (its PyTorch), from the venv's kernlens.
  python3 -c 'import torch' || fail "the venv's python3 has no torch"
  local ws=$T/ws-$(basename "$v")
  rm -rf "$ws"; cp -r "$S/samples/mlp" "$ws"
  (cd "$ws" && kernlens profile --root "$ws" --entry "python3 mlp.py --steps 2" --focus mlp.py::MLP.forward \
      --backend emulate --format json --no-store --no-baseline > "$T/profile.json") ||
    fail "kernlens profile from $v failed"
  /usr/bin/python3 "$S/tests/e2e/planner_check.py" "$T/profile.json" "$S/samples/mlp/expected_lines.txt"
  echo "ok: pip-installed into $v"
}

# 2. The wheel, into a fresh venv: no index, no dependencies to fetch.
new_venv "$T/venv-wheel"
"$T/venv-wheel/bin/pip" install --quiet --disable-pip-version-check --no-index "$WHEEL"
took "pip install the wheel"
check_venv "$T/venv-wheel" bundled
took "checks (wheel)"

# 3. The sdist, into another fresh venv: pip builds it (CMake, the pinned backend, no network).
# build-dir: the CMake tree beside the unpacked sources, as KL_BINARY_DIR is beside $S (ccache).
new_venv "$T/venv-sdist"
sdist_install() { "$T/venv-sdist/bin/pip" install --disable-pip-version-check --no-index --no-build-isolation \
  --config-settings build-dir=build-sdist "$@" "$SDIST"; }
# A -dev package missing (pkg-config finds no .pc file): one line names what to install.
if PKG_CONFIG_LIBDIR=$T/no-pc-files sdist_install > "$T/missing.log" 2>&1; then
  fail "the sdist built with tree-sitter and libgit2 hidden from pkg-config"
fi
grep -Eq '^ *kernlens: cannot build: missing tree-sitter \(Debian: libtree-sitter-dev\), libgit2 \(Debian: libgit2-dev\)$' "$T/missing.log" ||
  { tail -40 "$T/missing.log"; fail "no one-line message naming the missing -dev packages"; }
echo "missing -dev packages: $(grep -m1 'kernlens: cannot build' "$T/missing.log" | sed 's/^ *//')"
# No compilers: PATH holds only the tools pip and CMake need (cmake, ninja, pkg-config).
mkdir -p "$T/nocc-bin"
for tool in cmake ninja pkg-config; do ln -s "$(command -v "$tool")" "$T/nocc-bin/$tool"; done
if (unset CC CXX; PATH="$T/nocc-bin"; sdist_install > "$T/nocc.log" 2>&1); then
  fail "the sdist built with no compiler on PATH"
fi
grep -Eq '^ *kernlens: cannot build: missing a C compiler \(Debian: gcc\), a C\+\+ compiler \(Debian: g\+\+\)$' "$T/nocc.log" ||
  { tail -40 "$T/nocc.log"; fail "no one-line message naming the missing compilers"; }
echo "no compilers: $(grep -m1 'kernlens: cannot build' "$T/nocc.log" | sed 's/^ *//')"
took "sdist with -dev packages hidden, and with no compilers"
sdist_install --quiet > "$T/sdist.log" 2>&1 || { tail -40 "$T/sdist.log"; fail "pip install of the sdist failed"; }
took "pip install the sdist (build)"
check_venv "$T/venv-sdist" system
took "checks (sdist)"
echo "PASS: the wheel and the sdist install with pip into fresh venvs and run from there"
