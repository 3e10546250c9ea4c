#!/usr/bin/env bash
# Real-server tests of nemo-lens:
#  - OTLP over gRPC and HTTP against in-test receivers built on the official
#    protobuf definitions (lens-core/tests/otlp_export.rs), including a
#    receiver outage mid-run;
#  - `promtool check rules` on what `nemo-lens rules` writes;
#  - Debian's Prometheus scraping the demo every second with the generated
#    rules loaded, and every query of the generated dashboard and rules and
#    of NeMo Lens's dashboard run against it (tests/prometheus_e2e.rs).
# Installs Prometheus (which brings promtool) with apt when either is
# missing. Every server binds 127.0.0.1.
#
# Usage: scripts/e2e.sh            (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
    echo "e2e: installing prometheus and promtool" >&2
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq prometheus >/dev/null
fi
# The Debian package may start a system service on :9090; the test runs its
# own instance on a free port, so that one is left alone.

cargo test -p lens-core --features otlp-tls,prometheus,console --test otlp_export --test prometheus_endpoint

cargo build -p nemo-lens-cli --bin nemo-lens
cargo build --example demo --features prometheus
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

rules="$(mktemp --suffix=.rules.yml)"
trap 'rm -f "$rules"' EXIT
"$target_dir/debug/nemo-lens" rules >"$rules"
promtool check rules "$rules"

NEMO_LENS_DEMO_BIN="$target_dir/debug/examples/demo" \
PROMETHEUS_BIN="$(command -v prometheus)" \
    cargo test --features prometheus --test prometheus_e2e -- --ignored --nocapture
