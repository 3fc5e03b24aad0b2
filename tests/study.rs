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
                    if p != tid {
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
