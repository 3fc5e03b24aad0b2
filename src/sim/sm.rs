//! One streaming multiprocessor: warp slots, resident blocks with their shared memory and CTA
//! barrier, `schedulers` sub-partitions each with its warp pool, issue slots and pipes, the
//! MIO and LSU queues, and one scoreboard for all warp slots.
//!
//! Each cycle, in order: completions due now are retired (results written under control codes,
//! which issue does for the other scoreboards; scoreboard released); every scheduler decides
//! the state of each of its warps and issues up to `issue_width` instructions by its policy;
//! CTA barriers whose live threads have all arrived release; warps that exited with nothing in
//! flight leave, and blocks whose warps all left free their resources.
//!
//! Simplifications: instruction fetch is modelled only as a fixed delay after warp launch and
//! after each branch (no instruction cache); the register file has no bank conflicts; operand
//! collectors and the reuse cache are not modelled.

use super::config::{CoreModel, GpuConfig, Policy, ScoreboardKind};
use super::dispatcher::{BlockFootprint, SmRoom};
use super::event_queue::EventQueue;
use super::exec::{self, AccessKind, ExecEnv, Flow, SharedMemory, Space, Writeback};
use super::fault::Fault;
use super::memory::{GlobalMemory, MemoryTiming};
use super::observer::{MemEvent, Observer, WarpInfo, WarpRef, WarpState};
use super::scoreboard::{Blocked, DepOperands, DepPath, Hazard, Scoreboard, Ticket};
use super::stream::{LaneAddrs, ReplayFlow, ReplayOp, WarpStream};
use super::warp::WarpContext;
use super::{Dim3, KernelLaunch};
use crate::isa::{Pipe, Program};
use std::sync::Arc;

/// A launch as the SMs run it: the program (with control codes filled in when the scoreboard
/// needs them), its reconvergence table, decoded operands and footprint.
#[derive(Debug, Clone)]
pub struct PreparedLaunch {
    pub launch: KernelLaunch,
    pub program: Arc<Program>,
    /// The reconvergence table and each PC's arithmetic operands.
    pub decoded: exec::Decoded,
    pub footprint: BlockFootprint,
    /// Each PC's dependency operands, decoded once.
    pub deps: Vec<DepOperands>,
    /// For a replayed launch, each PC's control flow and memory access; its warps take their
    /// instructions from recorded streams instead of executing the program.
    pub replay: Option<Arc<[ReplayOp]>>,
    /// For a replayed launch, each PC's recorded instruction as text (real SASS and address):
    /// what messages show instead of the stand-in program's instructions.
    pub listing: Option<Arc<[String]>>,
}

impl PreparedLaunch {
    /// The instruction at `pc` as messages show it.
    pub fn instruction_text(&self, pc: u32) -> String {
        match self.listing.as_ref().and_then(|l| l.get(pc as usize)) {
            Some(text) => text.clone(),
            None => format!("pc {pc} `{}`", self.program.instruction_text(pc)),
        }
    }
}

#[derive(Debug, Clone)]
struct ResidentWarp {
    /// Boxed: the architectural state is large and cold while the scheduler visits warps.
    ctx: Box<WarpContext>,
    launch: u32,
    block_slot: usize,
    scheduler: u32,
    /// No instruction before this cycle (fetch after launch).
    fetch_until: u64,
    branch_until: u64,
    stall_until: u64,
    sleep_until: u64,
    at_barrier: bool,
    /// Lanes that executed the `BAR.SYNC` the warp waits at.
    arrived_lanes: u32,
    membar: bool,
    /// Memory instructions issued and not yet completed.
    mem_inflight: u32,
    /// The scoreboard's answer for the next instruction; only this warp's own events (issue,
    /// completion, sources read) change it.
    deps: Option<Result<(), Blocked>>,
    /// A replayed warp's recorded instructions (`None`: the warp executes its program).
    replay: Option<WarpStream>,
    /// [`ResidentWarp::compute_next_pc`], kept in step by every issue: the SIMT stack is two
    /// pointers away, and the scheduler asks after every event of the warp.
    pc: Option<u32>,
}

/// The part of a warp slot's record that the scheduler reads for every warp every cycle, kept
/// apart from [`ResidentWarp`] so that a pass over a scheduler's warps touches a few cache
/// lines instead of one or two per warp.
#[derive(Debug, Clone, Copy)]
struct HotWarp {
    /// The state as last computed, valid for cycles before `cache_until` unless an event of
    /// this warp (completion, issue, barrier release) invalidates it first.
    cached: WarpState,
    cache_until: u64,
    /// Last reported state.
    reported: Option<WarpState>,
    /// Instructions issued and not yet completed.
    inflight: u32,
    /// Set once the next instruction has passed every check but its pipe and queue: until an
    /// event of this warp, only those two can change its state.
    ready_pipe: Option<Pipe>,
    /// No instruction left (the program exited or the recorded stream ended); kept in step
    /// with the warp's context and stream by every issue.
    done: bool,
}

impl HotWarp {
    /// A slot's record when a warp arrives in it.
    const FRESH: HotWarp = HotWarp {
        cached: WarpState::NoInstruction,
        cache_until: 0,
        reported: None,
        inflight: 0,
        ready_pipe: None,
        done: false,
    };

    /// The cached state is invalid: an event of this warp may have changed it.
    #[inline]
    fn invalidate(&mut self) {
        self.cache_until = 0;
        self.ready_pipe = None;
    }

    /// Whether the cached state still holds at `cycle`; a throttle state does not while a
    /// freed queue entry makes its scheduler look again (`throttle_dirty`).
    #[inline(always)]
    fn cached_holds(&self, cycle: u64, throttle_dirty: bool) -> bool {
        cycle < self.cache_until && !(throttle_dirty && is_throttle(self.cached))
    }
}

impl ResidentWarp {
    fn compute_done(&self) -> bool {
        match &self.replay {
            Some(stream) => stream.is_done(),
            None => self.ctx.is_done(),
        }
    }

    /// The PC of the next instruction to issue.
    fn next_pc(&self) -> Option<u32> {
        self.pc
    }

    fn compute_next_pc(&self) -> Option<u32> {
        match &self.replay {
            Some(stream) => stream.peek_pc(),
            None => self.ctx.simt.pc(),
        }
    }
}

#[derive(Debug, Clone)]
struct ResidentBlock {
    launch: u32,
    block: u64,
    ctaid: Dim3,
    shared: SharedMemory,
    warps: Vec<u32>,
    warps_left: u32,
    arrived_threads: u32,
    footprint: BlockFootprint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    /// The instruction's result is written / its operation is done.
    Complete,
    /// A store's or atomic's source registers have been read.
    SourcesRead,
}

#[derive(Debug, Clone)]
struct Event {
    slot: u32,
    pc: u32,
    kind: EventKind,
    ticket: Ticket,
    /// The result waits in `Sm::writebacks` at this event's index (kept apart: it is most of
    /// an event's size and only a completion reads it).
    writeback: bool,
    pipe: Pipe,
    memory: bool,
}

/// A placeholder in `Sm::writebacks` for an event without a result.
const NO_WRITEBACK: Writeback = Writeback {
    dst: exec::WriteDst::Nzp,
    mask: 0,
    values: [0; crate::sim::MAX_WARP_SIZE],
};

/// Issue-slot accounting of one scheduler (seed 004's categories) and Nsight's scheduler
/// statistics, summed over cycles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchedulerStats {
    pub cycles: u64,
    /// Cycles with at least one resident warp.
    pub active_cycles: u64,
    /// Sum over active cycles of resident (unfinished) warps.
    pub active_warps: u64,
    pub eligible_warps: u64,
    pub issued: u64,
    /// Cycles in which at least one instruction issued.
    pub issue_cycles: u64,
    pub refill_slots: u64,
    /// Slots of cycles that issued nothing (not refill).
    pub vertical_waste: u64,
    /// Unused slots of cycles that issued something.
    pub horizontal_waste: u64,
}

#[derive(Debug, Clone)]
struct SchedulerUnit {
    /// Resident warp slots of this scheduler in launch order, oldest first.
    warps: Vec<u32>,
    last_issued: Option<u32>,
    pipe_free: [u64; 6],
    coarse_current: Option<u32>,
    refill_until: u64,
    active_set: Vec<u32>,
    /// An event touched one of this scheduler's warps since it was last stepped.
    dirty: bool,
    /// The warps events touched since the last pass, when that is all that changed, as a bit
    /// set over their positions in [`Sm::position`] (see [`Sm::schedule_masked`]). Those are
    /// current whenever it is read: any arrival or departure sets `full`, which rebuilds them,
    /// and touches are not recorded until then.
    touched: u64,
    /// Something beyond single warps changed (a warp arrived or left): the next pass visits
    /// every warp.
    full: bool,
    /// The warps grouped by what their state depends on, for [`Sm::schedule_masked`].
    masks: PoolMasks,
    /// Each pipe's entry as last reported to that pipe's ready warps (in `masks`).
    ready_reported: [WarpState; 6],
    stats: SchedulerStats,
    /// What the last stepped cycle looked like, to account for skipped cycles.
    last: CycleSnapshot,
    /// Cycles before this one are in `stats`; those since the last stepped cycle repeat it
    /// and are counted when it is stepped again (see [`Sm::settle`]).
    accounted_to: u64,
    /// The set of active warps a masked pass last counted, and its count: the set seldom
    /// changes between passes, and the baseline x86-64 target has no `popcnt` (a count is
    /// some twenty instructions).
    active_counted: (u64, u32),
}

