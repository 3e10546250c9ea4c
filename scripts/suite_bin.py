#!/usr/bin/env python3
"""The path of the facade's test binary (tests/suite) in the JSON messages
of `cargo test --no-run --message-format=json...` read from stdin, so that
scripts/e2e.sh can run it without asking cargo again (whose build lock a
build beside it may hold)."""

import json
import sys

# Every line is read, so that cargo never writes into a closed pipe.
found = [
    message["executable"]
    for message in map(json.loads, sys.stdin)
    if message.get("reason") == "compiler-artifact"
    and message["target"]["name"] == "suite"
    and message.get("executable")
]
if not found:
    sys.exit("suite_bin: cargo built no tests/suite binary")
print(found[0])
