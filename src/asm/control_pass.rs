//! The auto-control pass: computes a control code for every instruction, as a tiny compiler
//! backend does for level 3 of seeds/002.
//!
//! - Fixed-latency producers (`GpuConfig::fixed_latency(pipe)` is `Some(L)`) are scheduled
//!   statically: a consumer (RAW) or a later writer of the same name (WAW) must issue at least
//!   `L` cycles after the producer. Each instruction is assumed to issue `max(1, stall)` cycles
//!   after the previous one; when the distance is short, the stall counts of the instructions
//!   between are raised, latest first, up to 15 each (so a latency above 15 is spread over
//!   several instructions).
//! - Variable-latency producers (MUFU, shared and global memory, atomics) get a write barrier
//!   `0–5`, allocated round robin over the free ones; every later reader (RAW) or writer (WAW)
//!   of the destination waits on it, after which the barrier is free again. With all six live,
//!   the one set longest ago is reused (its consumers then wait for both producers —
//!   conservative, still correct).
//! - Stores and atomics read their sources late: when any instruction that can run after one
//!   writes one of its sources, it gets a read barrier and that writer waits on it (WAR).
//! - Basic blocks (leaders: PC 0, branch targets, the instruction after `BRA`/`EXIT`/`BAR.SYNC`)
//!   are scheduled independently and conservatively: the last instruction of a block stalls
//!   until every fixed-latency result of the block is ready, and the first instruction of a
//!   block waits on every barrier live at the end of any predecessor block.
//!
//! Simplifications: no instruction reordering and no NOP insertion. A fixed-latency producer
//! whose first dependent (or the block end) is too close for stall counts to cover (`L > 15 ×
//! distance`) is given a write barrier instead, which is correct under the `barriers`
//! scoreboard because the SM releases write barriers when a result is written. Yield flags are
//! always off; reuse flags are not modelled.

use crate::isa::{BranchCond, ControlCode, Instruction, Opcode, Program};
use crate::sim::config::GpuConfig;
use crate::sim::scoreboard::{reads_sources_late, DepOperands, RegRef, DEPENDENCY_BARRIERS};

const MAX_STALL: u8 = 15;
const ALL_BARRIERS: u8 = (1 << DEPENDENCY_BARRIERS) - 1;
const WORDS: usize = RegRef::COUNT.div_ceil(64);

/// A set of dependency-tracked names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct NameSet([u64; WORDS]);

