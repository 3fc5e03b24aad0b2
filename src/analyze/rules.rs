//! Rule hints in the style of Nsight Compute's `WRN` / `OPT` / `INF` lines: each rule looks at a few
//! figures of one launch and, when they cross a threshold, says what it saw (the evidence, with
//! numbers) and what usually helps. The rules are deliberately few and conservative: a hint
//! that fires on every kernel teaches nothing.
//!
//! Thresholds are fixed here, not configurable, so reports from different runs stay comparable.

use super::metrics::{LaunchAnalysis, PcMemory, SourceLine};
use crate::isa::{listing_instruction, without_control_code, Pipe};
use crate::sim::config::{GpuConfig, Policy};
use crate::sim::SmLimit;
use serde::Serialize;
use std::collections::BTreeMap;

/// How strongly a hint asks for action, as Nsight labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    /// The figures themselves are in doubt: something is wrong with the run, not the kernel's
    /// speed.
    Wrn,
    /// An optimization opportunity with an estimated share of the cycles at stake.
    Opt,
    /// Information that explains a figure.
    Inf,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Wrn => "WRN",
            Severity::Opt => "OPT",
            Severity::Inf => "INF",
        }
    }
}

/// One rule that fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    pub severity: Severity,
    /// Stable snake_case rule name, e.g. `dominant_stall`.
    pub rule: &'static str,
    pub message: String,
}

/// A stall that takes at least this share of the cycles between issues dominates.
const DOMINANT_STALL_SHARE: f64 = 0.30;
/// Achieved occupancy below this fraction of theoretical is worth a look.
const OCCUPANCY_GAP: f64 = 0.80;
/// A partial last wave is a cause worth naming only in a grid of fewer waves than this: in
/// a longer one its idle SM-cycles are a small share of the launch.
const TAIL_WAVES: f64 = 4.0;
/// A tail longer than this share of the launch is worth a look.
const TAIL_SHARE: f64 = 0.20;
/// SM idle time (%) above which the tail is worth a look.
const IDLE_SM_PCT: f64 = 10.0;
/// Cycles in which a scheduler had an eligible warp and issued nothing, as a share (%) of its
/// active cycles, above which the policy's idling is worth naming.
const POLICY_IDLE_PCT: f64 = 5.0;
/// Sectors per request above this multiple of the fewest the accesses could touch (their
/// width × active lanes in whole sectors) are uncoalesced: 4.5 for full warps of 4-byte
/// accesses in 32-byte sectors, whose ideal is 4.
const UNCOALESCED_SLACK: f64 = 1.125;
/// Warps that execute with fewer than this share of the threads they were launched with, on
/// average, lose enough lanes to divergence, predication or early exits to be worth a look.
const DIVERGENCE_SHARE: f64 = 0.75;
/// How many runs of instructions the divergence hint names.
const DIVERGENCE_RUNS: usize = 2;

fn advice(state: &str) -> &'static str {
    match state {
        "long_scoreboard" => "warps wait for global or local memory results: raise occupancy or independent work between a load and its use, improve locality (L1/L2 hits), or stage data in shared memory",
        "short_scoreboard" => "warps wait for shared memory or MUFU results: reduce bank conflicts, or put independent instructions between the producer and its consumer",
        "wait" => "warps wait on fixed-latency dependencies: interleave independent instructions (more ILP) so each dependent instruction issues later",
        "barrier" => "warps wait at BAR.SYNC for slower warps of their block: balance the work before the barrier or use smaller blocks",
        "membar" => "warps wait at memory barriers: drop fences that are not needed",
        "math_pipe_throttle" => "warps issue to an execution pipe faster than it takes instructions: interleave its instructions with other pipes' work, or use fewer of them",
        "mio_throttle" => "the MIO queue (shared memory, MUFU) is full: fewer, wider shared-memory accesses",
        "lg_throttle" => "the LSU queue for global memory is full: fewer, wider (vectorized) and coalesced accesses",
        "branch_resolving" => "warps wait for branch targets: fewer or more uniform branches",
        "no_instruction" => "warps wait for instructions: short-lived warps spend their cycles being fetched; give each warp more work",
        "drain" => "exited warps wait for their outstanding memory operations (stores, or loads whose results are never read) before their slots free: this is the end of the kernel, little to gain unless a load's result goes unused",
        "not_selected" => "warps were eligible but another warp issued: the schedulers are busy, which is good; more warps would not help",
        "dispatch_stall" => "the dispatcher could not take the issued instruction",
        "sleeping" => "warps yielded: check yield hints in the control codes",
        _ => "see the state's description in the Nsight Compute documentation",
    }
}

