//! The block dispatcher (seeds/000's contract, NVIDIA's GigaThread engine): per launch a
//! next-block counter and a finished-block counter; each cycle up to `grants_per_cycle` blocks
//! are granted to SMs with room, `%ctaid` latched into the block at grant; a launch completes
//! when its *finished* blocks equal its total. Admission is bin-packing against registers,
//! shared memory, warp slots and block slots.
//!
//! Streams: launches on one stream run in order; launches on different streams run at the same
//! time and their blocks interleave on the SMs (lower launch index first each cycle).
//!
//! Placement: among SMs with room, the one with the fewest resident blocks, ties to the lowest
//! index. With one block per SM (the tiny GPU) this is seed 000's lowest-free-core grant.

use super::config::GpuConfig;
use super::{Dim3, KernelLaunch, LaunchError, SmLimit};

/// What one block of a launch occupies on an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockFootprint {
    pub warps: u32,
    pub threads: u32,
    pub registers: u32,
    pub shared_bytes: u32,
}

impl BlockFootprint {
    pub fn of(launch: &KernelLaunch, config: &GpuConfig) -> Result<BlockFootprint, LaunchError> {
        let kernel = || launch.program.name.clone();
        launch.check_block_size(config.sm.max_threads_per_block)?;
        let threads = launch.block.count();
        let fp = BlockFootprint::new(
            threads,
            launch.program.regs as u32,
            launch.program.shared_bytes,
            config,
        );
        let (warps, regs_per_thread) = (fp.warps, fp.registers_per_thread(config));
        let sm = &config.sm;
        let fail = |limit: SmLimit, what: String| {
            Err(LaunchError::DoesNotFit {
                kernel: kernel(),
                limit,
                what,
            })
        };
        if fp.warps > sm.max_warps {
            let what = format!(
                "a block needs {} warps but an SM has {} warp slots (sm.max_warps)",
                fp.warps, sm.max_warps
            );
            return fail(SmLimit::Warps, what);
        }
        if fp.registers > sm.registers {
            let what = format!(
                "a block needs {} registers ({} per thread × {} threads, allocated per warp) but an SM has {} (sm.registers)",
                fp.registers, regs_per_thread, warps * config.warp_size, sm.registers
            );
            return fail(SmLimit::Registers, what);
        }
        if fp.shared_bytes > sm.shared_memory_bytes {
            let what = format!(
                "a block needs {} bytes of shared memory but an SM has {} (sm.shared_memory_bytes)",
                fp.shared_bytes, sm.shared_memory_bytes
            );
            return fail(SmLimit::SharedMemory, what);
        }
        Ok(fp)
    }

    /// The resources one block of `threads` threads takes, registers allocated per warp in
    /// the SM's granularity. Not checked against the SM: see [`BlockFootprint::of`].
    pub fn new(
        threads: u64,
        regs_per_thread: u32,
        shared_bytes: u32,
        config: &GpuConfig,
    ) -> BlockFootprint {
        let warp_size = config.warp_size.max(1);
        let warps = threads.div_ceil(warp_size as u64) as u32;
        let g = config.sm.register_granularity.max(1);
        let regs_per_thread = regs_per_thread.max(1).div_ceil(g) * g;
        BlockFootprint {
            warps,
            threads: threads as u32,
            registers: regs_per_thread * warp_size * warps,
            shared_bytes,
        }
    }

    fn registers_per_thread(&self, config: &GpuConfig) -> u32 {
        self.registers / (config.warp_size.max(1) * self.warps.max(1))
    }

    /// Blocks of this footprint one empty SM can hold, and which limit binds first.
    pub fn blocks_per_sm(&self, config: &GpuConfig) -> (u32, SmLimit) {
        let l = self.block_limits(config);
        [
            (l.blocks, SmLimit::Blocks),
            (l.warps, SmLimit::Warps),
            (l.registers, SmLimit::Registers),
            (l.shared_memory.unwrap_or(u32::MAX), SmLimit::SharedMemory),
        ]
        .into_iter()
        .min_by_key(|l| l.0)
        .unwrap_or((0, SmLimit::Blocks))
    }

    /// Blocks per SM allowed by each resource on its own.
    pub fn block_limits(&self, config: &GpuConfig) -> BlockLimits {
        let sm = &config.sm;
        BlockLimits {
            blocks: sm.max_blocks,
            warps: sm.max_warps / self.warps.max(1),
            registers: sm.registers / self.registers.max(1),
            shared_memory: sm.shared_memory_bytes.checked_div(self.shared_bytes),
        }
    }
}

