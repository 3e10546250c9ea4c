#!/usr/bin/env bash
# The example OpenAI server's own instructions per request, telemetry on
# and off, under callgrind: what a served request costs in user space,
# counted rather than timed (this machine's rates swing 10% round to round).
# The kernel's share (the TCP path, 40% of a request's CPU in a `perf`
# profile) is not counted, and is the same on and off.
#
# For each shape and side, the server serves FEW then MANY requests one at a
# time (curl, a connection each) and the difference is divided by
# MANY - FEW, so start-up, the first series made and shut-down cancel out.
# Run to run the counts agree to about 3,000 instructions.
#
# Usage: scripts/serving_instructions.sh [FEW [MANY]]   (defaults 50 250)
#   SERVER=path/to/openai_server counts that build instead of building one
#   (an older commit's, to compare).
#   KEEP=DIR keeps callgrind's outputs there (cg.ENABLED.STREAM.REQUESTS),
#   to see where the difference goes: `callgrind_annotate --inclusive=yes`
#   on each, a function's count in the MANY run less its count in the FEW.
# Needs valgrind (Debian's package: `scripts/deps.sh valgrind`), curl and
# python3.
# The server binds 127.0.0.1 only.
set -euo pipefail
# A failed request inside `$(count ...)` stops the script rather than
# leaving a count short of requests.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
few=${1:-50}
many=${2:-250}
command -v valgrind >/dev/null || { echo "serving_instructions: valgrind is missing: scripts/deps.sh valgrind" >&2; exit 1; }
server=${SERVER:-}
if [ -z "$server" ]; then
    cargo build --profile bench --features openai,prometheus --example openai_server 2>&1 | tail -1 >&2
    server=${CARGO_TARGET_DIR:-target}/release/examples/openai_server
fi

work=$(mktemp -d)
trap 'kill "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

count() { # count ENABLED STREAM REQUESTS -> instructions of the whole run
    local port out="$work/cg.$1.$2.$3"
    port=$(free_port)
    NEMO_LENS_ENABLED=$1 RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$server" --port "$port" --model bench --ttft-ms 0 --itl-ms 0 --max-running 100000 \
        >"$work/log" 2>&1 &
    echo "$!" >"$work/pid"
    local up=false
    for _ in $(seq 300); do
        if curl -fsS --max-time 2 "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
            up=true
            break
        fi
        sleep 0.2
    done
    if ! $up; then
        echo "serving_instructions: the server did not start:" >&2
        cat "$work/log" >&2
        exit 1
    fi
    for _ in $(seq "$3"); do
        curl -fsS -N --max-time 30 "http://127.0.0.1:$port/v1/chat/completions" \
            -H 'Content-Type: application/json' \
            -d "{\"model\":\"bench\",\"max_tokens\":8,\"stream\":$2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" >/dev/null
    done
    # SIGINT: the server shuts down and callgrind writes its counts; TERM
    # after 60 s if it has not (the counts are then missing, and awk says
    # nothing).
    local pid
    pid=$(cat "$work/pid")
    kill -INT "$pid"
    for _ in $(seq 600); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP"
        cp "$out" "$KEEP/"
    fi
    awk '/^summary:/ {print $2; exit}' "$out"
}

declare -A per
for shape in unary streamed; do
    stream=false
    [ "$shape" = streamed ] && stream=true
    for enabled in 1 0; do
        a=$(count "$enabled" "$stream" "$few")
        b=$(count "$enabled" "$stream" "$many")
        per[$enabled]=$(( (b - a) / (many - few) ))
    done
    python3 -c "import sys; on, off = int(sys.argv[2]), int(sys.argv[3]); print(f'serving_instructions: {sys.argv[1]}: on {on} off {off} instructions/request: telemetry {on - off} ({on / off:.3f}x)')" "$shape" "${per[1]}" "${per[0]}"
done
