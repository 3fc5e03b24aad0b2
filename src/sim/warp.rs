//! The architectural state of one warp: per-lane registers, predicates and NZP flags, the SIMT
//! stack, and the identity of each lane. Timing state (scoreboard, pending writes) lives with the
//! scheduler; this is what `exec` reads and writes.

use super::simt_stack::SimtStack;
use super::{Dim3, LaneMask, MAX_WARP_SIZE};

#[derive(Debug, Clone)]
pub struct WarpContext {
    pub warp_size: u32,
    /// Warp index inside its block.
    pub warp_in_block: u32,
    regs_per_thread: u32,
    /// `regs[reg * warp_size + lane]`: one register of all lanes is contiguous.
    regs: Vec<u32>,
    /// Bit `p` of `preds[lane]` is predicate `Pp`.
    preds: [u8; MAX_WARP_SIZE],
    /// N, Z, P flags per lane (`BranchCond` bit order), as set by `CMP`.
    nzp: [u8; MAX_WARP_SIZE],
    /// Thread index of each lane inside the block.
    pub tid: [Dim3; MAX_WARP_SIZE],
    /// Lanes that hold a thread of the block (the last warp of a block may be partial).
    pub valid: LaneMask,
    /// Lanes that have executed `EXIT`.
    pub exited: LaneMask,
    pub simt: SimtStack,
}

impl WarpContext {
    pub fn new(warp_size: u32, warp_in_block: u32, block: Dim3, regs_per_thread: u32) -> Self {
        let mut ctx = WarpContext {
            warp_size,
            warp_in_block,
            regs_per_thread,
            regs: Vec::new(),
            preds: [0; MAX_WARP_SIZE],
            nzp: [0; MAX_WARP_SIZE],
            tid: [Dim3::new(0, 0, 0); MAX_WARP_SIZE],
            valid: 0,
            exited: 0,
            simt: SimtStack::new(0),
        };
        ctx.reset(warp_size, warp_in_block, block, regs_per_thread);
        ctx
    }

    /// Makes this context what [`WarpContext::new`] would with these arguments, keeping its
    /// allocations (an SM reuses the contexts of warps that left).
    pub fn reset(&mut self, warp_size: u32, warp_in_block: u32, block: Dim3, regs_per_thread: u32) {
        let first = warp_in_block as u64 * warp_size as u64;
        // The block's threads fill the warp's lanes from the lowest: the valid lanes are the
        // first `lanes`.
        let lanes = block.count().saturating_sub(first).min(warp_size as u64) as usize;
        self.valid = if lanes >= LaneMask::BITS as usize {
            LaneMask::MAX
        } else {
            (1 << lanes) - 1
        };
        let start = block.unlinear(first);
        let tid = &mut self.tid[..lanes];
        if start.x as u64 + lanes as u64 <= block.x as u64 {
            // The warp lies in one row of the block (nearly always): no carry to look for.
            for (lane, t) in tid.iter_mut().enumerate() {
                *t = Dim3::new(start.x + lane as u32, start.y, start.z);
            }
        } else {
            // Thread indices by counting up from the warp's first thread (no division per lane).
            let mut next = start;
            for t in tid {
                *t = next;
                next.x += 1;
                if next.x == block.x {
                    next.x = 0;
                    next.y += 1;
                    if next.y == block.y {
                        next.y = 0;
                        next.z += 1;
                    }
                }
            }
        }
        self.tid[lanes..].fill(Dim3::new(0, 0, 0));
        self.warp_size = warp_size;
        self.warp_in_block = warp_in_block;
        self.regs_per_thread = regs_per_thread;
        self.regs.clear();
        self.regs.resize((regs_per_thread * warp_size) as usize, 0);
        self.preds = [0; MAX_WARP_SIZE];
        self.nzp = [0; MAX_WARP_SIZE];
        self.exited = 0;
        self.simt.reset(self.valid);
    }

    pub fn regs_per_thread(&self) -> u32 {
        self.regs_per_thread
    }

    /// Register `reg` of `lane`; registers beyond `.regs` and RZ read 0.
    #[inline]
    pub fn reg(&self, reg: u8, lane: u32) -> u32 {
        let r = reg as u32;
        if r >= self.regs_per_thread {
            return 0;
        }
        self.regs[(r * self.warp_size + lane) as usize]
    }

    /// Register `reg` of every lane in place, for a full-size warp (`None` for RZ, registers
    /// beyond `.regs`, and warps narrower than [`MAX_WARP_SIZE`]).
    #[inline]
    pub fn reg_row(&self, reg: u8) -> Option<&[u32; MAX_WARP_SIZE]> {
        let r = reg as u32;
        if r >= self.regs_per_thread || self.warp_size as usize != MAX_WARP_SIZE {
            return None;
        }
        let start = (r * self.warp_size) as usize;
        self.regs.get(start..start + MAX_WARP_SIZE)?.try_into().ok()
    }

