//! `warpscope export TRACE --perfetto OUT.json`: the trace, or a part of it, for
//! ui.perfetto.dev.

use super::analyze::KernelArgs;
use super::render::WindowArgs;
use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::export::perfetto::{self, Selection};

pub const EXAMPLES: &str = "\
Examples:
  warpscope export traces/reduce.small.gto.wstrace --perfetto reduce.json
  # then open https://ui.perfetto.dev and drop reduce.json on it (works offline once loaded)
  warpscope export big.wstrace --perfetto part.json --from 0 --to 20000 --sm 0
  warpscope export v4.wstrace --perfetto again.json --kernel again

One process per SM, one thread per warp slot, one slice per warp-state interval (named by its
Nsight state; args: the PC and instruction it is charged to, the raw reason, the block), and
counter tracks per scheduler for eligible warps and instructions issued. One cycle is shown as
one microsecond.

A long trace makes a file too big for the UI (a replayed 2 M-element vector add, 0.9 M warp
instructions, exports to 1.5 GB; an export of a whole trace over 100 MB prints a hint): export
a part. --from/--to keep the cycles [FROM, TO) — a state that
began before FROM starts at FROM, one that ends after TO ends at TO, and each counter starts at
FROM with its value then; a --to past the trace's end stops at the end. --sm keeps one SM's
tracks, and --kernel the launches of one kernel, picked as `analyze --kernel` picks them (its
counters then count only that kernel's warps).";

/// Past this size, an export of the whole trace says how to export less.
const LARGE_EXPORT_BYTES: u64 = 100_000_000;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A trace written by `warpscope record` (binary or JSON Lines).
    pub trace: PathBuf,
    /// Write Chrome Trace Event JSON (Perfetto, chrome://tracing) to this file.
    #[arg(long, value_name = "OUT.json", required = true)]
    pub perfetto: PathBuf,
    #[command(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
}

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    args.window.check()?;
    super::distinct_files(&[("export", &args.perfetto)], &[("trace", &args.trace)])?;
    let selection = Selection {
        from: args.window.from,
        to: args.window.to,
        sm: args.window.sm,
        kernel: args.kernel.kernel.clone(),
    };
    let trace = super::progress::open_trace(&args.trace)?;
    let what = format!("exporting {}", args.trace.display());
    let stats = write_file_atomically(&args.perfetto, |w| {
        trace
            .reading(&what, |reader| perfetto::export(reader, w, &selection))
            .with_context(|| args.trace.display().to_string())
    })?;
    let bytes = std::fs::metadata(&args.perfetto)
        .with_context(|| args.perfetto.display().to_string())?
        .len();
    emit(&format!(
        "wrote {}: {} state slices, {} counter values, cycles {}..{}, {bytes} bytes (1 us = 1 cycle)\n",
        args.perfetto.display(),
        stats.slices,
        stats.counters,
        stats.from,
        stats.to,
    ))?;
    if let Some(to) = args.window.to {
        if stats.to < to {
            stderr_line!(
                "note: --to {to} is past the trace's end: exported cycles {}..{}",
                stats.from,
                stats.to
            );
        }
    }
    if let Some(hint) = large_export_hint(bytes, &selection) {
        stderr_line!("{hint}");
    }
    Ok(ExitCode::SUCCESS)
}

/// For a whole trace's export over [`LARGE_EXPORT_BYTES`], how to export less.
fn large_export_hint(bytes: u64, selection: &Selection) -> Option<String> {
    (bytes > LARGE_EXPORT_BYTES && selection.is_whole()).then(|| {
        format!(
            "hint: the export is {} MB, more than ui.perfetto.dev opens comfortably: export a \
             part with --from/--to (a window of cycles), --sm N or --kernel NAME",
            bytes / 1_000_000
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_large_whole_export_gets_the_hint() {
        let whole = Selection::default();
        assert_eq!(large_export_hint(LARGE_EXPORT_BYTES, &whole), None);
        let hint = large_export_hint(1_551_000_000, &whole).unwrap();
        assert!(
            hint.starts_with("hint: the export is 1551 MB") && hint.contains("--from/--to"),
            "{hint}"
        );
        let part = Selection {
            sm: Some(0),
            ..Selection::default()
        };
        assert_eq!(large_export_hint(1_551_000_000, &part), None);
    }
}
