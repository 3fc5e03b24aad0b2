//! `warpscope sweep INPUT --policy A,B --scoreboard X,Y -o DIR`: one trace per combination,
//! recorded on several threads with a progress bar, then the comparison table.

use super::config::{load_gpu, parse_memory_model, policy_parser, scoreboard_parser, GpuArgs};
use super::replay::KernelSelection;
use super::run::{load_workload, KernelFlags};
use super::{emit, write_file_atomically};
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::analyze::compare::{self, Compared, RowFilter};
use warpscope::analyze::Taxonomy;
use warpscope::report::html::top_stall;
use warpscope::sim::config::{GpuConfig, MemoryModel, Policy, ScoreboardKind};
use warpscope::sim::gpu::SimOptions;
use warpscope::sim::SmLimit;
use warpscope::sweep;
use warpscope::trace::{TraceFormat, DEFAULT_VERBOSITY};
use warpscope::words::count;

pub const EXAMPLES: &str = "\
Examples:
  warpscope sweep kernels/reduce.json --policy lrr,gto,two_level,barrel -o sweep-reduce
  warpscope sweep kernels/reduce.json --gpu small --policy gto,lrr \\
      --scoreboard bitmap,ranges,barriers --warps 8,16 -o sweep-small
  warpscope sweep kernels/reduce.json --policy smt,lrr --issue-width 1,2 -o sweep-smt
  warpscope sweep kernels/reduce.json --policy gto,lrr --changed --metric eligible,occupancy -o sweep-occ
  warpscope sweep kernels/matmul.json --gpu small,volta --memory ideal,fixed:200,hierarchy -o sweep-mem
  warpscope sweep tests/data/accelsim/vectoradd-100-32 --gpu volta --policy gto,lrr,two_level -o sweep-vecadd

Writes DIR/[GPU.]POLICY.SCOREBOARD[.wWARPS][.iWIDTH][.mem-MODEL].wstrace for every
combination (in the order given; GPU, .iWIDTH and .mem-MODEL only when several are given,
e.g. gto.bitmap.i2.mem-fixed200), then DIR/compare.txt and DIR/compare.csv comparing them
with the first combination as the baseline (when at least two were recorded), and
DIR/sweep.csv (always), a row per combination for plotting (combination, policy,
scoreboard, warps, issue_width, memory, gpu, cycles, ipc, warp_cycles_per_issue, top_stall,
complete, checks_ok, hazards), and prints the summary: a
line per combination (for a run of several launches, its span, then a line per launch). Each
trace can be analyzed, rendered or compared on its own; compare.txt and compare.csv list
every metric, and `warpscope compare DIR/A.wstrace DIR/B.wstrace --changed --metric PATTERN`
shows only some of them; --changed and --metric do the same for the comparison printed after
the summary. A combination that faults still leaves its (incomplete) trace, and a
launch file's expect is checked at every combination; either way the exit status is 1, as
it is when a combination cannot run (its summary line says why, its sweep.csv row is empty). A
single value of --issue-width, --memory or --gpu applies to every combination, as --sms does.
.wstrace files already in DIR that this sweep did not write are left alone, and named in a
note.

