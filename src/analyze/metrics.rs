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
use super::rules::RunPolicy;
use crate::isa::{listing_opcode, Pipe};
use crate::replay::opcodes::access_width;
use crate::sim::config::{GpuConfig, MemoryModel, Policy};
use crate::sim::dispatcher::BlockFootprint;
use crate::sim::memory::HitLevel;
use crate::sim::observer::{MemKind, MemSpace, WarpRef, WarpState};
use crate::sim::scoreboard::Hazard;
use crate::sim::{Dim3, SmLimit};
use crate::trace::binary::EventSink;
use crate::trace::{Event, EventKind, TraceHeader};
use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// Blocks divided by what all SMs hold at once (theoretical blocks per SM × SMs).
    pub waves_per_sm: f64,
}

/// Occupancy as Nsight's "Occupancy" section shows it: theoretical from the launch's footprint
/// and the SM's limits, achieved from the resident warp-cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occupancy {
    /// Warp slots per SM.
    pub max_warps_per_sm: u32,
    /// Block limits per SM, each resource on its own (`None`: no shared memory used).
    pub block_limit_registers: u32,
    pub block_limit_shared_memory: Option<u32>,
    pub block_limit_warps: u32,
    pub block_limit_blocks: u32,
    /// The resource that binds first: `registers`, `shared_memory`, `warps` or `blocks`.
    pub limiter: SmLimit,
    pub theoretical_blocks_per_sm: u32,
    pub theoretical_active_warps_per_sm: f64,
    pub theoretical_pct: f64,
    /// Resident warp-cycles divided by (launch cycles × SMs).
    pub achieved_active_warps_per_sm: f64,
    pub achieved_pct: f64,
}

/// The memory system as the trace's memory events (verbosity 2) saw it.
///
/// The global figures come twice: for all global (and local) instructions together — the
/// keys this struct has always had, whose meaning stays — and for loads, stores and atomics
/// apart ([`GlobalAccessStats`]), as Nsight Compute's Memory Workload Analysis tables show
/// them. Together they mislead: a coalesced store beside an uncoalesced load halves the
/// load's sectors per request, and a store is answered by the L2 (it writes through), which
/// made it count as an L2 hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryStats {
    /// Whether the trace has memory events at all (recorded with `--verbosity 2`).
    pub recorded: bool,
    /// Global (and local) memory instructions: loads, stores and atomics.
    pub global_requests: u64,
    /// 32-byte sectors those requests touched.
    pub global_sectors: u64,
    pub sectors_per_request: f64,
    /// The fewest sectors per request their accesses could touch: each request's access
    /// width (from its opcode: `LDG.E.64` is 8 bytes) × active lanes, in whole sectors,
    /// averaged — what consecutive threads at consecutive addresses need.
    pub ideal_sectors_per_request: f64,
    /// The narrowest and widest access of those requests, in bytes (0 without requests).
    pub min_access_bytes: u32,
    pub max_access_bytes: u32,
    /// Active lanes per request, averaged.
    pub lanes_per_request: f64,
    /// The memory's sector size in bytes (`memory.sector_bytes`).
    pub sector_bytes: u32,
    /// Loads and atomics answered by L1, L2 and DRAM (the slowest level a request needed):
    /// the requests with hit figures, the two directions' own summed. Stores have none (see
    /// [`GlobalAccessStats`]).
    pub l1_hits: u64,
    pub l2_hits: u64,
    pub dram_requests: u64,
    /// `l1_hits` / loads and atomics that went through the hierarchy (atomics never hit
    /// the L1).
    pub l1_hit_rate_pct: f64,
    /// `l2_hits` / loads and atomics that reached the L2.
    pub l2_hit_rate_pct: f64,
    /// Global (and local) loads alone.
    pub global_loads: GlobalAccessStats,
    /// Global (and local) stores alone.
    pub global_stores: GlobalAccessStats,
    /// Global atomics alone.
    pub global_atomics: GlobalAccessStats,
    pub shared_requests: u64,
    /// Extra shared-memory passes caused by bank conflicts.
    pub shared_bank_conflicts: u64,
}

impl MemoryStats {
    /// The global accesses' width in bytes: `8`, or `4-16` when they differ.
    pub fn access_bytes(&self) -> String {
        access_bytes(self.min_access_bytes, self.max_access_bytes)
    }

    /// Loads, stores and atomics, each with its key (`global_loads`, ...).
    pub fn directions(&self) -> [(&'static str, &GlobalAccessStats); 3] {
        [
            ("global_loads", &self.global_loads),
            ("global_stores", &self.global_stores),
            ("global_atomics", &self.global_atomics),
        ]
    }
}

fn access_bytes(min: u32, max: u32) -> String {
    match (min, max) {
        (a, b) if a == b => a.to_string(),
        (a, b) => format!("{a}-{b}"),
    }
}

/// One direction of global memory traffic (loads, stores or atomics), as a row of Nsight
/// Compute's memory tables. Hit figures are per request, by the slowest level it needed (the
/// trace records a request's level, not each sector's, where Nsight's hit rates count
/// sectors), and `None` where the model has no such hit: stores write through to the L2
/// without allocating in the L1 and allocate in the L2 without reading DRAM, so nothing says
/// whether a cache held their sectors; atomics execute at the L2, past the L1; and without
/// the hierarchy memory model (`ideal`, `fixed`) there are no caches at all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GlobalAccessStats {
    /// Instructions (one request each).
    pub requests: u64,
    /// 32-byte sectors they touched (`memory.sector_bytes`).
    pub sectors: u64,
    pub sectors_per_request: f64,
    /// As [`MemoryStats::ideal_sectors_per_request`], for these requests.
    pub ideal_sectors_per_request: f64,
    /// The narrowest and widest access, in bytes (0 without requests).
    pub min_access_bytes: u32,
    pub max_access_bytes: u32,
    /// Active lanes per request, averaged.
    pub lanes_per_request: f64,
    /// Requests answered by the L1 (loads only).
    pub l1_hits: Option<u64>,
    /// `l1_hits` / requests (loads only).
    pub l1_hit_rate_pct: Option<f64>,
    /// Requests answered by the L2 (loads and atomics).
    pub l2_hits: Option<u64>,
    /// `l2_hits` / requests that reached the L2 (loads that missed the L1, atomics).
    pub l2_hit_rate_pct: Option<f64>,
    /// Requests that read DRAM (loads and atomics).
    pub dram_requests: Option<u64>,
}

impl GlobalAccessStats {
    /// The accesses' width in bytes: `8`, or `4-16` when they differ.
    pub fn access_bytes(&self) -> String {
        access_bytes(self.min_access_bytes, self.max_access_bytes)
    }
}

/// How the dispatcher spread the launch's blocks over the SMs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DispatchStats {
    /// Blocks each SM ran, by SM id.
    pub blocks_per_sm: Vec<u64>,
    /// Cycles each SM had at least one of the launch's blocks resident, by SM id.
    pub busy_cycles_per_sm: Vec<u64>,
    pub first_grant_cycle: Option<u64>,
    pub last_grant_cycle: Option<u64>,
    /// Cycles from the last grant to the launch's end: the tail where SMs run out of work.
    pub tail_cycles: u64,
    /// Share of SM-cycles of the launch with no block of it resident.
    pub idle_sm_pct: f64,
}

