//! `warpscope run`: run a launch file, or one kernel described by flags, on the functional
//! simulator; print a summary (or one JSON object), the requested dumps and the checks.

use super::{emit, DialectArg};
use anyhow::{bail, Result};
use clap::Args;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::launchfile::{parse_address, CheckReport, CommandLineLaunch, LaunchFile};
use warpscope::sim::functional::{FunctionalOptions, RunError};
use warpscope::sim::memory::GlobalMemory;
use warpscope::sim::{Dim3, FaultKind};

pub const EXAMPLES: &str = "\
Examples:
  warpscope run kernels/vecadd_tiny.json
  warpscope run kernels/matmul.json --json
  warpscope run kernels/vecadd.sasm --grid 8 --block 128 \\
      --param a=0x10000 --param b=0x20000 --param c=0x30000 --param n=1000 \\
      --mem kernels/mem/vecadd_inputs.json --dump 0x30000:8:f32

A launch file (.json) gives kernel, grid, block, params, memory and expect (see README.md);
a kernel file (.sasm, .tgpu, .hex) needs --grid and --block, and --param for each .param.
--dump ADDR:COUNT[:f32] prints COUNT words at byte address ADDR (decimal or 0x hex).
Exit status 1 when an expect check fails, the kernel faults or an input is invalid.";

/// How many mismatches the diff shows before summarising the rest.
const DIFF_LINES: usize = 10;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A launch file (.json), or a kernel file (.sasm, .tgpu, .hex) with --grid and --block.
    pub input: PathBuf,
    /// Grid of blocks, X[,Y[,Z]] (kernel files only).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub grid: Option<String>,
    /// Threads per block, X[,Y[,Z]] (kernel files only).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub block: Option<String>,
    /// A kernel parameter by its .param name; VALUE is an integer, float or 0x hex (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// A JSON list of memory initialisers, as in a launch file's "memory" (kernel files only).
    #[arg(long, value_name = "FILE.json")]
    pub mem: Option<PathBuf>,
    /// Print COUNT words at byte address ADDR after the run; `:f32` prints them as floats.
    #[arg(long, value_name = "ADDR:COUNT[:f32]")]
    pub dump: Vec<String>,
    /// Print exactly one JSON object instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Kernel dialect; by default from the extension (kernel files only).
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// Stop with a watchdog fault after N warp instructions.
    #[arg(long, value_name = "N", default_value_t = FunctionalOptions::default().max_warp_instructions)]
    pub max_instructions: u64,
    /// Lanes per warp (default 32, or 4 when the launch file says "gpu": "tiny").
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=32))]
    pub warp_size: Option<u32>,
}

/// One `--dump ADDR:COUNT[:f32]`, with the text exactly as the user wrote it.
struct Dump {
    key: String,
    address: u64,
    count: usize,
    float: bool,
}

