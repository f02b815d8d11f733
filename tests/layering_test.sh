#!/usr/bin/env bash
# The invariants of docs/ARCHITECTURE.md. Every numbered invariant there names its checks: the
# checks below tagged "[invariant N]" (what the source shows), and tests that must exist and be
# run by ctest (what only running shows). The last section parses the invariant list and fails
# when an invariant names no check, names a test that does not exist or that ctest does not run,
# or names this script without a check tagged with its number here.
set -u
root=${1:?source dir}
# [invariant 1] core/ knows nothing of the LSP, JSON or asio.
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
# [invariant 11] core/ never reads the working directory: front ends pass absolute paths (or paths relative to
# a root they name); nothing in core resolves a path against the process's directory.
check "core/ must not read the working directory (current_path, getcwd, filesystem::absolute):" \
  "$(grep -rnE 'current_path|getcwd|get_current_dir_name|[^_a-z]absolute\(' "$root/core" "${srcs[@]}" || true)"
# [invariant 11] Front ends live in cli/ and lsp/: no exit codes, progress bars or command-line parsing in core/.
check "core/ must not hold front-end code (exit statuses, terminal checks, argv parsing):" \
  "$(grep -rnE 'isatty|\bexit\(|EXIT_(SUCCESS|FAILURE)|\bargv\b.*\bargc\b|int main\(' "$root/core" "${srcs[@]}" || true)"
# [invariant 12] Core modules form one DAG: each includes only the modules its row of the table
# in docs/ARCHITECTURE.md invariant 12 names (the table is read from there: one source of truth).
declare -A allowed=()
while IFS='|' read -r _ mod deps _; do
  mod=$(tr -d ' `' <<<"$mod")
  deps=$(tr -d '`,' <<<"$deps" | sed 's/—//g' | xargs)
  allowed[$mod]="$deps"
done < <(grep -E '^\s*\| `[a-z]+` \|' "$root/docs/ARCHITECTURE.md")
if [ "${#allowed[@]}" -lt 5 ]; then
  check "the module table of docs/ARCHITECTURE.md invariant 12 could not be read:" "${#allowed[@]} rows"
fi
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
# [invariant 12] core/python knows nothing of kernlens's range names: nvtx::isManaged decides.
check "core/python must not know the kl: prefix (core/nvtx/naming.h owns it):" \
  "$(grep -rn '"kl:' "$root/core/python" "${srcs[@]}" || true)"
# [invariant 12] core/python names no NVTX API: core/nvtx/source_ranges.* derives the ranges from
# the model's generic facts (with items, decorators, call statements).
check "core/python must not name NVTX (core/nvtx/source_ranges.h derives NVTX ranges from the model):" \
  "$(grep -rniE 'nvtx' "$root/core/python" "${srcs[@]}" || true)"
# [invariant 12] Python source is read through the model: outside core/python nothing walks the
# tree-sitter tree or runs a query (core/python exposes the facts), and no file that reads the model
# matches brackets in Python text by hand (calls and arguments are Expression facts,
# python::Module::argument).
check "tree-sitter is used only in core/python (read the model's facts: python::Module):" \
  "$(grep -rnE '\bTS(Node|Tree|Query|QueryCursor|TreeCursor|Point|Parser)\b|\bts_[a-z_]+\(|python::(Query|QueryCursor)\b|"core/python/(query|queries|ts_handles)\.h"' \
      "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/python/' || true)"
check "no bracket matching of Python text outside core/python (calls and arguments are the model's Expression facts):" \
  "$(grep -rlE 'python::|namespace kl::python' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/python/' |
     xargs -r grep -nE "'[(\[]'" || true)"
# [invariant 12] The kl: prefix is spelled once, nvtx::kNamePrefix (nvtx::isManagedName tests it).
check "no \"kl:\" literal outside core/nvtx/naming.h (use nvtx::kNamePrefix / nvtx::isManagedName):" \
  "$(grep -rn '"kl:"' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/nvtx/naming\.h:' | grep -vE '^[^:]+:[0-9]+:\s*//|//.*"kl:"' || true)"
# [invariant 6] [invariant 13] C handles are freed in one place each.
check "sqlite3_close/sqlite3_finalize only in core/support/sqlite.cpp:" \
  "$(grep -rnE 'sqlite3_(close|finalize)\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/support/sqlite\.cpp:' || true)"
check "ts_*_delete only in core/python/ts_handles.h:" \
  "$(grep -rnE 'ts_[a-z_]+_delete\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/python/ts_handles\.h:' || true)"
check "gzclose only in core/support/gzip.cpp:" \
  "$(grep -rnE '\bgzclose\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v '/core/support/gzip\.cpp:' || true)"
check "git_*_free only as the deleter of a unique_ptr alias:" \
  "$(grep -rnE '\bgit_[a-z_]+_free\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -v 'Deleter<' || true)"
