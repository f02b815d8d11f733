#!/usr/bin/env bash
# Installs the Debian packages a make target needs, idempotently.
# usage: scripts/install-deps.sh GROUP...   (groups: build, fuzz, browser)
# Quiet when everything is present; runs `apt-get update` only when something must be installed.
set -euo pipefail

declare -A GROUPS_PKGS=(
  [build]="g++ cmake ninja-build pkg-config make nodejs npm sqlite3 libsqlite3-dev libtree-sitter-dev nlohmann-json3-dev libasio-dev doctest-dev libgit2-dev zlib1g-dev python3 ccache"
  [fuzz]="clang libclang-rt-14-dev"
  [browser]="chromium"
)

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
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
