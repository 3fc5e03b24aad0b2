//! Dependency tracking: which of a warp's next instruction's operands are still being produced.
//!
//! One [`Scoreboard`] per SM sub-partition (scheduler) holds the state of each of its warp
//! slots. The three kinds are seeds/002's three levels:
//!
//! - [`ScoreboardKind::Bitmap`] (level 1, `bitmap.rs`): a pending bit per (warp, register); RAW
//!   and WAW block issue.
//! - [`ScoreboardKind::Ranges`] (level 2, `ranges.rs`): a few `base+count` slots per warp that
//!   record only what is pending; a full table is a structural stall.
//! - [`ScoreboardKind::Barriers`] (level 3, `barriers.rs`): compiler control codes — six
//!   dependency barriers per warp with wait masks, read and write barriers. The hardware does
//!   what the codes say; a shadow per-register table reports the dependencies the codes fail
//!   to protect ([`Scoreboard::hazards`]).
//!
//! Dependency-tracked names are general registers `R0`–`R254`, predicates `P0`–`P6` and the
//! NZP flags (written by `CMP`, read by `BRA.<cond>`); `RZ` and `PT` are never pending.
//!
//! Protocol, per issued instruction: [`Scoreboard::check`] → [`Scoreboard::issue`] (returns a
//! [`Ticket`]) → [`Scoreboard::sources_read`] exactly once (at issue for most instructions, when
//! the operands leave the register file for stores and atomics, see [`reads_sources_late`]) →
//! [`Scoreboard::complete`] exactly once, when the result is written (for an instruction without
//! a destination, when it retires — it may still hold a write barrier). Skipping `sources_read`
//! leaves a barriers-kind warp [`Scoreboard::pending`] forever; calling either twice is a bug
//! (the barriers kind debug-asserts it).
//!
//! Simplifications: the state is per warp and per logical register, not per lane (a predicated
//! write is conservatively pending for the whole warp, as seeds/002 describes); a range slot
//! covers one register for our ISA (no vector loads), although the structure stores
//! `base+count`. No allocation happens after [`Scoreboard::new`].

mod barriers;
mod bitmap;
mod ranges;

use crate::isa::{BranchCond, Instruction, Opcode, Pipe};
use crate::sim::config::ScoreboardKind;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Number of dependency barriers per warp (Maxwell–Volta, seeds/002).
pub const DEPENDENCY_BARRIERS: usize = 6;

/// Which path a producer's result comes back on — decides Nsight's long/short scoreboard vs wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepPath {
    /// Fixed-latency pipes (ALU, FMA, branch): a wait shows as `wait`.
    Fixed,
    /// MIO path (MUFU, shared memory): `short_scoreboard`.
    Short,
    /// L1TEX path (global memory, atomics): `long_scoreboard`.
    Long,
}

impl DepPath {
    pub fn of(pipe: Pipe) -> DepPath {
        match pipe {
            Pipe::Alu | Pipe::Fma | Pipe::Branch => DepPath::Fixed,
            Pipe::Mufu | Pipe::Shared => DepPath::Short,
            Pipe::Global => DepPath::Long,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DepPath::Fixed => "fixed",
            DepPath::Short => "short",
            DepPath::Long => "long",
        }
    }
}

/// A dependency-tracked name: a general register, a predicate, or the NZP flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegRef {
    /// `R0`–`R254` (`RZ` is never tracked).
    Reg(u8),
    /// `P0`–`P6` (`PT` is never tracked).
    Pred(u8),
    /// The per-lane NZP flags of `CMP` / `BRA.<cond>`.
    Nzp,
}

impl RegRef {
    /// Number of tracked names: 255 registers, 7 predicates, NZP.
    pub const COUNT: usize = 255 + 7 + 1;

    /// A dense index `0..COUNT`: registers first, then predicates, then NZP.
    pub fn index(self) -> usize {
        match self {
            RegRef::Reg(r) => (r as usize).min(254),
            RegRef::Pred(p) => 255 + (p as usize).min(6),
            RegRef::Nzp => 262,
        }
    }

    pub fn from_index(index: usize) -> Option<RegRef> {
        match index {
            0..=254 => Some(RegRef::Reg(index as u8)),
            255..=261 => Some(RegRef::Pred((index - 255) as u8)),
            262 => Some(RegRef::Nzp),
            _ => None,
        }
    }
}

