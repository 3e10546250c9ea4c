#!/usr/bin/env python3
"""Checks the workspace's `rust-version` against what it builds with.

This machine has one Rust toolchain, so the declared minimum cannot be
proven by building with that older compiler. Two checks stand in for it:

- here: every crate the published packages depend on (normal and build
  dependencies, all features) declares a `rust-version` no newer than ours,
  so `cargo` on our minimum can build the dependency graph;
- clippy's `incompatible_msrv` lint (on by default, reading `rust-version`
  from Cargo.toml) refuses std APIs stabilised after our minimum, and CI runs
  clippy with `-D warnings`.

Usage: scripts/check_msrv.py     (exits 1 naming each dependency that needs more)
"""

import json
import subprocess
import sys


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    packages = {p["id"]: p for p in metadata["packages"]}
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    members = set(metadata["workspace_members"])
    published = [
        i for i in members if packages[i].get("publish") is None or packages[i]["publish"]
    ]
    ours = {packages[i]["rust_version"] for i in members}
    if len(ours) != 1 or None in ours:
        sys.exit(f"every workspace package declares one rust-version; found {sorted(map(str, ours))}")
    ours = ours.pop()

    seen, stack = set(), list(published)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for dep in nodes[node]["deps"]:
            if any(k["kind"] in (None, "build") for k in dep["dep_kinds"]):
                stack.append(dep["pkg"])

    too_new = sorted(
        (packages[i]["name"], packages[i]["version"], packages[i]["rust_version"])
        for i in seen - members
        if packages[i]["rust_version"] and version(packages[i]["rust_version"]) > version(ours)
    )
    for name, ver, needs in too_new:
        print(f"{name} {ver} needs Rust {needs}, above our rust-version {ours}", file=sys.stderr)
    if too_new:
        sys.exit(1)
    newest = max(
        (version(packages[i]["rust_version"]) for i in seen - members if packages[i]["rust_version"]),
        default=(0, 0, 0),
    )
    print(
        f"rust-version {ours}: {len(seen - members)} dependencies, the newest needing "
        f"{'.'.join(map(str, newest))}"
    )


if __name__ == "__main__":
    main()
