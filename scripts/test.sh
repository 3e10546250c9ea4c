#!/usr/bin/env bash
# Every test of nemo-lens, the command the README gives:
#  1. cargo test --workspace --all-features: unit, parity, compile-fail (trybuild),
#     doc, memory, setup/config, the Prometheus endpoint, OTLP (and OTLP over
#     TLS) against in-process receivers built on the official protobuf
#     definitions, and the fault suite (lens-core/tests/faults/: slow and
#     hostile scrapers, dead/hanging/rejecting receivers, a wrong CA);
#  2. scripts/e2e.sh: a real Prometheus (Debian's package, installed when
#     missing) scraping the demo, NVIDIA's aiperf (from PyPI) driving the
#     example OpenAI server, plus the OTLP outage tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# Prometheus, promtool and aiperf first: some of the cargo tests use them too.
scripts/deps.sh
cargo test --workspace --all-features
scripts/e2e.sh