impl fmt::Display for RegRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegRef::Reg(r) => write!(f, "R{r}"),
            RegRef::Pred(p) => write!(f, "P{p}"),
            RegRef::Nzp => write!(f, "NZP"),
        }
    }
}

/// Most distinct names one instruction reads (guard + three sources for our ISA; room to spare).
pub const MAX_SOURCES: usize = 6;

/// The dependency-tracked names one instruction writes and reads, without allocation.
/// Sources are deduplicated and in operand order: registers (memory bases included), then
/// predicates (guard first), then NZP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepOperands {
    dst: Option<RegRef>,
    srcs: [RegRef; MAX_SOURCES],
    len: u8,
    /// Bit [`RegRef::index`] set for each name read or written: a bit-per-name scoreboard
    /// clears an instruction with one AND per word, looking at names one by one only to say
    /// which one blocks it.
    names: [u64; NAME_WORDS],
    /// The sources then the destination with their [`RegRef::index`], `order[..order_len]`:
    /// the order in which a blocked instruction's names are looked at, decoded once.
    order: [(RegRef, u16); MAX_SOURCES + 1],
    order_len: u8,
    /// [`RegRef::index`] of the destination, or `NONE16`.
    dst_index: u16,
}

/// Words of a set of names, one bit per [`RegRef::index`].
pub(super) const NAME_WORDS: usize = RegRef::COUNT.div_ceil(64);

impl DepOperands {
    pub fn of(inst: &Instruction) -> DepOperands {
        let dst = if inst.op == Opcode::Cmp {
            Some(RegRef::Nzp)
        } else if let Some(r) = inst.dst_reg() {
            Some(RegRef::Reg(r.0))
        } else {
            inst.dst_pred().map(|p| RegRef::Pred(p.0))
        };
        let mut ops = DepOperands {
            dst,
            srcs: [RegRef::Nzp; MAX_SOURCES],
            len: 0,
            names: [0; NAME_WORDS],
            order: [(RegRef::Nzp, 0); MAX_SOURCES + 1],
            order_len: 0,
            dst_index: dst.map_or(NONE16, |d| d.index() as u16),
        };
        for r in inst.src_regs() {
            ops.push(RegRef::Reg(r.0));
        }
        for p in inst.src_preds() {
            ops.push(RegRef::Pred(p.0));
        }
        if matches!(inst.op, Opcode::Bra(BranchCond::Nzp(_))) {
            ops.push(RegRef::Nzp);
        }
        for (k, &r) in ops.srcs[..ops.len as usize]
            .iter()
            .chain(ops.dst.iter())
            .enumerate()
        {
            let i = r.index();
            ops.names[i / 64] |= 1 << (i % 64);
            ops.order[k] = (r, i as u16);
            ops.order_len = k as u8 + 1;
        }
        ops
    }

    /// The sources, then the destination, each with its [`RegRef::index`].
    pub(super) fn in_order(&self) -> &[(RegRef, u16)] {
        &self.order[..self.order_len as usize]
    }

    /// [`RegRef::index`] of the destination, if any.
    pub(super) fn dst_index(&self) -> Option<usize> {
        (self.dst_index != NONE16).then_some(self.dst_index as usize)
    }

    /// Every name read or written, one bit per [`RegRef::index`].
    pub(super) fn names(&self) -> &[u64; NAME_WORDS] {
        &self.names
    }

    fn push(&mut self, r: RegRef) {
        if self.srcs().contains(&r) {
            return;
        }
        debug_assert!(
            (self.len as usize) < MAX_SOURCES,
            "instruction reads more than {MAX_SOURCES} names"
        );
        if (self.len as usize) < MAX_SOURCES {
            self.srcs[self.len as usize] = r;
            self.len += 1;
        }
    }

    /// The name written, if any (`RZ`/`PT` destinations count as none).
    pub fn dst(&self) -> Option<RegRef> {
        self.dst
    }

    /// The distinct names read.
    pub fn srcs(&self) -> &[RegRef] {
        &self.srcs[..self.len as usize]
    }
}

