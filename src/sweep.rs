//! Parameter sweeps: one launch (or one replayed Accel-Sim trace) recorded under every
//! combination of GPU, scheduling policy, scoreboard, warp slots, issue width and memory
//! model, each into its own trace, on several host threads. The traces are ordinary traces —
//! `compare` (or [`crate::analyze::compare`]) turns them into the table.
//!
//! Recording order and file names depend only on the plan, never on which thread finishes
//! first, so a sweep's output is the same bytes on any machine.

use crate::sim::config::{GpuConfig, MemoryModel, Policy, ScoreboardKind};
use crate::sim::gpu::SimOptions;
use crate::trace::TraceFormat;
use crate::workload::{Recorded, Workload, WorkloadError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One combination to record.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// `[gpu.]policy.scoreboard[.wN][.iN][.mem-MODEL]`, also the trace's file stem.
    pub label: String,
    /// The GPU's name as the sweep was given it (a preset's name, a config file's stem).
    pub gpu: String,
    pub config: GpuConfig,
}

/// A GPU to sweep on: the name its combinations carry and its config (with the overrides
/// that apply to every combination).
#[derive(Debug, Clone)]
pub struct SweepGpu {
    pub name: String,
    pub config: GpuConfig,
}

/// The values each swept dimension takes; an empty list keeps the GPU's value.
#[derive(Debug, Clone, Default)]
pub struct Dimensions {
    pub policies: Vec<Policy>,
    pub scoreboards: Vec<ScoreboardKind>,
    /// Warp slots per SM; given at all, every label says it (`.wN`).
    pub warps: Vec<u32>,
    /// Issue slots per scheduler per cycle; in the labels only when several are given.
    pub issue_widths: Vec<u32>,
    /// Global memory models; in the labels only when several are given.
    pub memories: Vec<MemoryModel>,
}

/// The name `--memory` takes for a memory model: `ideal`, `fixed:LATENCY`, `hierarchy`.
pub fn memory_name(m: MemoryModel) -> String {
    match m {
        MemoryModel::Ideal => "ideal".into(),
        MemoryModel::Fixed { latency } => format!("fixed:{latency}"),
        MemoryModel::Hierarchy => "hierarchy".into(),
    }
}

/// A memory model as a label part: `mem-ideal`, `mem-fixed200`, `mem-hierarchy` (no colon: it
/// is part of a file name).
pub fn memory_label(m: MemoryModel) -> String {
    format!("mem-{}", memory_name(m).replace(':', ""))
}

/// The first value `values` lists more than once.
fn repeated<T: PartialEq>(values: &[T]) -> Option<&T> {
    values
        .iter()
        .enumerate()
        .find(|(i, v)| values[..*i].contains(v))
        .map(|(_, v)| v)
}

/// The values to take: the list, or the base's one value when the list is empty.
fn or_base<T: Copy>(values: &[T], base: T) -> Vec<T> {
    if values.is_empty() {
        vec![base]
    } else {
        values.to_vec()
    }
}

