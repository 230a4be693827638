#!/usr/bin/env bash
# real-engine.sh — a real inference engine on this machine's CPU: llama.cpp's own HTTP server
# (llama-server: its continuous batching, slots, streaming, /metrics), built from the llama.cpp
# sources that npm's node-llama-cpp package carries, serving a small model the repository makes
# (scripts/makegguf: seeded random weights, Qwen3's vocabulary). Nothing is downloaded but the npm
# package, Debian's cmake (when missing) and Go modules.
#
#   scripts/real-engine.sh setup     build llama-server (minutes on 2 cores; reused when built)
#   scripts/real-engine.sh start     make the model if missing, start llama-server on 127.0.0.1,
#                                    wait for /health, print the base URL (loadcurve's --base-url)
#   scripts/real-engine.sh stop      stop it (by its pidfile)
#   scripts/real-engine.sh status    say whether it runs, and where
#
# Settings (environment; the defaults in brackets):
#   LOADCURVE_ENGINE_DIR       where the package, the sources and the build go [out/engine];
#                              a directory that already holds llama.cpp/build/bin/llama-server
#                              (e.g. one built by hand) is reused as it is. The model and the
#                              running server's files stay in out/engine of this checkout.
#   LOADCURVE_ENGINE_PORT      the loopback port [8089]
#   LOADCURVE_ENGINE_PARALLEL  llama-server's --parallel, its slots [4]
#   LOADCURVE_ENGINE_CTX       llama-server's -c, the context of all slots together [4096]
#   LOADCURVE_ENGINE_THREADS   llama-server's --threads [1]: on 2 shared cores, 2 threads spin at each
#                              barrier while other work holds a core; measured 352 ms a token
#                              with 2, 32-70 ms with 1, load average 4
#   LOADCURVE_ENGINE_MODEL     the GGUF file served [out/engine/model.gguf]
#   LOADCURVE_ENGINE_MODEL_FLAGS  flags for go run ./scripts/makegguf when it makes the model [none]
#   LOADCURVE_ENGINE_ALIAS     the model's name in the API (--alias) [tiny-random-qwen3vocab]
#   LOADCURVE_ENGINE_VALID_UTF8  1: bias away (--logit-bias ID-100) the 1,448 tokens of the vocabulary
#                              whose bytes are no valid UTF-8 by themselves [1]. A random model
#                              strings them at random, and llama-server ends such a response with
#                              an error event instead of its last chunk (its chat parser refuses
#                              invalid UTF-8: "does not match the expected Content-only format"),
#                              about 30 % of 32-token responses; 0 serves the model as it is
#   LOADCURVE_ENGINE_ARGS      more llama-server flags [none]
#   LOADCURVE_ENGINE_CPUS      the CPUs the server may run on (taskset -c LIST) [any]: give it a core
#                              of its own (e.g. 0, and run loadcurve with taskset -c 1) so that a
#                              truth measured on it does not move with the machine's other work
#   LOADCURVE_ENGINE_JOBS      build parallelism [2]
#
# The state of a started server is in out/engine/run/: server.pid, server.log (the
# server's own log, with its per-request timings: prompt eval and eval times), and
# qwen3-tokenizer.json beside the model (loadcurve's --tokenizer for the model's vocabulary).
#
# Example, from the repository's root:
#   scripts/real-engine.sh setup && url=$(scripts/real-engine.sh start)
#   go run ./cmd/loadcurve run --base-url "$url" --tokenizer out/engine/run/qwen3-tokenizer.json \
#       --request-rate 1 --num-requests 20 --random-input-len 64 --random-output-len 32 --out out/real
#   scripts/real-engine.sh stop
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)

NLC_VERSION=3.21.1 # node-llama-cpp: its llama/gitRelease.bundle is llama.cpp (its release v0.4.0)
# The package's integrity as the registry states it (npm view node-llama-cpp@3.21.1 dist.integrity);
# a tarball that does not match stops setup.
NLC_INTEGRITY="sha512-E3N0Ev2Va0wzydvXYFwM9Hvyo07PoWjt8T/9GMc43Cvt8YkV/NU/tYUgEMC1grTPv2o9PRjQi0G3Wb5P/awiMg=="

