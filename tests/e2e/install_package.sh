#!/usr/bin/env bash
# Installing kernlens like a user: `cmake --install` into a prefix, and the Debian package built by
# CPack (`make package`) installed with dpkg into a clean root (a fresh directory with its own dpkg
# database: nothing of the build tree or the source tree is reachable from there). From the
# installed paths: `kernlens --version`, `version` (the probe it found), the docs and the Neovim
# helper (share/doc/kernlens/nvim), `summary` on a real nsys
# export (kernel count checked against sqlite3), and `profile --backend emulate` on samples/mlp
# (every kernel family on its expected line, samples/mlp/expected_lines.txt).
# The package's Depends must name the Debian package of every library the binary links directly
# (found independently: readelf NEEDED -> ldd path -> dpkg -S).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
S=$KL_SOURCE_DIR
bash "$S/scripts/install-deps.sh" package
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
VERSION=$("$KERNLENS" --version | awk '{print $2; exit}')
[[ -n $VERSION ]] || fail "no version from the build's binary"

# The installed binary must not find anything through these.
unset KERNLENS_PROBE_DIR

check_installed() {   # PREFIX: runs the installed binary from PREFIX/bin and checks what it finds
  local prefix=$1 kl=$1/bin/kernlens
  [[ -x $kl ]] || fail "$kl was not installed"
  [[ $("$kl" --version) == "kernlens $VERSION" ]] || fail "$kl --version: $("$kl" --version)"
  local probe
  probe=$("$kl" version | sed -n 's/^probe //p')
  [[ $probe == "$(realpath "$prefix")/share/kernlens/probe" ]] ||
    fail "$kl uses the probe '$probe', not the installed $prefix/share/kernlens/probe"
  [[ -f $prefix/share/kernlens/probe/kernlens_probe/__main__.py ]] || fail "probe not installed under $prefix"
  ls "$prefix"/share/kernlens/queries/*.scm >/dev/null || fail "queries not installed under $prefix"
  [[ -f $prefix/share/doc/kernlens/README.md ]] || fail "docs not installed under $prefix"
  [[ -f $prefix/share/doc/kernlens/nvim/lua/kernlens/init.lua ]] || fail "Neovim helper not installed under $prefix"

  # summary on a real export: its kernel total equals a plain sqlite3 count.
  local db=$T/real.sqlite
  gzip -dc "$S/tests/data/real/fuser_h200_xent_nvtx.sqlite.gz" > "$db"
  local want got
  want=$(sqlite3 "$db" "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
  "$kl" summary "$db" --format json > "$T/summary.json"
  got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["kernels"])' "$T/summary.json")
  [[ $got == "$want" ]] || fail "installed summary counted $got kernels, sqlite3 counts $want"

  # The loop with the emulate backend on a sample, from the installed binary and probe.
  local ws=$T/ws-$(basename "$prefix")
  rm -rf "$ws"; cp -r "$S/samples/mlp" "$ws"
  (cd "$ws" && "$kl" profile --root "$ws" --entry "python3 mlp.py --steps 2" --focus mlp.py::MLP.forward \
      --backend emulate --format json --no-store --no-baseline > "$T/profile.json") ||
    fail "installed kernlens profile failed"
  /usr/bin/python3 "$S/tests/e2e/planner_check.py" "$T/profile.json" "$S/samples/mlp/expected_lines.txt"
  echo "ok: installed under $prefix"
}

# 1. cmake --install (what `make install PREFIX=…` runs).
cmake --install "$KL_BINARY_DIR" --prefix "$T/prefix" > "$T/install.log"
check_installed "$T/prefix"

# 2. The Debian package.
(cd "$T" && cpack -G DEB -B "$T/pkg" --config "$KL_BINARY_DIR/CPackConfig.cmake" > "$T/cpack.log" 2>&1) ||
  { tail -20 "$T/cpack.log"; fail "cpack failed"; }
DEB=$T/pkg/kernlens_${VERSION}_amd64.deb
[[ -f $DEB ]] || fail "expected $DEB; cpack made: $(ls "$T/pkg")"
field() { dpkg-deb -f "$DEB" "$1"; }
[[ $(field Package) == kernlens && $(field Version) == "$VERSION" && $(field Architecture) == amd64 ]] ||
  fail "control: $(dpkg-deb -f "$DEB" Package Version Architecture)"
DEPENDS=$(field Depends); SUGGESTS=$(field Suggests)
echo "Depends: $DEPENDS"
echo "Suggests: $SUGGESTS"
[[ ", $DEPENDS," == *", python3"[,\ ]* ]] || fail "Depends lacks python3 (the probe)"
for s in nsight-systems; do [[ $SUGGESTS == *"$s"* ]] || fail "Suggests lacks $s"; done
for lib in $(readelf -d "$KL_BINARY_DIR/kernlens" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  path=$(ldd "$KL_BINARY_DIR/kernlens" | awk -v l="$lib" '$1 == l {print $3}')
  [[ -n $path ]] || fail "ldd does not resolve $lib"
  pkg=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1) ||
    pkg=$(dpkg -S "$path" | head -1 | cut -d: -f1)
  [[ -n $pkg ]] || fail "no Debian package owns $path"
  [[ ", $DEPENDS," == *", $pkg"[,\ ]* ]] || fail "Depends lacks $pkg (for $lib)"
done

R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: > "$R/var/lib/dpkg/status"; : > "$R/var/lib/dpkg/available"
# The clean root has none of the Depends: they are checked above and satisfied by this machine.
dpkg --root="$R" --force-depends --force-script-chrootless -i "$DEB" > "$T/dpkg.log" 2>&1 ||
  { cat "$T/dpkg.log"; fail "dpkg -i into $R failed"; }
dpkg --root="$R" -L kernlens | grep -qx /usr/bin/kernlens || fail "dpkg does not list /usr/bin/kernlens"
check_installed "$R/usr"
echo "PASS: cmake --install and the .deb ($(du -h "$DEB" | cut -f1)) both run from their installed paths"