# [invariant 9] No third-party grammar source in the repo: it is fetched into the build tree and
# checked against a pinned integrity hash.
check "grammar sources must not be committed (grammars/fetch-grammar.sh fetches them):" \
  "$(find "$root" \( -name 'build*' -o -name '.tmp' -o -name node_modules -o -name .git \) -prune -o \
      \( -name parser.c -o -name scanner.c -o -name scanner.cc \) -print 2>/dev/null || true)"
check "grammars/fetch-grammar.sh must verify the tarball against the pinned integrity hash:" \
  "$(grep -q 'sha512sum' "$root/grammars/fetch-grammar.sh" && grep -q 'does not match the pinned integrity' "$root/grammars/fetch-grammar.sh" || echo "grammars/fetch-grammar.sh: no sha512 check")"
# [invariant 2] The user's code is sacred: core/ writes files only in these audited places, each
# into kernlens's own folders (.kernlens/, the run and round folders, the export cache) — except
# core/nvtx/file_io.cpp's atomic writer, which only front ends call for an explicit edit
# (`kernlens annotate/strip --in-place`); the runner and the planner never call it on a user file.
writers='core/(nvtx/file_io|runner/(launch|nsys|nsys_report|overlay_dir|process|round_runner)|planner/(loop|line_strategy)|store/store|ncu/drill)\.cpp:'
check "core/ writes a file outside the audited writers (docs/ARCHITECTURE.md invariant 2):" \
  "$(grep -rnE 'ofstream|fopen\(.*"[wa]|O_WRONLY|O_RDWR|O_CREAT|[^_a-zA-Z]rename\(|fs::copy|filesystem::copy|create_symlink|fs::remove|filesystem::remove|\bunlink\(|resize_file' \
      "$root/core" "${srcs[@]}" | grep -vE "/$writers" || true)"
check "only front ends write workspace files (nvtx::writeFileAtomically outside cli/ and lsp/):" \
  "$(grep -rn 'writeFileAtomically(' "$root/core" "${srcs[@]}" | grep -v '/core/nvtx/file_io\.\(h\|cpp\):' \
      | grep -v 'writeFileAtomically(gi, "\*\\n")' || true)"
# [invariant 4] Bad input is data, not a crash: readers of user files return kl::Result, and
# nothing in core/ throws (a bare `throw;` that rethrows after joining a worker is not a new error).
check "readers (read*(...) in core/profile, core/ncu, core/cute headers) must return kl::Result:" \
  "$(grep -nE '^[A-Za-z].*\bread[A-Z][A-Za-z]*\(' "$root"/core/{profile,ncu,cute}/*.h | grep -v 'Result<' || true)"
check "core/ must not throw (return kl::Result / Error; a bare rethrow after cleanup is fine):" \
  "$(grep -rnE '\bthrow\s*[^;[:space:]]' "$root/core" "${srcs[@]}" | grep -vE '^[^:]+:[0-9]+:\s*//' || true)"
# [invariant 5] One main loop owns server state: no feature starts a thread; background work goes
# through Server::background/backgroundReply (the scheduler's pool) and posts back. In lsp/ and
# cli/, threads exist only in the scheduler's pool, the stdio reader and the CLI's exit watchdog
# (core/ may fork and join workers inside one call, such as the nsys reader's table reads).
check "threads in lsp/ and cli/ only in lsp/server/scheduler, lsp/transport/stdio_transport and cli/cmd_lsp (use Server::background):" \
  "$(grep -rnE 'std::(thread|jthread|async)\b|pthread_create|\.detach\(\)' "$root/lsp" "$root/cli" "${srcs[@]}" \
      | grep -vE '/(lsp/server/scheduler|lsp/transport/stdio_transport)\.(h|cpp):|/cli/cmd_lsp\.cpp:' \
      | grep -v 'hardware_concurrency' || true)"
check "a lock in lsp/features guards only an object documented as used from pool threads (\"Thread-safe\"):" \
  "$(for f in $(grep -rlE 'std::(mutex|shared_mutex)' "$root/lsp/features" "${srcs[@]}"); do
       grep -q 'Thread-safe' "$f" || echo "$f"; done)"
# [invariant 7] Emulated data says so: every CLI command that loads a profile prints the note, the
# loop's text and JSON say it, and every editor surface that shows numbers marks them.
check "CLI commands that load a profile must call noteEmulated (cli/profile_common.h):" \
  "$(for f in "$root"/cli/cmd_*.cpp; do
       grep -q 'loadProfile(' "$f" && ! grep -q 'noteEmulated(' "$f" && echo "$f"; done)"
