#!/usr/bin/env python3
"""Generates a synthetic Accel-Sim SASS trace of a vector add (c[i] = a[i] + b[i]) over N floats.

The output directory holds kernelslist.g (three host-to-device copies and the kernel) and
kernel-1.traceg in the NVBit tracer's version-4 format, with Volta (sm_70) SASS like nvcc emits
for the CUDA vecAdd kernel: a bounds check whose EXIT takes the lanes past N, two LDGs, an FADD
and an STG, addresses as base + stride (mode 1). Working warps have 15 instructions, warps past
N have 6, so N elements give about N / 32 * 15 warp instructions (N = 22,000,000: 10.3 M).

With --fma-trips K the working lanes also run a loop of K trips between the FADD and the STG:
four independent FFMAs on the sum, a counter IADD3, an ISETP and the backward BRA (7 warp
instructions a trip), which makes the kernel compute-bound for large K.

The output is deterministic: the same arguments give the same bytes.

Example:
    scripts/gen-accelsim-trace.py --elements 22000000 --out /tmp/vecadd-22m
    warpscope replay /tmp/vecadd-22m --gpu volta -o /tmp/vecadd-22m.wstrace
"""

import argparse
import os
import sys

A_BASE = 0x7F0000000000
FULL = 0xFFFFFFFF

HEADER = """-kernel name = _Z6vecAddIfEvPT_S1_S1_i
-kernel id = 1
-grid dim = ({grid},1,1)
-block dim = ({block},1,1)
-shmem = 0
-nregs = 10
-binary version = 70
-cuda stream id = 0
-shmem base_addr = 0x00007f5000000000
-local mem base_addr = 0x00007f4000000000
-nvbit version = 1.5.5
-accelsim tracer version = 4
-enable lineinfo = 0

#traces format = PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses]

"""

# Lines every warp executes up to and including the bounds-check EXIT ({exit} lanes leave).
PROLOGUE = (
    "0000 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0\n"
    "0010 ffffffff 1 R0 S2R 0 0\n"
    "0020 ffffffff 1 R3 S2R 0 0\n"
    "0030 ffffffff 1 R0 IMAD 2 R0 R3 0\n"
    "0040 ffffffff 0 ISETP.GE.AND 1 R0 0\n"
    "0050 {exit:08x} 0 EXIT 0 0\n"
)

# The work of the lanes inside the array ({m} is their mask).
BODY = (
    "0060 {m:08x} 1 R7 IMAD.MOV.U32 2 R255 R255 0\n"
    "0070 {m:08x} 1 R2 IMAD.WIDE 2 R0 R7 0\n"
    "0080 {m:08x} 1 R4 IMAD.WIDE 2 R0 R7 0\n"
    "0090 {m:08x} 1 R2 LDG.E.SYS 1 R2 4 1 0x{a:x} 4\n"
    "00a0 {m:08x} 1 R5 LDG.E.SYS 1 R4 4 1 0x{b:x} 4\n"
    "00b0 {m:08x} 1 R6 IMAD.WIDE 2 R0 R7 0\n"
    "00c0 {m:08x} 1 R9 FADD 2 R2 R5 0\n"
    "{loop}"
    "00d0 {m:08x} 0 STG.E.SYS 2 R6 R9 4 1 0x{c:x} 4\n"
    "00e0 {m:08x} 0 EXIT 0 0\n"
)

# One trip of the --fma-trips loop (placed after the EXIT in the binary, as a jump target).
TRIP = (
    "0100 {m:08x} 1 R10 FFMA 3 R10 R9 R10 0\n"
    "0110 {m:08x} 1 R11 FFMA 3 R11 R9 R11 0\n"
    "0120 {m:08x} 1 R12 FFMA 3 R12 R9 R12 0\n"
    "0130 {m:08x} 1 R13 FFMA 3 R13 R9 R13 0\n"
    "0140 {m:08x} 1 R14 IADD3 3 R14 R255 R255 0\n"
    "0150 {m:08x} 0 ISETP.NE.AND 1 R14 0\n"
    "0160 {m:08x} 0 BRA 0 0\n"
)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--elements", type=int, default=22_000_000, help="N (default 22000000)")
    parser.add_argument("--block", type=int, default=256, help="threads per block (multiple of 32)")
    parser.add_argument(
        "--fma-trips", type=int, default=0, help="FFMA loop trips per working warp (default 0)"
    )
    parser.add_argument("--out", required=True, help="output directory (created)")
    args = parser.parse_args()
    n, block, trips = args.elements, args.block, args.fma_trips
    if n < 1 or block < 32 or block % 32 or block > 1024:
        sys.exit("error: --elements must be >= 1 and --block a multiple of 32 in 32..1024")
    if trips < 0:
        sys.exit("error: --fma-trips must be >= 0")
    grid = (n + block - 1) // block
    stride = (n * 4 + 0xFFFF) // 0x10000 * 0x10000  # arrays 64 KiB aligned
    b_base, c_base = A_BASE + stride, A_BASE + 2 * stride
    os.makedirs(args.out, exist_ok=True)

    with open(os.path.join(args.out, "kernelslist.g"), "w") as f:
        for base in (A_BASE, b_base, c_base):
            f.write(f"MemcpyHtoD,0x{base:016x},{n * 4}\n")
        f.write("kernel-1.traceg\n")

    warps_per_block = block // 32
    full_prologue = PROLOGUE.format(exit=0)
    skip_prologue = PROLOGUE.format(exit=FULL)
    warp_insts = 0
    with open(os.path.join(args.out, "kernel-1.traceg"), "w", buffering=1 << 20) as f:
        f.write(HEADER.format(grid=grid, block=block))
        for b in range(grid):
            parts = ["#BEGIN_TB\n\n", f"thread block = {b},0,0\n\n"]
            for w in range(warps_per_block):
                first = (b * block) + w * 32
                lanes = max(0, min(32, n - first))
                if lanes == 0:
                    parts.append(f"warp = {w}\ninsts = 6\n{skip_prologue}\n")
                    warp_insts += 6
                    continue
                mask = FULL if lanes == 32 else (1 << lanes) - 1
                prologue = full_prologue if lanes == 32 else PROLOGUE.format(exit=FULL & ~mask)
                off = first * 4
                loop = TRIP.format(m=mask) * trips
                body = BODY.format(
                    m=mask, a=A_BASE + off, b=b_base + off, c=c_base + off, loop=loop
                )
                insts = 15 + 7 * trips
                parts.append(f"warp = {w}\ninsts = {insts}\n{prologue}{body}\n")
                warp_insts += insts
            parts.append("#END_TB\n\n")
            f.write("".join(parts))
    print(
        f"{args.out}: {n} elements, grid {grid} x {block} threads, {warp_insts} warp instructions",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