/// Scheduler statistics, per scheduler-cycle over the launch's cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedulerStats {
    /// Schedulers on the GPU (SMs × sub-partitions).
    pub schedulers: u32,
    /// Share of the launch's scheduler-cycles (`schedulers` × cycles) in which a scheduler
    /// held a warp of the launch: the cycles the figures below average over (the issue
    /// slots count them all).
    pub active_cycles_pct: f64,
    /// Resident warps per scheduler-cycle.
    pub active_warps_per_scheduler: f64,
    /// Warps in `selected` or `not_selected` per scheduler-cycle.
    pub eligible_warps_per_scheduler: f64,
    /// Warp instructions issued per scheduler-cycle.
    pub issued_warp_per_scheduler: f64,
    /// Share of scheduler-cycles with no eligible warp.
    pub no_eligible_pct: f64,
    pub one_or_more_eligible_pct: f64,
    /// Share of scheduler-cycles in which a warp was eligible and nothing issued: the
    /// policy's own idling (barrel's turn of a warp that is not ready, the running warp of
    /// coarse or sequential, a coarse refill). Zero for the policies that issue any eligible
    /// warp (lrr, gto, oldest, smt).
    pub idle_with_eligible_pct: f64,
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
    /// The CUDA source line it was compiled from (replays of traces recorded with lineinfo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_line: Option<u32>,
    /// The line of the assembly file it was assembled from (a kernel written in native or
    /// tiny-gpu assembly), when the trace names the file: the launch's
    /// [`LaunchAnalysis::asm_file`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asm_line: Option<u32>,
    /// Warp instructions issued at this PC.
    pub executions: u64,
    /// Threads that executed it — active and not predicated off, the lanes its issue events
    /// name —, summed over its executions (Nsight's predicated-on thread instructions).
    pub thread_executions: u64,
    /// Warp-cycles charged to this PC (waiting to issue it, or issuing it).
    pub total_warp_cycles: u64,
    /// By state name (non-zero only).
    pub warp_cycles: BTreeMap<String, u64>,
    /// The state with the most cycles here (ties: first by name).
    pub top_state: Option<String>,
    /// Scoreboard and dependency-barrier stall cycles of other instructions waiting for this
    /// one's result (Nsight's attributed stalls), by state name (non-zero only).
    pub attributed_warp_cycles: BTreeMap<String, u64>,
    pub total_attributed_warp_cycles: u64,
    /// Its memory requests (none: not a memory instruction, or no memory events recorded).
    #[serde(skip_serializing_if = "PcMemory::is_empty")]
    pub memory: PcMemory,
}

/// The memory requests of one instruction (from `memory` events, `--verbosity 2`): what the
/// hints need to name the instructions behind the launch's memory figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PcMemory {
    pub global_requests: u64,
    pub global_sectors: u64,
    /// The fewest sectors those requests could touch (as `MemoryStats`'s ideal, summed).
    pub ideal_global_sectors: u64,
    pub shared_requests: u64,
    /// Extra shared-memory passes caused by bank conflicts.
    pub shared_bank_conflicts: u64,
}

impl PcMemory {
    pub fn is_empty(&self) -> bool {
        self.global_requests == 0 && self.shared_requests == 0
    }
}

/// One CUDA source line of a replayed kernel (a trace recorded with lineinfo): the figures of
/// the instructions compiled from it, summed — Nsight Compute's source view at the CUDA level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CudaSourceLine {
    pub line: u32,
    /// The PCs compiled from the line.
    pub pcs: Vec<u32>,
    pub executions: u64,
    pub thread_executions: u64,
    pub total_warp_cycles: u64,
    /// By state name (non-zero only).
    pub warp_cycles: BTreeMap<String, u64>,
    /// The state with the most cycles here (ties: first by name).
    pub top_state: Option<String>,
    /// Stall cycles of other instructions waiting for these instructions' results.
    pub total_attributed_warp_cycles: u64,
}

/// The state with the most cycles (ties: first by name).
fn top_state(warp_cycles: &BTreeMap<String, u64>) -> Option<String> {
    warp_cycles
        .iter()
        .fold(None::<(&String, u64)>, |best, (k, &v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((k, v)),
        })
        .map(|(k, _)| k.clone())
}

/// `source` summed by CUDA line, in line order (empty when no instruction has one).
fn by_cuda_line(source: &[SourceLine]) -> Vec<CudaSourceLine> {
    let mut lines: BTreeMap<u32, CudaSourceLine> = BTreeMap::new();
    for s in source {
        let Some(line) = s.cuda_line else {
            continue;
        };
        let l = lines.entry(line).or_insert_with(|| CudaSourceLine {
            line,
            pcs: Vec::new(),
            executions: 0,
            thread_executions: 0,
            total_warp_cycles: 0,
            warp_cycles: BTreeMap::new(),
            top_state: None,
            total_attributed_warp_cycles: 0,
        });
        l.pcs.push(s.pc);
        l.executions += s.executions;
        l.thread_executions += s.thread_executions;
        l.total_warp_cycles += s.total_warp_cycles;
        l.total_attributed_warp_cycles += s.total_attributed_warp_cycles;
        for (state, n) in &s.warp_cycles {
            *l.warp_cycles.entry(state.clone()).or_default() += n;
        }
    }
    let mut lines: Vec<CudaSourceLine> = lines.into_values().collect();
    for l in &mut lines {
        l.top_state = top_state(&l.warp_cycles);
    }
    lines
}

/// Everything measured about one kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchAnalysis {
    /// Index of the launch in the trace header.
    pub index: u32,
    /// The kernel's name as the trace spells it (mangled, for a replayed CUDA kernel).
    pub name: String,
    /// The name demangled, with parameters ([`crate::kernel_name::signature`]); `name` when
    /// it is not a mangled symbol.
    pub signature: String,
    /// The assembly file the kernel was assembled from, as the trace header names it
    /// (`kernels/vecadd.sasm`), when the header names one; its lines are the source lines'
    /// `asm_line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asm_file: Option<String>,
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
    pub occupancy: Occupancy,
    /// Sum over warps of exit − launch.
    pub resident_warp_cycles: u64,
    /// Whether the trace has warp-state events (recorded with `--verbosity` 1 or more).
    /// Without them `warp_states`, `warp_states_per_issue` and each source line's warp-cycles
    /// are empty and the scheduler's eligible figures 0: nothing says when a warp waited.
    pub warp_states_recorded: bool,
    /// Warp-cycles by state name.
    pub warp_states: BTreeMap<String, u64>,
    /// Warp-cycles by state divided by warp instructions.
    pub warp_states_per_issue: BTreeMap<String, f64>,
    pub warp_cycles_per_issued_instruction: f64,
    /// `thread_instructions` / `warp_instructions`: Nsight's "Avg. Not Predicated Off Threads
    /// Per Warp". The issue events name the lanes that executed (active in the SIMT stack and
    /// not predicated off), not the active lanes alone, so Nsight's "Avg. Active Threads Per
    /// Warp" cannot be told apart from it.
    pub not_predicated_off_threads_per_warp: f64,
    /// The threads each issuing warp was launched with, averaged over the warp instructions:
    /// the most `not_predicated_off_threads_per_warp` can be (the warp size, unless blocks
    /// end in a partial warp).
    pub launched_threads_per_warp: f64,
    pub scheduler: SchedulerStats,
    pub issue_slots: IssueSlots,
    pub memory: MemoryStats,
    pub dispatch: DispatchStats,
    /// One line per PC of the listing (and any PC beyond it that was reached).
    pub source: Vec<SourceLine>,
    /// `source` by CUDA source line, for replays of traces recorded with lineinfo.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cuda_source: Vec<CudaSourceLine>,
    /// Dependencies the run let through (`hazard` events): instructions that issued while
    /// the scoreboard or their control codes should have held them, so they read or wrote
    /// registers too early and the timing is not the kernel's.
    pub hazards: u64,
    /// The first few distinct ones (by kind, register and PCs), in trace order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub first_hazards: Vec<HazardSample>,
    /// Nsight-style rule results, most important first.
    pub hints: Vec<super::rules::Hint>,
}

