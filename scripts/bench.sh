#!/usr/bin/env bash
# Runs every benchmark once and prints the tables of BENCHMARKS.md.
# Usage: scripts/bench.sh [> table.md]   (prints how long it took)
set -euo pipefail
started=$SECONDS
cd "$(dirname "$0")/.."
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
cargo bench --features openai --bench record --bench request --bench openai_layer --bench threads --bench scrape --bench memory --bench aggregation --bench groups --bench declared_types 2>/dev/null | tee "$raw" >&2
python3 scripts/bench_report.py "$raw"
# The metrics facade bridge times two recorders on one and two threads with
# a harness of its own, which prints its table itself.
cargo bench --features metrics-bridge --bench metrics_bridge 2>/dev/null
# A scrape of 10,000 bridged series against each crate's own encoder.
cargo bench --features prometheus-crate-bridge,prometheus-client-bridge --bench registry_bridge 2>/dev/null
# One scrape plain and over TLS with basic auth.
cargo bench --features prometheus-tls --bench scrape_tls 2>/dev/null
echo "## Exemplars"
cargo bench --bench exemplars 2>/dev/null
# One thread against hand-written SDK code, in alternating blocks. The
# example server on against off (needs wrk: scripts/deps.sh wrk) and the
# histogram record against one built without exemplars run apart:
# scripts/bench_serving.sh and scripts/bench_exemplars.sh.
echo "## The hot path"
cargo bench --features prometheus --bench hot_path 2>/dev/null
echo "scripts/bench.sh: $((SECONDS - started)) s" >&2
