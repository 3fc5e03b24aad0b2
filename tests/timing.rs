//! The timing model against the seeds: seed 000's dispatcher log, seed 002's scoreboard
//! scenarios, each policy's defining behaviour, occupancy limits, streams, barriers, faults.

mod common;

use common::kernels::{generated_launch, kernel_source, line_strategy, small_gpu};
use std::sync::Arc;
use warpscope::asm::{self, Dialect};
use warpscope::isa::Program;
use warpscope::sim::config::{GpuConfig, MemoryModel, Policy, ScoreboardKind};
use warpscope::sim::gpu::{simulate, SimError, SimOptions, SimReport};
use warpscope::sim::memory::GlobalMemory;
use warpscope::sim::observer::{NullObserver, Observer, WarpRef, WarpState};
use warpscope::sim::{Dim3, FaultKind, KernelLaunch, LaunchError, SmLimit};

fn kernel_file(name: &str) -> String {
    std::fs::read_to_string(format!("{}/kernels/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn native(src: &str) -> Arc<Program> {
    Arc::new(
        asm::assemble(Dialect::Native, src, "k").unwrap_or_else(|e| panic!("{}", e.render("k"))),
    )
}

fn launch(program: Arc<Program>, grid: u32, block: u32, params: Vec<u32>) -> KernelLaunch {
    KernelLaunch {
        program,
        grid: Dim3::linear(grid),
        block: Dim3::linear(block),
        params,
        stream: 0,
    }
}

#[derive(Default)]
struct Log {
    lines: Vec<String>,
    issues: Vec<(u64, WarpRef, u32)>,
    states: Vec<(u64, WarpRef, WarpState)>,
}

impl Observer for Log {
    fn block_assign(&mut self, cycle: u64, _launch: u32, block: u32, sm: u32) {
        self.lines
            .push(format!("cycle {cycle:3}: block {block} -> core {sm}"));
    }
    fn block_complete(&mut self, cycle: u64, _launch: u32, block: u32, sm: u32) {
        self.lines.push(format!(
            "cycle {cycle:3}: core {sm} done with block {block}"
        ));
    }
    fn issue(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        _a: u32,
        _p: warpscope::isa::Pipe,
        _s: u32,
    ) {
        self.issues.push((cycle, warp, pc));
    }
    fn warp_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState) {
        self.states.push((cycle, warp, state));
    }
}

fn run_with(
    config: &GpuConfig,
    launches: &[KernelLaunch],
    mem: &mut GlobalMemory,
) -> (SimReport, Log) {
    let mut log = Log::default();
    let report = simulate(config, launches, mem, SimOptions::default(), &mut log).unwrap();
    (report, log)
}

#[test]
fn seed_000_dispatcher_log_is_exact() {
    let program = Arc::new(
        asm::assemble(
            Dialect::Tinygpu,
            &kernel_file("vecadd_tiny.tgpu"),
            "vecadd_tiny",
        )
        .unwrap(),
    );
    let config = GpuConfig::preset("tiny").unwrap();
    let mut mem = GlobalMemory::new(config.memory_limit);
    for i in 0..24u32 {
        mem.write(4 * i as u64, 10 * (i + 1)).unwrap();
        mem.write(4 * (24 + i) as u64, i + 1).unwrap();
    }
    let (report, log) = run_with(&config, &[launch(program, 6, 4, vec![])], &mut mem);
    let expected = [
        "cycle   0: block 0 -> core 0",
        "cycle   1: block 1 -> core 1",
        "cycle  79: core 0 done with block 0",
        "cycle  79: block 2 -> core 0",
        "cycle  80: core 1 done with block 1",
        "cycle  80: block 3 -> core 1",
        "cycle 158: core 0 done with block 2",
        "cycle 158: block 4 -> core 0",
        "cycle 159: core 1 done with block 3",
        "cycle 159: block 5 -> core 1",
        "cycle 237: core 0 done with block 4",
        "cycle 238: core 1 done with block 5",
    ];
    assert_eq!(log.lines, expected);
    assert_eq!(report.cycles, 239);
    let c = mem.read_words(4 * 48, 24).unwrap();
    assert_eq!(c, (0..24).map(|i| 11 * (i + 1)).collect::<Vec<u32>>());
    // 13 instructions per block, 6 cycles each.
    assert_eq!(report.warp_instructions, 6 * 13);
    assert_eq!(report.thread_instructions, 6 * 13 * 4);
}

/// A small GPU with a fixed memory latency, so expected cycles can be worked out by hand.
fn fixed_gpu(policy: Policy, scoreboard: ScoreboardKind, latency: u32) -> GpuConfig {
    let mut c = GpuConfig::preset("small").unwrap();
    c.num_sms = 1;
    c.scheduler.policy = policy;
    c.scheduler.scoreboard = scoreboard;
    c.memory.model = MemoryModel::Fixed { latency };
    c.validate().unwrap();
    c
}

/// Each warp's state in every cycle, rebuilt from the change events.
fn per_cycle_states(
    log: &Log,
    cycles: u64,
) -> std::collections::BTreeMap<WarpRef, Vec<Option<WarpState>>> {
    let mut out = std::collections::BTreeMap::new();
    for &(cycle, warp, state) in &log.states {
        let row: &mut Vec<Option<WarpState>> = out
            .entry(warp)
            .or_insert_with(|| vec![None; cycles as usize]);
        for slot in row.iter_mut().skip(cycle as usize) {
            *slot = Some(state);
        }
    }
    out
}

const SEED_002: &str = "
.kernel seed002
    LDG R1, [R2]        // I0: variable latency
    IMUL R4, R5, R6     // I2: independent, issues while I0 is in flight
    IADD R2, R1, R3     // I1: needs R1
    EXIT
";

#[test]
fn seed_002_independent_instruction_issues_under_the_load_for_every_scoreboard() {
    for sb in ScoreboardKind::ALL {
        let config = fixed_gpu(Policy::Gto, sb, 100);
        let mut mem = GlobalMemory::new(1 << 20);
        let (report, log) = run_with(
            &config,
            &[launch(native(SEED_002), 1, 32, vec![])],
            &mut mem,
        );
        let pcs: Vec<(u64, u32)> = log.issues.iter().map(|&(c, _, pc)| (c, pc)).collect();
        let t0 = pcs[0].0;
        assert_eq!(pcs[0].1, 0, "{sb:?}");
        assert_eq!(
            pcs[1],
            (t0 + 1, 1),
            "{sb:?}: I2 issues right behind the load"
        );
        assert_eq!(
            pcs[2],
            (t0 + 100, 2),
            "{sb:?}: I1 issues when the load returns"
        );
        assert_eq!(report.warp_instructions, 4);
        // Between I2 and I1 the warp waits on the load's register (or its barrier).
        let states = per_cycle_states(&log, report.cycles);
        let row = states.values().next().unwrap();
        let waiting = row[(t0 + 50) as usize].unwrap();
        match (sb, waiting) {
            (
                ScoreboardKind::Barriers,
                WarpState::DependencyBarrier {
                    producer_pc: 0,
                    path,
                    ..
                },
            )
            | (
                _,
                WarpState::Scoreboard {
                    producer_pc: 0,
                    path,
                    ..
                },
            ) => {
                assert_eq!(path, warpscope::sim::scoreboard::DepPath::Long, "{sb:?}")
            }
            other => panic!("{sb:?}: unexpected state {other:?}"),
        }
    }
}

#[test]
fn pending_register_of_one_warp_never_blocks_another() {
    let config = fixed_gpu(Policy::Lrr, ScoreboardKind::Bitmap, 100);
    let mut mem = GlobalMemory::new(1 << 20);
    let src = ".kernel k\n LDG R1, [R2]\n IADD R3, R1, 1\n EXIT\n";
    let (_, log) = run_with(&config, &[launch(native(src), 1, 64, vec![])], &mut mem);
    let first: Vec<(u64, u32, u32)> = log
        .issues
        .iter()
        .take(2)
        .map(|&(c, w, pc)| (c, w.slot, pc))
        .collect();
    // W1's load is not held by W0's pending R1.
    assert_eq!(first[0].2, 0);
    assert_eq!(first[1].2, 0);
    assert_ne!(first[0].1, first[1].1);
    assert_eq!(first[1].0, first[0].0 + 1);
}

const ALU_CHAIN: &str = "
.kernel chain
    MOV R1, 1
    IADD R1, R1, 1
    IADD R1, R1, 1
    IADD R1, R1, 1
    IADD R1, R1, 1
    IADD R1, R1, 1
    EXIT
";

#[test]
fn barrel_issues_only_in_its_own_turn() {
    let config = fixed_gpu(Policy::Barrel, ScoreboardKind::Bitmap, 10);
    let mut mem = GlobalMemory::new(1 << 20);
    let (report, log) = run_with(
        &config,
        &[launch(native(ALU_CHAIN), 1, 128, vec![])],
        &mut mem,
    );
    assert_eq!(report.warp_instructions, 4 * 7);
    // Four warps on one scheduler, all resident until the last instructions: cycle c belongs
    // to warp slot c mod 4 while all four are unfinished.
    let last_first_exit = log
        .issues
        .iter()
        .filter(|i| i.2 == 6)
        .map(|i| i.0)
        .min()
        .unwrap();
    for &(cycle, warp, _) in log.issues.iter().filter(|i| i.0 <= last_first_exit) {
        assert_eq!(
            cycle % 4,
            warp.slot as u64,
            "cycle {cycle} issued by slot {}",
            warp.slot
        );
    }
}

#[test]
fn lrr_and_gto_never_leave_a_cycle_empty_while_a_warp_is_eligible() {
    for policy in [
        Policy::Lrr,
        Policy::Gto,
        Policy::Oldest,
        Policy::TwoLevel,
        Policy::Smt,
    ] {
        let config = fixed_gpu(policy, ScoreboardKind::Bitmap, 30);
        let mut mem = GlobalMemory::new(1 << 20);
        let src = ".kernel k\n LDG R1, [R2]\n IADD R3, R1, 1\n IADD R3, R3, 1\n IMUL R4, R3, R3\n STG [R2+4096], R4\n EXIT\n";
        let (report, log) = run_with(&config, &[launch(native(src), 2, 128, vec![])], &mut mem);
        let states = per_cycle_states(&log, report.cycles);
        let issue_cycles: std::collections::BTreeSet<u64> =
            log.issues.iter().map(|i| i.0).collect();
        let mut checked = 0;
        for cycle in 0..report.cycles as usize {
            let eligible = states.values().any(|row| {
                matches!(
                    row[cycle],
                    Some(WarpState::NotSelected | WarpState::Selected)
                )
            });
            if eligible {
                checked += 1;
                assert!(
                    issue_cycles.contains(&(cycle as u64)),
                    "{policy:?}: cycle {cycle} idle with an eligible warp"
                );
            }
        }
        assert!(checked > 10);
    }
}

#[test]
fn coarse_pays_refill_and_sequential_runs_one_warp_at_a_time() {
    let src =
        ".kernel k\n LDG R1, [R2]\n IADD R3, R1, 1\n LDG R4, [R2+64]\n IADD R5, R4, R3\n EXIT\n";
    let mut config = fixed_gpu(Policy::Coarse, ScoreboardKind::Bitmap, 40);
    config.scheduler.switch_cost = 3;
    let mut mem = GlobalMemory::new(1 << 20);
    let (report, _) = run_with(&config, &[launch(native(src), 1, 128, vec![])], &mut mem);
    let refill: u64 = report.sms[0]
        .schedulers
        .iter()
        .map(|s| s.refill_slots)
        .sum();
    assert!(
        refill >= 3,
        "coarse switches cost refill slots, got {refill}"
    );
    assert_eq!(refill % 3, 0);

    let config = fixed_gpu(Policy::Sequential, ScoreboardKind::Bitmap, 40);
    let (_, log) = run_with(&config, &[launch(native(src), 1, 64, vec![])], &mut mem);
    let last_of_w0 = log
        .issues
        .iter()
        .filter(|i| i.1.slot == 0)
        .map(|i| i.0)
        .max()
        .unwrap();
    let first_of_w1 = log
        .issues
        .iter()
        .filter(|i| i.1.slot == 1)
        .map(|i| i.0)
        .min()
        .unwrap();
    assert!(first_of_w1 > last_of_w0);
}

#[test]
fn every_slot_is_accounted_and_selected_equals_issued() {
    for policy in Policy::ALL {
        let mut config = fixed_gpu(policy, ScoreboardKind::Bitmap, 30);
        config.sm.issue_width = 2;
        let mut mem = GlobalMemory::new(1 << 20);
        let src =
            ".kernel k\n LDG R1, [R2]\n IADD R3, R5, 1\n IADD R6, R1, 1\n IMUL R4, R3, R6\n EXIT\n";
        let (report, log) = run_with(&config, &[launch(native(src), 3, 96, vec![])], &mut mem);
        for sched in &report.sms[0].schedulers {
            assert_eq!(sched.cycles, report.cycles, "{policy:?}");
            assert_eq!(
                sched.issued + sched.refill_slots + sched.vertical_waste + sched.horizontal_waste,
                2 * report.cycles,
                "{policy:?}"
            );
        }
        assert_eq!(log.issues.len() as u64, report.warp_instructions);
    }
}

#[test]
fn blocks_that_never_fit_are_launch_errors_naming_the_limit() {
    let config = GpuConfig::preset("small").unwrap();
    let mut mem = GlobalMemory::new(1 << 20);
    let mut refused = |config: &GpuConfig, program: Arc<Program>, threads: u32| {
        simulate(
            config,
            &[launch(program, 1, threads, vec![])],
            &mut mem,
            SimOptions::default(),
            &mut NullObserver,
        )
        .unwrap_err()
    };
    // The error names the limit as data (what `launch_hint` matches on) and in words, with
    // the config field to change.
    let limit = |err: &SimError| match err {
        SimError::Launch(LaunchError::DoesNotFit { limit, .. }) => Some(*limit),
        _ => None,
    };
    let big_shared = native(".kernel k\n.shared 65536\n EXIT\n");
    let err = refused(&config, big_shared, 32);
    assert_eq!(limit(&err), Some(SmLimit::SharedMemory), "{err}");
    assert!(err.to_string().contains("sm.shared_memory_bytes"), "{err}");
    let regs = native(".kernel k\n.regs 200\n EXIT\n");
    let err = refused(&config, regs, 256);
    assert_eq!(limit(&err), Some(SmLimit::Registers), "{err}");
    assert!(err.to_string().contains("sm.registers"), "{err}");
    // Fewer warp slots than a block has warps (`--warps 4`; the block fits in threads).
    let mut few_slots = config.clone();
    few_slots.sm.max_warps = 4;
    let err = refused(&few_slots, native(ALU_CHAIN), 256);
    assert_eq!(limit(&err), Some(SmLimit::Warps), "{err}");
    assert!(err.to_string().contains("sm.max_warps"), "{err}");
    let err = refused(&config, native(ALU_CHAIN), 512);
    assert_eq!(limit(&err), None, "{err}");
    assert!(err.to_string().contains("threads per block"), "{err}");
}

#[derive(Default)]
struct Residency {
    live: Vec<i64>,
    max: Vec<i64>,
    launches_live: std::collections::BTreeMap<u32, i64>,
    overlap: bool,
    order: Vec<(u64, u32, bool)>,
}

impl Observer for Residency {
    fn block_assign(&mut self, cycle: u64, launch: u32, _block: u32, sm: u32) {
        let sm = sm as usize;
        if self.live.len() <= sm {
            self.live.resize(sm + 1, 0);
            self.max.resize(sm + 1, 0);
        }
        self.live[sm] += 1;
        self.max[sm] = self.max[sm].max(self.live[sm]);
        *self.launches_live.entry(launch).or_default() += 1;
        self.overlap |= self.launches_live.values().filter(|&&v| v > 0).count() > 1;
        self.order.push((cycle, launch, true));
    }
    fn block_complete(&mut self, cycle: u64, launch: u32, _block: u32, sm: u32) {
        self.live[sm as usize] -= 1;
        *self.launches_live.entry(launch).or_default() -= 1;
        self.order.push((cycle, launch, false));
    }
}

#[test]
fn occupancy_is_limited_by_registers() {
    let mut config = fixed_gpu(Policy::Gto, ScoreboardKind::Bitmap, 50);
    config.sm.max_warps = 64;
    config.sm.max_blocks = 16;
    // 64 registers × 128 threads = 8192 of 16384: two blocks per SM.
    let program = native(".kernel k\n.regs 64\n LDG R1, [R2]\n IADD R3, R1, 1\n EXIT\n");
    let mut mem = GlobalMemory::new(1 << 20);
    let mut obs = Residency::default();
    simulate(
        &config,
        &[launch(program, 8, 128, vec![])],
        &mut mem,
        SimOptions::default(),
        &mut obs,
    )
    .unwrap();
    assert_eq!(obs.max, vec![2]);
}

#[test]
fn streams_run_concurrently_and_in_order_within_a_stream() {
    let config = fixed_gpu(Policy::Gto, ScoreboardKind::Bitmap, 50);
    let program = native(".kernel k\n LDG R1, [R2]\n IADD R3, R1, 1\n EXIT\n");
    let mut mem = GlobalMemory::new(1 << 20);
    let mut a = launch(program.clone(), 2, 32, vec![]);
    let mut b = launch(program, 2, 32, vec![]);
    a.stream = 0;
    b.stream = 1;
    let mut obs = Residency::default();
    simulate(
        &config,
        &[a.clone(), b.clone()],
        &mut mem,
        SimOptions::default(),
        &mut obs,
    )
    .unwrap();
    assert!(obs.overlap, "different streams interleave");
    b.stream = 0;
    let mut obs = Residency::default();
    let report = simulate(&config, &[a, b], &mut mem, SimOptions::default(), &mut obs).unwrap();
    assert!(!obs.overlap, "one stream runs in order");
    assert!(report.launches[1].start_cycle >= report.launches[0].end_cycle - 1);
}

#[test]
fn divergent_barrier_is_a_deadlock_naming_the_warps() {
    let src = ".kernel k\n ISETP.LT P0, %laneid, 16\n @P0 BRA SKIP\n BAR.SYNC\nSKIP:\n EXIT\n";
    let config = fixed_gpu(Policy::Gto, ScoreboardKind::Bitmap, 50);
    let mut mem = GlobalMemory::new(1 << 20);
    let err = simulate(
        &config,
        &[launch(native(src), 1, 32, vec![])],
        &mut mem,
        SimOptions::default(),
        &mut NullObserver,
    )
    .unwrap_err();
    let SimError::Fault { fault, .. } = err else {
        panic!("expected a fault")
    };
    assert!(matches!(fault.kind, FaultKind::Deadlock { .. }));
    let text = fault.to_string();
    assert!(
        text.contains("BAR.SYNC with 16 of its 32 live lanes"),
        "{text}"
    );
    // The functional runner agrees.
    let err = warpscope::sim::functional::run(
        &launch(native(src), 1, 32, vec![]),
        &mut mem,
        Default::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("deadlock"), "{err}");
}

/// A warp that exits before its block's barrier is not waited for: the barrier releases the
/// others, in a cycle in which nothing issued, and they run on — with and without skipping,
/// under every kind of pass. (The loop once took such a cycle for one in which nothing could
/// change, and reported a deadlock right after the release.)
#[test]
fn a_barrier_released_in_a_quiet_cycle_lets_its_warps_go_on() {
    let src = ".kernel k\n ISETP.GE P0, %tid.x, 32\n @P0 EXIT\n BAR.SYNC\n EXIT\n";
    for policy in [Policy::Gto, Policy::Coarse, Policy::Barrel] {
        let config = fixed_gpu(policy, ScoreboardKind::Bitmap, 50);
        let run = |skip: bool| {
            let mut mem = GlobalMemory::new(1 << 20);
            let mut log = Log::default();
            let options = SimOptions {
                skip_idle: skip,
                ..SimOptions::default()
            };
            let report = simulate(
                &config,
                &[launch(native(src), 1, 64, vec![])],
                &mut mem,
                options,
                &mut log,
            )
            .unwrap_or_else(|e| panic!("{policy:?}: {e}"));
            (report, log.issues, log.states, log.lines)
        };
        let (fast, slow) = (run(true), run(false));
        // The warp that exits runs 2 instructions, the one at the barrier 4.
        assert_eq!(fast.0.warp_instructions, 6, "{policy:?}");
        assert_eq!(fast, slow, "{policy:?}");
    }
}

#[test]
fn watchdog_stops_a_runaway_kernel() {
    let src = ".kernel spin\nL:\n BRA L\n";
    let mut config = fixed_gpu(Policy::Gto, ScoreboardKind::Bitmap, 50);
    // An SM without work too: its scheduler is never stepped after the first cycle.
    config.num_sms = 2;
    let mut mem = GlobalMemory::new(1 << 20);
    let options = SimOptions {
        max_cycles: 1000,
        skip_idle: true,
    };
    let err = simulate(
        &config,
        &[launch(native(src), 1, 32, vec![])],
        &mut mem,
        options,
        &mut NullObserver,
    )
    .unwrap_err();
    let SimError::Fault { fault, partial } = err else {
        panic!()
    };
    assert!(
        matches!(fault.kind, FaultKind::Watchdog { limit: 1000, .. }),
        "{fault}"
    );
    assert!(fault.to_string().contains("BRA L"), "{fault}");
    assert_eq!(partial.cycles, 1000);
    // Cycles 0..1000 ran; schedulers that were not stepped in some of them still count them.
    for sched in partial.sms.iter().flat_map(|sm| &sm.schedulers) {
        assert_eq!(sched.cycles, 1000);
    }
}

#[test]
fn skipping_idle_cycles_changes_nothing() {
    for (policy, sb) in [
        (Policy::Gto, ScoreboardKind::Bitmap),
        (Policy::Coarse, ScoreboardKind::Ranges),
        (Policy::Barrel, ScoreboardKind::Barriers),
    ] {
        let config = fixed_gpu(policy, sb, 200);
        let src = ".kernel k\n LDG R1, [R2]\n IADD R3, R1, 1\n LDG R4, [R2+128]\n IADD R5, R4, R3\n STG [R2+256], R5\n EXIT\n";
        let run = |skip: bool| {
            let mut mem = GlobalMemory::new(1 << 20);
            let mut log = Log::default();
            let report = simulate(
                &config,
                &[launch(native(src), 3, 64, vec![])],
                &mut mem,
                SimOptions {
                    max_cycles: 1 << 30,
                    skip_idle: skip,
                },
                &mut log,
            )
            .unwrap();
            (report, log.issues, log.states, log.lines)
        };
        assert_eq!(run(true), run(false), "{policy:?} {sb:?}");
    }
}

/// The bundled kernels step alike with and without skipping (`skip_idle: false` also visits
/// every warp of a scheduler each cycle it runs, instead of only those events touched), for
/// the policies whose passes may visit only touched warps, at issue widths 1 and 2, with a
/// small LSU queue so that warps throttle and wake when entries free.
#[test]
fn skipping_work_changes_nothing_on_the_bundled_kernels() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    for file in [
        "vecadd.json",
        "reduce.json",
        "matmul.json",
        "divergent.json",
    ] {
        let lf = warpscope::launchfile::LaunchFile::load(&dir.join(file)).unwrap();
        for policy in [Policy::Gto, Policy::Lrr, Policy::Oldest] {
            for width in [1, 2] {
                let mut config = GpuConfig::preset("volta").unwrap();
                config.scheduler.policy = policy;
                config.sm.issue_width = width;
                config.sm.lsu_queue = 2;
                config.validate().unwrap();
                let run = |skip: bool| {
                    let mut mem = lf.initial_memory();
                    let mut log = Log::default();
                    let options = SimOptions {
                        skip_idle: skip,
                        ..SimOptions::default()
                    };
                    let report =
                        simulate(&config, &lf.kernel_launches(), &mut mem, options, &mut log)
                            .unwrap();
                    (report, log.issues, log.states, log.lines)
                };
                let (fast, slow) = (run(true), run(false));
                assert!(
                    fast.2.iter().any(|s| s.2 == WarpState::LgThrottle) || file != "vecadd.json",
                    "{file}: the LSU queue never filled"
                );
                assert_eq!(fast, slow, "{file} {policy:?} width {width}");
            }
        }
    }
}

