#!/usr/bin/env bash
# soak.sh — a long run against the embedded sim at about 80 % of its capacity, with faults
# injected, sampling the client's memory; then checks that every planned request has one record.
#
#   scripts/soak.sh [DURATION] [RATE] [OUT]      defaults: 1h, 9.75 req/s, out/soak
#
# The default profile's capacity at the sweep's default objectives is about 12.2 req/s (README), so
# 9.75 req/s is ~80 %. Faults: 1 % HTTP errors, 0.5 % stalled streams, 0.5 % dropped connections.
# --bounded-memory: the run summarises on the fly and keeps no records, so its memory should stay flat.
# Writes OUT/rss.tsv (seconds, RSS KiB) beside the run's records.jsonl and summary.json.
set -euo pipefail
duration="${1:-1h}"
rate="${2:-9.75}"
out="${3:-out/soak}"
cd "$(dirname "$0")/.."
mkdir -p "$out"
bin=$(mktemp -d)/loadcurve
go build -o "$bin" ./cmd/loadcurve
# gctrace: the runtime prints the live heap after every collection, the measure of growth that
# RSS (which keeps freed pages for a while) only approximates.
GODEBUG=gctrace=1 "$bin" run --duration "$duration" --request-rate "$rate" --timeout 30s --quiet --bounded-memory --out "$out" \
	--sim-error-rate 0.01 --sim-stall-rate 0.005 --sim-drop-rate 0.005 >"$out/summary.txt" 2>"$out/stderr.txt" &
pid=$!
start=$(date +%s)
printf 'seconds\trss_kib\n' >"$out/rss.tsv"
while kill -0 "$pid" 2>/dev/null; do
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && printf '%s\t%s\n' "$(($(date +%s) - start))" "$rss" >>"$out/rss.tsv"
	sleep 10
done
wait "$pid" || true
"$bin" report "$out" --format json --out "$out/exact" >"$out/report.json" # --out: keep the run's own summary.json
python3 - "$out" <<'PY'
import json, sys, collections
out = sys.argv[1]
lines = open(out + "/records.jsonl").read().splitlines()
reqs = [json.loads(l) for l in lines[1:] if '"kind"' not in l[:12]]
ids = collections.Counter(r["id"] for r in reqs)
outcomes = collections.Counter(r["outcome"] for r in reqs)
tier = [json.loads(l) for l in lines if l.startswith('{"kind":"tier"')][0]
samples = [tuple(map(int, l.split("\t"))) for l in open(out + "/rss.tsv").read().splitlines()[1:]]
rss = [v for _, v in samples]
s = json.load(open(out + "/report.json"))
print(f"planned {tier['planned']}, records {len(reqs)}, distinct ids {len(ids)}, duplicates {sum(1 for v in ids.values() if v > 1)}")
print("outcomes", dict(outcomes))
b = json.load(open(out + "/summary.json"))  # the run's own, bounded-memory summary
worst = max(((abs(b[k] - v) / abs(v), k) for k, v in s.items() if k.endswith("_ms") and (k.startswith("p") or k.startswith("median"))
             and isinstance(v, (int, float)) and v and isinstance(b.get(k), (int, float))), default=(0.0, "none"))
print(f"bounded summary vs exact report: worst relative difference of a median or percentile {100 * worst[0]:.3f} % ({worst[1]})")
print(f"schedule lag p50 {s['median_schedule_lag_ms']:.3f} ms, p99 {s['p99_schedule_lag_ms']:.3f} ms, client_bound {s['client_bound']}")
q = len(rss) // 4 or 1
print(f"RSS KiB: first quarter median {sorted(rss[:q])[q//2]}, last quarter median {sorted(rss[-q:])[q//2]}, max {max(rss)}")
# Growth after the first five minutes (start-up and the first GC cycles): least-squares slope.
late = [(t, v) for t, v in samples if t >= 300] or samples
n = len(late)
mt = sum(t for t, _ in late) / n
mv = sum(v for _, v in late) / n
var = sum((t - mt) ** 2 for t, _ in late)
slope = sum((t - mt) * (v - mv) for t, v in late) / var if var > 0 else 0.0
print(f"RSS growth after 5 min: {slope * 3600 / 1024:.1f} MiB/hour over {n} samples")
# Live heap after each collection, from the runtime's gctrace lines: "gc N @T s ...: A->B->C MB".
import re
live = [(float(m.group(1)), int(m.group(2))) for m in
        re.finditer(r"^gc \d+ @([0-9.]+)s .*?->\d+->(\d+) MB", open(out + "/stderr.txt").read(), re.M)]
late = [(t, v) for t, v in live if t >= 300]
if late:
    q = max(len(late) // 4, 1)
    first, last = sorted(v for _, v in late[:q]), sorted(v for _, v in late[-q:])
    print(f"live heap after GC (MB), after 5 min: first quarter median {first[len(first)//2]}, "
          f"last quarter median {last[len(last)//2]}, max {max(v for _, v in late)}, {len(live)} collections")
PY
