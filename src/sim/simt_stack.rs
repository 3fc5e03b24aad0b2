//! The SIMT reconvergence stack of one warp, with reconvergence at the immediate
//! post-dominator of each divergent branch (computed once per program by [`Reconvergence`]).
//!
//! Each entry is (pc, reconvergence pc, lane mask). A divergent branch turns the top entry into
//! the join point and pushes the two paths; an entry whose pc reaches its reconvergence pc is
//! popped and its lanes rejoin the entry below. Simplification: no independent thread
//! scheduling (Volta+); divergent paths run one after the other, not interleaved.

use super::LaneMask;
use crate::isa::{BranchCond, Opcode, Program};

/// A reconvergence pc that is never reached: paths that only meet at exit.
pub const NO_RECONVERGENCE: u32 = u32::MAX;

/// The immediate post-dominator of every PC of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconvergence {
    ipdom: Vec<u32>,
}

impl Reconvergence {
    pub fn of(program: &Program) -> Reconvergence {
        let n = program.instructions.len();
        let exit = n; // virtual exit node
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        for (pc, inst) in program.instructions.iter().enumerate() {
            let unconditional = inst.guard.is_always();
            let next = pc + 1; // pc + 1 == n is the exit
            match inst.op {
                Opcode::Bra(cond) => {
                    let target = (inst.target().unwrap_or(n as u32) as usize).min(n);
                    succs[pc].push(target);
                    if !(unconditional && cond == BranchCond::Always) {
                        succs[pc].push(next);
                    }
                }
                Opcode::Exit => {
                    succs[pc].push(exit);
                    if !unconditional {
                        succs[pc].push(next);
                    }
                }
                _ => succs[pc].push(next),
            }
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        for (pc, s) in succs.iter().enumerate() {
            for &t in s {
                preds[t].push(pc);
            }
        }
        // Post-order of the reverse CFG from the exit (Cooper, Harvey & Kennedy).
        let mut order = Vec::with_capacity(n + 1);
        let mut visited = vec![false; n + 1];
        let mut stack = vec![(exit, 0usize)];
        visited[exit] = true;
        while let Some((node, i)) = stack.pop() {
            if i < preds[node].len() {
                stack.push((node, i + 1));
                let p = preds[node][i];
                if !visited[p] {
                    visited[p] = true;
                    stack.push((p, 0));
                }
            } else {
                order.push(node);
            }
        }
        let mut rank = vec![usize::MAX; n + 1];
        for (i, &node) in order.iter().enumerate() {
            rank[node] = i;
        }
        const UNDEF: usize = usize::MAX;
        let mut idom = vec![UNDEF; n + 1];
        idom[exit] = exit;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while rank[a] < rank[b] {
                    a = idom[a];
                }
                while rank[b] < rank[a] {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &node in order.iter().rev() {
                if node == exit {
                    continue;
                }
                let mut new = UNDEF;
                for &s in &succs[node] {
                    if idom[s] != UNDEF {
                        new = if new == UNDEF {
                            s
                        } else {
                            intersect(&idom, new, s)
                        };
                    }
                }
                if new != UNDEF && idom[node] != new {
                    idom[node] = new;
                    changed = true;
                }
            }
        }
        let ipdom = (0..n)
            .map(|pc| match idom[pc] {
                d if d == UNDEF || d >= n => NO_RECONVERGENCE,
                d => d as u32,
            })
            .collect();
        Reconvergence { ipdom }
    }

    /// Where the paths of a branch at `pc` meet again.
    pub fn ipdom(&self, pc: u32) -> u32 {
        self.ipdom
            .get(pc as usize)
            .copied()
            .unwrap_or(NO_RECONVERGENCE)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    pc: u32,
    reconverge: u32,
    mask: LaneMask,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimtStack {
    entries: Vec<Entry>,
}

impl SimtStack {
    /// Back to what [`SimtStack::new`] gives, keeping the allocation.
    pub fn reset(&mut self, mask: LaneMask) {
        self.entries.clear();
        if mask != 0 {
            self.entries.push(Entry {
                pc: 0,
                reconverge: NO_RECONVERGENCE,
                mask,
            });
        }
    }

    pub fn new(mask: LaneMask) -> SimtStack {
        let mut s = SimtStack {
            entries: Vec::with_capacity(4),
        };
        if mask != 0 {
            s.entries.push(Entry {
                pc: 0,
                reconverge: NO_RECONVERGENCE,
                mask,
            });
        }
        s
    }

    /// The pc of the next instruction, or `None` once every lane has exited.
    pub fn pc(&self) -> Option<u32> {
        self.entries.last().map(|e| e.pc)
    }

    /// Lanes executing the next instruction.
    pub fn active(&self) -> LaneMask {
        self.entries.last().map_or(0, |e| e.mask)
    }

    pub fn depth(&self) -> usize {
        self.entries.len()
    }

    pub fn is_done(&self) -> bool {
        self.entries.is_empty()
    }

    /// Moves the top entry to `pc` (fall-through or uniform branch).
    pub fn jump(&mut self, pc: u32) {
        if let Some(top) = self.entries.last_mut() {
            top.pc = pc;
        }
        self.settle();
    }

    /// A branch at the top entry where `taken` lanes go to `target` and the rest fall through to
    /// `next`. Returns whether the warp diverged.
    pub fn branch(&mut self, taken: LaneMask, target: u32, next: u32, reconverge: u32) -> bool {
        let Some(top) = self.entries.last().copied() else {
            return false;
        };
        let taken = taken & top.mask;
        let not_taken = top.mask & !taken;
        if taken == 0 {
            self.jump(next);
            return false;
        }
        if not_taken == 0 {
            self.jump(target);
            return false;
        }
        // The top entry waits at the join point for both paths.
        if let Some(t) = self.entries.last_mut() {
            t.pc = reconverge;
        }
        if reconverge == top.reconverge {
            // Both paths end where the enclosing entry ends: no separate join entry needed.
            self.entries.pop();
        }
        self.entries.push(Entry {
            pc: target,
            reconverge,
            mask: taken,
        });
        self.entries.push(Entry {
            pc: next,
            reconverge,
            mask: not_taken,
        });
        self.settle();
        true
    }

    /// Lanes in `lanes` exit: they leave every entry.
    pub fn exit(&mut self, lanes: LaneMask, next: u32) {
        for e in &mut self.entries {
            e.mask &= !lanes;
        }
        if let Some(top) = self.entries.last_mut() {
            top.pc = next;
        }
        self.settle();
    }

    /// Pops entries that reached their join point or have no lanes left.
    fn settle(&mut self) {
        while let Some(top) = self.entries.last() {
            if top.mask == 0 || top.pc == top.reconverge {
                self.entries.pop();
            } else {
                break;
            }
        }
    }
}
