//! The Perfetto export, validated structurally on every sample trace: every slice has
//! ts/dur/pid/tid, slices on one track never overlap, processes and threads are named, and the
//! slices add up to exactly what the analyzer charges to each state and PC.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpscope::analyze::{analyze_file, NsightState, Taxonomy};
use warpscope::export::perfetto;
use warpscope::trace::TraceReader;

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wstrace"))
        .collect();
    v.sort();
    assert!(v.len() >= 8);
    v
}

fn export(path: &Path) -> Value {
    let mut out = Vec::new();
    perfetto::export(
        TraceReader::open(path).unwrap(),
        &mut out,
        &perfetto::Selection::default(),
    )
    .unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn every_sample_exports_a_well_formed_trace() {
    let names: Vec<&str> = NsightState::ALL.iter().map(|s| s.name()).collect();
    for path in samples() {
        let what = path.display().to_string();
        let v = export(&path);
        let events = v["traceEvents"].as_array().unwrap();
        let mut tracks: BTreeMap<(u64, u64), Vec<(u64, u64)>> = BTreeMap::new();
        let mut processes = 0;
        let mut threads = 0;
        let mut counters = 0;
        let mut counter_points = std::collections::HashSet::new();
        for e in events {
            match e["ph"].as_str().unwrap() {
                "X" => {
                    let ts = e["ts"].as_u64().expect("ts");
                    let dur = e["dur"].as_u64().expect("dur");
                    assert!(dur > 0, "{what}: empty slice {e}");
                    let key = (
                        e["pid"].as_u64().expect("pid"),
                        e["tid"].as_u64().expect("tid"),
                    );
                    assert!(names.contains(&e["name"].as_str().unwrap()), "{what}: {e}");
                    assert!(e["args"]["reason"].is_string(), "{what}: {e}");
                    tracks.entry(key).or_default().push((ts, dur));
                }
                "M" if e["name"] == "process_name" => processes += 1,
                "M" if e["name"] == "thread_name" => threads += 1,
                "M" => {}
                "C" => {
                    counters += 1;
                    assert!(e["ts"].is_u64() && e["pid"].is_u64(), "{what}: {e}");
                    assert!(e["args"].as_object().unwrap().len() == 1, "{what}: {e}");
                    // One value per counter and cycle (the one the cycle ended with).
                    let at = (
                        e["pid"].as_u64().unwrap(),
                        e["name"].as_str().unwrap().to_string(),
                        e["ts"].as_u64().unwrap(),
                    );
                    assert!(counter_points.insert(at), "{what}: repeated {e}");
                }
                other => panic!("{what}: unexpected phase {other}"),
            }
        }
        assert!(processes >= 1 && threads >= processes, "{what}");
        assert!(counters > 0, "{what}");
        for (key, mut slices) in tracks {
            slices.sort();
            for pair in slices.windows(2) {
                let ((a, d), (b, _)) = (pair[0], pair[1]);
                assert!(a + d <= b, "{what}: overlap on {key:?}: {pair:?}");
            }
        }
    }
}

#[test]
fn slices_add_up_to_the_analysis_by_state_and_pc() {
    for path in samples() {
        let what = path.display().to_string();
        let a = analyze_file(&path, Taxonomy::Nsight).unwrap();
        let v = export(&path);
        let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
        let mut by_pc: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for e in v["traceEvents"].as_array().unwrap() {
            if e["ph"] != "X" {
                continue;
            }
            let dur = e["dur"].as_u64().unwrap();
            *by_state
                .entry(e["name"].as_str().unwrap().into())
                .or_default() += dur;
            if let Some(pc) = e["args"]["pc"].as_u64() {
                let launch = e["args"]["launch"].as_u64().unwrap();
                *by_pc.entry((launch, pc)).or_default() += dur;
            }
        }
        let mut expected: BTreeMap<String, u64> = BTreeMap::new();
        for l in &a.launches {
            for (s, &n) in &l.warp_states {
                if n > 0 {
                    *expected.entry(s.clone()).or_default() += n;
                }
            }
            for line in &l.source {
                let got = by_pc
                    .get(&(l.index as u64, line.pc as u64))
                    .copied()
                    .unwrap_or(0);
                assert_eq!(got, line.total_warp_cycles, "{what}: pc {}", line.pc);
            }
        }
        assert_eq!(by_state, expected, "{what}");
    }
}

#[test]
fn cli_writes_through_a_temporary_file_and_keeps_old_output_on_error() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("export");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("reduce.json");
    let ws = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_warpscope"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    let o = ws(&[
        "export",
        "traces/reduce.small.gto.wstrace",
        "--perfetto",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("state slices"));
    let good = std::fs::read(&out).unwrap();
    serde_json::from_slice::<Value>(&good).unwrap();

    // A corrupt trace: clear error, exit 1, the earlier export untouched, no temporary left.
    let bad = dir.join("bad.wstrace");
    let mut bytes = std::fs::read("traces/reduce.small.gto.wstrace").unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xFF;
    std::fs::write(&bad, &bytes).unwrap();
    let o = ws(&[
        "export",
        bad.to_str().unwrap(),
        "--perfetto",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.wstrace") && err.contains("offset"),
        "{err}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), good);
    assert!(!dir.join("reduce.json.tmp").exists());
}

// Selection: `--from/--to`, `--sm` and `--kernel` export a part of the trace, which is exactly
// the whole export cut to it.

type Slice = (u64, u64, u64, u64, String, String);
type Counters = BTreeMap<(u64, String), Vec<(u64, i64)>>;

fn ws(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("export-selection")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `warpscope export TRACE --perfetto OUT extra...`; the file's bytes and the output.
fn export_cli(trace: &str, extra: &[&str], out: &Path) -> (Vec<u8>, std::process::Output) {
    let _ = std::fs::remove_file(out);
    let mut args = vec!["export", trace, "--perfetto", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = ws(&args);
    assert!(
        o.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (std::fs::read(out).unwrap(), o)
}

/// The slices as (pid, tid, ts, dur, name, args), sorted.
fn slices(v: &Value) -> Vec<Slice> {
    let mut s: Vec<Slice> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
                e["ts"].as_u64().unwrap(),
                e["dur"].as_u64().unwrap(),
                e["name"].as_str().unwrap().to_string(),
                e["args"].to_string(),
            )
        })
        .collect();
    s.sort();
    s
}

/// Each counter track's (ts, value) points in order.
fn counters(v: &Value) -> Counters {
    let mut c = Counters::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["ph"] != "C" {
            continue;
        }
        let value = e["args"].as_object().unwrap().values().next().unwrap();
        c.entry((
            e["pid"].as_u64().unwrap(),
            e["name"].as_str().unwrap().into(),
        ))
        .or_default()
        .push((e["ts"].as_u64().unwrap(), value.as_i64().unwrap()));
    }
    for points in c.values_mut() {
        points.sort();
    }
    c
}

