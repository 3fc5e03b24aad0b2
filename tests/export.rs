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
    perfetto::export(TraceReader::open(path).unwrap(), &mut out).unwrap();
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
