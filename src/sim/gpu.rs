//! The whole GPU: the dispatcher, the SMs and the memory system, stepped one cycle at a time.
//! This is the one owner of time. Cycles in which nothing anywhere can change are skipped in
//! one step; the observed events and statistics are exactly those of stepping every cycle.

use super::config::{GpuConfig, Policy, ScoreboardKind};
use super::dispatcher::{BlockFootprint, Dispatcher, Grant};
use super::fault::{Fault, FaultKind};
use super::memory::{GlobalMemory, MemoryStats, MemoryTiming};
use super::observer::Observer;
use super::scoreboard::DepOperands;
use super::sm::{CycleContext, FinishedBlock, PreparedLaunch, SchedulerStats, Sm};
use super::stream::{InstructionSource, NoReplay};
use super::{KernelLaunch, LaunchError};
use crate::asm::control_pass;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Watchdog: stop with a fault after this many cycles.
    pub max_cycles: u64,
    /// Skip work that cannot change anything: cycles in which nothing can change, and the
    /// warps of a scheduler that no event touched since its last pass (results are identical
    /// either way; `false` is the reference that steps every cycle and visits every warp).
    pub skip_idle: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            max_cycles: 50_000_000,
            skip_idle: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchReport {
    pub kernel: String,
    pub stream: u32,
    pub blocks: u64,
    pub start_cycle: u64,
    pub end_cycle: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmReport {
    pub blocks: u64,
    pub busy_cycles: u64,
    pub schedulers: Vec<SchedulerStats>,
}

/// What a finished run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub launches: Vec<LaunchReport>,
    pub sms: Vec<SmReport>,
    pub memory: MemoryStats,
    pub hazards: u64,
}

impl SimReport {
    pub fn ipc(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.warp_instructions as f64 / self.cycles as f64
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("{fault}")]
    Fault {
        fault: Box<Fault>,
        /// What had been measured up to the fault.
        partial: Box<SimReport>,
    },
}

/// Checks every launch against the GPU and fills in control codes where the scoreboard needs
/// them (a kernel with no codes at all on the `barriers` scoreboard gets the auto-control pass).
pub fn prepare(
    config: &GpuConfig,
    launches: &[KernelLaunch],
) -> Result<Vec<PreparedLaunch>, LaunchError> {
    launches
        .iter()
        .map(|launch| {
            launch.validate()?;
            let footprint = BlockFootprint::of(launch, config)?;
            let needs_codes = config.scheduler.scoreboard == ScoreboardKind::Barriers
                && launch
                    .program
                    .instructions
                    .iter()
                    .all(|i| i.control.is_none());
            let program = if needs_codes {
                Arc::new(control_pass::auto_control(&launch.program, config))
            } else {
                launch.program.clone()
            };
            Ok(PreparedLaunch {
                decoded: super::exec::Decoded::of(&program),
                deps: program.instructions.iter().map(DepOperands::of).collect(),
                program,
                footprint,
                launch: launch.clone(),
                replay: None,
                listing: None,
            })
        })
        .collect()
}

/// Runs `launches` on the GPU described by `config` until all complete.
pub fn simulate<O: Observer>(
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
    options: SimOptions,
    observer: &mut O,
) -> Result<SimReport, SimError> {
    simulate_with_source(config, launches, memory, options, &mut NoReplay, observer)
}

