#!/usr/bin/env python3
"""Turns one run of `cargo bench` (divan tree plus the `threads:`/`memory:`
lines of the custom benches) into the Markdown tables of BENCHMARKS.md.

Usage: bench_report.py RAW_OUTPUT > table.md
Every ratio divides a median by the `baseline` median of the same group in
the same run, so machine noise that is common to both cancels out.
"""
import re
import sys

PYTHON_NS = {  # shared/reference README: nemo-lens 0.1.0, median per call
    "rl_11_values": (45_256, "record_rl_metrics, 8 values"),
    "inference_with_model": (35_513, "record_inference_metrics, 4 values"),
    "gym_5_values": (27_133, "record_gym_metrics, 5 values"),
}
UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def parse_divan(lines):
    """{path tuple: median ns} from divan's tree output."""
    results, stack = {}, []
    for line in lines:
        match = re.match(r"^([│ ]*)[├╰]─ (\S+)(.*)$", line)
        if not match:
            continue
        depth = len(match.group(1)) // 3
        name, rest = match.group(2), match.group(3)
        stack = stack[:depth] + [name]
        columns = [c.strip() for c in rest.split("│")]
        if len(columns) >= 3 and columns[2]:
            value, unit = columns[2].split()
            results[tuple(stack)] = float(value) * UNITS[unit]
    return results


def fmt(ns):
    return f"{ns:.1f} ns" if ns < 1000 else f"{ns / 1000:.2f} µs"


def main():
    raw = open(sys.argv[1], encoding="utf-8").read().splitlines()
    results = parse_divan(raw)
    groups = sorted({path[0] for path in results})
    print("| group | case | median | vs baseline | vs Python |")
    print("|---|---|---|---|---|")
    for group in groups:
        rows = {path[1:]: ns for path, ns in results.items() if path[0] == group}
        for case, ns in sorted(rows.items()):
            baseline_case = ("baseline",) + case[1:]
            if case[0].endswith("_threads"):
                baseline_case = ("baseline_threads",) + case[1:]
            baseline = rows.get(baseline_case)
            ratio = f"{ns / baseline:.2f}x" if baseline and case != baseline_case else ""
            python = ""
            if group in PYTHON_NS and case == ("record",):
                python = f"{PYTHON_NS[group][0] / ns:,.0f}x faster ({PYTHON_NS[group][1]})"
            print(f"| {group} | {' '.join(case)} | {fmt(ns)} | {ratio} | {python} |")
    for group in groups:
        rows = {path[1:]: ns for path, ns in results.items() if path[0] == group}
        if ("record",) in rows and ("record_with",) in rows:
            lookup = rows[("record",)] - rows[("record_with",)]
            print(f"\nCache look-up in `record` over `record_with`, {group}: {lookup:.1f} ns", end="")
    print("\n")
    for line in raw:
        if line.startswith(("threads:", "memory:", "scrape:")):
            print(f"- {line}")


if __name__ == "__main__":
    main()