impl LaunchAnalysis {
    /// Where the instruction of `s` was written: in the assembly file, as a compiler names a
    /// place, the file's own name and the line (`vecadd.sasm:12`); in a replay recorded with
    /// lineinfo, its CUDA line (`CUDA line 42`); `None` without either (a hex kernel, a trace
    /// that names no file, a replay without lineinfo).
    pub fn written_at(&self, s: &SourceLine) -> Option<String> {
        if let (Some(line), Some(file)) = (s.asm_line, self.asm_file.as_deref()) {
            // (The base name: the hints are sentences, and the whole path is in the JSON.)
            let name = std::path::Path::new(file)
                .file_name()
                .map_or_else(|| file.into(), |n| n.to_string_lossy());
            return Some(format!("{name}:{line}"));
        }
        s.cuda_line.map(|n| format!("CUDA line {n}"))
    }
}

/// How many distinct hazards a launch keeps to name.
pub const FIRST_HAZARDS: usize = 3;

/// One dependency the run let through, as the trace's `hazard` event tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HazardSample {
    /// The cycle its first occurrence issued in.
    pub cycle: u64,
    /// `RAW`, `WAR` or `WAW`.
    pub kind: &'static str,
    /// The register, predicate or `NZP` it concerns.
    pub register: String,
    /// The earlier instruction still in flight (the writer, or for WAR the pending reader).
    pub producer_pc: u32,
    /// The instruction that issued too early.
    pub consumer_pc: u32,
}

impl HazardSample {
    fn of(cycle: u64, h: &Hazard) -> HazardSample {
        HazardSample {
            cycle,
            kind: h.kind.name(),
            register: h.reg.to_string(),
            producer_pc: h.producer_pc,
            consumer_pc: h.consumer_pc,
        }
    }

    fn same_dependency(&self, h: &Hazard) -> bool {
        self.kind == h.kind.name()
            && self.producer_pc == h.producer_pc
            && self.consumer_pc == h.consumer_pc
            && self.register == h.reg.to_string()
    }
}

/// Warp-cycles by raw state, for one PC: `Selected` apart (every issue adds to it; only its
/// sums are read, in no order), the others in a short list searched in order (a PC sees a
/// handful of distinct states), which is cheaper than hashing on the per-issue path.
#[derive(Debug, Default, Clone)]
struct StateCycles {
    selected: u64,
    others: Vec<(WarpState, u64)>,
}

impl StateCycles {
    #[inline]
    fn add(&mut self, state: WarpState, n: u64) {
        if state == WarpState::Selected {
            self.selected += n;
            return;
        }
        if n == 0 {
            return;
        }
        match self.others.iter_mut().find(|(s, _)| *s == state) {
            Some((_, c)) => *c += n,
            None => self.others.push((state, n)),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (WarpState, u64)> + '_ {
        let selected = (self.selected > 0).then_some((WarpState::Selected, self.selected));
        selected.into_iter().chain(self.others.iter().copied())
    }
}

/// A launch's warp-cycles by raw state: the sum of its PCs' (every state interval is charged
/// to exactly one PC).
fn launch_states(pcs: &[PcAcc]) -> HashMap<WarpState, u64> {
    let mut out = HashMap::default();
    for (s, n) in pcs.iter().flat_map(|p| p.states.iter()) {
        *out.entry(s).or_default() += n;
    }
    out
}

#[derive(Default, Clone)]
struct SchedAcc {
    eligible: u32,
    resident: u32,
    since: u64,
    eligible_cycles: u64,
    /// Cycles with a warp of the launch resident on the scheduler (Nsight's "active" cycles).
    active_cycles: u64,
    last_issue_cycle: Option<u64>,
    busy_cycles: u64,
}

impl SchedAcc {
    fn advance(&mut self, cycle: u64) {
        if cycle > self.since {
            if self.eligible > 0 {
                self.eligible_cycles += cycle - self.since;
            }
            if self.resident > 0 {
                self.active_cycles += cycle - self.since;
            }
            self.since = cycle;
        }
    }
}

#[derive(Default, Clone)]
struct PcAcc {
    executions: u64,
    /// Σ executing lanes over the executions.
    threads: u64,
    states: StateCycles,
    /// Stall cycles of consumers waiting on this PC's result.
    attributed: StateCycles,
    memory: PcMemory,
}

/// Global requests of one direction (or all of them).
#[derive(Default, Clone)]
struct GlobalAcc {
    requests: u64,
    sectors: u64,
    /// Σ over requests of ⌈width × lanes ÷ sector⌉.
    ideal_sectors: u64,
    lanes: u64,
    min_width: Option<u32>,
    max_width: u32,
    l1: u64,
    l2: u64,
    dram: u64,
}

impl GlobalAcc {
    fn add(&mut self, other: &GlobalAcc) {
        self.requests += other.requests;
        self.sectors += other.sectors;
        self.ideal_sectors += other.ideal_sectors;
        self.lanes += other.lanes;
        self.min_width = match (self.min_width, other.min_width) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_width = self.max_width.max(other.max_width);
        self.l1 += other.l1;
        self.l2 += other.l2;
        self.dram += other.dram;
    }
}

#[derive(Default, Clone)]
struct MemAcc {
    loads: GlobalAcc,
    stores: GlobalAcc,
    atomics: GlobalAcc,
    shared_requests: u64,
    shared_replays: u64,
}

#[derive(Default, Clone)]
struct SmAcc {
    blocks: u64,
    resident_blocks: u32,
    since: u64,
    busy: u64,
}

impl SmAcc {
    fn change(&mut self, cycle: u64, delta: i32) {
        if self.resident_blocks > 0 {
            self.busy += cycle.saturating_sub(self.since);
        }
        self.since = cycle;
        self.resident_blocks = self.resident_blocks.saturating_add_signed(delta);
    }
}

struct LaunchAcc {
    start: Option<u64>,
    end: Option<u64>,
    warp_instructions: u64,
    thread_instructions: u64,
    /// Σ over issues of the issuing warp's launched lanes.
    launched_lanes: u64,
    resident: u64,
    scheds: Vec<SchedAcc>,
    refill: u64,
    pcs: Vec<PcAcc>,
    /// Access width in bytes by PC, from the listing's opcodes (4 past it).
    widths: Vec<u32>,
    /// PCs from here on share the last entry: a valid trace never gets there (its PCs index
    /// the listing), and a corrupt one must not make the table grow to its 32-bit PCs.
    pc_limit: usize,
    mem: MemAcc,
    sms: Vec<SmAcc>,
    first_grant: Option<u64>,
    last_grant: Option<u64>,
    hazards: u64,
    first_hazards: Vec<HazardSample>,
}

impl LaunchAcc {
    /// Counts a memory request of `lanes` active lanes against its instruction.
    fn pc_memory(
        &mut self,
        pc: u32,
        space: MemSpace,
        sectors: u32,
        replays: u32,
        lanes: u32,
        sector_bytes: u32,
    ) {
        let width = self.widths.get(pc as usize).copied().unwrap_or(4);
        let m = &mut self.pc(pc).memory;
        match space {
            MemSpace::Global => {
                m.global_requests += 1;
                m.global_sectors += sectors as u64;
                m.ideal_global_sectors +=
                    (width as u64 * lanes as u64).div_ceil(sector_bytes as u64);
            }
            MemSpace::Shared => {
                m.shared_requests += 1;
                m.shared_bank_conflicts += replays as u64;
            }
        }
    }

