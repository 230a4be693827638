#!/usr/bin/env bash
# report-memory.sh — peak memory and time of `loadcurve report` on a big records file, exact and
# with --bounded-memory. The file is synthetic (scripts/genrecords): N requests of 128 tokens.
#
#   scripts/report-memory.sh [N] [DIR]      defaults: 200000, a temporary directory
set -euo pipefail
n="${1:-200000}"
dir="${2:-$(mktemp -d)}"
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/loadcurve
go build -o "$bin" ./cmd/loadcurve
go run ./scripts/genrecords -n "$n" -out "$dir"
echo "records.jsonl: $n requests, $(du -m "$dir/records.jsonl" | cut -f1) MB"
for mode in exact bounded; do
	flags=(-q --out "$dir/$mode")
	[ "$mode" = bounded ] && flags+=(--bounded-memory)
	/usr/bin/time -f "$mode: peak RSS %M KiB, %e s wall, %U s user" "$bin" report "$dir" "${flags[@]}" >/dev/null
done
