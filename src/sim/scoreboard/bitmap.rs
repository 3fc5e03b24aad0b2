//! Level 1 of seeds/002: a pending bit per (warp, register), as in GPGPU-Sim's reserve / check /
//! release scoreboard.
//!
//! Models: one bit for each of `R0`–`R254`, `P0`–`P6` and NZP per warp slot (263 bits), set at
//! issue for the destination and cleared when the result is written. The next instruction is
//! held on RAW (any source: plain registers, memory bases, guard and predicate sources, NZP for
//! `BRA.<cond>`) and on WAW (its destination). Next to each bit it keeps the producer's PC and
//! result path so a stall can be attributed (long/short scoreboard or wait).
//!
//! Simplifications: a register has at most one pending producer (WAW blocks, so a second one
//! cannot issue); sources are checked at issue only, so there is no WAR tracking — operands are
//! taken to be read in order at issue, as the bitmap hardware of seeds/002 assumes.

use super::{Blocked, DepOperands, Producer, RegRef, Ticket, NAME_WORDS};

const WORDS: usize = NAME_WORDS;

type Bits = [u64; WORDS];

fn is_set(bits: &Bits, i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

#[derive(Debug, Clone)]
pub(super) struct Bitmap {
    /// Per warp slot: the pending bits, apart from the producers (which only a blocked check
    /// reads) so that checking every warp's next instruction stays in a few cache lines.
    bits: Vec<Bits>,
    /// Per warp slot and name: the last producer (meaningful where the bit is set).
    producers: Vec<[Producer; RegRef::COUNT]>,
}

impl Bitmap {
    pub(super) fn new(warps: usize) -> Bitmap {
        Bitmap {
            bits: vec![[0; WORDS]; warps],
            producers: vec![[Producer::NONE; RegRef::COUNT]; warps],
        }
    }

    pub(super) fn warps(&self) -> usize {
        self.bits.len()
    }

    pub(super) fn reset_warp(&mut self, warp: usize) {
        self.bits[warp] = [0; WORDS];
    }

    #[inline]
    pub(super) fn check(&self, warp: usize, ops: &DepOperands) -> Result<(), Blocked> {
        let bits = &self.bits[warp];
        if bits.iter().zip(ops.names()).all(|(b, n)| b & n == 0) {
            return Ok(());
        }
        self.blocker(warp, ops)
    }

    /// Which name blocks an instruction that [`Bitmap::check`] found blocked. Out of line: the
    /// common answer is that nothing does.
    #[inline(never)]
    fn blocker(&self, warp: usize, ops: &DepOperands) -> Result<(), Blocked> {
        let bits = &self.bits[warp];
        for &(reg, i) in ops.in_order() {
            let i = i as usize;
            if is_set(bits, i) {
                let p = self.producers[warp][i];
                return Err(Blocked::Register {
                    reg,
                    producer_pc: p.pc,
                    path: p.path,
                });
            }
        }
        Ok(())
    }

    pub(super) fn issue(&mut self, warp: usize, ops: &DepOperands, producer: Producer) {
        if let Some(i) = ops.dst_index() {
            self.bits[warp][i / 64] |= 1 << (i % 64);
            self.producers[warp][i] = producer;
        }
    }

    pub(super) fn complete(&mut self, warp: usize, ticket: &Ticket) {
        if let Some(i) = ticket.dst() {
            self.bits[warp][i / 64] &= !(1 << (i % 64));
        }
    }

    pub(super) fn pending(&self, warp: usize) -> bool {
        self.bits[warp].iter().any(|&b| b != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::inst;
    use super::super::*;
    use crate::sim::config::ScoreboardKind;

    fn sb() -> Scoreboard {
        Scoreboard::new(ScoreboardKind::Bitmap, 2, 4)
    }

    #[test]
    fn raw_on_a_load_blocks_until_complete() {
        let mut s = sb();
        let t = s.issue(0, 0, &inst("LDG R1, [R2]"), DepPath::Long);
        assert!(s.pending(0));
        assert_eq!(s.check(0, &inst("IMUL R4, R5, R6")), Ok(()));
        assert_eq!(
            s.check(0, &inst("IADD R2, R1, R3")),
            Err(Blocked::Register {
                reg: RegRef::Reg(1),
                producer_pc: 0,
                path: DepPath::Long
            })
        );
        s.sources_read(0, t);
        s.complete(0, t);
        assert_eq!(s.check(0, &inst("IADD R2, R1, R3")), Ok(()));
        assert!(!s.pending(0));
    }

    #[test]
    fn predicates_nzp_and_waw_are_tracked() {
        let mut s = sb();
        s.issue(0, 3, &inst("ISETP.LT P0, R1, R2"), DepPath::Fixed);
        let blocked = s.check(0, &inst("@P0 IADD R1, R1, 1")).unwrap_err();
        assert!(matches!(
            blocked,
            Blocked::Register {
                reg: RegRef::Pred(0),
                producer_pc: 3,
                path: DepPath::Fixed
            }
        ));
        assert!(s.check(0, &inst("SEL R1, R2, R3, !P0")).is_err());
        s.issue(0, 4, &inst("CMP R1, R2"), DepPath::Fixed);
        assert!(matches!(
            s.check(0, &inst("x: BRA.NZ x")),
            Err(Blocked::Register {
                reg: RegRef::Nzp,
                ..
            })
        ));
        assert_eq!(s.check(0, &inst("x: BRA x")), Ok(()));
        s.issue(0, 5, &inst("MUFU.RCP R7, R8"), DepPath::Short);
        assert!(matches!(
            s.check(0, &inst("MOV R7, 1")),
            Err(Blocked::Register {
                reg: RegRef::Reg(7),
                producer_pc: 5,
                path: DepPath::Short
            })
        ));
        // RZ is never pending, and warps are isolated.
        assert_eq!(s.check(0, &inst("MOV RZ, R9")), Ok(()));
        assert_eq!(s.check(1, &inst("MOV R7, R1")), Ok(()));
        s.reset_warp(0);
        assert!(!s.pending(0));
    }
}