    fn pc(&mut self, pc: u32) -> &mut PcAcc {
        let i = (pc as usize).min(self.pc_limit);
        if i >= self.pcs.len() {
            self.pcs.resize(i + 1, PcAcc::default());
        }
        &mut self.pcs[i]
    }
}

/// An event as the accumulator reads it: only the fields it uses, in 32 bytes where an
/// [`Event`] takes 56. The analyzer's decode thread writes one per event that matters here
/// and its accumulate thread reads them back, so their size is memory traffic between cores.
/// Events the accumulator only takes the cycle of (completions, barriers, faults) have no
/// step; [`Steps`] keeps their latest cycle.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    cycle: u64,
    /// The event's warp; for block events `sm` is the SM, for refills (SM, scheduler).
    warp: WarpRef,
    what: What,
}

// The size the decode thread's batches are planned for.
const _: () = assert!(std::mem::size_of::<Step>() <= 32);

#[derive(Debug, Clone, Copy)]
enum What {
    KernelLaunch {
        launch: u32,
    },
    KernelComplete {
        launch: u32,
    },
    BlockAssign {
        launch: u32,
    },
    BlockComplete {
        launch: u32,
    },
    // Narrow fields keep a step in 32 bytes. A count or index past them saturates: no
    // configuration has that many schedulers, and past it only fault matching is affected.
    WarpLaunch {
        launch: u32,
        scheduler: u16,
        lanes: u8,
        /// The block's linear index and the warp's in it: what a fault names the warp by.
        block: u32,
        warp_in_block: u16,
    },
    WarpExit,
    State(WarpState),
    /// `threads`: the active mask's lanes.
    Issue {
        pc: u32,
        threads: u32,
    },
    Refill {
        slots: u32,
    },
    Memory {
        space: MemSpace,
        kind: MemKind,
        level: HitLevel,
        sectors: u32,
        replays: u32,
        pc: u32,
    },
    Hazard(Hazard),
}

impl Step {
    #[inline(always)]
    fn of(event: &Event) -> Option<Step> {
        let none = WarpRef { sm: 0, slot: 0 };
        let (cycle, warp, what) = match *event {
            Event::KernelLaunch { cycle, launch } => (cycle, none, What::KernelLaunch { launch }),
            Event::KernelComplete { cycle, launch } => {
                (cycle, none, What::KernelComplete { launch })
            }
            Event::BlockAssign {
                cycle, launch, sm, ..
            } => (cycle, WarpRef { sm, slot: 0 }, What::BlockAssign { launch }),
            Event::BlockComplete {
                cycle, launch, sm, ..
            } => (
                cycle,
                WarpRef { sm, slot: 0 },
                What::BlockComplete { launch },
            ),
            Event::WarpLaunch { cycle, warp, info } => (
                cycle,
                warp,
                What::WarpLaunch {
                    launch: info.launch,
                    scheduler: u16::try_from(info.scheduler).unwrap_or(u16::MAX),
                    lanes: info.lanes.count_ones() as u8,
                    block: info.block,
                    warp_in_block: u16::try_from(info.warp_in_block).unwrap_or(u16::MAX),
                },
            ),
            Event::WarpExit { cycle, warp } => (cycle, warp, What::WarpExit),
            Event::WarpState { cycle, warp, state } => (cycle, warp, What::State(state)),
            Event::Issue {
                cycle,
                warp,
                pc,
                active,
                ..
            } => (
                cycle,
                warp,
                What::Issue {
                    pc,
                    threads: active.count_ones(),
                },
            ),
            Event::Refill {
                cycle,
                sm,
                scheduler,
                slots,
            } => (
                cycle,
                WarpRef {
                    sm,
                    slot: scheduler,
                },
                What::Refill { slots },
            ),
            Event::Memory {
                cycle,
                warp,
                mem,
                pc,
            } => (
                cycle,
                warp,
                What::Memory {
                    space: mem.space,
                    kind: mem.kind,
                    level: mem.level,
                    sectors: mem.sectors,
                    replays: mem.replays,
                    pc,
                },
            ),
            Event::Hazard {
                cycle,
                warp,
                hazard,
            } => (cycle, warp, What::Hazard(hazard)),
            Event::Complete { .. }
            | Event::BarrierArrive { .. }
            | Event::BarrierRelease { .. }
            | Event::Fault { .. } => return None,
        };
        Some(Step { cycle, warp, what })
    }
}

/// A batch of events as [`Step`]s, filled by the binary reader
/// (`BinaryReader::take_into`) and fed to [`Accumulator::steps`].
#[derive(Debug, Default)]
pub(crate) struct Steps {
    steps: Vec<Step>,
    /// Events pushed without a step (a step counts itself).
    others: usize,
    /// The cycle of the latest event pushed without a step: the accumulator takes a step's
    /// own, so a step costs the decode thread no comparison.
    last_cycle: u64,
    /// The fault that stopped the run, if the batch holds it.
    fault: Option<SeenFault>,
}

impl Steps {
    pub(crate) fn with_capacity(n: usize) -> Steps {
        Steps {
            steps: Vec::with_capacity(n),
            ..Steps::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }

    pub(crate) fn clear(&mut self) {
        self.steps.clear();
        self.others = 0;
        self.last_cycle = 0;
        self.fault = None;
    }
}

/// Whether the fault at `site` stopped warp `w`.
fn stopped_by(site: &FaultSite, header: &TraceHeader, w: &WarpTrack) -> bool {
    let Some(launch) = header.launches.get(w.launch) else {
        return false;
    };
    let (g, c) = (launch.grid, site.ctaid);
    let block = c.x as u64 + g.x as u64 * (c.y as u64 + g.y as u64 * c.z as u64);
    launch.kernel == site.kernel && block == w.block as u64 && site.warp_in_block == w.warp_in_block
}

/// The fault that stopped the run, as the accumulator keeps it.
#[derive(Debug, Clone)]
struct SeenFault {
    /// In words with its cycle, as reports show it.
    text: String,
    /// The warp it stopped, when the fault names one and the instruction it stopped at.
    site: Option<FaultSite>,
}

/// Where a fault stopped a warp: the warp never issues that instruction, so the cycles it
/// spent waiting to are charged to it by this.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FaultSite {
    kernel: String,
    ctaid: Dim3,
    warp_in_block: u32,
    pc: u32,
}

fn seen_fault(event: &Event) -> Option<SeenFault> {
    let Event::Fault { cycle, fault } = event else {
        return None;
    };
    let site = match (fault.block, fault.warp, fault.pc) {
        (Some(ctaid), Some(warp_in_block), Some(pc)) => Some(FaultSite {
            kernel: fault.kernel.clone(),
            ctaid,
            warp_in_block,
            pc,
        }),
        _ => None,
    };
    Some(SeenFault {
        text: format!("fault at cycle {cycle}: {fault}"),
        site,
    })
}

impl EventSink for Steps {
    // A completion is a step of nothing: only its cycle is read.
    const COMPLETION_NAMES: bool = false;
    type Mark = (usize, usize, u64, bool);

    #[inline(always)]
    fn push(&mut self, event: Event) {
        match Step::of(&event) {
            Some(step) => self.steps.push(step),
            None => {
                self.others += 1;
                self.last_cycle = self.last_cycle.max(event.cycle());
                if let Some(fault) = seen_fault(&event) {
                    self.fault = Some(fault);
                }
            }
        }
    }

    fn count(&self) -> usize {
        self.steps.len() + self.others
    }

    fn mark(&self) -> Self::Mark {
        (
            self.steps.len(),
            self.others,
            self.last_cycle,
            self.fault.is_some(),
        )
    }

