#!/usr/bin/env bash
# Real-server tests of nemo-lens:
#  - OTLP over gRPC and HTTP against in-test receivers built on the official
#    protobuf definitions (nemo-lens-core/tests/otlp_export.rs), including a
#    receiver outage mid-run;
#  - `promtool check rules` on what `nemo-lens rules` writes;
#  - Debian's Prometheus scraping the demo every second with the generated
#    rules loaded, and every query of the generated dashboard and rules and
#    of NeMo Lens's dashboard run against it (tests/prometheus_e2e.rs);
#  - Prometheus with native histograms reading exponential histograms, its
#    p99 against the exact one (tests/native_histograms_e2e.rs);
#  - Prometheus reading what the `metrics` facade bridge records: native
#    histograms and the names as written (tests/metrics_bridge_e2e.rs);
#  - exemplars: the example server's sampled requests on its latency
#    buckets in Prometheus 2.42 (OpenMetrics and protobuf) and over OTLP
#    (tests/exemplars_e2e.rs);
#  - NVIDIA's aiperf driving the example OpenAI server on chat, Responses,
#    Messages and embeddings, its figures held against the server's
#    /metrics (tests/aiperf_e2e.rs), and through the metering proxy, against
#    the proxy's (tests/proxy_e2e.rs).
# scripts/deps.sh installs Prometheus (which brings promtool) with apt-get and
# aiperf from PyPI into a venv under the target directory, when missing. A
# suite whose tools are still missing is not run: the script names it and
# why at the end, and fails when CI is set. Every server binds 127.0.0.1.
#
# Usage: scripts/e2e.sh            (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh

not_run=()
skip() { not_run+=("$1: $2"); }

cargo test -p nemo-lens-core --features otlp-tls,prometheus,console --test otlp_export --test prometheus_endpoint --test metrics_bridge_otlp --test registry_bridge_otlp

cargo build -p nemo-lens-cli --bin nemo-lens
cargo build -p nemo-lens-demo
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
prometheus_bin="$(command -v prometheus || true)"
promtool_bin="$(command -v promtool || true)"

# nemo-lens top against the running demo (needs nothing installed).
NEMO_LENS_DEMO_BIN="$target_dir/debug/demo" \
NEMO_LENS_BIN="$target_dir/debug/nemo-lens" \
    cargo test --test top_e2e -- --ignored --nocapture

if [ -n "$promtool_bin" ]; then
    rules="$(mktemp --suffix=.rules.yml)"
    trap 'rm -f "$rules"' EXIT
    "$target_dir/debug/nemo-lens" rules >"$rules"
    promtool check rules "$rules"
else
    skip "promtool check rules (the generated rules)" "promtool is not installed (Debian's prometheus package)"
fi

if [ -n "$prometheus_bin" ]; then
    NEMO_LENS_DEMO_BIN="$target_dir/debug/demo" \
    PROMETHEUS_BIN="$prometheus_bin" \
        cargo test --features prometheus --test prometheus_e2e -- --ignored --nocapture
else
    skip "tests/prometheus_e2e.rs (Prometheus scraping the demo)" "prometheus is not installed (Debian's prometheus package)"
fi

# Native histograms: the p99 from Prometheus against the exact one.
if [ -n "$prometheus_bin" ] && [ -n "$promtool_bin" ]; then
    PROMETHEUS_BIN="$prometheus_bin" \
    PROMTOOL_BIN="$promtool_bin" \
        cargo test --features prometheus --test native_histograms_e2e -- --ignored --nocapture
else
    skip "tests/native_histograms_e2e.rs (native histograms in Prometheus)" "prometheus or promtool is not installed (Debian's prometheus package)"
fi

# The metrics facade bridge: Prometheus reads its unmatched histogram as a
# native one and its series under the names they were written with.
if [ -n "$prometheus_bin" ]; then
    PROMETHEUS_BIN="$prometheus_bin" \
        cargo test --features metrics-bridge,prometheus --test metrics_bridge_e2e -- --ignored --nocapture
else
    skip "tests/metrics_bridge_e2e.rs (Prometheus reading the metrics bridge)" "prometheus is not installed (Debian's prometheus package)"
fi

if [ -n "$prometheus_bin" ]; then
    cargo build --example prometheus_registry --features prometheus,prometheus-crate-bridge
    E2E_PROMETHEUS_REGISTRY_BIN="$target_dir/debug/examples/prometheus_registry" \
    PROMETHEUS_BIN="$prometheus_bin" \
        cargo test --features prometheus,prometheus-crate-bridge --test registry_bridge_e2e -- --ignored --nocapture
else
    skip "tests/registry_bridge_e2e.rs (Prometheus scraping a bridged prometheus registry)" "prometheus is not installed (Debian's prometheus package)"
fi

# Exemplars: the example server's sampled requests on its latency buckets,
# read back from Prometheus (OpenMetrics and protobuf) and over OTLP.
if [ -n "$prometheus_bin" ]; then
    cargo build --release --example openai_server --all-features
    E2E_OPENAI_SERVER_BIN="$target_dir/release/examples/openai_server" \
    PROMETHEUS_BIN="$prometheus_bin" \
        cargo test --test exemplars_e2e -- --ignored --nocapture
else
    skip "tests/exemplars_e2e.rs (exemplars in Prometheus and over OTLP)" "prometheus is not installed (Debian's prometheus package)"
fi

venv="$target_dir/aiperf-venv"
if [ -x "$venv/bin/aiperf" ] && [ -f "$target_dir/aiperf-tokenizer/tokenizer.json" ]; then
    cargo build --release --example openai_server --example openai_proxy --all-features
    # One test at a time: their timings hold only on a machine they do not
    # share with another aiperf run.
    E2E_OPENAI_SERVER_BIN="$target_dir/release/examples/openai_server" \
    E2E_OPENAI_PROXY_BIN="$target_dir/release/examples/openai_proxy" \
    E2E_AIPERF_BIN="$venv/bin/aiperf" \
    E2E_AIPERF_TOKENIZER="$target_dir/aiperf-tokenizer" \
        cargo test --test aiperf_e2e --test proxy_e2e -- --ignored --nocapture --test-threads=1
else
    skip "tests/aiperf_e2e.rs, tests/proxy_e2e.rs (aiperf against the example OpenAI server and the metering proxy)" "aiperf or its tokenizer is missing from $venv (scripts/deps.sh installs it from PyPI)"
fi

if [ ${#not_run[@]} -gt 0 ]; then
    echo >&2
    echo "e2e: ${#not_run[@]} end-to-end suite(s) not run:" >&2
    printf '  - %s\n' "${not_run[@]}" >&2
    if [ -n "${CI:-}" ]; then
        echo "e2e: CI is set, so a suite not run is a failure" >&2
        exit 1
    fi
fi