/// The whole export's slices cut to `[from, to)`.
fn clip(all: &[Slice], from: u64, to: u64) -> Vec<Slice> {
    let mut s: Vec<Slice> = all
        .iter()
        .filter_map(|(pid, tid, ts, dur, name, args)| {
            let (a, b) = ((*ts).max(from), (ts + dur).min(to));
            (a < b).then(|| (*pid, *tid, a, b - a, name.clone(), args.clone()))
        })
        .collect();
    s.sort();
    s
}

/// The whole export's counters in `[from, to)`, each starting at `from` with the value it had
/// then.
fn counters_within(all: &Counters, from: u64, to: u64) -> Counters {
    let mut c = Counters::new();
    for (track, points) in all {
        let mut within: Vec<(u64, i64)> = points
            .iter()
            .copied()
            .filter(|&(ts, _)| from <= ts && ts < to)
            .collect();
        let before = points.iter().rev().find(|&&(ts, _)| ts < from);
        if let Some(&(_, value)) = before {
            if within.first().map_or(true, |&(ts, _)| ts > from) {
                within.insert(0, (from, value));
            }
        }
        if !within.is_empty() {
            c.insert(track.clone(), within);
        }
    }
    c
}

const REDUCE: &str = "traces/reduce.small.gto.wstrace";

