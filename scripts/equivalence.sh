#!/usr/bin/env bash
# Records a matrix of runs with one warpscope binary and prints the md5 of every output, so that
# two builds can be compared byte for byte before a change to the simulator or the trace writer
# lands ("same inputs, same bytes out"):
#
#   scripts/equivalence.sh target/release/warpscope /tmp/eq-before > /tmp/before.sums
#   ... change, rebuild ...
#   scripts/equivalence.sh target/release/warpscope /tmp/eq-after > /tmp/after.sums
#   diff /tmp/before.sums /tmp/after.sums && echo identical
#
# The matrix: every bundled launch file on four GPUs under seven policies and three scoreboards
# (binary traces at verbosity 2), the smt policy, the compact and grouped formats, `run --json`,
# and replays of the Accel-Sim test traces and of two generated traces on three GPUs. Each
# output's stdout and stderr are kept too (host speeds on stderr are filtered out). Takes about
# a minute on two cores.
set -euo pipefail
bin=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out"
cd "$root"

run() { # NAME ARGS...: runs the binary, keeps stdout and stderr (without host timings)
    local name=$1
    shift
    "$bin" "$@" >"$out/$name.stdout.raw" 2>"$out/$name.stderr.raw" || echo "exit $?" >>"$out/$name.stdout.raw"
    # (Without the output directory's name, which differs between the two runs compared.)
    sed "s|$out|OUT|g" "$out/$name.stdout.raw" >"$out/$name.stdout"
    grep -v -E 'host:|warp instructions/s' "$out/$name.stderr.raw" | sed "s|$out|OUT|g" >"$out/$name.stderr" || true
    rm -f "$out/$name.stdout.raw" "$out/$name.stderr.raw"
}

for launch in kernels/*.json; do
    k=$(basename "$launch" .json)
    for gpu in tiny small volta hopper; do
        for policy in lrr gto two_level oldest barrel coarse fine; do
            for sb in bitmap ranges barriers; do
                name="$k-$gpu-$policy-$sb"
                run "$name" record "$launch" --gpu "$gpu" --policy "$policy" --scoreboard "$sb" \
                    --verbosity 2 -o "$out/$name.wstrace"
            done
        done
        run "$k-$gpu-smt" record "$launch" --gpu "$gpu" --policy smt -o "$out/$k-$gpu-smt.wstrace"
        run "$k-$gpu-compact" record "$launch" --gpu "$gpu" --format compact -o "$out/$k-$gpu-compact.wstrace"
        run "$k-$gpu-grouped" record "$launch" --gpu "$gpu" --format grouped -o "$out/$k-$gpu-grouped.wstrace"
        run "$k-$gpu-json" run "$launch" --gpu "$gpu" --json
    done
done

gen="$out/generated"
mkdir -p "$gen"
python3 scripts/gen-accelsim-trace.py --elements 200000 --out "$gen/vecadd" >/dev/null
python3 scripts/gen-accelsim-trace.py --elements 50000 --fma-trips 4 --out "$gen/fma" >/dev/null
for trace in tests/data/accelsim/* "$gen/vecadd" "$gen/fma"; do
    [ -d "$trace" ] || continue
    t=$(basename "$trace")
    for gpu in small volta hopper; do
        run "replay-$t-$gpu" replay "$trace" --gpu "$gpu" -o "$out/replay-$t-$gpu.wstrace"
        run "replay-$t-$gpu-grouped" replay "$trace" --gpu "$gpu" --format grouped \
            -o "$out/replay-$t-$gpu-grouped.wstrace"
    done
done
rm -rf "$gen"

cd "$out"
find . -type f | sort | xargs md5sum