#[test]
fn unprotected_dependency_is_reported_and_reads_the_stale_value() {
    // The codes forget to wait on B0 before reading R1.
    let src = "
.kernel hazard
    [B------:R-:W-:-:S01] MOV R2, 0
    [B------:R-:W-:-:S04] MOV R9, 7
    [B------:R-:W0:-:S01] LDG R1, [R2]
    [B------:R-:W-:-:S05] IADD R3, R1, 1
    [B------:R-:W-:-:S01] STG [R2+64], R3
    [B0-----:R-:W-:-:S01] EXIT
";
    let config = fixed_gpu(Policy::Gto, ScoreboardKind::Barriers, 50);
    let mut mem = GlobalMemory::new(1 << 20);
    mem.write(0, 41).unwrap();
    #[derive(Default)]
    struct Hazards(Vec<String>);
    impl Observer for Hazards {
        fn hazard(&mut self, _c: u64, _w: WarpRef, h: &warpscope::sim::scoreboard::Hazard) {
            self.0.push(format!(
                "{:?} {:?} {}->{}",
                h.kind, h.reg, h.producer_pc, h.consumer_pc
            ));
        }
    }
    let mut obs = Hazards::default();
    let report = simulate(
        &config,
        &[launch(native(src), 1, 32, vec![])],
        &mut mem,
        SimOptions::default(),
        &mut obs,
    )
    .unwrap();
    assert!(
        obs.0
            .iter()
            .any(|h| h.starts_with("Raw") && h.ends_with("2->3")),
        "{:?}",
        obs.0
    );
    assert!(report.hazards >= 1);
    // As hardware would: the IADD read R1 before the load wrote it.
    assert_eq!(mem.read(64).unwrap(), 1);
}

