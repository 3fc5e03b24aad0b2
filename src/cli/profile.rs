//! `warpscope profile [INPUT]`: record, analyze and report in one step, then print the key
//! figures and where the report is. Without INPUT it profiles the bundled reduction example
//! (written next to the report, so it can be edited and profiled again).

use super::config::GpuArgs;
use super::emit;
use super::replay::KernelSelection;
use super::report::{write_report, FigureArgs};
use super::run::{load_workload, KernelFlags};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use warpscope::report;
use warpscope::sim::gpu::SimOptions;
use warpscope::trace::TraceFormat;

pub const EXAMPLES: &str = "\
Examples:
  warpscope profile                                  # the bundled example (reduce on small)
  warpscope profile kernels/matmul.json --gpu volta -o matmul-report
  warpscope profile kernels/reduce.json --policy lrr
  warpscope profile kernels/vecadd.sasm --grid 8 --block 128 \\
      --param a=0x10000 --param b=0x20000 --param c=0x30000 --param n=1000
  warpscope profile tests/data/accelsim/v5-ampere-reduce --gpu volta   # a trace from a real GPU

Records the run with memory events (verbosity 2) to DIR/KERNEL.wstrace, writes the report
(DIR/index.html, report.txt, report.json) and prints the key figures: cycles, IPC, warp
cycles per issued instruction, the top stalls, occupancy and the rule hints. DIR defaults to
profile-KERNEL. A launch file's expect is checked as `run` checks it. A kernel fault still
gives a (partial) report, and failed checks a full one; the exit status is then 1.
INPUT may also be an Accel-Sim trace (a directory, a kernelslist.g or a kernel-N.traceg),
replayed as `warpscope replay` does (default GPU: pascal before sm_70, hopper from sm_90,
else volta) with its kernel selection flags.";

const EXAMPLE_LAUNCH: &str = include_str!("../../kernels/reduce.json");
const EXAMPLE_KERNEL: &str = include_str!("../../kernels/reduce.sasm");

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// A launch file (.json), a kernel file (.sasm, .tgpu, .hex) with --grid and --block, or
    /// an Accel-Sim trace (directory, kernelslist.g or kernel-N.traceg). Default: the bundled
    /// reduction example.
    pub input: Option<PathBuf>,
    /// Directory for the trace and the report [default: profile-KERNEL].
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub kernel: KernelFlags,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Timing watchdog: stop with a fault after N cycles [default: 50000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub select: KernelSelection,
    #[command(flatten)]
    pub figures: FigureArgs,
}

/// The name of what is profiled: the file's stem, or the trace directory of a kernel list.
fn stem(p: &Path) -> String {
    let named = match p.file_name() {
        Some(f) if f == "kernelslist.g" => p.parent().and_then(Path::file_name),
        _ => p.file_stem(),
    };
    named.map_or_else(|| "kernel".into(), |s| s.to_string_lossy().into_owned())
}

