#!/usr/bin/env bash
# fifo-hold.sh KIND SEED [DIR]: one over-HTTP sweep of an independent FIFO server held to its
# log (docs/PERFORMANCE.md, "Against an independent FIFO server"), on a busy machine. KIND is mdc
# (M/D/8: 8 slots, 320 ms a request, 16 tokens) or mgc (M/G/8: lengths drawn, lognormal, mean 15
# tokens, CV 1). It builds loadcurve, fifoserver and fifotruth into DIR (default /tmp/fifo-hold),
# starts the server on loopback, two busy loops (one per core) and a load-average log, runs a
# default sweep with a 20-minute budget, stops them all, and writes fifotruth's tables to
# DIR/KIND-SEED/truth.out. Nothing is left running.
set -u
kind=${1:?kind: mdc or mgc}; seed=${2:?seed}; top=${3:-/tmp/fifo-hold}
cd "$(dirname "$0")/.."
mkdir -p "$top"
go build -o "$top/loadcurve" ./cmd/loadcurve && go build -o "$top/fifoserver" ./scripts/fifoserver &&
  go build -o "$top/fifotruth" ./scripts/fifotruth || exit 1
port=$((18360 + seed)); d=$top/$kind-$seed
rm -rf "$d"; mkdir -p "$d"
case $kind in
  mdc) srv=(-slots 8); out=16 ;;
  mgc) srv=(-slots 8 -first-token 30ms -token-interval 20ms -output-mean 15 -output-cv 1 -seed "$seed"); out=512 ;;
  *) echo "kind: mdc or mgc, got $kind" >&2; exit 2 ;;
esac
"$top/fifoserver" -addr "127.0.0.1:$port" -log "$d/log.jsonl" "${srv[@]}" >"$d/server.out" 2>&1 &
spid=$!
loops=(); lpid=""
cleanup() { kill "${loops[@]}" "$lpid" "$spid" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
sleep 1
for _ in 1 2; do (while :; do :; done) & loops+=($!); done
(while :; do cat /proc/loadavg >>"$d/load.txt"; sleep 10; done) & lpid=$!
"$top/loadcurve" sweep --base-url "http://127.0.0.1:$port/v1" --model fifo --goodput ttft:100 \
  --random-input-len 32 --random-output-len "$out" --request-id-prefix r --budget 20m --seed "$seed" \
  --out "$d/out" -q >"$d/sweep.out" 2>&1
echo "sweep exit $?" >>"$d/sweep.out"
cleanup; trap - EXIT
"$top/fifotruth" -log "$d/log.jsonl" -sweep "$d/out" -server-timed "$d/st" -as-read "$d/rd" >"$d/truth.out" 2>&1
grep '^Sweep:' "$d/truth.out"
