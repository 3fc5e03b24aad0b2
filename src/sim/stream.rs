//! Recorded instruction streams: how a launch can feed the timing model a warp's dynamic
//! instruction sequence (PCs, active masks, memory addresses) instead of executing its
//! `Program` with `exec`. This is the hook trace replay (Accel-Sim SASS traces) uses; the
//! simulator still knows nothing about files — the front end implements
//! [`InstructionSource`] over whatever it reads.
//!
//! The launch's `Program` still describes every static instruction (one per PC): its opcode
//! gives the pipe and its operands the registers the scoreboard tracks, exactly as for a native
//! kernel. What `exec` would decide at run time — which lanes execute, where control goes, which
//! addresses are touched — comes from the stream instead, and [`ReplayOp`] says, per PC, what
//! kind of control flow and memory access the instruction is.
//!
//! Simplifications: replay is timing-only — no register values and no memory contents; a
//! memory access is described by one address per active lane (its width does not widen the
//! access beyond the sectors the lane addresses fall in).

use super::exec::{AccessKind, Space};
use super::LaneMask;
use std::sync::Arc;

/// The control-flow effect of one static replayed instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplayFlow {
    /// Falls through (ALU, math, memory).
    Next,
    /// A branch, jump, call or return: the fetch of the next instruction waits for it.
    Branch,
    /// A CTA barrier (`BAR.SYNC`): waits until every live thread of the block has arrived.
    Barrier,
    /// A memory barrier: waits until the warp's outstanding memory operations are done.
    Membar,
    /// The executing lanes exit.
    Exit,
}

/// What the timing model needs to know about one static replayed instruction besides its pipe
/// and registers (which come from the launch's `Program`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOp {
    pub flow: ReplayFlow,
    /// Memory space and access kind, for instructions that carry addresses.
    pub mem: Option<(Space, AccessKind)>,
}

impl ReplayOp {
    pub const PLAIN: ReplayOp = ReplayOp {
        flow: ReplayFlow::Next,
        mem: None,
    };
}

const NO_ADDRESSES: u32 = u32::MAX;

/// One dynamic instruction of a warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StreamInst {
    pc: u32,
    mask: LaneMask,
    /// Index of the first address in [`WarpStream::addrs`], or [`NO_ADDRESSES`].
    addr_start: u32,
}

/// The dynamic instructions of one warp, in program order, consumed as the warp issues.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarpStream {
    insts: Vec<StreamInst>,
    /// One byte address per executing lane of each memory instruction, lanes in order.
    addrs: Vec<u64>,
    next: usize,
}

/// One dynamic instruction as the SM consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStep<'a> {
    pub pc: u32,
    /// The lanes that execute (active and predicate true).
    pub mask: LaneMask,
    /// One address per set bit of `mask`, lowest lane first (memory instructions only).
    pub addrs: Option<&'a [u64]>,
}

impl WarpStream {
    pub fn new() -> WarpStream {
        WarpStream::default()
    }

    /// Room for at least `insts` more instructions and `addrs` more addresses.
    pub fn reserve(&mut self, insts: usize, addrs: usize) {
        self.insts.reserve(insts);
        self.addrs.reserve(addrs);
    }

    /// Appends an instruction. `addrs`, when given, holds one address per set bit of `mask`,
    /// lowest lane first; a mismatched count is the caller's bug and is cut or padded with the
    /// last address so the stream stays well-formed.
    pub fn push(&mut self, pc: u32, mask: LaneMask, addrs: Option<&[u64]>) {
        let addr_start = match addrs {
            Some(list) => {
                let start = self.addrs.len() as u32;
                let lanes = mask.count_ones() as usize;
                self.addrs.extend(list.iter().take(lanes));
                let last = list.last().copied().unwrap_or(0);
                for _ in list.len()..lanes {
                    self.addrs.push(last);
                }
                start
            }
            None => NO_ADDRESSES,
        };
        self.insts.push(StreamInst {
            pc,
            mask,
            addr_start,
        });
    }

    /// Instructions in the stream (consumed or not).
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// Whether every instruction has been consumed.
    pub fn is_done(&self) -> bool {
        self.next >= self.insts.len()
    }

    /// The PC of the next instruction, if any.
    pub fn peek_pc(&self) -> Option<u32> {
        self.insts.get(self.next).map(|i| i.pc)
    }

    /// Consumes the next instruction.
    pub fn advance(&mut self) -> Option<StreamStep<'_>> {
        let inst = *self.insts.get(self.next)?;
        self.next += 1;
        let addrs = (inst.addr_start != NO_ADDRESSES).then(|| {
            let start = inst.addr_start as usize;
            let end = (start + inst.mask.count_ones() as usize).min(self.addrs.len());
            &self.addrs[start.min(end)..end]
        });
        Some(StreamStep {
            pc: inst.pc,
            mask: inst.mask,
            addrs,
        })
    }

    /// The instructions as (pc, mask, addresses) triples, from the start, for tests and tools.
    pub fn steps(&self) -> impl Iterator<Item = StreamStep<'_>> + '_ {
        self.insts.iter().map(move |inst| StreamStep {
            pc: inst.pc,
            mask: inst.mask,
            addrs: (inst.addr_start != NO_ADDRESSES).then(|| {
                let start = inst.addr_start as usize;
                let end = (start + inst.mask.count_ones() as usize).min(self.addrs.len());
                &self.addrs[start.min(end)..end]
            }),
        })
    }
}

/// Supplies recorded instruction streams to the timing model. A launch for which
/// [`InstructionSource::replay_ops`] returns `Some` is replayed: its warps take their
/// instructions from the streams [`InstructionSource::block_streams`] hands out when the
/// dispatcher grants each block (so a source can read blocks lazily and memory stays
/// proportional to the resident blocks); other launches execute their `Program` as usual.
pub trait InstructionSource {
    /// Per-PC behaviour of launch `launch` (indexed like its `Program`'s instructions), or
    /// `None` when that launch executes natively.
    fn replay_ops(&self, launch: usize) -> Option<Arc<[ReplayOp]>>;

    /// The streams of block `block` (linear index, x fastest) of launch `launch`, one per warp
    /// of the block in warp order. Missing warps get an empty stream (they leave at once); a
    /// source that fails to read keeps its error for its caller and returns empty streams.
    fn block_streams(&mut self, launch: usize, block: u64, warps: u32) -> Vec<WarpStream>;
}

/// The source of runs without replayed launches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoReplay;

impl InstructionSource for NoReplay {
    fn replay_ops(&self, _launch: usize) -> Option<Arc<[ReplayOp]>> {
        None
    }

    fn block_streams(&mut self, _launch: usize, _block: u64, _warps: u32) -> Vec<WarpStream> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_hands_out_instructions_with_their_addresses_in_order() {
        let mut s = WarpStream::new();
        s.push(0, 0xffff_ffff, None);
        s.push(1, 0b101, Some(&[0x100, 0x108]));
        s.push(2, 0b11, Some(&[0x200]));
        assert_eq!(s.len(), 3);
        assert_eq!(s.peek_pc(), Some(0));
        let a = s.advance().unwrap();
        assert_eq!((a.pc, a.mask, a.addrs), (0, 0xffff_ffff, None));
        let b = s.advance().unwrap();
        assert_eq!(b.addrs, Some(&[0x100u64, 0x108][..]));
        // A short list is padded with its last address: one address per executing lane.
        let c = s.advance().unwrap();
        assert_eq!(c.addrs, Some(&[0x200u64, 0x200][..]));
        assert!(s.is_done());
        assert!(s.advance().is_none());
        assert_eq!(s.steps().count(), 3);
    }
}
