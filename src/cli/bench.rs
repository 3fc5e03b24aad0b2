//! `warpscope bench`: the simulator's own speed — simulated warp instructions per host second
//! on the timing model — for a compute-bound and a memory-bound kernel.

use super::config::{load_gpu, validated};
use super::emit;
use anyhow::{bail, Result};
use clap::Args;
use serde_json::json;
use std::fmt::Write as _;
use std::process::ExitCode;
use warpscope::bench::{self, ReplayBenchError, TraceBenchError};
use warpscope::sim::config::GpuConfig;
use warpscope::sim::gpu::SimError;
use warpscope::trace::{TraceFormat, DEFAULT_VERBOSITY};

pub const EXAMPLES: &str = "\
Examples:
  cargo run --release -- bench                  # volta, documented size
  cargo run --release -- bench --gpu small --scale 4 --json
  cargo run --release -- bench --trace          # tracing and analysis cost on vecadd_1m
  cargo run --release -- bench --charts         # every chart of every trace in traces/
  taskset -c 0 cargo run --release -- bench --replay /tmp/vecadd-22m   # replay on one core
  cargo run --release -- bench --replay /tmp/vecadd-1m --no-trace     # the timing model alone

Runs ffma_loop (64·scale blocks of 256 threads, 1000 FFMA-loop trips: compute-bound) and
vecadd_1m (vector add over 2^20·min(scale, 8) floats: memory-bound) with the null observer,
and prints per benchmark: name, gpu, warp instructions, cycles, host seconds and simulated
warp instructions per host second (M/s). Build with --release; the numbers go into
BENCHMARKS.md.

With --trace, runs vecadd_1m instead with the null observer and then with a recorder writing
the binary trace (default verbosity; --compact: the compact format, --grouped: the grouped one) into memory, decodes and then analyzes that trace
--read-passes times each, and prints: recording time over null time (target <= 1.5x), trace
bytes and bytes per warp instruction (target <= 4), decode speed in MB/s of trace (target >=
200) and events/s, analysis speed in events/s (target >= 50 M) and one analysis's time over
the recording time (target <= 0.25). --scale does not apply.

With --replay TRACE, opens (scans) the Accel-Sim trace TRACE (a directory, kernelslist.g or
kernel-N.traceg; scripts/gen-accelsim-trace.py writes large ones), replays it on --gpu as
`warpscope replay` does, recording the default binary trace (--grouped: the grouped format) to
a temporary file that is then removed, and replays it again with the null observer, and
prints: scan time, the replay's time and warp instructions per second with the scan (target
>= 5 M/s on one core: run under `taskset -c 0`), the same without a trace, recording time over
null time, and the command's peak resident memory (Linux's VmHWM: the scan and both replays;
`/usr/bin/time -v warpscope replay ...` measures a replay alone). With --no-trace, only the
replay without a trace runs (for profiling the timing model: `perf record` or callgrind on
`bench --replay TRACE --no-trace` see the simulation alone).

With --charts, renders every chart of every .wstrace file in --traces DIR (default traces/)
and prints per chart: trace, chart, host seconds (reading the trace and drawing) and SVG size;
the bound is < 2 s and < 2 MB per chart, and the exit status is 1 if any chart misses it.";

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
    /// Measure trace recording and reading on vecadd_1m instead.
    #[arg(long)]
    pub trace: bool,
    /// With --trace: record the compact binary format (version 8) instead of the default.
    #[arg(long, requires = "trace")]
    pub compact: bool,
    /// With --trace or --replay: record the grouped binary format (version 9) instead of the
    /// default.
    #[arg(long, conflicts_with = "compact")]
    pub grouped: bool,
    /// With --trace: how many times to decode the recorded trace.
    #[arg(long, value_name = "N", default_value_t = 5, requires = "trace",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub read_passes: u32,
    /// Time every chart of every sample trace instead (see --traces).
    #[arg(long, conflicts_with = "trace")]
    pub charts: bool,
    /// Measure replay of this Accel-Sim trace instead: with and without recording.
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["trace", "charts"])]
    pub replay: Option<std::path::PathBuf>,
    /// With --replay: only the replay without a trace (front end and timing model), to
    /// measure or profile the simulation alone.
    #[arg(long, requires = "replay", conflicts_with = "grouped")]
    pub no_trace: bool,
    /// With --charts: the directory of traces to render.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "traces",
        requires = "charts"
    )]
    pub traces: std::path::PathBuf,
}

