//! Level 2 of seeds/002: a sparse scoreboard that records only what is pending, as `base+count`
//! ranges in a few slots per warp (the scheme of NVIDIA patent US8225076B1).
//!
//! Models: `range_slots` slots per warp slot, each `{base, count, kind, producer pc, path}`.
//! An issuing instruction with a destination takes one free slot until its result is written.
//! RAW and WAW are found by range containment against every used slot; an instruction whose
//! operands are ready but that has a destination and finds no free slot is held by a structural
//! stall ([`Blocked::TableFull`] → Nsight's `dispatch_stall`). RAW/WAW are reported before a
//! full table.
//!
//! Simplifications: our ISA has no vector loads, so every range has `count == 1` (the structure
//! supports more); a range never spans registers of different kinds; no WAR tracking (operands
//! are read at issue, as for the bitmap); at most 64 slots per warp.

use super::{Blocked, DepOperands, DepPath, Producer, RegRef, Ticket, NONE8};

/// Hard cap on slots per warp (the config validates `range_slots <= 64`).
pub(super) const MAX_SLOTS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RangeKind {
    Reg,
    Pred,
    Nzp,
}

/// Splits a name into the kind of register file and the index inside it.
fn split(r: RegRef) -> (RangeKind, u16) {
    match r {
        RegRef::Reg(i) => (RangeKind::Reg, i as u16),
        RegRef::Pred(i) => (RangeKind::Pred, i as u16),
        RegRef::Nzp => (RangeKind::Nzp, 0),
    }
}

#[derive(Debug, Clone, Copy)]
struct RangeSlot {
    base: u16,
    count: u16,
    kind: RangeKind,
    producer_pc: u32,
    path: DepPath,
}

impl RangeSlot {
    const EMPTY: RangeSlot = RangeSlot {
        base: 0,
        count: 0,
        kind: RangeKind::Reg,
        producer_pc: 0,
        path: DepPath::Fixed,
    };

    fn contains(&self, r: RegRef) -> bool {
        let (kind, i) = split(r);
        kind == self.kind && self.base <= i && i < self.base + self.count
    }
}

#[derive(Debug, Clone)]
struct WarpRanges {
    /// Bit `i` set: slot `i` holds a pending range.
    used: u64,
    slots: [RangeSlot; MAX_SLOTS],
}

impl WarpRanges {
    fn pending_slot(&self, r: RegRef) -> Option<&RangeSlot> {
        let mut used = self.used;
        while used != 0 {
            let i = used.trailing_zeros() as usize;
            used &= used - 1;
            if self.slots[i].contains(r) {
                return Some(&self.slots[i]);
            }
        }
        None
    }
}

#[derive(Debug, Clone)]
pub(super) struct Ranges {
    /// All slots free: the low `slots` bits set.
    all: u64,
    warps: Vec<WarpRanges>,
}

impl Ranges {
    pub(super) fn new(warps: usize, slots: u32) -> Ranges {
        let slots = (slots as usize).clamp(1, MAX_SLOTS);
        let all = if slots == 64 {
            u64::MAX
        } else {
            (1u64 << slots) - 1
        };
        let empty = WarpRanges {
            used: 0,
            slots: [RangeSlot::EMPTY; MAX_SLOTS],
        };
        Ranges {
            all,
            warps: vec![empty; warps],
        }
    }

    pub(super) fn warps(&self) -> usize {
        self.warps.len()
    }

    pub(super) fn reset_warp(&mut self, warp: usize) {
        self.warps[warp].used = 0;
    }

    pub(super) fn check(&self, warp: usize, ops: &DepOperands) -> Result<(), Blocked> {
        let w = &self.warps[warp];
        for &r in ops.srcs().iter().chain(ops.dst().iter()) {
            if let Some(s) = w.pending_slot(r) {
                return Err(Blocked::Register {
                    reg: r,
                    producer_pc: s.producer_pc,
                    path: s.path,
                });
            }
        }
        if ops.dst().is_some() && w.used == self.all {
            return Err(Blocked::TableFull);
        }
        Ok(())
    }

    /// Takes a slot for the destination; returns its index (`NONE8` when there is no
    /// destination, or — if the caller ignored [`Blocked::TableFull`] — no free slot).
    pub(super) fn issue(&mut self, warp: usize, ops: &DepOperands, producer: Producer) -> u8 {
        let Some(d) = ops.dst() else {
            return NONE8;
        };
        let w = &mut self.warps[warp];
        let free = self.all & !w.used;
        debug_assert!(free != 0, "issued into a full ranges scoreboard");
        if free == 0 {
            return NONE8;
        }
        let i = free.trailing_zeros() as usize;
        let (kind, base) = split(d);
        w.slots[i] = RangeSlot {
            base,
            count: 1,
            kind,
            producer_pc: producer.pc,
            path: producer.path,
        };
        w.used |= 1 << i;
        i as u8
    }

    pub(super) fn complete(&mut self, warp: usize, ticket: &Ticket) {
        if ticket.slot != NONE8 {
            self.warps[warp].used &= !(1u64 << ticket.slot);
        }
    }

    pub(super) fn pending(&self, warp: usize) -> bool {
        self.warps[warp].used != 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::inst;
    use super::super::*;
    use super::*;
    use crate::sim::config::ScoreboardKind;

    #[test]
    fn full_table_is_structural_and_raw_is_reported_first() {
        let mut s = Scoreboard::new(ScoreboardKind::Ranges, 2, 2);
        let a = s.issue(0, 0, &inst("LDG R1, [R2]"), DepPath::Long);
        let _b = s.issue(0, 1, &inst("LDS R3, [R2]"), DepPath::Short);
        assert_eq!(s.check(0, &inst("LDG R5, [R6]")), Err(Blocked::TableFull));
        // No destination: no slot needed.
        assert_eq!(s.check(0, &inst("STG [R6], R7")), Ok(()));
        assert_eq!(
            s.check(0, &inst("IADD R5, R3, 1")),
            Err(Blocked::Register {
                reg: RegRef::Reg(3),
                producer_pc: 1,
                path: DepPath::Short
            })
        );
        // The other warp has its own slots.
        assert_eq!(s.check(1, &inst("LDG R5, [R6]")), Ok(()));
        s.complete(0, a);
        assert_eq!(s.check(0, &inst("LDG R5, [R1]")), Ok(()));
        assert!(s.pending(0));
    }

    #[test]
    fn containment_respects_kind_and_count() {
        let slot = RangeSlot {
            base: 4,
            count: 4,
            kind: RangeKind::Reg,
            producer_pc: 9,
            path: DepPath::Long,
        };
        assert!(slot.contains(RegRef::Reg(4)));
        assert!(slot.contains(RegRef::Reg(7)));
        assert!(!slot.contains(RegRef::Reg(8)));
        assert!(!slot.contains(RegRef::Reg(3)));
        assert!(!slot.contains(RegRef::Pred(5)));
        let mut r = Ranges::new(1, 4);
        r.warps[0].slots[2] = slot;
        r.warps[0].used = 1 << 2;
        let blocked = r.check(0, &DepOperands::of(&inst("FADD R0, R6, R1")));
        assert_eq!(
            blocked,
            Err(Blocked::Register {
                reg: RegRef::Reg(6),
                producer_pc: 9,
                path: DepPath::Long
            })
        );
    }
}
