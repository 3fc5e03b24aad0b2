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

/// Set in [`StreamInst::addr_start`] when the instruction's addresses are kept as the first
/// lane's and a stride (two entries) instead of one per lane.
const STRIDED: u32 = 1 << 31;

/// One dynamic instruction of a warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StreamInst {
    pc: u32,
    mask: LaneMask,
    /// Index of the first address in [`StreamData::addrs`] (with [`STRIDED`] set: of the first
    /// lane's address and the stride), or [`NO_ADDRESSES`].
    addr_start: u32,
}

/// The dynamic instructions of a block's warps, each warp's in one run, in program order.
#[derive(Debug, Default)]
struct StreamData {
    insts: Vec<StreamInst>,
    /// Per memory instruction, one byte address per executing lane, lanes in order; or, for
    /// addresses given as a base and a stride (the tracer's usual form), those two: a
    /// sixteenth of the bytes for the reader to write and the SM to read back, long after,
    /// from memory rather than cache.
    addrs: Vec<u64>,
}

/// The dynamic instructions of one warp, in program order, consumed as the warp issues.
///
/// The warps of a block share one buffer (see [`StreamBuilder`]): a block costs a few
/// allocations rather than two per warp, and the buffer goes when the block's last warp does.
#[derive(Clone, Default)]
pub struct WarpStream {
    /// `None` for a stream without instructions.
    data: Option<Arc<StreamData>>,
    /// The warp's instructions are `data.insts[start..end]`; `next` is the next to consume.
    start: u32,
    end: u32,
    next: u32,
}

/// One dynamic instruction as the SM consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamStep<'a> {
    pub pc: u32,
    /// The lanes that execute (active and predicate true).
    pub mask: LaneMask,
    /// One address per set bit of `mask`, lowest lane first (memory instructions only).
    pub addrs: Option<LaneAddrs<'a>>,
}

/// The addresses of a memory instruction's executing lanes, lowest lane first. Two compare
/// equal when they hold the same addresses, whatever their form.
#[derive(Debug, Clone, Copy)]
pub enum LaneAddrs<'a> {
    List(&'a [u64]),
    /// `count` addresses: the k-th is `first + k·stride` (wrapping).
    Strided {
        first: u64,
        stride: u64,
        count: u32,
    },
}

impl PartialEq for LaneAddrs<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for LaneAddrs<'_> {}

impl LaneAddrs<'_> {
    /// How many addresses.
    pub fn len(&self) -> usize {
        match *self {
            LaneAddrs::List(list) => list.len(),
            LaneAddrs::Strided { count, .. } => count as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The addresses in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(move |k| match *self {
            LaneAddrs::List(list) => list[k],
            LaneAddrs::Strided { first, stride, .. } => {
                first.wrapping_add(stride.wrapping_mul(k as u64))
            }
        })
    }

    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

impl StreamData {
    fn step(&self, inst: StreamInst) -> StreamStep<'_> {
        let addrs = (inst.addr_start != NO_ADDRESSES).then(|| {
            let start = (inst.addr_start & !STRIDED) as usize;
            if inst.addr_start & STRIDED != 0 {
                return match self.addrs.get(start..start + 2) {
                    Some(&[first, stride]) => LaneAddrs::Strided {
                        first,
                        stride,
                        count: inst.mask.count_ones(),
                    },
                    _ => LaneAddrs::List(&[]),
                };
            }
            let end = (start + inst.mask.count_ones() as usize).min(self.addrs.len());
            LaneAddrs::List(&self.addrs[start.min(end)..end])
        });
        StreamStep {
            pc: inst.pc,
            mask: inst.mask,
            addrs,
        }
    }
}

impl WarpStream {
    pub fn new() -> WarpStream {
        WarpStream::default()
    }

    /// Instructions in the stream (consumed or not).
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Whether every instruction has been consumed.
    pub fn is_done(&self) -> bool {
        self.next >= self.end
    }

    /// The PC of the next instruction, if any.
    pub fn peek_pc(&self) -> Option<u32> {
        if self.is_done() {
            return None;
        }
        self.data
            .as_ref()?
            .insts
            .get(self.next as usize)
            .map(|i| i.pc)
    }

    /// Consumes the next instruction.
    pub fn advance(&mut self) -> Option<StreamStep<'_>> {
        if self.is_done() {
            return None;
        }
        let data = self.data.as_deref()?;
        let inst = *data.insts.get(self.next as usize)?;
        self.next += 1;
        Some(data.step(inst))
    }

    /// The instructions as (pc, mask, addresses) triples, from the start, for tests and tools.
    pub fn steps(&self) -> impl Iterator<Item = StreamStep<'_>> + '_ {
        let insts = match &self.data {
            Some(data) => &data.insts[self.start as usize..self.end as usize],
            None => &[],
        };
        insts
            .iter()
            .map(move |&inst| self.data.as_deref().expect("instructions").step(inst))
    }
}

