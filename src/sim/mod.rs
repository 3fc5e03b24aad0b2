//! The GPU model. `sim` does no I/O and knows no file format: it takes a [`KernelLaunch`] and
//! a [`memory::GlobalMemory`], and reports what happens through return values (and, in the
//! timing model, through an observer).

pub mod config;
pub mod dispatcher;
mod event_queue;
pub mod exec;
pub mod fault;
pub mod functional;
pub mod gpu;
pub mod launch;
pub mod memory;
pub mod observer;
pub mod progress;
pub mod scoreboard;
pub mod simt_stack;
pub mod sm;
pub mod stream;
pub mod warp;

pub use fault::{Fault, FaultKind};
pub use launch::{Dim3, KernelLaunch, LaunchError, SmLimit};

/// One bit per lane of a warp.
pub type LaneMask = u32;

/// Largest supported warp size (lane masks are 32 bits).
pub const MAX_WARP_SIZE: usize = 32;
