//! `warpscope bench`: the simulator's own speed — simulated warp instructions per host second
//! on the timing model — for a compute-bound and a memory-bound kernel.

use super::config::{load_gpu, validated};
use super::emit;
use anyhow::{bail, Result};
use clap::Args;
use serde_json::json;
use std::fmt::Write as _;
use std::process::ExitCode;
use warpscope::bench;
use warpscope::sim::gpu::SimError;

pub const EXAMPLES: &str = "\
Examples:
  cargo run --release -- bench                  # volta, documented size
  cargo run --release -- bench --gpu small --scale 4 --json

Runs ffma_loop (64·scale blocks of 256 threads, 1000 FFMA-loop trips: compute-bound) and
vecadd_1m (vector add over 2^20·min(scale, 8) floats: memory-bound) with the null observer,
and prints per benchmark: name, gpu, warp instructions, cycles, host seconds and simulated
warp instructions per host second (M/s). Build with --release; the numbers go into
BENCHMARKS.md.";

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// GPU preset or JSON config file; its SMs must hold 256-thread blocks.
    #[arg(long, value_name = "NAME|FILE.json", default_value = "volta")]
    pub gpu: String,
    /// Multiply the benchmark sizes by N.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub scale: u32,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let config = validated(load_gpu(&args.gpu)?)?;
    let results = match bench::run_all(&config, args.scale) {
        Ok(r) => r,
        Err(SimError::Launch(e)) => bail!("bench on {}: {e}", config.name),
        Err(SimError::Fault { fault, .. }) => bail!("bench on {}: fault: {fault}", config.name),
    };
    let text = if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "gpu": r.gpu,
                    "warp_instructions": r.report.warp_instructions,
                    "cycles": r.report.cycles,
                    "seconds": r.elapsed.as_secs_f64(),
                    "warp_instructions_per_second": r.warp_instructions_per_second(),
                })
            })
            .collect();
        serde_json::to_string_pretty(&json!({ "scale": args.scale, "benchmarks": rows }))? + "\n"
    } else {
        let mut out = format!(
            "{:<12} {:<8} {:>14} {:>12} {:>10} {:>14}\n",
            "benchmark", "gpu", "warp insts", "cycles", "host s", "M warp inst/s"
        );
        for r in &results {
            let _ = writeln!(
                out,
                "{:<12} {:<8} {:>14} {:>12} {:>10.3} {:>14.2}",
                r.name,
                r.gpu,
                r.report.warp_instructions,
                r.report.cycles,
                r.elapsed.as_secs_f64(),
                r.warp_instructions_per_second() / 1e6
            );
        }
        out
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