/// Whether an instruction reads its source registers after issue (stores and atomics hand
/// their data to the memory pipeline later), so the SM calls [`Scoreboard::sources_read`] late
/// and a later writer of a source needs a read barrier (WAR).
pub fn reads_sources_late(op: Opcode) -> bool {
    matches!(op, Opcode::Stg | Opcode::Sts | Opcode::AtomgAdd)
}

/// Why the warp's next instruction cannot issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Blocked {
    /// RAW or WAW on a pending register (bitmap, ranges).
    Register {
        reg: RegRef,
        producer_pc: u32,
        path: DepPath,
    },
    /// ranges: no free slot for the destination (structural: `dispatch_stall`).
    TableFull,
    /// barriers: the wait mask names a busy dependency barrier (the lowest one).
    DependencyBarrier {
        barrier: u8,
        producer_pc: u32,
        path: DepPath,
    },
}

impl Blocked {
    /// The path of the producer waited on; `None` for a structural stall.
    pub fn path(&self) -> Option<DepPath> {
        match self {
            Blocked::Register { path, .. } | Blocked::DependencyBarrier { path, .. } => Some(*path),
            Blocked::TableFull => None,
        }
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::Register {
                reg,
                producer_pc,
                path,
            } => write!(
                f,
                "{reg} pending from pc {producer_pc} ({} path)",
                path.name()
            ),
            Blocked::TableFull => write!(f, "scoreboard table full"),
            Blocked::DependencyBarrier {
                barrier,
                producer_pc,
                path,
            } => write!(
                f,
                "barrier B{barrier} busy, set by pc {producer_pc} ({} path)",
                path.name()
            ),
        }
    }
}

const NONE8: u8 = u8::MAX;
const NONE16: u16 = u16::MAX;

/// What one issued instruction holds (register bit, range slot, barriers, shadow entries).
/// Hand it back to [`Scoreboard::sources_read`] and [`Scoreboard::complete`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    pc: u32,
    /// [`RegRef::index`] of the destination, or `NONE16`.
    dst: u16,
    srcs: [u16; MAX_SOURCES],
    nsrcs: u8,
    /// ranges: slot index, or `NONE8`.
    slot: u8,
    read_barrier: u8,
    write_barrier: u8,
}

impl Ticket {
    fn new(pc: u32) -> Ticket {
        Ticket {
            pc,
            dst: NONE16,
            srcs: [NONE16; MAX_SOURCES],
            nsrcs: 0,
            slot: NONE8,
            read_barrier: NONE8,
            write_barrier: NONE8,
        }
    }

    /// The PC of the instruction this ticket was issued for.
    pub fn pc(&self) -> u32 {
        self.pc
    }

    /// Whether the instruction writes `reg` (its completion releases it).
    pub fn writes(&self, reg: RegRef) -> bool {
        self.dst == reg.index() as u16
    }

    fn dst(&self) -> Option<usize> {
        (self.dst != NONE16).then_some(self.dst as usize)
    }

    fn srcs(&self) -> impl Iterator<Item = usize> + '_ {
        self.srcs[..self.nsrcs as usize].iter().map(|&s| s as usize)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HazardKind {
    /// Read after write: a source is still being produced.
    Raw,
    /// Write after read: the destination is a source an in-flight instruction has not read yet.
    War,
    /// Write after write: the destination still has a pending producer.
    Waw,
}

impl HazardKind {
    pub fn name(self) -> &'static str {
        match self {
            HazardKind::Raw => "RAW",
            HazardKind::War => "WAR",
            HazardKind::Waw => "WAW",
        }
    }
}

/// A dependency the control codes failed to protect: `consumer_pc` issued while the earlier
/// instruction at `producer_pc` (the writer for RAW/WAW, the pending reader for WAR) was in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hazard {
    pub kind: HazardKind,
    pub reg: RegRef,
    pub producer_pc: u32,
    pub consumer_pc: u32,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} hazard on {}: pc {} issued while pc {} was in flight",
            self.kind.name(),
            self.reg,
            self.consumer_pc,
            self.producer_pc
        )
    }
}

/// The producer of something pending: its PC and the path its result comes back on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Producer {
    pc: u32,
    path: DepPath,
}

impl Producer {
    const NONE: Producer = Producer {
        pc: 0,
        path: DepPath::Fixed,
    };
}

