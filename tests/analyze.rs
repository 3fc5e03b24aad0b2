//! The analyzer against recorded traces: accounting invariants on every example kernel, a few
//! GPUs and policies; hand-computed breakdowns (seed 002's sequence, tiny-gpu's vector add);
//! and that each kind of stall shows up where it should.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use warpscope::analyze::{analyze_file, render_text, to_json, Analysis, LaunchAnalysis, Taxonomy};
use warpscope::asm::{self, Dialect};
use warpscope::launchfile::LaunchFile;
use warpscope::sim::config::{GpuConfig, MemoryModel, Policy};
use warpscope::sim::gpu::SimOptions;
use warpscope::sim::memory::GlobalMemory;
use warpscope::sim::observer::WarpState;
use warpscope::sim::{Dim3, KernelLaunch, SmLimit};
use warpscope::trace::{record, Event, TraceFormat, TraceReader, DEFAULT_VERBOSITY};

fn trace_path(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.wstrace"))
}

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

/// Records `launches` on `config` into a trace named `name`; `None` if the GPU rejects them.
fn record_trace(
    name: &str,
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
) -> Option<PathBuf> {
    record_trace_at(name, config, launches, memory, DEFAULT_VERBOSITY)
}

/// [`record_trace`] at a verbosity of the caller's choosing.
fn record_trace_at(
    name: &str,
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
    verbosity: u8,
) -> Option<PathBuf> {
    let path = trace_path(name);
    match record(
        config,
        launches,
        memory,
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        verbosity,
    ) {
        Ok(out) => {
            assert!(out.fault.is_none(), "{name}: fault {:?}", out.fault);
            Some(path)
        }
        Err(warpscope::trace::TraceError::Launch(_)) => None,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn analyze(path: &Path) -> Analysis {
    analyze_file(path, Taxonomy::Nsight).unwrap()
}

fn state(l: &LaunchAnalysis, name: &str) -> u64 {
    *l.warp_states
        .get(name)
        .unwrap_or_else(|| panic!("no state {name} in {:?}", l.warp_states))
}

/// Resident warp-cycles per launch straight from the events: Σ exit − launch.
fn resident_from_events(path: &Path, launches: usize) -> Vec<u64> {
    let mut reader = TraceReader::open(path).unwrap();
    let mut open = std::collections::HashMap::new();
    let mut out = vec![0u64; launches];
    for e in reader.by_ref() {
        match e.unwrap() {
            Event::WarpLaunch { cycle, warp, info } => {
                open.insert(warp, (info.launch, cycle));
            }
            Event::WarpExit { cycle, warp } => {
                let (l, c) = open.remove(&warp).unwrap();
                out[l as usize] += cycle - c;
            }
            _ => {}
        }
    }
    assert!(open.is_empty());
    out
}

fn check_invariants(what: &str, path: &Path, config: &GpuConfig) -> Analysis {
    let a = analyze(path);
    assert!(a.complete, "{what}");
    let resident = resident_from_events(path, a.launches.len());
    let schedulers = (config.num_sms * config.sm.schedulers) as u64;
    for (l, &res) in a.launches.iter().zip(&resident) {
        let what = format!("{what} / {}", l.name);
        let total: u64 = l.warp_states.values().sum();
        assert_eq!(total, res, "{what}: states {:?}", l.warp_states);
        assert_eq!(l.resident_warp_cycles, res, "{what}");
        if config.sm.issue_width == 1 {
            assert_eq!(state(l, "selected"), l.warp_instructions, "{what}");
        }
        let s = &l.issue_slots;
        assert_eq!(
            s.total,
            config.sm.issue_width as u64 * l.cycles * schedulers
        );
        assert_eq!(
            s.issued + s.refill + s.vertical_waste + s.horizontal_waste,
            s.total,
            "{what}: {s:?}"
        );
        assert_eq!(s.issued, l.warp_instructions);
        let sch = &l.scheduler;
        let little = sch.active_warps_per_scheduler / sch.issued_warp_per_scheduler;
        assert!(
            (l.warp_cycles_per_issued_instruction - little).abs() < 1e-9,
            "{what}: {} vs {little}",
            l.warp_cycles_per_issued_instruction
        );
        assert!(
            (sch.no_eligible_pct + sch.one_or_more_eligible_pct - 100.0).abs() < 1e-9,
            "{what}"
        );
        assert!(sch.eligible_warps_per_scheduler <= sch.active_warps_per_scheduler + 1e-12);
        // The per-active-cycle figures and the issue slots (every scheduler-cycle) meet
        // through the share of active scheduler-cycles.
        let all_cycles = (l.cycles * schedulers) as f64;
        assert!(
            (sch.issued_warp_per_scheduler * sch.active_cycles_pct / 100.0 * all_cycles
                - l.warp_instructions as f64)
                .abs()
                < 1e-6 * all_cycles.max(1.0),
            "{what}: {sch:?}"
        );
        assert!(sch.active_cycles_pct <= 100.0 + 1e-9, "{what}: {sch:?}");
        // A scheduler-cycle with an eligible warp either issued or idled by the policy.
        if config.sm.issue_width == 1 {
            let issued_pct = sch.issued_warp_per_scheduler * 100.0;
            assert!(
                (sch.one_or_more_eligible_pct - sch.idle_with_eligible_pct - issued_pct).abs()
                    < 1e-6,
                "{what}: {sch:?}"
            );
        }
        if matches!(
            config.scheduler.policy,
            Policy::Lrr | Policy::Gto | Policy::Oldest | Policy::Smt
        ) {
            assert_eq!(sch.idle_with_eligible_pct, 0.0, "{what}: {sch:?}");
        }
        // Per-PC attribution covers every warp-cycle and every instruction.
        let by_pc: u64 = l.source.iter().map(|s| s.total_warp_cycles).sum();
        assert_eq!(by_pc, total, "{what}");
        let executions: u64 = l.source.iter().map(|s| s.executions).sum();
        assert_eq!(executions, l.warp_instructions, "{what}");
        assert!(l.thread_instructions <= l.warp_instructions * config.warp_size as u64);
    }
    a
}

fn launch_files() -> Vec<(String, LaunchFile)> {
    let mut files: Vec<_> = std::fs::read_dir(kernels_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, LaunchFile::load(&p).unwrap())
        })
        .collect()
}

/// The GPUs a launch file is run on: `small` and `volta` under each of `policies` for a
/// 32-lane kernel, else the file's own GPU.
fn configs_of(file: &LaunchFile, policies: &[Policy]) -> Vec<(String, GpuConfig)> {
    if file.warp_size() != 32 {
        return vec![("own".into(), file.gpu_config().unwrap())];
    }
    let mut configs = Vec::new();
    for gpu in ["small", "volta"] {
        for &policy in policies {
            let mut c = GpuConfig::preset(gpu).unwrap();
            c.scheduler.policy = policy;
            configs.push((format!("{gpu}-{}", policy.name()), c));
        }
    }
    configs
}