/// Streams are alike when they hold the same instructions and have consumed as many.
impl PartialEq for WarpStream {
    fn eq(&self, other: &WarpStream) -> bool {
        self.next - self.start == other.next - other.start && self.steps().eq(other.steps())
    }
}

impl Eq for WarpStream {}

impl std::fmt::Debug for WarpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarpStream")
            .field("steps", &self.steps().collect::<Vec<_>>())
            .field("consumed", &(self.next - self.start))
            .finish()
    }
}

/// Builds the streams of a block's warps in one shared buffer. Each warp's instructions are
/// pushed together, after [`StreamBuilder::begin_warp`] (the warps may come in any order).
#[derive(Debug, Default)]
pub struct StreamBuilder {
    data: StreamData,
    /// Per warp: where its instructions start and end in `data.insts`.
    ranges: Vec<(u32, u32)>,
    /// The warp instructions are pushed for, if any.
    open: Option<u32>,
}

impl StreamBuilder {
    /// A builder for `warps` warps, with room for `insts` instructions and `addrs` addresses.
    pub fn new(warps: u32, insts: usize, addrs: usize) -> StreamBuilder {
        StreamBuilder {
            data: StreamData {
                insts: Vec::with_capacity(insts),
                addrs: Vec::with_capacity(addrs),
            },
            ranges: vec![(0, 0); warps as usize],
            open: None,
        }
    }

    /// Room for at least `insts` more instructions and `addrs` more addresses.
    pub fn reserve(&mut self, insts: usize, addrs: usize) {
        self.data.insts.reserve(insts);
        self.data.addrs.reserve(addrs);
    }

    /// Instructions pushed so far, and addresses.
    pub fn len(&self) -> (usize, usize) {
        (self.data.insts.len(), self.data.addrs.len())
    }

    /// The instructions pushed from now on are warp `warp`'s (a warp out of range is the
    /// caller's bug and gets none of them); a warp begun again starts over.
    pub fn begin_warp(&mut self, warp: u32) {
        self.close();
        self.open = Some(warp);
        let len = self.data.insts.len() as u32;
        if let Some(range) = self.ranges.get_mut(warp as usize) {
            *range = (len, len);
        }
    }

    /// Ends the open warp's instructions where they are.
    fn close(&mut self) {
        let len = self.data.insts.len() as u32;
        if let Some(range) = self.open.and_then(|w| self.ranges.get_mut(w as usize)) {
            range.1 = len;
        }
    }

    /// Appends an instruction to the open warp's stream. `addrs`, when given, holds one
    /// address per set bit of `mask`, lowest lane first; a mismatched count is the caller's
    /// bug and is cut or padded with the last address so the stream stays well-formed.
    // Inlined into the reader's loop: the call's own cost is most of a push.
    #[inline]
    pub fn push(&mut self, pc: u32, mask: LaneMask, addrs: Option<&[u64]>) {
        let addr_start = match addrs {
            Some(list) => {
                let addrs = &mut self.data.addrs;
                let start = addrs.len() as u32;
                let lanes = mask.count_ones() as usize;
                addrs.extend_from_slice(&list[..lanes.min(list.len())]);
                if list.len() < lanes {
                    addrs.resize(start as usize + lanes, list.last().copied().unwrap_or(0));
                }
                start
            }
            None => NO_ADDRESSES,
        };
        self.data.insts.push(StreamInst {
            pc,
            mask,
            addr_start,
        });
    }

    /// Appends a memory instruction whose k-th executing lane (lowest first) addresses
    /// `first + k·stride` (wrapping), kept as those two numbers.
    #[inline]
    pub fn push_strided(&mut self, pc: u32, mask: LaneMask, first: u64, stride: u64) {
        let addrs = &mut self.data.addrs;
        let start = addrs.len() as u32;
        addrs.extend_from_slice(&[first, stride]);
        self.data.insts.push(StreamInst {
            pc,
            mask,
            addr_start: start | STRIDED,
        });
    }

