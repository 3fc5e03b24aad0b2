//! Pipe groups: the simulator's grouped report of the warps ready but for one pipe
//! ([`Observer::pipe_groups`]) expanded back into one `warp_state` per warp, in exactly the
//! order in which the simulator reports them one by one.
//!
//! Most state changes of a compute-bound kernel are a pipe's ready warps changing together
//! when the pipe frees or fills (90 % on a replayed FMA loop). Told as a group, each costs
//! the simulator and a trace writer one call instead of one per warp. [`GroupExpander`]
//! recovers the per-warp changes from such a stream, and [`PipeGroups`] wraps any observer so
//! that it sees the expanded stream (the tests check the simulator's groups with them). The
//! binary reader of format version 6 applies the same rule to its own model's records
//! (`binary.rs`, `Decoder::hold`).
//!
//! The expander keeps, per warp slot, its scheduler, its launch order, its last state and the
//! pipe group it is in (set by `ready_state`, left by any other state report and by an
//! issue). A `pipe_state` changes the group's members not already in that state; their
//! changes are held back and merged, in launch order, with the state changes the same pass
//! of the same scheduler reports after it.

use crate::isa::Pipe;
use crate::sim::observer::{MemEvent, Observer, WarpInfo, WarpRef, WarpState};
use crate::sim::scoreboard::Hazard;
use crate::sim::{Fault, LaneMask};
use rustc_hash::FxHashMap as HashMap;

/// SMs and slots per SM kept in the expander's dense table.
const DENSE_SMS: u32 = 1024;
const DENSE_SLOTS: u32 = 256;

/// What the expander knows of one warp slot.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Launch order (per expander): orders the warps of one scheduler as the simulator lists
    /// them.
    launched: u64,
    scheduler: u32,
    state: Option<WarpState>,
    group: Option<Pipe>,
}

/// A group member's change held back until the pass's other changes place it.
#[derive(Debug, Clone, Copy)]
struct Held {
    launched: u64,
    slot: u32,
    state: WarpState,
}

/// Expands pipe-group reports into per-warp state changes; see the module documentation.
/// Every state change comes out through the `emit` callback of the call that releases it.
#[derive(Debug, Default)]
pub struct GroupExpander {
    /// By `sm * DENSE_SLOTS + slot` for small ids; larger ones (only a corrupt trace has
    /// them) in `sparse`, so that a huge id costs no huge table.
    slots: Vec<Slot>,
    sparse: HashMap<(u32, u32), Slot>,
    /// Per (SM, scheduler): its warp slots in launch order (a slot moves at its next launch).
    members: HashMap<(u32, u32), Vec<u32>>,
    launches: u64,
    /// Changes of group members not yet emitted, in launch order, all of the pass `held_at`.
    held: Vec<Held>,
    /// (cycle, SM, scheduler) of the pass the held changes belong to.
    held_at: (u64, u32, u32),
}

impl GroupExpander {
    pub fn new() -> Self {
        Self::default()
    }

    fn slot_mut(&mut self, w: WarpRef) -> &mut Slot {
        if w.sm >= DENSE_SMS || w.slot >= DENSE_SLOTS {
            return self.sparse.entry((w.sm, w.slot)).or_default();
        }
        let i = (w.sm * DENSE_SLOTS + w.slot) as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, Slot::default());
        }
        &mut self.slots[i]
    }

    /// Emits every held change: the pass they belong to is over.
    pub fn flush(&mut self, emit: &mut impl FnMut(u64, WarpRef, WarpState)) {
        let (cycle, sm, _) = self.held_at;
        for h in self.held.drain(..) {
            emit(cycle, WarpRef { sm, slot: h.slot }, h.state);
        }
    }

    /// A warp arrived in `w` (a new warp: no state, no group).
    pub fn launch(&mut self, w: WarpRef, scheduler: u32) {
        self.launches += 1;
        let launched = self.launches;
        let old = std::mem::replace(
            self.slot_mut(w),
            Slot {
                launched,
                scheduler,
                state: None,
                group: None,
            },
        );
        if old.launched != 0 {
            if let Some(list) = self.members.get_mut(&(w.sm, old.scheduler)) {
                list.retain(|&s| s != w.slot);
            }
        }
        self.members
            .entry((w.sm, scheduler))
            .or_default()
            .push(w.slot);
    }

    /// Warp `w` issued: it leaves its group (its next state is reported by name).
    pub fn issue(&mut self, w: WarpRef) {
        self.slot_mut(w).group = None;
    }

    /// Warp `w` changed to `state`, in the group of `group` if that is given. Held changes of
    /// the same pass that come before it in launch order are emitted first.
    pub fn state(
        &mut self,
        cycle: u64,
        w: WarpRef,
        state: WarpState,
        group: Option<Pipe>,
        emit: &mut impl FnMut(u64, WarpRef, WarpState),
    ) {
        let slot = *self.slot_mut(w);
        if !self.held.is_empty() {
            if self.held_at == (cycle, w.sm, slot.scheduler) {
                let before = self
                    .held
                    .iter()
                    .take_while(|h| h.launched < slot.launched)
                    .count();
                for h in self.held.drain(..before) {
                    emit(
                        cycle,
                        WarpRef {
                            sm: w.sm,
                            slot: h.slot,
                        },
                        h.state,
                    );
                }
                // Reported by name in this pass: that report is its change.
                self.held.retain(|h| h.slot != w.slot);
            } else {
                self.flush(emit);
            }
        }
        let s = self.slot_mut(w);
        s.state = Some(state);
        s.group = group;
        emit(cycle, w, state);
    }

    /// The group of `pipe` of scheduler `scheduler` of SM `sm` changed to `state`.
    pub fn pipe_state(
        &mut self,
        cycle: u64,
        sm: u32,
        scheduler: u32,
        pipe: Pipe,
        state: WarpState,
        emit: &mut impl FnMut(u64, WarpRef, WarpState),
    ) {
        if !self.held.is_empty() && self.held_at != (cycle, sm, scheduler) {
            self.flush(emit);
        }
        self.held_at = (cycle, sm, scheduler);
        let Some(list) = self.members.get(&(sm, scheduler)) else {
            return;
        };
        let already = self.held.len();
        for &slot in list {
            let s = match (sm < DENSE_SMS && slot < DENSE_SLOTS)
                .then(|| self.slots.get_mut((sm * DENSE_SLOTS + slot) as usize))
            {
                Some(s) => s,
                None => self.sparse.get_mut(&(sm, slot)),
            };
            let Some(s) = s else { continue };
            if s.group == Some(pipe) && s.state != Some(state) {
                s.state = Some(state);
                self.held.push(Held {
                    launched: s.launched,
                    slot,
                    state,
                });
            }
        }
        // Each list is in launch order; a pass's second group merges into the first's.
        if already > 0 {
            self.held.sort_by_key(|h| h.launched);
        }
    }
}

