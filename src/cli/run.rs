//! `warpscope run`: run a launch file, or one kernel described by flags, on the cycle-level
//! timing simulator (or the functional one with `--functional`); print a summary (or one JSON
//! object), the requested dumps and the checks.

use super::config::{load_gpu, memory_model_name, GpuArgs};
use super::replay::KernelSelection;
use super::{emit, DialectArg};
use anyhow::{bail, Result};
use clap::Args;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warpscope::isa::Pipe;
use warpscope::launchfile::{
    parse_address, parse_dims, CheckReport, CommandLineLaunch, LaunchFile,
};
use warpscope::replay::{self, KernelFilter};
use warpscope::sim::config::GpuConfig;
use warpscope::sim::functional::{FunctionalOptions, FunctionalStats, RunError};
use warpscope::sim::gpu::{SimError, SimOptions, SimReport};
use warpscope::sim::memory::GlobalMemory;
use warpscope::sim::observer::{Observer, WarpInfo, WarpRef};
use warpscope::sim::{Dim3, FaultKind, LaneMask};
use warpscope::words::count;
use warpscope::workload::Workload;

pub const EXAMPLES: &str = "\
Examples:
  warpscope run kernels/vecadd_tiny.json
  warpscope run kernels/matmul.json --json
  warpscope run kernels/reduce.json --gpu volta --policy lrr --scoreboard barriers
  warpscope run kernels/vecadd.json --memory fixed:200 --sms 1 --warps 4
  warpscope run kernels/loop.json --functional
  warpscope run kernels/vecadd.sasm --grid 8 --block 128 \\
      --param a=0x10000 --param b=0x20000 --param c=0x30000 --param n=1000 \\
      --mem kernels/mem/vecadd_inputs.json --dump 0x30000:8:f32

A launch file (.json) gives kernel, grid, block, params, memory and expect (see README.md);
a kernel file (.sasm, .tgpu, .hex) needs --grid and --block, and --param for each .param.
--dump ADDR:COUNT[:f32] prints COUNT words at byte address ADDR (decimal or 0x hex).
The timing simulator runs on --gpu (a preset: tiny, small, pascal, volta, hopper, or a JSON config
from `warpscope config show`), default the launch file's \"gpu\", else small; --policy,
--scoreboard, --memory, --sms, --warps and --issue-width override single fields of it.
Exit status 1 when an expect check fails, the kernel faults (watchdog, deadlock, memory
fault) or an input is invalid.";

/// How many mismatches the diff shows before summarising the rest.
const DIFF_LINES: usize = 10;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A launch file (.json), or a kernel file (.sasm, .tgpu, .hex) with --grid and --block.
    pub input: PathBuf,
    #[command(flatten)]
    pub kernel: KernelFlags,
    /// Print COUNT words at byte address ADDR after the run; `:f32` prints them as floats.
    #[arg(long, value_name = "ADDR:COUNT[:f32]", value_parser = parse_dump)]
    pub dump: Vec<Dump>,
    /// Print exactly one JSON object instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Run the functional simulator (what the kernel computes, no timing) instead.
    #[arg(long)]
    pub functional: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Timing watchdog: stop with a fault after N cycles [default: 50000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: Option<u64>,
    /// With --functional: stop with a watchdog fault after N warp instructions
    /// [default: 100000000].
    #[arg(long, value_name = "N")]
    pub max_instructions: Option<u64>,
    /// Lanes per warp (default: the GPU's, 32, or 4 for the tiny preset).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub warp_size: Option<u32>,
}

/// The flags that describe a launch of a kernel file (not a launch file); shared by `run`,
/// `record`, `sweep` and `profile`.
#[derive(Debug, Args, Default, Clone)]
pub struct KernelFlags {
    /// Grid of blocks, X[,Y[,Z]] (kernel files only).
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dims)]
    pub grid: Option<Dim3>,
    /// Threads per block, X[,Y[,Z]] (kernel files only).
    #[arg(long, value_name = "X[,Y,Z]", value_parser = parse_dims)]
    pub block: Option<Dim3>,
    /// A kernel parameter by its .param name; VALUE is an integer, float or 0x hex (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A JSON list of memory initialisers, as in a launch file's "memory" (kernel files only).
    #[arg(long, value_name = "FILE.json")]
    pub mem: Option<PathBuf>,
    /// Kernel dialect; by default from the extension (kernel files only).
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
}