fn states_seen(log: &Log) -> Vec<WarpState> {
    log.states.iter().map(|s| s.2).collect()
}

#[test]
fn a_full_range_table_is_a_structural_stall() {
    let mut config = fixed_gpu(Policy::Gto, ScoreboardKind::Ranges, 100);
    config.scheduler.range_slots = 1;
    let src = ".kernel k\n LDG R1, [R2]\n LDG R3, [R2+4]\n EXIT\n";
    let mut mem = GlobalMemory::new(1 << 20);
    let (_, log) = run_with(&config, &[launch(native(src), 1, 32, vec![])], &mut mem);
    assert!(states_seen(&log).contains(&WarpState::TableFull));
    let t: Vec<u64> = log.issues.iter().map(|i| i.0).collect();
    assert_eq!(t[1], t[0] + 100, "the second load waits for the slot");
}

#[test]
fn full_lsu_and_mio_queues_throttle() {
    let mut config = fixed_gpu(Policy::Lrr, ScoreboardKind::Bitmap, 100);
    config.sm.lsu_queue = 1;
    config.sm.mio_queue = 1;
    let mut mem = GlobalMemory::new(1 << 20);
    let src = ".kernel k\n LDG R1, [R2]\n EXIT\n";
    let (_, log) = run_with(&config, &[launch(native(src), 1, 64, vec![])], &mut mem);
    assert!(states_seen(&log).contains(&WarpState::LgThrottle));
    let src = ".kernel k\n.shared 256\n LDS R1, [RZ]\n EXIT\n";
    let (_, log) = run_with(&config, &[launch(native(src), 1, 64, vec![])], &mut mem);
    assert!(states_seen(&log).contains(&WarpState::MioThrottle));
}