fn parse_dump(text: &str) -> Result<Dump> {
    let parts: Vec<&str> = text.split(':').collect();
    let (addr, count, float) = match parts.as_slice() {
        [a, c] => (*a, *c, false),
        [a, c, "f32"] => (*a, *c, true),
        _ => bail!("--dump {text}: expected ADDR:COUNT or ADDR:COUNT:f32, e.g. 0x100:16"),
    };
    let address = parse_address(addr).map_err(|m| anyhow::anyhow!("--dump {text}: {m}"))?;
    let count = match count.trim().parse::<usize>() {
        Ok(c) if c > 0 => c,
        _ => bail!("--dump {text}: COUNT must be a positive number of words, got `{count}`"),
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
    warp_size: u32,
    warp_instructions: u64,
    thread_instructions: u64,
    /// Keyed by the `--dump` text exactly as written, in the order given.
    dumps: Ordered<Vec<Value>>,
    checks: Checks,
    launches: Vec<Value>,
}

#[derive(Serialize)]
struct Checks {
    passed: u64,
    failed: u64,
}

fn dim(d: Dim3) -> Value {
    json!([d.x, d.y, d.z])
}

fn diff(report: &CheckReport) -> String {
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
    if report.mismatches.len() > DIFF_LINES {
        let _ = writeln!(
            out,
            "  ... and {} more mismatch{}",
            report.mismatches.len() - DIFF_LINES,
            if report.mismatches.len() - DIFF_LINES == 1 {
                ""
            } else {
                "es"
            }
        );
    }
    out
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let is_launch_file = args
        .input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let launch_file = if is_launch_file {
        let given = [
            ("--grid", args.grid.is_some()),
            ("--block", args.block.is_some()),
            ("--param", !args.params.is_empty()),
            ("--mem", args.mem.is_some()),
            ("--dialect", args.dialect.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!(
                "{flag} is only for running a kernel file; {} is a launch file and sets it itself",
                args.input.display()
            );
        }
        LaunchFile::load(&args.input)?
    } else {
        let (Some(grid), Some(block)) = (&args.grid, &args.block) else {
            bail!(
                "{}: running a kernel file needs --grid and --block (or give a launch file .json)",
                args.input.display()
            );
        };
        LaunchFile::from_command_line(&CommandLineLaunch {
            kernel: args.input.clone(),
            dialect: args.dialect.map(Into::into),
            grid: grid.clone(),
            block: block.clone(),
            params: args.params.clone(),
            mem: args.mem.clone(),
            gpu: None,
        })?
    };
    let mut dumps: Vec<Dump> = Vec::new();
    for text in &args.dump {
        let d = parse_dump(text)?;
        // The same --dump twice would give a JSON object a duplicate key.
        if !dumps.iter().any(|e| e.key == d.key) {
            dumps.push(d);
        }
    }

    let warp_size = args.warp_size.unwrap_or_else(|| launch_file.warp_size());
    let options = FunctionalOptions {
        warp_size,
        max_warp_instructions: args.max_instructions,
    };
    let outcome = match launch_file.run_functional(options) {
        Ok(o) => o,
        Err(RunError::Fault(fault)) => {
            let hint = if matches!(fault.kind, FaultKind::Watchdog { .. }) {
                "\nhint: `warpscope run` takes --max-instructions N"
            } else {
                ""
            };
            bail!("fault: {fault}{hint}")
        }
        Err(e) => bail!("{}: {e}", launch_file.path.display()),
    };
    let report = launch_file.check(&outcome.memory);
    let dump_data: Vec<(String, Vec<Value>)> = dumps
        .iter()
        .map(|d| Ok((d.key.clone(), dump_values(&outcome.memory, d)?)))
        .collect::<Result<_>>()?;

    let first = &launch_file.launches[0];
    let text = if args.json {
        let launches: Vec<Value> = launch_file
            .launches
            .iter()
            .zip(&outcome.launches)
            .map(|(l, s)| {
                json!({
                    "kernel": l.launch.program.name,
                    "file": l.kernel_path.display().to_string(),
                    "grid": dim(l.launch.grid),
                    "block": dim(l.launch.block),
                    "stream": l.launch.stream,
                    "blocks": s.blocks,
                    "warps": s.warps,
                    "warp_instructions": s.warp_instructions,
                    "thread_instructions": s.thread_instructions,
                })
            })
            .collect();
        let object = RunJson {
            kernel: &first.launch.program.name,
            warp_size,
            warp_instructions: outcome.total.warp_instructions,
            thread_instructions: outcome.total.thread_instructions,
            dumps: Ordered(dump_data),
            checks: Checks {
                passed: report.passed,
                failed: report.failed,
            },
            launches,
        };
        serde_json::to_string_pretty(&object)? + "\n"
    } else {
        let mut out = String::new();
        for (l, s) in launch_file.launches.iter().zip(&outcome.launches) {
            let p = &l.launch;
            let _ = writeln!(
                out,
                "kernel {} ({}, {})  grid {}  block {}{}",
                p.program.name,
                l.kernel_path.display(),
                l.dialect.name(),
                p.grid,
                p.block,
                if launch_file.launches.len() > 1 {
                    format!("  stream {}", p.stream)
                } else {
                    String::new()
                }
            );
            let _ = writeln!(
                out,
                "  {} block{}, {} warp{} of {warp_size} lanes: {} warp instructions, {} thread instructions",
                s.blocks,
                if s.blocks == 1 { "" } else { "s" },
                s.warps,
                if s.warps == 1 { "" } else { "s" },
                s.warp_instructions,
                s.thread_instructions
            );
        }
        if launch_file.launches.len() > 1 {
            let _ = writeln!(
                out,
                "total: {} warp instructions, {} thread instructions",
                outcome.total.warp_instructions, outcome.total.thread_instructions
            );
        }
        if !launch_file.expect.is_empty() {
            let _ = writeln!(
                out,
                "checks: {} passed, {} failed",
                report.passed, report.failed
            );
        }
        for (key, values) in &dump_data {
            let shown: Vec<String> = values.iter().map(Value::to_string).collect();
            let _ = writeln!(out, "dump {key}: [{}]", shown.join(", "));
        }
        out
    };
    emit(&text)?;
    if report.ok() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprint!("{}", diff(&report));
        Ok(ExitCode::FAILURE)
    }
}
