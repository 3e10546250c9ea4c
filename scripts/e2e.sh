#!/usr/bin/env bash
# Real-server tests of nemo-lens, the `#[ignore]`d suites of the facade's
# test binary (tests/suite), run against what `cargo test --workspace
# --all-features` built (the demo, the `nemo-lens` command, the examples):
#  - `promtool check rules` on what `nemo-lens rules` writes;
#  - `nemo-lens top` against the running demo (top_e2e);
#  - Debian's Prometheus scraping the demo every second with the generated
#    rules loaded, and every query of the generated dashboard and rules and
#    of NeMo Lens's dashboard run against it (prometheus_e2e);
#  - Prometheus with native histograms reading exponential histograms, its
#    p99 against the exact one (native_histograms_e2e);
#  - Prometheus reading what the `metrics` facade bridge records, and a
#    bridged `prometheus` registry (metrics_bridge_e2e, registry_bridge_e2e);
#  - exemplars: the example server's sampled requests on its latency
#    buckets in Prometheus 2.42 (OpenMetrics and protobuf) and over OTLP
#    (exemplars_e2e);
#  - Prometheus scraping the demo over TLS with basic auth and client
#    certificates, the web configuration changed under it (web_config_e2e);
#  - a training job's ranks as torchrun and Slurm start them (the demo, four
#    at a time): one run over OTLP through rotel, one port per rank scraped
#    by Prometheus, a collector down at the end (training_e2e);
#  - NVIDIA's aiperf driving the example OpenAI server on chat, Responses,
#    Messages and embeddings, its figures held against the server's
#    /metrics (aiperf_e2e), and through the metering proxy (proxy_e2e).
# The suites that only wait on servers run side by side, all at once;
# aiperf's, whose timings hold only on a machine they do not share, run one
# at a time.
# scripts/deps.sh installs Prometheus (which brings promtool) and aiperf
# (from PyPI into a venv under the target directory) when missing. A suite
# whose tools are still missing is not run: the script names it and why at
# the end, and fails when CI is set. Every server binds 127.0.0.1.
#
# Usage: scripts/e2e.sh [servers|aiperf]   (from anywhere in the repository;
#        both groups when none is named)
# With NEMO_LENS_SUITE_BIN naming the built tests/suite binary (as
# scripts/test.sh does), it runs that binary without cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

groups="${1:-servers aiperf}"
case "$groups" in
    "servers aiperf" | servers | aiperf) ;;
    *) echo "e2e: unknown group '$1' (servers or aiperf)" >&2; exit 2 ;;
esac
wants() { [[ " $groups " == *" $1 "* ]]; }

case "$groups" in
    *aiperf*) scripts/deps.sh ;;
    *) scripts/deps.sh system ;;
esac

not_run=()
skip() { not_run+=("$1: $2"); }

target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
if [ -z "${NEMO_LENS_SUITE_BIN:-}" ]; then
    # The binaries the suites run, as `cargo test --workspace --all-features`
    # builds them (the same command builds nothing new when they are there;
    # `--workspace`: the features the test build unified).
    NEMO_LENS_SUITE_BIN="$(cargo test --workspace --all-features --no-run --message-format=json-render-diagnostics \
        | scripts/suite_bin.py)"
fi
export NEMO_LENS_DEMO_BIN="$target_dir/debug/demo"
export NEMO_LENS_BIN="$target_dir/debug/nemo-lens"
export E2E_OPENAI_SERVER_BIN="$target_dir/debug/examples/openai_server"
export E2E_OPENAI_PROXY_BIN="$target_dir/debug/examples/openai_proxy"
export E2E_PROMETHEUS_REGISTRY_BIN="$target_dir/debug/examples/prometheus_registry"
prometheus_bin="$(command -v prometheus || true)"
promtool_bin="$(command -v promtool || true)"
venv="$target_dir/aiperf-venv"

# Run as cargo runs a test binary: from the package's directory (the
# facade's is the repository's root).
suite() { "$NEMO_LENS_SUITE_BIN" --ignored --nocapture "$@"; }

if wants servers; then
    if [ -n "$promtool_bin" ]; then
        rules="$(mktemp --suffix=.rules.yml)"
        trap 'rm -f "$rules"' EXIT
        "$NEMO_LENS_BIN" rules >"$rules"
        promtool check rules "$rules"
    else
        skip "promtool check rules (the generated rules)" "promtool is not installed (Debian's prometheus package)"
    fi

    # `nemo-lens top` needs nothing installed.
    waiting=(top_e2e::)
    if [ -n "$prometheus_bin" ]; then
        export PROMETHEUS_BIN="$prometheus_bin"
        waiting+=(prometheus_e2e:: metrics_bridge_e2e:: registry_bridge_e2e:: exemplars_e2e:: web_config_e2e::)
    else
        skip "prometheus_e2e, metrics_bridge_e2e, registry_bridge_e2e, exemplars_e2e, web_config_e2e (Prometheus scraping the demo, the bridges and the example server, and over TLS)" "prometheus is not installed (Debian's prometheus package)"
    fi
    rotel_bin="$(ls "$target_dir"/rotel-venv/lib/python3*/site-packages/rotel/rotel-agent 2>/dev/null | head -n 1 || true)"
    if [ -n "$prometheus_bin" ] && [ -n "$rotel_bin" ]; then
        export ROTEL_BIN="$rotel_bin"
        waiting+=(training_e2e::)
    else
        skip "training_e2e (four ranks over OTLP through rotel, and scraped by Prometheus)" "rotel (scripts/deps.sh installs it from PyPI) or prometheus is missing"
    fi
    if [ -n "$prometheus_bin" ] && [ -n "$promtool_bin" ]; then
        export PROMTOOL_BIN="$promtool_bin"
        waiting+=(native_histograms_e2e::)
    else
        skip "native_histograms_e2e (native histograms in Prometheus)" "prometheus or promtool is not installed (Debian's prometheus package)"
    fi
    suite --test-threads="${#waiting[@]}" "${waiting[@]}"
fi

if wants aiperf; then
    if [ -x "$venv/bin/aiperf" ] && [ -f "$target_dir/aiperf-tokenizer/tokenizer.json" ]; then
        E2E_AIPERF_BIN="$venv/bin/aiperf" \
        E2E_AIPERF_TOKENIZER="$target_dir/aiperf-tokenizer" \
            suite --test-threads=1 aiperf_e2e:: goodput_e2e:: proxy_e2e::
    else
        skip "aiperf_e2e, goodput_e2e, proxy_e2e (aiperf against the example OpenAI server and the metering proxy)" "aiperf or its tokenizer is missing from $venv (scripts/deps.sh installs it from PyPI)"
    fi
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