INPUT may also be an Accel-Sim trace (a directory, a kernelslist.g or a kernel-N.traceg): it
is scanned once and replayed at every combination as `warpscope replay` does (default GPU:
pascal before sm_70, hopper from sm_90, else volta), with the kernel selection flags of `replay`.";

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A launch file (.json), a kernel file (.sasm, .tgpu, .hex) with --grid and --block, or
    /// an Accel-Sim trace (directory, kernelslist.g or kernel-N.traceg).
    pub input: PathBuf,
    /// Directory for the traces and the comparison (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Policies to sweep, comma-separated (default: the GPU's).
    #[arg(long, value_delimiter = ',', value_parser = policy_parser())]
    pub policy: Vec<Policy>,
    /// Scoreboards to sweep, comma-separated (default: the GPU's).
    #[arg(long, value_delimiter = ',', value_parser = scoreboard_parser())]
    pub scoreboard: Vec<ScoreboardKind>,
    /// Warp slots per SM to sweep, comma-separated (default: the GPU's).
    #[arg(long, value_delimiter = ',', value_name = "N,...",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_WARPS as i64))]
    pub warps: Vec<u32>,
    /// Issue slots per scheduler per cycle to sweep, comma-separated (default: the GPU's);
    /// only above 1 does the smt policy issue from several warps in one cycle.
    #[arg(long, value_delimiter = ',', value_name = "N,...",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_ISSUE_WIDTH as i64))]
    pub issue_width: Vec<u32>,
    /// Global memory models to sweep, comma-separated: ideal, fixed:LATENCY, hierarchy
    /// (default: the GPU's).
    #[arg(long, value_delimiter = ',', value_name = "ideal|fixed:LAT|hierarchy,...",
          value_parser = parse_memory_model)]
    pub memory: Vec<MemoryModel>,
    /// GPU presets or JSON configs to sweep, comma-separated (default: the launch file's,
    /// else small; for an Accel-Sim trace pascal before sm_70, hopper from sm_90, else volta).
    #[arg(long, value_delimiter = ',', value_name = "NAME|FILE.json,...")]
    pub gpu: Vec<String>,
    /// Number of SMs.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=GpuConfig::MAX_SMS as i64))]
    pub sms: Option<u32>,
    /// Host threads recording at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Trace verbosity (see `record --help`); 2 adds memory events.
    #[arg(long, value_name = "0|1|2", default_value_t = DEFAULT_VERBOSITY,
          value_parser = clap::value_parser!(u8).range(0..=2))]
    pub verbosity: u8,
    /// Trace encoding: bin (default) or compact (about 40 % smaller, about half as fast to
    /// analyse; see `record --help`).
    #[arg(long, value_enum, default_value = "bin")]
    pub format: SweepFormat,
    #[command(flatten)]
    pub kernel: KernelFlags,
    /// After the summary, print the comparison's metrics whose value is not the same in every
    /// combination (compare's --changed; compare.txt and compare.csv keep every metric).
    #[arg(long)]
    pub changed: bool,
    /// After the summary, print the comparison's metrics whose section, key or label contains
    /// PATTERN, ignoring case (compare's --metric; repeatable or comma-separated).
    #[arg(long = "metric", value_delimiter = ',', value_name = "PATTERN")]
    pub metrics: Vec<String>,
    /// Timing watchdog per run [default: 50000000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: Option<u64>,
    #[command(flatten)]
    pub select: KernelSelection,
}

/// `sweep --format` values: the binary encodings (a sweep's traces are for `compare`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepFormat {
    /// The binary format (version 7).
    Bin,
    /// The binary format's version 8.
    Compact,
}

impl From<SweepFormat> for TraceFormat {
    fn from(f: SweepFormat) -> TraceFormat {
        match f {
            SweepFormat::Bin => TraceFormat::Binary,
            SweepFormat::Compact => TraceFormat::Compact,
        }
    }
}

impl SweepArgs {
    /// The GPU options a sweep takes for the GPU `gpu` (the swept ones are set per
    /// combination).
    fn gpu_args(&self, gpu: Option<&String>) -> GpuArgs {
        GpuArgs {
            gpu: gpu.cloned(),
            sms: self.sms,
            ..GpuArgs::default()
        }
    }

    /// The swept dimensions other than the GPU.
    fn dimensions(&self) -> sweep::Dimensions {
        sweep::Dimensions {
            policies: self.policy.clone(),
            scoreboards: self.scoreboard.clone(),
            warps: self.warps.clone(),
            issue_widths: self.issue_width.clone(),
            memories: self.memory.clone(),
        }
    }
}

/// The name a `--gpu` value gives its combinations: a preset's name, a config file's stem.
fn gpu_name(spec: &str) -> String {
    if GpuConfig::preset(spec).is_ok() {
        return spec.to_string();
    }
    std::path::Path::new(spec)
        .file_stem()
        .map_or_else(|| spec.to_string(), |s| s.to_string_lossy().into_owned())
}

