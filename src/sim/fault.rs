//! Kernel faults: reported as data naming kernel, block, warp, lane, PC and instruction — a
//! faulting kernel never panics the simulator.

use super::memory::MemFault;
use super::Dim3;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FaultKind {
    /// A global-memory access that is misaligned or beyond the memory limit.
    GlobalMemory { message: String },
    /// A shared-memory access outside the block's `.shared` allocation or misaligned.
    SharedMemory { addr: u64, size: u32 },
    /// The pc left the program (no `EXIT` on some path).
    PcOutOfProgram { len: u32 },
    /// The run exceeded its cycle or instruction budget.
    Watchdog {
        limit: u64,
        unit: String,
        /// Where the resident warps were when it stopped, one per line.
        #[serde(default)]
        detail: String,
    },
    /// No warp can ever make progress again.
    Deadlock { detail: String },
}

impl FaultKind {
    pub fn global(fault: MemFault) -> FaultKind {
        FaultKind::GlobalMemory {
            message: fault.to_string(),
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::GlobalMemory { message } => write!(f, "global memory: {message}"),
            FaultKind::SharedMemory { addr, size } => write!(
                f,
                "shared memory: access at 0x{addr:x} outside the block's {size} bytes (or misaligned)"
            ),
            FaultKind::PcOutOfProgram { len } => write!(
                f,
                "pc ran past the last instruction (program has {len}); is an EXIT missing?"
            ),
            FaultKind::Watchdog {
                limit,
                unit,
                detail,
            } => {
                write!(f, "watchdog: stopped after {limit} {unit}")?;
                if !detail.is_empty() {
                    write!(f, "; resident warps:\n  {detail}")?;
                }
                Ok(())
            }
            FaultKind::Deadlock { detail } => write!(f, "deadlock: {detail}"),
        }
    }
}

/// Where and why a kernel faulted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kernel: String,
    pub block: Option<Dim3>,
    pub warp: Option<u32>,
    pub lane: Option<u32>,
    pub pc: Option<u32>,
    pub instruction: Option<String>,
    pub kind: FaultKind,
}

impl Fault {
    pub fn kernel_wide(kernel: &str, kind: FaultKind) -> Fault {
        Fault {
            kernel: kernel.to_string(),
            block: None,
            warp: None,
            lane: None,
            pc: None,
            instruction: None,
            kind,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}`", self.kernel)?;
        if let Some(b) = self.block {
            write!(f, ", block {b}")?;
        }
        if let Some(w) = self.warp {
            write!(f, ", warp {w}")?;
        }
        if let Some(l) = self.lane {
            write!(f, ", lane {l}")?;
        }
        if let Some(pc) = self.pc {
            write!(f, ", pc {pc}")?;
        }
        if let Some(i) = &self.instruction {
            write!(f, " `{i}`")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for Fault {}