impl SchedulerUnit {
    /// An event changed the warp at `position` (its [`Sm::position`]) of this scheduler.
    #[inline]
    fn touch(&mut self, position: u8) {
        self.dirty = true;
        if !self.full {
            self.touched |= 1 << (position as u32 % 64);
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct CycleSnapshot {
    /// Unfinished warps after the cycle (those that finished by issuing in it not counted).
    active: u32,
    refill: bool,
    eligible: bool,
    /// No cached state of a warp that was not eligible expires before this cycle.
    quiet_until: u64,
}

/// A scheduler's warps as bit sets over their positions in its oldest-first list, grouped by
/// what their state depends on: a warp ready but for its pipe (or that pipe's queue) is in
/// the state of its pipe's [`Sm::pipe_states`] entry, whatever cycle it is; every other warp
/// is in its cached state until that expires or an event of the warp touches it. So a pass
/// looks only at touched and expired warps, and a pipe's ready warps change state together.
///
/// Laid out so that a pass's copy of the sets and its updates of them move the same aligned
/// 16-byte pairs: a 16-byte load across two stores cannot take its bytes from them, and that
/// stall took a tenth of the pass's time.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct PoolMasks {
    /// By pipe index: the warps ready but for that pipe.
    ready: [u64; 6],
    /// Those of `waiting` whose cached state is eligible (a warp about to run off the end of
    /// its program: issue reports the fault). Before `waiting`, which is read alone: this
    /// pair is updated as one.
    waiting_eligible: u64,
    /// Exited warps still draining (resident, not active).
    done: u64,
    /// The other resident warps.
    waiting: u64,
    /// No cached state of a warp in `waiting` expires before this cycle (a lower bound: the
    /// warps touched since are visited anyway).
    waiting_until: u64,
    /// False until the first pass after warps arrived or left, which rebuilds the sets.
    valid: bool,
}

impl PoolMasks {
    const INVALID: PoolMasks = PoolMasks {
        valid: false,
        ready: [0; 6],
        waiting: 0,
        waiting_eligible: 0,
        done: 0,
        waiting_until: 0,
    };

    /// The positions in `bits` leave every set (before they are placed again).
    fn remove(&mut self, bits: u64) {
        for r in &mut self.ready {
            *r &= !bits;
        }
        self.waiting &= !bits;
        self.waiting_eligible &= !bits;
        self.done &= !bits;
    }
}

/// The most warps one scheduler's [`PoolMasks`] can hold; a larger pool takes the full pass.
const MASKED_POOL: usize = 64;

/// The lowest position in `mask`.
fn lowest(mask: u64) -> Option<usize> {
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// The number of positions in `mask`, cheaply when it has at most one (most passes' eligible
/// warps): without `popcnt` a count is some twenty instructions.
#[inline(always)]
fn count_few(mask: u64) -> u32 {
    if mask & mask.wrapping_sub(1) == 0 {
        (mask != 0) as u32
    } else {
        mask.count_ones()
    }
}

/// Scheduler `s`'s bit in the per-SM scheduler sets (schedulers past the 63rd share the last
/// one, so that a set names at least every scheduler it should).
fn scheduler_bit(s: usize) -> u64 {
    1 << s.min(63)
}

/// Whether a warp in `state` waits for an MIO or LSU queue entry.
fn is_throttle(state: WarpState) -> bool {
    matches!(state, WarpState::MioThrottle | WarpState::LgThrottle)
}

/// A pipe's index in per-pipe arrays: its position in [`Pipe::ALL`].
fn pipe_index(p: Pipe) -> usize {
    match p {
        Pipe::Alu => 0,
        Pipe::Fma => 1,
        Pipe::Mufu => 2,
        Pipe::Shared => 3,
        Pipe::Global => 4,
        Pipe::Branch => 5,
    }
}

/// What a cycle of one SM produced, for the GPU loop.
#[derive(Debug, Default)]
pub struct SmCycle {
    pub issued: u32,
    /// Whether any warp was eligible (issued or not).
    pub any_eligible: bool,
    pub thread_instructions: u64,
}

/// A block that finished on this SM this cycle.
#[derive(Debug, Clone, Copy)]
pub struct FinishedBlock {
    pub launch: u32,
    pub block: u64,
}

pub struct Sm {
    pub id: u32,
    warps: Vec<Option<ResidentWarp>>,
    /// Per warp slot, meaningful while the slot holds a warp.
    hot: Vec<HotWarp>,
    blocks: Vec<Option<ResidentBlock>>,
    schedulers: Vec<SchedulerUnit>,
    scoreboard: Scoreboard,
    /// The scoreboard is `bitmap` (see [`Sm::retire`]).
    bitmap_scoreboard: bool,
    /// Slab indices of pending events by due cycle.
    events: EventQueue,
    event_slab: Vec<Option<Event>>,
    /// Per event slab index: the pending result of a completion with `writeback` set.
    writebacks: Vec<Writeback>,
    free_events: Vec<usize>,
    mio_inflight: u32,
    lsu_inflight: u32,
    /// The scheduler stepped first in a cycle, and so first to a freed LSU or MIO queue entry:
    /// the one after the last to take an entry, as a round-robin arbiter grants.
    queue_priority: usize,
    room: SmRoom,
    pub blocks_run: u64,
    /// Cycles with a resident block, counted up to `busy_from` while one is resident (see
    /// [`Sm::count_busy`]): the GPU loop does not visit an SM in cycles that need nothing of it.
    pub busy_cycles: u64,
    busy_from: u64,
    states: Vec<WarpState>,
    /// Per warp slot: its position in its scheduler's list, as of that scheduler's last
    /// [`PoolMasks`] rebuild.
    position: Vec<u8>,
    unfinished: Vec<usize>,
    /// Scratch: the order in which the policy tries the pool's warps this cycle.
    order: Vec<usize>,
    pool: Vec<u32>,
    /// The pass being made must look again at throttled warps (a queue entry they wait for
    /// was freed).
    throttle_dirty: bool,
    /// The schedulers (by [`scheduler_bit`]) with a warp that waits for a queue entry freed
    /// since their last pass: they are stepped again.
    throttle_pending: u64,
    /// The schedulers with a warp whose cached state is `LgThrottle` (since throttled warps
    /// last looked again): only a freed LSU entry there changes anything.
    lg_waiting: u64,
    /// The same for `MioThrottle` and the MIO queue.
    mio_waiting: u64,
    /// A warp arrived at a barrier or may have finished: `wrap_up` has work.
    wrap_dirty: bool,
    /// No scheduler of this SM needs a pass before this cycle unless an event touches one of
    /// its warps (which resets it): until then each cycle repeats the last for all of them.
    schedulers_quiet_until: u64,
    /// Some block has a warp waiting at its barrier (unfinished): `wrap_up` looks at blocks.
    barrier_pending: bool,
    /// Slots whose warp has no instruction left and none in flight, to leave at the next
    /// `wrap_up` (a warp can be so from its arrival: an empty recorded stream).
    leaving: Vec<u32>,
    /// Every warp timer (fetch, branch, stall, sleep) later than the cycle at which
    /// [`Sm::next_wakeup`] last looked at them all is at least this: the earliest one, unless
    /// a timer set since is earlier (each one set lowers it).
    timer_floor: u64,
    hazards: Vec<Hazard>,
    pub hazard_count: u64,
    /// The contexts of warps that left, for warps that arrive (no allocation per warp); boxed
    /// as `ResidentWarp` holds them, so that one moves between the two without a copy.
    #[allow(clippy::vec_box)]
    spare_contexts: Vec<Box<WarpContext>>,
    /// Scratch for [`Sm::issue`]: what the issuing instruction did.
    executed: Option<Box<exec::Executed>>,
}

/// Everything an SM needs from outside for one cycle.
pub struct CycleContext<'a, O: Observer> {
    pub config: &'a GpuConfig,
    pub launches: &'a [PreparedLaunch],
    pub memory: &'a mut GlobalMemory,
    pub timing: &'a mut MemoryTiming,
    pub observer: &'a mut O,
    /// Whether a scheduler whose only change is a few touched warps may visit just those.
    pub incremental: bool,
}

impl Sm {
    pub fn new(id: u32, config: &GpuConfig) -> Sm {
        let sched = SchedulerUnit {
            warps: Vec::new(),
            last_issued: None,
            pipe_free: [0; 6],
            coarse_current: None,
            refill_until: 0,
            active_set: Vec::new(),
            dirty: true,
            touched: 0,
            full: true,
            masks: PoolMasks::INVALID,
            ready_reported: [WarpState::NotSelected; 6],
            stats: SchedulerStats::default(),
            last: CycleSnapshot::default(),
            accounted_to: 0,
            active_counted: (0, 0),
        };
        Sm {
            id,
            warps: vec![None; config.sm.max_warps as usize],
            hot: vec![HotWarp::FRESH; config.sm.max_warps as usize],
            blocks: vec![None; config.sm.max_blocks as usize],
            schedulers: vec![sched; config.sm.schedulers as usize],
            scoreboard: Scoreboard::new(
                config.scheduler.scoreboard,
                config.sm.max_warps as usize,
                config.scheduler.range_slots,
            ),
            bitmap_scoreboard: config.scheduler.scoreboard == ScoreboardKind::Bitmap,
            events: EventQueue::new(),
            event_slab: Vec::new(),
            writebacks: Vec::new(),
            free_events: Vec::new(),
            mio_inflight: 0,
            lsu_inflight: 0,
            queue_priority: 0,
            room: SmRoom {
                free_warps: config.sm.max_warps,
                free_blocks: config.sm.max_blocks,
                free_registers: config.sm.registers,
                free_shared: config.sm.shared_memory_bytes,
                resident_blocks: 0,
            },
            blocks_run: 0,
            busy_cycles: 0,
            busy_from: 0,
            states: Vec::new(),
            position: vec![0; config.sm.max_warps as usize],
            unfinished: Vec::new(),
            order: Vec::new(),
            pool: Vec::new(),
            throttle_dirty: false,
            throttle_pending: 0,
            lg_waiting: 0,
            mio_waiting: 0,
            wrap_dirty: false,
            schedulers_quiet_until: 0,
            barrier_pending: false,
            leaving: Vec::new(),
            timer_floor: 0,
            hazards: Vec::new(),
            hazard_count: 0,
            executed: None,
            spare_contexts: Vec::new(),
        }
    }

    pub fn room(&self) -> SmRoom {
        self.room
    }

    pub fn scheduler_stats(&self) -> Vec<SchedulerStats> {
        self.schedulers.iter().map(|s| s.stats).collect()
    }

    pub fn is_idle(&self) -> bool {
        self.room.resident_blocks == 0
    }

    /// Places a granted block: its warps take the lowest free slots, spread over schedulers
    /// by slot number.
    #[allow(clippy::too_many_arguments)]
    pub fn assign_block<O: Observer>(
        &mut self,
        cycle: u64,
        config: &GpuConfig,
        launch_index: u32,
        prepared: &PreparedLaunch,
        block: u64,
        ctaid: Dim3,
        streams: Option<Vec<WarpStream>>,
        observer: &mut O,
    ) {
        let fp = prepared.footprint;
        let mut streams = streams.map(Vec::into_iter);
        if self.room.resident_blocks == 0 {
            // Busy from the next cycle: this one's schedulers have run.
            self.busy_from = cycle + 1;
        }
        self.room.free_blocks -= 1;
        self.room.free_warps -= fp.warps;
        self.room.free_registers -= fp.registers;
        self.room.free_shared -= fp.shared_bytes;
        self.room.resident_blocks += 1;
        self.blocks_run += 1;
        let block_slot = self.blocks.iter().position(Option::is_none).unwrap_or(0);
        let mut slots = Vec::with_capacity(fp.warps as usize);
        let mut free = (0..self.warps.len() as u32).filter(|&s| self.warps[s as usize].is_none());
        for w in 0..fp.warps {
            let Some(slot) = free.next() else { break };
            slots.push((w, slot));
        }
        let mut warp_ids = Vec::with_capacity(slots.len());
        for (w, slot) in slots {
            // A replayed warp has no register values to hold.
            let regs = if streams.is_some() {
                0
            } else {
                prepared.program.regs as u32
            };
            let block_dim = prepared.launch.block;
            let ctx = match self.spare_contexts.pop() {
                Some(mut ctx) => {
                    ctx.reset(config.warp_size, w, block_dim, regs);
                    ctx
                }
                None => Box::new(WarpContext::new(config.warp_size, w, block_dim, regs)),
            };
            let replay = streams.as_mut().map(|s| s.next().unwrap_or_default());
            let scheduler = slot % config.sm.schedulers;
            let info = WarpInfo {
                launch: launch_index,
                block: block as u32,
                ctaid,
                warp_in_block: w,
                scheduler,
                lanes: ctx.valid,
            };
            self.scoreboard.reset_warp(slot as usize);
            let warp = ResidentWarp {
                ctx,
                launch: launch_index,
                block_slot,
                scheduler,
                fetch_until: {
                    let t = cycle + 1 + config.sm.fetch_latency as u64;
                    self.timer_floor = self.timer_floor.min(t);
                    t
                },
                branch_until: 0,
                stall_until: 0,
                sleep_until: 0,
                at_barrier: false,
                arrived_lanes: 0,
                membar: false,
                mem_inflight: 0,
                deps: None,
                replay,
                pc: None,
            };
            let warp = ResidentWarp {
                pc: warp.compute_next_pc(),
                ..warp
            };
            self.hot[slot as usize] = HotWarp {
                done: warp.compute_done(),
                ..HotWarp::FRESH
            };
            if self.hot[slot as usize].done {
                self.leaving.push(slot);
            }
            self.warps[slot as usize] = Some(warp);
            let sched = &mut self.schedulers[scheduler as usize];
            sched.warps.push(slot);
            sched.dirty = true;
            sched.full = true;
            self.schedulers_quiet_until = 0;
            warp_ids.push(slot);
            observer.warp_launch(cycle, WarpRef { sm: self.id, slot }, &info);
            // Resident from the grant cycle on, before its first instruction is fetched.
            self.hot[slot as usize].reported = Some(WarpState::NoInstruction);
            observer.warp_state(
                cycle,
                WarpRef { sm: self.id, slot },
                WarpState::NoInstruction,
            );
        }
        self.blocks[block_slot] = Some(ResidentBlock {
            launch: launch_index,
            block,
            ctaid,
            shared: SharedMemory::new(prepared.program.shared_bytes),
            warps_left: warp_ids.len() as u32,
            warps: warp_ids,
            arrived_threads: 0,
            footprint: fp,
        });
    }

    /// Schedules `event` at cycle `at`, with `writeback` its result if `event.writeback`.
    /// Inlined into issue, its one caller: passing the event costs about as much as pushing it.
    #[inline(always)]
    fn push_event(&mut self, at: u64, event: Event, writeback: Option<&Writeback>) {
        let index = match self.free_events.pop() {
            Some(i) => {
                self.event_slab[i] = Some(event);
                i
            }
            None => {
                self.event_slab.push(Some(event));
                self.writebacks.push(NO_WRITEBACK);
                self.event_slab.len() - 1
            }
        };
        if let Some(wb) = writeback {
            self.writebacks[index] = *wb;
        }
        self.events.push(at, index);
    }

    /// The earliest cycle after `cycle` at which something on this SM can change by itself.
    pub fn next_wakeup(&mut self, cycle: u64) -> Option<u64> {
        let mut next = self.events.next_due();
        // Nothing counted below is earlier than `cycle + 1`: once the answer is that soon, the
        // rest cannot change it (a memory-bound run asks nearly every cycle).
        let soonest = cycle + 1;
        if next.is_some_and(|n| n <= soonest) {
            return next;
        }
        let mut consider = |t: u64| {
            if t > cycle {
                next = Some(next.map_or(t, |n: u64| n.min(t)));
            }
            next == Some(soonest)
        };
        for s in &self.schedulers {
            for &p in &s.pipe_free {
                if consider(p) {
                    return next;
                }
            }
            if consider(s.refill_until) {
                return next;
            }
        }
        if self.timer_floor <= cycle {
            self.timer_floor = self
                .warps
                .iter()
                .flatten()
                .flat_map(|w| [w.fetch_until, w.branch_until, w.stall_until, w.sleep_until])
                .filter(|&t| t > cycle)
                .min()
                .unwrap_or(u64::MAX);
        }
        if self.timer_floor != u64::MAX {
            consider(self.timer_floor);
        }
        next
    }

    /// Retires every completion due at `cycle`. With `keep_ready`, a warp whose next
    /// instruction was ready but for its pipe or queue stays so without being looked at again:
    /// a completion only releases (registers, dependency barriers, table slots, in-flight
    /// counts), so it cannot block that instruction, and a freed queue entry reaches throttled
    /// warps through `throttle_dirty`. Nor is a warp looked at again whose state the
    /// completion cannot change: an exited warp still draining other memory operations, or one
    /// the bitmap scoreboard holds on a register the completion does not write. Without
    /// `keep_ready` (the reference), every event of a warp recomputes its state.
    #[inline]
    pub fn retire<O: Observer>(&mut self, cycle: u64, keep_ready: bool, observer: &mut O) {
        // Most SM-cycles have nothing due: they cost one comparison in the GPU loop instead of
        // a call with its register saves.
        if self.events.may_be_due(cycle) {
            self.retire_due(cycle, keep_ready, observer);
        }
    }

    #[inline(never)]
    fn retire_due<O: Observer>(&mut self, cycle: u64, keep_ready: bool, observer: &mut O) {
        while let Some(index) = self.events.pop_due(cycle) {
            let Some(event) = self.event_slab[index].take() else {
                continue;
            };
            self.free_events.push(index);
            let slot = event.slot as usize;
            if let Some(w) = self.warps[slot].as_mut() {
                let hot = &self.hot[slot];
                let keeps_state = keep_ready
                    && (hot.ready_pipe.is_some()
                        || event.kind == EventKind::Complete
                            && cycle < hot.cache_until
                            && match hot.cached {
                                // Exited: its state is `Drain` until its last memory operation.
                                WarpState::Drain => w.mem_inflight > u32::from(event.memory),
                                // The bitmap scoreboard reports the first pending register: one
                                // released before it would have been reported instead.
                                WarpState::Scoreboard { reg, .. } => {
                                    self.bitmap_scoreboard && !event.ticket.writes(reg)
                                }
                                _ => false,
                            });
                if !keeps_state {
                    self.hot[slot].invalidate();
                    w.deps = None;
                    self.schedulers[w.scheduler as usize].touch(self.position[slot]);
                    self.schedulers_quiet_until = 0;
                }
            }
            match event.kind {
                EventKind::SourcesRead => self.scoreboard.sources_read(slot, event.ticket),
                EventKind::Complete => {
                    self.scoreboard.complete(slot, event.ticket);
                    if let Some(warp) = self.warps[slot].as_mut() {
                        if event.writeback {
                            exec::apply(&mut warp.ctx, &self.writebacks[index]);
                        }
                        let hot = &mut self.hot[slot];
                        hot.inflight -= 1;
                        if event.memory {
                            warp.mem_inflight -= 1;
                        }
                        // Only an exited warp can leave (and let a barrier release).
                        if hot.done && hot.inflight == 0 {
                            self.wrap_dirty = true;
                            self.leaving.push(event.slot);
                        }
                    }
                    match event.pipe {
                        Pipe::Global => self.lsu_inflight -= 1,
                        Pipe::Mufu | Pipe::Shared => self.mio_inflight -= 1,
                        _ => {}
                    }
                    // Only schedulers with a warp waiting for this queue look again.
                    self.throttle_pending |= match event.pipe {
                        Pipe::Global => self.lg_waiting,
                        Pipe::Mufu | Pipe::Shared => self.mio_waiting,
                        _ => 0,
                    };
                    observer.complete(
                        cycle,
                        WarpRef {
                            sm: self.id,
                            slot: event.slot,
                        },
                        event.pc,
                    );
                }
            }
        }
        self.events.ran_dry();
    }

    /// [`Sm::warp_state`] of a warp whose cached state has expired, cached again until the
    /// cycle it can change by itself; returns the state and that cycle. Out of line: the
    /// scheduler's pass over its warps mostly takes the cached answer or its pipe table instead.
    #[inline(never)]
    fn refresh_state(
        &mut self,
        cycle: u64,
        config: &GpuConfig,
        slot: u32,
        launches: &[PreparedLaunch],
    ) -> (WarpState, u64) {
        let ready_pipe = self.hot[slot as usize].ready_pipe;
        let Some(w) = self.warps[slot as usize].as_ref() else {
            // (Unreachable: the scheduler's lists hold resident warps. Not cached.)
            let state = match ready_pipe {
                Some(pipe) => self.pipe_entry(cycle, config, 0, pipe_index(pipe)).0,
                None => WarpState::NoInstruction,
            };
            return (state, self.hot[slot as usize].cache_until);
        };
        let scheduler = w.scheduler as usize;
        let (state, until) = match ready_pipe {
            Some(pipe) => self.pipe_entry(cycle, config, scheduler, pipe_index(pipe)),
            None => self.warp_state(cycle, config, slot, launches),
        };
        let hot = &mut self.hot[slot as usize];
        hot.cached = state;
        hot.cache_until = until;
        self.note_throttle(scheduler, state);
        (state, until)
    }

    /// Remembers that scheduler `s` has a warp in `state` if that is a throttle.
    #[inline]
    fn note_throttle(&mut self, s: usize, state: WarpState) {
        match state {
            WarpState::LgThrottle => self.lg_waiting |= scheduler_bit(s),
            WarpState::MioThrottle => self.mio_waiting |= scheduler_bit(s),
            _ => {}
        }
    }

    /// [`Sm::warp_state`] out of line, for a warp issuing again in the same cycle.
    #[inline(never)]
    fn warp_state_again(
        &mut self,
        cycle: u64,
        config: &GpuConfig,
        slot: u32,
        launches: &[PreparedLaunch],
    ) -> WarpState {
        self.warp_state(cycle, config, slot, launches).0
    }

    /// The state of a resident, unfinished warp at `cycle`, before selection, and the cycle
    /// until which it holds unless an event of the warp comes first (`u64::MAX`: only such an
    /// event changes it), found where each answer is: working it out again from the state
    /// cost a second look-up of the warp. Inlined into its two out-of-line callers: it runs
    /// after nearly every issue and completion.
    #[inline(always)]
    fn warp_state(
        &mut self,
        cycle: u64,
        config: &GpuConfig,
        slot: u32,
        launches: &[PreparedLaunch],
    ) -> (WarpState, u64) {
        let Some(w) = self.warps[slot as usize].as_ref() else {
            return (WarpState::NoInstruction, 0);
        };
        let scheduler = w.scheduler as usize;
        let hot = &self.hot[slot as usize];
        if hot.done {
            // Exited, waiting for its memory operations or its last instructions to complete:
            // a stall count holds nothing back, there is no next instruction. Only the
            // non-pipelined core (seed 000) waits out its last instruction's stages as it
            // waits out every other's.
            let non_pipelined = matches!(config.sm.core, CoreModel::NonPipelined { .. });
            if non_pipelined && w.mem_inflight == 0 {
                let until = if cycle < w.stall_until {
                    w.stall_until
                } else {
                    u64::MAX
                };
                return (WarpState::StallCount, until);
            }
            return (WarpState::Drain, u64::MAX);
        }
        if w.at_barrier {
            return (WarpState::CtaBarrier, u64::MAX);
        }
        if w.membar && w.mem_inflight > 0 {
            return (WarpState::Membar, u64::MAX);
        }
        if cycle < w.fetch_until {
            return (WarpState::NoInstruction, w.fetch_until);
        }
        if cycle < w.branch_until {
            return (WarpState::BranchResolving, w.branch_until);
        }
        if cycle < w.stall_until {
            return (WarpState::StallCount, w.stall_until);
        }
        if matches!(config.sm.core, CoreModel::NonPipelined { .. }) && hot.inflight > 0 {
            return (WarpState::StallCount, u64::MAX);
        }
        if cycle < w.sleep_until {
            return (WarpState::Sleeping, w.sleep_until);
        }
        let prepared = &launches[w.launch as usize];
        let program = &prepared.program;
        let Some((pc, inst)) = w
            .next_pc()
            .and_then(|pc| Some((pc, program.instructions.get(pc as usize)?)))
        else {
            // Off the end of the program: let issue report the fault.
            return (WarpState::NotSelected, cycle + 1);
        };
        let deps = match w.deps {
            Some(d) => d,
            None => {
                let d =
                    self.scoreboard
                        .check_decoded(slot as usize, inst, &prepared.deps[pc as usize]);
                if let Some(w) = self.warps[slot as usize].as_mut() {
                    w.deps = Some(d);
                }
                d
            }
        };
        if let Err(blocked) = deps {
            let state = match blocked {
                Blocked::Register {
                    reg,
                    producer_pc,
                    path,
                } => WarpState::Scoreboard {
                    reg,
                    producer_pc,
                    path,
                },
                Blocked::TableFull => WarpState::TableFull,
                Blocked::DependencyBarrier {
                    barrier,
                    producer_pc,
                    path,
                } => WarpState::DependencyBarrier {
                    barrier,
                    producer_pc,
                    path,
                },
            };
            return (state, u64::MAX);
        }
        let pipe = inst.op.pipe();
        self.hot[slot as usize].ready_pipe = Some(pipe);
        self.pipe_entry(cycle, config, scheduler, pipe_index(pipe))
    }

    /// The state of resident warp `slot` at `cycle` and the cycle until which it holds unless
    /// an event of the warp comes first: the cached answer while it holds, else the entry of
    /// `by_pipe` (the scheduler's [`Sm::pipe_states`]) for a warp ready but for its pipe, else
    /// worked out afresh. The answer is cached.
    #[inline(always)]
    fn state_now(
        &mut self,
        cycle: u64,
        config: &GpuConfig,
        slot: u32,
        by_pipe: Option<&[(WarpState, u64); 6]>,
        throttle_dirty: bool,
        launches: &[PreparedLaunch],
    ) -> (WarpState, u64) {
        let w = &mut self.hot[slot as usize];
        if w.cached_holds(cycle, throttle_dirty) {
            return (w.cached, w.cache_until);
        }
        if let (Some(pipe), Some(by_pipe)) = (w.ready_pipe, by_pipe) {
            let (state, until) = by_pipe[pipe_index(pipe)];
            w.cached = state;
            w.cache_until = until;
            // (`lg_waiting` and `mio_waiting` are set by the pass that made a table with throttle
            // entries.)
            return (state, until);
        }
        self.refresh_state(cycle, config, slot, launches)
    }

    /// [`Sm::pipe_entry`] for each pipe of scheduler `s` (by [`pipe_index`]).
    #[inline]
    fn pipe_states(&self, cycle: u64, config: &GpuConfig, s: usize) -> [(WarpState, u64); 6] {
        std::array::from_fn(|p| self.pipe_entry(cycle, config, s, p))
    }

    /// The state of a warp of scheduler `s` whose next instruction is ready but for pipe `p`
    /// (by [`pipe_index`]) — the pipe's issue interval and the MIO/LSU queues — with the cycle
    /// until which that answer holds unless an issue or completion intervenes.
    #[inline(always)]
    fn pipe_entry(&self, cycle: u64, config: &GpuConfig, s: usize, p: usize) -> (WarpState, u64) {
        let pipe = Pipe::ALL[p];
        let free = self.schedulers[s].pipe_free[p];
        if free > cycle {
            return (WarpState::PipeBusy { pipe }, free);
        }
        match pipe {
            Pipe::Mufu | Pipe::Shared if self.mio_inflight >= config.sm.mio_queue => {
                (WarpState::MioThrottle, u64::MAX)
            }
            Pipe::Global if self.lsu_inflight >= config.sm.lsu_queue => {
                (WarpState::LgThrottle, u64::MAX)
            }
            _ => (WarpState::NotSelected, cycle + 1),
        }
    }

    /// Steps every scheduler of this SM through `cycle`.
    #[inline]
    pub fn schedule<O: Observer>(
        &mut self,
        cycle: u64,
        cx: &mut CycleContext<'_, O>,
    ) -> Result<SmCycle, Box<Fault>> {
        // Most SM-cycles of a memory-bound kernel have no scheduler to step: they cost a
        // comparison in the GPU loop instead of a call.
        if cycle < self.schedulers_quiet_until && self.throttle_pending == 0 {
            return Ok(SmCycle::default());
        }
        self.schedule_due(cycle, cx)
    }

    #[inline(never)]
    fn schedule_due<O: Observer>(
        &mut self,
        cycle: u64,
        cx: &mut CycleContext<'_, O>,
    ) -> Result<SmCycle, Box<Fault>> {
        let mut out = SmCycle::default();
        // The throttled warps of these schedulers look again in this cycle's passes, and
        // cache a throttle state again if they still wait.
        let throttled = std::mem::take(&mut self.throttle_pending);
        // (As they were: a scheduler past the 63rd shares its bit with others.)
        let (lg_waiting, mio_waiting) = (self.lg_waiting, self.mio_waiting);
        let coarse = cx.config.scheduler.policy == Policy::Coarse;
        // Read once: the passes' calls out (issue, the observer) would have them reloaded per
        // scheduler.
        let width = cx.config.sm.issue_width;
        let (lsu_queue, mio_queue) = (cx.config.sm.lsu_queue, cx.config.sm.mio_queue);
        let masked_policy = cx.incremental
            && matches!(
                cx.config.scheduler.policy,
                Policy::Gto | Policy::Lrr | Policy::Oldest
            );
        // The first cycle some scheduler must be stepped in, events aside.
        let mut quiet_until = if coarse { 0 } else { u64::MAX };
        // The schedulers share the SM's LSU and MIO queues: the first stepped takes a freed
        // entry. Stepping in a fixed order would make the last scheduler's warps wait longest
        // for the queues (59 % of their cycles against 7 % for the first's, in a vector add).
        let count = self.schedulers.len();
        let first = self.queue_priority;
        for k in 0..count {
            // (Not `% count`: a division per scheduler-step is a measurable share.)
            let s = match first + k {
                s if s >= count => s - count,
                s => s,
            };
            // (Most calls have no freed queue entry to hand on: no scheduler's bit to test.)
            if throttled != 0 {
                let bit = scheduler_bit(s);
                // A queue entry freed this cycle is often taken by an earlier scheduler's
                // issue: if every queue this scheduler's warps wait for is full again, they
                // still wait in the same state, and the freed entry is no reason to step it.
                self.throttle_dirty = throttled & bit != 0
                    && (lg_waiting & bit != 0 && self.lsu_inflight < lsu_queue
                        || mio_waiting & bit != 0 && self.mio_inflight < mio_queue);
                if self.throttle_dirty {
                    self.lg_waiting &= !bit;
                    self.mio_waiting &= !bit;
                    self.schedulers[s].dirty = true;
                }
            }
            let sched = &self.schedulers[s];
            if !sched.dirty
                && !sched.last.eligible
                && !sched.last.refill
                && cycle < sched.last.quiet_until
                && !coarse
            {
                // Nothing this scheduler's warps depend on has changed: the cycle repeats
                // (counted when it is next stepped).
                quiet_until = quiet_until.min(sched.last.quiet_until);
                continue;
            }
            let masked = masked_policy && sched.warps.len() <= MASKED_POOL;
            self.settle_scheduler(s, cycle, width);
            let sched = &mut self.schedulers[s];
            sched.dirty = false;
            if std::mem::take(&mut sched.full) || !masked {
                sched.masks.valid = false;
            }
            let stepped = if masked {
                self.schedule_masked(cycle, s, cx, &mut out)
            } else {
                sched.touched = 0;
                self.schedule_one(cycle, s, cx, &mut out)
            };
            if let Err(fault) = stepped {
                // The schedulers stepped before this one are done with the cycle.
                for earlier in 0..k {
                    let e = (first + earlier) % count;
                    self.settle_scheduler(e, cycle + 1, width);
                }
                return Err(fault);
            }
            let sched = &mut self.schedulers[s];
            sched.accounted_to = cycle + 1;
            quiet_until = match sched.dirty || sched.last.eligible || sched.last.refill {
                true => 0,
                false => quiet_until.min(sched.last.quiet_until),
            };
        }
        self.throttle_dirty = false;
        self.schedulers_quiet_until = quiet_until;
        Ok(out)
    }

    fn schedule_one<O: Observer>(
        &mut self,
        cycle: u64,
        s: usize,
        cx: &mut CycleContext<'_, O>,
        out: &mut SmCycle,
    ) -> Result<(), Box<Fault>> {
        let config = cx.config;
        let width = config.sm.issue_width;
        let policy = config.scheduler.policy;
        // One pass over the scheduler's warps: this runs for every scheduler every cycle.
        let all = std::mem::take(&mut self.schedulers[s].warps);
        let mut pool = std::mem::take(&mut self.pool);
        let mut states = std::mem::take(&mut self.states);
        let mut unfinished = std::mem::take(&mut self.unfinished);
        pool.clear();
        states.clear();
        unfinished.clear();
        let mut quiet_until = u64::MAX;
        let mut eligible_count = 0u64;
        // Most warps that wait are ready but for their pipe or queue (every cycle in a
        // compute-bound kernel): their state is this table's entry for their pipe.
        let by_pipe = self.pipe_states(cycle, config, s);
        // Conservatively: some warp may take a throttle state from the table.
        for &(state, _) in &by_pipe {
            self.note_throttle(s, state);
        }
        let throttle_dirty = self.throttle_dirty;
        // What the simple policies need, found in the same pass: only the first warp in the
        // policy's order that is eligible issues (all but `smt` stop after one warp).
        // Positions in the pool, `NONE` for none.
        const NONE: usize = usize::MAX;
        let last_issued = self.schedulers[s].last_issued.unwrap_or(u32::MAX);
        let mut greedy = NONE;
        let mut first_eligible = NONE;
        let mut first_eligible_after_greedy = NONE;
        let mut active = 0u32;
        let wants_unfinished = matches!(
            policy,
            Policy::Barrel | Policy::Sequential | Policy::TwoLevel | Policy::Coarse
        );
        for &slot in &all {
            // Every slot in the scheduler's list holds a warp (`wrap_up` removes those leaving).
            let w = &mut self.hot[slot as usize];
            // A warp whose last instruction completed this cycle leaves now: it is not resident.
            if w.done && w.inflight == 0 {
                continue;
            }
            let done = w.done;
            let (state, until) = self.state_now(
                cycle,
                config,
                slot,
                Some(&by_pipe),
                throttle_dirty,
                cx.launches,
            );
            // An eligible warp's state holds for this cycle only; whether that ends the quiet
            // is for the snapshot to say (it may have issued, and then it is touched).
            if !state.is_eligible() {
                quiet_until = quiet_until.min(until);
            }
            let i = pool.len();
            if !done {
                active += 1;
                if wants_unfinished {
                    unfinished.push(i);
                }
            }
            if slot == last_issued {
                greedy = i;
            }
            if state.is_eligible() {
                eligible_count += 1;
                if first_eligible == NONE {
                    first_eligible = i;
                }
                if greedy != NONE && greedy < i && first_eligible_after_greedy == NONE {
                    first_eligible_after_greedy = i;
                }
            }
            pool.push(slot);
            states.push(state);
        }
        out.any_eligible |= eligible_count > 0;

        // Which warps may issue this cycle, in the order the policy tries them.
        let is_long_stall = |st: &WarpState| match st {
            WarpState::Scoreboard { path, .. } | WarpState::DependencyBarrier { path, .. } => {
                *path == DepPath::Long
            }
            WarpState::CtaBarrier | WarpState::Membar | WarpState::LgThrottle => true,
            _ => false,
        };
        let mut refill = false;
        // Filled into a buffer kept across cycles: this runs for every scheduler every cycle.
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        if eligible_count == 0 && policy != Policy::Coarse {
            // Nothing can issue; policies keep their state for the next cycle that can.
        } else {
            let sched = &mut self.schedulers[s];
            let pos_of = |slot: Option<u32>| slot.and_then(|sl| pool.iter().position(|&p| p == sl));
            let n = pool.len();
            let rare: Vec<usize> = match policy {
                // Round robin from the warp after the last one issued: the first eligible
                // after it, else the first eligible from the start.
                Policy::Lrr => {
                    order.push(if first_eligible_after_greedy != NONE {
                        first_eligible_after_greedy
                    } else {
                        first_eligible
                    });
                    Vec::new()
                }
                Policy::Oldest => {
                    order.push(first_eligible);
                    Vec::new()
                }
                // The last warp issued while it is eligible, else the oldest eligible.
                Policy::Gto => {
                    order.push(if greedy != NONE && states[greedy].is_eligible() {
                        greedy
                    } else {
                        first_eligible
                    });
                    Vec::new()
                }
                Policy::Smt => {
                    let m = n.max(1);
                    let first = (cycle % m as u64) as usize;
                    order.extend((0..n).map(|k| (first + k) % m));
                    Vec::new()
                }
                Policy::Barrel => {
                    if unfinished.is_empty() {
                        Vec::new()
                    } else {
                        vec![unfinished[(cycle % unfinished.len() as u64) as usize]]
                    }
                }
                // The oldest unfinished warp runs; one waiting at a CTA barrier hands over
                // until the others arrive (they could never reach it otherwise).
                Policy::Sequential => unfinished
                    .iter()
                    .copied()
                    .find(|&i| states[i] != WarpState::CtaBarrier)
                    .into_iter()
                    .collect(),
                Policy::TwoLevel => {
                    let cap = config.scheduler.two_level_active as usize;
                    sched.active_set.retain(|sl| {
                        pool.iter()
                            .position(|p| p == sl)
                            .is_some_and(|i| unfinished.contains(&i) && !is_long_stall(&states[i]))
                    });
                    for &i in &unfinished {
                        if sched.active_set.len() >= cap {
                            break;
                        }
                        if !sched.active_set.contains(&pool[i]) && !is_long_stall(&states[i]) {
                            sched.active_set.push(pool[i]);
                        }
                    }
                    let members: Vec<usize> = sched
                        .active_set
                        .iter()
                        .filter_map(|sl| pool.iter().position(|p| p == sl))
                        .collect();
                    let start = pos_of(sched.last_issued)
                        .and_then(|i| members.iter().position(|&m| m == i));
                    let n = members.len();
                    (0..n)
                        .map(|k| members[(start.map_or(0, |x| x + 1) + k) % n])
                        .collect()
                }
                Policy::Coarse => {
                    if cycle < sched.refill_until {
                        refill = true;
                        Vec::new()
                    } else {
                        let current =
                            pos_of(sched.coarse_current).filter(|&i| unfinished.contains(&i));
                        match current {
                            Some(i) if states[i].is_eligible() => vec![i],
                            Some(i) if is_long_stall(&states[i]) => {
                                // Switch to the next ready warp after the current one.
                                let n = pool.len();
                                let next = (1..n)
                                    .map(|k| (i + k) % n)
                                    .find(|&j| states[j].is_eligible());
                                match next {
                                    Some(j) => {
                                        sched.coarse_current = Some(pool[j]);
                                        let cost = config.scheduler.switch_cost as u64;
                                        if cost > 0 {
                                            sched.refill_until = cycle + cost;
                                            refill = true;
                                            Vec::new()
                                        } else {
                                            vec![j]
                                        }
                                    }
                                    None => Vec::new(),
                                }
                            }
                            Some(_) => Vec::new(),
                            None => {
                                // The current warp finished (or none yet): hand over for free.
                                let next = unfinished
                                    .iter()
                                    .copied()
                                    .find(|&j| states[j].is_eligible())
                                    .or(unfinished.first().copied());
                                sched.coarse_current = next.map(|j| pool[j]);
                                next.filter(|&j| states[j].is_eligible())
                                    .into_iter()
                                    .collect()
                            }
                        }
                    }
                }
            };
            order.extend(rare);
        }

        let mut slots_left = width;
        let mut issued_here = 0u32;
        let mut finished = 0;
        for &i in &order {
            if slots_left == 0 {
                break;
            }
            if !states[i].is_eligible() {
                continue;
            }
            let slot = pool[i];
            let issued_by_warp =
                self.issue_from(cycle, s, slot, &mut slots_left, issued_here, cx, out)?;
            if issued_by_warp > 0 {
                finished += self.hot[slot as usize].done as u32;
                states[i] = WarpState::Selected;
                issued_here += issued_by_warp;
                self.schedulers[s].last_issued = Some(slot);
                if policy != Policy::Smt {
                    break;
                }
            }
        }
        if refill {
            cx.observer.refill(cycle, self.id, s as u32, width);
        }
        out.issued += issued_here;

        // Report state changes.
        let groups = O::WARP_STATES && cx.observer.pipe_groups();
        for (i, &slot) in pool.iter().enumerate() {
            let state = states[i];
            let w = &mut self.hot[slot as usize];
            if w.reported != Some(state) {
                w.reported = Some(state);
                let warp = WarpRef { sm: self.id, slot };
                match w.ready_pipe {
                    Some(pipe) if groups && state != WarpState::Selected => {
                        cx.observer.ready_state(cycle, warp, state, pipe)
                    }
                    _ => cx.observer.warp_state(cycle, warp, state),
                }
            }
        }
        self.close_cycle(
            s,
            active,
            eligible_count,
            issued_here,
            refill,
            quiet_until,
            width,
            finished,
        );
        self.states = states;
        self.unfinished = unfinished;
        self.order = order;
        self.schedulers[s].warps = all;
        self.pool = pool;
        Ok(())
    }

    /// Issues warp `slot`'s next instructions into the `slots_left` slots of this cycle (more
    /// than one only while it stays eligible); `issued_before` is what other warps issued this
    /// cycle. Returns the number issued.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn issue_from<O: Observer>(
        &mut self,
        cycle: u64,
        s: usize,
        slot: u32,
        slots_left: &mut u32,
        issued_before: u32,
        cx: &mut CycleContext<'_, O>,
        out: &mut SmCycle,
    ) -> Result<u32, Box<Fault>> {
        let config = cx.config;
        let width = config.sm.issue_width;
        let mut issued_by_warp = 0;
        while *slots_left > 0 {
            // Earlier issues this cycle may have taken the pipe or a queue entry.
            if (issued_before > 0 || issued_by_warp > 0)
                && !self
                    .warp_state_again(cycle, config, slot, cx.launches)
                    .is_eligible()
            {
                break;
            }
            let issue_slot = width - *slots_left;
            let threads = self.issue(cycle, s, slot, issue_slot, cx)?;
            out.thread_instructions += threads;
            issued_by_warp += 1;
            *slots_left -= 1;
        }
        Ok(issued_by_warp)
    }

    /// Counts a stepped cycle of scheduler `s` and keeps what it looked like.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn close_cycle(
        &mut self,
        s: usize,
        active: u32,
        eligible_count: u64,
        issued_here: u32,
        refill: bool,
        quiet_until: u64,
        width: u32,
        finished: u32,
    ) {
        let sched = &mut self.schedulers[s];
        let st = &mut sched.stats;
        st.cycles += 1;
        if active > 0 {
            st.active_cycles += 1;
            st.active_warps += active as u64;
        }
        st.eligible_warps += eligible_count;
        st.issued += issued_here as u64;
        if refill {
            st.refill_slots += width as u64;
        } else if issued_here == 0 {
            st.vertical_waste += width as u64;
        } else {
            st.issue_cycles += 1;
            st.horizontal_waste += (width - issued_here) as u64;
        }
        sched.last = CycleSnapshot {
            active: active - finished,
            refill,
            eligible: eligible_count > 0,
            quiet_until,
        };
    }