impl KernelFlags {
    /// The first of these flags given, if any: they describe a kernel file's launch.
    pub(super) fn first_given(&self) -> Option<&'static str> {
        [
            ("--grid", self.grid.is_some()),
            ("--block", self.block.is_some()),
            ("--param", !self.params.is_empty()),
            ("--mem", self.mem.is_some()),
            ("--dialect", self.dialect.is_some()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }
}

/// One `--dump ADDR:COUNT[:f32]`, with the text exactly as the user wrote it.
#[derive(Debug, Clone)]
pub struct Dump {
    key: String,
    address: u64,
    count: usize,
    float: bool,
}

fn parse_dump(text: &str) -> Result<Dump, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let (addr, count, float) = match parts.as_slice() {
        [a, c] => (*a, *c, false),
        [a, c, "f32"] => (*a, *c, true),
        _ => return Err("expected ADDR:COUNT or ADDR:COUNT:f32, e.g. 0x100:16".into()),
    };
    let address = parse_address(addr)?;
    let count = match count.trim().parse::<usize>() {
        Ok(c) if c > 0 => c,
        _ => {
            return Err(format!(
                "COUNT must be a positive number of words, got `{count}`"
            ))
        }
    };
    Ok(Dump {
        key: text.to_string(),
        address,
        count,
        float,
    })
}

/// The words of a dump, as JSON numbers (u32, or f32 with `:f32`).
fn dump_values(memory: &GlobalMemory, d: &Dump) -> Result<Vec<Value>> {
    let words = memory
        .read_words(d.address, d.count)
        .map_err(|e| anyhow::anyhow!("--dump {}: {e}", d.key))?;
    Ok(words
        .into_iter()
        .map(|w| {
            if d.float {
                let f = f32::from_bits(w);
                // JSON has no NaN or infinity: those become null.
                serde_json::Number::from_f64(f as f64).map_or(Value::Null, Value::Number)
            } else {
                Value::from(w)
            }
        })
        .collect())
}

/// A JSON object whose keys keep the order they were given in.
struct Ordered<V>(Vec<(String, V)>);

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The `--json` output: one object.
#[derive(Serialize)]
struct RunJson<'a> {
    kernel: &'a str,
    /// `timing` or `functional`.
    simulator: &'static str,
    warp_size: u32,
    warp_instructions: u64,
    thread_instructions: u64,
    /// Keyed by the `--dump` text exactly as written, in the order given.
    dumps: Ordered<Vec<Value>>,
    checks: Checks,
    launches: Vec<Value>,
    #[serde(flatten)]
    timing: Option<TimingJson>,
}

/// The keys only the timing simulator adds.
#[derive(Serialize)]
struct TimingJson {
    cycles: u64,
    ipc: f64,
    gpu: String,
    policy: &'static str,
    scoreboard: &'static str,
    memory_model: String,
    hazards: u64,
    sms: Vec<Value>,
    memory: Value,
}

/// Counts warps and instructions per launch from the timing simulator's events.
#[derive(Default)]
struct LaunchCounter {
    /// The launch of the warp in each slot, as `warp_launch` last said (FxHash: it is looked
    /// up at every issue, and SipHash cost `run` a few percent of its time).
    slots: rustc_hash::FxHashMap<WarpRef, u32>,
    stats: Vec<FunctionalStats>,
}

impl LaunchCounter {
    fn new(launches: usize) -> LaunchCounter {
        LaunchCounter {
            slots: Default::default(),
            stats: vec![FunctionalStats::default(); launches],
        }
    }

    fn at(&mut self, launch: u32) -> Option<&mut FunctionalStats> {
        self.stats.get_mut(launch as usize)
    }
}

