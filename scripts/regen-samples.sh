#!/usr/bin/env bash
# Regenerates the sample traces in traces/ from the bundled kernels (one per preset and several
# policies) and their reports in reports/. Deterministic: CI re-runs this and fails if any
# checked-in file changed.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet
ws="${CARGO_TARGET_DIR:-./target}/release/warpscope"
mkdir -p traces
rm -f traces/*.wstrace

record() { # OUT LAUNCH [options...]
    local out=$1; shift
    "$ws" record "$@" -o "traces/$out.wstrace" >/dev/null
}

record vecadd_tiny.tiny          kernels/vecadd_tiny.json --gpu tiny
record reduce.small.gto          kernels/reduce.json --gpu small --policy gto --verbosity 2
record reduce.small.lrr          kernels/reduce.json --gpu small --policy lrr
record matmul.volta.gto          kernels/matmul.json --gpu volta --policy gto --verbosity 2
record matmul.volta.barrel       kernels/matmul.json --gpu volta --policy barrel
record divergent.hopper.gto      kernels/divergent.json --gpu hopper
record vecadd.small.barriers     kernels/vecadd.json --gpu small --scoreboard barriers --verbosity 2
record loop.small.coarse         kernels/loop.json --gpu small --policy coarse

# One report per sample, and the policy comparison of the reduction.
rm -rf reports
for t in traces/*.wstrace; do
    name=$(basename "$t" .wstrace)
    "$ws" report "$t" -o "reports/$name" >/dev/null
done
"$ws" report traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace \
    -o reports/compare.reduce.gto-vs-lrr >/dev/null

ls -l traces reports