/// [`simulate`], with the launches that `source` replays taking their instructions from its
/// recorded streams (see [`super::stream`]) instead of executing their programs.
pub fn simulate_with_source<O: Observer>(
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
    options: SimOptions,
    source: &mut dyn InstructionSource,
    observer: &mut O,
) -> Result<SimReport, SimError> {
    let mut prepared = prepare(config, launches)?;
    for (i, p) in prepared.iter_mut().enumerate() {
        p.replay = source.replay_ops(i);
        p.listing = source.listing(i);
    }
    let mut dispatcher = Dispatcher::new(launches, prepared.iter().map(|p| p.footprint).collect());
    let mut sms: Vec<Sm> = (0..config.num_sms).map(|i| Sm::new(i, config)).collect();
    let mut timing = MemoryTiming::new(config);
    let mut report = SimReport {
        cycles: 0,
        warp_instructions: 0,
        thread_instructions: 0,
        launches: Vec::new(),
        sms: Vec::new(),
        memory: MemoryStats::default(),
        hazards: 0,
    };
    let mut grants: Vec<Grant> = Vec::new();
    let mut started: Vec<usize> = Vec::new();
    let mut finished: Vec<FinishedBlock> = Vec::new();
    // Each SM's room, refilled for each grant attempt.
    let mut rooms = Vec::with_capacity(sms.len());
    let progress = super::progress::current();
    // The watchdog's and the progress counters' next look at the cycle (a long block still
    // shows time passing), in one comparison per cycle.
    const PROGRESS_EVERY: u64 = 1 << 14;
    let check_after = |cycle: u64| match progress {
        Some(_) => options.max_cycles.min(cycle + PROGRESS_EVERY),
        None => options.max_cycles,
    };
    let mut next_check = check_after(0);
    let mut cycle: u64 = 0;
    let mut grant_may_find = true;
    // Only the coarse policy refills (pays a switch cost): for the others no skip need ask
    // every scheduler whether it is in the middle of one.
    let refills = config.scheduler.policy == Policy::Coarse;
    // Per SM, the first cycle it needs the loop (`Sm::attention`), and this cycle's SMs that
    // do, in SM order: a memory-bound kernel's SM has something to do in a few cycles of a
    // hundred, and a pass over a dense array costs less than three over the SMs. The
    // reference (`skip_idle: false`) visits every SM every cycle.
    let mut attention = vec![0u64; sms.len()];
    let mut due: Vec<usize> = Vec::with_capacity(sms.len());
    // `stepped`: how many SMs (from the first) are done with `cycle`.
    let fail = |fault: Fault,
                cycle: u64,
                stepped: usize,
                report: &mut SimReport,
                sms: &mut [Sm],
                timing: &MemoryTiming,
                dispatcher: &Dispatcher,
                observer: &mut O| {
        observer.fault(cycle, &fault);
        report.cycles = cycle;
        for (k, sm) in sms.iter_mut().enumerate() {
            sm.settle(cycle + (k < stepped) as u64, config.sm.issue_width);
        }
        finish_report(report, sms, timing, dispatcher, launches);
        SimError::Fault {
            fault: Box::new(fault),
            partial: Box::new(report.clone()),
        }
    };
    loop {
        if cycle >= next_check {
            if cycle >= options.max_cycles {
                let mut detail: Vec<String> = sms
                    .iter()
                    .flat_map(|s| s.describe_warps(&prepared))
                    .collect();
                detail.truncate(16);
                let fault = Fault::kernel_wide(
                    &running_kernels(&dispatcher, launches),
                    FaultKind::Watchdog {
                        limit: options.max_cycles,
                        unit: "cycles".into(),
                        detail: detail.join("\n  "),
                    },
                );
                return Err(fail(
                    fault,
                    cycle,
                    0,
                    &mut report,
                    &mut sms,
                    &timing,
                    &dispatcher,
                    observer,
                ));
            }
            if let Some(p) = &progress {
                p.at_cycle(cycle);
            }
            next_check = check_after(cycle);
        }
        let mut issued = 0u32;
        let mut any_eligible = false;
        due.clear();
        if options.skip_idle {
            due.extend((0..sms.len()).filter(|&k| attention[k] <= cycle));
        } else {
            due.extend(0..sms.len());
        }
        for &k in &due {
            sms[k].retire(cycle, options.skip_idle, observer);
        }
        let mut cx = CycleContext {
            config,
            launches: &prepared,
            memory,
            timing: &mut timing,
            observer,
            incremental: options.skip_idle,
        };
        for &k in &due {
            match sms[k].schedule(cycle, &mut cx) {
                Ok(c) => {
                    issued += c.issued;
                    any_eligible |= c.any_eligible;
                    report.warp_instructions += c.issued as u64;
                    report.thread_instructions += c.thread_instructions;
                }
                Err(fault) => {
                    // (Its schedulers had this cycle; the earlier SMs' count it in `fail`.)
                    sms[k].count_busy(cycle + 1);
                    return Err(fail(
                        *fault,
                        cycle,
                        k,
                        &mut report,
                        &mut sms,
                        &timing,
                        &dispatcher,
                        observer,
                    ));
                }
            }
        }
        finished.clear();
        let mut released = false;
        for &k in &due {
            released |= sms[k].wrap_up(cycle, observer, &mut finished);
        }
        for f in &finished {
            if dispatcher.block_finished(cycle, f.launch as usize) {
                observer.kernel_complete(cycle, f.launch);
            }
        }
        if !finished.is_empty() {
            if let Some(p) = &progress {
                p.blocks_finished(finished.len() as u64, cycle);
            }
        }
        if dispatcher.all_complete() {
            cycle += 1;
            break;
        }
        grants.clear();
        started.clear();
        // A grant that stopped short of its budget finds nothing more until a block finishes
        // (which frees room and may complete a launch that others on its stream wait for).
        if grant_may_find || !finished.is_empty() {
            rooms.clear();
            rooms.extend(sms.iter().map(|s| s.room()));
            dispatcher.grant(
                cycle,
                config.grants_per_cycle,
                &mut rooms,
                &mut grants,
                &mut started,
            );
            grant_may_find = grants.len() as u32 >= config.grants_per_cycle;
        }
        for &l in &started {
            observer.kernel_launch(cycle, l as u32);
        }
        for g in &grants {
            observer.block_assign(cycle, g.launch as u32, g.block as u32, g.sm);
            let streams = prepared[g.launch].replay.is_some().then(|| {
                source.block_streams(g.launch, g.block, prepared[g.launch].footprint.warps)
            });
            sms[g.sm as usize].assign_block(
                cycle,
                config,
                g.launch as u32,
                &prepared[g.launch],
                g.block,
                g.ctaid,
                streams,
                observer,
            );
            attention[g.sm as usize] = sms[g.sm as usize].attention();
        }
        for &k in &due {
            attention[k] = sms[k].attention();
        }
        // Nothing can change until the next wake-up: skip there in one step.
        let quiet =
            issued == 0 && !any_eligible && !released && grants.is_empty() && finished.is_empty();
        let mut next = cycle + 1;
        // The first cycle some SM needs the loop. If none ever will, or the policy is coarse
        // (whose schedulers are stepped every cycle, so that their SMs always need the next
        // one), the units' own wake-ups decide where to go, and none means a deadlock while
        // warps are resident.
        // (Looked for only in a quiet cycle: any other goes on to the next.)
        let soonest = match quiet && options.skip_idle && !refills {
            true => attention.iter().copied().min().unwrap_or(u64::MAX),
            false => u64::MAX,
        };
        if soonest != u64::MAX {
            next = soonest.min(options.max_cycles).max(cycle + 1);
        } else if quiet {
            let wake = sms.iter_mut().filter_map(|s| s.next_wakeup(cycle)).min();
            match wake {
                None if sms.iter().any(|s| s.has_resident_warps()) => {
                    let detail: Vec<String> = sms
                        .iter()
                        .flat_map(|s| s.describe_warps(&prepared))
                        .collect();
                    let fault = Fault::kernel_wide(
                        &running_kernels(&dispatcher, launches),
                        FaultKind::Deadlock {
                            detail: format!(
                                "no warp can ever issue again at cycle {cycle}:\n  {}",
                                detail.join("\n  ")
                            ),
                        },
                    );
                    let stepped = sms.len();
                    return Err(fail(
                        fault,
                        cycle,
                        stepped,
                        &mut report,
                        &mut sms,
                        &timing,
                        &dispatcher,
                        observer,
                    ));
                }
                Some(w)
                    if options.skip_idle
                        && !(refills && sms.iter().any(|s| s.in_refill(cycle))) =>
                {
                    next = w.min(options.max_cycles).max(cycle + 1);
                }
                _ => {}
            }
        }
        cycle = next;
    }
    report.cycles = cycle;
    for sm in sms.iter_mut() {
        sm.settle(cycle, config.sm.issue_width);
    }
    finish_report(&mut report, &sms, &timing, &dispatcher, launches);
    Ok(report)
}