/// An observer that takes pipe groups ([`Observer::pipe_groups`]) and shows `inner` the
/// per-warp changes they stand for, in the order the simulator would report them one by one.
/// Call [`PipeGroups::finish`] after the run: the last pass's changes may still be held.
pub struct PipeGroups<O: Observer> {
    inner: O,
    expander: GroupExpander,
    group_changes: u64,
}

impl<O: Observer> PipeGroups<O> {
    pub fn new(inner: O) -> Self {
        PipeGroups {
            inner,
            expander: GroupExpander::new(),
            group_changes: 0,
        }
    }

    /// The group changes reported so far (`pipe_state` calls).
    pub fn group_changes(&self) -> u64 {
        self.group_changes
    }

    /// The inner observer, once every held change has reached it.
    pub fn finish(mut self) -> O {
        self.release();
        self.inner
    }

    /// Hands on the held changes: another kind of event ends a pass.
    fn release(&mut self) {
        let inner = &mut self.inner;
        self.expander
            .flush(&mut |c, w, s| inner.warp_state(c, w, s));
    }
}

impl<O: Observer> Observer for PipeGroups<O> {
    const WARP_STATES: bool = O::WARP_STATES;

    fn kernel_launch(&mut self, cycle: u64, launch: u32) {
        self.release();
        self.inner.kernel_launch(cycle, launch);
    }
    fn kernel_complete(&mut self, cycle: u64, launch: u32) {
        self.release();
        self.inner.kernel_complete(cycle, launch);
    }
    fn block_assign(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.release();
        self.inner.block_assign(cycle, launch, block, sm);
    }
    fn block_complete(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.release();
        self.inner.block_complete(cycle, launch, block, sm);
    }
    fn warp_launch(&mut self, cycle: u64, warp: WarpRef, info: &WarpInfo) {
        self.release();
        self.expander.launch(warp, info.scheduler);
        self.inner.warp_launch(cycle, warp, info);
    }
    fn warp_exit(&mut self, cycle: u64, warp: WarpRef) {
        self.release();
        self.inner.warp_exit(cycle, warp);
    }
    fn warp_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState) {
        let inner = &mut self.inner;
        self.expander
            .state(cycle, warp, state, None, &mut |c, w, s| {
                inner.warp_state(c, w, s)
            });
    }
    fn pipe_groups(&self) -> bool {
        true
    }
    fn ready_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState, pipe: Pipe) {
        let inner = &mut self.inner;
        self.expander
            .state(cycle, warp, state, Some(pipe), &mut |c, w, s| {
                inner.warp_state(c, w, s)
            });
    }
    fn pipe_state(&mut self, cycle: u64, sm: u32, scheduler: u32, pipe: Pipe, state: WarpState) {
        self.group_changes += 1;
        let inner = &mut self.inner;
        self.expander
            .pipe_state(cycle, sm, scheduler, pipe, state, &mut |c, w, s| {
                inner.warp_state(c, w, s)
            });
    }
    fn issue(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        active: LaneMask,
        pipe: Pipe,
        slot: u32,
    ) {
        self.release();
        self.expander.issue(warp);
        self.inner.issue(cycle, warp, pc, active, pipe, slot);
    }
    fn complete(&mut self, cycle: u64, warp: WarpRef, pc: u32) {
        self.release();
        self.inner.complete(cycle, warp, pc);
    }
    fn refill(&mut self, cycle: u64, sm: u32, scheduler: u32, slots: u32) {
        self.release();
        self.inner.refill(cycle, sm, scheduler, slots);
    }
    fn barrier_arrive(&mut self, cycle: u64, warp: WarpRef) {
        self.release();
        self.inner.barrier_arrive(cycle, warp);
    }
    fn barrier_release(&mut self, cycle: u64, sm: u32, launch: u32, block: u32) {
        self.release();
        self.inner.barrier_release(cycle, sm, launch, block);
    }
    fn memory(&mut self, cycle: u64, warp: WarpRef, pc: u32, event: &MemEvent) {
        self.release();
        self.inner.memory(cycle, warp, pc, event);
    }
    fn hazard(&mut self, cycle: u64, warp: WarpRef, hazard: &Hazard) {
        self.release();
        self.inner.hazard(cycle, warp, hazard);
    }
    fn fault(&mut self, cycle: u64, fault: &Fault) {
        self.release();
        self.inner.fault(cycle, fault);
    }
}
