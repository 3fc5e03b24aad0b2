//! Invariants of the multithreading issue-slot study over many seeds and configurations.

use warpscope::study::{
    generate_streams, render_text, run, Group, Scheme, SchemeResult, SlotUse, StallPreset,
    StudyConfig, ThreadState, DEFAULT_SEED,
};

/// A spread of configurations, each over several seeds.
fn configs() -> Vec<StudyConfig> {
    let mut out = Vec::new();
    for &width in &[1usize, 2, 4] {
        for &ilp in &[1usize, 3, 6] {
            for &stalls in &StallPreset::ALL {
                for &(lat, switch_cost) in &[(1usize, 0usize), (6, 2), (12, 5)] {
                    for seed in 0..4u64 {
                        out.push(StudyConfig {
                            width,
                            ilp,
                            stalls,
                            lat,
                            switch_cost,
                            groups: 10,
                            seed,
                        });
                    }
                }
            }
        }
    }
    for seed in 0..60 {
        out.push(StudyConfig {
            seed,
            ..StudyConfig::default()
        });
    }
    out
}

fn for_all(check: impl Fn(&StudyConfig, &[Vec<Group>; 2], &SchemeResult)) {
    for cfg in configs() {
        let streams = generate_streams(&cfg);
        let results = run(&cfg);
        assert_eq!(results.len(), 5);
        for (r, s) in results.iter().zip(Scheme::ALL) {
            assert_eq!(r.scheme, s);
            check(&cfg, &streams, r);
        }
    }
}

/// `(thread, group, index, cycle)` of every issued instruction, in grid order.
fn issues(r: &SchemeResult) -> Vec<(usize, usize, usize, usize)> {
    let mut out = Vec::new();
    for (t, rec) in r.grid.iter().enumerate() {
        for s in &rec.slots {
            if let SlotUse::Instruction {
                thread,
                group,
                index,
                ..
            } = *s
            {
                out.push((thread, group, index, t));
            }
        }
    }
    out
}

#[test]
fn program_order_is_kept_per_thread() {
    for_all(|cfg, streams, r| {
        for (tid, stream) in streams.iter().enumerate() {
            let got: Vec<(usize, usize)> = issues(r)
                .into_iter()
                .filter(|i| i.0 == tid)
                .map(|i| (i.1, i.2))
                .collect();
            let want: Vec<(usize, usize)> = stream
                .iter()
                .enumerate()
                .flat_map(|(g, grp)| (0..grp.size).map(move |i| (g, i)))
                .collect();
            assert_eq!(got, want, "{:?} {:?}", r.scheme, cfg);
        }
    });
}

#[test]
fn stalls_are_respected_and_causes_marked() {
    for_all(|cfg, streams, r| {
        for (tid, stream) in streams.iter().enumerate() {
            let mine: Vec<_> = issues(r).into_iter().filter(|i| i.0 == tid).collect();
            let pairs = stream.iter().zip(stream.iter().skip(1));
            for (g, (grp, _next)) in pairs.enumerate() {
                let last = mine.iter().filter(|i| i.1 == g).map(|i| i.3).max().unwrap();
                let first_next = mine.iter().filter(|i| i.1 == g + 1).map(|i| i.3).min();
                let first_next = first_next.unwrap();
                let earliest = last + 1 + grp.stall.cycles(cfg.lat);
                assert!(first_next >= earliest, "{:?} {:?}", r.scheme, cfg);
            }
        }
        // The cause sits on the last instruction of its group only.
        for rec in &r.grid {
            for s in &rec.slots {
                if let SlotUse::Instruction {
                    thread,
                    group,
                    index,
                    cause,
                } = *s
                {
                    let grp = streams[thread][group];
                    if index + 1 == grp.size {
                        let want = match grp.stall {
                            warpscope::study::Stall::None => None,
                            warpscope::study::Stall::Dep => Some(warpscope::study::Cause::Dep),
                            warpscope::study::Stall::Miss => Some(warpscope::study::Cause::Miss),
                        };
                        assert_eq!(cause, want);
                    } else {
                        assert_eq!(cause, None);
                    }
                }
            }
        }
    });
}