impl Observer for LaunchCounter {
    const WARP_STATES: bool = false;
    fn block_assign(&mut self, _cycle: u64, launch: u32, _block: u32, _sm: u32) {
        if let Some(s) = self.at(launch) {
            s.blocks += 1;
        }
    }
    fn warp_launch(&mut self, _cycle: u64, warp: WarpRef, info: &WarpInfo) {
        self.slots.insert(warp, info.launch);
        if let Some(s) = self.at(info.launch) {
            s.warps += 1;
        }
    }
    fn issue(&mut self, _c: u64, warp: WarpRef, _pc: u32, active: LaneMask, _p: Pipe, _s: u32) {
        if let Some(&launch) = self.slots.get(&warp) {
            if let Some(s) = self.at(launch) {
                s.warp_instructions += 1;
                s.thread_instructions += active.count_ones() as u64;
            }
        }
    }
}

/// What either simulator left behind, in one shape.
struct Outcome {
    memory: GlobalMemory,
    launches: Vec<FunctionalStats>,
    total: FunctionalStats,
    timing: Option<SimReport>,
}

#[derive(Serialize)]
struct Checks {
    passed: u64,
    failed: u64,
}

fn dim(d: Dim3) -> Value {
    json!([d.x, d.y, d.z])
}

/// The `error: N of M expected words differ` report of failed checks (shared with `record`).
pub(super) fn diff(report: &CheckReport) -> String {
    let total = report.passed + report.failed;
    let mut out = format!(
        "error: {} of {} expected word{} differ{}:\n",
        report.failed,
        total,
        if total == 1 { "" } else { "s" },
        if report.failed == 1 { "s" } else { "" }
    );
    for m in report.mismatches.iter().take(DIFF_LINES) {
        let _ = writeln!(out, "  {m}");
    }
    let shown = report.mismatches.len().min(DIFF_LINES) as u64;
    if report.failed > shown {
        let _ = writeln!(
            out,
            "  ... and {}",
            count(report.failed - shown, "more mismatch", "more mismatches")
        );
    }
    out
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let launch_file = load_launch_file(&args)?;
    let mut dumps: Vec<&Dump> = Vec::new();
    for d in &args.dump {
        // The same --dump twice would give a JSON object a duplicate key.
        if !dumps.iter().any(|e| e.key == d.key) {
            dumps.push(d);
        }
    }

    let config = gpu_config(&args, &launch_file)?;

    let outcome = if args.functional {
        if let Some(flag) = args.gpu.overrides_given() {
            return Err(super::usage(format!(
                "{flag} is for the timing simulator; drop --functional to use it"
            )));
        }
        if args.max_cycles.is_some() {
            return Err(super::usage("--max-cycles is for the timing simulator; with --functional use --max-instructions N"));
        }
        run_functional(&launch_file, &args, &config)?
    } else {
        if args.max_instructions.is_some() {
            return Err(super::usage("--max-instructions is for --functional; the timing simulator stops at --max-cycles N"));
        }
        run_timing(&launch_file, &args, &config)?
    };
    let report = launch_file.check(&outcome.memory);
    let dump_data: Vec<(String, Vec<Value>)> = dumps
        .iter()
        .map(|d| Ok((d.key.clone(), dump_values(&outcome.memory, d)?)))
        .collect::<Result<_>>()?;

    let text = if args.json {
        render_json(&launch_file, &outcome, &config, &report, dump_data)?
    } else {
        render_text(&launch_file, &outcome, &config, &report, &dump_data)
    };
    emit(&text)?;
    if report.ok() {
        Ok(ExitCode::SUCCESS)
    } else {
        stderr_text!("{}", diff(&report));
        Ok(ExitCode::FAILURE)
    }
}

