//! Reconstruction and aggregation: replays the events of a trace, keeps the current state of
//! every resident warp, and charges every warp-cycle to a launch, a state and a PC.
//!
//! Memory is proportional to resident warps, schedulers and PCs: each warp keeps only the
//! state-cycles since its last issue (a handful of entries), which are charged to the PC of its
//! next issue — the instruction it was waiting to issue. Cycles after its last issue (until
//! exit) go to the last issued PC. `selected` cycles are counted from issue events (a warp that
//! issues in consecutive cycles stays `Selected` without new state events; several issues of one
//! warp in one cycle count one state cycle).

use super::classify::Taxonomy;
use crate::sim::observer::{WarpRef, WarpState};
use crate::sim::Dim3;
use crate::trace::{Event, TraceHeader};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Launch configuration as Nsight's "Launch Statistics" shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchStats {
    pub grid: Dim3,
    pub block: Dim3,
    /// Threads in the grid.
    pub threads: u64,
    pub blocks: u64,
    pub warps_per_block: u64,
    pub registers_per_thread: u32,
    pub shared_per_block: u32,
    pub stream: u32,
}

/// Scheduler statistics, per scheduler-cycle over the launch's cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedulerStats {
    /// Schedulers on the GPU (SMs × sub-partitions).
    pub schedulers: u32,
    /// Resident warps per scheduler-cycle.
    pub active_warps_per_scheduler: f64,
    /// Warps in `selected` or `not_selected` per scheduler-cycle.
    pub eligible_warps_per_scheduler: f64,
    /// Warp instructions issued per scheduler-cycle.
    pub issued_warp_per_scheduler: f64,
    /// Share of scheduler-cycles with no eligible warp.
    pub no_eligible_pct: f64,
    pub one_or_more_eligible_pct: f64,
}

/// Issue slots: `width × cycles × schedulers`, split into what filled them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IssueSlots {
    pub width: u32,
    pub total: u64,
    /// Slots that issued an instruction.
    pub issued: u64,
    /// Slots lost to `coarse` switch refills.
    pub refill: u64,
    /// Slots of scheduler-cycles that issued nothing (and were not refilling).
    pub vertical_waste: u64,
    /// Unused slots of scheduler-cycles that issued something.
    pub horizontal_waste: u64,
}

/// One instruction of the listing with what happened at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceLine {
    pub pc: u32,
    pub text: String,
    /// Warp instructions issued at this PC.
    pub executions: u64,
    /// Warp-cycles charged to this PC (waiting to issue it, or issuing it).
    pub total_warp_cycles: u64,
    /// By state name (non-zero only).
    pub warp_cycles: BTreeMap<String, u64>,
    /// The state with the most cycles here (ties: first by name).
    pub top_state: Option<String>,
}

/// Everything measured about one kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchAnalysis {
    /// Index of the launch in the trace header.
    pub index: u32,
    pub name: String,
    pub start_cycle: u64,
    pub end_cycle: u64,
    /// `end_cycle − start_cycle`.
    pub cycles: u64,
    /// Whether the trace saw the launch complete.
    pub completed: bool,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Warp instructions per cycle, GPU-wide.
    pub ipc: f64,
    pub launch: LaunchStats,
    /// Sum over warps of exit − launch.
    pub resident_warp_cycles: u64,
    /// Warp-cycles by state name.
    pub warp_states: BTreeMap<String, u64>,
    /// Warp-cycles by state divided by warp instructions.
    pub warp_states_per_issue: BTreeMap<String, f64>,
    pub warp_cycles_per_issued_instruction: f64,
    pub scheduler: SchedulerStats,
    pub issue_slots: IssueSlots,
    /// One line per PC of the listing (and any PC beyond it that was reached).
    pub source: Vec<SourceLine>,
}

type StateCycles = HashMap<WarpState, u64>;

fn add(map: &mut StateCycles, state: WarpState, n: u64) {
    if n > 0 {
        *map.entry(state).or_default() += n;
    }
}

#[derive(Default, Clone)]
struct SchedAcc {
    eligible: u32,
    resident: u32,
    since: u64,
    eligible_cycles: u64,
    last_issue_cycle: Option<u64>,
    busy_cycles: u64,
}

impl SchedAcc {
    fn advance(&mut self, cycle: u64) {
        if cycle > self.since {
            if self.eligible > 0 {
                self.eligible_cycles += cycle - self.since;
            }
            self.since = cycle;
        }
    }
}