#[test]
fn non_smt_schemes_issue_one_thread_per_cycle() {
    for_all(|_, _, r| {
        for rec in &r.grid {
            let issuers = rec.issuers();
            if r.scheme.single_issuer() {
                assert!(issuers.len() <= 1, "{:?}", r.scheme);
            }
            for (tid, st) in rec.threads.iter().enumerate() {
                assert_eq!(*st == ThreadState::Run, issuers.contains(&tid));
            }
        }
    });
}

#[test]
fn none_runs_thread_zero_to_the_end_first() {
    for_all(|_, _, r| {
        if r.scheme != Scheme::None {
            return;
        }
        let threads: Vec<usize> = issues(r).into_iter().map(|i| i.0).collect();
        let mut sorted = threads.clone();
        sorted.sort();
        assert_eq!(threads, sorted);
    });
}

#[test]
fn barrel_issues_only_in_its_own_turn() {
    for_all(|_, _, r| {
        if r.scheme != Scheme::Barrel {
            return;
        }
        for (t, rec) in r.grid.iter().enumerate() {
            let both_live = rec.threads.iter().all(|s| *s != ThreadState::Done);
            for tid in rec.issuers() {
                if both_live {
                    assert_eq!(tid, t % 2, "cycle {t}");
                }
            }
        }
    });
}

#[test]
fn lost_cycles_always_have_a_stalled_thread() {
    for_all(|_, _, r| {
        for rec in &r.grid {
            if rec.instructions() == 0 && !rec.is_refill() {
                assert!(
                    rec.threads
                        .iter()
                        .any(|s| matches!(s, ThreadState::Miss | ThreadState::Dep)),
                    "{:?} {rec:?}",
                    r.scheme
                );
            }
        }
    });
}

#[test]
fn fine_and_smt_never_lose_a_cycle_while_a_thread_is_ready() {
    for_all(|cfg, _, r| {
        if !matches!(r.scheme, Scheme::Fine | Scheme::Smt) {
            return;
        }
        for rec in &r.grid {
            if rec.instructions() == 0 {
                assert!(!rec.threads.contains(&ThreadState::Wait), "{cfg:?}");
            }
            // SMT leaves a ready thread waiting only when the slots are full.
            if r.scheme == Scheme::Smt && rec.threads.contains(&ThreadState::Wait) {
                assert_eq!(rec.instructions(), cfg.width);
            }
        }
    });
}

#[test]
fn each_coarse_switch_costs_exactly_switch_cost_refill_cycles() {
    for_all(|cfg, _, r| {
        if r.scheme != Scheme::Coarse {
            assert_eq!(r.slots.refill, 0);
            return;
        }
        // Count switches as changes of the issuing thread.
        let mut switches = 0;
        let mut prev: Option<usize> = None;
        let mut pending: Vec<(usize, usize)> = Vec::new();
        let mut run_len = 0;
        for rec in &r.grid {
            if rec.is_refill() {
                let froms: Vec<(usize, usize)> = rec
                    .slots
                    .iter()
                    .map(|s| match *s {
                        SlotUse::Refill { from, to } => (from, to),
                        other => panic!("mixed refill cycle: {other:?}"),
                    })
                    .collect();
                assert!(froms.iter().all(|f| *f == froms[0]));
                assert_ne!(froms[0].0, froms[0].1);
                pending.push(froms[0]);
                run_len += 1;
                continue;
            }
            if let Some(&tid) = rec.issuers().first() {
                if let Some(p) = prev {
                    if p != tid && rec.threads[p] == ThreadState::Done {
                        // A finished thread hands over for free.
                        assert_eq!(run_len, 0, "refill after T{p} finished: {cfg:?}");
                    } else if p != tid {
                        switches += 1;
                        assert_eq!(run_len, cfg.switch_cost, "{cfg:?}");
                        for &(from, to) in &pending {
                            assert_eq!((from, to), (p, tid));
                        }
                    } else {
                        assert_eq!(run_len, 0);
                    }
                }
                prev = Some(tid);
                pending.clear();
                run_len = 0;
            }
        }
        assert_eq!(run_len, 0, "trailing refill");
        assert_eq!(r.slots.refill, switches * cfg.switch_cost * cfg.width);
    });
}

#[test]
fn slots_sum_to_width_times_cycles() {
    for_all(|cfg, _, r| {
        assert_eq!(r.cycles, r.grid.len());
        assert_eq!(r.slots.total(), cfg.width * r.cycles);
        for rec in &r.grid {
            assert_eq!(rec.slots.len(), cfg.width);
            let n = rec.instructions();
            for s in &rec.slots {
                match s {
                    SlotUse::VerticalWaste => assert_eq!(n, 0),
                    SlotUse::HorizontalWaste => assert!(n > 0),
                    _ => {}
                }
            }
        }
    });
}