#[test]
fn invariants_hold_on_every_kernel_gpu_and_policy() {
    let mut checked = 0;
    for (name, file) in launch_files() {
        let policies = [Policy::Gto, Policy::Lrr, Policy::Coarse, Policy::Barrel];
        for (tag, config) in configs_of(&file, &policies) {
            let what = format!("{name}-{tag}");
            let mut memory = file.initial_memory();
            let Some(path) = record_trace(&what, &config, &file.kernel_launches(), &mut memory)
            else {
                continue;
            };
            let a = check_invariants(&what, &path, &config);
            assert!(!render_text(&a).is_empty());
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} runs checked");
}

/// The analysis of a trace gives the simulator's own figures for the run it recorded: each
/// launch's cycles as the simulator counts them (the cycle its last block finished in
/// included), and, for a run of one launch, the schedulers' issue slots.
#[test]
fn analysis_agrees_with_the_simulators_report() {
    let mut checked = 0;
    for (name, file) in launch_files() {
        for (tag, config) in configs_of(&file, &[Policy::Gto, Policy::Coarse]) {
            let what = format!("{name}-{tag}-sim");
            let path = trace_path(&what);
            let mut memory = file.initial_memory();
            let out = match record(
                &config,
                &file.kernel_launches(),
                &mut memory,
                SimOptions::default(),
                &path,
                TraceFormat::Binary,
                DEFAULT_VERBOSITY,
            ) {
                Ok(out) => out,
                Err(warpscope::trace::TraceError::Launch(_)) => continue,
                Err(e) => panic!("{what}: {e}"),
            };
            let sim = &out.report;
            let a = analyze(&path);
            assert_eq!(a.launches.len(), sim.launches.len(), "{what}");
            for (l, r) in a.launches.iter().zip(&sim.launches) {
                assert_eq!(
                    (l.start_cycle, l.end_cycle),
                    (r.start_cycle, r.end_cycle),
                    "{what}"
                );
                assert_eq!(l.cycles, r.end_cycle - r.start_cycle, "{what}");
            }
            if let [l] = &a.launches[..] {
                assert_eq!(l.cycles, sim.cycles, "{what}");
                assert_eq!(l.ipc, sim.ipc(), "{what}");
                let stats = sim.sms.iter().flat_map(|s| &s.schedulers);
                let sum = |f: fn(&warpscope::sim::sm::SchedulerStats) -> u64| {
                    stats.clone().map(f).sum::<u64>()
                };
                let s = &l.issue_slots;
                assert_eq!(
                    (s.issued, s.refill, s.vertical_waste, s.horizontal_waste),
                    (
                        sum(|x| x.issued),
                        sum(|x| x.refill_slots),
                        sum(|x| x.vertical_waste),
                        sum(|x| x.horizontal_waste)
                    ),
                    "{what}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} runs checked");
}

#[test]
fn invariants_hold_with_wide_issue() {
    let mut config = GpuConfig::preset("volta").unwrap();
    config.sm.issue_width = 2;
    config.scheduler.policy = Policy::Smt;
    let mut memory = GlobalMemory::new(1 << 20);
    let path = record_trace(
        "ffma-smt-wide",
        &config,
        &[warpscope::bench::ffma_launch(8, 20)],
        &mut memory,
    )
    .unwrap();
    let a = check_invariants("ffma-smt-wide", &path, &config);
    let l = &a.launches[0];
    // Some warp issued twice in one cycle: one state cycle, two instructions.
    assert!(
        state(l, "selected") < l.warp_instructions,
        "{:?}",
        l.issue_slots
    );
}

fn native(src: &str) -> Arc<warpscope::isa::Program> {
    Arc::new(
        asm::assemble(Dialect::Native, src, "k").unwrap_or_else(|e| panic!("{}", e.render("k"))),
    )
}

#[test]
fn seed_002_sequence_long_scoreboard_is_exact() {
    let mut config = GpuConfig::preset("small").unwrap();
    config.num_sms = 1;
    config.memory.model = MemoryModel::Fixed { latency: 100 };
    let program = native("LDG R1, [R2]\nIMUL R4, R5, R6\nIADD R2, R1, R3\nEXIT\n");
    let launch = KernelLaunch {
        program,
        grid: Dim3::linear(1),
        block: Dim3::linear(32),
        params: vec![],
        stream: 0,
    };
    let mut memory = GlobalMemory::new(1 << 16);
    let path = record_trace("seed002", &config, &[launch], &mut memory).unwrap();

    // The issue cycles, from the trace itself.
    let mut issues = Vec::new();
    for e in TraceReader::open(&path).unwrap() {
        if let Event::Issue { cycle, pc, .. } = e.unwrap() {
            issues.push((pc, cycle));
        }
    }
    assert_eq!(issues.iter().map(|i| i.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    let (ldg, imul, iadd) = (issues[0].1, issues[1].1, issues[2].1);
    assert_eq!(imul, ldg + 1);
    assert_eq!(iadd, ldg + 100, "the IADD issues when R1 arrives");
    // Between the IMUL's issue cycle and the IADD's, the warp waits on R1.
    let waited = iadd - imul - 1;
    assert_eq!(waited, 98);

    let a = analyze(&path);
    let l = &a.launches[0];
    check_invariants("seed002", &path, &config);
    assert_eq!(state(l, "selected"), 4);
    assert_eq!(state(l, "long_scoreboard"), waited);
    let iadd_line = &l.source[2];
    assert_eq!(iadd_line.text, "IADD R2, R1, R3");
    assert_eq!(iadd_line.warp_cycles["long_scoreboard"], 98);
    assert_eq!(iadd_line.top_state.as_deref(), Some("long_scoreboard"));
    assert_eq!(iadd_line.executions, 1);

    let d = analyze_file(&path, Taxonomy::Detailed).unwrap();
    assert_eq!(d.launches[0].warp_states["scoreboard:R1:long"], 98);
    assert_eq!(
        d.launches[0].source[2].warp_cycles["scoreboard:R1:long"],
        98
    );
}

#[test]
fn tiny_vecadd_breakdown_is_exact() {
    let file = LaunchFile::load(&kernels_dir().join("vecadd_tiny.json")).unwrap();
    let config = file.gpu_config().unwrap();
    let mut memory = file.initial_memory();
    let path = record_trace("vecadd_tiny", &config, &file.kernel_launches(), &mut memory).unwrap();
    let a = check_invariants("vecadd_tiny", &path, &config);
    let l = &a.launches[0];
    assert_eq!(state(l, "no_instruction"), 6);
    assert_eq!(state(l, "selected"), 6 * 13);
    assert_eq!(state(l, "wait"), 6 * 65);
    let nonzero: Vec<_> = l.warp_states.iter().filter(|(_, &n)| n > 0).collect();
    assert_eq!(nonzero.len(), 3, "{nonzero:?}");
    assert_eq!(l.warp_instructions, 6 * 13);
    assert_eq!(l.resident_warp_cycles, 6 * (1 + 13 + 65));
    // Seed 000's picture: six 78-cycle blocks, every busy core-cycle accounted for.
    assert_eq!(state(l, "selected") + state(l, "wait"), 6 * 78);
}

#[test]
fn invariants_hold_on_every_sample_trace() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.extension().is_some_and(|e| e == "wstrace") {
            continue;
        }
        let config = TraceReader::open(&path).unwrap().header().config.clone();
        check_invariants(&path.display().to_string(), &path, &config);
        n += 1;
    }
    assert!(n >= 8, "{n} sample traces");
}

fn analyze_kernel(file: &str, config: &GpuConfig, tag: &str) -> Analysis {
    let lf = LaunchFile::load(&kernels_dir().join(file)).unwrap();
    let mut memory = lf.initial_memory();
    let path = record_trace(tag, config, &lf.kernel_launches(), &mut memory).unwrap();
    check_invariants(tag, &path, config)
}

#[test]
fn more_eligible_warps_than_slots_gives_not_selected() {
    let config = GpuConfig::preset("small").unwrap();
    let a = analyze_kernel("vecadd.json", &config, "vecadd-small");
    assert!(state(&a.launches[0], "not_selected") > 0);
    assert!(a.launches[0].scheduler.eligible_warps_per_scheduler > 0.0);
}

#[test]
fn barrier_and_shared_memory_stalls_show_up_in_reduce() {
    let config = GpuConfig::preset("small").unwrap();
    let a = analyze_kernel("reduce.json", &config, "reduce-small");
    let l = &a.launches[0];
    assert!(state(l, "barrier") > 0, "{:?}", l.warp_states);
    assert!(state(l, "short_scoreboard") > 0, "{:?}", l.warp_states);
    assert!(state(l, "long_scoreboard") > 0, "{:?}", l.warp_states);
    // Barrier cycles go to the instruction the warp waits to issue: the one after BAR.SYNC.
    let barrier_pcs: Vec<_> = l
        .source
        .iter()
        .filter(|s| s.warp_cycles.get("barrier").is_some_and(|&n| n > 0))
        .collect();
    assert!(!barrier_pcs.is_empty());
    let bar = l.source.iter().position(|s| s.text == "BAR.SYNC").unwrap();
    assert!(l.source[bar + 1]
        .warp_cycles
        .get("barrier")
        .is_some_and(|&n| n > 0));
}

#[test]
fn policies_that_hold_eligible_warps_back_say_so_instead_of_calling_the_schedulers_busy() {
    let hint = |a: &Analysis, rule: &str| {
        a.launches[0]
            .hints
            .iter()
            .find(|h| h.rule == rule)
            .map(|h| h.message.clone())
    };
    for policy in [Policy::Sequential, Policy::Coarse, Policy::Barrel] {
        let mut config = GpuConfig::preset("small").unwrap();
        config.scheduler.policy = policy;
        let a = analyze_kernel("reduce.json", &config, &format!("reduce-{}", policy.name()));
        let s = &a.launches[0].scheduler;
        assert!(s.idle_with_eligible_pct > 10.0, "{policy:?}: {s:?}");
        let message = hint(&a, "policy_idle").unwrap_or_else(|| panic!("{policy:?}"));
        assert!(
            message.contains(&format!("the {} policy", policy.name()))
                && message.contains(&format!("{:.1}%", s.idle_with_eligible_pct)),
            "{message}"
        );
        // Not the advice for a scheduler that issues every cycle.
        let dominant = hint(&a, "dominant_stall").unwrap_or_default();
        assert!(
            !dominant.contains("more warps would not help"),
            "{dominant}"
        );
    }
    let config = GpuConfig::preset("small").unwrap();
    let a = analyze_kernel("reduce.json", &config, "reduce-gto-no-idle");
    assert_eq!(a.launches[0].scheduler.idle_with_eligible_pct, 0.0);
    assert_eq!(hint(&a, "policy_idle"), None);
}

#[test]
fn an_exited_warp_waits_as_drain_not_as_a_stall_count() {
    // A warp whose only instruction is EXIT: after it, nothing holds the warp back but the
    // EXIT itself completing, which is draining, not a control code's stall count.
    let config = GpuConfig::preset("volta").unwrap();
    let launch = one_launch(".kernel only_exit\n.regs 2\n    EXIT\n", 8, 32);
    let path = record_verbose("only-exit", &config, &[launch]);
    let detailed = analyze_file(&path, Taxonomy::Detailed).unwrap();
    let l = &detailed.launches[0];
    assert!(
        l.warp_states.get("drain").is_some_and(|&n| n > 0),
        "{:?}",
        l.warp_states
    );
    assert_eq!(
        l.warp_states.get("stall_count").copied().unwrap_or(0),
        0,
        "{:?}",
        l.warp_states
    );
}

#[test]
fn coarse_switches_cost_refill_slots() {
    let mut config = GpuConfig::preset("small").unwrap();
    config.scheduler.policy = Policy::Coarse;
    config.scheduler.switch_cost = 3;
    let a = analyze_kernel("vecadd.json", &config, "vecadd-coarse");
    let s = &a.launches[0].issue_slots;
    assert!(s.refill > 0, "{s:?}");
    assert_eq!(s.refill % 3, 0);
}

#[test]
fn text_and_json_reports_have_the_sections() {
    let config = GpuConfig::preset("small").unwrap();
    let a = analyze_kernel("reduce.json", &config, "reduce-report");
    let text = render_text(&a);
    println!("{text}");
    // An assembled kernel's listing is whole: no note about operands a replay leaves out.
    assert!(!text.contains("replayed SASS"), "{text}");
    for section in [
        "Launch Statistics",
        "Scheduler Statistics",
        "Warp State Statistics",
        "Issue Slots",
        "Source Hotspots",
        "BAR.SYNC",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&to_json(&a)).unwrap();
    let l = &json["launches"][0];
    assert_eq!(l["name"], "reduce");
    for key in [
        "warp_states",
        "warp_states_per_issue",
        "warp_cycles_per_issued_instruction",
        "scheduler",
        "issue_slots",
        "source",
    ] {
        assert!(!l[key].is_null(), "{key}");
    }
    assert!(l["scheduler"]["one_or_more_eligible_pct"].is_number());
}

#[test]
fn multi_launch_traces_are_split_per_launch() {
    let config = GpuConfig::preset("small").unwrap();
    let mut memory = GlobalMemory::new(1 << 20);
    let launches = [
        warpscope::bench::vecadd_launch(512),
        warpscope::bench::ffma_launch(2, 5),
    ];
    let path = record_trace("two-launches", &config, &launches, &mut memory).unwrap();
    let a = check_invariants("two-launches", &path, &config);
    assert_eq!(a.launches.len(), 2);
    assert_eq!(a.launches[0].name, "vecadd");
    assert_eq!(a.launches[1].name, "ffma_loop");
    // ffma_loop: 6 setup + 5 × 7 loop + EXIT per warp, 2 blocks of 8 warps.
    assert_eq!(a.launches[1].warp_instructions, 16 * (6 + 5 * 7 + 1));
    assert!(a.launches[0].warp_instructions > 0);
}

#[test]
fn detailed_taxonomy_refines_nsight() {
    let config = GpuConfig::preset("small").unwrap();
    let lf = LaunchFile::load(&kernels_dir().join("reduce.json")).unwrap();
    let mut memory = lf.initial_memory();
    let path = record_trace(
        "reduce-detailed",
        &config,
        &lf.kernel_launches(),
        &mut memory,
    )
    .unwrap();
    let n = analyze_file(&path, Taxonomy::Nsight).unwrap();
    let d = analyze_file(&path, Taxonomy::Detailed).unwrap();
    let total = |a: &Analysis| a.launches[0].warp_states.values().sum::<u64>();
    assert_eq!(total(&n), total(&d));
    assert!(d.launches[0].warp_states.keys().any(|k| k == "cta_barrier"));
    let _ = WarpState::Selected;
}

#[test]
fn json_lines_traces_analyze_identically() {
    let config = GpuConfig::preset("volta").unwrap();
    let lf = LaunchFile::load(&kernels_dir().join("matmul.json")).unwrap();
    let mut memory = lf.initial_memory();
    let bin = record_trace("matmul-bin", &config, &lf.kernel_launches(), &mut memory).unwrap();
    let jsonl = bin.with_extension("jsonl");
    warpscope::trace::convert_file(&bin, &jsonl).unwrap();
    assert_eq!(analyze(&bin), analyze(&jsonl));
}

fn record_verbose(name: &str, config: &GpuConfig, launches: &[KernelLaunch]) -> PathBuf {
    let path = trace_path(name);
    let mut memory = GlobalMemory::new(1 << 20);
    let out = record(
        config,
        launches,
        &mut memory,
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        2,
    )
    .unwrap();
    assert!(out.fault.is_none(), "{name}: {:?}", out.fault);
    path
}

fn one_launch(src: &str, grid: u32, block: u32) -> KernelLaunch {
    KernelLaunch {
        program: native(src),
        grid: Dim3::linear(grid),
        block: Dim3::linear(block),
        params: vec![],
        stream: 0,
    }
}

#[test]
fn memory_section_counts_requests_sectors_and_levels() {
    let file = LaunchFile::load(&kernels_dir().join("vecadd.json")).unwrap();
    let config = GpuConfig::preset("small").unwrap();
    let mut memory = file.initial_memory();
    let path = record_trace_at(
        "vecadd-verbose",
        &config,
        &file.kernel_launches(),
        &mut memory,
        2,
    )
    .unwrap();
    let a = check_invariants("vecadd-verbose", &path, &config);
    let m = &a.launches[0].memory;
    assert!(m.recorded);
    // 32 warps × (2 loads + 1 store); 31 full warps touch 4 sectors per request, the last warp
    // (elements 992..999) one.
    assert_eq!(m.global_requests, 96);
    assert_eq!(m.global_sectors, 31 * 4 * 3 + 3);
    assert!((m.sectors_per_request - 375.0 / 96.0).abs() < 1e-12);
    // The launch's hit figures are the loads' (no atomics here; stores have none).
    assert_eq!(m.l1_hits + m.l2_hits + m.dram_requests, 64);
    assert!(m.dram_requests > 0, "{m:?}");
    // Apart: two loads and a store per warp; every level answered loads only.
    let (loads, stores) = (&m.global_loads, &m.global_stores);
    assert_eq!((loads.requests, stores.requests), (64, 32));
    assert_eq!(loads.sectors + stores.sectors, m.global_sectors);
    let answered = loads.l1_hits.unwrap() + loads.l2_hits.unwrap() + loads.dram_requests.unwrap();
    assert_eq!(answered, 64);
    assert_eq!(loads.dram_requests, Some(m.dram_requests));
    assert_eq!(stores.l2_hits, None);
    assert_eq!(m.shared_requests, 0);
    // Coalesced: the rule stays quiet.
    assert!(a.launches[0]
        .hints
        .iter()
        .all(|h| h.rule != "uncoalesced_global"));

    // Without memory events the section says so instead of showing zeros.
    let quiet = analyze_kernel("vecadd.json", &config, "vecadd-quiet");
    assert!(!quiet.launches[0].memory.recorded);
    assert!(render_text(&quiet).contains("write them with\n    --verbosity 2"));
}

#[test]
fn occupancy_is_limited_by_registers_when_they_run_out() {
    // 128 registers × 256 threads = 32 Ki registers per block: two blocks fill volta's 64 Ki.
    let config = GpuConfig::preset("volta").unwrap();
    let launch = one_launch(".regs 128\nIADD R1, R2, R3\nEXIT\n", 2, 256);
    let path = record_verbose("occupancy-regs", &config, &[launch]);
    let a = check_invariants("occupancy-regs", &path, &config);
    let o = &a.launches[0].occupancy;
    assert_eq!(o.limiter, SmLimit::Registers);
    // Named in JSON (and so in report.json and the CSV) as before it was an enum.
    assert_eq!(serde_json::to_value(o.limiter).unwrap(), "registers");
    assert_eq!(o.block_limit_registers, 2);
    assert_eq!(o.block_limit_warps, 64 / 8);
    assert_eq!(o.block_limit_shared_memory, None);
    assert_eq!(o.theoretical_blocks_per_sm, 2);
    assert_eq!(o.theoretical_active_warps_per_sm, 16.0);
    assert_eq!(o.theoretical_pct, 25.0);
    // Averaged over the SM-cycles with a block resident, as Nsight Compute does: the two SMs
    // the two blocks leave idle do not halve it.
    let busy: u64 = a.launches[0].dispatch.busy_cycles_per_sm.iter().sum();
    assert_eq!(
        a.launches[0]
            .dispatch
            .blocks_per_sm
            .iter()
            .filter(|&&b| b > 0)
            .count(),
        2
    );
    let expected = a.launches[0].resident_warp_cycles as f64 / busy as f64;
    assert!((o.achieved_active_warps_per_sm - expected).abs() < 1e-12);
    assert!(o.achieved_active_warps_per_sm <= 8.0, "{o:?}");
    let over_all_sms = a.launches[0].resident_warp_cycles as f64
        / (a.launches[0].cycles as f64 * config.num_sms as f64);
    assert!(o.achieved_active_warps_per_sm > 1.9 * over_all_sms, "{o:?}");
    // The scheduler statistics likewise, over the scheduler-cycles that had a warp.
    let s = &a.launches[0].scheduler;
    let sched_cycles = a.launches[0].cycles as f64 * s.schedulers as f64;
    assert!(
        s.active_warps_per_scheduler
            > 1.9 * a.launches[0].resident_warp_cycles as f64 / sched_cycles,
        "{s:?}"
    );
    let limiter = hint_text(&a, "occupancy_limiter");
    // One more block fits at 65536 ÷ (3 × 256) = 85 registers, 80 in volta's granularity of 8.
    assert!(
        limiter.contains("at 128 registers per thread takes 32768 of the SM's 65536 registers")
            && limiter.contains("80 registers per thread or fewer would fit 3 blocks"),
        "{limiter}"
    );
    let text = render_text(&a);
    assert!(text.contains("Occupancy Limiter"), "{text}");
    assert!(text.contains("INF occupancy_limiter"), "{text}");
}

/// The message of `rule`'s hint for the first launch.
fn hint_text(a: &Analysis, rule: &str) -> String {
    let l = &a.launches[0];
    l.hints
        .iter()
        .find(|h| h.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} hint in {:?}", l.hints))
        .message
        .clone()
}

#[test]
fn small_blocks_hitting_the_block_limit_are_told_to_grow() {
    // One warp per block: volta's 32-block limit fills 32 of its 64 warp slots.
    let config = GpuConfig::preset("volta").unwrap();
    let launch = one_launch("IADD R1, R2, R3\nEXIT\n", 4, 32);
    let path = record_verbose("occupancy-blocks", &config, &[launch]);
    let a = check_invariants("occupancy-blocks", &path, &config);
    assert_eq!(a.launches[0].occupancy.limiter, SmLimit::Blocks);
    let limiter = hint_text(&a, "occupancy_limiter");
    assert!(
        limiter.contains("blocks of 32 threads (1 warp) reach the SM's 32-block limit with 32 of its 64 warp slots filled: use larger blocks, 64 threads or more"),
        "{limiter}"
    );
}

#[test]
fn warp_slot_limited_occupancy_names_the_empty_slots() {
    // Blocks of 20 warps: three fill 60 of volta's 64 warp slots, a fourth does not fit.
    let config = GpuConfig::preset("volta").unwrap();
    let launch = one_launch("IADD R1, R2, R3\nEXIT\n", 2, 640);
    let path = record_verbose("occupancy-warps", &config, &[launch]);
    let a = check_invariants("occupancy-warps", &path, &config);
    assert_eq!(a.launches[0].occupancy.limiter, SmLimit::Warps);
    let limiter = hint_text(&a, "occupancy_limiter");
    assert!(
        limiter.contains("Theoretical occupancy is 93.8%, limited by warps to 3 blocks per SM: blocks of 20 warps fit 3 to the SM's 64 warp slots and leave 4 empty: a block whose warp count divides 64 fills them"),
        "{limiter}"
    );
}

#[test]
fn shared_memory_limited_occupancy_names_the_bytes_that_fit_one_more_block() {
    // 40000 bytes a block: two fit in volta's 96 KiB; three need 32768 each at most.
    let config = GpuConfig::preset("volta").unwrap();
    let launch = one_launch(".shared 40000\nIADD R1, R2, R3\nEXIT\n", 2, 128);
    let path = record_verbose("occupancy-shared", &config, &[launch]);
    let a = check_invariants("occupancy-shared", &path, &config);
    assert_eq!(a.launches[0].occupancy.limiter, SmLimit::SharedMemory);
    let limiter = hint_text(&a, "occupancy_limiter");
    assert!(
        limiter.contains("a block takes 40000 of the SM's 98304 bytes of shared memory; 32768 bytes per block or fewer would fit 3 blocks"),
        "{limiter}"
    );
}

#[test]
fn dispatch_section_matches_seed_000_pictures() {
    let file = LaunchFile::load(&kernels_dir().join("vecadd_tiny.json")).unwrap();
    let config = file.gpu_config().unwrap();
    let mut memory = file.initial_memory();
    let path = record_trace(
        "tiny-dispatch",
        &config,
        &file.kernel_launches(),
        &mut memory,
    );
    let a = analyze(&path.unwrap());
    let d = &a.launches[0].dispatch;
    assert_eq!(d.blocks_per_sm, [3, 3]);
    assert_eq!(d.first_grant_cycle, Some(0));
    assert_eq!(d.last_grant_cycle, Some(159));
    // Each core holds a block from its grant to its completion, back to back.
    let cycles = a.launches[0].cycles;
    assert_eq!(d.tail_cycles, cycles - 159);
    assert_eq!(d.busy_cycles_per_sm, [3 * 79, 3 * 79]);
    assert!(d.idle_sm_pct < 1.0);
}

#[test]
fn stalls_are_attributed_to_the_producing_instruction() {
    let config = GpuConfig::preset("small").unwrap();
    let a = analyze_kernel("vecadd.json", &config, "vecadd-attributed");
    let l = &a.launches[0];
    // Everything the FADD waits on comes from the two LDGs (PCs 6 and 7).
    let ldgs: u64 = l.source[6..=7]
        .iter()
        .map(|s| {
            s.attributed_warp_cycles
                .get("long_scoreboard")
                .copied()
                .unwrap_or(0)
        })
        .sum();
    let waiting = l.source[8].warp_cycles["long_scoreboard"];
    assert!(waiting > 0);
    assert!(ldgs >= waiting, "{ldgs} < {waiting}");
    // Attribution redistributes scoreboard stalls, it does not invent them.
    let attributed: u64 = l
        .source
        .iter()
        .map(|s| s.total_attributed_warp_cycles)
        .sum();
    let scoreboard: u64 = ["long_scoreboard", "short_scoreboard", "wait"]
        .iter()
        .map(|s| state(l, s))
        .sum();
    assert!(attributed > 0 && attributed <= scoreboard);
    let d = analyze_file(&trace_path("vecadd-attributed"), Taxonomy::Detailed).unwrap();
    let detailed: u64 = d.launches[0]
        .source
        .iter()
        .map(|s| s.total_attributed_warp_cycles)
        .sum();
    assert_eq!(detailed, attributed);
    let text = render_text(&a);
    assert!(text.contains("stalls attributed to the producing instruction"));
}

/// Each lane loads from its own 128-byte line (32 sectors per request) and stores its word
/// next to its neighbours' (4 sectors per request).
const STRIDED_LOAD_COALESCED_STORE: &str = "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 7\nLDG R2, [R1]\nSHL R3, R0, 2\nIADD R3, R3, 65536\nSTG [R3], R2\nEXIT\n";

#[test]
fn loads_and_stores_are_counted_apart() {
    let config = GpuConfig::preset("small").unwrap();
    let launch = one_launch(STRIDED_LOAD_COALESCED_STORE, 2, 64);
    let path = record_verbose("strided-load-coalesced-store", &config, &[launch]);
    let a = check_invariants("strided-load-coalesced-store", &path, &config);
    let l = &a.launches[0];
    let m = &l.memory;
    let (loads, stores) = (&m.global_loads, &m.global_stores);
    assert_eq!((loads.requests, loads.sectors), (4, 128), "{m:?}");
    assert_eq!((stores.requests, stores.sectors), (4, 16), "{m:?}");
    assert_eq!(loads.sectors_per_request, 32.0);
    assert_eq!(stores.sectors_per_request, 4.0);
    assert_eq!(m.global_atomics.requests, 0);
    // Every load missed both caches (each lane a line of its own, read once).
    assert_eq!(loads.l1_hits, Some(0));
    assert_eq!(loads.l2_hits, Some(0));
    assert_eq!(loads.dram_requests, Some(4));
    assert_eq!(loads.l2_hit_rate_pct, Some(0.0));
    // Stores write through without a hit of their own to report.
    assert_eq!(stores.l1_hits, None);
    assert_eq!(stores.l2_hits, None);
    assert_eq!(stores.l2_hit_rate_pct, None);
    assert_eq!(stores.dram_requests, None);
    // The launch's sector figures count every request; its hit figures are the loads' alone
    // (a store counted as an L2 "hit" made them 50 % against the loads' 0 %).
    assert_eq!(m.global_requests, 8);
    assert_eq!(m.sectors_per_request, 18.0);
    assert_eq!((m.l2_hits, m.dram_requests), (0, 4));
    assert_eq!(m.l2_hit_rate_pct, 0.0);
    // The hint names the loads, not the stores, with the loads' own figures.
    let hint = l
        .hints
        .iter()
        .find(|h| h.rule == "uncoalesced_global")
        .expect("uncoalesced_global");
    assert!(
        hint.message.starts_with(
            "Global loads touch 32.0 sectors per request (128 sectors for 4 requests); their 4-byte accesses by 32 consecutive threads need 4.0 32-byte sectors."
        ),
        "{}",
        hint.message
    );
    assert!(!hint.message.contains("stores"), "{}", hint.message);
    // The text shows a column per direction, and no hit rate for the stores.
    let text = render_text(&a);
    let row = |name: &str| {
        text.lines()
            .find(|line| line.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
            .split_whitespace()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("Sectors Per Request"), ["4.00", "32.00"]);
    assert_eq!(row("L2 Hit Rate [%]"), ["-", "0.00"]);
    assert!(
        text.contains("note: stores write through to the L2"),
        "{text}"
    );
    // CSV and compare rows: per direction, hit figures only where the model has them.
    let rows: Vec<String> = warpscope::analyze::flat::metrics(l)
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert!(rows.contains(&"global_loads.l2_hit_rate_pct".to_string()));
    assert!(!rows.contains(&"global_stores.l2_hit_rate_pct".to_string()));
    let label = warpscope::analyze::flat::label("global_loads.sectors_per_request");
    assert_eq!(label, "Global Load Sectors Per Request");

    // Without a cache hierarchy no direction has hit figures.
    let mut fixed = config.clone();
    fixed.memory.model = MemoryModel::Fixed { latency: 100 };
    let launch = one_launch(STRIDED_LOAD_COALESCED_STORE, 2, 64);
    let path = record_verbose("strided-fixed", &fixed, &[launch]);
    let m = analyze(&path).launches[0].memory.clone();
    assert_eq!(m.global_loads.sectors_per_request, 32.0);
    assert_eq!(
        (m.global_loads.l1_hits, m.global_loads.l1_hit_rate_pct),
        (None, None)
    );
    assert_eq!(m.global_loads.l2_hit_rate_pct, None);
}

#[test]
fn an_uncoalesced_load_does_not_hide_among_coalesced_stores() {
    // One load at an 8-byte stride (8 sectors where 4 would do) and seven coalesced stores:
    // together 36 sectors for 8 requests, 4.5 each, under the rule's threshold.
    let mut src = String::from(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 3\nLDG R2, [R1]\nSHL R3, R0, 2\nIADD R3, R3, 65536\n",
    );
    for i in 0..7 {
        src.push_str(&format!("STG [R3+{}], R2\n", i * 4096));
    }
    src.push_str("EXIT\n");
    let config = GpuConfig::preset("small").unwrap();
    let path = record_verbose("hidden-load", &config, &[one_launch(&src, 1, 64)]);
    let l = &analyze(&path).launches[0];
    let m = &l.memory;
    assert_eq!(m.sectors_per_request, 4.5);
    assert_eq!(m.global_loads.sectors_per_request, 8.0);
    assert_eq!(m.global_stores.sectors_per_request, 4.0);
    let hint = l
        .hints
        .iter()
        .find(|h| h.rule == "uncoalesced_global")
        .expect("the load is uncoalesced");
    assert!(
        hint.message
            .starts_with("Global loads touch 8.0 sectors per request (16 sectors for 2 requests)"),
        "{}",
        hint.message
    );
}

#[test]
fn thread_divergence_is_measured_and_named_where_lanes_are_lost() {
    let config = GpuConfig::preset("small").unwrap();
    // Each lane loops for its own number of Collatz steps: the loop body runs with the lanes
    // still in it, a quarter of the warp on average.
    let a = analyze_kernel("loop.json", &config, "loop-divergence");
    let l = &a.launches[0];
    let per_warp = l.thread_instructions as f64 / l.warp_instructions as f64;
    assert_eq!(l.not_predicated_off_threads_per_warp, per_warp);
    assert!(per_warp < 8.0, "{per_warp}");
    assert_eq!(l.launched_threads_per_warp, 32.0);
    let threads: u64 = l.source.iter().map(|s| s.thread_executions).sum();
    assert_eq!(threads, l.thread_instructions);
    let body = &l.source[9];
    assert_eq!((body.executions, body.thread_executions), (223, 1696));
    let hint = l
        .hints
        .iter()
        .find(|h| h.rule == "thread_divergence")
        .expect("thread_divergence");
    assert_eq!(hint.severity.label(), "OPT");
    // The loop body, not the guarded branch whose lanes are the ones leaving the loop.
    assert!(
        hint.message.contains("with 7.0 of their 32 threads on average")
            && hint.message.contains(
                "Most lanes are lost at pcs 9-15 (`AND R5, R3, 1` … `BRA LOOP`: 7.6 threads per execution, 223 executions each) and pc 7 `ISETP.LE P1, R3, 1` (7.8 threads per execution, 225 executions)."
            ),
        "{}",
        hint.message
    );
    assert!(!hint.message.contains("@P1 BRA"), "{}", hint.message);
    let text = render_text(&a);
    assert!(
        text.contains("    Avg. Not Predicated Off Threads Per Warp           7.03\n"),
        "{text}"
    );

    // Full warps that stay together: no hint.
    let a = analyze_kernel("vecadd.json", &config, "vecadd-no-divergence");
    assert!(a.launches[0].not_predicated_off_threads_per_warp > 28.0);
    assert!(a.launches[0]
        .hints
        .iter()
        .all(|h| h.rule != "thread_divergence"));
    // Blocks of 8 threads: warps a quarter full from their launch, which is no divergence.
    let eight = one_launch(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nIADD R1, R0, R0\nEXIT\n",
        4,
        8,
    );
    let path = record_trace(
        "eight-lanes",
        &config,
        &[eight],
        &mut GlobalMemory::new(1 << 16),
    )
    .unwrap();
    let l = &check_invariants("eight-lanes", &path, &config).launches[0];
    assert_eq!(
        (
            l.not_predicated_off_threads_per_warp,
            l.launched_threads_per_warp
        ),
        (8.0, 8.0)
    );
    assert!(l.hints.iter().all(|h| h.rule != "thread_divergence"));
}

#[test]
fn hints_name_the_dominant_stall_and_uncoalesced_access() {
    let config = GpuConfig::preset("small").unwrap();
    // Each lane loads from its own 128-byte line: 32 sectors per request.
    let strided = one_launch(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 7\nLDG R2, [R1]\nIADD R3, R2, R2\nEXIT\n",
        2,
        64,
    );
    let path = record_verbose("strided", &config, &[strided]);
    let a = check_invariants("strided", &path, &config);
    let l = &a.launches[0];
    assert_eq!(l.memory.sectors_per_request, 32.0);
    let rules: Vec<_> = l
        .hints
        .iter()
        .map(|h| (h.severity.label(), h.rule))
        .collect();
    assert!(rules.contains(&("OPT", "uncoalesced_global")), "{rules:?}");
    let uncoalesced = l
        .hints
        .iter()
        .find(|h| h.rule == "uncoalesced_global")
        .unwrap();
    assert!(
        uncoalesced
            .message
            .contains("their 4-byte accesses by 32 consecutive threads need 4.0 32-byte sectors"),
        "{}",
        uncoalesced.message
    );
    // The hint names the instruction to fix, not only the kernel's average (by PC alone:
    // assembled from a string, it has no file to name a line of).
    assert!(
        uncoalesced.message.contains(
            "`LDG R2, [R1]` (pc 2) touches 32.0 sectors per request where 4.0 would do (112 excess sectors)"
        ),
        "{}",
        uncoalesced.message
    );
    assert!(rules.contains(&("OPT", "dominant_stall")), "{rules:?}");
    let dominant = l.hints.iter().find(|h| h.rule == "dominant_stall").unwrap();
    // The consumer waits; the load it waits for is the one to fix.
    assert!(
        dominant.message.contains("in long_scoreboard")
            && dominant
                .message
                .contains("of it at `IADD R3, R2, R2` (pc 3) waiting for `LDG R2, [R1]` (pc 2)"),
        "{}",
        dominant.message
    );
    // Per PC in the JSON too (the header has the string's lines, but names no file).
    assert_eq!(l.source[2].memory.global_requests, 64 * 2 / 32);
    assert_eq!((l.asm_file.as_deref(), l.source[2].asm_line), (None, None));
    assert_eq!(l.source[2].memory.global_sectors, 32 * 4);
    // OPT hints come before INF ones.
    let first_inf = l.hints.iter().position(|h| h.severity.label() == "INF");
    let last_opt = l.hints.iter().rposition(|h| h.severity.label() == "OPT");
    if let (Some(i), Some(o)) = (first_inf, last_opt) {
        assert!(o < i);
    }
}

/// The dominant stall's "waiting for" names the load the named instruction waits on, not the
/// load the whole kernel waits on most. Here the first load has two consumers (one per half
/// of the warps, each waiting its full latency) and so the most attributed cycles, while the
/// second load's single consumer, behind a few independent instructions, is the instruction
/// that waits longest.
#[test]
fn dominant_stall_names_the_producer_its_instruction_waits_for() {
    let config = GpuConfig::preset("small").unwrap();
    let mut src = String::from(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 2\nLDG R2, [R1]\n\
         SHR R6, %tid.x, 5\nAND R6, R6, 1\nISETP.EQ P0, R6, 0\n@P0 BRA even\n\
         FADD R4, R2, R2\nBRA join\neven:\nFMUL R4, R2, R2\njoin:\nLDG R3, [R1+4096]\n",
    );
    for k in 0..40 {
        src.push_str(&format!("IADD R{}, R0, {k}\n", 10 + k));
    }
    src.push_str("FADD R5, R3, R3\nEXIT\n");
    let path = record_verbose("two-producers", &config, &[one_launch(&src, 2, 128)]);
    let l = &check_invariants("two-producers", &path, &config).launches[0];
    let attributed = |pc: usize| {
        l.source[pc]
            .attributed_warp_cycles
            .get("long_scoreboard")
            .copied()
            .unwrap_or(0)
    };
    // The kernel's top producer is the first load (pc 2), which the old hint named.
    assert!(
        attributed(2) > attributed(10),
        "{} vs {}",
        attributed(2),
        attributed(10)
    );
    let dominant = l.hints.iter().find(|h| h.rule == "dominant_stall").unwrap();
    assert!(
        dominant.message.contains("in long_scoreboard")
            && dominant.message.contains(
                "of it at `FADD R5, R3, R3` (pc 51) waiting for `LDG R3, [R1+4096]` (pc 10)"
            ),
        "{}",
        dominant.message
    );
}

#[test]
fn bank_conflict_hints_name_the_conflicting_instruction() {
    // Lane i stores to word 32·i: every lane in bank 0, 31 extra passes per request. The load
    // of the same lane's word 0-31 range beside it (consecutive words) is conflict-free.
    let config = GpuConfig::preset("small").unwrap();
    let launch = one_launch(
        ".shared 4096\nSHL R1, %tid.x, 7\nSHL R2, %tid.x, 2\nSTS [R1], R2\nLDS R3, [R2]\nEXIT\n",
        1,
        32,
    );
    let path = record_verbose("bank-conflicts", &config, &[launch]);
    let a = check_invariants("bank-conflicts", &path, &config);
    let l = &a.launches[0];
    assert_eq!(l.memory.shared_bank_conflicts, 31, "{:?}", l.memory);
    let conflicts = hint_text(&a, "shared_bank_conflicts");
    assert!(
        conflicts.contains("`STS [R1], R2` (pc 2) needs 31.00 extra passes per request")
            && !conflicts.contains("LDS"),
        "{conflicts}"
    );
}

#[test]
fn a_dominant_drain_is_information_not_advice() {
    // Each warp stores and exits: it spends its life draining the store. Nothing to gain, so
    // the hint is INF, not OPT advice.
    let config = GpuConfig::preset("volta").unwrap();
    let stores = one_launch(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 2\nSTG [R1], R0\nEXIT\n",
        4,
        64,
    );
    let path = record_verbose("drain-only", &config, &[stores]);
    let a = check_invariants("drain-only", &path, &config);
    let l = &a.launches[0];
    let total: u64 = l.warp_states.values().sum();
    assert!(state(l, "drain") * 2 > total, "{:?}", l.warp_states);
    let dominant: Vec<_> = l
        .hints
        .iter()
        .filter(|h| h.rule == "dominant_stall")
        .collect();
    assert_eq!(dominant.len(), 1, "{dominant:?}");
    assert_eq!(dominant[0].severity.label(), "INF", "{dominant:?}");
    assert!(dominant[0].message.contains("in drain"), "{dominant:?}");
}

#[test]
fn a_run_stopped_early_warns_first_and_gives_no_advice() {
    // The strided kernel's complete run has OPT hints (uncoalesced, long_scoreboard); stopped
    // by the watchdog part-way it must say so first and advise nothing.
    let config = GpuConfig::preset("small").unwrap();
    let strided = one_launch(
        "IMAD R0, %ctaid.x, %ntid.x, %tid.x\nSHL R1, R0, 7\nLDG R2, [R1]\nIADD R3, R2, R2\nEXIT\n",
        8,
        64,
    );
    let path = trace_path("strided-stopped");
    let mut memory = GlobalMemory::new(1 << 20);
    let out = record(
        &config,
        &[strided],
        &mut memory,
        SimOptions {
            max_cycles: 60,
            ..SimOptions::default()
        },
        &path,
        TraceFormat::Binary,
        2,
    )
    .unwrap();
    assert!(out.fault.is_some());
    let a = analyze(&path);
    let l = &a.launches[0];
    assert!(!l.completed && l.warp_instructions > 0);
    assert!(l.memory.global_requests > 0, "{:?}", l.memory);
    let first = &l.hints[0];
    assert_eq!((first.severity.label(), first.rule), ("WRN", "incomplete"));
    assert!(
        first.message.contains("did not complete")
            && first.message.contains("only its first 60 cycles"),
        "{}",
        first.message
    );
    assert!(
        l.hints.iter().all(|h| h.severity.label() != "OPT"
            && h.rule != "tail"
            && h.rule != "achieved_occupancy"),
        "{:?}",
        l.hints
    );
    let text = render_text(&a);
    assert!(text.contains("WRN incomplete"), "{text}");
}

#[test]
fn a_corrupt_pc_is_charged_to_one_overflow_line_not_a_table_of_its_size() {
    // Every issue at pc 0 claims pc 4 000 000 000 instead: the per-PC table must not grow to
    // it (that aborted on a 240 GB allocation), and every warp-cycle is still charged. (Binary,
    // with its CRCs intact: JSON Lines are refused at the line, as checked below.)
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/vecadd_tiny.tiny.wstrace");
    let corrupt = trace_path("corrupt-pc");
    let mut reader = TraceReader::open(&sample).unwrap();
    let header_json = reader.header_json().to_string();
    let events: Vec<Event> = reader.by_ref().map(Result::unwrap).collect();
    let mut corrupted = 0;
    let mut writer = warpscope::trace::TraceWriter::with_raw_header(
        Vec::new(),
        TraceFormat::Binary,
        &header_json,
    )
    .unwrap();
    let mut text = header_json.clone() + "\n";
    for mut e in events {
        if let Event::Issue { pc: pc @ 0, .. } = &mut e {
            *pc = 4_000_000_000;
            corrupted += 1;
        }
        writer.write(&e).unwrap();
        text += &serde_json::to_string(&e).unwrap();
        text.push('\n');
    }
    std::fs::write(&corrupt, writer.finish(true).unwrap()).unwrap();
    assert!(corrupted > 0);
    let a = analyze(&corrupt);
    let l = &a.launches[0];
    let total: u64 = l.warp_states.values().sum();
    let by_pc: u64 = l.source.iter().map(|s| s.total_warp_cycles).sum();
    assert_eq!(by_pc, total);
    assert!(
        l.source.len() <= (1 << 16) + 1,
        "{} source lines",
        l.source.len()
    );

    // The same events as JSON Lines, as a hand edit would leave them: refused at the line.
    let trailer = reader.trailer().unwrap();
    text += &format!(
        "{{\"trailer\":{{\"complete\":{},\"events\":{},\"last_cycle\":{}}}}}\n",
        trailer.complete, trailer.events, trailer.last_cycle
    );
    let jsonl = corrupt.with_extension("jsonl");
    std::fs::write(&jsonl, text).unwrap();
    let err = analyze_file(&jsonl, Taxonomy::Nsight)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the issue event names pc 4000000000, past every launch's listing"),
        "{err}"
    );
    assert!(err.contains("line "), "{err}");
}

#[test]
fn source_hotspots_show_operands_not_control_codes() {
    // A kernel with control codes: each listing line opens with 21 characters of them, which
    // once filled the 32-character instruction column.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/vecadd.small.barriers.wstrace");
    let a = analyze(&sample);
    assert!(a.launches[0]
        .source
        .iter()
        .any(|s| s.text.starts_with("[B")));
    let text = render_text(&a);
    let hotspots = text
        .split("Section: Source Hotspots")
        .nth(1)
        .expect("a hotspot table");
    let rows: Vec<&str> = hotspots
        .lines()
        .skip(3)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(!rows.is_empty(), "{hotspots}");
    for row in &rows {
        assert!(!row.contains("[B"), "a control code in {row:?}");
    }
    assert!(
        rows.iter()
            .any(|r| r.contains("FADD R") && r.contains(", R")),
        "no FADD with its operands in {rows:#?}"
    );
}

/// The kernel of `tests/report.rs`'s hazard test: control codes that wait for nothing.
const HAZARD_KERNEL: &str = ".regs 4
 [B------:R-:W-:-:S01] SHL R0, %tid.x, 2
 [B------:R-:W-:-:S01] IADD R0, R0, 64
 [B------:R-:W-:-:S01] LDG R1, [R0]
 [B------:R-:W-:-:S01] IADD R1, R1, 1
 [B------:R-:W-:-:S01] STG [R0], R1
 EXIT
";

#[test]
fn hazards_the_run_let_through_are_counted_and_warned_of() {
    let mut config = GpuConfig::preset("small").unwrap();
    config.scheduler.scoreboard = warpscope::sim::config::ScoreboardKind::Barriers;
    let mut memory = GlobalMemory::new(1 << 20);
    let launch = one_launch(HAZARD_KERNEL, 2, 64);
    let path = record_trace(
        "hazards",
        &config,
        std::slice::from_ref(&launch),
        &mut memory,
    )
    .unwrap();
    let events = TraceReader::open(&path)
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| matches!(e, Event::Hazard { .. }))
        .count() as u64;
    assert!(events > 0);
    let a = analyze(&path);
    let l = &a.launches[0];
    assert_eq!(l.hazards, events);
    // Every warp lets the same dependencies through: the first few name distinct ones.
    assert!(!l.first_hazards.is_empty());
    for (i, h) in l.first_hazards.iter().enumerate() {
        assert!(l.first_hazards[..i].iter().all(|g| {
            (g.kind, &g.register, g.producer_pc, g.consumer_pc)
                != (h.kind, &h.register, h.producer_pc, h.consumer_pc)
        }));
    }
    let first = &l.first_hazards[0];
    assert_eq!(
        (
            first.kind,
            first.register.as_str(),
            first.producer_pc,
            first.consumer_pc
        ),
        ("RAW", "R0", 0, 1)
    );
    let hint = &l.hints[0];
    assert_eq!((hint.severity.label(), hint.rule), ("WRN", "hazards"));
    assert!(
        hint.message
            .contains(&format!("let {events} dependencies through")),
        "{}",
        hint.message
    );
    assert!(
        hint.message
            .contains("RAW on R0: pc 1 `IADD R0, R0, 64` issued while pc 0 `SHL R0, %tid.x, 2`"),
        "{}",
        hint.message
    );
    let text = render_text(&a);
    assert!(text.contains("Dependency Hazards"), "{text}");
    assert!(text.contains("WRN hazards"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&to_json(&a)).unwrap();
    assert_eq!(json["launches"][0]["hazards"], events);
    let csv = warpscope::analyze::to_csv(&a);
    assert!(
        csv.contains(&format!(",launch_statistics,hazards,dependency,{events}\n")),
        "{csv}"
    );

    // The bitmap scoreboard holds every dependency: nothing to warn of, no row.
    config.scheduler.scoreboard = warpscope::sim::config::ScoreboardKind::Bitmap;
    let path = record_trace("no-hazards", &config, &[launch], &mut memory).unwrap();
    let a = analyze(&path);
    assert_eq!(a.launches[0].hazards, 0);
    assert!(a.launches[0].hints.iter().all(|h| h.rule != "hazards"));
    assert!(!render_text(&a).contains("Dependency Hazards"));
}

#[test]
fn a_trace_without_warp_states_says_so_instead_of_a_warp_that_never_waits() {
    let file = LaunchFile::load(&kernels_dir().join("reduce.json")).unwrap();
    let config = GpuConfig::preset("small").unwrap();
    let mut paths = Vec::new();
    for verbosity in [0, 1] {
        let mut memory = file.initial_memory();
        let name = format!("reduce-verbosity-{verbosity}");
        let launches = file.kernel_launches();
        paths.push(record_trace_at(&name, &config, &launches, &mut memory, verbosity).unwrap());
    }
    let (quiet, full) = (analyze(&paths[0]), analyze(&paths[1]));
    let (q, f) = (&quiet.launches[0], &full.launches[0]);
    assert!(f.warp_states_recorded && !q.warp_states_recorded);
    // Same run: what issues and lifecycles give is the same, state-derived figures are absent.
    assert_eq!(q.resident_warp_cycles, f.resident_warp_cycles);
    assert_eq!(
        q.warp_cycles_per_issued_instruction,
        f.warp_cycles_per_issued_instruction
    );
    assert!(q.warp_cycles_per_issued_instruction > 2.0);
    assert!(q.warp_states.is_empty(), "{:?}", q.warp_states);
    assert!(q.warp_states_per_issue.is_empty());
    assert!(q.source.iter().all(|s| s.total_warp_cycles == 0));
    assert_eq!(q.scheduler.no_eligible_pct, 0.0);
    assert_eq!(q.scheduler.eligible_warps_per_scheduler, 0.0);
    for h in &q.hints {
        assert!(
            h.rule != "dominant_stall" && h.rule != "issue_slot_utilization",
            "{}: {}",
            h.rule,
            h.message
        );
    }
    let text = render_text(&quiet);
    assert!(text.contains("warp states not recorded"), "{text}");
    assert!(!text.contains("selected"), "{text}");
    let no_eligible = text
        .lines()
        .find(|l| l.contains("No Eligible [%]"))
        .unwrap();
    assert!(no_eligible.ends_with("not recorded"), "{no_eligible}");
    assert_eq!(q.scheduler.idle_with_eligible_pct, 0.0);
    // The source section still lists what issues tell: the instructions executed most.
    let top = q
        .source
        .iter()
        .max_by_key(|s| (s.executions, std::cmp::Reverse(s.pc)))
        .unwrap();
    let hotspots = text.split("Section: Source Hotspots").nth(1).unwrap();
    let first = hotspots
        .lines()
        .skip_while(|l| !l.contains("instruction (most executed)"))
        .nth(1)
        .unwrap();
    let fields: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(fields[0], top.pc.to_string(), "{first}");
    assert!(
        first.contains(&format!(" {} ", top.executions)),
        "{first}: {} executions",
        top.executions
    );
    let json: serde_json::Value = serde_json::from_str(&to_json(&quiet)).unwrap();
    assert_eq!(json["launches"][0]["warp_states_recorded"], false);
    let csv = warpscope::analyze::to_csv(&quiet);
    assert!(
        !csv.contains("warp_states") && !csv.contains("eligible"),
        "{csv}"
    );
    assert!(render_text(&full).contains("No Eligible [%]"));
    assert!(!render_text(&full).contains("not recorded: record with --verbosity 1"));
}

#[test]
fn a_trace_without_warp_states_still_counts_coarse_refills_as_refill_not_waste() {
    // Refill slots come from `refill` events alone: a verbosity-0 trace of a run must split
    // the issue slots exactly as the verbosity-1 trace of the same run does. `loop` on `small`
    // as the samples record it never switches (its two warps have an SM each); on one SM, and
    // the reduction on two, the coarse schedulers do.
    let cases = [
        ("loop.json", None),
        ("loop.json", Some(1)),
        ("reduce.json", None),
    ];
    for (kernel, sms) in cases {
        let file = LaunchFile::load(&kernels_dir().join(kernel)).unwrap();
        let mut config = GpuConfig::preset("small").unwrap();
        config.scheduler.policy = Policy::Coarse;
        if let Some(sms) = sms {
            config.num_sms = sms;
        }
        let [quiet, full] = [0, 1].map(|verbosity| {
            let mut memory = file.initial_memory();
            let name = format!("{kernel}-coarse-{sms:?}-verbosity-{verbosity}");
            let launches = file.kernel_launches();
            let path = record_trace_at(&name, &config, &launches, &mut memory, verbosity).unwrap();
            let a = analyze(&path);
            assert_eq!(a.launches[0].warp_states_recorded, verbosity > 0);
            a.launches[0].issue_slots
        });
        let what = format!("{kernel} on {sms:?} SMs");
        if sms.is_some() || kernel == "reduce.json" {
            assert!(
                full.refill > 0,
                "{what}: the coarse schedulers switch: {full:?}"
            );
        }
        assert_eq!(quiet.refill, full.refill, "{what}");
        assert_eq!(quiet.vertical_waste, full.vertical_waste, "{what}");
        assert_eq!(quiet.horizontal_waste, full.horizontal_waste, "{what}");
        assert_eq!(quiet, full, "{what}");
    }
}

/// `(path, number)` of every number in `v`, paths dotted (`launch.grid.x`).
fn numbers(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64)>) {
    let join = |k: &str| match prefix {
        "" => k.to_string(),
        p => format!("{p}.{k}"),
    };
    match v {
        serde_json::Value::Number(n) => out.push((prefix.to_string(), n.as_f64().unwrap())),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                numbers(&join(k), v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                numbers(&join(&i.to_string()), v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_csv_carries_every_number_of_the_json() {
    let file = LaunchFile::load(&kernels_dir().join("reduce.json")).unwrap();
    let config = GpuConfig::preset("small").unwrap();
    let path = record_verbose("reduce-csv", &config, &file.kernel_launches());
    let a = analyze(&path);
    let csv = warpscope::analyze::to_csv(&a);
    let mut rows = std::collections::HashMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 6, "{line}");
        rows.insert((f[0].to_string(), f[3].to_string()), f[5].to_string());
    }
    let json: serde_json::Value = serde_json::from_str(&to_json(&a)).unwrap();
    // The sections the CSV names in its own column; their keys stand alone in it.
    let sections = [
        "launch",
        "occupancy",
        "scheduler",
        "issue_slots",
        "memory",
        "dispatch",
    ];
    let mut checked = 0;
    for (i, l) in json["launches"].as_array().unwrap().iter().enumerate() {
        let mut found = Vec::new();
        numbers("", l, &mut found);
        for (path, value) in found {
            let top = path.split('.').next().unwrap();
            if ["index", "source", "cuda_source", "first_hazards", "hints"].contains(&top) {
                continue;
            }
            let name = match sections.contains(&top) {
                true => path.split_once('.').unwrap().1.to_string(),
                false => path.clone(),
            };
            let csv_value = rows
                .get(&(i.to_string(), name.clone()))
                .unwrap_or_else(|| panic!("{path} = {value} is not in the CSV as `{name}`"));
            let csv_value: f64 = csv_value.parse().unwrap();
            assert!(
                (csv_value - value).abs() <= 1e-4 * value.abs().max(1.0),
                "{path}: JSON {value}, CSV {csv_value}"
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked} numbers");
}

/// A kernel whose load is strided by 128 bytes (every request touches 32 sectors), written in
/// a file of its own with a launch file beside it, recorded as `record` records it.
fn strided_kernel_analysis(dir_name: &str) -> Analysis {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir_name);
    std::fs::create_dir_all(&dir).unwrap();
    // Line numbers matter here: LDG is on line 9, its consumer STG on line 12.
    let kernel = "// strided: thread i loads a[32 i]\n\
                  .kernel strided\n\
                  .param a\n\
                  .param c\n\
                  \n    IMAD R0, %ctaid.x, %ntid.x, %tid.x\n\
                  \x20   SHL R1, R0, 7\n\
                  \x20   IADD R2, R1, %param.a\n\
                  \x20   LDG R3, [R2]\n\
                  \x20   SHL R4, R0, 2\n\
                  \x20   IADD R5, R4, %param.c\n\
                  \x20   STG [R5], R3\n\
                  \x20   EXIT\n";
    std::fs::write(dir.join("strided.sasm"), kernel).unwrap();
    std::fs::write(
        dir.join("strided.json"),
        r#"{"kernel": "strided.sasm", "grid": 4, "block": 128,
            "params": {"a": "0x100000", "c": "0x10000"}}"#,
    )
    .unwrap();
    let file = LaunchFile::load(&dir.join("strided.json")).unwrap();
    let config = GpuConfig::preset("small").unwrap();
    let path = trace_path(dir_name);
    let (outcome, _) = file
        .record(
            &config,
            SimOptions::default(),
            &path,
            TraceFormat::Binary,
            2,
        )
        .unwrap();
    assert!(outcome.fault.is_none());
    analyze(&path)
}

#[test]
fn hints_name_the_assembly_file_and_line_of_an_instruction() {
    let a = strided_kernel_analysis("strided-sasm");
    let l = &a.launches[0];
    assert!(l.asm_file.as_deref().unwrap().ends_with("strided.sasm"));
    let ldg = &l.source[3];
    assert!(ldg.text.ends_with("LDG R3, [R2]"), "{}", ldg.text);
    assert_eq!(ldg.asm_line, Some(9));
    assert_eq!(l.source[6].asm_line, Some(12));
    let lines: Vec<_> = l.source.iter().map(|s| s.asm_line).collect();
    assert_eq!(lines, (6..=13).map(Some).collect::<Vec<_>>());
    // The file's own name, not its directory: the hints are sentences.
    let uncoalesced = hint_text(&a, "uncoalesced_global");
    assert!(
        uncoalesced.contains("`LDG R3, [R2]` (pc 3, strided.sasm:9) touches 32.0 sectors"),
        "{uncoalesced}"
    );
    let stall = hint_text(&a, "dominant_stall");
    assert!(
        stall.contains("(pc 6, strided.sasm:12) waiting for `LDG R3, [R2]` (pc 3, strided.sasm:9)"),
        "{stall}"
    );
    // The JSON has the line per instruction and the file per launch.
    let json: serde_json::Value = serde_json::from_str(&to_json(&a)).unwrap();
    assert_eq!(json["launches"][0]["source"][3]["asm_line"], 9);
    assert!(json["launches"][0]["asm_file"]
        .as_str()
        .unwrap()
        .ends_with("strided.sasm"));
    // The text's instruction tables have a line column, the section the file.
    let text = render_text(&a);
    assert!(text.contains("Section: Source Hotspots\n  ---"), "{text}");
    assert!(text.contains("\n    file: "), "{text}");
    assert!(
        text.contains("strided.sasm\n       pc  line instruction"),
        "{text}"
    );
    assert!(text.contains("   pc  line instruction"), "{text}");
    let row = text
        .lines()
        .find(|r| r.contains("LDG R3, [R2]") && !r.contains("OPT"))
        .unwrap();
    assert!(
        row.trim_start().starts_with("3     9 LDG R3, [R2]"),
        "{row}"
    );
}

#[test]
fn a_kernel_without_lines_names_none() {
    // A replayed or hex kernel, or a trace recorded before the lines: pc alone, as before.
    let config = GpuConfig::preset("small").unwrap();
    let file = LaunchFile::load(&kernels_dir().join("vecadd_tiny_hex.json")).unwrap();
    let path = trace_path("vecadd-tiny-hex-lines");
    file.record(
        &config,
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        1,
    )
    .unwrap();
    let a = analyze(&path);
    let l = &a.launches[0];
    assert_eq!(l.asm_file, None);
    assert!(l.source.iter().all(|s| s.asm_line.is_none()));
    let json = to_json(&a);
    assert!(!json.contains("asm_line") && !json.contains("asm_file"));
    let text = render_text(&a);
    assert!(!text.contains("    file: "), "{text}");
    assert!(!text.contains("  line instruction"), "{text}");
    // The same kernel as tiny-gpu text has them.
    let file = LaunchFile::load(&kernels_dir().join("vecadd_tiny.json")).unwrap();
    let path = trace_path("vecadd-tiny-text-lines");
    file.record(
        &config,
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        1,
    )
    .unwrap();
    let a = analyze(&path);
    let l = &a.launches[0];
    assert!(l.asm_file.as_deref().unwrap().ends_with("vecadd_tiny.tgpu"));
    assert_eq!(l.source[0].asm_line, Some(9));
    assert_eq!(l.source[12].asm_line, Some(27));
    assert!(render_text(&a).contains("vecadd_tiny.tgpu\n"));
}

#[test]
fn a_faulting_warps_last_wait_is_charged_to_the_instruction_that_faulted() {
    // Block 1 loads from address 1, misaligned: its warp waits for `MOV`'s result, then
    // faults at the `LDG` without issuing it. Block 0's load is fine.
    let config = GpuConfig::preset("small").unwrap();
    let path = trace_path("fault-site");
    let out = record(
        &config,
        &[one_launch("MOV R1, %ctaid.x\nLDG R2, [R1]\nEXIT\n", 2, 32)],
        &mut GlobalMemory::new(1 << 20),
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        2,
    )
    .unwrap();
    let fault = out.fault.expect("block 1 faults");
    assert_eq!((fault.block, fault.pc), (Some(Dim3::new(1, 0, 0)), Some(1)));
    let a = analyze(&path);
    let l = &a.launches[0];
    assert!(!a.complete);
    // The faulting warp's cycles after its `MOV` issued, from its state events (cycles until
    // the fault); block 0's warp issues the `LDG` and charges its own wait there too.
    let events: Vec<Event> = TraceReader::open(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let issued = |block_sm: u32, pc: u32| {
        events.iter().find_map(|e| match *e {
            Event::Issue {
                cycle, warp, pc: p, ..
            } if warp.sm == block_sm && p == pc => Some(cycle),
            _ => None,
        })
    };
    let fault_cycle = events
        .iter()
        .find_map(|e| matches!(e, Event::Fault { .. }).then(|| e.cycle()))
        .unwrap();
    // Blocks go to SMs in order: block 0 to SM 0, block 1 to SM 1.
    let faulting_wait = fault_cycle - (issued(1, 0).unwrap() + 1);
    let other_wait = issued(0, 1).unwrap() - (issued(0, 0).unwrap() + 1);
    assert!(faulting_wait > 0);
    assert_eq!(issued(1, 1), None, "the faulting load never issues");
    assert_eq!(
        l.source[1].total_warp_cycles,
        faulting_wait + other_wait + 1,
        "{:?}",
        l.source[1]
    );
    // And both waits are for `MOV`'s result: attributed to it as the producer.
    assert_eq!(
        l.source[0].total_attributed_warp_cycles,
        faulting_wait + other_wait
    );
    let by_pc: u64 = l.source.iter().map(|s| s.total_warp_cycles).sum();
    assert_eq!(by_pc, l.warp_states.values().sum::<u64>());
}
