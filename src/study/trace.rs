//! The study as a standard warpscope trace: one trace, five launches (one per scheme, in
//! [`Scheme::ALL`](super::Scheme::ALL) order) run one after another on the timeline (a cycle
//! apart: the last threads of one leave in the cycle before the next starts), each
//! launch one block of two warps (the two threads) on one SM with one scheduler `width` slots
//! wide, so `warpscope analyze`, `render` and `compare` read it unchanged.
//!
//! Thread states map to warp states: run → selected, wait → not_selected, miss → a long
//! scoreboard wait on the missing load, dep → a short scoreboard wait on the instruction behind
//! the dependency, done → the warp exits. Refill cycles are `refill` events of `width` slots.
//! Simplified: the listing is one made-up instruction per stream position (a load for a group
//! that ends in a miss, an `IMAD` for one that ends in a dependency, `IADD3` otherwise) and
//! nothing touches memory, so there are no memory events.
//!
//! The header's config has a scheduling policy and a scoreboard only because every config does
//! (the `tiny` preset's); the schedules come from the schemes. [`schemes_of`] recognises a study
//! trace so that what readers show (report header, chart captions, page title) names the
//! schemes instead of that placeholder policy.

use super::StudyError;
use super::{Cause, Group, Scheme, SchemeResult, SlotUse, Stall, StudyConfig, ThreadState};
use crate::isa::Pipe;
use crate::sim::config::GpuConfig;
use crate::sim::observer::{WarpInfo, WarpRef, WarpState};
use crate::sim::scoreboard::{DepPath, RegRef};
use crate::sim::Dim3;
use crate::trace::{Event, LaunchHeader, TraceError, TraceFormat, TraceHeader, TraceWriter};
use std::io::Write;

/// The name of the study's GPU in its traces' headers.
pub const GPU_NAME: &str = "study";
/// What readers call what a study trace ran (page and chart titles).
pub const STUDY_NAME: &str = "multithreading study";
/// What a scheme's launch is called: `study_` and the scheme's name.
const KERNEL_PREFIX: &str = "study_";

/// The kernel name of `scheme`'s launch (`study_coarse`).
pub fn kernel_name(scheme: Scheme) -> String {
    format!("{KERNEL_PREFIX}{}", scheme.name())
}

/// The schemes of a study trace's launches, in launch order; `None` for any other trace (not
/// on the study's GPU, or a launch that is no scheme's).
pub fn schemes_of(header: &TraceHeader) -> Option<Vec<Scheme>> {
    if header.config.name != GPU_NAME || header.launches.is_empty() {
        return None;
    }
    header
        .launches
        .iter()
        .map(|l| {
            l.kernel
                .strip_prefix(KERNEL_PREFIX)
                .and_then(Scheme::from_name)
        })
        .collect()
}

/// Threads per warp in the study's GPU: a full warp, so lanes read as in any other trace.
const WARP_SIZE: u32 = 32;
/// Registers each thread of the study's one block holds (R0–R15; the listing uses R2–R15).
const REGS_PER_THREAD: u32 = 16;

/// The GPU the study runs on: the `tiny` preset cut to one SM, one scheduler, `width` slots.
pub fn study_gpu(cfg: &StudyConfig) -> Result<GpuConfig, StudyError> {
    let mut gpu = GpuConfig::preset("tiny")?;
    gpu.name = GPU_NAME.into();
    gpu.num_sms = 1;
    gpu.warp_size = WARP_SIZE;
    gpu.sm.schedulers = 1;
    gpu.sm.issue_width = cfg.width as u32;
    gpu.sm.max_warps = gpu.sm.max_warps.max(2);
    gpu.sm.max_threads_per_block = gpu.sm.max_threads_per_block.max(2 * WARP_SIZE);
    gpu.sm.registers = gpu.sm.registers.max(2 * WARP_SIZE * REGS_PER_THREAD);
    gpu.sm.register_granularity = 1;
    gpu.scheduler.switch_cost = cfg.switch_cost as u32;
    gpu.validate()?;
    Ok(gpu)
}

/// PC of instruction `index` of group `group` of `thread`: thread 0's stream, then thread 1's.
fn pc_of(streams: &[Vec<Group>; 2], thread: usize, group: usize, index: usize) -> u32 {
    let before_thread: usize = if thread == 0 {
        0
    } else {
        streams[0].iter().map(|g| g.size).sum()
    };
    let before_group: usize = streams[thread][..group].iter().map(|g| g.size).sum();
    (before_thread + before_group + index) as u32
}

/// The listing shared by every launch: one line per instruction of both streams.
pub fn listing(streams: &[Vec<Group>; 2]) -> Vec<String> {
    let mut out = Vec::new();
    for (t, stream) in streams.iter().enumerate() {
        for (gi, g) in stream.iter().enumerate() {
            for i in 0..g.size {
                let last = i + 1 == g.size;
                let r = 4 + i;
                let text = match (last, g.stall) {
                    (true, Stall::Miss) => {
                        format!("LDG.E R{r}, [R2.64] ; thread {t} group {gi}: misses")
                    }
                    (true, Stall::Dep) => {
                        format!("IMAD R{r}, R{r}, R3, RZ ; thread {t} group {gi}: next group depends on it")
                    }
                    _ => format!("IADD3 R{r}, R{r}, 0x1, RZ ; thread {t} group {gi}"),
                };
                out.push(text);
            }
        }
    }
    out
}

