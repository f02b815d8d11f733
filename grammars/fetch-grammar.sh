#!/usr/bin/env bash
# Obtains tree-sitter-python from the npm registry, verifies it, unpacks its sources.
# usage: fetch-grammar.sh VERSION SRI_INTEGRITY CACHE_DIR
# Leaves CACHE_DIR/tree-sitter-python-VERSION/src/{parser.c,scanner.c,...}; a second run
# with a verified tarball in place does nothing (and needs no network).
set -euo pipefail
version=$1 integrity=$2 cache=$3
tarball="$cache/tree-sitter-python-$version.tgz"
dest="$cache/tree-sitter-python-$version"
mkdir -p "$cache"

# SRI "sha512-<base64>" -> hex, compared with sha512sum of the tarball.
expect_hex=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
verify() { [[ -f "$tarball" ]] && [[ "$(sha512sum "$tarball" | cut -d' ' -f1)" == "$expect_hex" ]]; }

if [[ -f "$dest/src/parser.c" ]] && verify; then exit 0; fi
if ! verify; then
  rm -f "$tarball"
  command -v npm >/dev/null || { echo "fetch-grammar: npm is needed to obtain tree-sitter-python (apt-get install npm)" >&2; exit 1; }
  (cd "$cache" && npm pack --silent "tree-sitter-python@$version" >/dev/null) \
    || { echo "fetch-grammar: npm pack tree-sitter-python@$version failed" >&2; exit 1; }
  verify || { echo "fetch-grammar: tree-sitter-python-$version.tgz does not match the pinned integrity $integrity" >&2; rm -f "$tarball"; exit 1; }
fi
rm -rf "$dest" "$dest.tmp"
mkdir -p "$dest.tmp"
tar -xzf "$tarball" -C "$dest.tmp" --strip-components=1 package/src package/LICENSE
mv "$dest.tmp" "$dest"