/// The advice for a stall of `warpscope study`'s threads (seed 004: streams of instruction
/// groups, each ending in a miss of `--lat` cycles, a dependency or nothing). Those stalls are
/// the study's settings, not code to change, so the advice says what they mean for the
/// schemes; `None` where the general advice holds.
fn study_advice(state: &str) -> Option<&'static str> {
    match state {
        "long_scoreboard" => Some("warps (the study's threads) wait for misses (--lat cycles each, as often as --stalls says): the latency a multithreading scheme is there to hide; compare the schemes' issue slots"),
        "short_scoreboard" => Some("warps (the study's threads) wait on the dependencies between their instruction groups (--stalls): only another thread's instructions can fill those cycles"),
        _ => None,
    }
}

/// Whether a stall is one the kernel's author cannot act on: `drain` is the end of every
/// warp (its last stores in flight), `dispatch_stall` the model's scoreboard table being full,
/// `misc` nothing the model produces. Such a stall dominating is information, not advice.
fn nothing_to_gain(state: &str) -> bool {
    matches!(state, "drain" | "dispatch_stall" | "misc")
}

/// The listing text at `pc` without its control code, quoted, or nothing past the listing.
fn quoted_instruction(l: &LaunchAnalysis, pc: u32) -> String {
    match l
        .source
        .get(pc as usize)
        .map(|s| without_control_code(&s.text))
    {
        Some(text) if !text.is_empty() => format!(" `{text}`"),
        _ => String::new(),
    }
}

/// `x` as a whole number when it is one, else to one decimal.
fn figure(x: f64) -> String {
    match x.fract() {
        0.0 => format!("{x}"),
        _ => format!("{x:.1}"),
    }
}

/// Whether the listing line's instruction has a guard predicate other than `PT`: its
/// executing lanes are then its active lanes less those the guard turned off.
fn guarded(text: &str) -> bool {
    let inst = listing_instruction(text);
    inst.starts_with('@') && !inst.starts_with("@PT ")
}

/// Warps that execute with few of their threads: Nsight's thread-divergence rule, on the
/// threads that are not predicated off (the lanes the trace's issue events name), against
/// the threads the warps were launched with — a block of 48 threads is no divergence.
///
/// Names where the lanes are lost (executions × launched threads − executing threads; the
/// launched threads averaged over the launch): runs of consecutive instructions with the
/// same executions and threads — a basic block, or the part of one a guard does not split —,
/// the two that lose the most. Instructions with a guard predicate are left out where others
/// lose lanes: their executing lanes are their active lanes less those the guard turned off
/// (a loop's `@P1 BRA DONE` runs with the lanes leaving the loop), whereas an unguarded
/// instruction's are exactly its active lanes, so what it loses went to divergence or early
/// exits.
fn thread_divergence(l: &LaunchAnalysis) -> Option<Hint> {
    let (threads, launched) = (
        l.not_predicated_off_threads_per_warp,
        l.launched_threads_per_warp,
    );
    if launched == 0.0 || threads >= launched * DIVERGENCE_SHARE {
        return None;
    }
    // Runs of source lines: (first, last, lost lanes), a guarded line alone.
    let mut runs: Vec<(&SourceLine, &SourceLine, f64)> = Vec::new();
    for s in l.source.iter().filter(|s| s.executions > 0) {
        let lost = s.executions as f64 * launched - s.thread_executions as f64;
        match runs.last_mut() {
            Some((first, last, n))
                if last.pc + 1 == s.pc
                    && !guarded(&first.text)
                    && !guarded(&s.text)
                    && (last.executions, last.thread_executions)
                        == (s.executions, s.thread_executions) =>
            {
                *last = s;
                *n += lost;
            }
            _ => runs.push((s, s, lost)),
        }
    }
    runs.retain(|&(_, _, lost)| lost > 0.0);
    if runs.iter().any(|(first, _, _)| !guarded(&first.text)) {
        runs.retain(|(first, _, _)| !guarded(&first.text));
    }
    runs.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.pc.cmp(&b.0.pc)));
    let named: Vec<String> = runs
        .iter()
        .take(DIVERGENCE_RUNS)
        .map(|(first, last, _)| {
            let per = figure(first.thread_executions as f64 / first.executions as f64);
            match first.pc == last.pc {
                true => format!(
                    "pc {}{} ({per} threads per execution, {} executions)",
                    first.pc,
                    quoted_instruction(l, first.pc),
                    first.executions
                ),
                false => format!(
                    "pcs {}-{} ({} … {}: {per} threads per execution, {} executions each)",
                    first.pc,
                    last.pc,
                    quoted_instruction(l, first.pc).trim_start(),
                    quoted_instruction(l, last.pc).trim_start(),
                    first.executions
                ),
            }
        })
        .collect();
    let at = match named.is_empty() {
        true => String::new(),
        false => format!(" Most lanes are lost at {}.", named.join(" and ")),
    };
    Some(Hint {
        severity: Severity::Opt,
        rule: "thread_divergence",
        message: format!(
            "Warps execute each instruction with {threads:.1} of their {} threads on average (not predicated off; {:.0}% of the lanes): divergent branches, predication and threads that exit early leave the others idle.{at} Let the threads of a warp take the same path: branch on values that are uniform across a warp, group work by its branch outcome or trip count, or turn short branches into selects.",
            figure(launched),
            threads * 100.0 / launched,
        ),
    })
}