dir="${LOADCURVE_ENGINE_DIR:-$root/out/engine}"
case "$dir" in /*) ;; *) dir="$root/$dir" ;; esac
port="${LOADCURVE_ENGINE_PORT:-8089}"
parallel="${LOADCURVE_ENGINE_PARALLEL:-4}"
ctx="${LOADCURVE_ENGINE_CTX:-4096}"
threads="${LOADCURVE_ENGINE_THREADS:-1}"
jobs="${LOADCURVE_ENGINE_JOBS:-2}"
alias="${LOADCURVE_ENGINE_ALIAS:-tiny-random-qwen3vocab}"
valid_utf8="${LOADCURVE_ENGINE_VALID_UTF8:-1}"
src="$dir/llama.cpp"
server="$src/build/bin/llama-server"
rundir="$root/out/engine/run"
model="${LOADCURVE_ENGINE_MODEL:-$root/out/engine/model.gguf}"
pidfile="$rundir/server.pid"
log="$rundir/server.log"

say() { echo "real-engine: $*" >&2; }
die() { say "$*"; exit 1; }

setup() {
	if [ -x "$server" ]; then
		say "llama-server already built: $server"
		return
	fi
	mkdir -p "$dir"
	for tool in cmake g++ git npm openssl; do
		if ! command -v "$tool" >/dev/null; then
			case "$tool" in
			cmake | g++ | git | openssl)
				say "installing $tool (Debian)"
				apt-get install -y "$tool" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$tool" >/dev/null; }
				;;
			*) die "$tool is missing: it comes with Node.js" ;;
			esac
		fi
	done
	if [ ! -d "$src/.git" ]; then
		local tgz="$dir/node-llama-cpp-$NLC_VERSION.tgz"
		if [ ! -f "$tgz" ]; then
			say "npm pack node-llama-cpp@$NLC_VERSION (about 35 MB)"
			(cd "$dir" && npm pack --silent "node-llama-cpp@$NLC_VERSION" >/dev/null)
		fi
		got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
		[ "$got" = "$NLC_INTEGRITY" ] || die "$tgz: integrity $got, not $NLC_INTEGRITY"
		rm -rf "$dir/pkg" && mkdir -p "$dir/pkg"
		tar -xzf "$tgz" -C "$dir/pkg" package/llama/gitRelease.bundle package/llama/binariesGithubRelease.json
		say "cloning llama.cpp from the package's git bundle"
		git -c advice.detachedHead=false clone --quiet "$dir/pkg/package/llama/gitRelease.bundle" "$src"
	fi
	say "building llama-server with $jobs jobs (about 30 minutes on 2 cores; log: $dir/build.log)"
	cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
		-DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$dir/build.log" 2>&1 ||
		die "cmake configure failed: see $dir/build.log"
	cmake --build "$src/build" --target llama-server -j "$jobs" >>"$dir/build.log" 2>&1 ||
		die "the build failed: see $dir/build.log"
	[ -x "$server" ] || die "no $server after the build: see $dir/build.log"
	say "built $server"
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
	[ -x "$server" ] || die "no llama-server at $server: run '$0 setup' first"
	if running; then
		say "already running (pid $(cat "$pidfile"))"
		echo "http://127.0.0.1:$port/v1"
		return
	fi
	mkdir -p "$rundir"
	if [ ! -f "$model" ]; then
		[ -d scripts/makegguf ] || die "no $model, and no scripts/makegguf to make it with"
		say "making the model: go run ./scripts/makegguf -out $model ${LOADCURVE_ENGINE_MODEL_FLAGS:-}"
		# shellcheck disable=SC2086 # the flags are words
		go run ./scripts/makegguf -out "$model" ${LOADCURVE_ENGINE_MODEL_FLAGS:-}
	fi
	if [ ! -f "$rundir/qwen3-tokenizer.json" ]; then
		xz -dc measure/tokens/testdata/models/qwen3.json.xz >"$rundir/qwen3-tokenizer.json.tmp"
		mv "$rundir/qwen3-tokenizer.json.tmp" "$rundir/qwen3-tokenizer.json"
	fi
	local bias=()
	if [ "$valid_utf8" = 1 ]; then
		# The byte-level vocabulary (GPT-2's byte-to-character map) decoded to bytes: the ids
		# whose bytes do not decode as UTF-8 on their own.
		mapfile -t bias < <(python3 - "$rundir/qwen3-tokenizer.json" <<'PY'
import json, sys
vocab = json.load(open(sys.argv[1], encoding="utf-8"))["model"]["vocab"]
bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
cs, n = bs[:], 0
for b in range(256):
    if b not in bs:
        bs.append(b)
        cs.append(256 + n)
        n += 1
byte = {chr(c): b for b, c in zip(bs, cs)}
for tok, i in sorted(vocab.items(), key=lambda kv: kv[1]):
    try:
        bytes(byte[ch] for ch in tok).decode("utf-8")
    except KeyError:
        pass
    except UnicodeDecodeError:
        print("--logit-bias")
        print(f"{i}-100")
PY
		)
	fi
	say "starting llama-server on 127.0.0.1:$port (--parallel $parallel, -c $ctx, --threads $threads, $((${#bias[@]} / 2)) tokens biased away; log: $log)"
	# setsid: the server has its own process group, so a Ctrl-C in this shell does not reach it.
	# shellcheck disable=SC2086 # LOADCURVE_ENGINE_ARGS are words
	pin=()
	if [ -n "${LOADCURVE_ENGINE_CPUS:-}" ]; then
		command -v taskset >/dev/null || die "LOADCURVE_ENGINE_CPUS needs taskset (Debian's util-linux)"
		pin=(taskset -c "$LOADCURVE_ENGINE_CPUS")
		say "pinned to CPUs $LOADCURVE_ENGINE_CPUS"
	fi
	setsid "${pin[@]}" "$server" -m "$model" --alias "$alias" --host 127.0.0.1 --port "$port" --parallel "$parallel" -c "$ctx" \
		--threads "$threads" --metrics --slots --no-webui --log-timestamps "${bias[@]}" \
		${LOADCURVE_ENGINE_ARGS:-} >"$log" 2>&1 </dev/null &
	echo $! >"$pidfile"
	for _ in $(seq 1 600); do # at most 60 s
		if ! running; then
			tail -20 "$log" >&2
			rm -f "$pidfile"
			die "llama-server exited: see $log"
		fi
		if curl -fsS "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"ok"'; then
			say "ready (pid $(cat "$pidfile"))"
			echo "http://127.0.0.1:$port/v1"
			return
		fi
		sleep 0.1
	done
	stop
	die "no healthy answer from /health within 60 s: see $log"
}

stop() {
	if ! [ -f "$pidfile" ]; then
		say "not running (no pidfile)"
		return
	fi
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
		say "stopped (pid $pid)"
	else
		say "not running (stale pidfile, pid $pid)"
	fi
	rm -f "$pidfile"
}

status() {
	if running; then
		echo "running: pid $(cat "$pidfile"), http://127.0.0.1:$port/v1, log $log"
	else
		echo "not running"
		return 1
	fi
}

case "${1:-}" in
setup) setup ;;
start) start ;;
stop) stop ;;
status) status ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