#[test]
fn cache_hits_are_faster_and_bank_conflicts_cost_replays() {
    let mut config = GpuConfig::preset("small").unwrap();
    config.num_sms = 1;
    let src =
        ".kernel k\n LDG R1, [RZ]\n IADD R2, R1, 1\n LDG R3, [RZ+4]\n IADD R4, R3, 1\n EXIT\n";
    let mut mem = GlobalMemory::new(1 << 20);
    let (report, log) = run_with(&config, &[launch(native(src), 1, 32, vec![])], &mut mem);
    let at = |pc| log.issues.iter().find(|i| i.2 == pc).unwrap().0;
    let miss = at(1) - at(0);
    let hit = at(3) - at(2);
    assert!(hit < miss, "L1 hit {hit} vs miss {miss}");
    assert_eq!(hit, config.memory.l1.hit_latency as u64);
    assert_eq!(report.memory.l1_hit_sectors, 1);

    // Stride of 32 words: every lane in bank 0, 31 replays.
    let conflict =
        ".kernel k\n.shared 4096\n SHL R1, %laneid, 7\n LDS R2, [R1]\n IADD R3, R2, 1\n EXIT\n";
    let clean =
        ".kernel k\n.shared 4096\n SHL R1, %laneid, 2\n LDS R2, [R1]\n IADD R3, R2, 1\n EXIT\n";
    let mut wait = |src: &str| {
        let (report, log) = run_with(&config, &[launch(native(src), 1, 32, vec![])], &mut mem);
        let at = |pc| log.issues.iter().find(|i| i.2 == pc).unwrap().0;
        (at(2) - at(1), report.memory.shared_bank_conflicts)
    };
    let (slow, replays) = wait(conflict);
    let (fast, none) = wait(clean);
    assert_eq!((replays, none), (31, 0));
    assert_eq!(slow - fast, 31 * config.pipes.shared.interval as u64);
}

