//! `warpscope replay`: replay an Accel-Sim SASS trace on the timing simulator and write a
//! warpscope trace (see `warpscope::replay`).

use super::config::{load_gpu, GpuArgs};
use super::emit;
use super::record::FormatArg;
use anyhow::Result;
use clap::Args;
use std::fmt::Write as _;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use warpscope::replay::{KernelFilter, ReplayInput};
use warpscope::sim::config::GpuConfig;
use warpscope::sim::gpu::SimOptions;
use warpscope::trace::{TraceFormat, DEFAULT_VERBOSITY};
use warpscope::words::count;

pub const EXAMPLES: &str = "\
Examples:
  warpscope replay tests/data/accelsim/vectoradd-100-32 --gpu volta -o vecadd.wstrace
  warpscope replay ~/traces/app/kernelslist.g --gpu hopper --policy lrr -o app.jsonl
  warpscope replay ~/traces/app/kernel-3.traceg --gpu volta --memory fixed:300 --sms 8 -o k3.wstrace
  warpscope replay ~/traces/app --gpu volta --kernel-name sgemm --launch-count 2 -o sgemm.wstrace
  warpscope analyze vecadd.wstrace

TRACE is an Accel-Sim trace directory (holding kernelslist.g), a kernelslist.g, or one
kernel-N.traceg (NVBit tracer versions 3-5; binary versions 50-90). Replay is timing-only: the
instruction stream, active masks, registers and addresses come from the trace; warpscope's
dispatcher, schedulers, scoreboards and memory model decide the timing. Opcodes the table does
not know run as a generic ALU (or, with addresses, global memory) instruction and are listed
in a warning. Without --gpu, a trace replays on pascal before sm_70, hopper from sm_90, else
volta, as a note on stderr says. The summary goes to stdout, the host speed to stderr. --format
defaults from the extension of -o (.jsonl or .json → JSON Lines, else binary); --format compact
writes the smaller binary version, --format grouped the one faster to record for compute-bound
kernels (see `record --help`).

Kernel selection works as Nsight Compute's: --kernels and --kernel-name pick kernels of the
list (by the header's `-kernel id` and by a part of its name, mangled or demangled: vecAdd<float>
and _Z6vecAdd both find _Z6vecAddIfEvPT_S1_S1_i; the summary shows id and name),
then --launch-skip leaves out the first N of those and --launch-count keeps at most N more.
Kernels not selected are not scanned, so one kernel of a large application costs the scan of
that kernel alone.";

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// An Accel-Sim trace directory, a kernelslist.g or a kernel-N.traceg.
    #[arg(value_name = "TRACE")]
    pub input: PathBuf,
    /// The warpscope trace to write (through OUTPUT.tmp and a rename).
    #[arg(short = 'o', long = "output", value_name = "OUT.wstrace")]
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
    pub gpu: GpuArgs,
    /// Timing watchdog: stop with a fault after N cycles [default: 50000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub select: KernelSelection,
}

/// Which kernels of an Accel-Sim trace to replay (`replay`, `profile` and `sweep`).
#[derive(Debug, Clone, Default, Args)]
pub struct KernelSelection {
    /// Replay only these kernels, by id (a trace header's `-kernel id`, the N of
    /// kernel-N.traceg): ids and ranges, e.g. 2,5-7.
    #[arg(long, value_name = "IDS", value_parser = parse_kernel_ids, help_heading = "Kernel selection")]
    pub kernels: Option<KernelIds>,
    /// Replay only kernels whose name contains TEXT (mangled as the trace header spells it, or
    /// demangled).
    #[arg(long, value_name = "TEXT", help_heading = "Kernel selection")]
    pub kernel_name: Option<String>,
    /// Of the kernels --kernels and --kernel-name select, leave out the first N.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Kernel selection"
    )]
    pub launch_skip: u64,
    /// Of the kernels selected (after --launch-skip), replay at most N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
          help_heading = "Kernel selection")]
    pub launch_count: Option<u64>,
}

/// The ids of `--kernels` (a type of its own: clap reads a bare `Vec` as repeated values).
#[derive(Debug, Clone)]
pub struct KernelIds(Vec<RangeInclusive<u64>>);

fn parse_kernel_ids(text: &str) -> Result<KernelIds, String> {
    KernelFilter::parse_ids(text).map(KernelIds)
}

impl KernelSelection {
    pub fn filter(&self) -> KernelFilter {
        KernelFilter {
            ids: self.kernels.clone().map(|k| k.0).unwrap_or_default(),
            name: self.kernel_name.clone(),
            skip: self.launch_skip,
            count: self.launch_count,
        }
    }
}