/// Dependencies the scoreboard or the control codes let through: the results and the timing
/// are those of a kernel that reads registers too early, whatever else the figures say.
fn hazards(l: &LaunchAnalysis) -> Hint {
    let named: Vec<String> = l
        .first_hazards
        .iter()
        .map(|h| {
            format!(
                "{} on {}: pc {}{} issued while pc {}{} was in flight",
                h.kind,
                h.register,
                h.consumer_pc,
                quoted_instruction(l, h.consumer_pc),
                h.producer_pc,
                quoted_instruction(l, h.producer_pc),
            )
        })
        .collect();
    let more = match l.hazards as usize > named.len() {
        true => ", …",
        false => "",
    };
    Hint {
        severity: Severity::Wrn,
        rule: "hazards",
        message: format!(
            "The run let {} through that the scoreboard or the control codes should have held ({}{more}): those instructions read or overwrote registers too early, so neither the results nor the timing are trustworthy. Fix the control codes (wait on the producer's dependency barrier, or a longer stall count), leave them out so that the auto-control pass computes them (`warpscope asm --auto-control` shows its codes), or record with `--scoreboard bitmap` or `ranges`, which hold every dependency.",
            crate::words::count(l.hazards, "dependency", "dependencies"),
            named.join("; "),
        ),
    }
}

/// Which pipes a `math_pipe_throttle` is made of, and what helps the busiest. Nsight names a
/// busy pipe math_pipe_throttle whichever pipe it is (the DESIGN table); a memory pipe that
/// takes an instruction every few cycles is a different problem from a saturated FMA pipe.
fn pipe_throttle_advice(pipe_busy: &[(Pipe, u64)]) -> String {
    let mut busy: Vec<(Pipe, u64)> = pipe_busy.iter().copied().filter(|&(_, n)| n > 0).collect();
    busy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total: u64 = busy.iter().map(|&(_, n)| n).sum();
    let Some(&(top, _)) = busy.first() else {
        return advice("math_pipe_throttle").to_string();
    };
    let shares: Vec<String> = busy
        .iter()
        .map(|&(pipe, n)| format!("{} {:.0}%", pipe.name(), n as f64 * 100.0 / total as f64))
        .collect();
    let what = match top {
        Pipe::Global => "the LSU takes global and local memory instructions more slowly than the warps issue them: fewer, wider (vectorized) accesses",
        Pipe::Shared => "the MIO path takes shared-memory instructions more slowly than the warps issue them: fewer, wider shared-memory accesses",
        Pipe::Branch => "the branch unit is saturated: fewer or more uniform branches",
        // (Not "compute bound": a burst at a slow pipe — every warp's S2R at its start — throttles
        // a kernel that is otherwise idle.)
        Pipe::Alu | Pipe::Fma | Pipe::Mufu => "warps issue to that pipe faster than it takes instructions: interleave its instructions with other pipes' work, or use fewer of them",
    };
    format!(
        "the busy pipes are {} of those cycles; {what}",
        shares.join(", ")
    )
}

/// The policy a launch ran under, as its hints name it.
#[derive(Debug, Clone, Copy)]
pub struct RunPolicy {
    pub policy: Policy,
    /// For a launch of `warpscope study --trace`, the study's scheme (`none`, `fine`) that
    /// the policy implements, which names it there.
    pub scheme: Option<&'static str>,
}

impl RunPolicy {
    /// What the policy does with the eligible warps it does not issue.
    fn idling(self) -> String {
        let p = self.policy;
        let name = match self.scheme {
            Some(scheme) => format!("the {scheme} scheme"),
            None => format!("the {} policy", p.name()),
        };
        match p {
            Policy::Barrel => format!("{name} gives each cycle to one warp in strict rotation, and a warp that is not ready in its turn leaves the cycle empty"),
            Policy::Coarse => format!("{name} runs one warp until it stalls on a long operation, and the other ready warps wait for the switch and its refill"),
            Policy::Sequential => format!("{name} runs one warp to completion before the next, and the other ready warps wait"),
            Policy::TwoLevel => format!("{name} issues only from its active set, and ready warps outside it wait"),
            _ => format!("{name} held eligible warps back"),
        }
    }

