//! The simulator's pipe-group reports, expanded by `trace::groups`, are exactly the per-warp
//! state changes it reports otherwise: same events, same order, for every bundled kernel under
//! every policy and scoreboard, and for replayed Accel-Sim traces.

mod common;

use common::kernels::{generated_launch, kernel_source, line_strategy, small_gpu};
use std::path::{Path, PathBuf};
use warpscope::isa::Pipe;
use warpscope::launchfile::LaunchFile;
use warpscope::sim::config::{GpuConfig, Policy, ScoreboardKind};
use warpscope::sim::gpu::{simulate_with_source, SimOptions};
use warpscope::sim::memory::GlobalMemory;
use warpscope::sim::observer::{WarpRef, WarpState};
use warpscope::sim::stream::{InstructionSource, NoReplay};
use warpscope::sim::KernelLaunch;
use warpscope::trace::event::Event;
use warpscope::trace::groups::{GroupExpander, PipeGroups};
use warpscope::trace::{TraceFormat, TraceReader};

/// Runs the same simulation with per-warp reports and with pipe groups; asserts the expanded
/// stream is the per-warp one. Returns (state changes, group changes) of the run.
fn same_events<'s>(
    what: &str,
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &GlobalMemory,
    source: &mut dyn FnMut() -> Box<dyn InstructionSource + 's>,
) -> (usize, u64) {
    let options = SimOptions::default();
    let mut plain: Vec<Event> = Vec::new();
    let mut mem = memory.clone();
    let plain_report = simulate_with_source(
        config,
        launches,
        &mut mem,
        options,
        &mut *source(),
        &mut plain,
    );
    let mut grouped = PipeGroups::new(Vec::new());
    let mut mem = memory.clone();
    let grouped_report = simulate_with_source(
        config,
        launches,
        &mut mem,
        options,
        &mut *source(),
        &mut grouped,
    );
    assert_eq!(
        format!("{plain_report:?}"),
        format!("{grouped_report:?}"),
        "{what}: the run itself differs"
    );
    let changes = grouped.group_changes();
    let expanded = grouped.finish();
    let states = plain
        .iter()
        .filter(|e| matches!(e, Event::WarpState { .. }))
        .count();
    if let Some(at) = plain.iter().zip(&expanded).position(|(a, b)| a != b) {
        let from = at.saturating_sub(4);
        panic!(
            "{what}: event {at} differs\nper warp: {:#?}\ngrouped: {:#?}",
            &plain[from..(at + 4).min(plain.len())],
            &expanded[from..(at + 4).min(expanded.len())]
        );
    }
    assert_eq!(plain.len(), expanded.len(), "{what}: event counts differ");
    (states, changes)
}

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

