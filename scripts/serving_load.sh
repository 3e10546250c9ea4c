# Sourced by bench_serving.sh and bench_serving_ab.sh: example servers
# started on free ports of 127.0.0.1, wrk's load of chat completions that do
# no work, and the server's CPU time per request from /proc.
#
# Defines: work (a temporary directory, removed at exit with the servers),
# start_server, sample, rate, balanced, warm. The caller sets `connections`,
# `seconds`.

command -v wrk >/dev/null || { echo "$(basename "$0"): wrk is missing: scripts/deps.sh wrk" >&2; exit 1; }

work=$(mktemp -d)
cleanup() {
    # From the pid files: a server is started in the subshell of `$(...)`,
    # whose variables the script never sees.
    for pid_file in "$work"/*.pid; do
        [ -e "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

for load_shape in unary streamed; do
    stream=false
    [ "$load_shape" = streamed ] && stream=true
    cat >"$work/$load_shape.lua" <<LUA
wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"bench","max_tokens":8,"stream":$stream,"messages":[{"role":"user","content":"hi"}]}'
LUA
done

# A free port each, from the kernel.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_server() { # start_server BINARY ENABLED -> prints the port; its pid in $work/PORT.pid
    local port
    port=$(free_port)
    NEMO_LENS_ENABLED=$2 RUST_LOG=warn "$1" --port "$port" --model bench \
        --ttft-ms 0 --itl-ms 0 --max-running 100000 >"$work/$port.log" 2>&1 &
    echo "$!" >"$work/$port.pid"
    for _ in $(seq 100); do
        if curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
            echo "$port"
            return
        fi
        sleep 0.1
    done
    echo "$(basename "$0"): $1 did not start:" >&2
    cat "$work/$port.log" >&2
    exit 1
}

ticks=$(getconf CLK_TCK)
cpu() { # cpu PORT -> the server's CPU time so far, in clock ticks
    awk '{print $14 + $15}' "/proc/$(cat "$work/$1.pid")/stat"
}

sample() { # sample PORT SHAPE SECONDS -> "requests seconds cpu-ticks"
    local before after out
    before=$(cpu "$1")
    out=$(wrk -t2 -c"$connections" -d"${3}s" --timeout 10s -s "$work/$2.lua" \
        "http://127.0.0.1:$1")
    after=$(cpu "$1")
    echo "$out" | awk -v cpu=$((after - before)) '
        /requests in/ {
            n = $1; d = $4; sub(/,$/, "", d)
            if (d ~ /ms$/) { sub(/ms$/, "", d); d /= 1000 }
            else if (d ~ /m$/) { sub(/m$/, "", d); d *= 60 }
            else { sub(/s$/, "", d) }
        }
        END {print n, d, cpu}'
}

per_side() { # per_side SAMPLE... -> "requests/s microseconds-of-server-CPU/request" over them all
    printf '%s\n' "$@" | awk -v tck="$ticks" '
        {n += $1; d += $2; c += $3}
        END {printf "%.2f %.2f\n", n / d, c * 1e6 / tck / n}'
}

rate() { # rate PORT SHAPE -> "requests/s microseconds-of-server-CPU/request"
    per_side "$(sample "$1" "$2" "$seconds")"
}

# A round of two servers in the order A B B A, half of `seconds` each
# (rounded up): each server runs once first and once last, so what favours
# a run's place in the round (the second of two runs did better, by 1-3%,
# in earlier rounds here) falls on both, as does a drift across the round.
balanced() { # balanced PORT_A PORT_B SHAPE -> "rate-a cpu-a rate-b cpu-b" (req/s, us/request)
    local half=$(((seconds + 1) / 2)) a1 b1 b2 a2
    a1=$(sample "$1" "$3" "$half")
    b1=$(sample "$2" "$3" "$half")
    b2=$(sample "$2" "$3" "$half")
    a2=$(sample "$1" "$3" "$half")
    echo "$(per_side "$a1" "$a2") $(per_side "$b1" "$b2")"
}

warm() { # warm PORT SHAPE: connections, allocator, the first series made
    wrk -t2 -c"$connections" -d1s -s "$work/$2.lua" "http://127.0.0.1:$1" >/dev/null
}