    /// The policies that issue whenever a warp is eligible, in the names the launch uses.
    fn greedy_alternatives(self) -> &'static str {
        match self.scheme {
            Some(_) => "a scheme that issues any ready warp (fine, smt)",
            None => "a policy that issues any eligible warp (lrr, gto)",
        }
    }
}

/// What limits theoretical occupancy below 100 %, and the change that would let one more
/// block fit: larger blocks for the block limit, a warp count dividing the warp slots, and
/// for registers and shared memory the most a block may use — from the SM's limits and the
/// launch's footprint, as the Occupancy section computes them.
fn occupancy_limiter(l: &LaunchAnalysis, config: &GpuConfig) -> Option<Hint> {
    let o = &l.occupancy;
    if o.theoretical_pct >= 100.0 || o.theoretical_pct <= 0.0 {
        return None;
    }
    let sm = &config.sm;
    let warp_size = config.warp_size.max(1);
    let blocks = o.theoretical_blocks_per_sm;
    let next = blocks + 1;
    let threads = l.launch.block.count();
    let warps = l.launch.warps_per_block as u32;
    let words = |n: u32, one: &str, many: &str| crate::words::count(n as u64, one, many);
    let what = match o.limiter {
        SmLimit::Blocks => {
            let fill = sm.max_warps.div_ceil(sm.max_blocks.max(1)) * warp_size;
            format!(
                "blocks of {threads} threads ({}) reach the SM's {}-block limit with {} of its {} warp slots filled: use larger blocks, {fill} threads or more",
                words(warps, "warp", "warps"),
                sm.max_blocks,
                blocks * warps,
                sm.max_warps,
            )
        }
        SmLimit::Warps => format!(
            "blocks of {} fit {blocks} to the SM's {} warp slots and leave {} empty: a block whose warp count divides {} fills them",
            words(warps, "warp", "warps"),
            sm.max_warps,
            sm.max_warps - blocks * warps,
            sm.max_warps,
        ),
        SmLimit::Registers => {
            let g = sm.register_granularity.max(1);
            let regs = l.launch.registers_per_thread;
            let per_block = regs.max(1).div_ceil(g) * g * warp_size * warps;
            // The most registers per thread (in the allocation granularity) with which `next`
            // blocks fit.
            let target = sm.registers / (next * warp_size * warps).max(1) / g * g;
            let change = match target {
                0 => format!("no register count fits {next} blocks of this size"),
                _ => format!("{target} registers per thread or fewer would fit {next} blocks"),
            };
            format!(
                "a block of {threads} threads at {regs} registers per thread takes {per_block} of the SM's {} registers; {change}",
                sm.registers,
            )
        }
        SmLimit::SharedMemory => format!(
            "a block takes {} of the SM's {} bytes of shared memory; {} bytes per block or fewer would fit {next} blocks",
            l.launch.shared_per_block,
            sm.shared_memory_bytes,
            sm.shared_memory_bytes / next,
        ),
    };
    // Lowering the limiter adds a block only if no other limit stops at the same count.
    let also = [
        (
            o.block_limit_registers,
            SmLimit::Registers,
            "registers also allow",
        ),
        (
            o.block_limit_shared_memory.unwrap_or(u32::MAX),
            SmLimit::SharedMemory,
            "shared memory also allows",
        ),
    ]
    .into_iter()
    .find(|&(n, limit, _)| n <= blocks && limit != o.limiter);
    let also = match also {
        Some((_, _, allow)) => format!(" ({allow} no more)"),
        None => String::new(),
    };
    Some(Hint {
        severity: Severity::Inf,
        rule: "occupancy_limiter",
        message: format!(
            "Theoretical occupancy is {:.1}%, limited by {} to {}: {what}{also}.",
            o.theoretical_pct,
            o.limiter.name().replace('_', " "),
            words(blocks, "block per SM", "blocks per SM"),
        ),
    })
}

/// A launch's warp-cycles under Nsight names, whatever taxonomy the report uses, so that the
/// rules read the same under both.
pub struct NsightView<'a> {
    /// The launch's warp-cycles by state.
    pub states: &'a BTreeMap<String, u64>,
    /// The warp-cycles of its `pipe_busy` reasons, by pipe.
    pub pipe_busy: &'a [(Pipe, u64)],
    /// By PC (as `LaunchAnalysis::source`).
    pub pcs: &'a [PcStates],
}