/// Scans the Accel-Sim trace `input` (the kernels `select` picks) and loads the GPU to replay
/// it on: `--gpu` (loaded first, so that a bad name fails before a long scan), else the preset
/// for the trace's architecture ([`ReplayInput::default_gpu`], said on stderr); then the other
/// GPU flags.
pub(super) fn open_trace(
    input: &Path,
    select: &KernelSelection,
    gpu: &GpuArgs,
) -> Result<(ReplayInput, GpuConfig)> {
    let given = gpu.gpu.as_deref().map(load_gpu).transpose()?;
    let scanning = format!("scanning {}", input.display());
    let filter = select.filter();
    let trace = super::progress::waiting(&scanning, || {
        warpscope::replay::open_filtered(input, &filter)
    })?;
    // Said before the run, by every command that replays (`profile` and `sweep` print no
    // replay summary of their own).
    let unknown = trace.unknown_opcodes();
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.iter().map(|(op, n)| format!("{op} ×{n}")).collect();
        stderr_line!(
            "warning: {} opcode(s) not in the table replayed as generic instructions: {}",
            unknown.len(),
            list.join(", ")
        );
    }
    let mut config = match given {
        Some(config) => config,
        None => {
            let name = trace.default_gpu();
            let newest = trace.kernels.iter().map(|k| k.header.binary_version).max();
            stderr_line!(
                "note: replaying on {name}, the preset for sm_{} traces (--gpu picks another)",
                newest.unwrap_or_default()
            );
            load_gpu(name)?
        }
    };
    gpu.apply(&mut config);
    Ok((trace, gpu.validated(config)?))
}

pub fn run(args: ReplayArgs) -> Result<ExitCode> {
    // (Whether the output is one of the trace's own files, `replay` checks itself, naming it.)
    super::writable_file("trace", &args.output)?;
    let started = Instant::now();
    let (input, config) = open_trace(&args.input, &args.select, &args.gpu)?;
    let scanned = started.elapsed();
    let format = args
        .format
        .map_or_else(|| TraceFormat::from_path(&args.output), Into::into);
    let options = SimOptions {
        max_cycles: args.max_cycles.unwrap_or(SimOptions::default().max_cycles),
        skip_idle: true,
    };
    let blocks = input.kernels.iter().map(|k| k.header.grid.count()).sum();
    let name = args.input.file_name().unwrap_or(args.input.as_os_str());
    let what = format!("replaying {} on {}", name.to_string_lossy(), config.name);
    let outcome = super::progress::simulating(blocks, &what, || {
        warpscope::replay::replay(
            &config,
            &input,
            options,
            &args.output,
            format,
            args.verbosity,
        )
    })
    .map_err(|e| match super::launch_error(&e) {
        // Nothing was recorded: the trace does not run on this GPU, as `run` says.
        Some(l) => super::launch_failure(&args.input, l, &config),
        None => anyhow::Error::new(e).context(format!(
            "replaying {} into {}",
            args.input.display(),
            args.output.display()
        )),
    })?;
    let elapsed = started.elapsed();

    let r = &outcome.record.report;
    let mut out = String::new();
    let kernels = match input.kernels.len() == input.listed_kernels {
        true => count(input.kernels.len() as u64, "kernel", "kernels"),
        false => format!(
            "{} of {} kernels",
            input.kernels.len(),
            input.listed_kernels
        ),
    };
    let _ = writeln!(
        out,
        "replayed {kernels} from {} on {}: {} warp instructions ({} thread instructions), {} cycles",
        args.input.display(),
        config.name,
        r.warp_instructions,
        r.thread_instructions,
        r.cycles
    );
    for (k, l) in input.kernels.iter().zip(&r.launches) {
        let _ = writeln!(
            out,
            "  kernel {} {} (sm_{}, tracer v{}): grid {} block {}, {} warp instructions, cycles {}..{}",
            k.header.kernel_id,
            warpscope::kernel_name::function(&k.header.name),
            k.header.binary_version,
            k.header.tracer_version,
            k.header.grid,
            k.header.block,
            k.warp_instructions,
            l.start_cycle,
            l.end_cycle
        );
    }
    if input.memcpys > 0 {
        let _ = writeln!(
            out,
            "  {} ({} bytes) listed; replay is timing-only and moves no data",
            count(
                input.memcpys,
                "host-to-device copy",
                "host-to-device copies"
            ),
            input.memcpy_bytes
        );
    }
    let unknown = input.unknown_opcodes();
    if !unknown.is_empty() {
        let unknown_total: u64 = unknown.iter().map(|(_, n)| n).sum();
        let _ = writeln!(
            out,
            "unknown opcodes: {} ({} warp instructions)",
            unknown.len(),
            unknown_total
        );
    }
    let _ = writeln!(
        out,
        "trace {}: {} events, {} bytes",
        outcome.record.path.display(),
        outcome.record.events,
        outcome.record.bytes
    );
    emit(&out)?;
    let seconds = elapsed.as_secs_f64().max(1e-9);
    stderr_line!(
        "host: {:.3} s ({:.3} s scanning), {:.2} M warp instructions/s",
        seconds,
        scanned.as_secs_f64(),
        r.warp_instructions as f64 / seconds / 1e6
    );
    if let Some(fault) = &outcome.record.fault {
        let hint = super::fault_hint("replay", fault, args.max_cycles);
        stderr_line!(
            "error: fault at cycle {} on {}: {fault}{hint}\nthe trace is written but incomplete",
            r.cycles,
            config.name
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
