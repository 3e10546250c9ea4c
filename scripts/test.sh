#!/usr/bin/env bash
# Every test of nemo-lens, the command the README gives:
#  1. scripts/deps.sh: Debian's prometheus package (with apt-get) first, and
#     NVIDIA's aiperf (from PyPI, into a venv under the target directory)
#     while cargo builds, when missing and when this machine can install
#     them;
#  2. cargo test --workspace --all-features, built once and run: each
#     crate's unit tests, one integration-test binary per crate (the
#     facade's tests/suite, the setup and exporters' tests/telemetry, the
#     model's, the CLI's, the demo's; the fault suite apart in
#     nemo-lens-telemetry/tests/faults: slow and hostile scrapers,
#     dead/hanging/rejecting receivers, a wrong CA), parity, compile-fail
#     (trybuild), doc tests (the README's snippets among them), OTLP (and
#     OTLP over TLS) against in-process receivers built on the official
#     protobuf definitions;
#  3. the registry bridge's tests again with `prometheus` in its other shape;
#  4. the cells' concurrency protocol, model-checked with loom;
#  5. scripts/consumers.sh: the consumer crates (consumers/), each a user's
#     project that records and checks what it reads back;
#  6. scripts/e2e.sh: the end-to-end suites against real servers (a real
#     Prometheus scraping the demo, NVIDIA's aiperf driving the example
#     OpenAI server, ...). A suite whose tools could not be installed is
#     named with the reason; with CI set, that fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Tests need neither an incremental cache nor full debug info: without
# them a run takes about half the time and disk (a developer's own
# settings win).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p "$target_dir"

# Prometheus, promtool and protoc first: some of the cargo tests use them.
scripts/deps.sh system
# aiperf waits on the network, not the cores: it installs while cargo builds.
scripts/deps.sh aiperf >"$target_dir/aiperf-install.log" 2>&1 &
aiperf=$!

cargo test --workspace --all-features --no-run
cargo test --workspace --all-features
# --all-features builds `prometheus` with its default `protobuf` feature
# (the registry bridge's `test-prometheus-protobuf`), as most users do; the
# registry bridge's tests again with it off, the other shape of its types.
cargo test -p nemo-lens-registry-bridge --features prometheus,prometheus-client
# The cells' protocol under loom's model checker (its own target directory:
# the cfg changes every fingerprint).
RUSTFLAGS="--cfg nemo_lens_loom" cargo test -p nemo-lens-core --lib cells \
    --target-dir "$target_dir/loom"
# Small projects of their own that use nemo-lens beside the crates its users
# already have, declared as they declare them (consumers/README.md).
scripts/consumers.sh

wait "$aiperf" || true
cat "$target_dir/aiperf-install.log" >&2
scripts/e2e.sh
