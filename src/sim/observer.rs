//! The one channel through which the simulator reports what happens: an [`Observer`] with a
//! default no-op method per event. The null observer costs nothing; the trace recorder, tests
//! and progress bars are observers too.
//!
//! [`WarpState`] is the raw reason a resident warp did or did not issue in a cycle, with its
//! detail (register, producer PC, dependency barrier, pipe). It is the one state enum shared by
//! model, trace and report; the analyzer maps it to Nsight's names.

use super::exec::{AccessKind, Space};
use super::fault::Fault;
use super::memory::HitLevel;
use super::scoreboard::{DepPath, Hazard, RegRef};
use super::{Dim3, LaneMask};
use crate::isa::Pipe;
use serde::{Deserialize, Serialize};

/// A warp slot: which SM and which of its warp slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WarpRef {
    pub sm: u32,
    pub slot: u32,
}

/// Why a resident warp's next instruction did or did not issue this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum WarpState {
    /// Issued this cycle.
    Selected,
    /// Eligible, but the scheduler chose another warp (or it was not this warp's turn).
    NotSelected,
    /// A source or destination register is still pending (bitmap / ranges scoreboard).
    Scoreboard {
        reg: RegRef,
        producer_pc: u32,
        path: DepPath,
    },
    /// The control code waits on a busy dependency barrier (barriers scoreboard).
    DependencyBarrier {
        barrier: u8,
        producer_pc: u32,
        path: DepPath,
    },
    /// Control-code stall count, or the non-pipelined core still busy with the last instruction.
    StallCount,
    /// At a CTA barrier (`BAR.SYNC`).
    CtaBarrier,
    /// At a `MEMBAR`, memory operations outstanding.
    Membar,
    /// The execution pipe is busy (issue interval).
    PipeBusy { pipe: Pipe },
    /// The MIO queue (shared memory, MUFU) is full.
    MioThrottle,
    /// The LSU queue for global memory is full.
    LgThrottle,
    /// Ready, but the scoreboard has no free slot for its destination (ranges).
    TableFull,
    /// The target of the last branch is not resolved yet.
    BranchResolving,
    /// No instruction fetched yet (just launched).
    NoInstruction,
    /// Exited, instructions still in flight (loads, stores, or its last instructions): its slot
    /// frees when they complete.
    Drain,
    /// Yielded (control-code yield hint).
    Sleeping,
}

impl WarpState {
    /// Whether the warp could have issued this cycle.
    pub fn is_eligible(self) -> bool {
        matches!(self, WarpState::Selected | WarpState::NotSelected)
    }

    /// In words, for messages (the analyzer has Nsight's names for reports), naming the
    /// instruction a wait is for by `producer(pc)`: a watchdog or deadlock message lists each
    /// resident warp's last state this way.
    pub fn describe(self, producer: impl Fn(u32) -> String) -> String {
        let path = |p: DepPath| match p {
            DepPath::Fixed => "fixed-latency pipe",
            DepPath::Short => "MIO path",
            DepPath::Long => "L1TEX path",
        };
        match self {
            WarpState::Selected => "issuing".into(),
            WarpState::NotSelected => "eligible, another warp selected".into(),
            WarpState::Scoreboard {
                reg,
                producer_pc,
                path: p,
            } => format!(
                "waiting for {reg} ({}) from {}",
                path(p),
                producer(producer_pc)
            ),
            WarpState::DependencyBarrier {
                barrier,
                producer_pc,
                path: p,
            } => format!(
                "waiting on dependency barrier {barrier} ({}) set by {}",
                path(p),
                producer(producer_pc)
            ),
            WarpState::StallCount => "stalled by its control code's stall count".into(),
            WarpState::CtaBarrier => "at BAR.SYNC".into(),
            WarpState::Membar => "at MEMBAR, memory operations outstanding".into(),
            WarpState::PipeBusy { pipe } => format!("the {} pipe is busy", pipe.name()),
            WarpState::MioThrottle => "the MIO queue is full".into(),
            WarpState::LgThrottle => "the LSU queue is full".into(),
            WarpState::TableFull => "no free scoreboard entry".into(),
            WarpState::BranchResolving => "waiting for a branch to resolve".into(),
            WarpState::NoInstruction => "no instruction fetched yet".into(),
            WarpState::Drain => "exited, instructions still in flight".into(),
            WarpState::Sleeping => "yielded".into(),
        }
    }
}

