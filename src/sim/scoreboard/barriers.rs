//! Level 3 of seeds/002: compiler-encoded dependencies — six dependency barriers per warp,
//! set by producers and named by consumers' wait masks (Jia et al. 2018, Maxwell–Volta).
//!
//! Models: per warp slot, six barriers `B0`–`B5`. Issuing an instruction whose control code has
//! a write barrier makes it busy until the result is written ([`Scoreboard::complete`]); a read
//! barrier stays busy until the sources have been read ([`Scoreboard::sources_read`]). An
//! instruction is held while `wait_mask & busy != 0` (reported as the lowest busy barrier waited
//! on, with the PC and path of the producer that last set it). The stall count and yield flag
//! are the scheduler's business, not this unit's. The hardware does exactly what the codes say:
//! registers are not checked for blocking. A shadow per-register table (pending writers and
//! pending readers, with the latest PC of each) lets [`Scoreboard::hazards`] report every
//! RAW/WAW/WAR the codes fail to protect.
//!
//! Simplifications: a barrier set again while busy keeps a count and frees when all its setters
//! have released it (real hardware's behaviour here is undocumented); an instruction without a
//! control code waits for nothing and sets nothing (the SM runs the auto-control pass first for
//! kernels without codes); barrier indices ≥ 6 in a hand-built code are ignored.
//!
//! [`Scoreboard::complete`]: super::Scoreboard::complete
//! [`Scoreboard::sources_read`]: super::Scoreboard::sources_read
//! [`Scoreboard::hazards`]: super::Scoreboard::hazards

use super::{
    Blocked, DepOperands, Hazard, HazardKind, Producer, RegRef, Ticket, DEPENDENCY_BARRIERS, NONE8,
};
use crate::isa::{ControlCode, Instruction};

/// The shadow state of one name: how many in-flight instructions write it / have yet to read it.
#[derive(Debug, Clone, Copy)]
struct Shadow {
    writers: u16,
    readers: u16,
    writer_pc: u32,
    reader_pc: u32,
}

impl Shadow {
    const EMPTY: Shadow = Shadow {
        writers: 0,
        readers: 0,
        writer_pc: 0,
        reader_pc: 0,
    };
}

#[derive(Debug, Clone)]
struct WarpBarriers {
    /// Setters not yet released, per barrier.
    count: [u16; DEPENDENCY_BARRIERS],
    /// The latest setter of each barrier.
    setter: [Producer; DEPENDENCY_BARRIERS],
    shadow: [Shadow; RegRef::COUNT],
    /// Sum of all shadow writer and reader counts.
    outstanding: u32,
}

impl WarpBarriers {
    const EMPTY: WarpBarriers = WarpBarriers {
        count: [0; DEPENDENCY_BARRIERS],
        setter: [Producer::NONE; DEPENDENCY_BARRIERS],
        shadow: [Shadow::EMPTY; RegRef::COUNT],
        outstanding: 0,
    };

    fn busy_mask(&self) -> u8 {
        let mut m = 0;
        for (i, &c) in self.count.iter().enumerate() {
            if c != 0 {
                m |= 1 << i;
            }
        }
        m
    }

    fn set(&mut self, barrier: Option<u8>, producer: Producer) -> u8 {
        match barrier {
            Some(b) if (b as usize) < DEPENDENCY_BARRIERS => {
                self.count[b as usize] = self.count[b as usize].saturating_add(1);
                self.setter[b as usize] = producer;
                b
            }
            _ => NONE8,
        }
    }