    /// A pass of scheduler `s` (policy `gto`, `lrr` or `oldest`) that gives what
    /// [`Sm::schedule_one`] would, looking only at the warps whose state may have changed: those
    /// events touched, and those whose cached state expired (see [`PoolMasks`]). Warps ready
    /// but for a pipe take that pipe's entry as a group; whom to issue is a bit search. A
    /// compute-bound kernel's warps mostly wait for their pipe, a memory-bound kernel's for a
    /// completion, so either way a cycle costs little more than what changed in it.
    fn schedule_masked<O: Observer>(
        &mut self,
        cycle: u64,
        s: usize,
        cx: &mut CycleContext<'_, O>,
        out: &mut SmCycle,
    ) -> Result<(), Box<Fault>> {
        let config = cx.config;
        let width = config.sm.issue_width;
        let throttle_dirty = self.throttle_dirty;
        // The sets are updated where they are, not through a copy: copying them in and out
        // cost more than the pass's own work on them (and stalled on store forwarding).
        let sched = &mut self.schedulers[s];
        let n = sched.warps.len();
        let mut visit;
        if !sched.masks.valid {
            for (i, &slot) in sched.warps.iter().enumerate() {
                self.position[slot as usize] = i as u8;
            }
            sched.masks = PoolMasks {
                valid: true,
                waiting_until: u64::MAX,
                ..PoolMasks::INVALID
            };
            visit = if n == MASKED_POOL {
                u64::MAX
            } else {
                (1u64 << n) - 1
            };
        } else {
            visit = sched.touched;
            let m = &mut sched.masks;
            if cycle >= m.waiting_until {
                visit |= m.waiting;
                m.waiting_until = u64::MAX;
            }
            // The warps looked at leave their sets all at once (the loop only places them
            // again). Rebuilt sets start empty.
            m.remove(visit);
        }
        sched.touched = 0;
        // The warps whose cached state holds are placed with the scheduler's and the slots'
        // records borrowed once (re-indexing them per warp around the out-of-line refresh cost
        // more than the placing); the others are refreshed after, in any order: a refresh
        // reads the warp's own state and the scoreboard, and its marks are unions.
        let mut stale = 0u64;
        // The warps looked at that are ready but for their pipe: their state is the pipe's.
        let mut ready_visited = 0u64;
        {
            let sched = &mut self.schedulers[s];
            let m = &mut sched.masks;
            let warps = &sched.warps[..];
            let hot = &mut self.hot[..];
            let mut bits = visit;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let bit = 1u64 << i;
                let w = &mut hot[warps[i] as usize];
                // A warp whose last instruction completed this cycle leaves now: it is not
                // resident.
                if w.done && w.inflight == 0 {
                    continue;
                }
                if w.done {
                    m.done |= bit;
                }
                if let Some(pipe) = w.ready_pipe {
                    // In its pipe's state (not the cached one, which may be a stale throttle).
                    m.ready[pipe_index(pipe)] |= bit;
                    ready_visited |= bit;
                } else if w.cached_holds(cycle, throttle_dirty) {
                    m.waiting |= bit;
                    m.waiting_until = m.waiting_until.min(w.cache_until);
                    if w.cached.is_eligible() {
                        m.waiting_eligible |= bit;
                    }
                    if !O::WARP_STATES {
                        // What the report below would store (see `Sm::reported_state`).
                        w.reported = Some(w.cached);
                    }
                } else {
                    stale |= bit;
                }
            }
        }
        let mut bits = stale;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let bit = 1u64 << i;
            let slot = self.schedulers[s].warps[i];
            let (state, until) = self.refresh_state(cycle, config, slot, cx.launches);
            let m = &mut self.schedulers[s].masks;
            let w = &mut self.hot[slot as usize];
            match w.ready_pipe {
                Some(pipe) => {
                    m.ready[pipe_index(pipe)] |= bit;
                    ready_visited |= bit;
                }
                None => {
                    m.waiting |= bit;
                    m.waiting_until = m.waiting_until.min(until);
                    if state.is_eligible() {
                        m.waiting_eligible |= bit;
                    }
                    if !O::WARP_STATES {
                        w.reported = Some(state);
                    }
                }
            }
        }

        // The state of each pipe's ready warps (only pipes with some are looked at).
        let mut by_pipe = [WarpState::NotSelected; 6];
        let m = &self.schedulers[s].masks;
        let mut eligible = m.waiting_eligible;
        let mut quiet_until = m.waiting_until;
        let mut present = m.waiting;
        let done = m.done;
        let ready_sets = m.ready;
        // By pipe index: the pipes with ready warps (seldom more than one or two of six).
        let mut pipes_with_ready = 0u32;
        for (p, &ready) in ready_sets.iter().enumerate() {
            present |= ready;
            if ready != 0 {
                pipes_with_ready |= 1 << p;
                let (state, until) = self.pipe_entry(cycle, config, s, p);
                by_pipe[p] = state;
                self.note_throttle(s, state);
                if state.is_eligible() {
                    eligible |= ready;
                } else {
                    quiet_until = quiet_until.min(until);
                }
            }
        }
        let active_set = present & !done;
        let counted = &mut self.schedulers[s].active_counted;
        if counted.0 != active_set {
            *counted = (active_set, active_set.count_ones());
        }
        let active = counted.1;
        let eligible_count = count_few(eligible) as u64;
        out.any_eligible |= eligible != 0;

        // (Whom to issue only matters with an eligible warp: most passes of a memory-bound
        // kernel have none.)
        let chosen = if eligible == 0 {
            None
        } else {
            let sched = &self.schedulers[s];
            let greedy = sched
                .last_issued
                .map(|slot| self.position[slot as usize] as usize)
                .filter(|&i| sched.warps.get(i) == Some(&sched.last_issued.unwrap_or(u32::MAX)))
                .filter(|&i| present & (1 << i) != 0);
            match config.scheduler.policy {
                // The last warp issued while it is eligible, else the oldest eligible.
                Policy::Gto => greedy
                    .filter(|&g| eligible & (1 << g) != 0)
                    .or(lowest(eligible)),
                // Round robin from the warp after the last one issued.
                Policy::Lrr => greedy
                    .and_then(|g| lowest(eligible & (!0u64).checked_shl(g as u32 + 1).unwrap_or(0)))
                    .or(lowest(eligible)),
                _ => lowest(eligible),
            }
        };
        let mut slots_left = width;
        let mut issued_here = 0;
        let mut finished = 0;
        let mut issued_at = None;
        if let Some(i) = chosen {
            let slot = self.schedulers[s].warps[i];
            issued_here = self.issue_from(cycle, s, slot, &mut slots_left, 0, cx, out)?;
            if issued_here > 0 {
                finished = self.hot[slot as usize].done as u32;
                self.schedulers[s].last_issued = Some(slot);
                issued_at = Some(i);
                // Its state is for the next pass to find out: issue touched it.
                let bit = 1u64 << i;
                let m = &mut self.schedulers[s].masks;
                let done = m.done & bit;
                m.remove(bit);
                m.waiting |= bit;
                m.done |= done;
            }
        }
        out.issued += issued_here;

        // Report state changes, in list order as the full pass does: the warps looked at, the
        // one that issued, and the ready warps of each pipe whose entry changed.
        let looked_at = visit & present;
        // An observer that ignores states is told nothing: only the warps whose state the
        // loop above could not store are visited (the ready ones and the one that issued).
        let mut report = if O::WARP_STATES {
            looked_at
        } else {
            ready_visited
        };
        // An observer that takes pipe groups is told of a pipe's change once, here: the ready
        // warps not looked at change with it unnamed.
        let groups = O::WARP_STATES && cx.observer.pipe_groups();
        let sm = self.id;
        // Borrowed once for the rest of the pass: re-indexing them per warp cost more than
        // the reporting itself.
        let sched = &mut self.schedulers[s];
        let hot = &mut self.hot;
        let mut pipes = pipes_with_ready;
        while pipes != 0 {
            let p = pipes.trailing_zeros() as usize;
            pipes &= pipes - 1;
            // (The sets as after the issue: a pipe whose one ready warp issued has none.)
            let ready = sched.masks.ready[p];
            let state = by_pipe[p];
            if !O::WARP_STATES {
                // Kept for `Sm::reported_state` alone: a store costs less than the comparison.
                if ready != 0 {
                    sched.ready_reported[p] = state;
                }
                continue;
            }
            if ready != 0 && sched.ready_reported[p] != state {
                // (An observer that ignores states is not told; see `Sm::reported_state`.)
                if groups {
                    let mut changed = false;
                    let mut unnamed = ready & !looked_at;
                    while unnamed != 0 {
                        let i = unnamed.trailing_zeros() as usize;
                        unnamed &= unnamed - 1;
                        let w = &mut hot[sched.warps[i] as usize];
                        changed |= w.reported != Some(state);
                        w.reported = Some(state);
                    }
                    if changed {
                        cx.observer
                            .pipe_state(cycle, sm, s as u32, Pipe::ALL[p], state);
                    }
                } else if O::WARP_STATES {
                    report |= ready;
                }
                sched.ready_reported[p] = state;
            }
        }
        if let Some(i) = issued_at {
            report |= 1 << i;
        }
        let warps = &sched.warps[..];
        let mut bits = report;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let slot = warps[i];
            let w = &mut hot[slot as usize];
            let state = if issued_at == Some(i) {
                WarpState::Selected
            } else {
                match w.ready_pipe {
                    Some(pipe) => by_pipe[pipe_index(pipe)],
                    None => w.cached,
                }
            };
            if !O::WARP_STATES {
                // Kept for `Sm::reported_state` alone: a store costs less than the comparison.
                w.reported = Some(state);
            } else if w.reported != Some(state) {
                w.reported = Some(state);
                let warp = WarpRef { sm, slot };
                match w.ready_pipe {
                    Some(pipe) if groups && issued_at != Some(i) => {
                        cx.observer.ready_state(cycle, warp, state, pipe)
                    }
                    _ => cx.observer.warp_state(cycle, warp, state),
                }
            }
        }
        self.close_cycle(
            s,
            active,
            eligible_count,
            issued_here,
            false,
            quiet_until,
            width,
            finished,
        );
        Ok(())
    }

    /// Counts the cycles before `to` with a resident block into `busy_cycles`.
    pub fn count_busy(&mut self, to: u64) {
        if self.room.resident_blocks > 0 && to > self.busy_from {
            self.busy_cycles += to - self.busy_from;
            self.busy_from = to;
        }
    }

    /// The first cycle after the current one at which this SM needs the GPU loop: a
    /// completion may be due, or a scheduler must be stepped. Until then its `retire`,
    /// `schedule` and `wrap_up` would do nothing, and the loop does not call them; only
    /// `assign_block` changes the answer from outside. `u64::MAX`: nothing will ever change
    /// by itself.
    #[inline]
    pub fn attention(&self) -> u64 {
        let schedulers = match self.throttle_pending {
            0 => self.schedulers_quiet_until,
            _ => 0,
        };
        schedulers.min(self.events.due_bound())
    }

    /// Counts every cycle before `to` in the statistics of every scheduler: those not stepped
    /// repeat the scheduler's last stepped cycle; and in `busy_cycles`. Due before the
    /// statistics are read.
    pub fn settle(&mut self, to: u64, width: u32) {
        self.count_busy(to);
        for s in 0..self.schedulers.len() {
            self.settle_scheduler(s, to, width);
        }
    }

    /// [`Sm::settle`] for scheduler `s`.
    #[inline]
    fn settle_scheduler(&mut self, s: usize, to: u64, width: u32) {
        let owed = to.saturating_sub(self.schedulers[s].accounted_to);
        if owed > 0 {
            self.repeat_last_cycle(s, owed, width);
            self.schedulers[s].accounted_to = to;
        }
    }

    /// Counts `n` more cycles of scheduler `s` exactly like its last one, which issued nothing.
    fn repeat_last_cycle(&mut self, s: usize, n: u64, width: u32) {
        let sched = &mut self.schedulers[s];
        let st = &mut sched.stats;
        st.cycles += n;
        if sched.last.active > 0 {
            st.active_cycles += n;
            st.active_warps += n * sched.last.active as u64;
        }
        if sched.last.refill {
            st.refill_slots += n * width as u64;
        } else {
            st.vertical_waste += n * width as u64;
        }
    }

    /// Whether any scheduler is in the middle of a coarse refill (never skipped over).
    pub fn in_refill(&self, cycle: u64) -> bool {
        self.schedulers.iter().any(|s| cycle + 1 < s.refill_until)
    }

    /// Issues the next instruction of warp `slot`; returns the threads that executed it.
    fn issue<O: Observer>(
        &mut self,
        cycle: u64,
        s: usize,
        slot: u32,
        issue_slot: u32,
        cx: &mut CycleContext<'_, O>,
    ) -> Result<u64, Box<Fault>> {
        let config = cx.config;
        let wref = WarpRef { sm: self.id, slot };
        let (launch_index, block_slot) = {
            let w = self.warps[slot as usize]
                .as_ref()
                .expect("issuing warp is resident");
            (w.launch, w.block_slot)
        };
        let prepared = &cx.launches[launch_index as usize];
        let program = &prepared.program;
        let block = self.blocks[block_slot]
            .as_mut()
            .expect("warp's block is resident");
        let warp = self.warps[slot as usize]
            .as_mut()
            .expect("issuing warp is resident");
        let pc = warp.next_pc().unwrap_or(0);
        if config.scheduler.scoreboard == ScoreboardKind::Barriers {
            if let Some(inst) = program.instructions.get(pc as usize) {
                self.hazards.clear();
                self.scoreboard
                    .hazards(slot as usize, pc, inst, &mut self.hazards);
                for h in &self.hazards {
                    self.hazard_count += 1;
                    cx.observer.hazard(cycle, wref, h);
                }
            }
        }
        let env = ExecEnv {
            launch: &prepared.launch,
            ctaid: block.ctaid,
            smid: self.id,
            clock: cycle,
        };
        // Filled in place, into a buffer kept across issues: the description is several
        // hundred bytes (a fresh one is a copy of all of them).
        let mut done = self
            .executed
            .take()
            .unwrap_or_else(|| Box::new(exec::Executed::NOTHING));
        match (warp.replay.as_mut(), prepared.replay.as_deref()) {
            (Some(stream), Some(ops)) => {
                replay_step(stream, ops, &mut warp.ctx, &mut done);
                Ok(())
            }
            _ => exec::execute_into(
                program,
                &prepared.decoded,
                &mut warp.ctx,
                &env,
                cx.memory,
                &mut block.shared,
                &mut done,
            ),
        }
        .map_err(|e| {
            Box::new(Fault {
                kernel: program.name.clone(),
                block: Some(block.ctaid),
                warp: Some(warp.ctx.warp_in_block),
                lane: e.lane,
                pc: Some(e.pc),
                instruction: Some(program.instruction_text(e.pc)),
                kind: e.kind,
            })
        })?;
        if config.scheduler.scoreboard != ScoreboardKind::Barriers {
            // These scoreboards hold every later instruction of the warp that reads or writes
            // the destination until the result would be written, so nothing can tell it from
            // being written now; this saves carrying it in the completion event. (Control codes
            // may let a consumer read the stale value: that scoreboard writes at completion.)
            if let Some(wb) = &done.writeback {
                exec::apply(&mut warp.ctx, wb);
            }
            done.writeback = None;
        }
        self.hot[slot as usize].done = warp.compute_done();
        warp.pc = warp.compute_next_pc();
        let inst = &program.instructions[pc as usize];
        let pipe = inst.op.pipe();
        cx.observer
            .issue(cycle, wref, pc, done.executed, pipe, issue_slot);

        let pipe_cfg = config.pipes.get(pipe);
        let mut complete_at = cycle + pipe_cfg.latency as u64;
        if let Some(access) = &done.mem {
            let event = match access.space {
                Space::Global => {
                    let t = cx.timing.global(cycle, self.id, access);
                    complete_at = t.complete_at;
                    MemEvent {
                        space: access.space.into(),
                        kind: access.kind.into(),
                        sectors: t.sectors,
                        level: t.level,
                        replays: 0,
                        complete_at,
                    }
                }
                Space::Shared => {
                    let t = cx.timing.shared(cycle, access);
                    complete_at = t.complete_at;
                    MemEvent {
                        space: access.space.into(),
                        kind: access.kind.into(),
                        sectors: 0,
                        level: super::memory::HitLevel::L1,
                        replays: t.replays,
                        complete_at,
                    }
                }
            };
            cx.observer.memory(cycle, wref, pc, &event);
        }
        if let CoreModel::NonPipelined {
            cycles_per_instruction,
        } = config.sm.core
        {
            complete_at = cycle + cycles_per_instruction as u64;
        }
        let complete_at = complete_at.max(cycle + 1);

        let ticket = self.scoreboard.issue_decoded(
            slot as usize,
            pc,
            inst,
            &prepared.deps[pc as usize],
            DepPath::of(pipe),
        );
        let is_memory = done.mem.is_some();
        // By reference: the access is several hundred bytes.
        let late_read = matches!(
            done.mem.as_ref().map(|m| m.kind),
            Some(AccessKind::Store | AccessKind::Atomic)
        );
        if late_read {
            let at = (cycle + pipe_cfg.interval as u64).min(complete_at);
            self.push_event(
                at,
                Event {
                    slot,
                    pc,
                    kind: EventKind::SourcesRead,
                    ticket,
                    writeback: false,
                    pipe,
                    memory: false,
                },
                None,
            );
        } else {
            self.scoreboard.sources_read(slot as usize, ticket);
        }
        let warp = self.warps[slot as usize]
            .as_mut()
            .expect("issuing warp is resident");
        warp.deps = None;
        let hot = &mut self.hot[slot as usize];
        hot.invalidate();
        hot.inflight += 1;
        self.schedulers[s].touch(self.position[slot as usize]);
        if is_memory {
            warp.mem_inflight += 1;
        }
        let queue = match pipe {
            Pipe::Global => Some(&mut self.lsu_inflight),
            Pipe::Mufu | Pipe::Shared => Some(&mut self.mio_inflight),
            _ => None,
        };
        if let Some(inflight) = queue {
            *inflight += 1;
            self.queue_priority = (s + 1) % self.schedulers.len();
        }
        self.schedulers[s].pipe_free[pipe_index(pipe)] = cycle + pipe_cfg.interval as u64;
        if config.scheduler.scoreboard == ScoreboardKind::Barriers {
            if let Some(code) = &inst.control {
                warp.stall_until = cycle + (code.stall as u64).max(1);
                self.timer_floor = self.timer_floor.min(warp.stall_until);
                if code.yield_hint {
                    warp.sleep_until = warp.stall_until.max(cycle + 2);
                }
            }
        }
        match done.flow {
            Flow::Branch { .. } if config.sm.branch_resolve > 0 => {
                warp.branch_until = cycle + 1 + config.sm.branch_resolve as u64;
                self.timer_floor = self.timer_floor.min(warp.branch_until);
            }
            Flow::Barrier => {
                self.wrap_dirty = true;
                self.barrier_pending = true;
                warp.at_barrier = true;
                warp.arrived_lanes = done.executed;
                let block = self.blocks[block_slot].as_mut().expect("block resident");
                block.arrived_threads += done.executed.count_ones();
                cx.observer.barrier_arrive(cycle, wref);
            }
            Flow::Membar => warp.membar = true,
            _ => {}
        }
        self.push_event(
            complete_at,
            Event {
                slot,
                pc,
                kind: EventKind::Complete,
                ticket,
                writeback: done.writeback.is_some(),
                pipe,
                memory: is_memory,
            },
            done.writeback.as_ref(),
        );
        // Without the `popcnt` instruction `count_ones` is a dozen instructions; nearly every
        // warp instruction executes on all lanes.
        let threads = match done.executed {
            u32::MAX => 32,
            lanes => lanes.count_ones() as u64,
        };
        self.executed = Some(done);
        Ok(threads)
    }

    /// Releases CTA barriers, retires finished warps and blocks. Adds the blocks that
    /// finished to `finished`; returns whether a barrier released warps (which the schedulers
    /// look at in the next cycle).
    #[inline]
    pub fn wrap_up<O: Observer>(
        &mut self,
        cycle: u64,
        observer: &mut O,
        finished: &mut Vec<FinishedBlock>,
    ) -> bool {
        // Nearly every SM-cycle has nothing to wrap up: tested in the GPU loop, not in a call.
        std::mem::take(&mut self.wrap_dirty) && self.wrap_up_dirty(cycle, observer, finished)
    }

    #[inline(never)]
    fn wrap_up_dirty<O: Observer>(
        &mut self,
        cycle: u64,
        observer: &mut O,
        finished: &mut Vec<FinishedBlock>,
    ) -> bool {
        let mut released = false;
        let blocks_to_check = if std::mem::take(&mut self.barrier_pending) {
            self.blocks.len()
        } else {
            0
        };
        for b in 0..blocks_to_check {
            let Some(block) = self.blocks[b].as_ref() else {
                continue;
            };
            // CTA barrier: every live warp has arrived and every live thread with it.
            let mut live_threads = 0;
            let mut all_arrived = true;
            let mut any_arrived = false;
            for &slot in &block.warps {
                if let Some(w) = self.warps[slot as usize].as_ref() {
                    if self.hot[slot as usize].done {
                        continue;
                    }
                    live_threads += (w.ctx.valid & !w.ctx.exited).count_ones();
                    all_arrived &= w.at_barrier;
                    any_arrived |= w.at_barrier;
                }
            }
            let release = all_arrived && block.arrived_threads >= live_threads;
            self.barrier_pending |= any_arrived && !release;
            if any_arrived && release {
                let (launch, index) = (block.launch, block.block);
                for &slot in &block.warps {
                    if let Some(w) = self.warps[slot as usize].as_mut() {
                        w.at_barrier = false;
                        self.hot[slot as usize].cache_until = 0;
                        self.schedulers[w.scheduler as usize].touch(self.position[slot as usize]);
                        self.schedulers_quiet_until = 0;
                    }
                }
                if let Some(block) = self.blocks[b].as_mut() {
                    block.arrived_threads = 0;
                }
                observer.barrier_release(cycle, self.id, launch, index as u32);
                released = true;
            }
        }
        // In slot order, as the observer hears of them.
        let mut leaving = std::mem::take(&mut self.leaving);
        leaving.sort_unstable();
        for &slot in &leaving {
            let slot = slot as usize;
            let hot = &self.hot[slot];
            if !(hot.done && hot.inflight == 0) {
                continue;
            }
            let Some(w) = self.warps[slot].take() else {
                continue;
            };
            let (scheduler, block_slot) = (w.scheduler as usize, w.block_slot);
            self.spare_contexts.push(w.ctx);
            observer.warp_exit(
                cycle,
                WarpRef {
                    sm: self.id,
                    slot: slot as u32,
                },
            );
            // Its scheduler rebuilds its sets at its next pass. A departure alone changes no
            // other warp's state (a barrier it completes is released above), so it is no
            // reason for a pass: the SM's next cycle with something to do is not brought
            // forward (`Sm::attention`), as the reference, which steps every cycle, finds
            // nothing to report in the ones between.
            let sched = &mut self.schedulers[scheduler];
            sched.dirty = true;
            sched.full = true;
            sched.warps.retain(|&x| x != slot as u32);
            sched.active_set.retain(|&x| x != slot as u32);
            if sched.last_issued == Some(slot as u32) {
                sched.last_issued = None;
            }
            if sched.coarse_current == Some(slot as u32) {
                sched.coarse_current = None;
            }
            let done = self.blocks[block_slot].as_mut().is_some_and(|b| {
                b.warps_left -= 1;
                b.warps_left == 0
            });
            if done {
                if let Some(b) = self.blocks[block_slot].take() {
                    if self.room.resident_blocks == 1 {
                        // Busy through this cycle, whose schedulers ran with the block.
                        self.count_busy(cycle + 1);
                    }
                    let fp = b.footprint;
                    self.room.free_blocks += 1;
                    self.room.free_warps += fp.warps;
                    self.room.free_registers += fp.registers;
                    self.room.free_shared += fp.shared_bytes;
                    self.room.resident_blocks -= 1;
                    observer.block_complete(cycle, b.launch, b.block as u32, self.id);
                    finished.push(FinishedBlock {
                        launch: b.launch,
                        block: b.block,
                    });
                }
            }
        }
        leaving.clear();
        self.leaving = leaving;
        released
    }

    /// The state last reported for warp `slot`, or that would have been to an observer that
    /// looks at states: a warp ready but for its pipe is in its pipe's last reported entry.
    fn reported_state(&self, slot: usize) -> Option<WarpState> {
        let hot = &self.hot[slot];
        let sched = self.warps[slot]
            .as_ref()
            .map(|w| &self.schedulers[w.scheduler as usize]);
        match (hot.ready_pipe, sched) {
            (Some(pipe), Some(sched)) if sched.masks.valid => {
                Some(sched.ready_reported[pipe_index(pipe)])
            }
            _ => hot.reported,
        }
    }

    /// One line per resident warp: where it is and why it waits (for deadlock and watchdog
    /// messages).
    pub fn describe_warps(&self, launches: &[PreparedLaunch]) -> Vec<String> {
        let mut lines = Vec::new();
        for (slot, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            let Some(block) = self.blocks[w.block_slot].as_ref() else {
                continue;
            };
            let launch = &launches[w.launch as usize];
            let at = w
                .next_pc()
                .map_or("-".to_string(), |pc| launch.instruction_text(pc));
            let why = match self.reported_state(slot) {
                Some(WarpState::CtaBarrier) => {
                    let lanes = w.arrived_lanes.count_ones();
                    let live = (w.ctx.valid & !w.ctx.exited).count_ones();
                    if lanes < live {
                        format!(
                            "at BAR.SYNC with {lanes} of its {live} live lanes; the others are on a divergent path that must wait for them"
                        )
                    } else {
                        "at BAR.SYNC".to_string()
                    }
                }
                Some(state) => state.describe(|pc| launch.instruction_text(pc)),
                None => "not yet scheduled".to_string(),
            };
            lines.push(format!(
                "sm {} slot {slot}: kernel `{}` block {} warp {} at {at}: {why}",
                self.id, launch.program.name, block.ctaid, w.ctx.warp_in_block,
            ));
        }
        lines
    }

    pub fn has_resident_warps(&self) -> bool {
        self.warps.iter().any(Option::is_some)
    }
}