/// The launch file named by `args.input`, or the one a kernel file and --grid/--block/--param
/// describe (shared with `record`).
pub(super) fn load_launch_file(args: &RunArgs) -> Result<LaunchFile> {
    if super::is_accelsim_trace(&args.input) {
        bail!(
            "{0} is an Accel-Sim trace: `warpscope replay {0} -o OUT.wstrace` runs it on the timing simulator, `warpscope profile {0}` also analyzes it",
            args.input.display()
        );
    }
    // Before the flags: a mistyped path would otherwise be told it needs --grid and --block.
    match std::fs::metadata(&args.input) {
        Err(e) => bail!("{}: cannot read: {e}", args.input.display()),
        Ok(m) if m.is_dir() => bail!(
            "{} is a directory: give a launch file (.json), a kernel file (.sasm, .tgpu, .hex), or an Accel-Sim trace directory (one with kernelslist.g)",
            args.input.display()
        ),
        Ok(_) => {}
    }
    let k = &args.kernel;
    let is_launch_file = args
        .input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let launch_file = if is_launch_file {
        if let Some(flag) = k.first_given() {
            return Err(super::usage(format!(
                "{flag} is only for running a kernel file; {} is a launch file and sets it itself",
                args.input.display()
            )));
        }
        LaunchFile::load(&args.input)?
    } else {
        let (Some(grid), Some(block)) = (&k.grid, &k.block) else {
            return Err(super::usage(format!(
                "{}: running a kernel file needs --grid and --block (or give a launch file .json)",
                args.input.display()
            )));
        };
        LaunchFile::from_command_line(&CommandLineLaunch {
            kernel: args.input.clone(),
            dialect: k.dialect.map(Into::into),
            grid: *grid,
            block: *block,
            params: k.params.clone(),
            mem: k.mem.clone(),
            gpu: None,
        })?
    };
    Ok(launch_file)
}

/// What `profile` and `sweep` record, with its GPU: an Accel-Sim trace (scanned, its kernels
/// selected; GPU as `replay` picks it), or a launch or kernel file (GPU as `run` picks
/// it). Each kind's own flags are an error with the other. `doing` names the command in errors.
pub(super) fn load_workload(
    input: &Path,
    kernel: &KernelFlags,
    select: &KernelSelection,
    gpu: GpuArgs,
    max_cycles: Option<u64>,
    doing: &str,
) -> Result<(Workload, GpuConfig)> {
    if replay::is_trace_path(input) {
        if let Some(flag) = kernel.first_given() {
            return Err(super::usage(format!(
                "{flag} is only for {doing} a kernel file; {} is an Accel-Sim trace",
                input.display()
            )));
        }
        let (trace, config) = super::replay::open_trace(input, select, &gpu)?;
        return Ok((Workload::Replay(trace), config));
    }
    if select.filter() != KernelFilter::default() {
        return Err(super::usage(format!(
            "the kernel selection flags are for Accel-Sim traces; {} is not one",
            input.display()
        )));
    }
    let run_args = RunArgs {
        input: input.to_path_buf(),
        kernel: kernel.clone(),
        dump: Vec::new(),
        json: false,
        functional: false,
        gpu,
        max_cycles,
        max_instructions: None,
        warp_size: None,
    };
    let file = load_launch_file(&run_args)?;
    let config = gpu_config(&run_args, &file)?;
    Ok((Workload::Launch(file), config))
}

/// The GPU to run on: --gpu, else the launch file's, with the overrides applied and validated
/// (shared with `record`).
pub(super) fn gpu_config(args: &RunArgs, launch_file: &LaunchFile) -> Result<GpuConfig> {
    let mut config = match &args.gpu.gpu {
        Some(spec) => load_gpu(spec)?,
        None => launch_file.gpu_config()?,
    };
    args.gpu.apply(&mut config);
    if let Some(ws) = args.warp_size {
        config.warp_size = ws;
    }
    args.gpu.validated(config)
}

