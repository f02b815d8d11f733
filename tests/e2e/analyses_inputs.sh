#!/usr/bin/env bash
# ctest-resource-lock: nsys
# Inputs and warnings: a REAL .nsys-rep made here with the installed Nsight Systems (NVTX from
# Python via ctypes, as in recorded/README.md) is exported once into the cache, reused while
# unchanged, re-exported when touched; its NVTX ranges match sqlite3 over nsys's own export.
# Clear one-line errors: nsys missing, nsys failing on the report (too old), unwritable folder
# (falls back to the user cache). An nsys export + a Kineto trace together are refused; a kernel
# whose name id is missing is shown as <unknown name #id> with a warning; a truncated .gz is one
# line naming the file.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
data="$KL_SOURCE_DIR/tests/data/real"
NSYS=$(command -v nsys || echo /usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys)
[[ -x "$NSYS" ]] || fail "nsys not installed (scripts/install-deps.sh nsys)"

mkdir -p "$tmp/run"
( cd "$tmp/run" && timeout 120 "$NSYS" profile --trace=nvtx,osrt --sample=none --cpuctxsw=none --force-overwrite=true \
    -o rep /usr/bin/python3 "$data/recorded/nvtx_ctypes_demo.py" > prof.log 2>&1 ) || { cat "$tmp/run/prof.log"; fail "nsys profile"; }
rep="$tmp/run/rep.nsys-rep"
[[ -f "$rep" ]] || fail "no report written"
# Independent truth: nsys' own export, read with sqlite3.
"$NSYS" export --type sqlite --force-overwrite=true --output "$tmp/truth.sqlite" "$rep" > /dev/null 2>&1
want=$(sqlite3 "$tmp/truth.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)")

export XDG_CACHE_HOME="$tmp/xdg"
"$KERNLENS" info "$rep" --format json > "$tmp/i1.json" 2> "$tmp/e1.txt" || { cat "$tmp/e1.txt"; fail "info on .nsys-rep"; }
grep -q "exported to $tmp/run/.kernlens/nsys-export/rep.nsys-rep.sqlite" "$tmp/e1.txt" || { cat "$tmp/e1.txt"; fail "no export note"; }
got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['counts']['nvtx_ranges'])" "$tmp/i1.json")
[[ "$got" == "$want" ]] || fail "nvtx ranges $got, sqlite3 says $want"
"$KERNLENS" tree "$rep" > /dev/null 2> "$tmp/e2.txt"
grep -q "using its cached SQLite export" "$tmp/e2.txt" || { cat "$tmp/e2.txt"; fail "cache not reused"; }
touch "$rep"
"$KERNLENS" info "$rep" > /dev/null 2> "$tmp/e3.txt"
grep -q "exported to" "$tmp/e3.txt" || { cat "$tmp/e3.txt"; fail "touched report not re-exported"; }
echo "nsys-rep: $want NVTX ranges == sqlite3; cached, reused, re-exported after touch: ok"

# The report's folder cannot hold .kernlens/ (a file of that name is in the way; works as root
# too, unlike a read-only folder) -> the export goes to the user cache, named with a path hash.
mkdir -p "$tmp/ro" && cp "$rep" "$tmp/ro/" && : > "$tmp/ro/.kernlens"
"$KERNLENS" info "$tmp/ro/rep.nsys-rep" > /dev/null 2> "$tmp/e4.txt" || { cat "$tmp/e4.txt"; fail "blocked folder"; }
grep -q "exported to $tmp/xdg/kernlens/nsys-export/[0-9a-f]\{16\}-rep.nsys-rep.sqlite" "$tmp/e4.txt" || { cat "$tmp/e4.txt"; fail "no fallback cache"; }
"$KERNLENS" info "$tmp/ro/rep.nsys-rep" > /dev/null 2> "$tmp/e4.txt"
grep -q "using its cached SQLite export $tmp/xdg/" "$tmp/e4.txt" || { cat "$tmp/e4.txt"; fail "fallback cache not reused"; }