    fn release(&mut self, barrier: u8) {
        if barrier != NONE8 {
            let c = &mut self.count[barrier as usize];
            debug_assert!(*c > 0, "barrier B{barrier} released more often than set");
            *c = c.saturating_sub(1);
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Barriers {
    warps: Vec<WarpBarriers>,
}

impl Barriers {
    pub(super) fn new(warps: usize) -> Barriers {
        Barriers {
            warps: vec![WarpBarriers::EMPTY; warps],
        }
    }

    pub(super) fn warps(&self) -> usize {
        self.warps.len()
    }

    pub(super) fn reset_warp(&mut self, warp: usize) {
        self.warps[warp] = WarpBarriers::EMPTY;
    }

    pub(super) fn check(&self, warp: usize, inst: &Instruction) -> Result<(), Blocked> {
        let Some(code) = inst.control.as_ref() else {
            return Ok(());
        };
        let w = &self.warps[warp];
        let hit = code.wait_mask & w.busy_mask();
        if hit == 0 {
            return Ok(());
        }
        let b = hit.trailing_zeros() as u8;
        let p = w.setter[b as usize];
        Err(Blocked::DependencyBarrier {
            barrier: b,
            producer_pc: p.pc,
            path: p.path,
        })
    }

    /// Sets the code's barriers and the shadow entries; returns (read, write) barrier or `NONE8`.
    pub(super) fn issue(
        &mut self,
        warp: usize,
        code: Option<&ControlCode>,
        ticket: &Ticket,
        producer: Producer,
    ) -> (u8, u8) {
        let w = &mut self.warps[warp];
        let (rb, wb) = match code {
            Some(c) => (
                w.set(c.read_barrier, producer),
                w.set(c.write_barrier, producer),
            ),
            None => (NONE8, NONE8),
        };
        if let Some(d) = ticket.dst() {
            let s = &mut w.shadow[d];
            s.writers = s.writers.saturating_add(1);
            s.writer_pc = producer.pc;
            w.outstanding += 1;
        }
        for i in ticket.srcs() {
            let s = &mut w.shadow[i];
            s.readers = s.readers.saturating_add(1);
            s.reader_pc = producer.pc;
            w.outstanding += 1;
        }
        (rb, wb)
    }

    pub(super) fn sources_read(&mut self, warp: usize, ticket: &Ticket) {
        let w = &mut self.warps[warp];
        w.release(ticket.read_barrier);
        for i in ticket.srcs() {
            let s = &mut w.shadow[i];
            debug_assert!(
                s.readers > 0,
                "sources_read called twice for pc {}",
                ticket.pc
            );
            if s.readers > 0 {
                s.readers -= 1;
                w.outstanding -= 1;
            }
        }
    }

    pub(super) fn complete(&mut self, warp: usize, ticket: &Ticket) {
        let w = &mut self.warps[warp];
        w.release(ticket.write_barrier);
        if let Some(d) = ticket.dst() {
            let s = &mut w.shadow[d];
            debug_assert!(s.writers > 0, "complete called twice for pc {}", ticket.pc);
            if s.writers > 0 {
                s.writers -= 1;
                w.outstanding -= 1;
            }
        }
    }

    pub(super) fn hazards(&self, warp: usize, pc: u32, ops: &DepOperands, out: &mut Vec<Hazard>) {
        let w = &self.warps[warp];
        for &r in ops.srcs() {
            let s = &w.shadow[r.index()];
            if s.writers > 0 {
                out.push(Hazard {
                    kind: HazardKind::Raw,
                    reg: r,
                    producer_pc: s.writer_pc,
                    consumer_pc: pc,
                });
            }
        }
        if let Some(r) = ops.dst() {
            let s = &w.shadow[r.index()];
            if s.writers > 0 {
                out.push(Hazard {
                    kind: HazardKind::Waw,
                    reg: r,
                    producer_pc: s.writer_pc,
                    consumer_pc: pc,
                });
            }
            if s.readers > 0 {
                out.push(Hazard {
                    kind: HazardKind::War,
                    reg: r,
                    producer_pc: s.reader_pc,
                    consumer_pc: pc,
                });
            }
        }
    }

    pub(super) fn pending(&self, warp: usize) -> bool {
        let w = &self.warps[warp];
        w.outstanding != 0 || w.busy_mask() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::inst;
    use super::super::*;
    use crate::sim::config::ScoreboardKind;

    fn sb() -> Scoreboard {
        Scoreboard::new(ScoreboardKind::Barriers, 2, 4)
    }

    #[test]
    fn a_barrier_set_twice_frees_after_both_setters() {
        let mut s = sb();
        let a = s.issue(
            0,
            0,
            &inst("[B------:R-:W2:-:S01] LDG R1, [R2]"),
            DepPath::Long,
        );
        let b = s.issue(
            0,
            1,
            &inst("[B------:R-:W2:-:S01] LDS R3, [R2]"),
            DepPath::Short,
        );
        let waiter = inst("[B--2---:R-:W-:-:S01] IADD R4, R1, R3");
        assert_eq!(
            s.check(0, &waiter),
            Err(Blocked::DependencyBarrier {
                barrier: 2,
                producer_pc: 1,
                path: DepPath::Short
            })
        );
        s.sources_read(0, a);
        s.sources_read(0, b);
        s.complete(0, b);
        assert!(s.check(0, &waiter).is_err());
        s.complete(0, a);
        assert_eq!(s.check(0, &waiter), Ok(()));
        assert!(!s.pending(0));
    }

    #[test]
    fn registers_do_not_block_without_codes_but_hazards_are_reported() {
        let mut s = sb();
        let t = s.issue(0, 0, &inst("LDG R1, [R2]"), DepPath::Long);
        s.sources_read(0, t);
        let consumer = inst("IADD R1, R1, R3");
        assert_eq!(s.check(0, &consumer), Ok(()));
        let mut out = Vec::new();
        s.hazards(0, 1, &consumer, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].kind, HazardKind::Raw);
        assert_eq!(out[1].kind, HazardKind::Waw);
        assert!(s.pending(0));
        s.complete(0, t);
        out.clear();
        s.hazards(0, 1, &consumer, &mut out);
        assert!(out.is_empty());
        assert!(!s.pending(0));
        s.reset_warp(0);
        assert!(!s.pending(0));
    }
}
