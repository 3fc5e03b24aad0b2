//! The functional runner: executes a launch block after block, warps round-robin one
//! instruction at a time, with no notion of time. It answers "what does this kernel compute";
//! the timing model answers "how long does it take" on top of the same `exec`.

use super::exec::{self, ExecEnv, Flow, SharedMemory};
use super::fault::{Fault, FaultKind};
use super::warp::WarpContext;
use super::{KernelLaunch, LaunchError, MAX_WARP_SIZE};
use crate::sim::memory::GlobalMemory;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionalOptions {
    pub warp_size: u32,
    /// Stop with a watchdog fault after this many warp instructions.
    pub max_warp_instructions: u64,
    /// The largest block accepted (the GPU's limit; a block's warps are all held at once).
    pub max_threads_per_block: u32,
}

impl Default for FunctionalOptions {
    fn default() -> Self {
        FunctionalOptions {
            warp_size: 32,
            max_warp_instructions: 100_000_000,
            // CUDA's limit on every GPU since Fermi.
            max_threads_per_block: 1024,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FunctionalStats {
    pub warp_instructions: u64,
    /// Lanes that executed an instruction (guard true), summed over all warp instructions.
    pub thread_instructions: u64,
    pub blocks: u64,
    pub warps: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("{0}")]
    Fault(Box<Fault>),
}

/// Runs `launch` to completion on `memory`.
pub fn run(
    launch: &KernelLaunch,
    memory: &mut GlobalMemory,
    options: FunctionalOptions,
) -> Result<FunctionalStats, RunError> {
    launch.validate()?;
    let ws = options.warp_size;
    if ws == 0 || ws as usize > MAX_WARP_SIZE {
        return Err(LaunchError::WarpSize {
            kernel: launch.program.name.clone(),
            warp_size: ws,
        }
        .into());
    }
    launch.check_block_size(options.max_threads_per_block)?;
    let program = &launch.program;
    let decoded = exec::Decoded::of(program);
    let mut stats = FunctionalStats::default();
    let warps_per_block = launch.warps_per_block(ws);
    for block_index in 0..launch.grid.count() {
        let ctaid = launch.grid.unlinear(block_index);
        let env = ExecEnv {
            launch,
            ctaid,
            smid: 0,
            clock: 0,
        };
        let mut shared = SharedMemory::new(program.shared_bytes);
        // One instruction description, rewritten by every issue.
        let mut done = exec::Executed::NOTHING;
        let mut warps: Vec<WarpContext> = (0..warps_per_block)
            .map(|w| WarpContext::new(ws, w, launch.block, program.regs as u32))
            .collect();
        let mut at_barrier = vec![false; warps.len()];
        let mut arrived_threads = 0u32;
        stats.blocks += 1;
        stats.warps += warps.len() as u64;
        loop {
            for (w, warp) in warps.iter_mut().enumerate() {
                if warp.is_done() || at_barrier[w] {
                    continue;
                }
                if stats.warp_instructions >= options.max_warp_instructions {
                    return Err(RunError::Fault(Box::new(Fault::kernel_wide(
                        &program.name,
                        FaultKind::Watchdog {
                            limit: options.max_warp_instructions,
                            unit: "warp instructions".into(),
                            detail: String::new(),
                        },
                    ))));
                }
                let env = ExecEnv {
                    clock: stats.warp_instructions,
                    ..env
                };
                exec::execute_into(
                    program,
                    &decoded,
                    warp,
                    &env,
                    memory,
                    &mut shared,
                    &mut done,
                )
                .map_err(|e| {
                    RunError::Fault(Box::new(Fault {
                        kernel: program.name.clone(),
                        block: Some(ctaid),
                        warp: Some(w as u32),
                        lane: e.lane,
                        pc: Some(e.pc),
                        instruction: Some(program.instruction_text(e.pc)),
                        kind: e.kind,
                    }))
                })?;
                stats.warp_instructions += 1;
                stats.thread_instructions += done.executed.count_ones() as u64;
                if let Some(wb) = &done.writeback {
                    exec::apply(warp, wb);
                }
                if done.flow == Flow::Barrier {
                    at_barrier[w] = true;
                    arrived_threads += done.executed.count_ones();
                }
            }
            let live: Vec<usize> = (0..warps.len()).filter(|&w| !warps[w].is_done()).collect();
            if live.is_empty() {
                break;
            }
            // A live warp that is not at the barrier always issues, so once every live warp
            // waits the barrier either releases — every live thread arrived; exited threads do
            // not count — or never will: some lanes wait on a divergent path.
            if live.iter().all(|&w| at_barrier[w]) {
                let live_threads: u32 = live
                    .iter()
                    .map(|&w| (warps[w].valid & !warps[w].exited).count_ones())
                    .sum();
                if arrived_threads < live_threads {
                    return Err(RunError::Fault(Box::new(Fault {
                        kernel: program.name.clone(),
                        block: Some(ctaid),
                        warp: None,
                        lane: None,
                        pc: None,
                        instruction: None,
                        kind: FaultKind::Deadlock {
                            detail: format!(
                                "BAR.SYNC reached by {arrived_threads} of {live_threads} live threads; the others wait on a divergent path that cannot continue until the barrier releases"
                            ),
                        },
                    })));
                }
                at_barrier.iter_mut().for_each(|b| *b = false);
                arrived_threads = 0;
            }
        }
    }
    Ok(stats)
}