#[test]
fn instruction_count_is_equal_under_every_scheme() {
    for cfg in configs() {
        let streams = generate_streams(&cfg);
        let total: usize = streams.iter().flatten().map(|g| g.size).sum();
        for r in run(&cfg) {
            assert_eq!(r.instructions, total);
            assert_eq!(r.slots.instruction, total);
        }
    }
}

#[test]
fn streams_follow_the_config() {
    for cfg in configs() {
        let streams = generate_streams(&cfg);
        for s in &streams {
            assert_eq!(s.len(), cfg.groups);
            assert!(s.iter().all(|g| (1..=cfg.ilp).contains(&g.size)));
            assert_eq!(s.last().unwrap().stall, warpscope::study::Stall::None);
            if cfg.stalls == StallPreset::None {
                assert!(s.iter().all(|g| g.stall == warpscope::study::Stall::None));
            }
        }
        assert_eq!(streams, generate_streams(&cfg));
    }
}

fn mean_cycles(seeds: std::ops::Range<u64>) -> Vec<f64> {
    let n = (seeds.end - seeds.start) as f64;
    let mut sums = [0usize; 5];
    for seed in seeds {
        let cfg = StudyConfig {
            seed,
            ..StudyConfig::default()
        };
        for (i, r) in run(&cfg).iter().enumerate() {
            sums[i] += r.cycles;
        }
    }
    sums.iter().map(|&s| s as f64 / n).collect()
}

#[test]
fn ordering_holds_on_average_over_60_seeds() {
    let m = mean_cycles(0..60);
    assert!(
        m[0] > m[1] && m[1] > m[2] && m[2] > m[3] && m[3] >= m[4],
        "none, coarse, barrel, fine, smt = {m:?}"
    );
}

#[test]
fn default_seed_gives_five_distinct_cycle_counts() {
    let cfg = StudyConfig::default();
    assert_eq!(cfg.seed, DEFAULT_SEED);
    let mut cycles: Vec<usize> = run(&cfg).iter().map(|r| r.cycles).collect();
    let in_order = cycles.clone();
    cycles.sort();
    cycles.dedup();
    assert_eq!(cycles.len(), 5, "{in_order:?}");
    // And they follow the average ordering.
    assert!(in_order.windows(2).all(|w| w[0] > w[1]), "{in_order:?}");
    assert_eq!(in_order, vec![84, 62, 53, 48, 45]);
}

#[test]
fn render_text_lists_every_scheme() {
    let results = run(&StudyConfig::default());
    let text = render_text(&results);
    assert_eq!(text.lines().count(), 6);
    for s in Scheme::ALL {
        assert!(text.contains(s.name()));
    }
    assert!(text.contains("IPC"));
    let json = serde_json::to_string(&results).unwrap();
    assert!(json.contains("\"scheme\":\"smt\""));
}

#[test]
fn a_thread_is_in_run_exactly_in_the_cycles_it_issues() {
    for_all(|_, _, r| {
        for rec in &r.grid {
            let issuers = rec.issuers();
            for t in 0..2 {
                assert_eq!(
                    rec.threads[t] == ThreadState::Run,
                    issuers.contains(&t),
                    "{:?} cycle {}: thread {t} state {:?}, issuers {issuers:?}",
                    r.scheme,
                    rec.cycle,
                    rec.threads[t]
                );
            }
        }
    });
}

#[test]
fn smt_first_picker_alternates_and_fills_first() {
    for_all(|cfg, _, r| {
        if r.scheme != Scheme::Smt {
            return;
        }
        for rec in &r.grid {
            let first = rec.cycle % 2;
            let second = 1 - first;
            // The first picker is never passed over while it is ready.
            assert_ne!(rec.threads[first], ThreadState::Wait, "cycle {}", rec.cycle);
            if rec.threads[first] == ThreadState::Run {
                assert!(
                    matches!(rec.slots[0], SlotUse::Instruction { thread, .. } if thread == first),
                    "cycle {}: slot 0 is not the first picker's",
                    rec.cycle
                );
            }
            // The second only waits when the first took every slot.
            if rec.threads[second] == ThreadState::Wait {
                assert_eq!(rec.instructions(), cfg.width, "cycle {}", rec.cycle);
            }
        }
    });
}

