#!/usr/bin/env bash
# Two vmcust builds side by side on the whole-process `plan` of the 2-NIC static example
# (examples/specs/static-2nic-ipv6.cfg on a copy of examples/root): the system calls of one
# run of each (strace -c -f), then PAIRS interleaved pairs of hyperfine runs (each pair
# runs both binaries, RUNS runs each after 5 warm-ups, the order alternating from pair to
# pair so that neither always runs second), and each pair's ratio of medians (NEW / OLD)
# with their median. On a shared, noisy machine the ratio within a pair is what to read.
#   scripts/bench-compare.sh OLD-BINARY NEW-BINARY        (PAIRS=40 RUNS=30 by default)
# docs/benchmarks.md ("Against an older binary").
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
    echo "usage: scripts/bench-compare.sh OLD-BINARY NEW-BINARY" >&2
    exit 64
fi
old=$(realpath "$1")
new=$(realpath "$2")
pairs=${PAIRS:-40}
runs=${RUNS:-30}
for tool in hyperfine strace python3; do
    command -v "$tool" >/dev/null || { echo "bench-compare.sh: $tool is missing (apt-get install $tool)" >&2; exit 69; }
done

work=$(mktemp -d /tmp/vmcust-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -a examples/root/. "$work/root"
# /etc/shadow as on a real system (git keeps no modes but the executable bit).
chmod 0640 "$work/root/etc/shadow"
spec=$(realpath examples/specs/static-2nic-ipv6.cfg)
args="plan --root $work/root --imc $spec"

syscalls() {
    # The summary line of strace -c: total calls (the column before "total").
    strace -c -f -o "$work/strace.txt" "$1" $args >/dev/null
    awk '$NF == "total" { print $(NF-2) }' "$work/strace.txt"
}
echo "system calls of one plan: old $(syscalls "$old"), new $(syscalls "$new")"

for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) -eq 1 ]; then first=$old; second=$new; else first=$new; second=$old; fi
    hyperfine -N --style none --warmup 5 --runs "$runs" --export-json "$work/pair-$i.json" \
        "$first $args" "$second $args" >/dev/null
done

python3 - "$work" "$pairs" "$old" <<'PY'
import json, statistics, sys
work, pairs, old = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ratios, olds, news = [], [], []
for i in range(1, pairs + 1):
    results = json.load(open(f"{work}/pair-{i}.json"))["results"]
    by_binary = {r["command"].split()[0]: r["median"] for r in results}
    o = by_binary[old]
    n = next(v for k, v in by_binary.items() if k != old)
    olds.append(o); news.append(n); ratios.append(n / o)
print(f"{pairs} pairs: old median {statistics.median(olds)*1e3:.3f} ms, "
      f"new median {statistics.median(news)*1e3:.3f} ms")
print(f"new / old, median of the pairs' ratios: {statistics.median(ratios):.3f} "
      f"(range {min(ratios):.3f}-{max(ratios):.3f})")
PY