# nsys missing / too old: one line, exit 1, nothing left behind.
mkdir -p "$tmp/r2" && cp "$rep" "$tmp/r2/new.nsys-rep"
set +e
KERNLENS_NSYS="$tmp/none/nsys" "$KERNLENS" summary "$tmp/r2/new.nsys-rep" > /dev/null 2> "$tmp/e5.txt"; rc=$?
set -e
[[ $rc -eq 1 && $(wc -l < "$tmp/e5.txt") -eq 1 ]] && grep -q "needs Nsight Systems' \`nsys\`" "$tmp/e5.txt" || { cat "$tmp/e5.txt"; fail "missing nsys: rc $rc"; }
cat > "$tmp/oldnsys" <<'SH'
#!/bin/sh
if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2021.2.1.58-642947b"; exit 0; fi
echo "Exportation error: Unsupported report version: this report needs a newer Nsight Systems" >&2; exit 1
SH
chmod +x "$tmp/oldnsys"
set +e
KERNLENS_NSYS="$tmp/oldnsys" "$KERNLENS" summary "$tmp/r2/new.nsys-rep" > /dev/null 2> "$tmp/e6.txt"; rc=$?
set -e
[[ $rc -eq 1 && $(wc -l < "$tmp/e6.txt") -eq 1 ]] || { cat "$tmp/e6.txt"; fail "old nsys: rc $rc"; }
grep -q "nsys 2021.2.1.58-642947b could not export it" "$tmp/e6.txt" && grep -q "Unsupported report version" "$tmp/e6.txt" \
  || { cat "$tmp/e6.txt"; fail "old nsys message"; }
[[ -z $(ls "$tmp/r2/.kernlens/nsys-export/" 2>/dev/null) ]] || { ls -la "$tmp/r2/.kernlens/nsys-export/"; fail "leftovers in the cache"; }
echo "missing / too-old nsys: one line each: ok"

# An nsys export and a Kineto trace together: refused.
gunzip -c "$data/nsys/mock.sqlite.gz" > "$tmp/mock.sqlite"
set +e
"$KERNLENS" summary "$tmp/mock.sqlite" "$data/hta_a100_triton_tiny.json.gz" > /dev/null 2> "$tmp/e7.txt"; rc=$?
set -e
[[ $rc -eq 1 && $(wc -l < "$tmp/e7.txt") -eq 1 ]] && grep -q "is an nsys export and .* a Kineto trace" "$tmp/e7.txt" \
  || { cat "$tmp/e7.txt"; fail "mixed inputs: rc $rc"; }

# A kernel name id with no StringIds row.
id=$(sqlite3 "$tmp/mock.sqlite" "SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1")
sqlite3 "$tmp/mock.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = demangledName WHERE demangledName = $id; DELETE FROM StringIds WHERE id = $id"
n=$(sqlite3 "$tmp/mock.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = $id")
"$KERNLENS" summary "$tmp/mock.sqlite" --format csv > "$tmp/s.csv" 2> "$tmp/e8.txt"
grep -q "^\"<unknown name #$id>\",$n," "$tmp/s.csv" || grep -q "^<unknown name #$id>,$n," "$tmp/s.csv" || { cat "$tmp/s.csv"; fail "unknown name not shown"; }
grep -q "warning: $n kernels have a name id that is not in StringIds" "$tmp/e8.txt" || { cat "$tmp/e8.txt"; fail "no warning"; }

# A truncated .gz: one line naming the file.
head -c 20000 "$data/tracelens_h100_bert_small_infer.json.gz" > "$tmp/cut.json.gz"
set +e
"$KERNLENS" summary "$tmp/cut.json.gz" > /dev/null 2> "$tmp/e9.txt"; rc=$?
set -e
[[ $rc -eq 1 && $(wc -l < "$tmp/e9.txt") -eq 1 && $(grep -o "cut.json.gz" "$tmp/e9.txt" | wc -l) -eq 1 ]] \
  || { cat "$tmp/e9.txt"; fail "truncated gz: rc $rc"; }
head -c 30000 "$data/nsys/mock.sqlite.gz" > "$tmp/cut.sqlite.gz"
set +e
"$KERNLENS" summary "$tmp/cut.sqlite.gz" > /dev/null 2> "$tmp/e10.txt"; rc=$?
set -e
[[ $rc -eq 1 && $(wc -l < "$tmp/e10.txt") -eq 1 && $(grep -o "cut.sqlite.gz" "$tmp/e10.txt" | wc -l) -eq 1 ]] \
  || { cat "$tmp/e10.txt"; fail "truncated sqlite.gz: rc $rc"; }
echo "mixed inputs refused; <unknown name #$id> x$n with a warning; truncated .gz named once: ok"
echo "analyses_inputs: ok"