check "the loop's text and JSON reports must label emulated results (cli/profile_text.cpp, core/planner/report.cpp):" \
  "$(grep -q 'EMULATED' "$root/cli/profile_text.cpp" && grep -q '"emulated"' "$root/core/planner/report.cpp" \
      || echo 'cli/profile_text.cpp: no EMULATED label, or core/planner/report.cpp: no "emulated" field')"
check "editor surfaces showing numbers must mark emulated results:" \
  "$(for f in hover inlay_hints code_lens run_view profile_run load_profile; do
       grep -qi 'emulated' "$root/lsp/features/$f.cpp" || echo "lsp/features/$f.cpp"; done)"
# [invariant 8] Nothing outlives kernlens: every process is started by core/runner/process.cpp
# (its supervisor, timeout and cancel); names reach a terminal only through the CLI's streams.
check "processes are started only by core/runner/process.cpp (runner::runProcess: supervisor, timeout, cancel):" \
  "$(grep -rnE '(std::|[^_a-zA-Z:.])(system|popen|fork|vfork|execv|execvp|execve|execl|execlp|posix_spawn|posix_spawnp)\(' \
      "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" | grep -vE '/core/runner/process\.(h|cpp):' | grep -vE '^[^:]+:[0-9]+:\s*//' || true)"
check "cli/ writes to the terminal only through Context::out/err (terminalSafe), not std::cout/printf:" \
  "$(grep -rnE 'std::(cout|cerr|clog)|[^_a-z]printf\(|[^_a-z]puts\(|fputs\(|fprintf\(' "$root/cli" "${srcs[@]}" | grep -v '/cli/main\.cpp:' || true)"
# [invariant 15] The profile model is columnar: a static_assert counts every row's fields.
check "core/profile/columns.h must count each row's fields (static_assert fieldCount):" \
  "$(grep -q 'static_assert(sizeof...(Specs) == columns_detail::fieldCount<Row>()' "$root/core/profile/columns.h" \
      || echo 'core/profile/columns.h: the field-count static_assert is gone')"
[ "$section_fail" = 0 ] || exit 1
echo "layering: core/ never reads the working directory, holds no front-end code, its modules form the documented DAG, core/python names no NVTX, Python is read through the model, C handles are freed in one place each, no grammar sources"

# ---- lsp/ invariants (docs/ARCHITECTURE.md, "lsp/"). ----
# [invariant 10] Inside lsp/, layers point one way: transport <- protocol <- server <- features.
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
# [invariant 18] One formatter per quantity: no printf-style time unit outside core/support/format.cpp,
# no other duration/percent formatter, and no line time composed in lsp/ or cli/ (LineView's words).
check "time units are written only by core/support/format.cpp (formatDuration, formatPassTime):" \
  "$(grep -rnE '%[-+ .0-9]*l*[fdgu] ?(ms|us|µs|ns)\b' "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" |
     grep -v '/core/support/format\.cpp:' || true)"
check "one formatter per quantity (core/support/format.h): no other duration, percent or byte formatter:" \
  "$(grep -rnE '\b(fmtDuration|formatNs|fmtMs|fmtPercent|fmtBytes|fmtBandwidth)\b' "$root/core" "$root/lsp" "$root/cli" \
      "${srcs[@]}" || true)"
check "a line's time is worded by results::LineView (core/results/line_view.h), not composed in lsp/ or cli/:" \
  "$(grep -rnE 'formatPassTime\((l|line|h\.line|it)\b' "$root/lsp" "$root/cli" "${srcs[@]}" || true)"
# [invariant 16] Contracts, not ticket numbers, in code, help texts, docs and test names.
check "no issue/ticket numbers in the sources, docs or tests (state the contract instead):" \
  "$(grep -rniE '\b(issue|ticket)[ -]?#?[0-9]+' "$root/core" "$root/lsp" "$root/cli" "$root/tests" "$root/docs" \
      "$root/README.md" "$root/vscode-extension/src" "$root/editors" \
      --include='*.h' --include='*.cpp' --include='*.sh' --include='*.py' --include='*.md' --include='*.ts' \
      --include='*.lua' --include='*.lsp' --include='*.loop' 2>/dev/null | grep -v '/tests/layering_test\.sh:' || true)"
# [invariant 20] Front ends never run each other: the server calls the core function a CLI command
# calls, it never executes kernlens (its own binary) to do it.
check "front ends never run kernlens itself (/proc/self/exe): call the core function the command calls:" \
  "$(grep -rn '/proc/self/exe' "$root/lsp" "$root/cli" "${srcs[@]}" || true)"
# [invariant 20] Text is never control flow: no decision on the wording of a note, a message, a
# reason or a run id (core/support/note.h: decide on NoteKind; ResultOrigin; Error::Code).
check "a decision on a message's wording (find/rfind/starts_with/==  of a literal on a note, message, reason, why or run id):" \
  "$(grep -rnE '\b(notes?|message|why|reason|runId)(\(\))?\.(r?find|starts_with|ends_with|contains)\("|\b(notes?|message|why|runId) [!=]= "' \
      "$root/core" "$root/lsp" "$root/cli" "${srcs[@]}" || true)"