/// One instruction's warp-cycles by Nsight state name.
pub struct PcStates {
    /// Waiting to issue it, or issuing it.
    pub waiting: BTreeMap<String, u64>,
    /// Of `waiting`'s scoreboard and dependency-barrier waits, by state name: the cycles
    /// spent waiting for each producer's result, by the producer's PC.
    pub waits_on: BTreeMap<String, BTreeMap<u32, u64>>,
}

/// Named instructions as a sentence of their own (with its leading space), or nothing.
fn sentence(sites: Vec<String>) -> String {
    match sites.is_empty() {
        true => String::new(),
        false => format!(" {}.", sites.join("; ")),
    }
}

/// How many instructions a hint names at most.
const OFFENDERS: usize = 2;
/// A stall is pinned on one instruction only when that instruction has at least this share of
/// it: spread thinner (every instruction's latency on the `tiny` core) no site is the one to fix.
const SITE_SHARE: f64 = 0.25;

/// An instruction as hints (and `profile`'s summary) name it: its text, PC and where it was written — for a kernel
/// assembled from a file its file and line, for a replay recorded with lineinfo its CUDA
/// source line: "`LDG R2, [R1]` (pc 2, vecadd.sasm:12)", "`/*0098*/ LDG.E R4, [R4]` (pc 5,
/// CUDA line 42)".
pub fn site(l: &LaunchAnalysis, pc: u32) -> String {
    let source = l.source.get(pc as usize);
    let line = source
        .and_then(|s| l.written_at(s))
        .map_or(String::new(), |at| format!(", {at}"));
    match source.map(|s| without_control_code(&s.text)) {
        Some(text) if !text.is_empty() => format!("`{text}` (pc {pc}{line})"),
        _ => format!("pc {pc}{line}"),
    }
}

/// The instructions behind an uncoalesced launch: those whose own requests touch more sectors
/// than their accesses need (by the same slack as the launch's), most excess sectors first.
fn uncoalesced_sites(l: &LaunchAnalysis) -> Vec<String> {
    let mut pcs: Vec<(u32, &PcMemory)> = l
        .source
        .iter()
        .map(|s| (s.pc, &s.memory))
        .filter(|(_, m)| {
            m.global_requests > 0
                && m.global_sectors as f64 > m.ideal_global_sectors as f64 * UNCOALESCED_SLACK
        })
        .collect();
    let excess = |m: &PcMemory| m.global_sectors.saturating_sub(m.ideal_global_sectors);
    pcs.sort_by(|a, b| excess(b.1).cmp(&excess(a.1)).then(a.0.cmp(&b.0)));
    pcs.iter()
        .take(OFFENDERS)
        .map(|&(pc, m)| {
            let requests = m.global_requests as f64;
            format!(
                "{} touches {:.1} sectors per request where {:.1} would do ({} excess sectors)",
                site(l, pc),
                m.global_sectors as f64 / requests,
                m.ideal_global_sectors as f64 / requests,
                excess(m),
            )
        })
        .collect()
}

/// The instructions with the most bank-conflict passes, most first.
fn bank_conflict_sites(l: &LaunchAnalysis) -> Vec<String> {
    let mut pcs: Vec<(u32, &PcMemory)> = l
        .source
        .iter()
        .map(|s| (s.pc, &s.memory))
        .filter(|(_, m)| m.shared_bank_conflicts > 0)
        .collect();
    pcs.sort_by(|a, b| {
        b.1.shared_bank_conflicts
            .cmp(&a.1.shared_bank_conflicts)
            .then(a.0.cmp(&b.0))
    });
    pcs.iter()
        .take(OFFENDERS)
        .map(|&(pc, m)| {
            format!(
                "{} needs {:.2} extra passes per request",
                site(l, pc),
                m.shared_bank_conflicts as f64 / m.shared_requests.max(1) as f64,
            )
        })
        .collect()
}