#[derive(Debug, Clone)]
enum Imp {
    Bitmap(bitmap::Bitmap),
    Ranges(ranges::Ranges),
    Barriers(barriers::Barriers),
}

/// Dependency state of every warp slot of one scheduler; enum dispatch over the three kinds.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    imp: Imp,
}

impl Scoreboard {
    /// `range_slots` is used by the ranges kind only (clamped to 1..=64).
    pub fn new(kind: ScoreboardKind, warps: usize, range_slots: u32) -> Scoreboard {
        let imp = match kind {
            ScoreboardKind::Bitmap => Imp::Bitmap(bitmap::Bitmap::new(warps)),
            ScoreboardKind::Ranges => Imp::Ranges(ranges::Ranges::new(warps, range_slots)),
            ScoreboardKind::Barriers => Imp::Barriers(barriers::Barriers::new(warps)),
        };
        Scoreboard { imp }
    }

    pub fn kind(&self) -> ScoreboardKind {
        match self.imp {
            Imp::Bitmap(_) => ScoreboardKind::Bitmap,
            Imp::Ranges(_) => ScoreboardKind::Ranges,
            Imp::Barriers(_) => ScoreboardKind::Barriers,
        }
    }

    pub fn warps(&self) -> usize {
        match &self.imp {
            Imp::Bitmap(b) => b.warps(),
            Imp::Ranges(r) => r.warps(),
            Imp::Barriers(b) => b.warps(),
        }
    }

    /// A new warp takes the slot: everything it held is forgotten.
    pub fn reset_warp(&mut self, warp: usize) {
        match &mut self.imp {
            Imp::Bitmap(b) => b.reset_warp(warp),
            Imp::Ranges(r) => r.reset_warp(warp),
            Imp::Barriers(b) => b.reset_warp(warp),
        }
    }

    /// Whether `inst` may issue now as far as dependency tracking is concerned.
    pub fn check(&self, warp: usize, inst: &Instruction) -> Result<(), Blocked> {
        self.check_decoded(warp, inst, &DepOperands::of(inst))
    }

    /// [`Scoreboard::check`] with the instruction's operands already decoded (the SM decodes
    /// each PC once per program). Always inlined: the state computation calls it for nearly
    /// every look at a warp, and the call cost about a fifth of the check.
    #[inline(always)]
    pub fn check_decoded(
        &self,
        warp: usize,
        inst: &Instruction,
        ops: &DepOperands,
    ) -> Result<(), Blocked> {
        match &self.imp {
            Imp::Bitmap(b) => b.check(warp, ops),
            Imp::Ranges(r) => r.check(warp, ops),
            Imp::Barriers(b) => b.check(warp, inst),
        }
    }

    /// Records an issued instruction at `pc`; its result arrives on `path`.
    pub fn issue(&mut self, warp: usize, pc: u32, inst: &Instruction, path: DepPath) -> Ticket {
        self.issue_decoded(warp, pc, inst, &DepOperands::of(inst), path)
    }

    /// [`Scoreboard::issue`] with the instruction's operands already decoded.
    pub fn issue_decoded(
        &mut self,
        warp: usize,
        pc: u32,
        inst: &Instruction,
        ops: &DepOperands,
        path: DepPath,
    ) -> Ticket {
        let producer = Producer { pc, path };
        let mut ticket = Ticket::new(pc);
        ticket.dst = ops.dst_index;
        match &mut self.imp {
            Imp::Bitmap(b) => b.issue(warp, ops, producer),
            Imp::Ranges(r) => ticket.slot = r.issue(warp, ops, producer),
            Imp::Barriers(b) => {
                for (slot, s) in ticket.srcs.iter_mut().zip(ops.srcs()) {
                    *slot = s.index() as u16;
                }
                ticket.nsrcs = ops.srcs().len() as u8;
                let (rb, wb) = b.issue(warp, inst.control.as_ref(), &ticket, producer);
                ticket.read_barrier = rb;
                ticket.write_barrier = wb;
            }
        }
        ticket
    }

    /// The instruction's sources have been read (releases its read barrier).
    pub fn sources_read(&mut self, warp: usize, ticket: Ticket) {
        if let Imp::Barriers(b) = &mut self.imp {
            b.sources_read(warp, &ticket);
        }
    }

