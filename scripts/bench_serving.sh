#!/usr/bin/env bash
# The example OpenAI server with telemetry on against the same binary with
# telemetry off (NEMO_LENS_ENABLED=0): requests per second under wrk, 256
# connections, requests that do no work (no time to first token, no time
# between tokens, 8 tokens), unary and streamed, in alternating rounds.
# Prints each round and the median ratio on/off of each shape, in requests
# per second and in the server's CPU time per request (user and system,
# from /proc: steadier than a rate on a machine that others share).
#
# Usage: scripts/bench_serving.sh [ROUNDS [SECONDS [CONNECTIONS]]]
#   defaults: 3 rounds of 5 s per shape and side, 256 connections.
# Needs wrk (Debian's package: `scripts/deps.sh wrk`). Both servers and
# wrk bind or connect to 127.0.0.1 only; every round is bounded by SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-5}
connections=${3:-256}
command -v wrk >/dev/null || { echo "bench_serving: wrk is missing: scripts/deps.sh wrk" >&2; exit 1; }

cargo build --profile bench --features openai,prometheus --example openai_server 2>&1 | tail -1 >&2
server=target/release/examples/openai_server
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# A free port each, from the kernel.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -A pid_of
cpu() { # cpu PORT -> the server's CPU time so far, in clock ticks
    awk '{print $14 + $15}' "/proc/${pid_of[$1]}/stat"
}

start() { # start NAME ENABLED -> prints the port
    local port
    port=$(free_port)
    NEMO_LENS_ENABLED=$2 RUST_LOG=warn "$server" --port "$port" --model bench \
        --ttft-ms 0 --itl-ms 0 --max-running 100000 >"$work/$1.log" 2>&1 &
    pids+=($!)
    echo "$!" >"$work/$1.pid"
    for _ in $(seq 100); do
        if curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
            echo "$port"
            return
        fi
        sleep 0.1
    done
    echo "bench_serving: the $1 server did not start:" >&2
    cat "$work/$1.log" >&2
    exit 1
}

for shape in unary streamed; do
    stream=false
    [ "$shape" = streamed ] && stream=true
    cat >"$work/$shape.lua" <<EOF
wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"bench","max_tokens":8,"stream":$stream,"messages":[{"role":"user","content":"hi"}]}'
EOF
done

on=$(start on 1)
off=$(start off 0)
pid_of[$on]=$(cat "$work/on.pid")
pid_of[$off]=$(cat "$work/off.pid")
ticks=$(getconf CLK_TCK)
echo "bench_serving: telemetry on at :$on, off at :$off; $rounds rounds of ${seconds}s, $connections connections" >&2

rate() { # rate PORT SHAPE -> "requests/s microseconds-of-server-CPU/request"
    local before after out
    before=$(cpu "$1")
    out=$(wrk -t2 -c"$connections" -d"${seconds}s" --timeout 10s -s "$work/$2.lua" \
        "http://127.0.0.1:$1")
    after=$(cpu "$1")
    echo "$out" | awk -v cpu=$((after - before)) -v tck="$ticks" '
        /requests in/ {n = $1} /^Requests\/sec:/ {r = $2}
        END {printf "%s %.2f\n", r, cpu * 1e6 / tck / n}'
}

for shape in unary streamed; do
    # Warm both up (connections, allocator, the first series made).
    wrk -t2 -c"$connections" -d1s -s "$work/$shape.lua" "http://127.0.0.1:$on" >/dev/null
    wrk -t2 -c"$connections" -d1s -s "$work/$shape.lua" "http://127.0.0.1:$off" >/dev/null
    ratios=()
    cpus=()
    for round in $(seq "$rounds"); do
        # Alternate which side goes first, so drift in the machine falls on both.
        if [ $((round % 2)) -eq 1 ]; then
            read -r r_on c_on <<<"$(rate "$on" "$shape")"; read -r r_off c_off <<<"$(rate "$off" "$shape")"
        else
            read -r r_off c_off <<<"$(rate "$off" "$shape")"; read -r r_on c_on <<<"$(rate "$on" "$shape")"
        fi
        ratio=$(python3 -c "print(f'{$r_on / $r_off:.3f}')")
        cpu_ratio=$(python3 -c "print(f'{$c_off / $c_on:.3f}')")
        ratios+=("$ratio")
        cpus+=("$cpu_ratio")
        echo "serving: $shape round $round: on $r_on req/s ($c_on us CPU/request), off $r_off req/s ($c_off us CPU/request): ${ratio}x the rate, ${cpu_ratio}x in CPU"
    done
    median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
    echo "serving: $shape median on/off: $(median "${ratios[@]}")x the rate, $(median "${cpus[@]}")x in CPU per request"
done
