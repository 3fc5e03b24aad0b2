//! `warpscope trace dump|convert|info`: read a trace written by `warpscope record` (either
//! encoding, detected from its first bytes) back out. Everything streams: one block (binary)
//! or one line (JSON Lines) is in memory at a time.

use super::emit;
use super::record::FormatArg;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warpscope::pending;
use warpscope::trace::{self, TraceError, TraceFormat, TraceReader};

pub const EXAMPLES: &str = "\
Examples:
  warpscope trace info vecadd.wstrace
  warpscope trace info vecadd.wstrace --json
  warpscope trace dump vecadd.wstrace | head
  warpscope trace convert vecadd.wstrace vecadd.jsonl
  warpscope trace convert vecadd.jsonl vecadd.wstrace

Traces come from `warpscope record`; the format is in docs/trace-format.md. A damaged trace
(bad magic, truncated, CRC mismatch) is an error naming the byte offset, exit status 1.";

pub const DUMP_EXAMPLES: &str = "\
Example:
  warpscope trace dump vecadd.wstrace | head -3

Prints JSON Lines: the header object, one event per line, then the trailer
{\"trailer\":{\"complete\":...,\"events\":N,\"last_cycle\":C}}.";

pub const CONVERT_EXAMPLES: &str = "\
Examples:
  warpscope trace convert vecadd.wstrace vecadd.jsonl
  warpscope trace convert vecadd.jsonl vecadd.wstrace
  warpscope trace convert vecadd.wstrace vecadd.small.wstrace --format compact

The format of OUT comes from its extension unless --format says: .jsonl (or .json) is JSON
Lines, anything else binary. The header is copied verbatim, so binary -> JSON Lines -> binary
gives identical bytes.
OUT is written through OUT.tmp and a rename.";

pub const INFO_EXAMPLES: &str = "\
Examples:
  warpscope trace info vecadd.wstrace
  warpscope trace info vecadd.jsonl --json

Prints the header (tool version, GPU, launches, verbosity), whether the run completed (a run
stopped by a fault is incomplete) and the number of events of each kind.";

#[derive(Debug, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Print a trace as JSON Lines on stdout: header line, one event per line, trailer line.
    #[command(after_help = DUMP_EXAMPLES)]
    Dump {
        /// The trace file (binary or JSON Lines).
        trace: PathBuf,
    },
    /// Re-encode a trace (format of OUT from its extension, or --format).
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert {
        /// The trace to read (binary or JSON Lines).
        input: PathBuf,
        /// The trace to write: .jsonl or .json → JSON Lines, else binary.
        output: PathBuf,
        /// Trace encoding; by default from the extension of OUT.
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
    },
    /// Summarize a trace: header facts, completeness and event counts per kind.
    #[command(after_help = INFO_EXAMPLES)]
    Info {
        /// The trace file (binary or JSON Lines).
        trace: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: TraceArgs) -> Result<ExitCode> {
    match args.command {
        TraceCommand::Dump { trace } => dump(&trace),
        TraceCommand::Convert {
            input,
            output,
            format,
        } => convert(&input, &output, format),
        TraceCommand::Info { trace, json } => info(&trace, json),
    }
    .map(|()| ExitCode::SUCCESS)
}

fn open(path: &Path) -> Result<TraceReader<trace::Peeked<io::BufReader<File>>>> {
    super::expect_warpscope_trace(path)?;
    TraceReader::open(path).with_context(|| path.display().to_string())
}

/// Whether the error is stdout closing under us (`warpscope trace dump T | head`).
fn broken_pipe(e: &TraceError) -> bool {
    matches!(e, TraceError::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

fn dump(path: &Path) -> Result<()> {
    let reader = open(path)?;
    let stdout = io::stdout().lock();
    match trace::convert(
        reader,
        BufWriter::with_capacity(1 << 16, stdout),
        TraceFormat::Jsonl,
    ) {
        Ok((mut out, _)) => match out.flush() {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
            _ => Ok(()),
        },
        Err(e) if broken_pipe(&e) => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context(path.display().to_string())),
    }
}

/// The format `convert` writes without `--format`: JSON Lines for `.jsonl`/`.json`, else the
/// binary version the trace's header names, so that a compact trace taken through JSON Lines
/// comes back compact.
fn default_format<R: io::Read>(reader: &TraceReader<R>, output: &Path) -> TraceFormat {
    match TraceFormat::from_path(output) {
        TraceFormat::Jsonl => TraceFormat::Jsonl,
        _ => TraceFormat::binary_of_version(reader.header().version),
    }
}

fn convert(input: &Path, output: &Path, format: Option<FormatArg>) -> Result<()> {
    super::distinct_files(&[("converted trace", output)], &[("trace", input)])?;
    let reader = open(input)?;
    let format = format.map_or_else(|| default_format(&reader, output), Into::into);
    let output = &pending::output_file(output)?;
    let tmp = pending::tmp_path(output);
    let _pending = pending::register(&tmp);
    let result = (|| -> Result<u64> {
        let f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let (out, n) = trace::convert(reader, BufWriter::with_capacity(1 << 16, f), format)
            .with_context(|| input.display().to_string())?;
        let f = out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all()
            .with_context(|| format!("writing {}", tmp.display()))?;
        Ok(n)
    })();
    let events = match result {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, output)
        .with_context(|| format!("renaming {} to {}", tmp.display(), output.display()))?;
    emit(&format!(
        "converted {} to {} ({events} events)\n",
        input.display(),
        output.display()
    ))?;
    Ok(())
}

fn info(path: &Path, as_json: bool) -> Result<()> {
    let trace = super::progress::open_trace(path)?;
    let header = trace.reader.header().clone();
    let what = format!("counting the events of {}", path.display());
    let info = trace
        .reading(&what, trace::info)
        .with_context(|| path.display().to_string())?;
    let launches: Vec<Value> = header
        .launches
        .iter()
        .map(|l| {
            json!({
                "kernel": l.kernel,
                "grid": [l.grid.x, l.grid.y, l.grid.z],
                "block": [l.block.x, l.block.y, l.block.z],
                "stream": l.stream,
            })
        })
        .collect();
    let text = if as_json {
        let mut v = serde_json::to_value(&info)?;
        v["file"] = json!(path.display().to_string());
        v["launches"] = Value::Array(launches);
        serde_json::to_string_pretty(&v)? + "\n"
    } else {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "trace {} ({}, format version {}, written by warpscope {})",
            path.display(),
            match info.format {
                TraceFormat::Binary | TraceFormat::Compact | TraceFormat::Grouped => "binary",
                TraceFormat::Jsonl => "JSON Lines",
            },
            info.version,
            info.tool_version
        );
        let _ = writeln!(
            out,
            "gpu {}  verbosity {}  seed {}",
            info.gpu, info.verbosity, info.seed
        );
        for l in &header.launches {
            let _ = writeln!(
                out,
                "launch {}  grid {}  block {}  stream {}",
                l.kernel, l.grid, l.block, l.stream
            );
        }
        let _ = writeln!(
            out,
            "complete: {}",
            if info.complete {
                "yes"
            } else {
                "no (the run stopped at a fault)"
            }
        );
        let _ = writeln!(
            out,
            "events: {} (last cycle {})",
            info.events, info.last_cycle
        );
        let width = info.counts.keys().map(String::len).max().unwrap_or(0);
        for (kind, n) in &info.counts {
            let _ = writeln!(out, "  {kind:<width$}  {n}");
        }
        out
    };
    emit(&text)?;
    Ok(())
}