    /// Register `reg` of every lane into `out` (zeros for RZ and registers beyond `.regs`).
    #[inline]
    pub fn reg_lanes(&self, reg: u8, out: &mut [u32; MAX_WARP_SIZE]) {
        let r = reg as u32;
        if r < self.regs_per_thread {
            let start = (r * self.warp_size) as usize;
            let n = self.warp_size as usize;
            out[..n].copy_from_slice(&self.regs[start..start + n]);
        }
    }

    #[inline]
    pub fn set_reg(&mut self, reg: u8, lane: u32, value: u32) {
        let r = reg as u32;
        if r < self.regs_per_thread {
            self.regs[(r * self.warp_size + lane) as usize] = value;
        }
    }

    /// Register `reg` of the lanes in `mask` from `values` (writes to RZ and registers beyond
    /// `.regs` are dropped).
    #[inline]
    pub fn set_reg_lanes(&mut self, reg: u8, mask: LaneMask, values: &[u32; MAX_WARP_SIZE]) {
        let r = reg as u32;
        if r >= self.regs_per_thread {
            return;
        }
        let n = self.warp_size as usize;
        let start = (r * self.warp_size) as usize;
        if n == MAX_WARP_SIZE && mask == u32::MAX {
            // A fixed-size copy (a few vector moves, not a call).
            if let Some(row) = self.regs.get_mut(start..start + MAX_WARP_SIZE) {
                let row: &mut [u32; MAX_WARP_SIZE] = row.try_into().expect("a full row");
                *row = *values;
                return;
            }
        }
        let row = &mut self.regs[start..start + n];
        let all = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        if mask & all == all {
            row.copy_from_slice(&values[..n]);
        } else {
            for (lane, (dst, &v)) in row.iter_mut().zip(values).enumerate() {
                if mask >> lane & 1 != 0 {
                    *dst = v;
                }
            }
        }
    }

    #[inline]
    pub fn pred(&self, pred: u8, lane: u32) -> bool {
        pred >= 7 || self.preds[lane as usize] & (1 << pred) != 0
    }

    /// The lanes whose predicate `pred` holds (all of them for `PT`), computed for every lane
    /// at once.
    #[inline]
    pub fn pred_lanes(&self, pred: u8) -> LaneMask {
        if pred >= 7 {
            return LaneMask::MAX;
        }
        let mut holds: LaneMask = 0;
        for (lane, &p) in self.preds.iter().enumerate() {
            holds |= (((p >> pred) & 1) as LaneMask) << lane;
        }
        holds
    }

    /// Predicate `pred` of the lanes in `mask` set to `values[lane] != 0` (writes to `PT` are
    /// dropped), without a branch per lane.
    #[inline]
    pub fn set_pred_lanes(&mut self, pred: u8, mask: LaneMask, values: &[u32; MAX_WARP_SIZE]) {
        if pred >= 7 {
            return;
        }
        let bit = 1u8 << pred;
        for (lane, (p, &v)) in self.preds.iter_mut().zip(values).enumerate() {
            let written = if v != 0 { *p | bit } else { *p & !bit };
            *p = if mask >> lane & 1 != 0 { written } else { *p };
        }
    }

    /// The lanes whose NZP flags meet `mask` (any flag in common).
    #[inline]
    pub fn nzp_lanes(&self, mask: u8) -> LaneMask {
        let mut meets: LaneMask = 0;
        for (lane, &f) in self.nzp.iter().enumerate() {
            meets |= ((f & mask != 0) as LaneMask) << lane;
        }
        meets
    }

    #[inline]
    pub fn set_pred(&mut self, pred: u8, lane: u32, value: bool) {
        if pred < 7 {
            let p = &mut self.preds[lane as usize];
            *p = (*p & !(1 << pred)) | ((value as u8) << pred);
        }
    }

    #[inline]
    pub fn nzp(&self, lane: u32) -> u8 {
        self.nzp[lane as usize]
    }

    #[inline]
    pub fn set_nzp(&mut self, lane: u32, flags: u8) {
        self.nzp[lane as usize] = flags;
    }

    pub fn is_done(&self) -> bool {
        self.simt.is_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_context_is_a_new_one() {
        // A 3-D block whose rows wrap inside a warp, and a partial last warp.
        let block = Dim3::new(5, 3, 3);
        let mut used = WarpContext::new(32, 0, Dim3::new(64, 1, 1), 8);
        used.set_reg_lanes(3, u32::MAX, &[7; MAX_WARP_SIZE]);
        used.exited = 0b1010;
        for (warp, size, regs) in [(0, 32, 4), (1, 32, 6), (1, 16, 2), (2, 16, 5)] {
            used.reset(size, warp, block, regs);
            let fresh = WarpContext::new(size, warp, block, regs);
            assert_eq!(
                format!("{used:?}"),
                format!("{fresh:?}"),
                "warp {warp} size {size}"
            );
            for lane in 0..size {
                let linear = warp as u64 * size as u64 + lane as u64;
                if linear < block.count() {
                    assert_eq!(used.tid[lane as usize], block.unlinear(linear));
                }
            }
        }
    }
}
