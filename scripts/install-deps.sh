#!/usr/bin/env bash
# Installs the Debian packages a make target needs, idempotently.
# usage: scripts/install-deps.sh GROUP...   (groups: build, venv, format, package, fuzz, browser, editor, nsys, slurm)
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
  if [[ "$NONFREE" == *" $p "* && ! -e /etc/apt/sources.list.d/kernlens-nonfree.sources ]] &&
     ! apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm bookworm-updates' \
      'Components: contrib non-free' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
      $SUDO tee /etc/apt/sources.list.d/kernlens-nonfree.sources >/dev/null
    break
  fi
done
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
nsys_importer_fix