#[test]
fn a_window_cuts_slices_to_it_and_starts_counters_at_its_first_cycle() {
    let dir = out_dir("window");
    let (whole, _) = export_cli(REDUCE, &[], &dir.join("whole.json"));
    let whole: Value = serde_json::from_slice(&whole).unwrap();
    let (all, all_counters) = (slices(&whole), counters(&whole));
    let end = all.iter().map(|s| s.2 + s.3).max().unwrap();
    assert!(end > 2000, "{end}");
    let metadata = |v: &Value| -> Vec<Value> {
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "M")
            .cloned()
            .collect()
    };
    for (from, to) in [
        (Some(500), Some(1500)),
        (None, Some(300)),
        (Some(1800), None),
    ] {
        let mut flags = Vec::new();
        if let Some(f) = from {
            flags.extend(["--from".to_string(), f.to_string()]);
        }
        if let Some(t) = to {
            flags.extend(["--to".to_string(), t.to_string()]);
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let out = dir.join("part.json");
        let (bytes, o) = export_cli(REDUCE, &flags, &out);
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let both = from.is_some() && to.is_some();
        let (from, last) = (from.unwrap_or(0), to.unwrap_or(end));
        let to = to.unwrap_or(u64::MAX);
        let got = slices(&v);
        assert!(!got.is_empty(), "{flags:?}");
        // Nothing outside the window; a state that began before it starts at its first cycle,
        // one that ends after it ends at its last.
        for s in &got {
            assert!(from <= s.2 && s.2 + s.3 <= to, "{flags:?}: {s:?}");
        }
        if from > 0 {
            assert_eq!(got.iter().map(|s| s.2).min(), Some(from), "{flags:?}");
        }
        assert_eq!(got.iter().map(|s| s.2 + s.3).max(), Some(last), "{flags:?}");
        assert_eq!(got, clip(&all, from, to), "{flags:?}");
        let c = counters(&v);
        for points in c.values() {
            assert!(
                points.iter().all(|&(ts, _)| from <= ts && ts < to),
                "{flags:?}"
            );
        }
        assert_eq!(c, counters_within(&all_counters, from, to), "{flags:?}");
        // Every SM and warp slot is still named.
        assert_eq!(metadata(&v), metadata(&whole), "{flags:?}");
        // The summary names the cycles and the size written.
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains(&format!("{} bytes", bytes.len()))
                && (!both || stdout.contains(&format!("cycles {from}..{to}"))),
            "{stdout}"
        );
    }
}

#[test]
fn an_sm_selection_keeps_only_that_sms_tracks() {
    let dir = out_dir("sm");
    let (whole, _) = export_cli(REDUCE, &[], &dir.join("whole.json"));
    let whole: Value = serde_json::from_slice(&whole).unwrap();
    let (bytes, _) = export_cli(REDUCE, &["--sm", "1"], &dir.join("sm1.json"));
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    for e in v["traceEvents"].as_array().unwrap() {
        assert_eq!(e["pid"], 2, "{e}");
    }
    let want: Vec<Slice> = slices(&whole).into_iter().filter(|s| s.0 == 2).collect();
    assert!(!want.is_empty());
    assert_eq!(slices(&v), want);
    let mut want = counters(&whole);
    want.retain(|(pid, _), _| *pid == 2);
    assert_eq!(counters(&v), want);

    // With a window: both cuts.
    let (bytes, _) = export_cli(
        REDUCE,
        &["--sm", "0", "--from", "200", "--to", "900"],
        &dir.join("sm0-window.json"),
    );
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let sm0: Vec<Slice> = slices(&whole).into_iter().filter(|s| s.0 == 1).collect();
    assert_eq!(slices(&v), clip(&sm0, 200, 900));
}

