#!/usr/bin/env bash
# Each cargo feature of nemo-lens on its own, as a user who enables only it
# builds it: `cargo check` of the library here, then (scripts/public_api.py)
# its documentation with warnings denied (no broken link to an item of a
# feature left off) and its public API against the committed listing.
# Every feature at once is what clippy and the tests build. Features are
# read from Cargo.toml, so a new one is checked without editing this script.
set -euo pipefail
cd "$(dirname "$0")/.."
features=$(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
package = next(p for p in json.load(sys.stdin)["packages"] if p["name"] == "nemo-lens")
print(" ".join(sorted(f for f in package["features"] if f != "default")))')
# In CI the listing's rustdoc runs with RUSTC_BOOTSTRAP in a target
# directory of its own (PUBLIC_API_TARGET_DIR): the checks build there, with
# the same environment, so each feature set's dependencies are checked once
# for both instead of once in each directory.
if [ -n "${PUBLIC_API_TARGET_DIR:-}" ]; then
    export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$PUBLIC_API_TARGET_DIR"
fi
# (RUSTC_BOOTSTRAP would let a nightly feature pass these checks; clippy,
# on the stable toolchain alone, builds every feature at once.)
for feature in "" $features; do
    echo "==> cargo check of nemo-lens with features: ${feature:-none}"
    cargo check -p nemo-lens --lib --features "$feature" --quiet
done
scripts/public_api.py check