/// Consumes a replayed warp's next recorded instruction and describes it as `exec` would have:
/// the recorded mask executes, the recorded addresses are accessed, no register is written.
/// Inlined into `issue`, its one caller: it is short, and the call saved and restored half a
/// dozen registers.
#[inline(always)]
fn replay_step(
    stream: &mut WarpStream,
    ops: &[ReplayOp],
    ctx: &mut WarpContext,
    out: &mut exec::Executed,
) {
    let Some(step) = stream.advance() else {
        // Unreachable for a resident warp (a finished warp never issues); a no-op keeps the
        // accounting consistent rather than panicking.
        *out = exec::Executed {
            flow: Flow::Exit { warp_done: true },
            ..exec::Executed::NOTHING
        };
        return;
    };
    let pc = step.pc;
    let op = ops.get(pc as usize).copied().unwrap_or(ReplayOp::PLAIN);
    let mask = step.mask & ctx.valid;
    // Field by field: the description is several hundred bytes, a fresh one a copy of all.
    out.pc = pc;
    out.active = mask;
    out.executed = mask;
    out.writeback = None;
    match (op.mem, step.addrs) {
        (Some((space, kind)), Some(lane_addrs)) if mask != 0 => {
            let access = out.mem.insert(exec::MemAccess {
                space,
                kind,
                mask,
                addrs: [0; super::MAX_WARP_SIZE],
            });
            match lane_addrs {
                // A full warp's evenly spaced addresses (nearly every access) are computed
                // for all lanes at once.
                LaneAddrs::Strided { first, stride, .. } if step.mask == u32::MAX => {
                    // As a running sum, which unlike the products compiles to vector adds.
                    let mut addr = first;
                    for a in &mut access.addrs {
                        *a = addr;
                        addr = addr.wrapping_add(stride);
                    }
                }
                LaneAddrs::List(list) if step.mask == u32::MAX && list.len() == 32 => {
                    access.addrs.copy_from_slice(list);
                }
                // One address per lane of the step's mask, lowest lane first.
                _ => {
                    let mut lanes = step.mask;
                    for addr in lane_addrs.iter() {
                        if lanes == 0 {
                            break;
                        }
                        access.addrs[lanes.trailing_zeros() as usize] = addr;
                        lanes &= lanes - 1;
                    }
                }
            }
        }
        _ => out.mem = None,
    }
    out.flow = match op.flow {
        ReplayFlow::Next => Flow::Next,
        ReplayFlow::Branch => Flow::Branch { diverged: false },
        ReplayFlow::Barrier => Flow::Barrier,
        ReplayFlow::Membar => Flow::Membar,
        ReplayFlow::Exit => {
            ctx.exited |= mask;
            Flow::Exit {
                warp_done: stream.is_done(),
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_index_is_the_position_in_all() {
        for (i, &p) in Pipe::ALL.iter().enumerate() {
            assert_eq!(pipe_index(p), i, "{p:?}");
        }
    }
}
