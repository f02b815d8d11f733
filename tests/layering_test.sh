#!/usr/bin/env bash
# Architecture invariant: core/ knows nothing of the LSP, JSON or asio (docs/ARCHITECTURE.md).
set -u
root=${1:?source dir}
bad=$(grep -rnE '#\s*include\s*[<"](lsp/|nlohmann/|asio)' "$root/core" --include='*.h' --include='*.cpp' || true)
if [ -n "$bad" ]; then
  echo "core/ must not include lsp/, nlohmann/json or asio:"
  echo "$bad"
  exit 1
fi
echo "layering: core/ is free of lsp/, nlohmann and asio includes"

# ---- lsp/ invariants (docs/ARCHITECTURE.md, "lsp/"). Each prints the offending lines. ----
lsp_fail=0
lsp_check() {  # lsp_check "message" "offending lines"
  if [ -n "$2" ]; then
    echo "$1"
    echo "$2"
    lsp_fail=1
  fi
}
srcs=(--include='*.h' --include='*.cpp')
# Inside lsp/, layers point one way: transport <- protocol <- server <- features.
lsp_check "lsp/transport/ must not include lsp/protocol, lsp/server or lsp/features:" \
  "$(grep -rnE '#\s*include\s*"lsp/(protocol|server|features)/' "$root/lsp/transport" "${srcs[@]}" || true)"
lsp_check "lsp/protocol/ must not include lsp/server, lsp/features, lsp/transport or core/:" \
  "$(grep -rnE '#\s*include\s*"(lsp/(server|features|transport)|core)/' "$root/lsp/protocol" "${srcs[@]}" || true)"
lsp_check "lsp/server/ must not include lsp/features:" \
  "$(grep -rnE '#\s*include\s*"lsp/features/' "$root/lsp/server" "${srcs[@]}" || true)"
# Only lsp/server/uri.* parses or builds URIs: no "file:" literal anywhere else in lsp/ or cli/.
lsp_check "only lsp/server/uri.{h,cpp} may parse or build file: URIs (use uriToPath/pathToUri):" \
  "$(grep -rnE '"file:' "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '^[^:]*/lsp/server/uri\.\(h\|cpp\):' || true)"
# Only lsp/server/positions.* knows code units (UTF-16 surrogates, UTF-8 sequence lengths).
lsp_check "only lsp/server/positions.{h,cpp} may convert UTF-16 / UTF-8 code units:" \
  "$(grep -rnE 'char16_t|u16string|0x[dD][89aAbBcCdD][0-9a-fA-F]{2}\b|utf8SequenceLength' \
      "$root/lsp" "${srcs[@]}" | grep -v '^[^:]*/lsp/server/positions\.\(h\|cpp\):' | grep -v 'utf8SequenceLength(std::string_view' || true)"
# Features read typed params (lsp/protocol, fromJson + ObjectReader): no field picking from json.
lsp_check "lsp/features/ must read params through typed structs (fromJson/ObjectReader), not json accessors:" \
  "$(grep -rnE '\.(value|contains|is_object|is_string|is_array|is_number[a-z_]*|is_boolean|at)\(|\.get<[^>]*>\(\)|_json_pointer' \
      "$root/lsp/features" "${srcs[@]}" || true)"
# Contracts, not ticket numbers, in lsp/ comments and user-visible text.
lsp_check "no issue/ticket numbers in lsp/:" \
  "$(grep -rniE '\b(issue|ticket)[ -]?#?[0-9]+' "$root/lsp" "${srcs[@]}" || true)"
[ "$lsp_fail" = 0 ] || exit 1
echo "layering: lsp/ layers point one way; URIs only in lsp/server/uri, code units only in lsp/server/positions; features read typed params"
