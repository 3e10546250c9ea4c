#!/usr/bin/env bash
# Every test of nemo-lens, the command the README gives:
#  1. scripts/deps.sh: Debian's prometheus package (with apt-get) and NVIDIA's
#     aiperf (from PyPI, into a venv under the target directory), when missing
#     and when this machine can install them;
#  2. cargo test --workspace --all-features (and the registry bridge's
#     tests again with `prometheus` in its other shape): unit, parity, compile-fail (trybuild),
#     doc (the README's snippets among them), memory, setup/config, the
#     Prometheus endpoint, OTLP (and OTLP over TLS) against in-process
#     receivers built on the official protobuf definitions, and the fault
#     suite (nemo-lens-core/tests/faults/: slow and hostile scrapers,
#     dead/hanging/rejecting receivers, a wrong CA);
#  3. the cells' concurrency protocol, model-checked with loom;
#  4. scripts/consumers.sh: the consumer crates (consumers/), each a user's
#     project that records and checks what it reads back;
#  5. scripts/e2e.sh: a real Prometheus scraping the demo, NVIDIA's aiperf
#     driving the example OpenAI server, plus the OTLP outage tests. A suite
#     whose tools could not be installed is named with the reason; with CI
#     set, that fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Prometheus, promtool and aiperf first: some of the cargo tests use them too.
scripts/deps.sh
cargo test --workspace --all-features
# --all-features builds `prometheus` with its default `protobuf` feature
# (the registry bridge's `test-prometheus-protobuf`), as most users do; the
# registry bridge's tests again with it off, the other shape of its types.
cargo test -p nemo-lens-registry-bridge --features prometheus,prometheus-client
cargo test -p nemo-lens --features prometheus,testing,prometheus-crate-bridge,prometheus-client-bridge \
    --test registry_bridge
# The cells' protocol under loom's model checker (its own target directory:
# the cfg changes every fingerprint).
RUSTFLAGS="--cfg nemo_lens_loom" cargo test -p nemo-lens-core --lib cells \
    --target-dir target/loom
# Small projects of their own that use nemo-lens beside the crates its users
# already have, declared as they declare them (consumers/README.md).
scripts/consumers.sh
scripts/e2e.sh