pub fn run(args: ProfileArgs) -> Result<ExitCode> {
    args.figures.check()?;
    let (input, dir) = match &args.input {
        Some(input) => {
            let dir = args
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("profile-{}", stem(input))));
            (input.clone(), dir)
        }
        None => {
            let dir = args
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from("profile-reduce"));
            let example = dir.join("example");
            std::fs::create_dir_all(&example)
                .with_context(|| format!("creating {}", example.display()))?;
            std::fs::write(example.join("reduce.json"), EXAMPLE_LAUNCH)
                .and_then(|()| std::fs::write(example.join("reduce.sasm"), EXAMPLE_KERNEL))
                .with_context(|| format!("writing the example into {}", example.display()))?;
            (example.join("reduce.json"), dir)
        }
    };
    let (source, config) = load_workload(
        &input,
        &args.kernel,
        &args.select,
        args.gpu,
        args.max_cycles,
        "profiling",
    )?;
    // Removed again, if it is new, when nothing could be written into it.
    let _made = super::OutputDir::create(&dir)?;
    let trace_path = dir.join(format!("{}.wstrace", stem(&input)));
    let options = SimOptions {
        max_cycles: args.max_cycles.unwrap_or(SimOptions::default().max_cycles),
        skip_idle: true,
    };

    // Drawn on stderr only when it is a terminal; the run happens on a second thread.
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
    );
    spinner.set_message(format!("simulating {} on {}", stem(&input), config.name));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let outcome = source
        .record(&config, options, &trace_path, TraceFormat::Binary, 2)
        .map_err(|e| match super::launch_error(&*e) {
            // Nothing was recorded: the input does not run on this GPU, as `run` says.
            Some(l) => super::launch_failure(&input, l, &config),
            None => anyhow::anyhow!(e).context(format!("recording {}", trace_path.display())),
        });
    spinner.set_message("analyzing and rendering the report");
    let recorded = outcome?;
    let outcome = &recorded.outcome;
    let built = report::build(std::slice::from_ref(&trace_path), args.figures.layout.width);
    spinner.finish_and_clear();
    let built = built?;
    let index = write_report(&dir, &built, &args.figures)?;

    let mut out = String::new();
    let t = &built.traces[0];
    let _ = writeln!(
        out,
        "profiled {} on {} ({} SMs, policy {}, scoreboard {})",
        input.display(),
        config.name,
        config.num_sms,
        config.scheduler.policy.name(),
        config.scheduler.scoreboard.name()
    );
    for l in &t.analysis.launches {
        let total: u64 = l.warp_states.values().sum();
        let _ = writeln!(
            out,
            "\n{}: {} cycles, {} warp instructions, IPC {:.3}, {:.2} warp cycles per issued instruction",
            l.signature, l.cycles, l.warp_instructions, l.ipc, l.warp_cycles_per_issued_instruction
        );
        let mut stalls: Vec<_> = l
            .warp_states
            .iter()
            .filter(|(k, &v)| k.as_str() != "selected" && v > 0)
            .collect();
        stalls.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = stalls
            .iter()
            .take(3)
            .map(|(k, &v)| match v as f64 * 100.0 / total.max(1) as f64 {
                // (Some cycles, but fewer than the half per cent "0%" would round.)
                pct if pct < 0.5 => format!("{k} <1%"),
                pct => format!("{k} {pct:.0}%"),
            })
            .collect();
        if !top.is_empty() {
            let _ = writeln!(out, "  top stalls: {}", top.join(", "));
        }
        // Achieved occupancy averages over the whole launch, which a partial run does not
        // have (its hints drop `achieved_occupancy` for the same reason).
        let _ = match l.completed {
            true => writeln!(
                out,
                "  occupancy: achieved {:.1}% of theoretical {:.1}% (limiter: {})",
                l.occupancy.achieved_pct, l.occupancy.theoretical_pct, l.occupancy.limiter
            ),
            false => writeln!(
                out,
                "  occupancy: theoretical {:.1}% (limiter: {}); achieved not known, the launch did not complete",
                l.occupancy.theoretical_pct, l.occupancy.limiter
            ),
        };
        // Every warp-cycle is charged to an instruction, so the hottest one is where the
        // launch spends most of its time, whatever the kernel was written in.
        let hottest = |cycles: u64, state: &Option<String>| {
            format!(
                "{:.0}% of warp-cycles, mostly {}",
                cycles as f64 * 100.0 / total.max(1) as f64,
                state.as_deref().unwrap_or("-")
            )
        };
        if let Some(s) = l.source.iter().max_by(|a, b| {
            a.total_warp_cycles
                .cmp(&b.total_warp_cycles)
                .then(b.pc.cmp(&a.pc))
        }) {
            let _ = writeln!(
                out,
                "  hottest instruction: {}: {}",
                warpscope::analyze::rules::site(l, s.pc),
                hottest(s.total_warp_cycles, &s.top_state)
            );
        }
        if let Some(c) = l.cuda_source.iter().max_by(|a, b| {
            a.total_warp_cycles
                .cmp(&b.total_warp_cycles)
                .then(b.line.cmp(&a.line))
        }) {
            let _ = writeln!(
                out,
                "  hottest CUDA line: {} ({})",
                c.line,
                hottest(c.total_warp_cycles, &c.top_state)
            );
        }
        for h in &l.hints {
            let _ = writeln!(out, "  {} {}: {}", h.severity.label(), h.rule, h.message);
        }
    }
    let _ = writeln!(out, "\ntrace:  {}", trace_path.display());
    let _ = writeln!(out, "report: {}", index.display());
    if let Some(checks) = &recorded.checks {
        let _ = writeln!(
            out,
            "checks: {} passed, {} failed",
            checks.passed, checks.failed
        );
    }
    if let Some(f) = &outcome.fault {
        let _ = writeln!(out, "\nthe run faulted (the report is partial): {f}");
    }
    emit(&out)?;
    // A run whose results are wrong is not the kernel's timing: the report is written, but
    // the exit status says so, as `run` and `record` do.
    let checks_failed = recorded.checks.as_ref().is_some_and(|c| !c.ok());
    if let Some(checks) = recorded.checks.as_ref().filter(|c| !c.ok()) {
        stderr_text!("{}", super::run::diff(checks));
    }
    Ok(if outcome.fault.is_some() || checks_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