/// Coarse-grained multithreading without misses never switches away from a live thread, and
/// a finished thread hands over for free, so it is no multithreading at all: the same
/// schedule as `none`, slot for slot.
#[test]
fn coarse_without_misses_is_the_none_schedule() {
    let mut compared = 0;
    for cfg in configs() {
        let streams = generate_streams(&cfg);
        let misses = streams
            .iter()
            .flatten()
            .any(|g| g.stall == warpscope::study::Stall::Miss);
        if misses {
            continue;
        }
        let results = run(&cfg);
        let (none, coarse) = (&results[0], &results[1]);
        assert_eq!(coarse.slots.refill, 0, "{cfg:?}");
        assert_eq!(coarse.cycles, none.cycles, "{cfg:?}");
        assert_eq!(coarse.grid, none.grid, "{cfg:?}");
        compared += 1;
    }
    assert!(compared >= 100, "only {compared} configs without misses");
}

/// The audit's smallest case: one one-instruction group per thread on a one-slot core issues
/// in two cycles under every scheme, coarse-grained included.
#[test]
fn two_single_instructions_take_two_cycles_under_every_scheme() {
    let cfg = StudyConfig {
        width: 1,
        ilp: 1,
        stalls: StallPreset::None,
        groups: 1,
        ..StudyConfig::default()
    };
    for r in run(&cfg) {
        assert_eq!((r.cycles, r.slots.refill), (2, 0), "{:?}", r.scheme);
        assert_eq!(r.ipc(), 1.0, "{:?}", r.scheme);
    }
}

#[test]
fn coarse_switches_only_on_a_miss_to_a_ready_thread() {
    for_all(|_, _, r| {
        if r.scheme != Scheme::Coarse {
            return;
        }
        let mut prev_refill = false;
        for rec in &r.grid {
            if let Some(SlotUse::Refill { from, to }) = rec.slots.first().copied() {
                assert_ne!(from, to);
                if !prev_refill {
                    assert!(
                        rec.threads[from] == ThreadState::Miss
                            && rec.threads[to] == ThreadState::Wait,
                        "cycle {}: switch from T{from} in {:?} to T{to} in {:?}",
                        rec.cycle,
                        rec.threads[from],
                        rec.threads[to]
                    );
                }
            }
            prev_refill = rec.is_refill();
        }
    });
}

mod outputs {
    use warpscope::analyze::{analyze_file, Taxonomy};
    use warpscope::study::{self, generate_streams, run, Cause, SlotUse, StudyConfig, StudyError};
    use warpscope::trace::TraceFormat;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("study");
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    fn trace_bytes(cfg: &StudyConfig, format: TraceFormat) -> Vec<u8> {
        let results = run(cfg);
        study::trace::write_trace(Vec::new(), format, cfg, &generate_streams(cfg), &results)
            .unwrap()
    }