/// The warp state of a thread in a cycle; `blocker` is the PC the thread waits on.
fn warp_state(state: ThreadState, blocker: u32) -> Option<WarpState> {
    match state {
        ThreadState::Run => Some(WarpState::Selected),
        ThreadState::Wait => Some(WarpState::NotSelected),
        ThreadState::Miss => Some(WarpState::Scoreboard {
            reg: RegRef::Reg(4),
            producer_pc: blocker,
            path: DepPath::Long,
        }),
        ThreadState::Dep => Some(WarpState::Scoreboard {
            reg: RegRef::Reg(4),
            producer_pc: blocker,
            path: DepPath::Short,
        }),
        ThreadState::Done => None,
    }
}

/// Writes the trace of `results` (in order) over `streams` to `out`.
pub fn write_trace<W: Write>(
    out: W,
    format: TraceFormat,
    cfg: &StudyConfig,
    streams: &[Vec<Group>; 2],
    results: &[SchemeResult],
) -> Result<W, StudyError> {
    let gpu = study_gpu(cfg)?;
    let list = listing(streams);
    let header = TraceHeader {
        format: "warpscope-trace".into(),
        version: crate::trace::binary::DEFAULT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        config: gpu,
        launches: results
            .iter()
            .map(|r| LaunchHeader {
                kernel: kernel_name(r.scheme),
                grid: Dim3::new(1, 1, 1),
                block: Dim3::new(2 * WARP_SIZE, 1, 1),
                regs_per_thread: REGS_PER_THREAD,
                shared_bytes: 0,
                stream: 0,
                params: Vec::new(),
                param_names: Vec::new(),
                listing: list.clone(),
                source_lines: Vec::new(),
                asm_file: String::new(),
                asm_lines: Vec::new(),
            })
            .collect(),
        seed: cfg.seed,
        verbosity: 1,
    };
    let mut w = TraceWriter::new(out, format, &header)?;
    let mut offset = 0u64;
    for (li, r) in results.iter().enumerate() {
        write_launch(&mut w, li as u32, offset, streams, r)?;
        // The next scheme starts after the cycle in which this one's last threads leave: its
        // threads take the same two warp slots, and a slot holds one warp at a time.
        offset += r.cycles as u64 + 1;
    }
    Ok(w.finish(true)?)
}

fn write_launch<W: Write>(
    w: &mut TraceWriter<W>,
    launch: u32,
    offset: u64,
    streams: &[Vec<Group>; 2],
    r: &SchemeResult,
) -> Result<(), TraceError> {
    let warp = |t: usize| WarpRef {
        sm: 0,
        slot: t as u32,
    };
    w.write(&Event::KernelLaunch {
        cycle: offset,
        launch,
    })?;
    w.write(&Event::BlockAssign {
        cycle: offset,
        launch,
        block: 0,
        sm: 0,
    })?;
    for t in 0..2 {
        w.write(&Event::WarpLaunch {
            cycle: offset,
            warp: warp(t),
            info: WarpInfo {
                launch,
                block: 0,
                ctaid: Dim3::new(0, 0, 0),
                warp_in_block: t as u32,
                scheduler: 0,
                lanes: u32::MAX,
            },
        })?;
    }
    let mut current: [Option<WarpState>; 2] = [None, None];
    let mut exited = [false; 2];
    // The PC each thread's last completed group ended on: what a stalled thread waits for.
    let mut blocker = [0u32; 2];
    for (ci, rec) in r.grid.iter().enumerate() {
        let cycle = offset + ci as u64;
        for t in 0..2 {
            if exited[t] {
                continue;
            }
            match warp_state(rec.threads[t], blocker[t]) {
                None => {
                    w.write(&Event::WarpExit {
                        cycle,
                        warp: warp(t),
                    })?;
                    exited[t] = true;
                }
                Some(s) if current[t] != Some(s) => {
                    w.write(&Event::WarpState {
                        cycle,
                        warp: warp(t),
                        state: s,
                    })?;
                    current[t] = Some(s);
                }
                Some(_) => {}
            }
        }
        if rec.is_refill() {
            w.write(&Event::Refill {
                cycle,
                sm: 0,
                scheduler: 0,
                slots: rec.slots.len() as u32,
            })?;
        }
        for (slot, s) in rec.slots.iter().enumerate() {
            if let SlotUse::Instruction {
                thread,
                group,
                index,
                cause,
            } = *s
            {
                let pc = pc_of(streams, thread, group, index);
                w.write(&Event::Issue {
                    cycle,
                    warp: warp(thread),
                    pc,
                    active: u32::MAX,
                    pipe: if cause == Some(Cause::Miss) {
                        Pipe::Global
                    } else {
                        Pipe::Alu
                    },
                    slot: slot as u32,
                })?;
                if cause.is_some() {
                    blocker[thread] = pc;
                }
            }
        }
    }
    let end = offset + r.cycles as u64;
    // A launch ends the cycle after the one its kernel completes in (the simulator's count),
    // while the threads still here leave in the first cycle without an issue slot.
    w.write(&Event::KernelComplete {
        cycle: end.saturating_sub(1).max(offset),
        launch,
    })?;
    for (t, gone) in exited.iter().enumerate() {
        if !gone {
            w.write(&Event::WarpExit {
                cycle: end,
                warp: warp(t),
            })?;
        }
    }
    w.write(&Event::BlockComplete {
        cycle: end,
        launch,
        block: 0,
        sm: 0,
    })?;
    Ok(())
}
