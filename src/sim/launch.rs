//! What a kernel launch hands the GPU: the program, grid and block shape, parameter words and
//! the stream it belongs to.

use crate::isa::Program;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    pub const fn linear(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    /// x·y·z, widened (and saturating at `u64::MAX`, past any run's reach) so that a huge
    /// grid cannot overflow.
    pub fn count(self) -> u64 {
        (self.x as u64 * self.y as u64).saturating_mul(self.z as u64)
    }

    /// The coordinates of linear index `i` (x fastest).
    pub fn unlinear(self, i: u64) -> Dim3 {
        let x = (i % self.x as u64) as u32;
        let y = ((i / self.x as u64) % self.y as u64) as u32;
        let z = (i / (self.x as u64 * self.y as u64)) as u32;
        Dim3 { x, y, z }
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelLaunch {
    pub program: Arc<Program>,
    pub grid: Dim3,
    pub block: Dim3,
    /// One word per `.param`, in order.
    pub params: Vec<u32>,
    /// Launches on one stream run in order; different streams run concurrently.
    pub stream: u32,
}

/// Why a launch was rejected before it ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("kernel `{kernel}`: {field} must be at least 1 in every dimension, got {value}")]
    EmptyDimension {
        kernel: String,
        field: &'static str,
        value: Dim3,
    },
    #[error("kernel `{kernel}`: expects {expected} parameter(s) ({names}), got {got}")]
    ParamCount {
        kernel: String,
        expected: usize,
        names: String,
        got: usize,
    },
    #[error("kernel `{kernel}`: block of {threads} threads exceeds the limit of {limit} threads per block")]
    BlockTooLarge {
        kernel: String,
        threads: u64,
        limit: u64,
    },
    /// A block needs more of an SM resource than one SM has: it can never be granted.
    #[error("kernel `{kernel}`: {what}")]
    DoesNotFit {
        kernel: String,
        /// The resource that ran out (the first checked, when several would).
        limit: SmLimit,
        /// The need and the SM's amount, in words, with the config field to change.
        what: String,
    },
    /// The functional runner was given a warp size no warp can have (a `GpuConfig` refuses
    /// one when it is built, so the timing model never sees it).
    #[error(
        "kernel `{kernel}`: warp size {warp_size} is not in 1..={}",
        super::MAX_WARP_SIZE
    )]
    WarpSize { kernel: String, warp_size: u32 },
    #[error("kernel `{kernel}`: the program has no instructions")]
    NoInstructions { kernel: String },
}

/// An SM resource that limits blocks: the one a block of a launch needs more of than one SM
/// has ([`LaunchError::DoesNotFit`], never `Blocks`), and the one that binds first when
/// blocks fill an SM (the occupancy limiter, serialized by [`SmLimit::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SmLimit {
    /// Resident blocks (`sm.max_blocks`).
    Blocks,
    /// Warp slots (`sm.max_warps`), the limit `--warps` sets.
    Warps,
    /// The register file (`sm.registers`).
    Registers,
    /// Shared memory (`sm.shared_memory_bytes`).
    SharedMemory,
}

impl SmLimit {
    /// The name reports and JSON give it: `blocks`, `warps`, `registers`, `shared_memory`.
    pub fn name(self) -> &'static str {
        match self {
            SmLimit::Blocks => "blocks",
            SmLimit::Warps => "warps",
            SmLimit::Registers => "registers",
            SmLimit::SharedMemory => "shared_memory",
        }
    }
}

impl std::fmt::Display for SmLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl KernelLaunch {
    /// Checks the parts of a launch that do not depend on the GPU.
    pub fn validate(&self) -> Result<(), LaunchError> {
        let kernel = self.program.name.clone();
        for (field, value) in [("grid", self.grid), ("block", self.block)] {
            if value.x == 0 || value.y == 0 || value.z == 0 {
                return Err(LaunchError::EmptyDimension {
                    kernel,
                    field,
                    value,
                });
            }
        }
        if self.program.instructions.is_empty() {
            // It would fault at its first fetch; say why before anything runs.
            return Err(LaunchError::NoInstructions { kernel });
        }
        if self.params.len() != self.program.params.len() {
            return Err(LaunchError::ParamCount {
                kernel,
                expected: self.program.params.len(),
                names: self.program.params.join(", "),
                got: self.params.len(),
            });
        }
        Ok(())
    }

    /// An error if a block has more than `limit` threads (a GPU's `max_threads_per_block`):
    /// both runners hold a block's warps at once.
    pub fn check_block_size(&self, limit: u32) -> Result<(), LaunchError> {
        let threads = self.threads_per_block();
        match threads > limit as u64 {
            true => Err(LaunchError::BlockTooLarge {
                kernel: self.program.name.clone(),
                threads,
                limit: limit as u64,
            }),
            false => Ok(()),
        }
    }

    pub fn threads_per_block(&self) -> u64 {
        self.block.count()
    }

    pub fn warps_per_block(&self, warp_size: u32) -> u32 {
        self.block.count().div_ceil(warp_size as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_saturates_instead_of_wrapping() {
        assert_eq!(Dim3::new(4, 3, 2).count(), 24);
        let huge = Dim3::new(u32::MAX, u32::MAX, u32::MAX);
        assert_eq!(huge.count(), u64::MAX);
        assert_eq!(
            Dim3::new(u32::MAX, u32::MAX, 1).count(),
            (u32::MAX as u64).pow(2)
        );
    }
}