#[derive(Default, Clone)]
struct PcAcc {
    executions: u64,
    states: StateCycles,
}

struct LaunchAcc {
    start: Option<u64>,
    end: Option<u64>,
    warp_instructions: u64,
    thread_instructions: u64,
    resident: u64,
    states: StateCycles,
    scheds: Vec<SchedAcc>,
    refill: u64,
    pcs: Vec<PcAcc>,
}

impl LaunchAcc {
    fn pc(&mut self, pc: u32) -> &mut PcAcc {
        let i = pc as usize;
        if i >= self.pcs.len() {
            self.pcs.resize(i + 1, PcAcc::default());
        }
        &mut self.pcs[i]
    }
}

struct WarpTrack {
    launch: usize,
    sched: usize,
    launched: u64,
    state: Option<WarpState>,
    since: u64,
    last_pc: Option<u32>,
    last_issue_cycle: Option<u64>,
    /// State-cycles since the last issue, waiting for the PC of the next one.
    pending: Vec<(WarpState, u64)>,
}

/// The streaming accumulator: feed it every event in order, then [`finish`](Self::finish).
pub struct Accumulator {
    schedulers_per_sm: u32,
    schedulers: usize,
    width: u32,
    launches: Vec<LaunchAcc>,
    warps: HashMap<WarpRef, WarpTrack>,
    last_cycle: u64,
}

impl Accumulator {
    pub fn new(header: &TraceHeader) -> Self {
        let c = &header.config;
        let schedulers = (c.num_sms as usize) * (c.sm.schedulers as usize);
        Accumulator {
            schedulers_per_sm: c.sm.schedulers,
            schedulers,
            width: c.sm.issue_width,
            launches: header
                .launches
                .iter()
                .map(|l| LaunchAcc {
                    start: None,
                    end: None,
                    warp_instructions: 0,
                    thread_instructions: 0,
                    resident: 0,
                    states: StateCycles::new(),
                    scheds: vec![SchedAcc::default(); schedulers],
                    refill: 0,
                    pcs: vec![PcAcc::default(); l.listing.len()],
                })
                .collect(),
            warps: HashMap::new(),
            last_cycle: 0,
        }
    }

    fn launch_mut(&mut self, launch: u32) -> Option<&mut LaunchAcc> {
        self.launches.get_mut(launch as usize)
    }

    /// Closes the warp's current state interval at `cycle`.
    fn close(warp: &mut WarpTrack, acc: &mut LaunchAcc, cycle: u64) {
        if cycle <= warp.since {
            return;
        }
        let n = cycle - warp.since;
        warp.since = cycle;
        match warp.state {
            // Counted from issue events.
            Some(WarpState::Selected) | None => {}
            Some(state) => {
                add(&mut acc.states, state, n);
                match warp.pending.iter_mut().find(|(s, _)| *s == state) {
                    Some((_, c)) => *c += n,
                    None => warp.pending.push((state, n)),
                }
            }
        }
    }

    fn flush(warp: &mut WarpTrack, acc: &mut LaunchAcc, pc: u32) {
        if warp.pending.is_empty() {
            return;
        }
        let line = acc.pc(pc);
        for (state, n) in warp.pending.drain(..) {
            add(&mut line.states, state, n);
        }
    }

    fn set_eligible(acc: &mut LaunchAcc, sched: usize, cycle: u64, was: bool, now: bool) {
        if was == now {
            return;
        }
        if let Some(s) = acc.scheds.get_mut(sched) {
            s.advance(cycle);
            if now {
                s.eligible += 1;
            } else {
                s.eligible = s.eligible.saturating_sub(1);
            }
        }
    }