fn running_kernels(dispatcher: &Dispatcher, launches: &[KernelLaunch]) -> String {
    let names: Vec<&str> = dispatcher
        .progress
        .iter()
        .zip(launches)
        .filter(|(p, _)| p.started_at.is_some() && p.completed_at.is_none())
        .map(|(_, l)| l.program.name.as_str())
        .collect();
    if names.is_empty() {
        launches
            .first()
            .map_or(String::new(), |l| l.program.name.clone())
    } else {
        names.join(", ")
    }
}

fn finish_report(
    report: &mut SimReport,
    sms: &[Sm],
    timing: &MemoryTiming,
    dispatcher: &Dispatcher,
    launches: &[KernelLaunch],
) {
    report.launches = dispatcher
        .progress
        .iter()
        .zip(launches)
        .map(|(p, l)| LaunchReport {
            kernel: l.program.name.clone(),
            stream: l.stream,
            blocks: p.total_blocks,
            start_cycle: p.started_at.unwrap_or(0),
            end_cycle: p.completed_at.map_or(report.cycles, |c| c + 1),
        })
        .collect();
    report.sms = sms
        .iter()
        .map(|s| SmReport {
            blocks: s.blocks_run,
            busy_cycles: s.busy_cycles,
            schedulers: s.scheduler_stats(),
        })
        .collect();
    report.memory = timing.stats().clone();
    report.hazards = sms.iter().map(|s| s.hazard_count).sum();
}
