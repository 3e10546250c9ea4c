#!/usr/bin/env bash
# Installs what the end-to-end tests need beyond the Rust toolchain, when
# missing and when this machine can:
#  - Debian's prometheus package (prometheus 2.42 and promtool), with apt-get
#    (as root, or through sudo);
#  - protoc (Debian's protobuf-compiler), for a consumer crate that builds
#    prometheus-client with its `protobuf` feature;
#  - rotel (the OpenTelemetry collector from PyPI), pinned, into a venv
#    under the target directory: the training suite's ranks export through it;
#  - NVIDIA's aiperf, pinned, from PyPI into a venv under the target
#    directory, and the offline tokenizer it is run with.
# Prints nothing when everything is there already. What it cannot install it
# says, and exits 0: scripts/e2e.sh names each suite that then cannot run.
#
# Usage: scripts/deps.sh [system|aiperf|wrk|valgrind]   (from anywhere in the repository)
#   system: Debian's packages only; aiperf: the venv only (network-bound,
#   so scripts/test.sh runs it while cargo builds); wrk: the load generator
#   scripts/bench_serving.sh needs (benchmarks only); valgrind: what
#   scripts/serving_instructions.sh counts with (benchmarks only); none:
#   system and aiperf.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_if_needed() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
can_apt() {
    command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; }
}
apt_install() {
    sudo_if_needed apt-get update -qq
    DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq "$@" >/dev/null
}

install_system() {
    if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
        if can_apt; then
            echo "deps: installing prometheus and promtool" >&2
            apt_install prometheus
        else
            echo "deps: prometheus and promtool are missing and there is no apt-get (or sudo) to install Debian's package" >&2
        fi
    fi
    # protoc, which prometheus-client's `protobuf` feature builds with
    # (consumers/prometheus-client-protobuf).
    if ! command -v protoc >/dev/null 2>&1; then
        if can_apt; then
            echo "deps: installing protoc (protobuf-compiler)" >&2
            apt_install protobuf-compiler
        else
            echo "deps: protoc is missing and there is no apt-get (or sudo) to install protobuf-compiler" >&2
        fi
    fi
    # The Debian package may start a system service on :9090; the tests run
    # their own instance on a free port, so that one is left alone.
}

# A venv under the target directory, made (with Debian's python3-venv if
# python3 cannot) and emptied when it does not hold what is wanted.
make_venv() {
    local venv="$1"
    rm -rf "$venv"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        if can_apt; then
            apt_install python3-venv
            python3 -m venv "$venv"
        else
            echo "deps: python3 cannot make a venv and there is no apt-get to install python3-venv" >&2
            return 1
        fi
    fi
}

install_rotel() {
    # rotel, pinned: the agent's command line is what the training suite runs.
    local rotel_version=0.0.1a15 target_dir venv
    target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    venv="$target_dir/rotel-venv"
    if ! "$venv/bin/pip" show rotel 2>/dev/null | grep -qx "Version: $rotel_version"; then
        echo "deps: installing rotel $rotel_version into $venv" >&2
        make_venv "$venv" || return 0
        if ! "$venv/bin/pip" install -q --no-cache-dir --disable-pip-version-check "rotel==$rotel_version"; then
            echo "deps: pip could not install rotel $rotel_version" >&2
            rm -rf "$venv"
        fi
    fi
}

install_aiperf() {
    # aiperf, pinned: its export format is what the aiperf e2e suite reads.
    local aiperf_version=0.13.0 target_dir venv
    target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    venv="$target_dir/aiperf-venv"
    if ! "$venv/bin/aiperf" --version 2>/dev/null | grep -qx "$aiperf_version"; then
        echo "deps: installing aiperf $aiperf_version into $venv" >&2
        make_venv "$venv" || return 0
        if ! "$venv/bin/pip" install -q --no-cache-dir --disable-pip-version-check "aiperf==$aiperf_version"; then
            echo "deps: pip could not install aiperf $aiperf_version" >&2
            rm -rf "$venv"
            return 0
        fi
    fi
    if [ ! -f "$target_dir/aiperf-tokenizer/tokenizer.json" ]; then
        "$venv/bin/python" scripts/aiperf_tokenizer.py "$target_dir/aiperf-tokenizer" >/dev/null 2>&1 ||
            echo "deps: could not write aiperf's offline tokenizer" >&2
    fi
}

case "${1:-all}" in
    system) install_system; install_rotel ;;
    aiperf) install_aiperf ;;
    # Not for the tests: the HTTP load generator of scripts/bench_serving.sh.
    wrk)
        if ! command -v wrk >/dev/null 2>&1; then
            if can_apt; then apt_install wrk; else echo "deps: wrk is missing and there is no apt-get (or sudo)" >&2; fi
        fi ;;
    # Not for the tests: what scripts/serving_instructions.sh counts with.
    valgrind)
        if ! command -v valgrind >/dev/null 2>&1; then
            if can_apt; then apt_install valgrind; else echo "deps: valgrind is missing and there is no apt-get (or sudo)" >&2; fi
        fi ;;
    all) install_system; install_rotel; install_aiperf ;;
    *) echo "usage: scripts/deps.sh [system|aiperf|wrk|valgrind]" >&2; exit 2 ;;
esac
