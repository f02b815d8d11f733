#!/usr/bin/env bash
# `kernlens annotate` / `kernlens strip` end to end: modes, outputs, --in-place, exit codes.
set -uo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
printf 'def f(x):\n    """Doc."""\n    y = x + 1\n    return y\n\n\ndef g(): return 2\n' > m.py
cp m.py orig.py

"$KERNLENS" annotate --help | grep -q -- "--all-functions" || fail "annotate --help"
"$KERNLENS" strip --help | grep -q -- "--in-place" || fail "strip --help"

# Modes and stdout output.
out=$("$KERNLENS" annotate m.py --function f 2>/dev/null) || fail "annotate --function"
grep -q 'with torch.cuda.nvtx.range("kl:m.py:3-4:f"):' <<<"$out" || fail "function range: $out"
out=$("$KERNLENS" annotate m.py --lines 3 2>/dev/null) || fail "annotate --lines 3"
grep -q '"kl:m.py:3-3:y = x + 1"' <<<"$out" || fail "lines range: $out"
out=$("$KERNLENS" annotate m.py --all-functions 2>err.txt) || fail "all-functions"
grep -q "2 ranges added" err.txt || fail "count: $(cat err.txt)"
grep -q '# kl:inline=s' <<<"$out" || fail "inline body"
cmp -s m.py orig.py || fail "stdout mode wrote the file"

# -o and --in-place; strip gives back the exact bytes.
"$KERNLENS" annotate m.py --all-functions -o a.py 2>/dev/null || fail "-o"
"$KERNLENS" strip a.py -o b.py 2>/dev/null || fail "strip -o"
cmp -s b.py orig.py || fail "strip -o not exact"
mkdir sub && cp m.py sub/m.py
"$KERNLENS" annotate sub/m.py --function f --in-place 2>/dev/null || fail "--in-place"
grep -q '"kl:sub/m.py:3-4:f"' sub/m.py || fail "in-place content / relative path"
# A second annotate keeps the first range and adds another.
"$KERNLENS" annotate sub/m.py --function g --in-place 2>/dev/null || fail "second annotate"
[ "$(grep -c 'kl:sub/m.py' sub/m.py)" = 2 ] || fail "ranges after second annotate"
"$KERNLENS" strip sub/m.py --in-place 2>/dev/null || fail "strip --in-place"
cmp -s sub/m.py orig.py || fail "strip --in-place not exact"
ls -a sub | grep -q kl-tmp && fail "temporary file left behind"
# --root
"$KERNLENS" annotate sub/m.py --function f --root sub 2>/dev/null | grep -q '"kl:m.py:3-4:f"' || fail "--root"

# Exit codes: 2 usage, 1 input.
"$KERNLENS" annotate m.py >/dev/null 2>&1; [ $? = 2 ] || fail "no mode -> 2"
"$KERNLENS" annotate m.py --function f --lines 1-2 >/dev/null 2>&1; [ $? = 2 ] || fail "two modes -> 2"
"$KERNLENS" annotate m.py --lines 3-1 >/dev/null 2>&1; [ $? = 2 ] || fail "bad lines -> 2"
"$KERNLENS" annotate m.py --function f -o x.py --in-place >/dev/null 2>&1; [ $? = 2 ] || fail "-o + --in-place -> 2"
"$KERNLENS" annotate m.py --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option -> 2"
"$KERNLENS" annotate missing.py --function f >/dev/null 2>&1; [ $? = 1 ] || fail "missing file -> 1"
"$KERNLENS" annotate m.py --function nope >/dev/null 2>err.txt; [ $? = 1 ] || fail "unknown function -> 1"
[ "$(wc -l < err.txt)" = 1 ] || fail "one-line reason: $(cat err.txt)"
"$KERNLENS" annotate m.py --function f --root /nonexistent >/dev/null 2>&1; [ $? = 1 ] || fail "bad root -> 1"
"$KERNLENS" annotate /etc/hostname --function f --root . >/dev/null 2>&1; [ $? = 1 ] || fail "outside root -> 1"
printf 'def f(:\n  pass\n' > broken.py
"$KERNLENS" annotate broken.py --all-functions >/dev/null 2>err.txt; [ $? = 1 ] || fail "broken -> 1"
grep -q "syntax error" err.txt || fail "broken message"
cmp -s broken.py <(printf 'def f(:\n  pass\n') || fail "broken file touched"
"$KERNLENS" strip >/dev/null 2>&1; [ $? = 2 ] || fail "strip without file -> 2"
printf 'import torch\nwith torch.cuda.nvtx.range("kl:m.py:2-2"):  # edited\n    f()\n' > edited.py
cp edited.py edited.orig
"$KERNLENS" strip edited.py --in-place >/dev/null 2>&1; [ $? = 1 ] || fail "edited range -> 1"
cmp -s edited.py edited.orig || fail "failed strip touched the file"
echo "nvtx cli: ok"
