#!/usr/bin/env bash
# No function in core/ is longer than 120 lines (docs/ARCHITECTURE.md invariant 17), as lizard
# (requirements/dev.txt, pinned) counts them: its "length" column, from the line of the signature to
# the closing brace. A longer function is split along its steps into named helpers. Fails listing
# every offender as "LINES name@first-last@file".
# usage: tests/function_length_test.sh REPO_ROOT   (env KL_PYTHON: the project venv's python)
set -uo pipefail
root=${1:?usage: function_length_test.sh REPO_ROOT}
limit=120
py=${KL_PYTHON:-$root/.venv/bin/python}
cd "$root" || exit 1
"$py" -m lizard --version >/dev/null 2>&1 || {
  echo "function_length_test: lizard is not installed in $py's venv (scripts/venv.sh installs requirements/dev.txt)"
  exit 1
}
# Columns of lizard's function list: NLOC CCN token PARAM length location. Only that list is read
# (up to "N file analyzed."; the warnings section after it repeats rows), and a row counts only when its
# location names a core/ file. lizard exits 1 when it has warnings (complexity): not a failure here.
out=$("$py" -m lizard -l cpp core)
[ $? -le 1 ] && grep -q ' file analyzed\.$' <<<"$out" || { echo "function_length_test: lizard failed"; exit 1; }
rows=$(awk '/^-+$/ { dash++; next } / file analyzed\.$/ { exit } dash == 1 && NF >= 6 && $6 ~ /@core\// { print }' <<<"$out")
count=$(grep -c . <<<"$rows")
[ "$count" -gt 500 ] || { echo "function_length_test: lizard listed only $count functions in core/"; exit 1; }
bad=$(awk -v limit="$limit" '$5 + 0 > limit { print "  " $5 " " $6 }' <<<"$rows" | sort -rn)
if [ -n "$bad" ]; then
  echo "function_length_test: $(grep -c . <<<"$bad") functions in core/ are longer than $limit lines (split them into named steps):"
  echo "$bad"
  exit 1
fi
echo "function_length_test: all $count functions in core/ are at most $limit lines"
