#!/usr/bin/env bash
# `kernlens profile --launch template`: a fake "remote" that runs the command in its own
# directory (the local output path rewritten to a remote one, as on a machine with other paths)
# and copies the results back into {out}. Also the plain `bash -c '{cmd}'` template.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" "$T/remote" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
cat > "$T/fake_remote.sh" <<'SH'
#!/usr/bin/env bash
# usage: fake_remote.sh LOCAL_OUT REMOTE_ROOT CMDLINE
set -u
OUT=$1; R=$(mktemp -d "$2/job.XXXX"); CMD=$3
mkdir -p "$R/out"
CMD=${CMD//"$OUT"/"$R/out"}          # the remote writes to its own directory
printf '%s\n' "$CMD" > "$R/cmd.txt"
/bin/sh -c "$CMD"; rc=$?
cp -a "$R/out/." "$OUT/"             # results copied back
exit $rc
SH
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 1" --focus mlp.py::train_step --backend emulate \
  --launch template --template "bash '$T/fake_remote.sh' {out} '$T/remote' '{cmd}'" --format json > "$T/out.json" 2> "$T/err.txt" \
  || { cat "$T/err.txt"; echo "runner_template: profile failed" >&2; exit 1; }
job=$(ls -d "$T"/remote/job.*)
[[ -s "$job/out/profile.sqlite" ]] || { echo "runner_template: the remote did not write its own output" >&2; exit 1; }
grep -q "$job/out/profile.sqlite" "$job/cmd.txt" && ! grep -q '/round0/out' "$job/cmd.txt" \
  || { cat "$job/cmd.txt"; echo "runner_template: the command was not rewritten for the remote" >&2; exit 1; }
launch=$(sqlite3 "$T/ws/.kernlens/kernlens.db" "SELECT launch FROM runs")
[[ "$launch" == template:* ]] || { echo "runner_template: stored launch '$launch'" >&2; exit 1; }
/usr/bin/python3 - "$T/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rl = r["round_log"][0]
mapped = sum(l["launches"] for l in r["lines"])
assert r["emulated"] and mapped > 0 and rl["pushes"] == 7, (mapped, rl["pushes"])
assert any(p.endswith("/round0/out/profile.sqlite") for p in rl["profiles"]), rl["profiles"]
PY
# A template that is wrong fails with its reason; the plain bash -c form works.
set +e
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py" --focus mlp.py::train_step --backend emulate --launch template \
  --template "ssh host {nope}" > /dev/null 2> "$T/e"; rc=$?
set -e
[[ $rc -eq 1 ]] && grep -q 'unknown placeholder {nope}' "$T/e" || { cat "$T/e"; echo "runner_template: bad template not reported" >&2; exit 1; }
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python -c 'import mlp; print(1)'" --focus mlp.py::train_step --backend emulate \
  --launch template --template "bash -c '{cmd}'" > "$T/o2.txt" 2> "$T/e2" || { cat "$T/e2"; exit 1; }
grep -q 'no kl: range was recorded' "$T/o2.txt" || { cat "$T/o2.txt"; echo "runner_template: expected the not-run note" >&2; exit 1; }
echo "runner_template: ok"