#[test]
fn tiny_gpu_spends_six_cycles_per_instruction() {
    let program = Arc::new(
        asm::assemble(
            Dialect::TinygpuHex,
            &kernel_file("vecadd_tiny.hex"),
            "vecadd_tiny",
        )
        .unwrap(),
    );
    let config = GpuConfig::preset("tiny").unwrap();
    let mut mem = GlobalMemory::new(config.memory_limit);
    let (_, log) = run_with(&config, &[launch(program, 1, 4, vec![])], &mut mem);
    let cycles: Vec<u64> = log.issues.iter().map(|i| i.0).collect();
    assert_eq!(cycles, (0..13).map(|i| 1 + 6 * i).collect::<Vec<u64>>());
    let states = per_cycle_states(&log, 79);
    let row = states.values().next().unwrap();
    let waits = row
        .iter()
        .filter(|s| **s == Some(WarpState::StallCount))
        .count();
    assert_eq!(row[0], Some(WarpState::NoInstruction));
    assert_eq!(waits, 13 * 5);
}

/// An observer that ignores warp states (the null observer) is not told of the group changes
/// of ready warps, and must see the same run: the same report, and the same per-warp
/// description when the watchdog stops a run mid-way (it names each warp's state).
#[test]
fn an_observer_that_ignores_states_sees_the_same_run() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut runs: Vec<(String, Vec<KernelLaunch>, GlobalMemory)> = ["vecadd.json", "matmul.json"]
        .iter()
        .map(|file| {
            let lf = warpscope::launchfile::LaunchFile::load(&dir.join(file)).unwrap();
            (file.to_string(), lf.kernel_launches(), lf.initial_memory())
        })
        .collect();
    // On volta the FMA pipe takes an instruction every second cycle: its ready warps change
    // state together every cycle.
    runs.push((
        "ffma_loop".into(),
        vec![warpscope::bench::ffma_launch(8, 20)],
        GlobalMemory::new(1 << 16),
    ));
    for (name, launches, memory) in &runs {
        for policy in [Policy::Gto, Policy::Lrr, Policy::Oldest] {
            let mut config = GpuConfig::preset("volta").unwrap();
            config.scheduler.policy = policy;
            config.validate().unwrap();
            let run = |options: SimOptions, watch: bool| {
                let mut memory = memory.clone();
                let result = if watch {
                    simulate(&config, launches, &mut memory, options, &mut Log::default())
                } else {
                    simulate(&config, launches, &mut memory, options, &mut NullObserver)
                };
                match result {
                    Ok(report) => (format!("{report:?}"), report.cycles),
                    Err(e) => (e.to_string(), 0),
                }
            };
            let full = SimOptions::default();
            let (watched, cycles) = run(full, true);
            assert_eq!(watched, run(full, false).0, "{name} {policy:?}");
            for cut in [cycles / 2, cycles / 2 + 1] {
                let cut = SimOptions {
                    max_cycles: cut,
                    ..full
                };
                let watched = run(cut, true).0;
                assert!(
                    watched.contains("resident warps:\n  sm 0 slot"),
                    "{watched}"
                );
                assert_eq!(watched, run(cut, false).0, "{name} {policy:?}");
            }
        }
    }
}