/// Where the warp-cycles of stall `name` were spent, for the stalls that belong to an
/// instruction: the PC that waited most, its share of the stall, and for dependency stalls
/// the instruction whose result it waited for most. `None` for the stalls of no particular
/// instruction (drain, no_instruction, not_selected, ...).
fn stall_site(l: &LaunchAnalysis, pcs: &[PcStates], name: &str, cycles: u64) -> Option<String> {
    let top = |of: &dyn Fn(&PcStates) -> u64| {
        pcs.iter()
            .enumerate()
            .map(|(pc, p)| (pc as u32, of(p)))
            .filter(|&(_, n)| n > 0 && n as f64 >= cycles as f64 * SITE_SHARE)
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    };
    let waiting = |p: &PcStates| p.waiting.get(name).copied().unwrap_or(0);
    let share = |n: u64| n as f64 * 100.0 / cycles.max(1) as f64;
    match name {
        "long_scoreboard" | "short_scoreboard" | "wait" => {
            let (pc, n) = top(&waiting)?;
            // The result this instruction waits for most: another instruction's hottest
            // producer is no reason for this one's wait.
            let producer = pcs[pc as usize].waits_on.get(name).and_then(|by_producer| {
                by_producer
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(&producer, _)| producer)
            });
            let on = match producer {
                Some(producer) if producer != pc => {
                    format!(" waiting for {}", site(l, producer))
                }
                _ => String::new(),
            };
            Some(format!("{:.0}% of it at {}{on}", share(n), site(l, pc)))
        }
        "lg_throttle" | "mio_throttle" | "math_pipe_throttle" | "dispatch_stall" | "sleeping" => {
            let (pc, n) = top(&waiting)?;
            Some(format!("{:.0}% of it at {}", share(n), site(l, pc)))
        }
        // Charged to the instruction after the barrier: name the barrier.
        "barrier" | "membar" => {
            let (pc, n) = top(&waiting)?;
            let before = pc.checked_sub(1).filter(|&b| {
                l.source
                    .get(b as usize)
                    .is_some_and(|s| s.text.contains("BAR") || s.text.contains("MEMBAR"))
            });
            match before {
                Some(b) => Some(format!("{:.0}% of it after {}", share(n), site(l, b))),
                None => Some(format!("{:.0}% of it at {}", share(n), site(l, pc))),
            }
        }
        _ => None,
    }
}

/// The rules that fire for `l`, recorded under `policy` on `config`, read from its warp-cycles
/// under Nsight names (`nsight`). A launch that did not complete gets a `WRN incomplete`
/// first, and its other hints are `INF` at most.
pub fn hints(
    l: &LaunchAnalysis,
    nsight: &NsightView,
    policy: RunPolicy,
    config: &GpuConfig,
) -> Vec<Hint> {
    let mut out = Vec::new();
    if !l.completed {
        out.push(incomplete(l));
    }
    if l.hazards > 0 {
        out.push(hazards(l));
    }
    let mut figures = figure_hints(l, nsight, policy, config);
    if policy.scheme.is_some() {
        // A study's thread is not a block of a grid: occupancy and the grid's tail have
        // nothing to say about a multithreading scheme.
        figures.retain(|h| !matches!(h.rule, "tail" | "achieved_occupancy" | "occupancy_limiter"));
    }
    if !l.completed {
        // The tail and achieved occupancy are about the launch's end and whole grid, which a
        // partial run does not have. The rest describes the simulated part truly but not the
        // kernel: information, not advice.
        figures.retain(|h| !matches!(h.rule, "tail" | "achieved_occupancy"));
        for h in &mut figures {
            if h.severity == Severity::Opt {
                h.severity = Severity::Inf;
            }
        }
    }
    out.extend(figures);
    out.sort_by_key(|h| h.severity);
    out
}

/// The launch stopped before its end (a fault, the watchdog, a trace cut short): every figure
/// covers only the part that ran.
fn incomplete(l: &LaunchAnalysis) -> Hint {
    let granted: u64 = l.dispatch.blocks_per_sm.iter().sum();
    let message = match l.cycles {
        0 => "The launch never ran: the run stopped (a fault or the watchdog) before it started, so there are no figures for it.".to_string(),
        cycles => format!(
            "The launch did not complete (a fault, the watchdog or a truncated trace): the figures cover only its first {} with {granted} of its {} granted, and the other hints are information, not advice. Fix the fault or raise --max-cycles and record again.",
            crate::words::count(cycles, "cycle", "cycles"),
            crate::words::count(l.launch.blocks, "block", "blocks"),
        ),
    };
    Hint {
        severity: Severity::Wrn,
        rule: "incomplete",
        message,
    }
}

