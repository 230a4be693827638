#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target of the module, one at a time, for a short time each.
#
#   scripts/fuzz.sh [FUZZTIME] [PACKAGES...]
#
# FUZZTIME is go test's -fuzztime (default 5s; e.g. 30s, or 100000x for a number of runs).
# PACKAGES default to every package of the module (go list ./...) whose tests define a Fuzz
# function; targets are found with `go test -list '^Fuzz'`, so a new Fuzz function is picked up
# without editing this script.
# FUZZ_PARALLEL sets -parallel, the number of fuzzing workers (default: GOMAXPROCS).
#
# Every target runs even after one fails; the script exits 1 if any target failed (a crash, a
# failing corpus entry) or a package could not be listed (it does not build). A crashing input
# is written by go test to the package's testdata/fuzz/<Target>/ directory: commit it, and it
# becomes a regression test that every plain `go test` runs.
#
# Go 1.26 and older sometimes end a duration-bounded run with a bare "context deadline exceeded"
# and no failing input (https://go.dev/issue/75804, fixed in Go 1.27): that is the fuzz
# coordinator's shutdown race, not a finding, so it is reported as a warning. A count (100000x)
# avoids it.
set -uo pipefail

fuzztime="${1:-5s}"
shift || true
cd "$(dirname "$0")/.." || exit 1
if [ "$#" -eq 0 ]; then
	# Only the packages whose tests define a fuzz target are listed (go test -list builds a
	# package's tests: building every package's took most of CI's fuzz pass).
	mapfile -t dirs < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...) || exit 1
	pkgs=()
	for d in "${dirs[@]}"; do
		if grep -qs '^func Fuzz' "${d#* }"/*_test.go; then
			pkgs+=("${d%% *}")
		fi
	done
else
	pkgs=("$@")
fi

parallel=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

failed=()
targets=()
for pkg in "${pkgs[@]}"; do
	if ! listing="$(go test -list '^Fuzz' "$pkg" 2>&1)"; then
		printf '%s\n' "$listing" >&2
		failed+=("$pkg: listing its fuzz targets failed")
		continue
	fi
	while IFS= read -r name; do
		targets+=("$pkg $name")
	done < <(grep -E '^Fuzz[A-Za-z0-9_]*$' <<<"$listing")
done

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
warned=0
for t in "${targets[@]+"${targets[@]}"}"; do
	read -r pkg name <<<"$t"
	echo "=== $name ($pkg), $fuzztime"
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "${parallel[@]+"${parallel[@]}"}" "$pkg" 2>&1 | tee "$out"; then
		continue
	fi
	if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written' "$out" &&
		! grep -qE -- '--- FAIL: Fuzz[A-Za-z0-9_]*/' "$out"; then
		echo "fuzz.sh: warning: $name ended with Go's spurious 'context deadline exceeded' (go.dev/issue/75804), no failing input"
		warned=$((warned + 1))
		continue
	fi
	failed+=("$name ($pkg)")
done

echo
if [ "${#targets[@]}" -eq 0 ] && [ "${#failed[@]}" -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets in ${pkgs[*]}" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz.sh: ${#failed[@]} failure(s) over ${#targets[@]} fuzz targets:"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "fuzz.sh: all ${#targets[@]} fuzz targets ran for $fuzztime each without a failure ($warned spurious deadline warning(s))"
