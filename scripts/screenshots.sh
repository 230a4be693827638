#!/usr/bin/env bash
# Renders report.html of every page type to PNG with headless Chromium at 1400×900 (the first
# screen, "above the fold") and at full height, for a person to look at: a sweep of rates, a
# sweep of users, a run, a run of sessions, a comparison and two capacity plans. The results
# are made with the CLI against the embedded simulated deployment, with short settings (a few
# minutes in all).
#
#   scripts/screenshots.sh [OUT]        # OUT defaults to out/screenshots
#
# Needs Go and Chromium (Debian: apt-get install chromium; or set CHROMIUM to its path).
# REUSE=1 keeps results already in OUT/results and only renders the pages again (after a change
# to the report: `loadcurve report` re-derives each page from its records).
# The PNGs are OUT/<page>.png (the first screen) and OUT/<page>-full.png (FULL_HEIGHT px tall).
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-out/screenshots}
res=$out/results
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [[ -z $chromium ]]; then
	echo "screenshots: no chromium found (apt-get install chromium, or set CHROMIUM)" >&2
	exit 1
fi
full_height=${FULL_HEIGHT:-4000}
mkdir -p "$out" "$res"
bin=$(mktemp -d)/loadcurve
go build -o "$bin" ./cmd/loadcurve

# run NAME ARGS...: makes result NAME with the CLI unless REUSE keeps it; logs beside it.
run() {
	local name=$1
	shift
	if [[ -n ${REUSE:-} && -f $res/$name/records.jsonl ]]; then
		return
	fi
	rm -rf "${res:?}/$name"
	echo "screenshots: $name: loadcurve $*" >&2
	"$bin" "$@" --out "$res/$name" --quiet >"$res/$name.log" 2>&1 || {
		cat "$res/$name.log" >&2
		exit 1
	}
}

run rate sweep --min-tier-duration 5s --max-tier-duration 10s --max-tiers 4
run users sweep --max-concurrencies 1,2,4,8 --duration 10s
run run run --request-rate 8 --num-requests 200
run sessions run --workload sessions --session-turns 3 --think-time 200ms --random-input-len 256 \
	--random-output-len 64 --request-rate 4 --num-requests 60
for side in a:latency b:throughput; do
	run "${side%%:*}" sweep --request-rates 4,8,12,16 --duration 8s --goodput ttft:5000 tpot:20 --sim-profile "${side#*:}"
done

# Every page is rendered again from its records (so that a change to the report shows without
# measuring again); compare and plan read the results.
pages=$out/pages
rm -rf "$pages"
mkdir -p "$pages"
for name in rate users run sessions; do
	"$bin" report "$res/$name" --out "$pages/$name" >/dev/null 2>>"$res/report.log"
done
"$bin" compare "$res/a" "$res/b" --a-cost-per-hour 4 --b-cost-per-hour 2.5 --currency USD --out "$pages/compare" >/dev/null
"$bin" plan "$res/rate" --peak 200 --a-cost-per-hour 4 --allow-unverified --out "$pages/plan" >/dev/null 2>&1
printf 'time,rate\n00:00,40\n06:00,120\n09:00,300\n18:00,150\n22:00,60\n' >"$res/day.csv"
"$bin" plan "$res/a" "$res/b" --profile "$res/day.csv" --a-cost-per-hour 4 --b-cost-per-hour 2.5 --scale-up-lag 10m \
	--currency EUR --allow-unverified --out "$pages/plan-ab" >/dev/null 2>&1

# shot PAGE PNG SIZE
shot() {
	local profile
	profile=$(mktemp -d)
	"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$profile" --window-size="$3" \
		--screenshot="$2" "file://$(realpath "$1")" >/dev/null 2>&1
	rm -rf "$profile"
}
for page in rate users run sessions compare plan plan-ab; do
	shot "$pages/$page/report.html" "$out/$page.png" 1400,900
	shot "$pages/$page/report.html" "$out/$page-full.png" "1400,$full_height"
	echo "$out/$page.png"
done
