#!/usr/bin/env bash
# Architecture invariants of docs/ARCHITECTURE.md that the source shows: core/ knows nothing of the
# LSP, JSON or asio, never reads the working directory and holds no front end; core modules form the
# documented DAG; C handles are freed in one place each; no grammar sources; the lsp/ layers.
set -u
root=${1:?source dir}
bad=$(grep -rnE '#\s*include\s*[<"](lsp/|nlohmann/|asio)' "$root/core" --include='*.h' --include='*.cpp' || true)
if [ -n "$bad" ]; then
  echo "core/ must not include lsp/, nlohmann/json or asio:"
  echo "$bad"
  exit 1
fi
echo "layering: core/ is free of lsp/, nlohmann and asio includes"

# An invariant check prints the offending lines and marks the section failed.
section_fail=0
check() {  # check "message" "offending lines"
  if [ -n "$2" ]; then
    echo "$1"
    echo "$2"
    section_fail=1
  fi
}
srcs=(--include='*.h' --include='*.cpp')

# ---- core/ invariants (docs/ARCHITECTURE.md, "core/"). ----
# core/ never reads the working directory: front ends pass absolute paths (or paths relative to
# a root they name); nothing in core resolves a path against the process's directory.
check "core/ must not read the working directory (current_path, getcwd, filesystem::absolute):" \
  "$(grep -rnE 'current_path|getcwd|get_current_dir_name|[^_a-z]absolute\(' "$root/core" "${srcs[@]}" || true)"
# Front ends live in cli/ and lsp/: no exit codes, progress bars or command-line parsing in core/.
check "core/ must not hold front-end code (exit statuses, terminal checks, argv parsing):" \
  "$(grep -rnE 'isatty|\bexit\(|EXIT_(SUCCESS|FAILURE)|\bargv\b.*\bargc\b|int main\(' "$root/core" "${srcs[@]}" || true)"
