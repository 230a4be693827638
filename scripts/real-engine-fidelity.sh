#!/usr/bin/env bash
# real-engine-fidelity.sh — loadcurve's per-request timings against llama-server's own, and the
# CPU each took, on a server started by scripts/real-engine.sh.
#
#   scripts/real-engine-fidelity.sh OUT [loadcurve run flags...]
#
# Runs `loadcurve run --base-url http://127.0.0.1:$LOADCURVE_ENGINE_PORT/v1 --out OUT FLAGS`,
# reads the print_timing lines the server logged meanwhile (out/engine/run/server.log: per task,
# "prompt eval time = X ms / N tokens" and "eval time = Y ms / M tokens"), pairs them with the
# run's records (tasks in id order, requests in the order they were sent: exact when requests do
# not overlap, --max-concurrency 1, and checked by the token counts either way), and prints the
# p50 and p90 of each difference:
#   TTFT - prompt_ms          what the engine's prompt time leaves out: HTTP, tokenizing and
#                             templating the request, waiting for a slot, the first chunk's trip
#   (last - first) - predicted_ms   the generation seen by the client against the engine's
#   TPOT - predicted_per_token_ms   the same, per token (predicted_ms / (M - 1))
# and the CPU seconds of loadcurve (getrusage of the child) and of llama-server (/proc/PID/stat)
# over the run. Needs the server started with `scripts/real-engine.sh start`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1
shift
port="${LOADCURVE_ENGINE_PORT:-8089}"
log=out/engine/run/server.log
pid=$(cat out/engine/run/server.pid)
bin=$(mktemp -d)/loadcurve
go build -o "$bin" ./cmd/loadcurve
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
offset=$(stat -c %s "$log")
before=$(cpu)
load_before=$(cut -d' ' -f1 /proc/loadavg)
start=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$out.time" "$bin" run --base-url "http://127.0.0.1:$port/v1" --out "$out" "$@" >"$out.txt" 2>&1 || {
	cat "$out.txt" >&2
	exit 1
}
wall=$(echo "$(date +%s.%N) - $start" | bc)
after=$(cpu)
load_after=$(cut -d' ' -f1 /proc/loadavg)
tail -c +"$((offset + 1))" "$log" >"$out.server.log"
python3 - "$out" "$((after - before))" "$ticks" "$wall" "$load_before" "$load_after" <<'PY'
import json, re, sys, statistics
out, server_ticks, ticks, wall, lb, la = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
tasks = {}
for line in open(out + ".server.log", encoding="utf-8", errors="replace"):
    m = re.search(r"print_timing: id +\d+ \| task (\d+) \| +(prompt eval|eval) time = +([\d.]+) ms / +(\d+) tokens", line)
    if m:
        t = tasks.setdefault(int(m.group(1)), {})
        t["prompt" if m.group(2) == "prompt eval" else "gen"] = (float(m.group(3)), int(m.group(4)))
recs = []
for line in open(out + "/records.jsonl", encoding="utf-8"):
    r = json.loads(line)
    if "outcome" in r and r.get("kind") is None:
        recs.append(r)
recs.sort(key=lambda r: r["sent_s"])
ids = sorted(t for t in tasks if "prompt" in tasks[t] and "gen" in tasks[t])
if len(ids) == len(recs) + 1:
    ids = ids[1:]  # the preflight's
if len(ids) != len(recs):
    sys.exit(f"{len(ids)} tasks logged for {len(recs)} records: cannot pair them")
d = {"ttft": [], "gen": [], "tpot": [], "e2el": []}
mismatch = 0
for r, tid in zip(recs, ids):
    t = tasks[tid]
    (pms, pn), (gms, gn) = t["prompt"], t["gen"]
    if r["outcome"] != "ok" or r["first_s"] is None:
        continue
    if r["output_tokens"] != gn:
        mismatch += 1
    ttft = (r["first_s"] - r["sent_s"]) * 1e3
    gen = (r["last_s"] - r["first_s"]) * 1e3
    d["ttft"].append(ttft - pms)
    d["gen"].append(gen - gms)
    d["e2el"].append((r["last_s"] - r["sent_s"]) * 1e3 - pms - gms)
    if gn > 1 and r["output_tokens"] > 1:
        d["tpot"].append(gen / (r["output_tokens"] - 1) - gms / (gn - 1))
def q(v, p):
    v = sorted(v)
    k = (len(v) - 1) * p
    f = int(k)
    return v[f] + (v[min(f + 1, len(v) - 1)] - v[f]) * (k - f)
print(f"{len(recs)} requests paired with the server's tasks; output tokens (usage) differ from the engine's count in {mismatch}")
for k, name in [("ttft", "TTFT - prompt_ms"), ("gen", "(last - first) - predicted_ms"), ("tpot", "TPOT - predicted_per_token_ms"), ("e2el", "E2EL - (prompt_ms + predicted_ms)")]:
    if d[k]:
        print(f"{name:38s} p50 {q(d[k], .5):8.3f} ms   p90 {q(d[k], .9):8.3f} ms   (n={len(d[k])})")
u, s = map(float, open(out + ".time").read().split()[-2:])
print(f"CPU over {wall:.1f} s wall: loadcurve {u + s:.2f} s (user {u:.2f}, system {s:.2f}), llama-server {server_ticks / ticks:.2f} s; load average {lb} -> {la}")
PY