fn run_functional(launch_file: &LaunchFile, args: &RunArgs, config: &GpuConfig) -> Result<Outcome> {
    let options = FunctionalOptions {
        warp_size: config.warp_size,
        max_threads_per_block: config.sm.max_threads_per_block,
        max_warp_instructions: args
            .max_instructions
            .unwrap_or(FunctionalOptions::default().max_warp_instructions),
    };
    match launch_file.run_functional(options) {
        Ok(o) => Ok(Outcome {
            memory: o.memory,
            launches: o.launches,
            total: o.total,
            timing: None,
        }),
        Err(RunError::Fault(fault)) => {
            let hint = if matches!(fault.kind, FaultKind::Watchdog { .. }) {
                "\nhint: `warpscope run --functional` takes --max-instructions N"
            } else {
                ""
            };
            if args.json {
                emit_fault_json(config, &fault, None)?;
            }
            bail!("fault: {fault}{hint}")
        }
        Err(e) => bail!("{}: {e}", launch_file.path.display()),
    }
}

fn run_timing(launch_file: &LaunchFile, args: &RunArgs, config: &GpuConfig) -> Result<Outcome> {
    let options = SimOptions {
        max_cycles: args.max_cycles.unwrap_or(SimOptions::default().max_cycles),
        skip_idle: true,
    };
    let mut counter = LaunchCounter::new(launch_file.launches.len());
    let blocks = launch_file
        .launches
        .iter()
        .map(|l| l.launch.grid.count())
        .sum();
    let what = format!(
        "simulating {} on {}",
        launch_file.launches[0].launch.program.name, config.name
    );
    let run = super::progress::simulating(blocks, &what, || {
        launch_file.run_timing(config, options, &mut counter)
    });
    match run {
        Ok(o) => Ok(Outcome {
            memory: o.memory,
            total: FunctionalStats {
                warp_instructions: o.report.warp_instructions,
                thread_instructions: o.report.thread_instructions,
                blocks: counter.stats.iter().map(|s| s.blocks).sum(),
                warps: counter.stats.iter().map(|s| s.warps).sum(),
            },
            launches: counter.stats,
            timing: Some(o.report),
        }),
        Err(SimError::Fault { fault, partial }) => {
            let hint = super::fault_hint("run", &fault, args.max_cycles);
            if args.json {
                emit_fault_json(config, &fault, Some(&partial))?;
            }
            bail!(
                "fault at cycle {} on {}: {fault}{hint}",
                partial.cycles,
                config.name
            )
        }
        Err(SimError::Launch(e)) => Err(super::launch_failure(&launch_file.path, &e, config)),
    }
}

/// `--json` promises one object on stdout: for a run stopped by a fault, what it got to (the
/// fault itself, and the timing simulator's partial figures).
fn emit_fault_json(
    config: &GpuConfig,
    fault: &warpscope::sim::Fault,
    partial: Option<&SimReport>,
) -> Result<()> {
    let mut object = json!({
        "complete": false,
        "gpu": config.name,
        "kernel": fault.kernel,
        "fault": fault.to_string(),
    });
    if let Some(r) = partial {
        object["cycles"] = json!(r.cycles);
        object["warp_instructions"] = json!(r.warp_instructions);
        object["thread_instructions"] = json!(r.thread_instructions);
    }
    emit(&(serde_json::to_string_pretty(&object)? + "\n"))?;
    Ok(())
}

fn render_json(
    launch_file: &LaunchFile,
    outcome: &Outcome,
    config: &GpuConfig,
    report: &CheckReport,
    dump_data: Vec<(String, Vec<Value>)>,
) -> Result<String> {
    let launches: Vec<Value> = launch_file
        .launches
        .iter()
        .zip(&outcome.launches)
        .enumerate()
        .map(|(i, (l, s))| {
            let mut v = json!({
                "kernel": l.launch.program.name,
                "file": l.kernel_path.display().to_string(),
                "grid": dim(l.launch.grid),
                "block": dim(l.launch.block),
                "stream": l.launch.stream,
                "blocks": s.blocks,
                "warps": s.warps,
                "warp_instructions": s.warp_instructions,
                "thread_instructions": s.thread_instructions,
            });
            if let Some(r) = outcome.timing.as_ref().and_then(|t| t.launches.get(i)) {
                v["start_cycle"] = json!(r.start_cycle);
                v["end_cycle"] = json!(r.end_cycle);
            }
            v
        })
        .collect();
    let timing = match &outcome.timing {
        Some(r) => Some(TimingJson {
            cycles: r.cycles,
            ipc: r.ipc(),
            gpu: config.name.clone(),
            policy: config.scheduler.policy.name(),
            scoreboard: config.scheduler.scoreboard.name(),
            memory_model: memory_model_name(config.memory.model),
            hazards: r.hazards,
            sms: r
                .sms
                .iter()
                .map(|s| json!({"blocks": s.blocks, "busy_cycles": s.busy_cycles}))
                .collect(),
            memory: serde_json::to_value(&r.memory)?,
        }),
        None => None,
    };
    let object = RunJson {
        kernel: &launch_file.launches[0].launch.program.name,
        simulator: if timing.is_some() {
            "timing"
        } else {
            "functional"
        },
        warp_size: config.warp_size,
        warp_instructions: outcome.total.warp_instructions,
        thread_instructions: outcome.total.thread_instructions,
        dumps: Ordered(dump_data),
        checks: Checks {
            passed: report.passed,
            failed: report.failed,
        },
        launches,
        timing,
    };
    Ok(serde_json::to_string_pretty(&object)? + "\n")
}