#[test]
fn a_run_reports_its_progress_to_the_counters_its_thread_installed() {
    use warpscope::sim::progress::{self, SimProgress};
    let config = GpuConfig::preset("small").unwrap();
    let launches = [
        warpscope::bench::vecadd_launch(4096),
        warpscope::bench::vecadd_launch(2048),
    ];
    let run = || {
        let mut memory = GlobalMemory::new(64 << 20);
        simulate(
            &config,
            &launches,
            &mut memory,
            SimOptions::default(),
            &mut NullObserver,
        )
        .unwrap()
    };
    let quiet = run();
    let counters = SimProgress::new();
    let watched = {
        let _reporting = progress::report_to(counters.clone());
        run()
    };
    assert_eq!(quiet, watched, "progress changes nothing a run computes");
    let blocks: u64 = launches.iter().map(|l| l.grid.count()).sum();
    assert_eq!(counters.blocks_done(), blocks);
    // The last block finished in the last cycle simulated.
    assert_eq!(counters.cycle(), watched.cycles - 1);
    // Once the guard is gone, runs report nothing more.
    run();
    assert_eq!(counters.blocks_done(), blocks);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(9),
        ..Default::default()
    })]

    /// Generated kernels (see `tests/common/kernels.rs`) run alike with and without skipping
    /// (`skip_idle: false` steps every cycle, visits every warp and recomputes every state),
    /// under every policy and scoreboard with short queues: the same issues, states, log and
    /// report, or the same fault. This is what keeps the idle skipping, the SM attention
    /// loop and the masked pass exact.
    #[test]
    fn random_kernels_step_alike_with_and_without_skipping(
        lines in proptest::collection::vec(line_strategy(), 1..20),
        policy in 0usize..6,
        scoreboard in 0usize..3,
        grid in 1u32..5,
        block_warps in 1u32..5,
        width in 1u32..3,
        fixed in proptest::prelude::any::<bool>(),
    ) {
        let policies = [Policy::Gto, Policy::Lrr, Policy::Oldest, Policy::Barrel, Policy::Coarse, Policy::TwoLevel];
        let mut config = small_gpu(policies[policy], ScoreboardKind::ALL[scoreboard], width);
        if fixed {
            config.memory.model = MemoryModel::Fixed { latency: 37 };
        }
        let src = kernel_source(&lines);
        let generated = generated_launch(&lines, grid, block_warps);
        let run = |skip: bool| {
            let mut mem = GlobalMemory::new(1 << 20);
            let mut log = Log::default();
            let options = SimOptions { max_cycles: 200_000, skip_idle: skip };
            let result = simulate(
                &config,
                std::slice::from_ref(&generated),
                &mut mem,
                options,
                &mut log,
            );
            let result = match result {
                Ok(report) => Ok(report),
                Err(SimError::Fault { fault, partial }) => Err((fault.to_string(), Some(*partial))),
                Err(e) => Err((e.to_string(), None)),
            };
            (result, log.issues, log.states, log.lines)
        };
        let (fast, slow) = (run(true), run(false));
        proptest::prop_assert!(fast == slow, "{:?}\n{src}", config.scheduler);
    }
}