    #[test]
    fn analyze_of_the_trace_reports_the_engines_numbers_for_every_scheme() {
        let configs = [
            StudyConfig::default(),
            StudyConfig {
                width: 2,
                stalls: study::StallPreset::Heavy,
                lat: 9,
                switch_cost: 3,
                seed: 5,
                ..StudyConfig::default()
            },
            StudyConfig {
                width: 1,
                ilp: 1,
                switch_cost: 0,
                seed: 3,
                ..StudyConfig::default()
            },
        ];
        for (i, cfg) in configs.iter().enumerate() {
            for (format, ext) in [
                (TraceFormat::Binary, "wstrace"),
                (TraceFormat::Jsonl, "jsonl"),
            ] {
                let path = tmp(&format!("analyze-{i}.{ext}"));
                std::fs::write(&path, trace_bytes(cfg, format)).unwrap();
                let analysis = analyze_file(&path, Taxonomy::Nsight).unwrap();
                assert!(analysis.complete);
                let results = run(cfg);
                assert_eq!(analysis.launches.len(), results.len());
                let mut start = 0;
                for (l, r) in analysis.launches.iter().zip(&results) {
                    let what = format!("config {i} {ext} {}", r.scheme.name());
                    assert_eq!(l.name, format!("study_{}", r.scheme.name()), "{what}");
                    assert_eq!(l.start_cycle, start, "{what}");
                    assert_eq!(l.cycles, r.cycles as u64, "{what}");
                    assert_eq!(l.warp_instructions, r.instructions as u64, "{what}");
                    let s = l.issue_slots;
                    assert_eq!(s.width as usize, cfg.width, "{what}");
                    assert_eq!(s.issued, r.slots.instruction as u64, "{what}");
                    assert_eq!(s.refill, r.slots.refill as u64, "{what}");
                    assert_eq!(s.vertical_waste, r.slots.vertical_waste as u64, "{what}");
                    assert_eq!(
                        s.horizontal_waste, r.slots.horizontal_waste as u64,
                        "{what}"
                    );
                    // States: selected = issuing warp-cycles; stalls map to the scoreboards.
                    let state = |n: &str| l.warp_states.get(n).copied().unwrap_or(0);
                    let count = |f: &dyn Fn(study::ThreadState) -> bool| -> u64 {
                        r.grid
                            .iter()
                            .flat_map(|c| c.threads)
                            .filter(|&t| f(t))
                            .count() as u64
                    };
                    use study::ThreadState as T;
                    assert_eq!(state("selected"), count(&|t| t == T::Run), "{what}");
                    assert_eq!(state("not_selected"), count(&|t| t == T::Wait), "{what}");
                    assert_eq!(state("long_scoreboard"), count(&|t| t == T::Miss), "{what}");
                    assert_eq!(state("short_scoreboard"), count(&|t| t == T::Dep), "{what}");
                    // Hints in the study's terms: no grid to occupy, misses named as such.
                    for h in &l.hints {
                        assert!(
                            !matches!(h.rule, "achieved_occupancy" | "tail" | "occupancy_limiter"),
                            "{what}: {h:?}"
                        );
                        assert!(!h.message.contains("L1/L2"), "{what}: {h:?}");
                        if h.rule == "dominant_stall" && h.message.contains("in long_scoreboard") {
                            assert!(
                                h.message.contains("wait for misses (--lat"),
                                "{what}: {h:?}"
                            );
                        }
                    }
                    // A cycle apart: the one in which the last threads leave.
                    start += r.cycles as u64 + 1;
                }
            }
        }
    }

