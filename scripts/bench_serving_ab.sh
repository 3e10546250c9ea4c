#!/usr/bin/env bash
# Two builds of the example OpenAI server, both with telemetry on, under the
# same load in alternating rounds: whether a change made a served request
# dearer. Requests and shapes as scripts/bench_serving.sh makes them.
#
# Usage: scripts/bench_serving_ab.sh OLD_SERVER NEW_SERVER [SHAPE [ROUNDS [SECONDS]]]
#   SHAPE: unary or streamed (default streamed); 4 rounds of 8 s.
#   A server binary: `cargo build --profile bench --features openai,prometheus
#   --example openai_server` at each commit, in a target directory of its own.
# Needs wrk (`scripts/deps.sh wrk`). Both servers bind 127.0.0.1; every round
# is bounded by SECONDS.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
shape=${3:-streamed}
rounds=${4:-4}
seconds=${5:-8}
case "$shape" in unary | streamed) ;; *) echo "bench_serving_ab: SHAPE is unary or streamed, not '$shape'" >&2; exit 2 ;; esac
connections=256
cd "$(dirname "$0")/.."
. scripts/serving_load.sh

a=$(start_server "$old" 1)
b=$(start_server "$new" 1)
warm "$a" "$shape"
warm "$b" "$shape"
for round in $(seq "$rounds"); do
    # Alternate which goes first: the second of a round does better.
    if [ $((round % 2)) -eq 1 ]; then
        read -r r_old c_old <<<"$(rate "$a" "$shape")"; read -r r_new c_new <<<"$(rate "$b" "$shape")"
    else
        read -r r_new c_new <<<"$(rate "$b" "$shape")"; read -r r_old c_old <<<"$(rate "$a" "$shape")"
    fi
    echo "serving_ab: $shape round $round: old $r_old req/s ($c_old us CPU/request), new $r_new req/s ($c_new us CPU/request): new/old $(python3 -c "print(f'{$r_new / $r_old:.3f}')")x"
done
