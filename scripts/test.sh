#!/usr/bin/env bash
# Every test of nemo-lens, the command the README gives:
#  1. scripts/deps.sh: Debian's prometheus package (with apt-get) first, and
#     NVIDIA's aiperf (from PyPI, into a venv under the target directory)
#     while cargo builds, when missing and when this machine can install
#     them;
#  2. cargo test --workspace --all-features, built once and run: each
#     crate's unit tests, one integration-test binary per crate (the
#     facade's tests/suite, the setup and exporters' tests/telemetry, the
#     registry bridge's, the CLI's, the demo's; the fault suite apart in
#     nemo-lens-telemetry/tests/faults: slow and hostile scrapers,
#     dead/hanging/rejecting receivers, a wrong CA), parity, compile-fail
#     (trybuild), doc tests (the README's snippets among them), OTLP (and
#     OTLP over TLS) against in-process receivers built on the official
#     protobuf definitions;
#  3. scripts/e2e.sh: the end-to-end suites against real servers (a real
#     Prometheus scraping the demo, NVIDIA's aiperf driving the example
#     OpenAI server, ...). A suite whose tools could not be installed is
#     named with the reason; with CI set, that fails the run;
#  4. the registry bridge's tests again with `prometheus` in its other shape;
#  5. the cells' concurrency protocol, model-checked with loom;
#  6. scripts/consumers.sh: the consumer crates (consumers/), each a user's
#     project that records and checks what it reads back.
# Steps 4 to 6 build while 2 and 3 run, at the lowest priority: on two
# cores the whole command takes about 7.5 minutes from a fresh clone
# instead of 11 (BENCHMARKS.md, "Layering").
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
# aiperf waits on the network, not the cores: it installs while cargo builds,
# at the lowest priority, so that it takes only what cargo leaves.
nice -n 19 scripts/deps.sh aiperf >"$target_dir/aiperf-install.log" 2>&1 &
aiperf=$!

# The test build, once; its JSON names the binaries that scripts/e2e.sh runs
# (a cargo lock held by the builds below must not make it wait).
build_json="$target_dir/test-build.json"
cargo test --workspace --all-features --no-run --message-format=json-render-diagnostics >"$build_json"
NEMO_LENS_SUITE_BIN="$(scripts/suite_bin.py <"$build_json")"
export NEMO_LENS_SUITE_BIN

# What is built only for the steps after the tests (the registry bridge's
# other shape, loom's build, the consumer crates) builds while the tests
# run, at the lowest priority: most test binaries wait on sockets and timers
# and leave the cores idle, and a test that needs a core gets it first. It
# starts once the test run has passed cargo's build lock (cargo holds it
# while it checks the build, not while the tests run).
tests_running="$target_dir/.tests-running"
rm -f "$tests_running"
(
    until [ -e "$tests_running" ]; do sleep 0.2; done
    # --all-features builds `prometheus` with its default `protobuf` feature
    # (the registry bridge's `test-prometheus-protobuf`), as most users do;
    # the registry bridge's tests run again with it off, the other shape of
    # its types.
    nice -n 19 cargo test -p nemo-lens-registry-bridge --features prometheus,prometheus-client --no-run
    # The cells' protocol under loom's model checker (its own target
    # directory: the cfg changes every fingerprint).
    RUSTFLAGS="--cfg nemo_lens_loom" nice -n 19 cargo test -p nemo-lens-core --lib cells \
        --target-dir "$target_dir/loom" --no-run
    # Small projects of their own that use nemo-lens beside the crates its
    # users already have, declared as they declare them (consumers/README.md).
    nice -n 19 scripts/consumers.sh --build
) >"$target_dir/background-builds.log" 2>&1 &
builds=$!
trap 'kill "$builds" "$aiperf" 2>/dev/null || true' EXIT

cargo test --workspace --all-features 2>&1 | while IFS= read -r line; do
    printf '%s\n' "$line"
    case "$line" in *Running*) touch "$tests_running" ;; esac
done
# The end-to-end suites, still beside those builds: first those that wait
# on servers (Prometheus scraping the demo, top, ...), all at once; then
# aiperf's, one at a time (a build at the lowest priority takes only the
# cycles they leave).
scripts/e2e.sh servers
wait "$aiperf" || true
cat "$target_dir/aiperf-install.log" >&2
scripts/e2e.sh aiperf

if ! wait "$builds"; then
    cat "$target_dir/background-builds.log" >&2
    exit 1
fi
cargo test -p nemo-lens-registry-bridge --features prometheus,prometheus-client
RUSTFLAGS="--cfg nemo_lens_loom" cargo test -p nemo-lens-core --lib cells \
    --target-dir "$target_dir/loom"
scripts/consumers.sh