fn render_text(
    launch_file: &LaunchFile,
    outcome: &Outcome,
    config: &GpuConfig,
    report: &CheckReport,
    dump_data: &[(String, Vec<Value>)],
) -> String {
    let warp_size = config.warp_size;
    let multi = launch_file.launches.len() > 1;
    let mut out = String::new();
    for (i, (l, s)) in launch_file
        .launches
        .iter()
        .zip(&outcome.launches)
        .enumerate()
    {
        let p = &l.launch;
        let _ = writeln!(
            out,
            "kernel {} ({}, {})  grid {}  block {}{}",
            p.program.name,
            l.kernel_path.display(),
            l.dialect.name(),
            p.grid,
            p.block,
            if multi {
                format!("  stream {}", p.stream)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "  {}, {} of {warp_size} lanes: {} warp instructions, {} thread instructions",
            count(s.blocks, "block", "blocks"),
            count(s.warps, "warp", "warps"),
            s.warp_instructions,
            s.thread_instructions
        );
        if let Some(r) = outcome.timing.as_ref().and_then(|t| t.launches.get(i)) {
            if multi {
                let _ = writeln!(out, "  cycles {}..{}", r.start_cycle, r.end_cycle);
            }
        }
    }
    if multi {
        let _ = writeln!(
            out,
            "total: {} warp instructions, {} thread instructions",
            outcome.total.warp_instructions, outcome.total.thread_instructions
        );
    }
    if let Some(r) = &outcome.timing {
        let _ = writeln!(
            out,
            "gpu {} ({}, policy {}, scoreboard {}, memory {})",
            config.name,
            count(config.num_sms as u64, "SM", "SMs"),
            config.scheduler.policy.name(),
            config.scheduler.scoreboard.name(),
            memory_model_name(config.memory.model)
        );
        let _ = writeln!(
            out,
            "  {} cycles, IPC {:.3} (warp instructions per cycle)",
            r.cycles,
            r.ipc()
        );
        let blocks: Vec<String> = r.sms.iter().map(|s| s.blocks.to_string()).collect();
        let busy: Vec<String> = r.sms.iter().map(|s| s.busy_cycles.to_string()).collect();
        let _ = writeln!(out, "  blocks per SM: [{}]", blocks.join(", "));
        let _ = writeln!(out, "  busy cycles per SM: [{}]", busy.join(", "));
        if r.hazards > 0 {
            let _ = writeln!(
                out,
                "  hazards: {} (dependencies the scoreboard or control codes failed to protect)",
                r.hazards
            );
        }
    } else {
        let _ = writeln!(out, "functional simulator (no timing)");
    }
    if !launch_file.expect.is_empty() {
        let _ = writeln!(
            out,
            "checks: {} passed, {} failed",
            report.passed, report.failed
        );
    }
    for (key, values) in dump_data {
        let shown: Vec<String> = values.iter().map(Value::to_string).collect();
        let _ = writeln!(out, "dump {key}: [{}]", shown.join(", "));
    }
    out
}
