//! Recording a trace of the benchmarks' vector add (`warpscope::bench::vecadd_launch`), the
//! setup of several trace and chart tests.

// Each test file that says `mod common;` uses only part of the shared code.
#![allow(dead_code)]

use std::path::Path;
use warpscope::sim::config::GpuConfig;
use warpscope::sim::gpu::SimOptions;
use warpscope::sim::memory::GlobalMemory;
use warpscope::trace::{record, RecordOutcome, TraceFormat};

/// Records `warpscope::bench::vecadd_launch(n)` (three arrays of `n` floats, in a memory of
/// 64 MiB) on `config` into `path`, in `format` at `verbosity`.
pub fn record_vecadd_launch(
    config: &GpuConfig,
    n: u32,
    path: &Path,
    format: TraceFormat,
    verbosity: u8,
) -> RecordOutcome {
    let mut memory = GlobalMemory::new(64 << 20);
    record(
        config,
        &[warpscope::bench::vecadd_launch(n)],
        &mut memory,
        SimOptions::default(),
        path,
        format,
        verbosity,
    )
    .unwrap()
}