pub fn run(args: SweepArgs) -> Result<ExitCode> {
    let (input, base) = load_workload(
        &args.input,
        &args.kernel,
        &args.select,
        args.gpu_args(args.gpu.first()),
        args.max_cycles,
        "sweeping",
    )?;
    let mut gpus = vec![sweep::SweepGpu {
        name: args
            .gpu
            .first()
            .map_or_else(|| base.name.clone(), |g| gpu_name(g)),
        config: base,
    }];
    for spec in args.gpu.iter().skip(1) {
        let gpu_args = args.gpu_args(Some(spec));
        let mut config = load_gpu(spec)?;
        gpu_args.apply(&mut config);
        gpus.push(sweep::SweepGpu {
            name: gpu_name(spec),
            config: gpu_args.validated(config)?,
        });
    }
    // Two specs of one name (a preset and a config file of its stem) would write the same
    // trace names: said here, where the specs are known, rather than as "listed twice".
    for (i, a) in args.gpu.iter().enumerate() {
        if let Some(b) = args.gpu[..i]
            .iter()
            .find(|b| *b != a && gpu_name(b) == gpu_name(a))
        {
            return Err(super::usage(format!(
                "--gpu: `{b}` and `{a}` would both name their traces {} (a config file is named by its file name's stem); give the file another name",
                gpu_name(a)
            )));
        }
    }
    // (The GPUs themselves are valid: only the swept values can make a point impossible.)
    let points = sweep::plan(&gpus, &args.dimensions()).map_err(super::usage)?;
    if points.len() < 2 {
        return Err(super::usage("a sweep needs at least two combinations: give several values to --policy, --scoreboard, --warps, --issue-width, --memory or --gpu"));
    }
    // Removed again, if it is new, when no combination could be recorded into it.
    let _made = super::OutputDir::create(&args.output)?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = SimOptions {
        max_cycles: args.max_cycles.unwrap_or(SimOptions::default().max_cycles),
        skip_idle: true,
    };
    // Drawn on stderr only when it is a terminal.
    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("a valid template"),
    );
    let progress = |done: usize, _: usize, label: &str| {
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    };
    let format = (args.format.into(), args.verbosity);
    let results = sweep::run(
        &input,
        &points,
        &args.output,
        options,
        format,
        jobs,
        &progress,
    );
    bar.finish_and_clear();
    summarize(&args, &points, &results)
}

