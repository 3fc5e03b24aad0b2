//! `warpscope export TRACE --perfetto OUT.json`: the trace for ui.perfetto.dev.

use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::export::perfetto;

pub const EXAMPLES: &str = "\
Examples:
  warpscope export traces/reduce.small.gto.wstrace --perfetto reduce.json
  # then open https://ui.perfetto.dev and drop reduce.json on it (works offline once loaded)

One process per SM, one thread per warp slot, one slice per warp-state interval (named by its
Nsight state; args: the PC and instruction it is charged to, the raw reason, the block), and
counter tracks per scheduler for eligible warps and instructions issued. One cycle is shown as
one microsecond.";

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A trace written by `warpscope record` (binary or JSON Lines).
    pub trace: PathBuf,
    /// Write Chrome Trace Event JSON (Perfetto, chrome://tracing) to this file.
    #[arg(long, value_name = "OUT.json", required = true)]
    pub perfetto: PathBuf,
}

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    super::distinct_files(&[("export", &args.perfetto)], &[("trace", &args.trace)])?;
    let trace = super::progress::open_trace(&args.trace)?;
    let what = format!("exporting {}", args.trace.display());
    let stats = write_file_atomically(&args.perfetto, |w| {
        trace
            .reading(&what, |reader| perfetto::export(reader, w))
            .with_context(|| args.trace.display().to_string())
    })?;
    emit(&format!(
        "wrote {}: {} state slices, {} counter values (1 us = 1 cycle)\n",
        args.perfetto.display(),
        stats.slices,
        stats.counters
    ))?;
    Ok(ExitCode::SUCCESS)
}