/// The rules read from the launch's figures (all but the run's own warnings).
fn figure_hints(
    l: &LaunchAnalysis,
    nsight: &NsightView,
    policy: RunPolicy,
    config: &GpuConfig,
) -> Vec<Hint> {
    let (nsight_states, pipe_busy) = (nsight.states, nsight.pipe_busy);
    let mut out = Vec::new();
    if l.warp_instructions == 0 || l.cycles == 0 {
        return out;
    }
    let s = &l.scheduler;
    let policy_idles = l.warp_states_recorded && s.idle_with_eligible_pct >= POLICY_IDLE_PCT;
    let issued = l.warp_instructions as f64;
    let total: u64 = nsight_states.values().sum();
    let per_issue = total as f64 / issued;
    // Stalls by cycles, most first (ties: first by name).
    let mut stalls: Vec<(&String, u64)> = nsight_states
        .iter()
        .filter(|(name, _)| name.as_str() != "selected")
        .map(|(name, &n)| (name, n))
        .collect();
    stalls.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let share_of = |cycles: u64| cycles as f64 / total.max(1) as f64;
    let dominant = |name: &str, cycles: u64, severity: Severity| {
        Hint {
        severity,
        rule: "dominant_stall",
        message: format!(
            "On average each warp spends {:.1} cycles in {name} per issued instruction, {:.0}% of the {per_issue:.1} cycles between two issues{}: {}.",
            cycles as f64 / issued,
            share_of(cycles) * 100.0,
            match stall_site(l, nsight.pcs, name, cycles) {
                Some(site) => format!(", {site}"),
                None => String::new(),
            },
            match (name, policy.scheme.and(study_advice(name))) {
                (_, Some(study)) => study.to_string(),
                ("math_pipe_throttle", None) => pipe_throttle_advice(pipe_busy),
                (_, None) => advice(name).to_string(),
            }
        ),
    }
    };
    if let Some(&(name, cycles)) = stalls.first() {
        let share = share_of(cycles);
        if share >= DOMINANT_STALL_SHARE && name == "not_selected" {
            if !policy_idles {
                out.push(Hint {
                    severity: Severity::Inf,
                    rule: "dominant_stall",
                    message: format!(
                        "{:.0}% of warp-cycles are not_selected: {}.",
                        share * 100.0,
                        advice(name)
                    ),
                });
            }
        } else if share >= DOMINANT_STALL_SHARE && nothing_to_gain(name) {
            // Said as information; the advice goes to the largest stall that can be acted
            // on, if it dominates too.
            out.push(dominant(name, cycles, Severity::Inf));
            let actionable = stalls
                .iter()
                .find(|(n, _)| n.as_str() != "not_selected" && !nothing_to_gain(n));
            if let Some(&(name, cycles)) = actionable {
                if share_of(cycles) >= DOMINANT_STALL_SHARE {
                    out.push(dominant(name, cycles, Severity::Opt));
                }
            }
        } else if share >= DOMINANT_STALL_SHARE {
            out.push(dominant(name, cycles, Severity::Opt));
        }
    }
    if policy_idles {
        let not_selected = nsight_states.get("not_selected").copied().unwrap_or(0);
        out.push(Hint {
            severity: Severity::Opt,
            rule: "policy_idle",
            message: format!(
                "Schedulers issued nothing in {:.1}% of their active cycles although a warp was eligible: {}. not_selected ({:.0}% of warp-cycles) includes the eligible warps' cycles in those empty slots; {} would use them.",
                s.idle_with_eligible_pct,
                policy.idling(),
                not_selected as f64 * 100.0 / total.max(1) as f64,
                policy.greedy_alternatives(),
            ),
        });
    }
    let o = &l.occupancy;
    if o.theoretical_pct > 0.0 && o.achieved_pct < o.theoretical_pct * OCCUPANCY_GAP {
        let cause = if l.launch.waves_per_sm < 1.0 {
            format!(
                "{} {:.2} of a wave, too few to fill the SMs",
                match l.launch.blocks {
                    1 => "the grid's single block is".to_string(),
                    n => format!("the grid's {n} blocks are"),
                },
                l.launch.waves_per_sm
            )
        } else if l.launch.waves_per_sm < TAIL_WAVES && l.launch.waves_per_sm.fract() > 0.0 {
            format!(
                "the last wave is {:.2} full, and warps that exit early leave their slots empty until their whole block retires",
                l.launch.waves_per_sm.fract()
            )
        } else {
            "warp slots stay empty between a block's retirement and the next block's arrival, and warps of a block that exit early leave theirs empty until the whole block retires".to_string()
        };
        out.push(Hint {
            severity: Severity::Opt,
            rule: "achieved_occupancy",
            message: format!(
                "Achieved occupancy {:.1}% ({:.1} active warps per SM) trails the theoretical {:.1}% ({:.1} warps): {cause}.",
                o.achieved_pct,
                o.achieved_active_warps_per_sm,
                o.theoretical_pct,
                o.theoretical_active_warps_per_sm,
            ),
        });
    }
    if let Some(hint) = occupancy_limiter(l, config) {
        out.push(hint);
    }
    let d = &l.dispatch;
    // A long tail only matters when SMs sit idle in it, and a grid smaller than the GPU is
    // the occupancy rule's business.
    let sms = d.blocks_per_sm.len() as u64;
    if d.tail_cycles as f64 > l.cycles as f64 * TAIL_SHARE
        && d.idle_sm_pct > IDLE_SM_PCT
        && l.launch.blocks > sms
    {
        out.push(Hint {
            severity: Severity::Opt,
            rule: "tail",
            message: format!(
                "The last block was granted at cycle {}, {} cycles ({:.0}% of the launch) before the end; SMs were idle {:.0}% of the time. A grid of {:.2} waves leaves SMs without work at the end: size the grid to whole waves or give blocks less work each.",
                d.last_grant_cycle.unwrap_or(0),
                d.tail_cycles,
                d.tail_cycles as f64 * 100.0 / l.cycles as f64,
                d.idle_sm_pct,
                l.launch.waves_per_sm
            ),
        });
    }
    if l.warp_states_recorded && s.no_eligible_pct > 50.0 {
        out.push(Hint {
            severity: Severity::Inf,
            rule: "issue_slot_utilization",
            message: format!(
                "Schedulers had no eligible warp in {:.1}% of cycles and issued {:.3} instructions per cycle: with {:.2} active warps per scheduler, only {:.2} were eligible on average.",
                s.no_eligible_pct,
                s.issued_warp_per_scheduler,
                s.active_warps_per_scheduler,
                s.eligible_warps_per_scheduler
            ),
        });
    }
    let m = &l.memory;
    // Loads, stores and atomics judged apart: an uncoalesced load among as many coalesced
    // stores has its sectors per request halved when they are counted together.
    let uncoalesced: Vec<String> = m
        .directions()
        .into_iter()
        .filter(|(_, g)| {
            g.requests > 0 && g.sectors_per_request > g.ideal_sectors_per_request * UNCOALESCED_SLACK
        })
        .map(|(key, g)| {
            let lanes = match g.lanes_per_request.fract() {
                0.0 => format!("{}", g.lanes_per_request),
                _ => format!("{:.1}", g.lanes_per_request),
            };
            format!(
                "Global {} touch {:.1} sectors per request ({} sectors for {} requests); their {}-byte accesses by {lanes} consecutive threads need {:.1} {}-byte sectors.",
                key.trim_start_matches("global_"),
                g.sectors_per_request,
                g.sectors,
                g.requests,
                g.access_bytes(),
                g.ideal_sectors_per_request,
                m.sector_bytes,
            )
        })
        .collect();
    if !uncoalesced.is_empty() {
        out.push(Hint {
            severity: Severity::Opt,
            rule: "uncoalesced_global",
            message: format!(
                "{}{} Make consecutive threads access consecutive addresses.",
                uncoalesced.join(" "),
                sentence(uncoalesced_sites(l)),
            ),
        });
    }
    out.extend(thread_divergence(l));
    if m.shared_bank_conflicts > 0 {
        out.push(Hint {
            severity: Severity::Opt,
            rule: "shared_bank_conflicts",
            message: format!(
                "{} shared-memory requests needed {} extra passes for bank conflicts ({:.2} per request).{} Pad shared arrays or change the access stride.",
                m.shared_requests,
                m.shared_bank_conflicts,
                m.shared_bank_conflicts as f64 / m.shared_requests.max(1) as f64,
                sentence(bank_conflict_sites(l)),
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_other_than_pt_makes_an_instruction_guarded() {
        assert!(guarded("@P1 BRA DONE"));
        assert!(guarded("@!P0 EXIT"));
        assert!(guarded("[B------:R-:W-:Y:S01] @P0 EXIT"));
        assert!(guarded("/*0040*/ @P0 BRA 0x80"));
        assert!(!guarded("@PT BRA 0x80"));
        assert!(!guarded("[B------:R-:W-:Y:S01] BRA LOOP"));
        assert!(!guarded("IADD R4, R4, 1"));
    }

    #[test]
    fn a_pipe_throttle_names_its_pipes_and_advises_on_the_busiest() {
        let busy = [(Pipe::Fma, 30), (Pipe::Global, 90), (Pipe::Alu, 0)];
        let words = pipe_throttle_advice(&busy);
        assert!(
            words.starts_with("the busy pipes are global 75%, fma 25% of those cycles;")
                && words.contains("the LSU takes global and local memory instructions"),
            "{words}"
        );
        let words = pipe_throttle_advice(&[(Pipe::Fma, 5)]);
        assert!(
            words.contains("warps issue to that pipe faster than it takes instructions"),
            "{words}"
        );
        // Without a pipe_busy reason (a trace of another taxonomy's making) the plain advice.
        assert_eq!(pipe_throttle_advice(&[]), advice("math_pipe_throttle"));
    }
}
