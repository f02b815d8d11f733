#!/usr/bin/env bash
# Installs the Debian packages a make target needs, idempotently.
# usage: scripts/install-deps.sh GROUP...   (groups: build, venv, format, package, fuzz, browser, editor, nsys, slurm, bench)
# Quiet when everything is present; runs `apt-get update` only when something must be installed.
set -euo pipefail

declare -A GROUPS_PKGS=(
  [build]="g++ cmake ninja-build pkg-config make nodejs npm sqlite3 libsqlite3-dev libtree-sitter-dev nlohmann-json3-dev libasio-dev doctest-dev libgit2-dev zlib1g-dev python3 ccache"
  [format]="clang-format"
  [package]="dpkg-dev file"
  [fuzz]="clang libclang-rt-14-dev"
  [browser]="chromium"
  [editor]="neovim chromium libkrb5-dev ripgrep"
  [venv]="python3-venv"
  [nsys]="nsight-systems-target nsight-systems libnvtoolsext1"
  [slurm]="slurmctld slurmd slurm-client munge"
  [bench]="time bc"
)
# Packages from Debian's non-free component; their deps (nvidia-support, glx-*) are in contrib.
# Both are added in a separate sources file, only when needed.
NONFREE=" nsight-systems-target nsight-systems libnvtoolsext1 "
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else echo "install-deps: need root or sudo for: $*" >&2; return 1; fi; }
# Debian's nsight-systems 2022.4 installs QdstrmImporter under /usr/lib/nsight-systems/host-linux-x64 but
# nsys looks in /usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64 (docs/probe.md): link it, once.
nsys_importer_fix() {
  local d=/usr/lib/x86_64-linux-gnu/nsight-systems
  [[ -x /usr/lib/nsight-systems/host-linux-x64/QdstrmImporter && -d $d && ! -e $d/host-linux-x64 ]] || return 0
  as_root ln -sfn ../../nsight-systems/host-linux-x64 "$d/host-linux-x64"
}

# Adds contrib + non-free for every archive the machine already uses for `main`: the same URIs, suites,
# options and keyring as its own apt sources (deb822 *.sources and one-line *.list), so a machine on
# another mirror or a snapshot keeps using it. No archive address is named here.
nonfree_sources() {  # ETC_DIR -> prints "SOURCES\n<deb822>" and/or "LIST\n<one-line>" blocks
  local etc=$1 d=$1/sources.list.d stanzas lines f
  shopt -s nullglob
  stanzas=$(for f in "$d"/*.sources; do
    [[ $f == */kernlens-nonfree.sources ]] && continue
    awk 'function flush() { if (comp ~ /(^| )main( |$)/ && uris != "" && en != "no") {
             printf "Types: %s\nURIs: %s\nSuites: %s\nComponents: contrib non-free\n", types, uris, suites;
             if (sb != "") printf "Signed-By: %s\n", sb; printf "\n" }
           types = "deb"; uris = suites = comp = sb = ""; en = "" }
         BEGIN { flush() }
         /^[ \t]*$/ { flush(); next }
         /^#/ { next }
         { k = tolower($1); sub(/^[^:]*:[ \t]*/, "") }
         k == "types:" { types = $0 } k == "uris:" { uris = $0 } k == "suites:" { suites = $0 }
         k == "components:" { comp = $0 } k == "signed-by:" { sb = $0 } k == "enabled:" { en = tolower($0) }
         END { flush() }' "$f"
  done)
  lines=$(for f in "$etc/sources.list" "$d"/*.list; do
    [[ -f $f && $f != */kernlens-nonfree.list ]] || continue
    awk '$1 == "deb" { opt = ""; i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opt = opt $i " "; i++ } opt = opt $i " "; i++ }
                       for (j = i + 2; j <= NF; j++) if ($j == "main") { print "deb " opt $i " " $(i + 1) " contrib non-free"; break } }' "$f"
  done)
  shopt -u nullglob
  [[ -n $stanzas ]] && printf 'SOURCES\n%s\n' "$stanzas"
  [[ -n $lines ]] && printf 'LIST\n%s\n' "$lines"
  return 0
}
add_nonfree_sources() {
  local out d=/etc/apt/sources.list.d block text
  out=$(nonfree_sources /etc/apt)
  [[ -n $out ]] || { echo "install-deps: no apt source for 'main' found to add contrib/non-free to" >&2; return 0; }
  for block in SOURCES:sources LIST:list; do  # MARKER:file extension
    text=$(awk -v m="${block%%:*}" '/^(SOURCES|LIST)$/ { f = ($0 == m); next } f' <<<"$out")
    [[ -z $text ]] || printf '%s\n' "$text" | $SUDO tee "$d/kernlens-nonfree.${block#*:}" >/dev/null
  done
  return 0
}
# Test hook: print the contrib/non-free sources this machine would get from the apt dir ETC_DIR.
if [[ ${1:-} == --print-nonfree-sources ]]; then nonfree_sources "$2"; exit 0; fi

want=()
for g in "$@"; do
  [[ -n "${GROUPS_PKGS[$g]+x}" ]] || { echo "install-deps: unknown group '$g'" >&2; exit 2; }
  for p in ${GROUPS_PKGS[$g]}; do want+=("$p"); done
done

missing=()
for p in "${want[@]}"; do
  # nodejs/npm may come from outside Debian (e.g. a NodeSource node ships npm itself).
  case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    python3) command -v python3 >/dev/null 2>&1 && continue ;;
  esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && { nsys_importer_fix; exit 0; }

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
for p in "${missing[@]}"; do
  if [[ "$NONFREE" == *" $p "* && ! -e /etc/apt/sources.list.d/kernlens-nonfree.sources &&
        ! -e /etc/apt/sources.list.d/kernlens-nonfree.list ]] &&
     ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    add_nonfree_sources
    break
  fi
done
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
nsys_importer_fix
