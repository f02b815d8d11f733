#!/usr/bin/env bash
# Every check of tests/layering_test.sh fails when its rule is broken: each case copies the sources
# the script reads, breaks one rule of docs/ARCHITECTURE.md, and expects the script to fail with
# that rule's message. The unbroken copy must pass (so a case cannot pass for another reason).
set -u
src=${KL_SOURCE_DIR:?KL_SOURCE_DIR is the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=$tmp/base
mkdir -p "$base"
# What the script reads; tests/data as folders only (it names data folders, never reads files).
tar -C "$src" --exclude='tests/data' --exclude='node_modules' -cf - core lsp cli docs grammars editors tests scripts cmake samples \
  vscode-extension/src README.md | tar -C "$base" -xf -
(cd "$src" && find tests/data -type d) | (cd "$base" && xargs mkdir -p)

# Cases share the copy through hard links: a mutation must replace a file, never write into it
# (sed -i, perl -i and app below do).
app() {  # app FILE TEXT: FILE with one more line, as a new file
  { cat "$1"; printf '%s\n' "$2"; } >"$1.new" && mv "$1.new" "$1"
}
export -f app

fails=0
expect() {  # expect NAME "MESSAGE FRAGMENT" MUTATION...
  local name=$1 want=$2; shift 2
  local m=$tmp/m
  rm -rf "$m"
  cp -al "$base" "$m"
  (cd "$m" && eval "$*") || { echo "FAIL $name: the mutation itself failed"; fails=$((fails + 1)); return; }
  out=$(bash "$m/tests/layering_test.sh" "$m" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "FAIL $name: layering_test.sh passed with the rule broken"; fails=$((fails + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $name: failed, but not with \"$want\":"; echo "$out" | grep -v '^layering:' | head -5; fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

out=$(bash "$base/tests/layering_test.sh" "$base" 2>&1) || { echo "FAIL: the unbroken copy does not pass:"; echo "$out"; exit 1; }

expect inv1-json "must not include lsp/, nlohmann" "app core/support/log.cpp '#include <nlohmann/json.hpp>'"
expect inv2-writer "writes a file outside the audited writers" "app core/runner/backend.cpp 'void f(){ std::ofstream o(\"x\"); }'"
expect inv2-workspace "only front ends write workspace files" "app core/planner/plan.cpp 'void g(){ nvtx::writeFileAtomically(p, t); }'"
expect inv4-result "must return kl::Result" "sed -i 's/^Result<ProfileModel> readNsysSqlite(/ProfileModel readNsysSqlite(/' core/profile/reader.h"
expect inv4-throw "core/ must not throw" "app core/profile/model.cpp 'void h(){ throw 1; }'"
expect inv5-thread "threads in lsp/ and cli/ only in" "app lsp/features/hover.cpp 'void t(){ std::thread th([]{}); th.detach(); }'"
expect inv5-lock "a lock in lsp/features" "app lsp/features/code_lens.cpp 'std::mutex m;'"
expect inv7-cli "must call noteEmulated" "sed -i 's/noteEmulated(o, m);//' cli/cmd_tree.cpp"
expect inv7-loop "must label emulated results" "sed -i 's/EMULATED/EMU/g' cli/profile_text.cpp"
expect inv7-editor "editor surfaces showing numbers" "sed -i 's/[Ee]mulated/xx/g' lsp/features/code_lens.cpp"
expect inv8-system "processes are started only by" "app core/ncu/drill.cpp 'void s(){ std::system(\"ls\"); }'"
expect inv8-popen "processes are started only by" "app lsp/features/hover.cpp 'void s(){ popen(\"ls\", \"r\"); }'"
expect inv8-cout "writes to the terminal only through" "app cli/cmd_tree.cpp 'void s(){ std::cout << 1; }'"
expect inv9-source "grammar sources must not be committed" "touch grammars/parser.c"
expect inv9-hash "pinned integrity hash" "sed -i 's/sha512sum/md5sum/' grammars/fetch-grammar.sh"
expect inv10-layers "lsp/server/ must not include lsp/features" "app lsp/server/server.cpp '#include \"lsp/features/all.h\"'"
expect inv10-uri "only lsp/server/uri" "app lsp/features/hover.cpp 'auto u = \"file:///x\";'"
expect inv11-cwd "must not read the working directory" "app core/nvtx/overlay.cpp 'auto p = std::filesystem::current_path();'"
expect inv12-dag "core/store may include only" "sed -i '1i #include \"core/planner/loop.h\"' core/store/store.cpp"
expect inv12-table "core/store is not in the module table" "sed -i '/^   | \`store\` |/d' docs/ARCHITECTURE.md"
expect inv12-python "core/python may include only" "sed -i '1i #include \"core/attribution/attribution.h\"' core/python/model.cpp"
expect inv12-treesitter "tree-sitter is used only in core/python" "app core/cute/source_map.cpp 'uint32_t at(TSNode n){ return ts_node_start_byte(n); }'"
expect inv12-brackets "no bracket matching of Python text outside core/python" \
  "app lsp/features/cute_regions.cpp \"size_t open(const std::string& t){ return t.find('('); }\""
expect inv12-prefix "no \"kl:\" literal" "app core/analysis/tree.cpp 'bool k(std::string_view t){ return t.substr(0, 3) == \"kl:\"; }'"
expect inv13-free "sqlite3_close/sqlite3_finalize only" "app core/store/store.cpp 'void c(){ sqlite3_close(db); }'"
expect inv14-nocheck "invariant 7 of docs/ARCHITECTURE.md names no check" \
  "perl -0pi -e 's/ Checked by \`tests\/layering_test.sh\`\n   \(every CLI command.*?runner_lsp.sh\`\./ Checked nowhere./s' docs/ARCHITECTURE.md"
expect inv14-gone "which does not exist" "sed -i 's#tests/e2e/robust_interrupt.sh#tests/e2e/gone_interrupt.sh#' docs/ARCHITECTURE.md"
expect inv14-unregistered "which tests/CMakeLists.txt does not add_test" "sed -i '/function_length_test.sh/d' tests/CMakeLists.txt"
expect inv14-untagged "no check there is tagged [invariant 5]" "sed -i 's/\[invariant 5\]/[inv five]/' tests/layering_test.sh"
expect inv14-path "names paths that do not exist" "sed -i 's#core/attribution/autograd_link.h#core/attribution/autograd_gone.h#' docs/ARCHITECTURE.md"
expect inv15-columns "must count each row's fields" \
  "sed -i 's/static_assert(sizeof...(Specs) == columns_detail::fieldCount<Row>()/(void)(0/' core/profile/columns.h"
expect inv18-units "time units are written only by core/support/format.cpp" \
  "app lsp/features/hover.cpp 'void u(char* b, double v){ std::snprintf(b, 9, \"%.2f ms\", v); }'"
expect inv18-formatter "one formatter per quantity" "app core/analysis/gaps.cpp 'std::string fmtDuration(double ns);'"
expect inv18-line "a line's time is worded by results::LineView" \
  "app lsp/features/run_view.cpp 'std::string t(const results::LineResult& l){ return formatPassTime(l.gpuNs, l.backwardNs); }'"
# (the ticket words are assembled at run time: this file must pass the rule itself)
expect inv16-code "no issue/ticket numbers" "app core/support/log.cpp \"\$(printf '// see %s%s' issue ' 12')\""
expect inv16-test "no issue/ticket numbers" "app tests/unit/planner/harness_focus_test.cpp \"\$(printf 'TEST_CASE(\\\"the %s%s shape\\\") {}' issue '-6')\""
bash "$base/tests/layering_test.sh" "$base" >/dev/null 2>&1 || { echo "FAIL: a case wrote into the shared copy"; fails=$((fails + 1)); }
[ "$fails" = 0 ] || { echo "$fails layering rule(s) not enforced"; exit 1; }
echo "every layering rule fails when broken"