/// The combinations of `gpus × policies × scoreboards × warps × issue widths × memories`, in
/// that nesting order. A dimension adds to the label only when it varies (a GPU's name
/// prefixes it when there are several; `.wN` whenever warps are given, as it always has), so
/// labels are unique, and a single value applies to every combination. Each config is
/// validated; a value listed twice is an error.
pub fn plan(gpus: &[SweepGpu], dims: &Dimensions) -> Result<Vec<SweepPoint>, String> {
    // Two equal points would be one trace written twice, its file raced for by the jobs.
    if let Some(p) = repeated(&dims.policies) {
        let mut e = format!("--policy lists {} twice", p.name());
        // `fine lrr` lists lrr twice only through seed 004's other name for it.
        if let Some((alias, _)) = Policy::STUDY_ALIASES.iter().find(|(_, q)| q == p) {
            e.push_str(&format!(" (`{alias}` is another name for {})", p.name()));
        }
        return Err(e);
    }
    if let Some(s) = repeated(&dims.scoreboards) {
        return Err(format!("--scoreboard lists {} twice", s.name()));
    }
    if let Some(w) = repeated(&dims.warps) {
        return Err(format!("--warps lists {w} twice"));
    }
    if let Some(w) = repeated(&dims.issue_widths) {
        return Err(format!("--issue-width lists {w} twice"));
    }
    if let Some(m) = repeated(&dims.memories) {
        return Err(format!("--memory lists {} twice", memory_name(*m)));
    }
    let names: Vec<&String> = gpus.iter().map(|g| &g.name).collect();
    if let Some(name) = repeated(&names) {
        return Err(format!("--gpu lists {name} twice"));
    }
    let mut out = Vec::new();
    for gpu in gpus {
        let base = &gpu.config;
        let warps: Vec<Option<u32>> = if dims.warps.is_empty() {
            vec![None]
        } else {
            dims.warps.iter().copied().map(Some).collect()
        };
        for &policy in &or_base(&dims.policies, base.scheduler.policy) {
            for &scoreboard in &or_base(&dims.scoreboards, base.scheduler.scoreboard) {
                for &w in &warps {
                    for &width in &or_base(&dims.issue_widths, base.sm.issue_width) {
                        for &memory in &or_base(&dims.memories, base.memory.model) {
                            let mut config = base.clone();
                            config.scheduler.policy = policy;
                            config.scheduler.scoreboard = scoreboard;
                            config.sm.issue_width = width;
                            config.memory.model = memory;
                            let mut label = String::new();
                            if gpus.len() > 1 {
                                label.push_str(&format!("{}.", gpu.name));
                            }
                            label.push_str(&format!("{}.{}", policy.name(), scoreboard.name()));
                            if let Some(w) = w {
                                config.sm.max_warps = w;
                                label.push_str(&format!(".w{w}"));
                            }
                            if dims.issue_widths.len() > 1 {
                                label.push_str(&format!(".i{width}"));
                            }
                            if dims.memories.len() > 1 {
                                label.push('.');
                                label.push_str(&memory_label(memory));
                            }
                            config.validate().map_err(|e| format!("{label}: {e}"))?;
                            out.push(SweepPoint {
                                label,
                                gpu: gpu.name.clone(),
                                config,
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What one point produced.
#[derive(Debug)]
pub struct SweepResult {
    pub label: String,
    pub path: PathBuf,
    pub outcome: Result<Recorded, WorkloadError>,
}

/// Records `input` at every point into `dir/LABEL.wstrace` (in `format`, at `verbosity`) on up
/// to `threads` threads, calling `progress(done, total, label)` as each finishes. Results come
/// back in plan order.
pub fn run(
    input: &Workload,
    points: &[SweepPoint],
    dir: &Path,
    options: SimOptions,
    (format, verbosity): (TraceFormat, u8),
    threads: usize,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Vec<SweepResult> {
    run_points(points, dir, threads, progress, &|point, path| {
        input.record(&point.config, options, path, format, verbosity)
    })
}

/// Runs `record_one(point, dir/LABEL.wstrace)` for every point on up to `threads` threads.
fn run_points(
    points: &[SweepPoint],
    dir: &Path,
    threads: usize,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
    record_one: &(dyn Fn(&SweepPoint, &Path) -> Result<Recorded, WorkloadError> + Sync),
) -> Vec<SweepResult> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<SweepResult>>> =
        Mutex::new((0..points.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, points.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(point) = points.get(i) else { break };
                let path = dir.join(format!("{}.wstrace", point.label));
                let outcome = record_one(point, &path);
                let result = SweepResult {
                    label: point.label.clone(),
                    path,
                    outcome,
                };
                results.lock().expect("no thread panicked")[i] = Some(result);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(n, points.len(), &point.label);
            });
        }
    });
    results
        .into_inner()
        .expect("no thread panicked")
        .into_iter()
        .map(|r| r.expect("every point ran"))
        .collect()
}

/// One row of `sweep.csv`: a combination's dimensions and its figures (all `None` for a
/// combination that recorded nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct CsvRow {
    pub label: String,
    pub gpu: String,
    pub config: GpuConfig,
    pub figures: Option<CsvFigures>,
}

/// What a recorded combination measured (a run of several launches: their span).
#[derive(Debug, Clone, PartialEq)]
pub struct CsvFigures {
    pub cycles: u64,
    pub ipc: f64,
    pub warp_cycles_per_issue: f64,
    /// The state with the most warp-cycles other than `selected`; none when no stall has any.
    pub top_stall: Option<String>,
    /// Whether the run finished (not stopped by the watchdog or a fault).
    pub complete: bool,
    /// The launch file's `expect`: none when there is none to check (no `expect`, a fault,
    /// a replay).
    pub checks_ok: Option<bool>,
    pub hazards: u64,
}

/// `sweep.csv`'s header line.
pub const CSV_HEADER: &str = "combination,policy,scoreboard,warps,issue_width,memory,gpu,cycles,ipc,warp_cycles_per_issue,top_stall,complete,checks_ok,hazards";

/// `sweep.csv`: one row per combination in plan order, every dimension in its own column
/// (whether it was swept or not), then the figures; empty where there is no value.
pub fn to_csv(rows: &[CsvRow]) -> String {
    use crate::analyze::flat::csv_field;
    use std::fmt::Write as _;
    let mut out = format!("{CSV_HEADER}\n");
    for r in rows {
        let c = &r.config;
        let _ = write!(
            out,
            "{},{},{},{},{},{},{}",
            csv_field(&r.label),
            c.scheduler.policy.name(),
            c.scheduler.scoreboard.name(),
            c.sm.max_warps,
            c.sm.issue_width,
            memory_name(c.memory.model),
            csv_field(&r.gpu),
        );
        match &r.figures {
            Some(f) => {
                let _ = writeln!(
                    out,
                    ",{},{:.6},{:.6},{},{},{},{}",
                    f.cycles,
                    f.ipc,
                    f.warp_cycles_per_issue,
                    csv_field(f.top_stall.as_deref().unwrap_or("")),
                    f.complete,
                    f.checks_ok.map_or(String::new(), |ok| ok.to_string()),
                    f.hazards,
                );
            }
            None => out.push_str(",,,,,,,\n"),
        }
    }
    out
}

/// The most warps that were ever resident and not yet exited at once on one scheduler of the
/// trace at `path` (from its warp launch and exit events, which every verbosity records).
pub fn max_warps_per_scheduler(path: &Path) -> Result<u32, crate::trace::TraceError> {
    use crate::trace::{Event, TraceReader};
    use std::collections::HashMap;
    let mut reader = TraceReader::open(path)?;
    // Per warp slot (SM, slot): its scheduler; per scheduler (SM, scheduler): its warps now.
    let mut slots: HashMap<(u32, u32), u32> = HashMap::new();
    let mut live: HashMap<(u32, u32), u32> = HashMap::new();
    let mut most = 0;
    reader.for_each_event(|e| match e {
        Event::WarpLaunch { warp, info, .. } => {
            slots.insert((warp.sm, warp.slot), info.scheduler);
            let n = live.entry((warp.sm, info.scheduler)).or_default();
            *n += 1;
            most = most.max(*n);
        }
        Event::WarpExit { warp, .. } => {
            if let Some(s) = slots.remove(&(warp.sm, warp.slot)) {
                if let Some(n) = live.get_mut(&(warp.sm, s)) {
                    *n = n.saturating_sub(1);
                }
            }
        }
        _ => {}
    })?;
    Ok(most)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Vec<SweepGpu> {
        vec![SweepGpu {
            name: "small".into(),
            config: GpuConfig::preset("small").unwrap(),
        }]
    }

    fn labels(gpus: &[SweepGpu], dims: &Dimensions) -> Vec<String> {
        plan(gpus, dims)
            .unwrap()
            .into_iter()
            .map(|p| p.label)
            .collect()
    }

    #[test]
    fn labels_name_only_the_dimensions_given_several_values() {
        let dims = Dimensions {
            policies: vec![Policy::Gto, Policy::Lrr],
            ..Dimensions::default()
        };
        assert_eq!(labels(&small(), &dims), ["gto.bitmap", "lrr.bitmap"]);
        // One issue width, one memory model: every combination takes them, no label says so.
        let one = Dimensions {
            issue_widths: vec![2],
            memories: vec![MemoryModel::Ideal],
            ..dims.clone()
        };
        let points = plan(&small(), &one).unwrap();
        assert_eq!(points[1].label, "lrr.bitmap");
        assert_eq!(points[1].config.sm.issue_width, 2);
        assert_eq!(points[1].config.memory.model, MemoryModel::Ideal);
        let several = Dimensions {
            warps: vec![8],
            issue_widths: vec![1, 2],
            memories: vec![MemoryModel::Fixed { latency: 200 }, MemoryModel::Hierarchy],
            ..dims.clone()
        };
        assert_eq!(
            labels(&small(), &several)[..4],
            [
                "gto.bitmap.w8.i1.mem-fixed200",
                "gto.bitmap.w8.i1.mem-hierarchy",
                "gto.bitmap.w8.i2.mem-fixed200",
                "gto.bitmap.w8.i2.mem-hierarchy",
            ]
        );
        let mut gpus = small();
        gpus.push(SweepGpu {
            name: "volta".into(),
            config: GpuConfig::preset("volta").unwrap(),
        });
        let points = plan(&gpus, &dims).unwrap();
        let names: Vec<_> = points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            names,
            [
                "small.gto.bitmap",
                "small.lrr.bitmap",
                "volta.gto.bitmap",
                "volta.lrr.bitmap"
            ]
        );
        assert_eq!(points[3].gpu, "volta");
        assert_eq!(points[3].config.num_sms, 4);
    }

    #[test]
    fn a_value_listed_twice_is_refused() {
        let twice = |dims: Dimensions| plan(&small(), &dims).unwrap_err();
        assert_eq!(
            twice(Dimensions {
                issue_widths: vec![1, 2, 1],
                ..Dimensions::default()
            }),
            "--issue-width lists 1 twice"
        );
        assert_eq!(
            twice(Dimensions {
                memories: vec![MemoryModel::Fixed { latency: 9 }; 2],
                ..Dimensions::default()
            }),
            "--memory lists fixed:9 twice"
        );
        let mut gpus = small();
        gpus.extend(small());
        assert_eq!(
            plan(&gpus, &Dimensions::default()).unwrap_err(),
            "--gpu lists small twice"
        );
    }

    #[test]
    fn csv_rows_keep_every_dimension_and_leave_missing_figures_empty() {
        let config = GpuConfig::preset("small").unwrap();
        let rows = [
            CsvRow {
                label: "gto.bitmap".into(),
                gpu: "small".into(),
                config: config.clone(),
                figures: Some(CsvFigures {
                    cycles: 100,
                    ipc: 0.5,
                    warp_cycles_per_issue: 12.25,
                    top_stall: Some("long_scoreboard".into()),
                    complete: true,
                    checks_ok: None,
                    hazards: 0,
                }),
            },
            CsvRow {
                label: "lrr.bitmap".into(),
                gpu: "my,gpu".into(),
                config,
                figures: None,
            },
        ];
        assert_eq!(
            to_csv(&rows),
            format!(
                "{CSV_HEADER}\n\
                 gto.bitmap,gto,bitmap,8,1,hierarchy,small,100,0.500000,12.250000,long_scoreboard,true,,0\n\
                 lrr.bitmap,gto,bitmap,8,1,hierarchy,\"my,gpu\",,,,,,,\n"
            )
        );
    }
}
