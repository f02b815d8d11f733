#!/bin/bash
# Offline-friendly install of code-server from the npm registry (no GitHub / Microsoft
# downloads), plus playwright-core and @vscode/vsce, into a tools prefix. Idempotent: does
# nothing when the prefix already holds this version.
# usage: install-code-server.sh [PREFIX]   (default $KL_EDITOR_TOOLS or ~/.cache/kernlens/editor-tools)
# needs (scripts/install-deps.sh editor): build-essential-ish toolchain, python3, pkg-config,
# libkrb5-dev (node-gyp builds of kerberos), ripgrep (seeds @vscode/ripgrep's download cache),
# chromium. Pitfalls handled, one per numbered step (see docs/editors/vscode.md):
set -euo pipefail
# The newest code-server whose engines.node matches the system Node: 20 (this image, NodeSource)
# -> 4.100.3; 18 (Debian 12's own nodejs) -> 4.89.1.
case "$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/')" in
  18) default_cs=4.89.1 ;;
  *) default_cs=4.100.3 ;;
esac
VER=${CODE_SERVER_VERSION:-$default_cs}
PREFIX=${1:-${KL_EDITOR_TOOLS:-$HOME/.cache/kernlens/editor-tools}}
CS=$PREFIX/code-server-$VER
if [[ -x $CS/bin/code-server && -f $CS/.complete ]]; then echo "code-server $VER present in $CS"; exit 0; fi
export npm_config_nodedir=${npm_config_nodedir:-/usr}
export npm_config_yes=true                 # 3. node-pty's post-install runs `npx node-gyp`
export npm_config_build_from_source=true   # 4. argon2 (node-pre-gyp) would fetch a prebuilt from GitHub
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
echo "install-code-server: node $(node --version), npm $(npm --version) -> $CS"
rm -rf "$CS"; mkdir -p "$CS"
# 1. package only, no lifecycle scripts: `npm i -g code-server` runs its postinstall with
#    npm_config_global inherited and the nested install then clobbers the global one.
npm install -g --prefix "$CS" --ignore-scripts "code-server@$VER" >/dev/null
D=$CS/lib/node_modules/code-server
(cd "$D" && npm rebuild argon2 >/dev/null)
# 2. @vscode/ripgrep < 1.16 downloads rg from GitHub in its postinstall: seed its cache with Debian's rg.
RGV=$(node -p "(require('$D/lib/vscode/npm-shrinkwrap.json').packages['node_modules/@vscode/ripgrep']||{}).version||''")
if [[ -n $RGV ]]; then
  T=$(mktemp -d); (cd "$T" && npm pack "@vscode/ripgrep@$RGV" >/dev/null 2>&1 && tar xzf ./*.tgz)
  RGTAG=$(grep -oP "const VERSION = '\K[^']+" "$T/package/lib/postinstall.js" 2>/dev/null || true); rm -rf "$T"
  if [[ -n $RGTAG ]]; then
    C=$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$RGV; mkdir -p "$C"; T=$(mktemp -d); cp /usr/bin/rg "$T/rg"
    tar czf "$C/ripgrep-$RGTAG-x86_64-unknown-linux-musl.tar.gz" -C "$T" rg; rm -rf "$T"
  fi
fi
# 5. what code-server's postinstall.sh does, run by hand in local (non-global) mode.
(cd "$D/lib/vscode" && npm install --omit=dev >/dev/null && ln -sfn node_modules node_modules.asar \
  && (cd bin/remote-cli && ln -sfn code-linux.sh code-server) && (cd bin/helpers && ln -sfn browser-linux.sh browser.sh) \
  && cd extensions && npm install --omit=dev >/dev/null)
XDG_CONFIG_HOME=$(mktemp -d) XDG_DATA_HOME=$(mktemp -d) "$CS/bin/code-server" --version
touch "$CS/.complete"
