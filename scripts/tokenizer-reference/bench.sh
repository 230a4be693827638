#!/usr/bin/env bash
# The tokenizer benchmark of docs/PERFORMANCE.md: loadcurve and the two references count the same
# prompts (2,000 synthetic prompts of 1,024 tokens per model family, as `loadcurve workload
# --tokenizer` sizes them), one at a time, on this machine; then loadcurve sizes 100,000.
# Needs `npm ci` in this directory first. Usage: scripts/tokenizer-reference/bench.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/loadcurve" ./cmd/loadcurve
for f in measure/tokens/testdata/models/*.json.xz; do
  fam=$(basename "$f" .json.xz)
  xz -dc "$f" > "$work/$fam.json"
  "$work/loadcurve" workload --tokenizer "$work/$fam.json" --random-input-len 1024 --num-requests 2000 --out "$work/$fam.jsonl" > /dev/null 2>&1
done
echo "== references (node $(node --version))"
node "$here/bench.mjs" "$work" 3
echo "== loadcurve"
go test ./measure/tokens -run XXX -bench 'CountPrompts' -benchtime 3s 2>&1 | grep -E '^Benchmark'
go test ./measure/tokens -run XXX -bench 'SizePrompts' -benchtime 1x 2>&1 | grep -E '^Benchmark'