    /// A study trace's config has a policy only as a placeholder: the report's header, its
    /// charts' titles and its page title name the schemes its launches are, and the page
    /// title all of them, not the first launch's.
    #[test]
    fn a_study_trace_is_labelled_by_its_schemes_not_a_policy() {
        let cfg = StudyConfig::default();
        let path = tmp("st.wstrace");
        std::fs::write(&path, trace_bytes(&cfg, TraceFormat::Binary)).unwrap();
        let header = warpscope::trace::TraceReader::open(&path)
            .unwrap()
            .header()
            .clone();
        assert_eq!(
            study::trace::schemes_of(&header),
            Some(study::Scheme::ALL.to_vec())
        );
        let captions = warpscope::analyze::caption::captions(&[&header]);
        assert_eq!(
            captions.subject,
            "study_none, study_coarse, study_barrel, study_fine, study_smt on study \
             (one scheme per launch)"
        );
        assert_eq!(captions.distinctions, ["one scheme per launch"]);
        let report = warpscope::report::build(&[path], None).unwrap();
        let page = warpscope::report::html::page(&report);
        assert!(page.contains(
            "<title>warpscope report — st.wstrace: multithreading study \
             (none, coarse, barrel, fine, smt)</title>"
        ));
        assert!(page.contains("schemes <b>none, coarse, barrel, fine, smt</b>, one launch each"));
        // Neither the header line nor any chart names the placeholder.
        let policy = header.config.scheduler.policy.name();
        assert!(!page.contains(policy), "the page names `{policy}`");
        assert!(!page.contains("policy <b>"));
        // Another trace keeps its policy.
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/reduce.small.gto.wstrace"
        );
        let header = warpscope::trace::TraceReader::open(std::path::Path::new(sample))
            .unwrap()
            .header()
            .clone();
        assert_eq!(study::trace::schemes_of(&header), None);
    }

    /// The page draws no grid below three quarters of its size (cells' text at 9 px), and a
    /// grid wider than its card scrolls inside it; the legend is HTML text.
    #[test]
    fn the_page_keeps_grids_above_a_minimum_scale_in_scrolling_boxes() {
        let cfg = StudyConfig::default();
        let results = run(&cfg);
        let page = study::html::render(&cfg, &results);
        let max = results.iter().map(|r| r.cycles).max().unwrap();
        let grid_w = study::svg::grid_width(max);
        let min_w = study::html::min_grid_px(grid_w);
        let cell_px = warpscope::render::TEXT_CELL as f64 * min_w as f64 / grid_w as f64;
        assert!(cell_px >= 9.0, "cell text at {cell_px} px");
        assert!(min_w < grid_w, "{min_w} px: never smaller than drawn");
        assert_eq!(
            page.matches(&format!("<div class=\"grid\"><svg viewBox=\"0 0 {grid_w} "))
                .count(),
            5
        );
        assert_eq!(
            page.matches(&format!("style=\"min-width:{min_w}px\""))
                .count(),
            5
        );
        assert!(page.contains(".card .grid { overflow-x:auto;"));
        assert!(page.contains("<ul class=\"legend\""));
        for label in [
            "thread 0",
            "refill (→ thread)",
            "ready, not picked",
            "M: missing load",
        ] {
            assert!(page.contains(&format!("{label}</li>")), "{label}");
        }
    }

    #[test]
    fn the_readme_picture_is_the_default_study() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/images/study.svg");
        let cfg = StudyConfig::default();
        let expected = study::svg::render(&cfg, &run(&cfg));
        let committed = std::fs::read_to_string(path).unwrap();
        assert!(
            committed == expected,
            "docs/images/study.svg is stale: regenerate it with \
             `warpscope study --svg docs/images/study.svg`"
        );
    }

    #[test]
    fn outputs_are_deterministic() {
        let cfg = StudyConfig::default();
        let results = run(&cfg);
        assert_eq!(
            trace_bytes(&cfg, TraceFormat::Binary),
            trace_bytes(&cfg, TraceFormat::Binary)
        );
        assert_eq!(
            study::svg::render(&cfg, &results),
            study::svg::render(&cfg, &run(&cfg))
        );
        assert_eq!(
            study::html::render(&cfg, &results),
            study::html::render(&cfg, &run(&cfg))
        );
        assert_eq!(
            study::render_json(&cfg, &results),
            study::render_json(&cfg, &run(&cfg))
        );
    }

    #[test]
    fn csv_has_a_row_per_scheme_with_the_settings_and_the_engines_numbers() {
        let cfg = StudyConfig {
            seed: 7,
            ..StudyConfig::default()
        };
        let results = run(&cfg);
        let csv = study::render_csv(&cfg, &results);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), results.len());
        for (row, r) in rows.iter().zip(&results) {
            assert_eq!(row.len(), header.len());
            let field = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
            assert_eq!(field("seed"), "7");
            assert_eq!(field("width"), cfg.width.to_string());
            assert_eq!(field("stalls"), "mixed");
            assert_eq!(field("scheme"), r.scheme.name());
            assert_eq!(field("cycles"), r.cycles.to_string());
            assert_eq!(field("instructions"), r.instructions.to_string());
            assert_eq!(field("ipc").parse::<f64>().unwrap(), r.ipc());
            assert_eq!(field("issued"), r.slots.instruction.to_string());
            assert_eq!(field("refill"), r.slots.refill.to_string());
            assert_eq!(field("vertical_waste"), r.slots.vertical_waste.to_string());
            assert_eq!(
                field("horizontal_waste"),
                r.slots.horizontal_waste.to_string()
            );
        }
    }

    #[test]
    fn json_has_settings_and_every_schemes_slots() {
        let cfg = StudyConfig::default();
        let results = run(&cfg);
        let v: serde_json::Value =
            serde_json::from_str(&study::render_json(&cfg, &results)).unwrap();
        assert_eq!(v["settings"]["width"], 4);
        assert_eq!(v["settings"]["stalls"], "mixed");
        assert_eq!(v["settings"]["seed"], cfg.seed);
        let schemes = v["schemes"].as_array().unwrap();
        let names: Vec<_> = schemes
            .iter()
            .map(|s| s["scheme"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["none", "coarse", "barrel", "fine", "smt"]);
        for (s, r) in schemes.iter().zip(&results) {
            assert_eq!(s["cycles"], r.cycles);
            assert_eq!(s["instructions"], r.instructions);
            assert_eq!(s["slots"]["issued"], r.slots.instruction);
            assert_eq!(s["slots"]["refill"], r.slots.refill);
            assert_eq!(s["slots"]["vertical_waste"], r.slots.vertical_waste);
            assert_eq!(s["slots"]["horizontal_waste"], r.slots.horizontal_waste);
            // Not rounded: the same number `analyze --format json` gives the scheme's trace.
            assert_eq!(s["ipc"].as_f64(), Some(r.ipc()));
        }
    }

    #[test]
    fn svg_has_one_cell_per_slot_cycle_badges_and_refill_targets() {
        let cfg = StudyConfig::default();
        let results = run(&cfg);
        let svg = study::svg::render(&cfg, &results);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        let count = |needle: &str| svg.matches(needle).count();
        let total: usize = results.iter().map(|r| r.slots.total()).sum();
        assert_eq!(count("class=\"slot "), total);
        let sum =
            |f: fn(&study::SlotCounts) -> usize| results.iter().map(|r| f(&r.slots)).sum::<usize>();
        assert_eq!(count("class=\"slot issue"), sum(|s| s.instruction));
        assert_eq!(count("class=\"slot refill\""), sum(|s| s.refill));
        assert_eq!(count("class=\"slot vertical\""), sum(|s| s.vertical_waste));
        assert_eq!(
            count("class=\"slot horizontal\""),
            sum(|s| s.horizontal_waste)
        );
        let causes = |c: Cause| {
            results
                .iter()
                .flat_map(|r| &r.grid)
                .flat_map(|rec| &rec.slots)
                .filter(|s| matches!(s, SlotUse::Instruction { cause: Some(x), .. } if *x == c))
                .count()
        };
        assert!(causes(Cause::Miss) > 0 && causes(Cause::Dep) > 0);
        assert_eq!(count("class=\"badge badge-m\""), causes(Cause::Miss));
        assert_eq!(count("class=\"badge badge-d\""), causes(Cause::Dep));
        // Refill cells name the thread switched to.
        let coarse = &results[1];
        let first_refill = coarse
            .grid
            .iter()
            .find_map(|c| match c.slots[0] {
                SlotUse::Refill { from, to } => Some((c.cycle, from, to)),
                _ => None,
            })
            .expect("the default seed's coarse schedule switches");
        assert!(svg.contains(&format!(
            "cycle {} slot 0: refill, switching from thread {} to thread {}</title></rect><text",
            first_refill.0, first_refill.1, first_refill.2
        )));
        assert!(svg.contains(&format!(">T{}</text>", first_refill.2)));
        // Two thread-state strips per cycle per scheme.
        let cycles: usize = results.iter().map(|r| r.cycles).sum();
        assert_eq!(count("class=\"state state-"), 2 * cycles);
        // Parses as XML and renders.
        let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
        assert!(tree.size().width() > 600.0);
    }

    #[test]
    fn narration_says_who_issues_what_and_who_waits() {
        let cfg = StudyConfig::default();
        let results = run(&cfg);
        let none = &results[0];
        let n0 = study::html::narrate(none, 0);
        assert!(n0.starts_with("cycle 0: T0 issues group 0"), "{n0}");
        assert!(n0.contains("T1 ready, not picked"), "{n0}");
        let miss_cycle = none
            .grid
            .iter()
            .position(|c| c.threads[0] == study::ThreadState::Miss)
            .unwrap();
        let n = study::html::narrate(none, miss_cycle);
        assert!(n.contains("T0 stalled on a miss"), "{n}");
        assert!(n.contains("vertical waste"), "{n}");
        let coarse = &results[1];
        let refill = coarse.grid.iter().position(|c| c.is_refill()).unwrap();
        let n = study::html::narrate(coarse, refill);
        assert!(n.contains("refill: switching from T"), "{n}");
        assert_eq!(
            study::html::narrate(none, none.cycles),
            format!("finished after {} cycles", none.cycles)
        );
    }

    #[test]
    fn html_is_self_contained_with_five_cards_and_controls() {
        let cfg = StudyConfig::default();
        let html = study::html::render(&cfg, &run(&cfg));
        for id in [
            "play",
            "pause",
            "back",
            "fwd",
            "scrub",
            "settings",
            "study-data",
        ] {
            assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
        }
        assert_eq!(html.matches("<section class=\"card\"").count(), 5);
        assert!(html.contains("prefers-color-scheme: dark"));
        assert!(html.contains("position: sticky"));
        for outside in ["<link", "src=\"http", "@import", "url(http", "@font-face"] {
            assert!(!html.contains(outside), "page loads something: {outside}");
        }
    }

    #[test]
    fn bad_settings_are_errors_naming_the_setting() {
        let bad = [
            (
                StudyConfig {
                    width: 0,
                    ..StudyConfig::default()
                },
                "--width",
            ),
            (
                StudyConfig {
                    width: 9,
                    ..StudyConfig::default()
                },
                "--width",
            ),
            (
                StudyConfig {
                    ilp: 0,
                    ..StudyConfig::default()
                },
                "--ilp",
            ),
            (
                StudyConfig {
                    groups: 0,
                    ..StudyConfig::default()
                },
                "--groups",
            ),
            (
                StudyConfig {
                    groups: 1_000_000,
                    ..StudyConfig::default()
                },
                "--groups",
            ),
            (
                StudyConfig {
                    lat: 100_000,
                    ..StudyConfig::default()
                },
                "--lat",
            ),
            (
                StudyConfig {
                    switch_cost: 100_000,
                    ..StudyConfig::default()
                },
                "--switch-cost",
            ),
        ];
        for (cfg, field) in bad {
            let e = cfg.validate().unwrap_err();
            assert!(matches!(e, StudyError::Invalid { .. }));
            assert!(e.to_string().contains(field), "{e}");
        }
        assert!(StudyConfig::default().validate().is_ok());
    }
}

