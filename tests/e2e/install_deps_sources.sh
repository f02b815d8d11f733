#!/usr/bin/env bash
# scripts/install-deps.sh adds Debian's contrib + non-free components (for nsys) from the machine's own
# apt sources: the same URIs, suites, options and keyring, deb822 and one-line formats, disabled and
# comment entries ignored, and no archive address of its own.
set -euo pipefail
src=${KL_SOURCE_DIR:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sources.list.d"
cat >"$tmp/sources.list" <<'L'
deb [signed-by=/k.gpg arch=amd64] http://mirror.example/debian bookworm main
deb-src http://src.example/ bookworm main
# deb http://commented.example/ bookworm main
deb http://snap.example/archive/debian/2025 bookworm-updates main contrib
deb http://other.example/ bookworm contrib
L
cat >"$tmp/sources.list.d/a.sources" <<'L'
Types: deb deb-src
URIs: http://disabled.example/
Suites: bookworm
Components: main
Enabled: no

# a comment
Types: deb
URIs: http://c.example/debian http://d.example/debian
Suites: trixie trixie-updates
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/x.gpg
L
cp "$tmp/sources.list.d/a.sources" "$tmp/sources.list.d/kernlens-nonfree.sources"  # ours: never copied
out=$(bash "$src/scripts/install-deps.sh" --print-nonfree-sources "$tmp")
expected='SOURCES
Types: deb
URIs: http://c.example/debian http://d.example/debian
Suites: trixie trixie-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/x.gpg
LIST
deb [signed-by=/k.gpg arch=amd64] http://mirror.example/debian bookworm contrib non-free
deb http://snap.example/archive/debian/2025 bookworm-updates contrib non-free'
if [[ $out != "$expected" ]]; then
  echo "FAIL: unexpected sources"; diff <(echo "$expected") <(echo "$out"); exit 1
fi
# The set-up names no archive of its own.
if grep -nE 'https?://[a-z0-9.-]*(debian|ubuntu)\.(org|com)' "$src/scripts/install-deps.sh"; then
  echo "FAIL: install-deps.sh names an archive address"; exit 1
fi
echo "ok: contrib/non-free sources derived from the machine's own"