    pub fn event(&mut self, event: &Event) {
        let cycle = event.cycle();
        self.last_cycle = self.last_cycle.max(cycle);
        match *event {
            Event::KernelLaunch { launch, .. } => {
                if let Some(l) = self.launch_mut(launch) {
                    l.start.get_or_insert(cycle);
                    for s in &mut l.scheds {
                        s.since = s.since.max(cycle);
                    }
                }
            }
            Event::KernelComplete { launch, .. } => {
                if let Some(l) = self.launch_mut(launch) {
                    l.end = Some(cycle);
                }
            }
            Event::WarpLaunch { warp, info, .. } => {
                let sched = (warp.sm as usize) * (self.schedulers_per_sm as usize)
                    + info.scheduler as usize;
                if let Some(l) = self.launch_mut(info.launch) {
                    l.start.get_or_insert(cycle);
                    if let Some(s) = l.scheds.get_mut(sched) {
                        s.resident += 1;
                    }
                }
                self.warps.insert(
                    warp,
                    WarpTrack {
                        launch: info.launch as usize,
                        sched,
                        launched: cycle,
                        state: None,
                        since: cycle,
                        last_pc: None,
                        last_issue_cycle: None,
                        pending: Vec::new(),
                    },
                );
            }
            Event::WarpState { warp, state, .. } => {
                let Some(w) = self.warps.get_mut(&warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                Self::close(w, acc, cycle);
                let was = w.state.is_some_and(|s| s.is_eligible());
                Self::set_eligible(acc, w.sched, cycle, was, state.is_eligible());
                w.state = Some(state);
                w.since = cycle;
            }
            Event::Issue {
                warp, pc, active, ..
            } => {
                let Some(w) = self.warps.get_mut(&warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                Self::close(w, acc, cycle);
                Self::flush(w, acc, pc);
                acc.warp_instructions += 1;
                acc.thread_instructions += active.count_ones() as u64;
                let new_cycle = w.last_issue_cycle != Some(cycle);
                w.last_issue_cycle = Some(cycle);
                w.last_pc = Some(pc);
                if new_cycle {
                    add(&mut acc.states, WarpState::Selected, 1);
                }
                let line = acc.pc(pc);
                line.executions += 1;
                if new_cycle {
                    add(&mut line.states, WarpState::Selected, 1);
                }
                if let Some(s) = acc.scheds.get_mut(w.sched) {
                    if s.last_issue_cycle != Some(cycle) {
                        s.last_issue_cycle = Some(cycle);
                        s.busy_cycles += 1;
                    }
                }
            }
            Event::WarpExit { warp, .. } => {
                if let Some(mut w) = self.warps.remove(&warp) {
                    if let Some(acc) = self.launches.get_mut(w.launch) {
                        Self::exit(&mut w, acc, cycle);
                    }
                }
            }
            Event::Refill {
                sm,
                scheduler,
                slots,
                ..
            } => {
                let sched = (sm as usize) * (self.schedulers_per_sm as usize) + scheduler as usize;
                let running = |l: &LaunchAcc| l.start.is_some() && l.end.is_none();
                let target = self
                    .launches
                    .iter()
                    .position(|l| running(l) && l.scheds.get(sched).is_some_and(|s| s.resident > 0))
                    .or_else(|| self.launches.iter().position(running));
                if let Some(i) = target {
                    self.launches[i].refill += slots as u64;
                }
            }
            _ => {}
        }
    }

    fn exit(w: &mut WarpTrack, acc: &mut LaunchAcc, cycle: u64) {
        Self::close(w, acc, cycle);
        Self::flush(w, acc, w.last_pc.unwrap_or(0));
        acc.resident += cycle.saturating_sub(w.launched);
        let was = w.state.is_some_and(|s| s.is_eligible());
        Self::set_eligible(acc, w.sched, cycle, was, false);
        if let Some(s) = acc.scheds.get_mut(w.sched) {
            s.resident = s.resident.saturating_sub(1);
        }
    }

    /// Closes warps still resident at the end of the trace and computes the metrics.
    pub fn finish(mut self, header: &TraceHeader, taxonomy: Taxonomy) -> Vec<LaunchAnalysis> {
        let last = self.last_cycle;
        let mut warps: Vec<_> = self.warps.drain().collect();
        warps.sort_by_key(|(r, _)| *r);
        for (_, mut w) in warps {
            if let Some(acc) = self.launches.get_mut(w.launch) {
                let end = acc.end.unwrap_or(last);
                let end = end.max(w.launched);
                Self::exit(&mut w, acc, end);
            }
        }
        let gpu = GpuShape {
            schedulers: self.schedulers,
            width: self.width,
            warp_size: header.config.warp_size.max(1) as u64,
            last,
        };
        self.launches
            .into_iter()
            .zip(&header.launches)
            .enumerate()
            .map(|(i, (acc, h))| finish_launch(i as u32, acc, h, taxonomy, &gpu))
            .collect()
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

fn classify_map(states: &StateCycles, taxonomy: Taxonomy) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (&s, &n) in states {
        *out.entry(taxonomy.classify(s)).or_default() += n;
    }
    out
}

struct GpuShape {
    schedulers: usize,
    width: u32,
    warp_size: u64,
    last: u64,
}

fn finish_launch(
    index: u32,
    mut acc: LaunchAcc,
    h: &crate::trace::LaunchHeader,
    taxonomy: Taxonomy,
    gpu: &GpuShape,
) -> LaunchAnalysis {
    let (schedulers, width, last) = (gpu.schedulers, gpu.width, gpu.last);
    let start = acc.start.unwrap_or(0);
    let end = acc.end.unwrap_or(last).max(start);
    let cycles = end - start;
    for s in &mut acc.scheds {
        s.advance(end);
    }
    let sched_cycles = cycles as f64 * schedulers as f64;
    let mut warp_states = classify_map(&acc.states, taxonomy);
    for name in taxonomy.fixed_names() {
        warp_states.entry(name.to_string()).or_default();
    }
    let instructions = acc.warp_instructions as f64;
    let warp_states_per_issue = warp_states
        .iter()
        .map(|(k, &v)| (k.clone(), ratio(v as f64, instructions)))
        .collect();
    let state_total: u64 = warp_states.values().sum();
    let eligible_warp_cycles: u64 = acc
        .states
        .iter()
        .filter(|(s, _)| s.is_eligible())
        .map(|(_, n)| n)
        .sum();
    let eligible_cycles: u64 = acc.scheds.iter().map(|s| s.eligible_cycles).sum();
    let one_or_more = ratio(eligible_cycles as f64 * 100.0, sched_cycles);
    let busy: u64 = acc.scheds.iter().map(|s| s.busy_cycles).sum();
    let total_slots = width as u64 * cycles * schedulers as u64;
    let horizontal = (width as u64 * busy).saturating_sub(acc.warp_instructions);
    let vertical = total_slots
        .saturating_sub(acc.warp_instructions)
        .saturating_sub(horizontal)
        .saturating_sub(acc.refill);
    let block_threads = h.block.count();
    let source = acc
        .pcs
        .iter()
        .enumerate()
        .map(|(pc, p)| {
            let warp_cycles = classify_map(&p.states, taxonomy);
            let top_state = warp_cycles
                .iter()
                .fold(None::<(&String, u64)>, |best, (k, &v)| match best {
                    Some((_, b)) if b >= v => best,
                    _ => Some((k, v)),
                })
                .map(|(k, _)| k.clone());
            SourceLine {
                pc: pc as u32,
                text: h.listing.get(pc).cloned().unwrap_or_default(),
                executions: p.executions,
                total_warp_cycles: warp_cycles.values().sum(),
                warp_cycles,
                top_state,
            }
        })
        .collect();
    LaunchAnalysis {
        index,
        name: h.kernel.clone(),
        start_cycle: start,
        end_cycle: end,
        cycles,
        completed: acc.end.is_some(),
        warp_instructions: acc.warp_instructions,
        thread_instructions: acc.thread_instructions,
        ipc: ratio(instructions, cycles as f64),
        launch: LaunchStats {
            grid: h.grid,
            block: h.block,
            threads: h.grid.count() * block_threads,
            blocks: h.grid.count(),
            warps_per_block: block_threads.div_ceil(gpu.warp_size),
            registers_per_thread: h.regs_per_thread,
            shared_per_block: h.shared_bytes,
            stream: h.stream,
        },
        resident_warp_cycles: acc.resident,
        warp_cycles_per_issued_instruction: ratio(state_total as f64, instructions),
        warp_states,
        warp_states_per_issue,
        scheduler: SchedulerStats {
            schedulers: schedulers as u32,
            active_warps_per_scheduler: ratio(acc.resident as f64, sched_cycles),
            eligible_warps_per_scheduler: ratio(eligible_warp_cycles as f64, sched_cycles),
            issued_warp_per_scheduler: ratio(instructions, sched_cycles),
            no_eligible_pct: 100.0 - one_or_more,
            one_or_more_eligible_pct: one_or_more,
        },
        issue_slots: IssueSlots {
            width,
            total: total_slots,
            issued: acc.warp_instructions,
            refill: acc.refill,
            vertical_waste: vertical,
            horizontal_waste: horizontal,
        },
        source,
    }
}