mod cli {
    use std::process::Command;
    const BIN: &str = env!("CARGO_BIN_EXE_warpscope");

    #[test]
    fn study_prints_the_table_json_and_writes_every_output() {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("study-cli");
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(BIN).arg("study").output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.lines().next().unwrap().starts_with("scheme"));
        assert!(text.contains("smt"));
        let (trace, svg, html, json) = (
            dir.join("s.wstrace"),
            dir.join("s.svg"),
            dir.join("s.html"),
            dir.join("s.json"),
        );
        let out = Command::new(BIN)
            .args([
                "study", "--scheme", "coarse", "--scheme", "smt", "--format", "json", "-o",
            ])
            .arg(&json)
            .arg("--trace")
            .arg(&trace)
            .arg("--svg")
            .arg(&svg)
            .arg("--html")
            .arg(&html)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let names: Vec<_> = v["schemes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["scheme"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["coarse", "smt"]);
        for p in [&svg, &html] {
            assert!(std::fs::metadata(p).unwrap().len() > 1000);
        }
        let out = Command::new(BIN)
            .arg("analyze")
            .arg(&trace)
            .output()
            .unwrap();
        assert!(out.status.success());
        let report = String::from_utf8(out.stdout).unwrap();
        assert!(report.contains("study_coarse (launch 0)"), "{report}");
        assert!(report.contains("study_smt (launch 1)"), "{report}");
        // No advice to pass `study` a --verbosity it does not have.
        assert!(report.contains("`study` traces have none"), "{report}");
        assert!(!dir.join("s.wstrace.tmp").exists());
    }