fn launch_file(name: &str) -> LaunchFile {
    LaunchFile::load(&kernels_dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn kernel_matrix(kernels: &[&str], gpus: &[&str], policies: &[Policy], boards: &[ScoreboardKind]) {
    let mut grouped_runs = 0;
    for &kernel in kernels {
        let lf = launch_file(kernel);
        let launches = lf.kernel_launches();
        let memory = lf.initial_memory();
        for &gpu in gpus {
            for &policy in policies {
                for &board in boards {
                    let mut config = GpuConfig::preset(gpu).unwrap();
                    config.scheduler.policy = policy;
                    config.scheduler.scoreboard = board;
                    let what = format!("{kernel} on {gpu}, {} / {}", policy.name(), board.name());
                    let (_, changes) = same_events(&what, &config, &launches, &memory, &mut || {
                        Box::new(NoReplay)
                    });
                    grouped_runs += (changes > 0) as u32;
                }
            }
        }
    }
    // The check means something only if groups were used.
    assert!(grouped_runs > 0, "no run reported a pipe group");
}

#[test]
fn grouped_reports_expand_to_the_per_warp_ones_for_the_bundled_kernels() {
    let kernels = [
        "vecadd_tiny.json",
        "divergent.json",
        "loop.json",
        "matmul.json",
        "mufu.json",
        "reduce.json",
        "vecadd.json",
    ];
    kernel_matrix(
        &kernels,
        &["tiny", "small", "volta"],
        &Policy::ALL,
        &ScoreboardKind::ALL,
    );
}

#[test]
fn grouped_reports_expand_to_the_per_warp_ones_for_replayed_traces() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/accelsim");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    traces.sort();
    assert!(
        traces.len() >= 3,
        "expected the test traces, found {traces:?}"
    );
    for trace in &traces {
        let input = warpscope::replay::open(trace).unwrap();
        let launches = input.launches();
        for gpu in ["volta", "hopper"] {
            let config = GpuConfig::preset(gpu).unwrap();
            let what = format!("{} on {gpu}", trace.display());
            same_events(
                &what,
                &config,
                &launches,
                &GlobalMemory::default(),
                &mut || Box::new(input.source().unwrap()),
            );
        }
    }
}

/// Runs `scripts/gen-accelsim-trace.py` with `args` into a fresh directory.
fn generated(name: &str, args: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("warpscope-groups-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-accelsim-trace.py");
    let o = std::process::Command::new("python3")
        .arg(&script)
        .args(args)
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("python3 runs scripts/gen-accelsim-trace.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

fn replay_matrix(traces: &[PathBuf], gpus: &[&str]) -> (usize, u64) {
    let (mut states, mut changes) = (0, 0);
    for trace in traces {
        let input = warpscope::replay::open(trace).unwrap();
        let launches = input.launches();
        for &gpu in gpus {
            let config = GpuConfig::preset(gpu).unwrap();
            let what = format!("{} on {gpu}", trace.display());
            let (s, c) = same_events(
                &what,
                &config,
                &launches,
                &GlobalMemory::default(),
                &mut || Box::new(input.source().unwrap()),
            );
            states += s;
            changes += c;
        }
    }
    (states, changes)
}

#[test]
fn grouped_reports_expand_to_the_per_warp_ones_for_generated_traces() {
    let fma = generated("fma", &["--elements", "20000", "--fma-trips", "6"]);
    let vecadd = generated("vecadd", &["--elements", "60000", "--block", "128"]);
    let (states, changes) = replay_matrix(&[fma.clone(), vecadd.clone()], &["small", "volta"]);
    // The compute-bound loop is where groups matter: most changes go in them.
    assert!(
        changes > 1000 && (changes as usize) < states / 4,
        "{changes} group changes, {states} state changes"
    );
    for dir in [fma, vecadd] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn version_6_replays_read_back_as_the_per_warp_events() {
    let fma = generated("fma6", &["--elements", "20000", "--fma-trips", "6"]);
    let vecadd = generated("vecadd6", &["--elements", "60000", "--block", "128"]);
    for trace in [&fma, &vecadd] {
        let input = warpscope::replay::open(trace).unwrap();
        let launches = input.launches();
        let config = GpuConfig::preset("volta").unwrap();
        let mut per_warp: Vec<Event> = Vec::new();
        let mut source = input.source().unwrap();
        let mut memory = GlobalMemory::default();
        let options = SimOptions::default();
        simulate_with_source(
            &config,
            &launches,
            &mut memory,
            options,
            &mut source,
            &mut per_warp,
        )
        .unwrap();
        // Verbosity 1: no memory events, as `per_warp` would have at verbosity 1.
        per_warp.retain(|e| e.kind().min_verbosity() <= 1);
        let path = trace.join("out.wstrace");
        let out =
            warpscope::replay::replay(&config, &input, options, &path, TraceFormat::Grouped, 1)
                .unwrap();
        let mut reader = TraceReader::open(&path).unwrap();
        let events: Vec<Event> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        assert_eq!(reader.complete(), Some(true));
        assert_eq!(events.len(), per_warp.len(), "{}", trace.display());
        assert!(events == per_warp, "{}: the events differ", trace.display());
        assert!(
            out.record.events < per_warp.len() as u64,
            "{}: {} events stored for {}",
            trace.display(),
            out.record.events,
            per_warp.len()
        );
    }
    for dir in [fma, vecadd] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn a_group_change_is_merged_into_its_pass_in_launch_order() {
    let mut x = GroupExpander::new();
    let w = |slot| WarpRef { sm: 0, slot };
    let mut out = Vec::new();
    for slot in 0..4 {
        x.launch(w(slot), 0);
    }
    // Warps 0, 2 and 3 join the FMA group at cycle 1.
    let busy = WarpState::PipeBusy { pipe: Pipe::Fma };
    for slot in [0, 2, 3] {
        x.state(1, w(slot), busy, Some(Pipe::Fma), &mut |c, w, s| {
            out.push((c, w.slot, s))
        });
    }
    x.state(1, w(1), WarpState::StallCount, None, &mut |c, w, s| {
        out.push((c, w.slot, s))
    });
    out.clear();
    // At cycle 2 the pipe frees; warp 2 is reported by name in the same pass, warp 1 too.
    let mut emit = |c, w: WarpRef, s| out.push((c, w.slot, s));
    x.pipe_state(2, 0, 0, Pipe::Fma, WarpState::NotSelected, &mut emit);
    x.state(2, w(1), WarpState::NotSelected, None, &mut emit);
    x.state(2, w(2), WarpState::Selected, None, &mut emit);
    x.flush(&mut emit);
    assert_eq!(
        out,
        vec![
            (2, 0, WarpState::NotSelected),
            (2, 1, WarpState::NotSelected),
            (2, 2, WarpState::Selected),
            (2, 3, WarpState::NotSelected),
        ]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 500,
        rng_seed: proptest::test_runner::RngSeed::Fixed(11),
        ..Default::default()
    })]

    /// Generated kernels (see `tests/common/kernels.rs`) under the policies whose passes
    /// report pipe groups and every scoreboard, with short queues so that warps throttle:
    /// the group reports expand to the per-warp ones, event for event, whatever the run does
    /// — finish, deadlock or fault.
    #[test]
    fn grouped_reports_expand_to_the_per_warp_ones_for_generated_kernels(
        lines in proptest::collection::vec(line_strategy(), 1..20),
        policy in 0usize..3,
        board in 0usize..ScoreboardKind::ALL.len(),
        grid in 1u32..5,
        block_warps in 1u32..5,
        width in 1u32..3,
    ) {
        let policy = [Policy::Gto, Policy::Lrr, Policy::Oldest][policy];
        let board = ScoreboardKind::ALL[board];
        let config = small_gpu(policy, board, width);
        let launch = generated_launch(&lines, grid, block_warps);
        let what = format!("{} / {}\n{}", policy.name(), board.name(), kernel_source(&lines));
        same_events(&what, &config, &[launch], &GlobalMemory::new(1 << 20), &mut || Box::new(NoReplay));
    }
}
