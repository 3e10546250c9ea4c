#!/usr/bin/env bash
# The example OpenAI server with telemetry on against the same binary with
# telemetry off (NEMO_LENS_ENABLED=0): requests per second under wrk, 256
# connections, requests that do no work (no time to first token, no time
# between tokens, 8 tokens), unary and streamed, in alternating rounds, each
# round run on, off, off, on (or off, on, on, off) in halves, so that
# neither side has the better place in the round.
# Prints each round and the median ratio on/off of each shape, in requests
# per second and in the server's CPU time per request (user and system,
# from /proc: steadier than a rate on a machine that others share).
#
# Usage: scripts/bench_serving.sh [ROUNDS [SECONDS [CONNECTIONS]]]
#   defaults: 3 rounds of 5 s per shape and side (two halves, each rounded
#   up to whole seconds), 256 connections.
# Needs wrk (Debian's package: `scripts/deps.sh wrk`). Both servers and
# wrk bind or connect to 127.0.0.1 only; every round is bounded by SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-5}
connections=${3:-256}
. scripts/serving_load.sh

cargo build --profile bench --features openai,prometheus --example openai_server 2>&1 | tail -1 >&2
server=target/release/examples/openai_server
on=$(start_server "$server" 1)
off=$(start_server "$server" 0)
echo "bench_serving: telemetry on at :$on, off at :$off; $rounds rounds of ${seconds}s, $connections connections" >&2

for shape in unary streamed; do
    warm "$on" "$shape"
    warm "$off" "$shape"
    ratios=()
    cpus=()
    for round in $(seq "$rounds"); do
        # Alternate which side opens the round.
        if [ $((round % 2)) -eq 1 ]; then
            read -r r_on c_on r_off c_off <<<"$(balanced "$on" "$off" "$shape")"
        else
            read -r r_off c_off r_on c_on <<<"$(balanced "$off" "$on" "$shape")"
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
