#!/usr/bin/env bash
# Builds and runs the consumer crates (consumers/README.md): each a project
# of its own that depends on nemo-lens by path and on its peers as their
# users declare them. `scripts/consumers.sh NAME...` runs only those;
# `scripts/consumers.sh --build [NAME...]` builds them without running.
set -euo pipefail
cd "$(dirname "$0")/.."
# The workspace's target directory: what a consumer resolves as the
# workspace does (most of the dependency graph) is built once, and only
# what differs (nemo-lens with that consumer's features, its peers) anew.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
command=run
if [ "${1:-}" = --build ]; then
    command=build
    shift
fi
if [ "$#" -eq 0 ]; then
    set -- $(cd consumers && ls -d */ | tr -d / | grep -v '^common$')
fi
for name in "$@"; do
    echo "==> consumers/$name"
    cargo "$command" --quiet --manifest-path "consumers/$name/Cargo.toml"
done
