#!/usr/bin/env bash
# Builds and runs the consumer crates (consumers/README.md): each a project
# of its own that depends on nemo-lens by path and on its peers as their
# users declare them. `scripts/consumers.sh NAME...` runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target directory for all of them, apart from the workspace's: their
# graphs differ from it, and sharing theirs builds common crates once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/consumers"
if [ "$#" -eq 0 ]; then
    set -- $(cd consumers && ls -d */ | tr -d / | grep -v '^common$')
fi
for name in "$@"; do
    echo "==> consumers/$name"
    cargo run --quiet --manifest-path "consumers/$name/Cargo.toml"
done
