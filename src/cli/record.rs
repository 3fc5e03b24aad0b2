//! `warpscope record`: run a launch file (or a kernel described by flags) on the timing
//! simulator like `run`, and write every event to a trace file (see docs/trace-format.md).

use super::config::GpuArgs;
use super::emit;
use super::run::{diff, gpu_config, load_launch_file, KernelFlags, RunArgs};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::sim::gpu::SimOptions;
use warpscope::trace::{TraceFormat, DEFAULT_VERBOSITY};

pub const EXAMPLES: &str = "\
Examples:
  warpscope record kernels/vecadd_tiny.json -o vecadd.wstrace
  warpscope record kernels/reduce.json --gpu volta -o reduce.jsonl
  warpscope record kernels/matmul.json -o matmul.wstrace --verbosity 2
  warpscope record kernels/vecadd.sasm --grid 8 --block 128 \\
      --param a=0x10000 --param b=0x20000 --param c=0x30000 --param n=1000 \\
      --mem kernels/mem/vecadd_inputs.json -o vecadd.wstrace

Takes the same kernel, launch and GPU options as `warpscope run` (timing simulator only).
--format defaults from the extension of -o: .jsonl (or .json) is JSON Lines, anything else
the binary format (version 7); --format compact writes the binary format's version 8, about
40 % smaller and about half as fast to analyse; --format grouped writes version 9, which stores
the change
shared by a pipe's ready warps once: a compute-bound kernel records about 30 % faster and
analyses about 1.6 times slower (every reader reads all three). --verbosity 0 records lifecycle,
issue, refill, hazard and fault events; 1 (the default) adds warp states, completions and
barriers; 2 adds memory events.
A run stopped by a fault (watchdog, deadlock, memory fault) still writes its trace, marked
incomplete; the fault is printed and the exit status is 1, as it is when an expect check
fails. Read traces back with `warpscope trace info|dump|convert`.";

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The CRC-framed binary format (version 7).
    Bin,
    /// The binary format's version 8: about 40 % smaller, about half as fast to analyse.
    Compact,
    /// The binary format's version 9: version 7 storing a change shared by the warps ready
    /// but for one pipe once; records a compute-bound kernel about 30 % faster, analyses
    /// about 1.6 times slower.
    Grouped,
    /// JSON Lines: a header line, one event per line, a trailer line.
    Jsonl,
}

impl From<FormatArg> for TraceFormat {
    fn from(f: FormatArg) -> TraceFormat {
        match f {
            FormatArg::Bin => TraceFormat::Binary,
            FormatArg::Compact => TraceFormat::Compact,
            FormatArg::Grouped => TraceFormat::Grouped,
            FormatArg::Jsonl => TraceFormat::Jsonl,
        }
    }
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// A launch file (.json), or a kernel file (.sasm, .tgpu, .hex) with --grid and --block.
    pub input: PathBuf,
    /// The trace file to write (through OUTPUT.tmp and a rename).
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    pub output: PathBuf,
    /// Trace encoding; by default from the extension of -o (.jsonl or .json → jsonl, else bin).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// 0: lifecycle, issue, refill, hazard, fault; 1: + warp states, completions, barriers;
    /// 2: + memory events.
    #[arg(long, value_name = "0|1|2", default_value_t = DEFAULT_VERBOSITY,
          value_parser = clap::value_parser!(u8).range(0..=2))]
    pub verbosity: u8,
    #[command(flatten)]
    pub kernel: KernelFlags,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Timing watchdog: stop with a fault after N cycles [default: 50000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: Option<u64>,
    /// Lanes per warp (default: the GPU's, 32, or 4 for the tiny preset).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub warp_size: Option<u32>,
}

impl RecordArgs {
    /// The equivalent `run` arguments, so that loading and GPU selection share run's code.
    fn run_args(self) -> (RunArgs, PathBuf, Option<FormatArg>, u8) {
        let run = RunArgs {
            input: self.input,
            kernel: self.kernel,
            dump: Vec::new(),
            json: false,
            functional: false,
            gpu: self.gpu,
            max_cycles: self.max_cycles,
            max_instructions: None,
            warp_size: self.warp_size,
        };
        (run, self.output, self.format, self.verbosity)
    }
}

pub fn run(args: RecordArgs) -> Result<ExitCode> {
    let (args, output, format, verbosity) = args.run_args();
    super::distinct_files(&[("trace", &output)], &[("input", &args.input)])?;
    let format = format.map_or_else(|| TraceFormat::from_path(&output), Into::into);
    let launch_file = load_launch_file(&args)?;
    let config = gpu_config(&args, &launch_file)?;
    let options = SimOptions {
        max_cycles: args.max_cycles.unwrap_or(SimOptions::default().max_cycles),
        skip_idle: true,
    };
    let launches = launch_file.kernel_launches();
    let blocks = launches.iter().map(|l| l.grid.count()).sum();
    let what = format!("recording {} on {}", launches[0].program.name, config.name);
    let (outcome, memory) = super::progress::simulating(blocks, &what, || {
        launch_file.record(&config, options, &output, format, verbosity)
    })
    .map_err(|e| match super::launch_error(&e) {
        // Nothing was recorded: the input does not run on this GPU, as `run` says.
        Some(l) => super::launch_failure(&launch_file.path, l, &config),
        None => anyhow::Error::new(e).context(format!("recording {}", output.display())),
    })?;

    let r = &outcome.report;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "recorded {} on {}: {} cycles, {} warp instructions",
        launch_file.launches[0].launch.program.name, config.name, r.cycles, r.warp_instructions
    );
    let per_instruction = if r.warp_instructions == 0 {
        0.0
    } else {
        outcome.bytes as f64 / r.warp_instructions as f64
    };
    let _ = writeln!(
        out,
        "trace {} ({}, verbosity {verbosity}{}): {} events, {} bytes, {per_instruction:.2} bytes per warp instruction",
        outcome.path.display(),
        match format {
            TraceFormat::Binary => "bin",
            TraceFormat::Compact => "compact",
            TraceFormat::Grouped => "grouped",
            TraceFormat::Jsonl => "jsonl",
        },
        if outcome.fault.is_some() { ", incomplete" } else { "" },
        outcome.events,
        outcome.bytes,
    );
    emit(&out)?;

    if let Some(fault) = &outcome.fault {
        let hint = super::fault_hint("record", fault, args.max_cycles);
        stderr_line!(
            "error: fault at cycle {} on {}: {fault}{hint}\nthe trace is written but incomplete",
            r.cycles,
            config.name
        );
        return Ok(ExitCode::FAILURE);
    }
    let report = launch_file.check(&memory);
    if report.ok() {
        Ok(ExitCode::SUCCESS)
    } else {
        stderr_text!("{}", diff(&report));
        Ok(ExitCode::FAILURE)
    }
}