#[test]
fn a_kernel_selection_keeps_only_its_launches() {
    let dir = out_dir("kernel");
    let trace = dir.join("v4.wstrace");
    let o = ws(&[
        "replay",
        "tests/data/accelsim/v4-volta-2d",
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let trace = trace.to_str().unwrap();
    let (whole, _) = export_cli(trace, &[], &dir.join("whole.json"));
    let whole: Value = serde_json::from_slice(&whole).unwrap();
    let launch = |s: &Slice| serde_json::from_str::<Value>(&s.5).unwrap()["launch"].clone();
    let all = slices(&whole);
    assert!(all.iter().any(|s| launch(s) == 0) && all.iter().any(|s| launch(s) == 1));
    // As `analyze --kernel`: an exact name (mangled, or the function name captions show)
    // picks that kernel, a part of one every kernel that contains it.
    for (kernel, launches) in [
        ("again", vec![1]),
        ("_Z4loopPdi", vec![0]),
        ("loop", vec![0]),
        ("oop", vec![0, 1]),
    ] {
        let (bytes, _) = export_cli(trace, &["--kernel", kernel], &dir.join("one.json"));
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let want: Vec<Slice> = all
            .iter()
            .filter(|s| launches.iter().any(|&l| launch(s) == l))
            .cloned()
            .collect();
        assert_eq!(slices(&v), want, "{kernel}");
        let names: Vec<&str> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert!(!names.is_empty());
        for n in names {
            assert_eq!(n.contains("again"), launches.contains(&1), "{kernel}: {n}");
        }
    }
}

#[test]
fn impossible_selections_exit_2_and_what_the_trace_rules_out_1() {
    let dir = out_dir("errors");
    let out = dir.join("out.json");
    std::fs::write(&out, "earlier").unwrap();
    let cases: [(&[&str], &str, i32); 7] = [
        (
            &["--from", "9", "--to", "3"],
            "--from 9 must be less than --to 3",
            2,
        ),
        (
            &["--from", "5", "--to", "5"],
            "--from 5 must be less than --to 5",
            2,
        ),
        (&["--sm", "x"], "invalid value 'x'", 2),
        (
            &["--to", "0"],
            "--to 0 is not after the trace's first cycle 0",
            1,
        ),
        (&["--sm", "2"], "has 2 SMs (0 to 1)", 1),
        (
            &["--from", "1000000000"],
            "--from 1000000000 is past the trace's last cycle (it covers cycles 0..",
            1,
        ),
        (&["--kernel", "nope"], "no launch of kernel `nope`", 1),
    ];
    for (flags, want, code) in cases {
        let mut args = vec!["export", REDUCE, "--perfetto", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let o = ws(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{flags:?}: {err}");
        assert!(err.contains(want), "{flags:?}: {err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"earlier", "{flags:?}");
        assert!(!dir.join("out.json.tmp").exists(), "{flags:?}");
    }

    // A --to past the end stops at the end, and says so.
    let (_, o) = export_cli(REDUCE, &["--from", "2000", "--to", "1000000000"], &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: --to 1000000000 is past the trace's end: exported cycles 2000.."),
        "{err}"
    );
}

#[test]
fn selected_exports_are_deterministic() {
    let dir = out_dir("determinism");
    for flags in [
        &["--from", "100", "--to", "1700", "--sm", "1"][..],
        &["--kernel", "reduce", "--to", "999"][..],
    ] {
        let (a, _) = export_cli(REDUCE, flags, &dir.join("a.json"));
        let (b, _) = export_cli(REDUCE, flags, &dir.join("b.json"));
        assert!(a == b, "{flags:?}");
    }
}

#[test]
fn the_library_selects_as_the_command_does() {
    let dir = out_dir("library");
    let flags = [
        "--from", "100", "--to", "1700", "--sm", "1", "--kernel", "reduce",
    ];
    let (a, _) = export_cli(REDUCE, &flags, &dir.join("a.json"));
    let selection = perfetto::Selection {
        from: Some(100),
        to: Some(1700),
        sm: Some(1),
        kernel: Some("reduce".into()),
    };
    let mut lib = Vec::new();
    let stats = perfetto::export(
        TraceReader::open(Path::new(REDUCE)).unwrap(),
        &mut lib,
        &selection,
    )
    .unwrap();
    assert!(a == lib);
    assert_eq!((stats.from, stats.to), (100, 1700));
}
