#!/usr/bin/env bash
# Real-server tests of nemo-lens:
#  - OTLP over gRPC and HTTP against in-test receivers built on the official
#    protobuf definitions (lens-core/tests/otlp_export.rs), including a
#    receiver outage mid-run;
#  - `promtool check rules` on what `nemo-lens rules` writes;
#  - Debian's Prometheus scraping the demo every second with the generated
#    rules loaded, and every query of the generated dashboard and rules and
#    of NeMo Lens's dashboard run against it (tests/prometheus_e2e.rs);
#  - Prometheus with native histograms reading exponential histograms, its
#    p99 against the exact one (tests/native_histograms_e2e.rs);
#  - NVIDIA's aiperf driving the example OpenAI server, its figures held
#    against the server's /metrics (tests/aiperf_e2e.rs).
# scripts/deps.sh installs Prometheus (which brings promtool) with apt and
# aiperf from PyPI into a venv under the target directory, when missing.
# Every server binds 127.0.0.1.
#
# Usage: scripts/e2e.sh            (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh

cargo test -p lens-core --features otlp-tls,prometheus,console --test otlp_export --test prometheus_endpoint

cargo build -p nemo-lens-cli --bin nemo-lens
cargo build -p nemo-lens-demo
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

rules="$(mktemp --suffix=.rules.yml)"
trap 'rm -f "$rules"' EXIT
"$target_dir/debug/nemo-lens" rules >"$rules"
promtool check rules "$rules"

NEMO_LENS_DEMO_BIN="$target_dir/debug/demo" \
PROMETHEUS_BIN="$(command -v prometheus)" \
    cargo test --features prometheus --test prometheus_e2e -- --ignored --nocapture

# Native histograms: the p99 from Prometheus against the exact one.
PROMETHEUS_BIN="$(command -v prometheus)" \
PROMTOOL_BIN="$(command -v promtool)" \
    cargo test --features prometheus --test native_histograms_e2e -- --ignored --nocapture

venv="$target_dir/aiperf-venv"

cargo build --release --example openai_server --all-features
E2E_OPENAI_SERVER_BIN="$target_dir/release/examples/openai_server" \
E2E_AIPERF_BIN="$venv/bin/aiperf" \
E2E_AIPERF_TOKENIZER="$target_dir/aiperf-tokenizer" \
    cargo test --test aiperf_e2e -- --ignored --nocapture
