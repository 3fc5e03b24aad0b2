//! Rule hints in the style of Nsight Compute's `WRN` / `OPT` / `INF` lines: each rule looks at a few
//! figures of one launch and, when they cross a threshold, says what it saw (the evidence, with
//! numbers) and what usually helps. The rules are deliberately few and conservative: a hint
//! that fires on every kernel teaches nothing.
//!
//! Thresholds are fixed here, not configurable, so reports from different runs stay comparable.

use super::metrics::LaunchAnalysis;
use crate::isa::without_control_code;
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
/// Sectors per request above this multiple of the fewest the accesses could touch (their
/// width × active lanes in whole sectors) are uncoalesced: 4.5 for full warps of 4-byte
/// accesses in 32-byte sectors, whose ideal is 4.
const UNCOALESCED_SLACK: f64 = 1.125;

fn advice(state: &str) -> &'static str {
    match state {
        "long_scoreboard" => "warps wait for global or local memory results: raise occupancy or independent work between a load and its use, improve locality (L1/L2 hits), or stage data in shared memory",
        "short_scoreboard" => "warps wait for shared memory or MUFU results: reduce bank conflicts, or put independent instructions between the producer and its consumer",
        "wait" => "warps wait on fixed-latency dependencies: interleave independent instructions (more ILP) so each dependent instruction issues later",
        "barrier" => "warps wait at BAR.SYNC for slower warps of their block: balance the work before the barrier or use smaller blocks",
        "membar" => "warps wait at memory barriers: drop fences that are not needed",
        "math_pipe_throttle" => "an execution pipe is saturated: the kernel is compute bound on that pipe; spread the work over other pipes",
        "mio_throttle" => "the MIO queue (shared memory, MUFU) is full: fewer, wider shared-memory accesses",
        "lg_throttle" => "the LSU queue for global memory is full: fewer, wider (vectorized) and coalesced accesses",
        "branch_resolving" => "warps wait for branch targets: fewer or more uniform branches",
        "no_instruction" => "warps wait for instructions: short-lived warps spend their cycles being fetched; give each warp more work",
        "drain" => "exited warps wait for their stores: this is the end of the kernel, little to gain",
        "not_selected" => "warps were eligible but another warp issued: the schedulers are busy, which is good; more warps would not help",
        "dispatch_stall" => "the dispatcher could not take the issued instruction",
        "sleeping" => "warps yielded: check yield hints in the control codes",
        _ => "see the state's description in the Nsight Compute documentation",
    }
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

/// The rules that fire for `l`; `nsight_states` is its warp-state breakdown under Nsight names
/// (whatever taxonomy the report uses), so the rules read the same under both.
pub fn hints(l: &LaunchAnalysis, nsight_states: &BTreeMap<String, u64>) -> Vec<Hint> {
    let mut out = Vec::new();
    if l.hazards > 0 {
        out.push(hazards(l));
    }
    if l.warp_instructions == 0 || l.cycles == 0 {
        return out;
    }
    let issued = l.warp_instructions as f64;
    let total: u64 = nsight_states.values().sum();
    let per_issue = total as f64 / issued;
    let stall = nsight_states
        .iter()
        .filter(|(name, _)| name.as_str() != "selected")
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
    if let Some((name, &cycles)) = stall {
        let share = cycles as f64 / total.max(1) as f64;
        if share >= DOMINANT_STALL_SHARE && name != "not_selected" {
            out.push(Hint {
                severity: Severity::Opt,
                rule: "dominant_stall",
                message: format!(
                    "On average each warp spends {:.1} cycles in {name} per issued instruction, {:.0}% of the {per_issue:.1} cycles between two issues: {}.",
                    cycles as f64 / issued,
                    share * 100.0,
                    advice(name)
                ),
            });
        } else if share >= DOMINANT_STALL_SHARE {
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
            "warps that exit early leave their slots empty until their whole block retires, and the SMs wait for new blocks".to_string()
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
    if o.theoretical_pct < 100.0 && o.limiter != "blocks" && o.limiter != "warps" {
        out.push(Hint {
            severity: Severity::Inf,
            rule: "occupancy_limiter",
            message: format!(
                "Theoretical occupancy is {:.1}%, limited by {} to {} blocks per SM.",
                o.theoretical_pct,
                o.limiter.replace('_', " "),
                o.theoretical_blocks_per_sm
            ),
        });
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
    let s = &l.scheduler;
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
    if m.global_requests > 0
        && m.sectors_per_request > m.ideal_sectors_per_request * UNCOALESCED_SLACK
    {
        let width = format!("{}-byte accesses", m.access_bytes());
        let lanes = match m.lanes_per_request.fract() {
            0.0 => format!("{}", m.lanes_per_request),
            _ => format!("{:.1}", m.lanes_per_request),
        };
        out.push(Hint {
            severity: Severity::Opt,
            rule: "uncoalesced_global",
            message: format!(
                "Global memory requests touch {:.1} sectors each ({} sectors for {} requests); their {width} by {lanes} consecutive threads need {:.1} {}-byte sectors. Make consecutive threads access consecutive addresses.",
                m.sectors_per_request,
                m.global_sectors,
                m.global_requests,
                m.ideal_sectors_per_request,
                m.sector_bytes,
            ),
        });
    }
    if m.shared_bank_conflicts > 0 {
        out.push(Hint {
            severity: Severity::Opt,
            rule: "shared_bank_conflicts",
            message: format!(
                "{} shared-memory requests needed {} extra passes for bank conflicts ({:.2} per request): pad shared arrays or change the access stride.",
                m.shared_requests,
                m.shared_bank_conflicts,
                m.shared_bank_conflicts as f64 / m.shared_requests.max(1) as f64
            ),
        });
    }
    out.sort_by_key(|h| h.severity);
    out
}