# Core modules form one DAG (docs/ARCHITECTURE.md invariant 12): each includes only these.
declare -A allowed=(
  [support]=""
  [python]="support"
  [profile]="support"
  [store]="support"
  [nvtx]="python support"
  [cute]="python support"
  [attribution]="profile nvtx support"
  [analysis]="attribution profile nvtx support"
  [runner]="attribution store profile nvtx python support"
  [ncu]="runner profile python support"
  [planner]="runner attribution store profile nvtx python support"
  [results]="analysis attribution store profile nvtx python support"
)
for dir in "$root"/core/*/; do
  mod=$(basename "$dir")
  if [ -z "${allowed[$mod]+x}" ]; then
    check "core/$mod is not in the module table of docs/ARCHITECTURE.md (invariant 12):" "$dir"
    continue
  fi
  pattern="core/($mod${allowed[$mod]:+|${allowed[$mod]// /|}})/"
  check "core/$mod may include only core/{$mod${allowed[$mod]:+ ${allowed[$mod]}}}:" \
    "$(grep -rnE '#\s*include\s*"core/' "$dir" "${srcs[@]}" | grep -vE "#\s*include\s*\"$pattern" || true)"
done
# core/python knows nothing of kernlens's range names (invariant 12): nvtx::isManaged decides.
check "core/python must not know the kl: prefix (core/nvtx/naming.h owns it):" \
  "$(grep -rn '"kl:' "$root/core/python" "${srcs[@]}" || true)"
# core/python names no NVTX API (invariant 12): core/nvtx/source_ranges.* derives the ranges from
# the model's generic facts (with items, decorators, call statements).
check "core/python must not name NVTX (core/nvtx/source_ranges.h derives NVTX ranges from the model):" \
  "$(grep -rniE 'nvtx' "$root/core/python" "${srcs[@]}" || true)"
# C handles are freed in one place each (invariant 13).
check "sqlite3_close/sqlite3_finalize only in core/support/sqlite.cpp:" \
  "$(grep -rnE 'sqlite3_(close|finalize)\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/support/sqlite\.cpp:' || true)"
check "ts_*_delete only in core/python/ts_handles.h:" \
  "$(grep -rnE 'ts_[a-z_]+_delete\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/python/ts_handles\.h:' || true)"
check "gzclose only in core/support/gzip.cpp:" \
  "$(grep -rnE '\bgzclose\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/support/gzip\.cpp:' || true)"
check "git_*_free only as the deleter of a unique_ptr alias:" \
  "$(grep -rnE '\bgit_[a-z_]+_free\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v 'Deleter<' || true)"
# No third-party grammar source in the repo (invariant 9): it is fetched into the build tree.
check "grammar sources must not be committed (grammars/fetch-grammar.sh fetches them):" \
  "$(find "$root" \( -name 'build*' -o -name '.tmp' -o -name node_modules -o -name .git \) -prune -o \
      \( -name parser.c -o -name scanner.c -o -name scanner.cc \) -print 2>/dev/null || true)"
[ "$section_fail" = 0 ] || exit 1
echo "layering: core/ never reads the working directory, holds no front-end code, its modules form the documented DAG, core/python names no NVTX, C handles are freed in one place each, no grammar sources"

# ---- lsp/ invariants (docs/ARCHITECTURE.md, "lsp/"). ----
# Inside lsp/, layers point one way: transport <- protocol <- server <- features.
check "lsp/transport/ must not include lsp/protocol, lsp/server or lsp/features:" \
  "$(grep -rnE '#\s*include\s*"lsp/(protocol|server|features)/' "$root/lsp/transport" "${srcs[@]}" || true)"
check "lsp/protocol/ must not include lsp/server, lsp/features, lsp/transport or core/:" \
  "$(grep -rnE '#\s*include\s*"(lsp/(server|features|transport)|core)/' "$root/lsp/protocol" "${srcs[@]}" || true)"
check "lsp/server/ must not include lsp/features:" \
  "$(grep -rnE '#\s*include\s*"lsp/features/' "$root/lsp/server" "${srcs[@]}" || true)"
# Only lsp/server/uri.* parses or builds URIs: no "file:" literal anywhere else in lsp/ or cli/.
check "only lsp/server/uri.{h,cpp} may parse or build file: URIs (use uriToPath/pathToUri):" \
  "$(grep -rnE '"file:' "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '^[^:]*/lsp/server/uri\.\(h\|cpp\):' || true)"
# Only lsp/server/positions.* knows code units (UTF-16 surrogates, UTF-8 sequence lengths).
check "only lsp/server/positions.{h,cpp} may convert UTF-16 / UTF-8 code units:" \
  "$(grep -rnE 'char16_t|u16string|0x[dD][89aAbBcCdD][0-9a-fA-F]{2}\b|utf8SequenceLength' \
      "$root/lsp" "${srcs[@]}" | grep -v '^[^:]*/lsp/server/positions\.\(h\|cpp\):' | grep -v 'utf8SequenceLength(std::string_view' || true)"
# Features read typed params (lsp/protocol, fromJson + ObjectReader): no field picking from json.
check "lsp/features/ must read params through typed structs (fromJson/ObjectReader), not json accessors:" \
  "$(grep -rnE '\.(value|contains|is_object|is_string|is_array|is_number[a-z_]*|is_boolean|at)\(|\.get<[^>]*>\(\)|_json_pointer' \
      "$root/lsp/features" "${srcs[@]}" || true)"
# Contracts, not ticket numbers, in lsp/ comments and user-visible text.
check "no issue/ticket numbers in lsp/:" \
  "$(grep -rniE '\b(issue|ticket)[ -]?#?[0-9]+' "$root/lsp" "${srcs[@]}" || true)"
[ "$section_fail" = 0 ] || exit 1
echo "layering: lsp/ layers point one way; URIs only in lsp/server/uri, code units only in lsp/server/positions; features read typed params"