impl NameSet {
    fn insert(&mut self, r: RegRef) {
        let i = r.index();
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn contains(&self, r: RegRef) -> bool {
        let i = r.index();
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    fn union(&mut self, other: &NameSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
}

/// A basic block `start..end` and the blocks control may reach next.
#[derive(Debug, Clone)]
struct Block {
    start: usize,
    end: usize,
    succs: Vec<usize>,
}

/// Returns a copy of `program` with a control code on every instruction (existing codes are
/// overwritten), computed for the latencies of `config`.
pub fn auto_control(program: &Program, config: &GpuConfig) -> Program {
    let mut out = program.clone();
    let insts = &program.instructions;
    if insts.is_empty() {
        return out;
    }
    let ops: Vec<DepOperands> = insts.iter().map(DepOperands::of).collect();
    let blocks = basic_blocks(insts);
    let needs_read_barrier = read_barrier_needs(insts, &ops, &blocks);
    let mut codes = vec![
        ControlCode {
            stall: 1,
            ..ControlCode::default()
        };
        insts.len()
    ];
    let live_at_end: Vec<u8> = blocks
        .iter()
        .map(|b| {
            let mut s = BlockScheduler::new(insts, &ops, config, b, &needs_read_barrier);
            s.run(&mut codes)
        })
        .collect();
    for (b, live) in blocks.iter().zip(&live_at_end) {
        for &s in &b.succs {
            codes[blocks[s].start].wait_mask |= live;
        }
    }
    for (inst, code) in out.instructions.iter_mut().zip(codes) {
        inst.control = Some(code);
    }
    out
}

/// Whether control can continue to the next PC after `inst`.
fn falls_through(inst: &Instruction) -> bool {
    match inst.op {
        Opcode::Bra(cond) => !(inst.guard.is_always() && cond == BranchCond::Always),
        Opcode::Exit => !inst.guard.is_always(),
        _ => true,
    }
}

fn basic_blocks(insts: &[Instruction]) -> Vec<Block> {
    let n = insts.len();
    let mut leader = vec![false; n];
    leader[0] = true;
    for (pc, inst) in insts.iter().enumerate() {
        if let Some(t) = inst.target().filter(|&t| (t as usize) < n) {
            leader[t as usize] = true;
        }
        if matches!(inst.op, Opcode::Bra(_) | Opcode::Exit | Opcode::BarSync) && pc + 1 < n {
            leader[pc + 1] = true;
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&pc| leader[pc]).collect();
    let mut block_of = vec![0usize; n];
    for (bi, &s) in starts.iter().enumerate() {
        let end = starts.get(bi + 1).copied().unwrap_or(n);
        block_of[s..end].fill(bi);
    }
    starts
        .iter()
        .enumerate()
        .map(|(bi, &start)| {
            let end = starts.get(bi + 1).copied().unwrap_or(n);
            let last = &insts[end - 1];
            let mut succs = Vec::new();
            if matches!(last.op, Opcode::Bra(_)) {
                if let Some(t) = last.target().filter(|&t| (t as usize) < n) {
                    succs.push(block_of[t as usize]);
                }
            }
            if end < n && falls_through(last) && !succs.contains(&(bi + 1)) {
                succs.push(bi + 1);
            }
            Block { start, end, succs }
        })
        .collect()
}

/// For each PC: whether it reads its sources late and some instruction that may run after it
/// writes one of them (then it needs a read barrier).
fn read_barrier_needs(insts: &[Instruction], ops: &[DepOperands], blocks: &[Block]) -> Vec<bool> {
    let written: Vec<NameSet> = blocks
        .iter()
        .map(|b| {
            let mut set = NameSet::default();
            for o in &ops[b.start..b.end] {
                if let Some(d) = o.dst() {
                    set.insert(d);
                }
            }
            set
        })
        .collect();
    // Names written by any block reachable from each block's successors.
    let written_later: Vec<NameSet> = (0..blocks.len())
        .map(|bi| {
            let mut seen = vec![false; blocks.len()];
            let mut stack: Vec<usize> = blocks[bi].succs.clone();
            let mut set = NameSet::default();
            while let Some(b) = stack.pop() {
                if std::mem::replace(&mut seen[b], true) {
                    continue;
                }
                set.union(&written[b]);
                stack.extend(&blocks[b].succs);
            }
            set
        })
        .collect();
    let mut needs = vec![false; insts.len()];
    for (bi, b) in blocks.iter().enumerate() {
        for pc in b.start..b.end {
            if !reads_sources_late(insts[pc].op) {
                continue;
            }
            let mut later = written_later[bi];
            for o in &ops[pc + 1..b.end] {
                if let Some(d) = o.dst() {
                    later.insert(d);
                }
            }
            needs[pc] = ops[pc].srcs().iter().any(|&s| later.contains(s));
        }
    }
    needs
}

/// Round-robin allocation of the six dependency barriers within one block.
#[derive(Debug, Clone, Copy, Default)]
struct BarrierAlloc {
    live: u8,
    /// PC of the latest setter of each barrier.
    set_at: [usize; DEPENDENCY_BARRIERS],
    cursor: u8,
}

impl BarrierAlloc {
    fn take(&mut self, pc: usize) -> u8 {
        let free = ALL_BARRIERS & !self.live;
        let b = if free != 0 {
            (0..DEPENDENCY_BARRIERS as u8)
                .map(|k| (self.cursor + k) % DEPENDENCY_BARRIERS as u8)
                .find(|&b| free & (1 << b) != 0)
                .unwrap_or(0)
        } else {
            (0..DEPENDENCY_BARRIERS as u8)
                .min_by_key(|&b| self.set_at[b as usize])
                .unwrap_or(0)
        };
        self.cursor = (b + 1) % DEPENDENCY_BARRIERS as u8;
        self.live |= 1 << b;
        self.set_at[b as usize] = pc;
        b
    }
}

/// Schedules one basic block, assuming every barrier is free and every result ready at entry.
struct BlockScheduler<'a> {
    insts: &'a [Instruction],
    ops: &'a [DepOperands],
    config: &'a GpuConfig,
    start: usize,
    end: usize,
    needs_read_barrier: &'a [bool],
    /// Per name: the latest fixed-latency writer in the block and its latency.
    fixed: Vec<Option<(usize, u32)>>,
    /// Per name: the write barrier of its pending variable-latency producer.
    write_bar: Vec<Option<u8>>,
    /// Per name: read barriers of in-flight instructions that have yet to read it.
    read_bars: Vec<u8>,
    alloc: BarrierAlloc,
}

impl<'a> BlockScheduler<'a> {
    fn new(
        insts: &'a [Instruction],
        ops: &'a [DepOperands],
        config: &'a GpuConfig,
        block: &Block,
        needs_read_barrier: &'a [bool],
    ) -> BlockScheduler<'a> {
        BlockScheduler {
            insts,
            ops,
            config,
            start: block.start,
            end: block.end,
            needs_read_barrier,
            fixed: vec![None; RegRef::COUNT],
            write_bar: vec![None; RegRef::COUNT],
            read_bars: vec![0; RegRef::COUNT],
            alloc: BarrierAlloc::default(),
        }
    }

    /// Fills in the block's codes; returns the barriers still live at its end.
    fn run(&mut self, codes: &mut [ControlCode]) -> u8 {
        for pc in self.start..self.end {
            let ops = self.ops[pc];
            let mut wait = 0u8;
            for &r in ops.srcs().iter().chain(ops.dst().iter()) {
                if let Some(b) = self.write_bar[r.index()] {
                    wait |= 1 << b;
                }
                if let Some((p, l)) = self.fixed[r.index()] {
                    ensure_gap(codes, p, pc, l);
                }
            }
            if let Some(d) = ops.dst() {
                wait |= self.read_bars[d.index()];
            }
            codes[pc].wait_mask |= wait;
            if wait != 0 {
                self.released(wait);
            }
            if let Some(d) = ops.dst() {
                let i = d.index();
                self.fixed[i] = None;
                self.write_bar[i] = None;
                match self.static_latency(pc, d) {
                    Some(l) => self.fixed[i] = Some((pc, l)),
                    None => {
                        let b = self.alloc.take(pc);
                        self.write_bar[i] = Some(b);
                        codes[pc].write_barrier = Some(b);
                    }
                }
            }
            if self.needs_read_barrier[pc] {
                let b = self.alloc.take(pc);
                for &s in ops.srcs() {
                    self.read_bars[s.index()] |= 1 << b;
                }
                codes[pc].read_barrier = Some(b);
            }
        }
        for &(p, l) in self.fixed.iter().flatten() {
            ensure_gap(codes, p, self.end, l);
        }
        self.alloc.live
    }

    /// Barriers in `mask` were waited on: everything they tracked is done.
    fn released(&mut self, mask: u8) {
        self.alloc.live &= !mask;
        for wb in &mut self.write_bar {
            if wb.is_some_and(|b| mask & (1 << b) != 0) {
                *wb = None;
            }
        }
        for rb in &mut self.read_bars {
            *rb &= !mask;
        }
    }

    /// The latency to schedule statically for the producer at `pc` writing `dst`, or `None` when
    /// it needs a write barrier: variable latency, or too close to its first dependent (or the
    /// block end) for stall counts to cover.
    fn static_latency(&self, pc: usize, dst: RegRef) -> Option<u32> {
        let op = self.insts[pc].op;
        if op == Opcode::AtomgAdd {
            return None;
        }
        let l = self.config.fixed_latency(op.pipe())?;
        let next = (pc + 1..self.end)
            .find(|&j| {
                let o = &self.ops[j];
                o.dst() == Some(dst) || o.srcs().contains(&dst)
            })
            .unwrap_or(self.end);
        let reach = (next - pc) as u64 * MAX_STALL as u64;
        (reach >= l as u64).then_some(l)
    }
}

/// Raises stall counts in `p..c`, latest first, until the instruction at `c` (or the one after
/// the block, when `c` is the block end) issues at least `latency` cycles after `p`.
fn ensure_gap(codes: &mut [ControlCode], p: usize, c: usize, latency: u32) {
    let mut dist = 0u64;
    for code in &codes[p..c] {
        dist += code.stall.max(1) as u64;
        if dist >= latency as u64 {
            return;
        }
    }
    let mut need = latency as u64 - dist;
    for code in codes[p..c].iter_mut().rev() {
        let s = code.stall.max(1);
        let add = ((MAX_STALL - s) as u64).min(need);
        code.stall = s + add as u8;
        need -= add;
        if need == 0 {
            return;
        }
    }
    debug_assert_eq!(
        need, 0,
        "latency {latency} not coverable from pc {p} to {c}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::native::assemble;

    fn program(src: &str) -> Program {
        assemble(src).unwrap_or_else(|e| panic!("{}", e.render("t.sasm")))
    }

    #[test]
    fn blocks_split_at_targets_and_after_branches() {
        let p = program(
            "MOV R0, 0\ntop: IADD R0, R0, 1\n@P0 BRA top\nBAR.SYNC\nMOV R1, 2\nEXIT\nMOV R2, 3\n",
        );
        let blocks = basic_blocks(&p.instructions);
        let spans: Vec<(usize, usize)> = blocks.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(spans, vec![(0, 1), (1, 3), (3, 4), (4, 6), (6, 7)]);
        assert_eq!(blocks[1].succs, vec![1, 2]);
        assert!(blocks[3].succs.is_empty());
    }

    #[test]
    fn round_robin_then_oldest() {
        let mut a = BarrierAlloc::default();
        let got: Vec<u8> = (0..6).map(|pc| a.take(pc)).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(a.take(6), 0);
        a.live &= !(1 << 3);
        assert_eq!(a.take(7), 3);
    }

    #[test]
    fn gaps_spread_over_several_instructions() {
        let mut codes = vec![
            ControlCode {
                stall: 1,
                ..ControlCode::default()
            };
            4
        ];
        ensure_gap(&mut codes, 0, 3, 20);
        let stalls: Vec<u8> = codes.iter().map(|c| c.stall).collect();
        assert_eq!(stalls, vec![1, 4, 15, 1]);
    }
}
