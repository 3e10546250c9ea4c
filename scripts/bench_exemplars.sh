#!/usr/bin/env bash
# A histogram record with the exemplar filter `always_off`, and `trace_based`
# with no span current, against the same record built without exemplar
# storage or code (RUSTFLAGS="--cfg nemo_lens_no_exemplars", its own target
# directory): benches/hot_path.rs's two histogram pairs from both builds,
# run alternately ROUNDS times; prints each run and the median ratios.
#
# Usage: scripts/bench_exemplars.sh [ROUNDS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
target=${CARGO_TARGET_DIR:-target}
build() { # build TARGET_DIR [RUSTFLAGS] -> the bench binary
    RUSTFLAGS="${2:-}" cargo bench --no-run --features prometheus --bench hot_path \
        --target-dir "$1" --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "hot_path" and m.get("executable"):
        print(m["executable"])'
}
with=$(build "$target")
without=$(build "$target/no-exemplars" "--cfg nemo_lens_no_exemplars")
python3 - "$with" "$without" "$rounds" <<'PY'
import re, statistics, subprocess, sys
with_bin, without_bin, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
row = re.compile(r"hot_path: (histogram \w+) \| always_off: ([\d.]+) ns \| trace_based: ([\d.]+) ns")
def run(binary):
    out = subprocess.run([binary, "--only", "histogram"], capture_output=True, text=True, check=True).stdout
    return {m[1]: (float(m[2]), float(m[3])) for m in row.finditer(out)}
ratios = {}
for r in range(rounds):
    # Alternate which build goes first.
    a, b = (run(with_bin), run(without_bin)) if r % 2 == 0 else reversed((run(without_bin), run(with_bin)))
    for level in a:
        off, on = a[level]
        ref = statistics.mean(b[level])  # compiled out: the two filters are the same code
        ratios.setdefault(level, []).append((off / ref, on / ref))
        print(f"exemplars: {level} run {r + 1}: always_off {off:.2f} ns, trace_based (no span) {on:.2f} ns, compiled out {ref:.2f} ns")
for level, rs in ratios.items():
    off = statistics.median(x for x, _ in rs)
    on = statistics.median(y for _, y in rs)
    print(f"exemplars: {level}: always_off {off:.3}x, trace_based with no span {on:.3}x of compiled out (median of {len(rs)} runs)")
PY
