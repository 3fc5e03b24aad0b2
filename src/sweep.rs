//! Parameter sweeps: one launch (or one replayed Accel-Sim trace) recorded under every
//! combination of scheduling policy, scoreboard and warp slots, each into its own trace, on
//! several host threads. The traces are
//! ordinary traces — `compare` (or [`crate::analyze::compare`]) turns them into the table.
//!
//! Recording order and file names depend only on the plan, never on which thread finishes
//! first, so a sweep's output is the same bytes on any machine.

use crate::sim::config::{GpuConfig, Policy, ScoreboardKind};
use crate::sim::gpu::SimOptions;
use crate::trace::TraceFormat;
use crate::workload::{Recorded, Workload, WorkloadError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One combination to record.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// `policy.scoreboard[.wN]`, also the trace's file stem.
    pub label: String,
    pub config: GpuConfig,
}

/// The first value `values` lists more than once.
fn repeated<T: PartialEq>(values: &[T]) -> Option<&T> {
    values
        .iter()
        .enumerate()
        .find(|(i, v)| values[..*i].contains(v))
        .map(|(_, v)| v)
}

/// The combinations of `policies × scoreboards × warps` on `base`, in that nesting order; an
/// empty list keeps the base config's value. Each config is validated; a value listed twice
/// is an error.
pub fn plan(
    base: &GpuConfig,
    policies: &[Policy],
    scoreboards: &[ScoreboardKind],
    warps: &[u32],
) -> Result<Vec<SweepPoint>, String> {
    // Two equal points would be one trace written twice, its file raced for by the jobs.
    if let Some(p) = repeated(policies) {
        let mut e = format!("--policy lists {} twice", p.name());
        // `fine lrr` lists lrr twice only through seed 004's other name for it.
        if let Some((alias, _)) = Policy::STUDY_ALIASES.iter().find(|(_, q)| q == p) {
            e.push_str(&format!(" (`{alias}` is another name for {})", p.name()));
        }
        return Err(e);
    }
    if let Some(s) = repeated(scoreboards) {
        return Err(format!("--scoreboard lists {} twice", s.name()));
    }
    if let Some(w) = repeated(warps) {
        return Err(format!("--warps lists {w} twice"));
    }
    let policies = if policies.is_empty() {
        vec![base.scheduler.policy]
    } else {
        policies.to_vec()
    };
    let scoreboards = if scoreboards.is_empty() {
        vec![base.scheduler.scoreboard]
    } else {
        scoreboards.to_vec()
    };
    let warps: Vec<Option<u32>> = if warps.is_empty() {
        vec![None]
    } else {
        warps.iter().copied().map(Some).collect()
    };
    let mut out = Vec::new();
    for &policy in &policies {
        for &scoreboard in &scoreboards {
            for &w in &warps {
                let mut config = base.clone();
                config.scheduler.policy = policy;
                config.scheduler.scoreboard = scoreboard;
                let mut label = format!("{}.{}", policy.name(), scoreboard.name());
                if let Some(w) = w {
                    config.sm.max_warps = w;
                    label.push_str(&format!(".w{w}"));
                }
                config.validate().map_err(|e| format!("{label}: {e}"))?;
                out.push(SweepPoint { label, config });
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