    /// The result is written (releases register bit / range slot / write barrier).
    #[inline]
    pub fn complete(&mut self, warp: usize, ticket: Ticket) {
        match &mut self.imp {
            Imp::Bitmap(b) => b.complete(warp, &ticket),
            Imp::Ranges(r) => r.complete(warp, &ticket),
            Imp::Barriers(b) => b.complete(warp, &ticket),
        }
    }

    /// barriers only (appends nothing for the others): the dependencies the control codes fail
    /// to protect if `inst` issued now at `pc` — RAW (a source still pending), WAW (the
    /// destination still pending), WAR (the destination is a source of an in-flight instruction
    /// that has not read its sources). Appends to `out`, one entry per name and kind.
    pub fn hazards(&self, warp: usize, pc: u32, inst: &Instruction, out: &mut Vec<Hazard>) {
        if let Imp::Barriers(b) = &self.imp {
            b.hazards(warp, pc, &DepOperands::of(inst), out);
        }
    }

    /// Whether anything is still outstanding for this warp (pending registers, range slots,
    /// busy barriers, unread sources).
    pub fn pending(&self, warp: usize) -> bool {
        match &self.imp {
            Imp::Bitmap(b) => b.pending(warp),
            Imp::Ranges(r) => r.pending(warp),
            Imp::Barriers(b) => b.pending(warp),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use crate::asm::native::assemble;
    use crate::isa::Instruction;

    /// Assembles one line of native assembly.
    pub fn inst(text: &str) -> Instruction {
        let p =
            assemble(&format!("{text}\n")).unwrap_or_else(|e| panic!("{}", e.render("test.sasm")));
        p.instructions[0].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::inst;
    use super::*;

    #[test]
    fn reg_ref_index_round_trips() {
        for i in 0..RegRef::COUNT {
            assert_eq!(RegRef::from_index(i).unwrap().index(), i);
        }
        assert_eq!(RegRef::from_index(RegRef::COUNT), None);
        assert_eq!(RegRef::Pred(3).to_string(), "P3");
    }

    #[test]
    fn operands_cover_guards_memory_bases_and_nzp() {
        let ops = DepOperands::of(&inst("@P2 STG [R3+4], R1"));
        assert_eq!(ops.dst(), None);
        assert_eq!(
            ops.srcs(),
            &[RegRef::Reg(3), RegRef::Reg(1), RegRef::Pred(2)]
        );
        let ops = DepOperands::of(&inst("IADD R4, R5, R5"));
        assert_eq!(ops.dst(), Some(RegRef::Reg(4)));
        assert_eq!(ops.srcs(), &[RegRef::Reg(5)]);
        assert_eq!(
            DepOperands::of(&inst("CMP R1, R2")).dst(),
            Some(RegRef::Nzp)
        );
        let ops = DepOperands::of(&inst("x: BRA.NZ x"));
        assert_eq!(ops.srcs(), &[RegRef::Nzp]);
        let ops = DepOperands::of(&inst("ISETP.LT P1, RZ, R2"));
        assert_eq!(ops.dst(), Some(RegRef::Pred(1)));
        assert_eq!(ops.srcs(), &[RegRef::Reg(2)]);
        assert_eq!(DepOperands::of(&inst("MOV RZ, R1")).dst(), None);
        let ops = DepOperands::of(&inst("@P2 FFMA R7, R1, R2, R1"));
        let names: Vec<RegRef> = ops.srcs().iter().chain(ops.dst().iter()).copied().collect();
        let order: Vec<(RegRef, u16)> = names.iter().map(|&r| (r, r.index() as u16)).collect();
        assert_eq!(ops.in_order(), order.as_slice());
        assert_eq!(ops.dst_index(), Some(7));
    }

    #[test]
    fn paths_follow_nsight() {
        assert_eq!(DepPath::of(Pipe::Global), DepPath::Long);
        assert_eq!(DepPath::of(Pipe::Shared), DepPath::Short);
        assert_eq!(DepPath::of(Pipe::Mufu), DepPath::Short);
        assert_eq!(DepPath::of(Pipe::Fma), DepPath::Fixed);
    }
}