    fn rewind(&mut self, (steps, others, last_cycle, fault): Self::Mark) {
        self.steps.truncate(steps);
        self.others = others;
        self.last_cycle = last_cycle;
        if !fault {
            self.fault = None;
        }
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
    /// Active lanes of the last issue: a memory event follows its instruction's issue.
    last_active: u32,
    /// The lanes it was launched with.
    lanes: u32,
    /// Its block's linear index and its own index in the block.
    block: u32,
    warp_in_block: u32,
    /// State-cycles since the last issue, waiting for the PC of the next one.
    pending: Vec<(WarpState, u64)>,
}

/// The streaming accumulator: feed it every event in order, then [`finish`](Self::finish).
pub struct Accumulator {
    schedulers_per_sm: u32,
    schedulers: usize,
    width: u32,
    memory_recorded: bool,
    states_recorded: bool,
    sector_bytes: u32,
    launches: Vec<LaunchAcc>,
    /// Resident warps by `sm × slots_per_sm + slot`.
    warps: Vec<Option<WarpTrack>>,
    slots_per_sm: usize,
    /// The header's SM count: a damaged trace's warp on SM 4 000 000 000 would otherwise
    /// size `warps` at hundreds of gigabytes.
    num_sms: usize,
    last_cycle: u64,
    /// The fault that stopped the run.
    fault: Option<SeenFault>,
}

impl Accumulator {
    pub fn new(header: &TraceHeader) -> Self {
        let c = &header.config;
        let schedulers = (c.num_sms as usize) * (c.sm.schedulers as usize);
        Accumulator {
            schedulers_per_sm: c.sm.schedulers,
            schedulers,
            width: c.sm.issue_width,
            memory_recorded: header.verbosity >= EventKind::Memory.min_verbosity(),
            states_recorded: header.warp_states_recorded(),
            sector_bytes: c.memory.sector_bytes.max(1),
            launches: header
                .launches
                .iter()
                .map(|l| LaunchAcc {
                    start: None,
                    end: None,
                    warp_instructions: 0,
                    thread_instructions: 0,
                    launched_lanes: 0,
                    resident: 0,
                    scheds: vec![SchedAcc::default(); schedulers],
                    refill: 0,
                    pcs: vec![PcAcc::default(); l.listing.len()],
                    widths: l
                        .listing
                        .iter()
                        .map(|text| access_width(listing_opcode(text)))
                        .collect(),
                    pc_limit: (l.listing.len() + 1).max(1 << 16),
                    mem: MemAcc::default(),
                    sms: vec![SmAcc::default(); c.num_sms as usize],
                    first_grant: None,
                    last_grant: None,
                    hazards: 0,
                    first_hazards: Vec::new(),
                })
                .collect(),
            warps: Vec::new(),
            slots_per_sm: c.sm.max_warps.max(1) as usize,
            num_sms: c.num_sms as usize,
            last_cycle: 0,
            fault: None,
        }
    }

    /// Where warp `w` lives in `warps`; `None` for a slot the GPU does not have.
    fn index(&self, w: WarpRef) -> Option<usize> {
        let slot = w.slot as usize;
        (slot < self.slots_per_sm && (w.sm as usize) < self.num_sms)
            .then(|| w.sm as usize * self.slots_per_sm + slot)
    }

    fn track(
        warps: &mut [Option<WarpTrack>],
        slots_per_sm: usize,
        w: WarpRef,
    ) -> Option<&mut WarpTrack> {
        let slot = w.slot as usize;
        if slot >= slots_per_sm {
            return None;
        }
        warps.get_mut(w.sm as usize * slots_per_sm + slot)?.as_mut()
    }

    fn launch_mut(&mut self, launch: u32) -> Option<&mut LaunchAcc> {
        self.launches.get_mut(launch as usize)
    }

    /// Closes the warp's current state interval at `cycle`.
    #[inline(always)]
    fn close(warp: &mut WarpTrack, cycle: u64) {
        if cycle <= warp.since {
            return;
        }
        let n = cycle - warp.since;
        warp.since = cycle;
        match warp.state {
            // Counted from issue events.
            Some(WarpState::Selected) | None => {}
            // Charged to the launch, the PC and the producer when flushed.
            Some(state) => match warp.pending.iter_mut().find(|(s, _)| *s == state) {
                Some((_, c)) => *c += n,
                None => warp.pending.push((state, n)),
            },
        }
    }