/// Loads the traces recorded, writes `sweep.csv` and, when two or more combinations were
/// recorded, the comparison, and prints the summary: a line per combination, recorded or not.
fn summarize(
    args: &SweepArgs,
    points: &[sweep::SweepPoint],
    results: &[sweep::SweepResult],
) -> Result<ExitCode> {
    let mut failed = false;
    // The combinations whose results differ from the launch file's `expect`.
    let mut checks_failed = std::collections::BTreeSet::new();
    // The recorded combinations' traces, in plan order; per result, its trace's index there,
    // or why it has none (briefly: the whole message is in the notes).
    let mut traces = Vec::new();
    let mut rows: Vec<Result<usize, String>> = Vec::new();
    let mut notes = String::new();
    let paths: Vec<&std::path::Path> = results.iter().map(|r| r.path.as_path()).collect();
    for (r, label) in results.iter().zip(warpscope::trace_label::labels(&paths)) {
        match &r.outcome {
            Ok(recorded) => {
                if let Some(f) = &recorded.outcome.fault {
                    failed = true;
                    let _ = writeln!(notes, "{}: fault: {f}", r.label);
                }
                if let Some(checks) = recorded.checks.as_ref().filter(|c| !c.ok()) {
                    failed = true;
                    checks_failed.insert(r.label.as_str());
                    let _ = write!(notes, "{}: {}", r.label, super::run::diff(checks));
                }
                rows.push(Ok(traces.len()));
                traces.push(
                    Compared::load(&r.path, label, Taxonomy::Nsight)
                        .with_context(|| r.path.display().to_string())?,
                );
            }
            Err(e) => {
                failed = true;
                let point = points.iter().find(|p| p.label == r.label);
                let hint = match (super::launch_error(&**e), point) {
                    (Some(l), Some(p)) => super::launch_hint(l, &p.config),
                    _ => String::new(),
                };
                let _ = writeln!(notes, "{}: {e}{hint}", r.label);
                rows.push(Err(brief_reason(&**e)));
            }
        }
    }
    if traces.is_empty() {
        bail!("no combination could be recorded:\n{notes}");
    }
    // The comparison needs two runs; with one, its files are not written, and those of an
    // earlier sweep into this directory, which would not be this sweep's, go.
    let comparison = (traces.len() >= 2).then(|| compare::compare(&traces, 1));
    let comparison_files = [("compare.txt", true), ("compare.csv", false)];
    match &comparison {
        Some(c) => {
            for (name, text) in comparison_files {
                let content = match text {
                    true => compare::render_text(c),
                    false => compare::to_csv(c),
                };
                write_file_atomically(&args.output.join(name), |w| {
                    Ok(w.write_all(content.as_bytes())?)
                })?;
            }
        }
        None => {
            for (name, _) in comparison_files {
                let path = args.output.join(name);
                if path.is_file() {
                    std::fs::remove_file(&path)
                        .with_context(|| format!("removing {}", path.display()))?;
                }
            }
        }
    }
    // The rows asked for, printed after the summary; the files keep every row. A pattern that
    // matches nothing is known only now: the error comes after the files are written.
    let filter = RowFilter {
        changed: args.changed,
        metrics: args.metrics.clone(),
    };
    let picked = match (&comparison, filter.is_empty()) {
        (Some(c), false) => Some(c.clone().filtered(&filter)),
        _ => None,
    };
    let sweep_csv = sweep::to_csv(&csv_rows(points, results, &traces));
    write_file_atomically(&args.output.join("sweep.csv"), |w| {
        Ok(w.write_all(sweep_csv.as_bytes())?)
    })?;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<NAME_COLUMN$} {:>10} {:>8} {:>14}  top stall",
        "combination", "cycles", "ipc", "warp-cyc/issue"
    );
    for (r, row) in results.iter().zip(&rows) {
        let t = match row {
            Ok(i) => &traces[*i],
            Err(reason) => {
                let _ = writeln!(out, "{:<NAME_COLUMN$} not recorded: {reason}", r.label);
                continue;
            }
        };
        let name = t.label.trim_end_matches(".wstrace");
        // What the row cannot be taken for: a faulted run's figures stop where it did, a run
        // with wrong results or one that let dependencies through is not the kernel's timing
        // (why is below the table).
        let mut flags = String::new();
        if !t.analysis.complete {
            flags.push_str("  [incomplete: see below]");
        }
        if checks_failed.contains(r.label.as_str()) {
            flags.push_str("  [checks failed: see below]");
        }
        let hazards: u64 = t.analysis.launches.iter().map(|l| l.hazards).sum();
        if hazards > 0 {
            flags.push_str(&format!("  [{}]", count(hazards, "hazard", "hazards")));
        }
        match &t.analysis.launches[..] {
            [l] => summary_row(
                &mut out,
                name,
                &RunFigures::of(std::slice::from_ref(l)),
                &flags,
            ),
            launches => {
                // Launches overlap on streams: the run is their span, not their sum.
                summary_row(&mut out, name, &RunFigures::of(launches), &flags);
                for l in launches {
                    // Named as `analyze`, `compare` and `report` name a launch (its index in
                    // the trace), the kernel in what the name column leaves.
                    let launch = format!("  launch {}: ", l.index);
                    let room = NAME_COLUMN.saturating_sub(launch.len()).max(8);
                    let kernel = warpscope::kernel_name::function_within(&l.name, room);
                    let row = format!("{launch}{kernel}");
                    summary_row(&mut out, &row, &RunFigures::of(std::slice::from_ref(l)), "");
                }
            }
        }
    }
    match comparison {
        Some(_) => {
            let _ = writeln!(
                out,
                "\n{} traces, the comparison (compare.txt, compare.csv) and the table (sweep.csv) are in {}",
                traces.len(),
                args.output.display()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\n1 trace and the table (sweep.csv) are in {}; no comparison (compare.txt, compare.csv): only one of the {} combinations was recorded",
                args.output.display(),
                results.len()
            );
        }
    }
    out.push_str(&notes);
    let picked = match picked {
        Some(Ok(c)) => {
            out.push('\n');
            out.push_str(&compare::render_text(&c));
            None
        }
        Some(Err(e)) => Some(e),
        None => None,
    };
    emit(&out)?;
    if let Some(e) = picked {
        return Err(super::usage(format!(
            "--metric: {e} (the traces and the comparison are written in {})",
            args.output.display()
        )));
    }
    if traces.len() < 2 && !filter.is_empty() {
        stderr_line!("note: --changed and --metric print nothing: there is no comparison");
    }
    for note in same_cycles_notes(points, results, &traces) {
        stderr_line!("note: {note}");
    }
    if let Some(note) = warps_note(points, results, &traces) {
        stderr_line!("note: {note}");
    }
    if let Some(note) = stale_traces_note(&args.output, results) {
        stderr_line!("note: {note}");
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Why a combination recorded nothing, in a few words for its summary line: a launch the
/// GPU refused without the kernel's name (the notes under the summary say it all), else the
/// error's first line, cut.
fn brief_reason(e: &(dyn std::error::Error + 'static)) -> String {
    const ROOM: usize = 72;
    let whole = match super::launch_error(e) {
        Some(l) => {
            let text = l.to_string();
            match text
                .strip_prefix("kernel `")
                .and_then(|t| t.split_once("`: "))
            {
                Some((_, rest)) => rest.to_string(),
                None => text,
            }
        }
        None => e.to_string(),
    };
    let line = whole.lines().next().unwrap_or_default();
    match line.char_indices().nth(ROOM) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// `sweep.csv`'s rows: every combination in plan order, with its trace's figures when it
/// recorded one (`traces` are those of the combinations that did, in the same order).
fn csv_rows(
    points: &[sweep::SweepPoint],
    results: &[sweep::SweepResult],
    traces: &[Compared],
) -> Vec<sweep::CsvRow> {
    let mut traces = traces.iter();
    points
        .iter()
        .zip(results)
        .map(|(p, r)| {
            let figures = match &r.outcome {
                Ok(recorded) => traces.next().map(|t| {
                    let f = RunFigures::of(&t.analysis.launches);
                    sweep::CsvFigures {
                        cycles: f.cycles,
                        ipc: f.ipc,
                        warp_cycles_per_issue: f.warp_cycles_per_issue,
                        top_stall: f.top_stall.map(str::to_string),
                        complete: t.analysis.complete,
                        checks_ok: recorded.checks.as_ref().map(|c| c.ok()),
                        hazards: t.analysis.launches.iter().map(|l| l.hazards).sum(),
                    }
                }),
                Err(_) => None,
            };
            sweep::CsvRow {
                label: p.label.clone(),
                gpu: p.gpu.clone(),
                config: p.config.clone(),
                figures,
            }
        })
        .collect()
}

/// Why the policy made no difference, per GPU on which it made none (every GPU of the sweep
/// is looked at alone: one may reorder warps where another holds one per scheduler): how
/// many warps a scheduler ever had to choose from. A GPU's policies made no difference when
/// its combinations alike but for their policy took the same cycles, and at least two
/// policies were recorded.
fn same_cycles_notes(
    points: &[sweep::SweepPoint],
    results: &[sweep::SweepResult],
    traces: &[Compared],
) -> Vec<String> {
    // The recorded combinations, in plan order as `traces` is.
    let recorded: Vec<(&sweep::SweepPoint, &sweep::SweepResult)> = points
        .iter()
        .zip(results)
        .filter(|(_, r)| r.outcome.is_ok())
        .collect();
    if recorded.len() != traces.len() {
        return Vec::new();
    }
    let mut gpus: Vec<&str> = points.iter().map(|p| p.gpu.as_str()).collect();
    gpus.dedup();
    let several_gpus = gpus.len() > 1;
    let mut notes = Vec::new();
    for gpu in gpus {
        let on: Vec<(&sweep::SweepPoint, &sweep::SweepResult, &Compared)> = recorded
            .iter()
            .zip(traces)
            .filter(|((p, _), _)| p.gpu == gpu)
            .map(|((p, r), t)| (*p, *r, t))
            .collect();
        if let Some(note) = same_cycles_note(&on) {
            notes.push(match several_gpus {
                true => format!("on {gpu}, {note}"),
                false => note,
            });
        }
    }
    notes
}

/// [`same_cycles_notes`]'s note for the recorded combinations of one GPU, if its policies
/// made no difference.
fn same_cycles_note(on: &[(&sweep::SweepPoint, &sweep::SweepResult, &Compared)]) -> Option<String> {
    let policies: std::collections::BTreeSet<&str> = on
        .iter()
        .map(|(p, _, _)| p.config.scheduler.policy.name())
        .collect();
    if policies.len() < 2 {
        return None;
    }
    let cycles = |t: &Compared| RunFigures::of(&t.analysis.launches).cycles;
    // Combinations alike but for their policy, by what else they are.
    let mut alike: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for (p, _, t) in on {
        let mut others = p.config.clone();
        others.scheduler.policy = Policy::Gto;
        let key = serde_json::to_string(&others).ok()?;
        alike.entry(key).or_default().push(cycles(t));
    }
    let groups: Vec<&Vec<u64>> = alike.values().filter(|c| c.len() >= 2).collect();
    if groups.is_empty() || groups.iter().any(|c| c.iter().any(|&x| x != c[0])) {
        return None;
    }
    let mut most = 0;
    for (_, r, _) in on {
        most = most.max(sweep::max_warps_per_scheduler(&r.path).ok()?);
    }
    let first = cycles(on[0].2);
    let mut note = match on.iter().all(|(_, _, t)| cycles(t) == first) {
        true => format!(
            "every combination took {}, whatever the policy: ",
            count(first, "cycle", "cycles")
        ),
        false => {
            "the policy made no difference (combinations alike but for it took the same cycles): "
                .to_string()
        }
    };
    // The launch's own warps against the schedulers, when one launch is all there is.
    let grid = match &on[0].2.analysis.launches[..] {
        [l] => format!(
            " ({} on {})",
            count(l.launch.blocks * l.launch.warps_per_block, "warp", "warps"),
            count(u64::from(l.scheduler.schedulers), "scheduler", "schedulers"),
        ),
        _ => String::new(),
    };
    if most <= 1 {
        note.push_str(&format!(
            "no scheduler ever held more than one warp at a time{grid}, so the policy cannot reorder anything"
        ));
    } else {
        note.push_str(&format!(
            "at most {most} warps were resident on a scheduler at a time{grid}, and which of them each policy picked made no difference to the total"
        ));
    }
    Some(note)
}

/// Why `--warps` changed nothing, when combinations that differ only in it took the same
/// cycles: what bounds the resident warps below the smallest value given.
fn warps_note(
    points: &[sweep::SweepPoint],
    results: &[sweep::SweepResult],
    traces: &[Compared],
) -> Option<String> {
    // The recorded combinations, in plan order as `traces` is.
    let recorded: Vec<&sweep::SweepPoint> = points
        .iter()
        .zip(results)
        .filter(|(_, r)| r.outcome.is_ok())
        .map(|(p, _)| p)
        .collect();
    let warps: std::collections::BTreeSet<u32> =
        recorded.iter().map(|p| p.config.sm.max_warps).collect();
    if warps.len() < 2 || recorded.len() != traces.len() {
        return None;
    }
    // Combinations alike but for their warp slots, by what else they are.
    let mut alike: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for (p, t) in recorded.iter().zip(traces) {
        let mut others = p.config.clone();
        others.sm.max_warps = 0;
        let key = serde_json::to_string(&others).ok()?;
        alike
            .entry(key)
            .or_default()
            .push(RunFigures::of(&t.analysis.launches).cycles);
    }
    let groups: Vec<&Vec<u64>> = alike.values().filter(|c| c.len() >= 2).collect();
    if groups.is_empty() || groups.iter().any(|c| c.iter().any(|&x| x != c[0])) {
        return None;
    }
    // What the launches' occupancy was bound by at the fewest warp slots given.
    let fewest = *warps.first()?;
    let at_fewest = recorded
        .iter()
        .zip(traces)
        .find(|(p, _)| p.config.sm.max_warps == fewest)?
        .1;
    let l = at_fewest.analysis.launches.first()?;
    let o = &l.occupancy;
    let values: Vec<String> = warps.iter().map(u32::to_string).collect();
    let mut note = format!(
        "--warps {} made no difference: each setting took the same cycles as the others",
        values.join(",")
    );
    if o.limiter != SmLimit::Warps {
        note.push_str(&format!(
            "; even at --warps {fewest} an SM holds at most {:.0} warps ({} blocks), limited by {}, so more warp slots stay empty",
            o.theoretical_active_warps_per_sm,
            o.theoretical_blocks_per_sm,
            o.limiter.name().replace('_', " ")
        ));
    }
    Some(note)
}

/// The `.wstrace` files in the output directory this sweep did not write (an earlier sweep's,
/// or the user's): named, not removed, as `compare.txt` and `sweep.csv` leave them out.
fn stale_traces_note(dir: &std::path::Path, results: &[sweep::SweepResult]) -> Option<String> {
    let written: std::collections::BTreeSet<&std::path::Path> = results
        .iter()
        .filter(|r| r.outcome.is_ok())
        .map(|r| r.path.as_path())
        .collect();
    let mut stale: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wstrace") && !written.contains(p.as_path()))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if stale.is_empty() {
        return None;
    }
    stale.sort();
    let shown = stale.len().min(3);
    let mut names = stale[..shown].join(", ");
    if stale.len() > shown {
        names.push_str(", ...");
    }
    Some(format!(
        "{} in {} {} not written by this sweep ({names}); the comparison and sweep.csv leave {} out",
        count(stale.len() as u64, ".wstrace file", ".wstrace files"),
        dir.display(),
        if stale.len() == 1 { "was" } else { "were" },
        if stale.len() == 1 { "it" } else { "them" },
    ))
}

/// A summary row's figures: of one launch, or of a run of several (their span, all their
/// instructions and warp-cycles).
struct RunFigures<'a> {
    cycles: u64,
    ipc: f64,
    warp_cycles_per_issue: f64,
    top_stall: Option<&'a str>,
}

impl<'a> RunFigures<'a> {
    fn of(launches: &'a [warpscope::analyze::LaunchAnalysis]) -> RunFigures<'a> {
        if let [l] = launches {
            return RunFigures {
                cycles: l.cycles,
                ipc: l.ipc,
                warp_cycles_per_issue: l.warp_cycles_per_issued_instruction,
                // As the report's card: none when no stall has a warp-cycle (a trace without
                // warp states has none at all).
                top_stall: top_stall(l).map(|(name, _)| name),
            };
        }
        let start = launches.iter().map(|l| l.start_cycle).min().unwrap_or(0);
        let end = launches.iter().map(|l| l.end_cycle).max().unwrap_or(0);
        let cycles = end - start;
        let instructions: u64 = launches.iter().map(|l| l.warp_instructions).sum();
        let mut states = std::collections::BTreeMap::<&str, u64>::new();
        for l in launches {
            for (state, &n) in &l.warp_states {
                *states.entry(state.as_str()).or_default() += n;
            }
        }
        // (Each launch's ratio weighed by its instructions: the warp-cycles it was computed
        // from are the resident ones where states were not recorded.)
        let warp_cycles: f64 = launches
            .iter()
            .map(|l| l.warp_cycles_per_issued_instruction * l.warp_instructions as f64)
            .sum();
        let per = |n: f64, d: u64| if d == 0 { 0.0 } else { n / d as f64 };
        RunFigures {
            cycles,
            ipc: per(instructions as f64, cycles),
            warp_cycles_per_issue: per(warp_cycles, instructions),
            top_stall: states
                .iter()
                .filter(|(k, &v)| **k != "selected" && v > 0)
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(k, _)| *k),
        }
    }
}

/// The width of the summary's first column (the combination, or one of its launches).
const NAME_COLUMN: usize = 32;

fn summary_row(out: &mut String, name: &str, f: &RunFigures, flags: &str) {
    let _ = writeln!(
        out,
        "{name:<NAME_COLUMN$} {:>10} {:>8.3} {:>14.2}  {}{flags}",
        f.cycles,
        f.ipc,
        f.warp_cycles_per_issue,
        f.top_stall.unwrap_or("-")
    );
}