[ "$section_fail" = 0 ] || exit 1
echo "layering: lsp/ layers point one way; URIs only in lsp/server/uri, code units only in lsp/server/positions; features read typed params; no prose as control flow"

# ---- every invariant of docs/ARCHITECTURE.md names its checks ----
# [invariant 14] Each numbered invariant (from "1. **" to the next one, in "## Invariants") must name
# at least one check: this script (then a check above is tagged "[invariant N]") or a test path
# under tests/ that exists and that ctest runs (tests/e2e/*.sh, tests/unit/<area>/ with sources).
arch="$root/docs/ARCHITECTURE.md"
grep -q 'foreach(script IN LISTS KL_E2E_TESTS)' "$root/tests/CMakeLists.txt" || check "tests/CMakeLists.txt no longer registers tests/e2e/*.sh" "x"
grep -q 'add_test(NAME unit_${area}' "$root/tests/CMakeLists.txt" || check "tests/CMakeLists.txt no longer registers tests/unit/<area>/" "x"
invariants=$(awk '/^## Invariants/{on=1; next} /^## /{on=0} on' "$arch" |
  awk '/^[0-9]+\. \*\*/{ if (n) print n "\t" text; n=$1; sub(/\./, "", n); text=$0; next } n { text = text " " $0 } END { if (n) print n "\t" text }')
count=0
while IFS=$'\t' read -r n text; do
  [ -n "$n" ] || continue
  count=$((count + 1))
  named=0
  if grep -q 'tests/layering_test\.sh' <<<"$text"; then
    named=1
    grep -qE "^#.*\[invariant $n\]" "$0" || check "invariant $n names tests/layering_test.sh, but no check there is tagged [invariant $n]:" "$arch"
  fi
  set -f  # the paths may be patterns (tests/e2e/*.sh): no globbing
  for t in $(grep -oE 'tests/[A-Za-z0-9_./-]+[*<]?' <<<"$text" | sed 's/[.,;:)]*$//' | sort -u); do
    case "$t" in tests/layering_test.sh|*'*'|*'<') continue ;; esac  # this script; patterns such as tests/e2e/*.sh
    if [ ! -e "$root/$t" ]; then
      check "invariant $n names $t, which does not exist:" "$arch"
      continue
    fi
    case "$t" in tests/data/*|tests/bench/*) continue ;; esac  # data and benchmarks: not checks ctest runs
    named=1
    case "$t" in
      tests/e2e/*.sh) ;;  # registered by the e2e glob
      tests/unit/*)
        area=$(cut -d/ -f3 <<<"$t")
        find "$root/tests/unit/$area" -maxdepth 1 -name '*.cpp' | grep -q . || check "invariant $n names $t, but tests/unit/$area has no test sources:" "$arch" ;;
      tests/lsp/transcripts/*) ;;  # run by tests/unit/lsp/transcript_test.cpp
      tests/*_test.sh)  # a script of its own: tests/CMakeLists.txt must add_test it
        grep -qF "\${CMAKE_CURRENT_SOURCE_DIR}/${t#tests/}\"" "$root/tests/CMakeLists.txt" ||
          check "invariant $n names $t, which tests/CMakeLists.txt does not add_test:" "$arch" ;;
      *) check "invariant $n names $t, which ctest does not run (name a tests/e2e/*.sh or tests/unit/<area>/ test):" "$arch" ;;
    esac
  done
  set +f
  [ "$named" = 1 ] || check "invariant $n of docs/ARCHITECTURE.md names no check (tests/layering_test.sh or a test):" "$text"
done <<<"$invariants"
# [invariant 14] The page names only what exists: every repository path in backquotes
# (`core/...`, `lsp/...`, `tests/...`, a pattern such as `cli/cmd_*.cpp` or `uri.{h,cpp}`).
check "docs/ARCHITECTURE.md names paths that do not exist:" \
  "$(grep -oE '`[^` ]+`' "$arch" | tr -d '`' | sed 's/:.*//' |
     grep -E '^(core|lsp|cli|tests|grammars|scripts|cmake|docs|editors|vscode-extension|samples)/' | sort -u |
     while read -r p; do
       g=$(sed -E 's/\{[^}]*\}/*/g; s/<[^>]*>/*/g' <<<"$p")
       compgen -G "$root/$g" >/dev/null || echo "$p"
     done)"
[ "$count" -ge 10 ] || check "could not read the invariant list of docs/ARCHITECTURE.md (found $count):" "$arch"
[ "$section_fail" = 0 ] || exit 1
echo "layering: each of the $count invariants of docs/ARCHITECTURE.md names a check that exists and runs"