fn target(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

fn run_trace(args: &BenchArgs, config: &GpuConfig) -> Result<ExitCode> {
    let format = if args.compact {
        TraceFormat::Compact
    } else if args.grouped {
        TraceFormat::Grouped
    } else {
        TraceFormat::Binary
    };
    let r = match bench::run_trace(config, DEFAULT_VERBOSITY, format, args.read_passes) {
        Ok(r) => r,
        Err(TraceBenchError::Sim(SimError::Fault { fault, .. })) => {
            bail!("bench --trace on {}: fault: {fault}", config.name)
        }
        Err(e) => bail!("bench --trace on {}: {e}", config.name),
    };
    let overhead_ok = r.overhead() <= 1.5;
    let size_ok = r.bytes_per_warp_instruction() <= 4.0;
    let read_ok = r.read_mb_per_second() >= 200.0;
    let analyze_ok = r.analyze_events_per_second() >= 50e6;
    let analyze_ratio_ok = r.analyze_over_record() <= 0.25;
    let text = if args.json {
        serde_json::to_string_pretty(&json!({
            "name": r.name,
            "gpu": r.gpu,
            "verbosity": r.verbosity,
            "format": r.format,
            "warp_instructions": r.warp_instructions,
            "cycles": r.cycles,
            "null_seconds": r.null_elapsed.as_secs_f64(),
            "record_seconds": r.record_elapsed.as_secs_f64(),
            "overhead": r.overhead(),
            "events": r.events,
            "events_per_warp_instruction": r.events_per_warp_instruction(),
            "bytes": r.bytes,
            "header_bytes": r.header_bytes,
            "bytes_per_warp_instruction": r.bytes_per_warp_instruction(),
            "read_passes": r.read_passes,
            "read_seconds": r.read_elapsed.as_secs_f64(),
            "read_mb_per_second": r.read_mb_per_second(),
            "read_events_per_second": r.read_events_per_second(),
            "analyze_seconds": r.analyze_seconds(),
            "analyze_events_per_second": r.analyze_events_per_second(),
            "analyze_over_record": r.analyze_over_record(),
            "targets": {
                "analyze_events_per_second_at_least_50m": analyze_ok,
                "analyze_at_most_quarter_of_record": analyze_ratio_ok,
                "overhead_at_most_1_5": overhead_ok,
                "bytes_per_warp_instruction_at_most_4": size_ok,
                "read_mb_per_second_at_least_200": read_ok,
            },
        }))? + "\n"
    } else {
        let mut out = format!(
            "{} on {} (verbosity {}, {} format): {} warp instructions, {} cycles, {} events ({:.2} per warp instruction)\n",
            r.name,
            r.gpu,
            r.verbosity,
            r.format.name(),
            r.warp_instructions,
            r.cycles,
            r.events,
            r.events_per_warp_instruction()
        );
        let _ = writeln!(out, "{:<28} {:>16} {:>10}", "measure", "value", "target");
        let mut row = |name: &str, value: String, goal: &str| {
            let _ = writeln!(out, "{name:<28} {value:>16} {goal:>10}");
        };
        row(
            "null observer, s",
            format!("{:.3}", r.null_elapsed.as_secs_f64()),
            "",
        );
        row(
            &format!("recording ({}), s", r.format.name()),
            format!("{:.3}", r.record_elapsed.as_secs_f64()),
            "",
        );
        row(
            "recording / null",
            format!("{:.2}x", r.overhead()),
            "<= 1.5x",
        );
        row("trace bytes", r.bytes.to_string(), "");
        row("  of which header", r.header_bytes.to_string(), "");
        row(
            "bytes / warp instruction",
            format!("{:.2}", r.bytes_per_warp_instruction()),
            "<= 4",
        );
        row(
            &format!("read, s ({} passes)", r.read_passes),
            format!("{:.3}", r.read_elapsed.as_secs_f64()),
            "",
        );
        row(
            "read, MB/s of trace",
            format!("{:.1}", r.read_mb_per_second()),
            ">= 200",
        );
        row(
            "read, M events/s",
            format!("{:.2}", r.read_events_per_second() / 1e6),
            "",
        );
        row(
            "analyze, s (one pass)",
            format!("{:.3}", r.analyze_seconds()),
            "",
        );
        row(
            "analyze, M events/s",
            format!("{:.2}", r.analyze_events_per_second() / 1e6),
            ">= 50",
        );
        row(
            "analyze / recording",
            format!("{:.2}", r.analyze_over_record()),
            "<= 0.25",
        );
        let _ = writeln!(
            out,
            "targets: overhead {}, size {}, read speed {}, analysis speed {}, analysis time {}",
            target(overhead_ok),
            target(size_ok),
            target(read_ok),
            target(analyze_ok),
            target(analyze_ratio_ok)
        );
        out
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// This process's peak resident memory so far (Linux's `VmHWM`), if the host reports it.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

fn run_replay(
    trace: &std::path::Path,
    json: bool,
    format: Option<TraceFormat>,
    config: &GpuConfig,
) -> Result<ExitCode> {
    let out = std::env::temp_dir().join(format!("warpscope-bench-{}.wstrace", std::process::id()));
    let what = format!("bench --replay {} on {}", trace.display(), config.name);
    let r = match bench::run_replay(config, trace, &out, format) {
        Ok(r) => r,
        Err(ReplayBenchError::Sim(SimError::Fault { fault, .. })) => {
            bail!("{what}: fault: {fault}")
        }
        Err(e) => bail!("{what}: {e}"),
    };
    // Both replays and the scan ran in this process: its peak is theirs.
    let peak = peak_rss_bytes();
    // Without the recording replay the target is not measured.
    let rate_ok = r.replay_rate().map(|rate| rate >= 5e6);
    let format_name = format.map(|f| match f {
        TraceFormat::Grouped => "grouped",
        _ => "binary",
    });
    let recording = r.recording.as_ref();
    let text = if json {
        serde_json::to_string_pretty(&json!({
            "trace": trace.display().to_string(),
            "gpu": r.gpu,
            "format": format_name,
            "warp_instructions": r.warp_instructions,
            "cycles": r.cycles,
            "events": recording.map(|x| x.events),
            "bytes": recording.map(|x| x.bytes),
            "scan_seconds": r.scan_elapsed.as_secs_f64(),
            "record_seconds": recording.map(|x| x.elapsed.as_secs_f64()),
            "null_seconds": r.null_elapsed.as_secs_f64(),
            "replay_warp_instructions_per_second": r.replay_rate(),
            "null_warp_instructions_per_second": r.null_rate(),
            "overhead": r.overhead(),
            "peak_rss_bytes": peak,
            "targets": { "replay_at_least_5m_per_second": rate_ok },
        }))? + "\n"
    } else {
        let mut out = format!(
            "replay of {} on {} ({} trace): {} warp instructions, {} cycles",
            trace.display(),
            r.gpu,
            format_name.unwrap_or("no"),
            r.warp_instructions,
            r.cycles,
        );
        if let Some(x) = recording {
            let _ = write!(out, ", {} events, {} trace bytes", x.events, x.bytes);
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "{:<36} {:>10} {:>12} {:>10}",
            "measure", "s", "M inst/s", "target"
        );
        let mut row = |name: &str, seconds: f64, rate: Option<f64>, goal: &str| {
            let rate = rate.map_or(String::new(), |r| format!("{:.2}", r / 1e6));
            let _ = writeln!(out, "{name:<36} {seconds:>10.3} {rate:>12} {goal:>10}");
        };
        row("scan", r.scan_elapsed.as_secs_f64(), None, "");
        if let Some(x) = recording {
            row(
                "replay recording the trace (+ scan)",
                (r.scan_elapsed + x.elapsed).as_secs_f64(),
                r.replay_rate(),
                ">= 5",
            );
        }
        row(
            "replay without a trace (+ scan)",
            (r.scan_elapsed + r.null_elapsed).as_secs_f64(),
            Some(r.null_rate()),
            "",
        );
        if let Some(peak) = peak {
            let _ = writeln!(
                out,
                "peak memory (resident, whole command): {:.1} MB",
                peak as f64 / 1e6
            );
        }
        if let (Some(overhead), Some(ok)) = (r.overhead(), rate_ok) {
            let _ = writeln!(
                out,
                "recording / null: {overhead:.2}x; target (>= 5 M warp instructions/s): {}",
                target(ok)
            );
        }
        out
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn run_charts(args: &BenchArgs) -> Result<ExitCode> {
    let results = bench::run_charts(&args.traces)?;
    if results.is_empty() {
        bail!("no .wstrace files in {}", args.traces.display());
    }
    let ok = results.iter().all(|r| r.within_bounds());
    let text = if args.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "trace": r.trace.display().to_string(),
                    "chart": r.chart.name(),
                    "seconds": r.elapsed.as_secs_f64(),
                    "bytes": r.bytes,
                    "within_bounds": r.within_bounds(),
                })
            })
            .collect();
        serde_json::to_string_pretty(&json!({
            "bounds": {"seconds": bench::CHART_SECONDS_BOUND, "bytes": bench::CHART_BYTES_BOUND},
            "charts": rows,
        }))? + "\n"
    } else {
        let mut out = format!(
            "{:<34} {:<10} {:>10} {:>10}\n",
            "trace", "chart", "host s", "bytes"
        );
        for r in &results {
            let name = r.trace.file_name().map_or_else(
                || r.trace.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let _ = writeln!(
                out,
                "{:<34} {:<10} {:>10.4} {:>10}{}",
                name,
                r.chart.name(),
                r.elapsed.as_secs_f64(),
                r.bytes,
                if r.within_bounds() {
                    ""
                } else {
                    "  OVER BOUND"
                }
            );
        }
        let slowest = results.iter().map(|r| r.elapsed).max().unwrap_or_default();
        let largest = results.iter().map(|r| r.bytes).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "{} charts; slowest {:.4} s, largest {} bytes; bound < {} s and < {} bytes: {}",
            results.len(),
            slowest.as_secs_f64(),
            largest,
            bench::CHART_SECONDS_BOUND,
            bench::CHART_BYTES_BOUND,
            target(ok)
        );
        out
    };
    emit(&text)?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    if args.charts {
        return run_charts(&args);
    }
    let config = validated(load_gpu(&args.gpu)?)?;
    if args.trace {
        return run_trace(&args, &config);
    }
    if args.grouped && !args.trace && args.replay.is_none() {
        return Err(super::usage("--grouped applies to --trace and --replay"));
    }
    if let Some(trace) = &args.replay {
        let format = match (args.no_trace, args.grouped) {
            (true, _) => None,
            (false, true) => Some(TraceFormat::Grouped),
            (false, false) => Some(TraceFormat::Binary),
        };
        return run_replay(trace, args.json, format, &config);
    }
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