/// Identity of a warp that starts on an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpInfo {
    pub launch: u32,
    pub block: u32,
    pub ctaid: Dim3,
    pub warp_in_block: u32,
    pub scheduler: u32,
    pub lanes: LaneMask,
}

/// One memory instruction's request as the memory model answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemEvent {
    pub space: MemSpace,
    pub kind: MemKind,
    pub sectors: u32,
    pub level: HitLevel,
    /// Extra shared-memory passes due to bank conflicts.
    pub replays: u32,
    pub complete_at: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemSpace {
    Global,
    Shared,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemKind {
    Load,
    Store,
    Atomic,
}

impl From<Space> for MemSpace {
    fn from(s: Space) -> MemSpace {
        match s {
            Space::Global => MemSpace::Global,
            Space::Shared => MemSpace::Shared,
        }
    }
}

impl From<AccessKind> for MemKind {
    fn from(k: AccessKind) -> MemKind {
        match k {
            AccessKind::Load => MemKind::Load,
            AccessKind::Store => MemKind::Store,
            AccessKind::Atomic => MemKind::Atomic,
        }
    }
}

/// Receives every event of a run. All methods default to doing nothing.
#[allow(unused_variables)]
pub trait Observer {
    /// Whether this observer looks at `warp_state` at all. Without it, the simulator may skip
    /// telling every warp of a group about a state they all change to at once (the warps ready
    /// but for one pipe, when the pipe frees or fills).
    const WARP_STATES: bool = true;
    fn kernel_launch(&mut self, cycle: u64, launch: u32) {}
    fn kernel_complete(&mut self, cycle: u64, launch: u32) {}
    fn block_assign(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {}
    fn block_complete(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {}
    fn warp_launch(&mut self, cycle: u64, warp: WarpRef, info: &WarpInfo) {}
    fn warp_exit(&mut self, cycle: u64, warp: WarpRef) {}
    /// The warp's state changed this cycle (it holds until the next change or exit).
    fn warp_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState) {}
    /// Whether this observer takes the warps ready but for one pipe as a group: then the
    /// simulator reports their common changes once, by [`Observer::pipe_state`], instead of
    /// one `warp_state` per warp, and says by [`Observer::ready_state`] which warps are in
    /// such a group. Asked once per scheduler pass.
    fn pipe_groups(&self) -> bool {
        false
    }
    /// [`Observer::warp_state`] of a warp whose next instruction is ready but for `pipe` (or
    /// that pipe's queue): until it issues or is reported again, the warp is in the group of
    /// that pipe of its scheduler, and follows the group's [`Observer::pipe_state`] changes.
    fn ready_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState, pipe: Pipe) {
        self.warp_state(cycle, warp, state);
    }
    /// Only if [`Observer::pipe_groups`]: every warp in the group of `pipe` of scheduler
    /// `scheduler` of SM `sm` that is not in `state` changes to it, as if each were reported by
    /// `warp_state` — in launch order, among the pass's other state changes, which come after
    /// this call: a warp of the group reported there changes as reported instead. A
    /// scheduler's pass reports its issues first, then these, then its other state changes.
    fn pipe_state(&mut self, cycle: u64, sm: u32, scheduler: u32, pipe: Pipe, state: WarpState) {}
    /// An instruction issued in issue slot `slot` of the warp's scheduler.
    fn issue(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        active: LaneMask,
        pipe: Pipe,
        slot: u32,
    ) {
    }
    /// An instruction's result was written (or its store acknowledged).
    fn complete(&mut self, cycle: u64, warp: WarpRef, pc: u32) {}
    /// A `coarse` switch costs refill slots on a scheduler.
    fn refill(&mut self, cycle: u64, sm: u32, scheduler: u32, slots: u32) {}
    fn barrier_arrive(&mut self, cycle: u64, warp: WarpRef) {}
    fn barrier_release(&mut self, cycle: u64, sm: u32, launch: u32, block: u32) {}
    fn memory(&mut self, cycle: u64, warp: WarpRef, pc: u32, event: &MemEvent) {}
    fn hazard(&mut self, cycle: u64, warp: WarpRef, hazard: &Hazard) {}
    fn fault(&mut self, cycle: u64, fault: &Fault) {}
}

/// The observer that observes nothing.
pub struct NullObserver;

impl Observer for NullObserver {
    const WARP_STATES: bool = false;
}