    #[test]
    fn bad_arguments_fail_with_a_message_and_help_has_examples() {
        let out = Command::new(BIN)
            .args(["study", "--width", "0"])
            .output()
            .unwrap();
        // A setting out of its range is a usage error naming the flag and the range.
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("'--width <WIDTH>': 0 is not in 1..=8"),
            "{err}"
        );
        for (flag, value, range) in [
            ("--ilp", "17", "1..=16"),
            ("--lat", "1001", "0..=1000"),
            ("--switch-cost", "1001", "0..=1000"),
            ("--groups", "0", "1..=1000"),
        ] {
            let out = Command::new(BIN)
                .args(["study", flag, value])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{flag} {value}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(err.contains(&format!("{value} is not in {range}")), "{err}");
        }
        let out = Command::new(BIN)
            .args([
                "study", "--groups", "1000", "--lat", "1000", "--stalls", "heavy", "--svg",
            ])
            .arg(std::env::temp_dir().join("warpscope-never-written.svg"))
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("too many to draw (at most 2000)"), "{err}");
        assert!(!std::env::temp_dir()
            .join("warpscope-never-written.svg")
            .exists());
        let out = Command::new(BIN)
            .args(["study", "--stalls", "sometimes"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let out = Command::new(BIN)
            .args(["study", "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("Examples:") && help.contains("--switch-cost"),
            "{help}"
        );
    }
}
