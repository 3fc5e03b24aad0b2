//! What `profile` and `sweep` record: a launch file's launches run on the timing simulator, or
//! an Accel-Sim trace (scanned once) replayed on it. Either way the result is an ordinary
//! trace.

use crate::launchfile::{CheckReport, LaunchFile};
use crate::replay::{self, ReplayInput};
use crate::sim::config::GpuConfig;
use crate::sim::gpu::SimOptions;
use crate::trace::{RecordOutcome, TraceFormat};
use std::path::Path;

pub enum Workload {
    /// A launch file, run on the timing simulator.
    Launch(LaunchFile),
    /// An Accel-Sim trace, replayed.
    Replay(ReplayInput),
}

/// Why a workload recorded nothing.
pub type WorkloadError = Box<dyn std::error::Error + Send + Sync>;

/// A workload's recorded run.
#[derive(Debug)]
pub struct Recorded {
    pub outcome: RecordOutcome,
    /// A launch file's `expect` checked against the final memory, as `run` and `record` check
    /// it: none for a file without `expect`, a run that faulted (its memory is not the
    /// kernel's result) or a replay (which moves no data).
    pub checks: Option<CheckReport>,
}

impl Workload {
    /// Runs the workload on `config` and records it to `path` (a temporary file, then a rename).
    pub fn record(
        &self,
        config: &GpuConfig,
        options: SimOptions,
        path: &Path,
        format: TraceFormat,
        verbosity: u8,
    ) -> Result<Recorded, WorkloadError> {
        match self {
            Workload::Launch(file) => {
                let (outcome, memory) = file.record(config, options, path, format, verbosity)?;
                let checks = (!file.expect.is_empty() && outcome.fault.is_none())
                    .then(|| file.check(&memory));
                Ok(Recorded { outcome, checks })
            }
            Workload::Replay(trace) => Ok(Recorded {
                outcome: replay::replay(config, trace, options, path, format, verbosity)?.record,
                checks: None,
            }),
        }
    }
}