    fn flush(warp: &mut WarpTrack, acc: &mut LaunchAcc, pc: u32) {
        if warp.pending.is_empty() {
            return;
        }
        for (state, n) in warp.pending.drain(..) {
            acc.pc(pc).states.add(state, n);
            if let WarpState::Scoreboard { producer_pc, .. }
            | WarpState::DependencyBarrier { producer_pc, .. } = state
            {
                acc.pc(producer_pc).attributed.add(state, n);
            }
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
        self.last_cycle = self.last_cycle.max(event.cycle());
        match Step::of(event) {
            Some(step) => self.step(&step),
            None => {
                if let Some(fault) = seen_fault(event) {
                    self.fault = Some(fault);
                }
            }
        }
    }

    /// The steps of a batch (see [`Steps`]), in order.
    pub(crate) fn steps(&mut self, batch: &Steps) {
        for step in &batch.steps {
            self.step(step);
        }
        self.last_cycle = self.last_cycle.max(batch.last_cycle);
        if let Some(fault) = &batch.fault {
            self.fault = Some(fault.clone());
        }
    }

    /// The fault that stopped the run, in words with its cycle, if the trace has one.
    pub fn fault(&self) -> Option<&str> {
        self.fault.as_ref().map(|f| f.text.as_str())
    }

    // Inlined into the batch loop: called per step, saving and restoring registers was a
    // quarter of its instructions.
    #[inline(always)]
    fn step(&mut self, step: &Step) {
        let Step { cycle, warp, what } = *step;
        self.last_cycle = self.last_cycle.max(cycle);
        match what {
            What::KernelLaunch { launch } => {
                if let Some(l) = self.launch_mut(launch) {
                    l.start.get_or_insert(cycle);
                    for s in &mut l.scheds {
                        s.since = s.since.max(cycle);
                    }
                }
            }
            What::KernelComplete { launch } => {
                if let Some(l) = self.launch_mut(launch) {
                    // The cycle its last block finished in is the launch's last: the end is
                    // the one after, as the simulator counts a launch's cycles.
                    l.end = Some(cycle + 1);
                }
            }
            What::BlockAssign { launch } => {
                let sm = warp.sm;
                if let Some(l) = self.launch_mut(launch) {
                    l.first_grant.get_or_insert(cycle);
                    l.last_grant = Some(cycle);
                    if let Some(s) = l.sms.get_mut(sm as usize) {
                        s.blocks += 1;
                        s.change(cycle, 1);
                    }
                }
            }
            What::BlockComplete { launch } => {
                let sm = warp.sm;
                if let Some(s) = self
                    .launch_mut(launch)
                    .and_then(|l| l.sms.get_mut(sm as usize))
                {
                    s.change(cycle, -1);
                }
            }
            What::Memory {
                space,
                kind,
                level,
                sectors,
                replays,
                pc,
            } => {
                let Some(w) = Self::track(&mut self.warps, self.slots_per_sm, warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                acc.pc_memory(
                    pc,
                    space,
                    sectors,
                    replays,
                    w.last_active,
                    self.sector_bytes,
                );
                let m = &mut acc.mem;
                match space {
                    MemSpace::Global => {
                        let m = match kind {
                            MemKind::Load => &mut m.loads,
                            MemKind::Store => &mut m.stores,
                            MemKind::Atomic => &mut m.atomics,
                        };
                        m.requests += 1;
                        m.sectors += sectors as u64;
                        let width = acc.widths.get(pc as usize).copied().unwrap_or(4);
                        let bytes = width as u64 * w.last_active as u64;
                        m.ideal_sectors += bytes.div_ceil(self.sector_bytes as u64);
                        m.lanes += w.last_active as u64;
                        m.min_width = Some(m.min_width.map_or(width, |n| n.min(width)));
                        m.max_width = m.max_width.max(width);
                        match level {
                            HitLevel::L1 => m.l1 += 1,
                            HitLevel::L2 => m.l2 += 1,
                            HitLevel::Dram => m.dram += 1,
                            HitLevel::Ideal => {}
                        }
                    }
                    MemSpace::Shared => {
                        m.shared_requests += 1;
                        m.shared_replays += replays as u64;
                    }
                }
            }
            What::Hazard(hazard) => {
                let Some(w) = Self::track(&mut self.warps, self.slots_per_sm, warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                acc.hazards += 1;
                if acc.first_hazards.len() < FIRST_HAZARDS
                    && !acc.first_hazards.iter().any(|h| h.same_dependency(&hazard))
                {
                    acc.first_hazards.push(HazardSample::of(cycle, &hazard));
                }
            }
            What::WarpLaunch {
                launch,
                scheduler,
                lanes,
                block,
                warp_in_block,
            } => {
                let sched =
                    (warp.sm as usize) * (self.schedulers_per_sm as usize) + scheduler as usize;
                if let Some(l) = self.launch_mut(launch) {
                    l.start.get_or_insert(cycle);
                    if let Some(s) = l.scheds.get_mut(sched) {
                        s.advance(cycle);
                        s.resident += 1;
                    }
                }
                let Some(i) = self.index(warp) else {
                    return;
                };
                if i >= self.warps.len() {
                    self.warps.resize_with(i + 1, || None);
                }
                self.warps[i] = Some(WarpTrack {
                    launch: launch as usize,
                    sched,
                    launched: cycle,
                    state: None,
                    since: cycle,
                    last_pc: None,
                    last_issue_cycle: None,
                    last_active: 0,
                    lanes: lanes.into(),
                    block,
                    warp_in_block: warp_in_block.into(),
                    pending: Vec::new(),
                });
            }
            What::State(state) => {
                let Some(w) = Self::track(&mut self.warps, self.slots_per_sm, warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                Self::close(w, cycle);
                let was = w.state.is_some_and(|s| s.is_eligible());
                Self::set_eligible(acc, w.sched, cycle, was, state.is_eligible());
                w.state = Some(state);
                w.since = cycle;
            }
            What::Issue { pc, threads } => {
                let Some(w) = Self::track(&mut self.warps, self.slots_per_sm, warp) else {
                    return;
                };
                let Some(acc) = self.launches.get_mut(w.launch) else {
                    return;
                };
                Self::close(w, cycle);
                Self::flush(w, acc, pc);
                acc.warp_instructions += 1;
                acc.thread_instructions += threads as u64;
                acc.launched_lanes += w.lanes as u64;
                let new_cycle = w.last_issue_cycle != Some(cycle);
                w.last_issue_cycle = Some(cycle);
                w.last_pc = Some(pc);
                w.last_active = threads;
                let line = acc.pc(pc);
                line.executions += 1;
                line.threads += threads as u64;
                if new_cycle {
                    line.states.add(WarpState::Selected, 1);
                }
                if let Some(s) = acc.scheds.get_mut(w.sched) {
                    if s.last_issue_cycle != Some(cycle) {
                        s.last_issue_cycle = Some(cycle);
                        s.busy_cycles += 1;
                    }
                }
            }
            What::WarpExit => {
                let w = self.index(warp).and_then(|i| self.warps.get_mut(i)?.take());
                if let Some(mut w) = w {
                    if let Some(acc) = self.launches.get_mut(w.launch) {
                        let pc = w.last_pc.unwrap_or(0);
                        Self::exit(&mut w, acc, cycle, pc);
                    }
                }
            }
            What::Refill { slots } => {
                let (sm, scheduler) = (warp.sm, warp.slot);
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
        }
    }

    /// The warp leaves at `cycle`; the cycles since its last issue are charged to `pc`.
    fn exit(w: &mut WarpTrack, acc: &mut LaunchAcc, cycle: u64, pc: u32) {
        Self::close(w, cycle);
        Self::flush(w, acc, pc);
        acc.resident += cycle.saturating_sub(w.launched);
        let was = w.state.is_some_and(|s| s.is_eligible());
        Self::set_eligible(acc, w.sched, cycle, was, false);
        if let Some(s) = acc.scheds.get_mut(w.sched) {
            s.advance(cycle);
            s.resident = s.resident.saturating_sub(1);
        }
    }

    /// Closes warps still resident at the end of the trace and computes the metrics.
    pub fn finish(mut self, header: &TraceHeader, taxonomy: Taxonomy) -> Vec<LaunchAnalysis> {
        let last = self.last_cycle;
        let warps: Vec<_> = self.warps.drain(..).flatten().collect();
        let site = self.fault.as_ref().and_then(|f| f.site.as_ref());
        for mut w in warps {
            if let Some(acc) = self.launches.get_mut(w.launch) {
                let end = acc.end.unwrap_or(last);
                let end = end.max(w.launched);
                // A warp the run stopped in waits for an instruction it never issued: the
                // fault names it for the warp it stopped. Any other's is not in the trace, and
                // its wait stays with the instruction it issued last.
                let stopped_at = site
                    .filter(|s| stopped_by(s, header, &w))
                    .map_or(w.last_pc.unwrap_or(0), |s| s.pc);
                Self::exit(&mut w, acc, end, stopped_at);
            }
        }
        let gpu = GpuShape {
            schedulers: self.schedulers,
            width: self.width,
            warp_size: header.config.warp_size.max(1) as u64,
            last,
            config: &header.config,
            memory_recorded: self.memory_recorded,
            states_recorded: self.states_recorded,
            sector_bytes: self.sector_bytes,
        };
        // A study trace's config names a placeholder policy; each launch is one scheme.
        let schemes = crate::study::trace::schemes_of(header);
        let policy_of = |i: usize| match &schemes {
            Some(schemes) => RunPolicy {
                policy: Policy::from_name(schemes[i].name())
                    .unwrap_or(header.config.scheduler.policy),
                scheme: Some(schemes[i].name()),
            },
            None => RunPolicy {
                policy: header.config.scheduler.policy,
                scheme: None,
            },
        };
        self.launches
            .into_iter()
            .zip(&header.launches)
            .enumerate()
            .map(|(i, (acc, h))| finish_launch(i as u32, acc, h, taxonomy, &gpu, policy_of(i)))
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

fn classify_map(
    states: impl IntoIterator<Item = (WarpState, u64)>,
    taxonomy: Taxonomy,
) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (s, n) in states {
        *out.entry(taxonomy.classify(s)).or_default() += n;
    }
    out
}

struct GpuShape<'a> {
    schedulers: usize,
    width: u32,
    warp_size: u64,
    last: u64,
    config: &'a GpuConfig,
    memory_recorded: bool,
    states_recorded: bool,
    sector_bytes: u32,
}

/// `active_sm_cycles`: the SM-cycles in which the launch had a block resident, over which
/// Nsight Compute averages achieved occupancy.
fn occupancy(
    h: &crate::trace::LaunchHeader,
    resident: u64,
    active_sm_cycles: u64,
    gpu: &GpuShape,
) -> Occupancy {
    let config = gpu.config;
    let fp = BlockFootprint::new(h.block.count(), h.regs_per_thread, h.shared_bytes, config);
    let limits = fp.block_limits(config);
    let (blocks_per_sm, limiter) = fp.blocks_per_sm(config);
    let max_warps = config.sm.max_warps;
    let theoretical = (blocks_per_sm * fp.warps).min(max_warps) as f64;
    let achieved = ratio(resident as f64, active_sm_cycles as f64);
    Occupancy {
        max_warps_per_sm: max_warps,
        block_limit_registers: limits.registers,
        block_limit_shared_memory: limits.shared_memory,
        block_limit_warps: limits.warps,
        block_limit_blocks: limits.blocks,
        limiter,
        theoretical_blocks_per_sm: blocks_per_sm,
        theoretical_active_warps_per_sm: theoretical,
        theoretical_pct: ratio(theoretical * 100.0, max_warps as f64),
        achieved_active_warps_per_sm: achieved,
        achieved_pct: ratio(achieved * 100.0, max_warps as f64),
    }
}

/// Which cache levels can answer a global request of one kind, in the hierarchy memory model.
#[derive(Clone, Copy)]
struct Levels {
    l1: bool,
    l2: bool,
}

fn global_access(g: &GlobalAcc, levels: Levels) -> GlobalAccessStats {
    let n = g.requests as f64;
    // Loads that missed the L1; atomics (an atomic of no active lane touches no cache).
    let l2_lookups = g.l2 + g.dram;
    GlobalAccessStats {
        requests: g.requests,
        sectors: g.sectors,
        sectors_per_request: ratio(g.sectors as f64, n),
        ideal_sectors_per_request: ratio(g.ideal_sectors as f64, n),
        min_access_bytes: g.min_width.unwrap_or(0),
        max_access_bytes: g.max_width,
        lanes_per_request: ratio(g.lanes as f64, n),
        l1_hits: levels.l1.then_some(g.l1),
        l1_hit_rate_pct: levels.l1.then(|| ratio(g.l1 as f64 * 100.0, n)),
        l2_hits: levels.l2.then_some(g.l2),
        l2_hit_rate_pct: levels
            .l2
            .then(|| ratio(g.l2 as f64 * 100.0, l2_lookups as f64)),
        dram_requests: levels.l2.then_some(g.dram),
    }
}

/// `hierarchy`: the trace's memory model has caches (`hierarchy`, not `ideal` or `fixed`).
fn memory(m: &MemAcc, recorded: bool, sector_bytes: u32, hierarchy: bool) -> MemoryStats {
    let mut all = GlobalAcc::default();
    for g in [&m.loads, &m.stores, &m.atomics] {
        all.add(g);
    }
    // Hit figures only for the requests that have them (see `GlobalAccessStats`): a store
    // counted as an L2 "hit" made the launch's L2 hit rate disagree with its loads'.
    let mut hits = GlobalAcc::default();
    hits.add(&m.loads);
    hits.add(&m.atomics);
    let none = Levels {
        l1: false,
        l2: false,
    };
    let (loads, atomics) = match hierarchy {
        true => (
            Levels { l1: true, l2: true },
            Levels {
                l1: false,
                l2: true,
            },
        ),
        false => (none, none),
    };
    MemoryStats {
        recorded,
        global_requests: all.requests,
        global_sectors: all.sectors,
        sectors_per_request: ratio(all.sectors as f64, all.requests as f64),
        ideal_sectors_per_request: ratio(all.ideal_sectors as f64, all.requests as f64),
        min_access_bytes: all.min_width.unwrap_or(0),
        max_access_bytes: all.max_width,
        lanes_per_request: ratio(all.lanes as f64, all.requests as f64),
        sector_bytes,
        l1_hits: hits.l1,
        l2_hits: hits.l2,
        dram_requests: hits.dram,
        l1_hit_rate_pct: ratio(
            hits.l1 as f64 * 100.0,
            (hits.l1 + hits.l2 + hits.dram) as f64,
        ),
        l2_hit_rate_pct: ratio(hits.l2 as f64 * 100.0, (hits.l2 + hits.dram) as f64),
        global_loads: global_access(&m.loads, loads),
        global_stores: global_access(&m.stores, none),
        global_atomics: global_access(&m.atomics, atomics),
        shared_requests: m.shared_requests,
        shared_bank_conflicts: m.shared_replays,
    }
}

fn dispatch(acc: &mut LaunchAcc, start: u64, end: u64) -> DispatchStats {
    for s in &mut acc.sms {
        // Blocks still resident when the trace ends count as busy until the launch's end.
        if s.resident_blocks > 0 {
            s.change(end.max(s.since), 0);
        }
    }
    let cycles = end - start;
    let busy: u64 = acc.sms.iter().map(|s| s.busy).sum();
    let sm_cycles = cycles * acc.sms.len() as u64;
    DispatchStats {
        blocks_per_sm: acc.sms.iter().map(|s| s.blocks).collect(),
        busy_cycles_per_sm: acc.sms.iter().map(|s| s.busy).collect(),
        first_grant_cycle: acc.first_grant,
        last_grant_cycle: acc.last_grant,
        tail_cycles: acc.last_grant.map_or(0, |g| end.saturating_sub(g)),
        idle_sm_pct: ratio(
            sm_cycles.saturating_sub(busy) as f64 * 100.0,
            sm_cycles as f64,
        ),
    }
}

fn finish_launch(
    index: u32,
    mut acc: LaunchAcc,
    h: &crate::trace::LaunchHeader,
    taxonomy: Taxonomy,
    gpu: &GpuShape,
    policy: RunPolicy,
) -> LaunchAnalysis {
    let (schedulers, width, last) = (gpu.schedulers, gpu.width, gpu.last);
    let start = acc.start.unwrap_or(0);
    let end = acc.end.unwrap_or(last).max(start);
    let cycles = end - start;
    for s in &mut acc.scheds {
        s.advance(end);
    }
    let recorded = gpu.states_recorded;
    if !recorded {
        // Issues alone would count `selected` cycles and nothing else: a warp that never
        // waited. Without state events no warp-cycle can be told apart.
        for p in &mut acc.pcs {
            p.states = StateCycles::default();
            p.attributed = StateCycles::default();
        }
    }
    let states = launch_states(&acc.pcs);
    let mut warp_states = classify_map(states.iter().map(|(&s, &n)| (s, n)), taxonomy);
    if recorded {
        for name in taxonomy.fixed_names() {
            warp_states.entry(name.to_string()).or_default();
        }
    }
    let instructions = acc.warp_instructions as f64;
    let warp_states_per_issue = warp_states
        .iter()
        .map(|(k, &v)| (k.clone(), ratio(v as f64, instructions)))
        .collect();
    let state_total: u64 = warp_states.values().sum();
    let eligible_warp_cycles: u64 = states
        .iter()
        .filter(|(s, _)| s.is_eligible())
        .map(|(_, n)| n)
        .sum();
    let eligible_cycles: u64 = acc.scheds.iter().map(|s| s.eligible_cycles).sum();
    // As Nsight Compute's scheduler statistics: per cycle in which the scheduler had a warp.
    let active_sched_cycles = acc.scheds.iter().map(|s| s.active_cycles).sum::<u64>() as f64;
    let one_or_more = ratio(eligible_cycles as f64 * 100.0, active_sched_cycles);
    let (no_eligible, one_or_more) = match recorded {
        true => (100.0 - one_or_more, one_or_more),
        false => (0.0, 0.0),
    };
    // A cycle that issued had its issuing warp eligible, so the busy cycles are among the
    // eligible ones.
    let idle_with_eligible_cycles: u64 = acc
        .scheds
        .iter()
        .map(|s| s.eligible_cycles.saturating_sub(s.busy_cycles))
        .sum();
    let idle_with_eligible = match recorded {
        true => ratio(
            idle_with_eligible_cycles as f64 * 100.0,
            active_sched_cycles,
        ),
        false => 0.0,
    };
    // Every resident warp-cycle is in one state: their sum is the resident warp-cycles,
    // which the lifecycle events give even when the states were not recorded.
    let warp_cycles = match recorded {
        true => state_total,
        false => acc.resident,
    };
    let busy: u64 = acc.scheds.iter().map(|s| s.busy_cycles).sum();
    let total_slots = width as u64 * cycles * schedulers as u64;
    let horizontal = (width as u64 * busy).saturating_sub(acc.warp_instructions);
    let vertical = total_slots
        .saturating_sub(acc.warp_instructions)
        .saturating_sub(horizontal)
        .saturating_sub(acc.refill);
    let block_threads = h.block.count();
    let source: Vec<SourceLine> = acc
        .pcs
        .iter()
        .enumerate()
        .map(|(pc, p)| {
            let warp_cycles = classify_map(p.states.iter(), taxonomy);
            let top_state = top_state(&warp_cycles);
            let attributed_warp_cycles = classify_map(p.attributed.iter(), taxonomy);
            SourceLine {
                pc: pc as u32,
                text: h.listing.get(pc).cloned().unwrap_or_default(),
                // (Line 0: the compiler gave the instruction none.)
                cuda_line: h.source_lines.get(pc).copied().filter(|&l| l > 0),
                // (Lines of no named file — a program assembled from a string and recorded
                // through the library — would point nowhere a reader can look.)
                asm_line: h
                    .asm_lines
                    .get(pc)
                    .copied()
                    .filter(|&l| l > 0 && !h.asm_file.is_empty()),
                executions: p.executions,
                thread_executions: p.threads,
                total_warp_cycles: warp_cycles.values().sum(),
                warp_cycles,
                top_state,
                total_attributed_warp_cycles: attributed_warp_cycles.values().sum(),
                attributed_warp_cycles,
                memory: p.memory,
            }
        })
        .collect();
    let dispatch = dispatch(&mut acc, start, end);
    let active_sm_cycles = dispatch.busy_cycles_per_sm.iter().sum();
    let occupancy = occupancy(h, acc.resident, active_sm_cycles, gpu);
    let blocks = h.grid.count();
    let resident_blocks = occupancy.theoretical_blocks_per_sm as u64 * gpu.config.num_sms as u64;
    let hierarchy = gpu.config.memory.model == MemoryModel::Hierarchy;
    let memory = memory(&acc.mem, gpu.memory_recorded, gpu.sector_bytes, hierarchy);
    let mut analysis = LaunchAnalysis {
        index,
        name: h.kernel.clone(),
        signature: crate::kernel_name::signature(&h.kernel).into_owned(),
        asm_file: (!h.asm_file.is_empty()).then(|| h.asm_file.clone()),
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
            waves_per_sm: ratio(blocks as f64, resident_blocks as f64),
        },
        occupancy,
        resident_warp_cycles: acc.resident,
        warp_states_recorded: recorded,
        warp_cycles_per_issued_instruction: ratio(warp_cycles as f64, instructions),
        not_predicated_off_threads_per_warp: ratio(acc.thread_instructions as f64, instructions),
        launched_threads_per_warp: ratio(acc.launched_lanes as f64, instructions),
        warp_states,
        warp_states_per_issue,
        scheduler: SchedulerStats {
            schedulers: schedulers as u32,
            active_cycles_pct: ratio(
                active_sched_cycles * 100.0,
                schedulers as f64 * cycles as f64,
            ),
            active_warps_per_scheduler: ratio(acc.resident as f64, active_sched_cycles),
            eligible_warps_per_scheduler: ratio(eligible_warp_cycles as f64, active_sched_cycles),
            issued_warp_per_scheduler: ratio(instructions, active_sched_cycles),
            no_eligible_pct: no_eligible,
            one_or_more_eligible_pct: one_or_more,
            idle_with_eligible_pct: idle_with_eligible,
        },
        issue_slots: IssueSlots {
            width,
            total: total_slots,
            issued: acc.warp_instructions,
            refill: acc.refill,
            vertical_waste: vertical,
            horizontal_waste: horizontal,
        },
        memory,
        dispatch,
        cuda_source: by_cuda_line(&source),
        source,
        hazards: acc.hazards,
        first_hazards: std::mem::take(&mut acc.first_hazards),
        hints: Vec::new(),
    };
    let nsight_states = classify_map(states.iter().map(|(&s, &n)| (s, n)), Taxonomy::Nsight);
    let pipe_busy: Vec<(Pipe, u64)> = Pipe::ALL
        .into_iter()
        .map(|pipe| {
            let n = states.get(&WarpState::PipeBusy { pipe }).copied();
            (pipe, n.unwrap_or(0))
        })
        .collect();
    let pc_states: Vec<super::rules::PcStates> = acc
        .pcs
        .iter()
        .map(|p| {
            let mut pc = super::rules::PcStates {
                waiting: BTreeMap::new(),
                waits_on: BTreeMap::new(),
            };
            for (state, n) in p.states.iter() {
                let name = Taxonomy::Nsight.classify(state);
                if let WarpState::Scoreboard { producer_pc, .. }
                | WarpState::DependencyBarrier { producer_pc, .. } = state
                {
                    *pc.waits_on
                        .entry(name.clone())
                        .or_default()
                        .entry(producer_pc)
                        .or_default() += n;
                }
                *pc.waiting.entry(name).or_default() += n;
            }
            pc
        })
        .collect();
    let nsight = super::rules::NsightView {
        states: &nsight_states,
        pipe_busy: &pipe_busy,
        pcs: &pc_states,
    };
    analysis.hints = super::rules::hints(&analysis, &nsight, policy, gpu.config);
    analysis
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::observer::{WarpInfo, WarpRef};
    use crate::sim::Dim3;

    /// A warp on an SM the header does not have (a damaged trace whose CRCs still hold) is
    /// left out: its index once sized the warp table at `sm × slots`, 352 GB for SM 4·10⁹.
    #[test]
    fn a_warp_on_an_sm_the_gpu_lacks_is_not_tracked() {
        let config = crate::sim::config::GpuConfig::preset("tiny").unwrap();
        let program =
            crate::asm::assemble(crate::asm::Dialect::Native, ".kernel k\nEXIT\n", "k").unwrap();
        let launch = crate::sim::KernelLaunch {
            program: std::sync::Arc::new(program),
            grid: Dim3::linear(1),
            block: Dim3::linear(4),
            params: vec![],
            stream: 0,
        };
        let prepared = crate::sim::gpu::prepare(&config, &[launch]).unwrap();
        let header = crate::trace::TraceHeader::new(&config, &prepared, 0, 1);
        let mut acc = Accumulator::new(&header);
        for sm in [config.num_sms, 4_000_000_000] {
            acc.event(&Event::WarpLaunch {
                cycle: 0,
                warp: WarpRef { sm, slot: 0 },
                info: WarpInfo {
                    launch: 0,
                    block: 0,
                    ctaid: Dim3::new(0, 0, 0),
                    warp_in_block: 0,
                    scheduler: 0,
                    lanes: 0xF,
                },
            });
        }
        assert!(acc.warps.is_empty(), "{} warp entries", acc.warps.len());
    }
}