/// Blocks of one footprint an empty SM can hold, per resource (`None`: uses no shared memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLimits {
    pub blocks: u32,
    pub warps: u32,
    pub registers: u32,
    pub shared_memory: Option<u32>,
}

/// Free resources of one SM, as the dispatcher sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmRoom {
    pub free_warps: u32,
    pub free_blocks: u32,
    pub free_registers: u32,
    pub free_shared: u32,
    pub resident_blocks: u32,
}

impl SmRoom {
    pub fn fits(&self, fp: &BlockFootprint) -> bool {
        self.free_blocks >= 1
            && self.free_warps >= fp.warps
            && self.free_registers >= fp.registers
            && self.free_shared >= fp.shared_bytes
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchProgress {
    pub next_block: u64,
    pub finished_blocks: u64,
    pub total_blocks: u64,
    pub started_at: Option<u64>,
    pub completed_at: Option<u64>,
}

/// A grant: block `block` (linear index, `ctaid` its coordinates) of `launch` goes to `sm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub launch: usize,
    pub block: u64,
    pub ctaid: Dim3,
    pub sm: u32,
}

#[derive(Debug, Clone)]
pub struct Dispatcher {
    pub progress: Vec<LaunchProgress>,
    streams: Vec<u32>,
    grids: Vec<Dim3>,
    footprints: Vec<BlockFootprint>,
}

impl Dispatcher {
    pub fn new(launches: &[KernelLaunch], footprints: Vec<BlockFootprint>) -> Dispatcher {
        Dispatcher {
            progress: launches
                .iter()
                .map(|l| LaunchProgress {
                    next_block: 0,
                    finished_blocks: 0,
                    total_blocks: l.grid.count(),
                    started_at: None,
                    completed_at: None,
                })
                .collect(),
            streams: launches.iter().map(|l| l.stream).collect(),
            grids: launches.iter().map(|l| l.grid).collect(),
            footprints,
        }
    }

    /// A launch may hand out blocks once every earlier launch on its stream has completed.
    fn runnable(&self, launch: usize) -> bool {
        let p = &self.progress[launch];
        p.completed_at.is_none()
            && p.next_block < p.total_blocks
            && (0..launch).all(|earlier| {
                self.streams[earlier] != self.streams[launch]
                    || self.progress[earlier].completed_at.is_some()
            })
    }

    /// Launches that started this cycle are reported through `started`.
    pub fn grant(
        &mut self,
        cycle: u64,
        budget: u32,
        rooms: &mut [SmRoom],
        grants: &mut Vec<Grant>,
        started: &mut Vec<usize>,
    ) {
        let mut left = budget;
        for launch in 0..self.progress.len() {
            while left > 0 && self.runnable(launch) {
                let fp = self.footprints[launch];
                let best = rooms
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.fits(&fp))
                    .min_by_key(|(i, r)| (r.resident_blocks, *i))
                    .map(|(i, _)| i);
                let Some(sm) = best else { break };
                let room = &mut rooms[sm];
                room.free_blocks -= 1;
                room.free_warps -= fp.warps;
                room.free_registers -= fp.registers;
                room.free_shared -= fp.shared_bytes;
                room.resident_blocks += 1;
                let p = &mut self.progress[launch];
                if p.started_at.is_none() {
                    p.started_at = Some(cycle);
                    started.push(launch);
                }
                let block = p.next_block;
                p.next_block += 1;
                grants.push(Grant {
                    launch,
                    block,
                    ctaid: self.grids[launch].unlinear(block),
                    sm: sm as u32,
                });
                left -= 1;
            }
        }
    }

    /// Counts a finished block; returns true when that completes its launch.
    pub fn block_finished(&mut self, cycle: u64, launch: usize) -> bool {
        let p = &mut self.progress[launch];
        p.finished_blocks += 1;
        if p.finished_blocks == p.total_blocks {
            p.completed_at = Some(cycle);
            return true;
        }
        false
    }

    pub fn all_complete(&self) -> bool {
        self.progress.iter().all(|p| p.completed_at.is_some())
    }

    /// Whether some launch still has blocks to hand out.
    pub fn has_pending_blocks(&self) -> bool {
        self.progress.iter().any(|p| p.next_block < p.total_blocks)
    }
}