    /// The warps' streams, in warp order (a warp without instructions gets an empty one).
    pub fn finish(mut self) -> Vec<WarpStream> {
        self.close();
        let data = (!self.data.insts.is_empty()).then(|| Arc::new(self.data));
        self.ranges
            .iter()
            .map(|&(start, end)| WarpStream {
                data: data.as_ref().filter(|_| start < end).cloned(),
                start,
                end,
                next: start,
            })
            .collect()
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

    /// Each PC's recorded instruction as text, for messages (see
    /// [`super::sm::PreparedLaunch::listing`]); `None` to show the program's.
    fn listing(&self, _launch: usize) -> Option<Arc<[String]>> {
        None
    }

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
        let mut b = StreamBuilder::new(1, 0, 0);
        b.begin_warp(0);
        b.push(0, 0xffff_ffff, None);
        b.push(1, 0b101, Some(&[0x100, 0x108]));
        b.push(2, 0b11, Some(&[0x200]));
        let [mut s] = <[WarpStream; 1]>::try_from(b.finish()).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.peek_pc(), Some(0));
        let a = s.advance().unwrap();
        assert_eq!((a.pc, a.mask, a.addrs), (0, 0xffff_ffff, None));
        let b = s.advance().unwrap();
        assert_eq!(b.addrs.map(|a| a.to_vec()), Some(vec![0x100, 0x108]));
        // A short list is padded with its last address: one address per executing lane.
        let c = s.advance().unwrap();
        assert_eq!(c.addrs.map(|a| a.to_vec()), Some(vec![0x200, 0x200]));
        assert!(s.is_done());
        assert!(s.advance().is_none());
        assert_eq!(s.peek_pc(), None);
        assert_eq!(s.steps().count(), 3);
    }

    #[test]
    fn strided_addresses_are_the_list_they_stand_for() {
        let mut b = StreamBuilder::new(1, 0, 0);
        b.begin_warp(0);
        // A full warp, a partial mask, a negative stride (wrapping) and one lane.
        b.push_strided(0, u32::MAX, 0x1000, 4);
        b.push_strided(1, 0b1011, 0x2000, 8);
        b.push_strided(2, 0b110, 0x40, (-16i64) as u64);
        b.push_strided(3, 0b1000, 0x80, 4);
        b.push(4, 0b1011, Some(&[0x2000, 0x2008, 0x2010]));
        assert_eq!(b.len(), (5, 11));
        let [s] = <[WarpStream; 1]>::try_from(b.finish()).unwrap();
        let steps: Vec<_> = s.steps().collect();
        let full: Vec<u64> = (0..32).map(|k| 0x1000 + 4 * k).collect();
        assert_eq!(steps[0].addrs.map(|a| a.to_vec()), Some(full));
        assert_eq!(steps[1].addrs.map(|a| a.len()), Some(3));
        assert_eq!(steps[2].addrs.map(|a| a.to_vec()), Some(vec![0x40, 0x30]));
        assert_eq!(steps[3].addrs.map(|a| a.to_vec()), Some(vec![0x80]));
        // The same addresses compare equal in either form.
        assert_eq!(steps[1].addrs, steps[4].addrs);
        assert_ne!(steps[1].addrs, steps[2].addrs);
    }

    #[test]
    fn the_warps_of_a_block_share_a_buffer_but_not_their_instructions() {
        let mut b = StreamBuilder::new(3, 4, 4);
        // Warps in any order; warp 1 has no instructions.
        b.begin_warp(2);
        b.push(7, 0b1, Some(&[0x70]));
        b.push(8, 0b1, None);
        b.begin_warp(0);
        b.push(5, 0b11, Some(&[0x50, 0x58]));
        // Out of range: nobody's.
        b.begin_warp(3);
        b.push(9, 0b1, None);
        assert_eq!(b.len(), (4, 3));
        let streams = b.finish();
        fn steps(s: &WarpStream) -> Vec<(u32, Option<Vec<u64>>)> {
            s.steps()
                .map(|s| (s.pc, s.addrs.map(|a| a.to_vec())))
                .collect()
        }
        assert_eq!(steps(&streams[0]), [(5, Some(vec![0x50, 0x58]))]);
        assert!(streams[1].is_empty() && streams[1].is_done());
        assert_eq!(streams[1], WarpStream::new());
        assert_eq!(steps(&streams[2]), [(7, Some(vec![0x70])), (8, None)]);
        // Consuming one warp's stream leaves the others (and equal copies) as they were.
        let mut first = streams[2].clone();
        assert_eq!(first.advance().map(|s| s.pc), Some(7));
        assert_ne!(first, streams[2]);
        assert_eq!(streams[2].peek_pc(), Some(7));
        assert_eq!(
            StreamBuilder::new(2, 0, 0).finish(),
            vec![WarpStream::new(); 2]
        );
    }
}
