//! `report` and `profile`: the HTML page is self-contained and has every section, report.json
//! carries the analysis unchanged, outputs are deterministic, and a faulting kernel still
//! gets a (partial) report.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ws_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run warpscope")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(root().join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wstrace"))
        .collect();
    v.sort();
    v
}

/// Nothing in the page may reach the network or another file.
fn assert_self_contained(html: &str, what: &str) {
    // The SVG namespace is a name, not a resource.
    let html = &html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for needle in ["<link", "@import", "url(", " src=", "http://", "https://"] {
        assert!(!html.contains(needle), "{what}: found `{needle}`");
    }
    assert!(html.starts_with("<!DOCTYPE html>"), "{what}");
    assert!(html.trim_end().ends_with("</html>"), "{what}");
}

#[test]
fn every_sample_gets_a_complete_self_contained_report() {
    for trace in samples() {
        let what = trace.display().to_string();
        let out = dir(trace.file_stem().unwrap().to_str().unwrap());
        ok(&ws_in(
            &root(),
            &[
                "report",
                trace.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
        ));
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert_self_contained(&html, &what);
        for section in [
            "Launch Statistics",
            "Occupancy",
            "Scheduler Statistics",
            "Warp State Statistics",
            "Issue Slots",
            "Memory",
            "Dispatch",
            "Source Counters",
            "prefers-color-scheme: dark",
            "name=\"viewport\"",
        ] {
            assert!(html.contains(section), "{what}: no {section}");
        }
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let analyze = ok(&ws_in(
            &root(),
            &["analyze", trace.to_str().unwrap(), "--format", "json"],
        ));
        let analysis: Value = serde_json::from_str(&analyze).unwrap();
        assert_eq!(json["traces"][0]["analysis"], analysis, "{what}");
        let text = std::fs::read_to_string(out.join("report.txt")).unwrap();
        assert!(text.contains("Section: Warp State Statistics"), "{what}");
        // The six charts, inline, with tooltip regions.
        assert_eq!(html.matches("<svg").count(), 6, "{what}");
        assert!(html.contains("<g class=\"tips\""), "{what}");
        assert!(html.len() < 2_000_000, "{what}: {} bytes", html.len());
        for chart in [
            "stalls",
            "timeline",
            "dispatch",
            "occupancy",
            "slots",
            "source",
        ] {
            let svg = std::fs::read_to_string(out.join(format!("{chart}.svg"))).unwrap();
            assert!(
                svg.contains("<svg") && svg.trim_end().ends_with("</svg>"),
                "{what}: {chart}"
            );
            assert!(
                html.contains(&svg[..svg.len().min(200)]),
                "{what}: {chart} not inlined"
            );
        }
        // Every warp state with cycles appears in the page's table.
        for (state, n) in analysis["launches"][0]["warp_states"].as_object().unwrap() {
            if n.as_u64().unwrap() > 0 {
                assert!(
                    html.contains(&format!("</span>{state}</td>")),
                    "{what}: {state}"
                );
            }
        }
    }
}

#[test]
fn several_traces_are_compared_and_output_is_deterministic() {
    let a = root().join("traces/reduce.small.gto.wstrace");
    let b = root().join("traces/reduce.small.lrr.wstrace");
    let (d1, d2) = (dir("cmp1"), dir("cmp2"));
    for d in [&d1, &d2] {
        let out = ok(&ws_in(
            &root(),
            &[
                "report",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "-o",
                d.to_str().unwrap(),
            ],
        ));
        assert!(out.contains("2 traces"), "{out}");
    }
    for f in ["index.html", "report.txt", "report.json"] {
        assert_eq!(
            std::fs::read(d1.join(f)).unwrap(),
            std::fs::read(d2.join(f)).unwrap(),
            "{f}"
        );
    }
    let html = std::fs::read_to_string(d1.join("index.html")).unwrap();
    assert!(html.contains("Comparison") && html.contains("config.scheduler.policy"));
    // Every element id is unique on the page (each trace's launch 0 has its own).
    let ids: Vec<&str> = html
        .split(" id=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    let unique: std::collections::BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert!(ids.contains(&"trace-1-launch-0"), "{ids:?}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(d1.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["comparison"]["baselines"], 1);
    assert_eq!(json["traces"].as_array().unwrap().len(), 2);
}

#[test]
fn profile_without_arguments_profiles_the_bundled_example() {
    let d = dir("profile-default");
    let out = ok(&ws_in(&d, &["profile"]));
    assert!(out.contains("reduce: 2161 cycles"), "{out}");
    assert!(out.contains("top stalls: long_scoreboard"), "{out}");
    // The instruction most warp-cycles are charged to, named where it was written.
    assert!(
        out.contains(
            "hottest instruction: `STS [R3], R2` (pc 5, reduce.sasm:18): 44% of warp-cycles, mostly long_scoreboard"
        ),
        "{out}"
    );
    assert!(out.contains("report: profile-reduce/index.html"), "{out}");
    let report = d.join("profile-reduce");
    for f in [
        "index.html",
        "report.txt",
        "report.json",
        "reduce.wstrace",
        "example/reduce.json",
        "example/reduce.sasm",
    ] {
        assert!(report.join(f).is_file(), "{f}");
    }
    // The trace is exactly what `record --verbosity 2` writes of the copy (whose file the
    // header names: the lines point into it).
    let again = d.join("again.wstrace");
    ok(&ws_in(
        &d,
        &[
            "record",
            "profile-reduce/example/reduce.json",
            "--verbosity",
            "2",
            "-o",
            again.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(report.join("reduce.wstrace")).unwrap()
    );
}

/// A run the watchdog stopped has no achieved occupancy (an average over the whole launch):
/// the summary gives the theoretical one and says why, as the hints drop `achieved_occupancy`.
#[test]
fn profile_of_a_partial_run_gives_no_achieved_occupancy() {
    let d = dir("profile-partial");
    let kernel = root().join("kernels/reduce.json");
    let o = ws_in(
        &d,
        &[
            "profile",
            kernel.to_str().unwrap(),
            "--max-cycles",
            "300",
            "-o",
            "out",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("occupancy: theoretical ")
            && out.contains("achieved not known, the launch did not complete"),
        "{out}"
    );
    assert!(!out.contains("occupancy: achieved"), "{out}");
    assert!(out.contains("WRN incomplete"), "{out}");
    assert!(
        out.contains("the run faulted (the report is partial)"),
        "{out}"
    );
    // A complete run still gives both.
    let out = ok(&ws_in(
        &d,
        &["profile", kernel.to_str().unwrap(), "-o", "whole"],
    ));
    assert!(out.contains("occupancy: achieved "), "{out}");
}

#[test]
fn profile_replays_an_accelsim_trace_and_names_its_hottest_cuda_line() {
    let d = dir("profile-replay");
    let trace = root().join("tests/data/accelsim/v5-ampere-reduce");
    let out = ok(&ws_in(
        &d,
        &["profile", trace.to_str().unwrap(), "--gpu", "volta"],
    ));
    assert!(
        out.contains("reduce(float*, float*, int): 653 cycles, 52 warp instructions"),
        "{out}"
    );
    assert!(
        out.contains("hottest CUDA line: 7 (62% of warp-cycles, mostly long_scoreboard)"),
        "{out}"
    );
    assert!(
        out.contains(
            "hottest instruction: `/*0070*/ STS [R0], R4` (pc 7, CUDA line 7): 62% of warp-cycles"
        ),
        "{out}"
    );
    let report = d.join("profile-v5-ampere-reduce");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("CUDA Source Lines"));
    // The trace is exactly what `replay --verbosity 2` writes.
    let again = d.join("again.wstrace");
    ok(&ws_in(
        &d,
        &[
            "replay",
            trace.to_str().unwrap(),
            "--gpu",
            "volta",
            "--verbosity",
            "2",
            "-o",
            again.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(report.join("v5-ampere-reduce.wstrace")).unwrap()
    );

    // A kernel list names its directory; kernel-file flags and the kernel selection each
    // belong to one kind of input.
    let list = root().join("tests/data/accelsim/v4-volta-2d/kernelslist.g");
    let out = ok(&ws_in(
        &d,
        &["profile", list.to_str().unwrap(), "--kernels", "2"],
    ));
    assert!(
        out.contains("_Z4loopPdi_again:") && !out.contains("loop(double*, int):"),
        "{out}"
    );
    assert!(d.join("profile-v4-volta-2d/v4-volta-2d.wstrace").is_file());
    let o = ws_in(&d, &["profile", list.to_str().unwrap(), "--block", "32"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--block is only for profiling a kernel file"),
        "{stderr}"
    );
    let launch = root().join("kernels/reduce.json");
    let o = ws_in(
        &d,
        &["profile", launch.to_str().unwrap(), "--kernel-name", "x"],
    );
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("kernel selection flags are for Accel-Sim traces"),
        "{stderr}"
    );
    // A compressed kernel trace is taken for one, and its error says what to do.
    std::fs::write(d.join("k.traceg.xz"), b"\xfd7zXZ").unwrap();
    let o = ws_in(&d, &["profile", "k.traceg.xz"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("decompress it first"), "{stderr}");
}

#[test]
fn a_faulting_kernel_still_gets_a_partial_report() {
    let d = dir("profile-fault");
    std::fs::write(
        d.join("bad.sasm"),
        ".kernel bad\nMOV R1, 0x7ffffff0\nLDG R2, [R1]\nIADD R3, R2, R2\nEXIT\n",
    )
    .unwrap();
    let o = ws_in(
        &d,
        &[
            "profile", "bad.sasm", "--grid", "1", "--block", "32", "-o", "out",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("faulted"), "{stdout}");
    let html = std::fs::read_to_string(d.join("out/index.html")).unwrap();
    assert!(
        html.contains("INCOMPLETE"),
        "the page says the run is partial"
    );
    // And what stopped it, on the page and in report.txt.
    let text = std::fs::read_to_string(d.join("out/report.txt")).unwrap();
    for page in [&html, &text] {
        assert!(
            page.contains("fault at cycle 7") && page.contains("beyond the memory limit"),
            "{page}"
        );
    }
    assert!(html.contains("<pre class=\"fault\">"), "{html}");

    // A run stopped before any warp was resident still gets its report: the charts with
    // nothing to draw say why.
    let kernels = root().join("kernels");
    let launch = warpscope::launchfile::LaunchFile::load(&kernels.join("reduce.json")).unwrap();
    let config = warpscope::sim::config::GpuConfig::preset("small").unwrap();
    let trace = d.join("stopped.wstrace");
    let outcome = warpscope::trace::record(
        &config,
        &launch.kernel_launches(),
        &mut launch.initial_memory(),
        warpscope::sim::gpu::SimOptions {
            max_cycles: 0,
            skip_idle: true,
        },
        &trace,
        warpscope::trace::TraceFormat::Binary,
        1,
    )
    .unwrap();
    assert!(outcome.fault.is_some());
    let report = warpscope::report::build(std::slice::from_ref(&trace), None).unwrap();
    let timeline = &report.traces[0]
        .charts
        .iter()
        .find(|c| c.name == "timeline")
        .unwrap();
    assert!(
        timeline
            .svg
            .contains("timeline: no warp was resident in cycles 0..1"),
        "{}",
        timeline.svg
    );
    let page = warpscope::report::html::page(&report);
    assert!(page.contains("watchdog: stopped after 0 cycles"));
    // At a report's --width the box is that wide, its text cut inside it.
    let narrow = warpscope::report::build(&[trace], Some(400)).unwrap();
    for c in &narrow.traces[0].charts {
        assert!(c.svg.contains("width=\"400\""), "{}: {}", c.name, c.svg);
        if c.name == "timeline" {
            assert!(
                c.svg
                    .contains("timeline: no warp was resident in cycles 0…</text>"),
                "{}",
                c.svg
            );
        }
    }

    let o = ws_in(&d, &["profile", "missing.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json"));
    let o = ws_in(&d, &["report", "nope.wstrace", "-o", "r"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.wstrace"));
    // A file where the output directory should go is named as such, and left alone.
    std::fs::write(d.join("taken"), "keep").unwrap();
    for args in [
        &["report", "out/bad.wstrace", "-o", "taken"][..],
        &[
            "profile", "bad.sasm", "--grid", "1", "--block", "32", "-o", "taken",
        ],
    ] {
        let o = ws_in(&d, args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("taken exists and is not a directory"),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(d.join("taken")).unwrap(), "keep");
}

/// A kernel whose control codes wait for nothing: the `barriers` scoreboard lets its
/// dependencies through (the load's address, the load's result).
const HAZARD_KERNEL: &str = ".kernel haz
.regs 4
.param a
 [B------:R-:W-:-:S01] SHL R0, %tid.x, 2
 [B------:R-:W-:-:S01] IADD R0, R0, %param.a
 [B------:R-:W-:-:S01] LDG R1, [R0]
 [B------:R-:W-:-:S01] IADD R1, R1, 1
 [B------:R-:W-:-:S01] STG [R0], R1
 EXIT
";

#[test]
fn hazards_are_warned_of_in_profile_report_and_sweep() {
    let d = dir("hazards");
    std::fs::write(d.join("haz.sasm"), HAZARD_KERNEL).unwrap();
    let launch = ["--grid", "1", "--block", "32", "--param", "a=0"];
    let mut args = vec!["profile", "haz.sasm"];
    args.extend(launch);
    args.extend(["--scoreboard", "barriers", "-o", "p"]);
    let out = ok(&ws_in(&d, &args));
    assert!(out.contains("WRN hazards: The run let "), "{out}");
    assert!(out.contains("RAW on R0: pc 1 `IADD R0, R0, "), "{out}");
    let html = std::fs::read_to_string(d.join("p/index.html")).unwrap();
    assert!(html.contains("<div class=\"hint wrn\"><b>WRN hazards</b>"));
    assert!(html.contains("Dependency Hazards"));
    let text = std::fs::read_to_string(d.join("p/report.txt")).unwrap();
    assert!(text.contains("Dependency Hazards"), "{text}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p/report.json")).unwrap()).unwrap();
    let launch0 = &json["traces"][0]["analysis"]["launches"][0];
    assert!(launch0["hazards"].as_u64().unwrap() > 0, "{launch0}");
    assert_eq!(launch0["first_hazards"][0]["consumer_pc"], 1);

    let mut args = vec!["sweep", "haz.sasm"];
    args.extend(launch);
    args.extend(["--scoreboard", "barriers,bitmap", "-o", "s"]);
    let out = ok(&ws_in(&d, &args));
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("barriers")).collect();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.contains(" hazards]")),
        "{out}"
    );
    let clean: Vec<&str> = out.lines().filter(|l| l.contains("bitmap")).collect();
    assert!(
        !clean.is_empty() && clean.iter().all(|r| !r.contains("hazard")),
        "{out}"
    );
}

#[test]
fn a_sweep_without_warp_states_names_no_top_stall() {
    let d = dir("sweep-verbosity-0");
    let kernel = root().join("kernels/reduce.json");
    let out = ok(&ws_in(
        &d,
        &[
            "sweep",
            kernel.to_str().unwrap(),
            "--policy",
            "gto,lrr",
            "--verbosity",
            "0",
            "-o",
            "sw0",
        ],
    ));
    let rows: Vec<&str> = out.lines().filter(|l| l.contains(".bitmap ")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for row in rows {
        assert!(row.ends_with("  -"), "{row:?}");
    }
}

#[test]
fn coalesced_8_byte_accesses_are_not_called_uncoalesced() {
    // `LDG.E.64` by 32 lanes, `STG.E.64` by 16, at consecutive addresses: 8 and 4 sectors.
    let d = dir("coalesced-64");
    let trace = root().join("tests/data/accelsim/v4-volta-2d");
    let out = ok(&ws_in(&d, &["profile", trace.to_str().unwrap(), "-o", "p"]));
    assert!(!out.contains("uncoalesced"), "{out}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("p/report.json")).unwrap()).unwrap();
    let launches = json["traces"][0]["analysis"]["launches"]
        .as_array()
        .unwrap();
    for l in launches {
        let m = &l["memory"];
        assert_eq!(m["max_access_bytes"], 8, "{m}");
        assert_eq!(m["min_access_bytes"], 8, "{m}");
        let (sectors, ideal) = (
            m["sectors_per_request"].as_f64().unwrap(),
            m["ideal_sectors_per_request"].as_f64().unwrap(),
        );
        // Over 4.5, the old threshold for 4-byte accesses, and yet as few as they can be.
        assert!(sectors > 4.5, "{m}");
        assert!((sectors - ideal).abs() < 1e-9, "{m}");
        assert!(l["hints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["rule"] != "uncoalesced_global"));
    }
}

#[test]
fn traces_of_one_file_name_are_told_apart_in_the_report() {
    let d = dir("same-name");
    let paths = ["a", "b"].map(|sub| d.join(sub).join("t.wstrace"));
    for (path, trace) in paths.iter().zip(["reduce.small.gto", "reduce.small.lrr"]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(root().join("traces").join(format!("{trace}.wstrace")), path).unwrap();
    }
    let out = d.join("out");
    ok(&ws_in(
        &d,
        &[
            "report",
            "a/t.wstrace",
            "b/t.wstrace",
            "-o",
            out.to_str().unwrap(),
        ],
    ));
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let labels: Vec<&str> = json["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trace"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["a/t.wstrace", "b/t.wstrace"]);
    assert_eq!(json["comparison"]["traces"], serde_json::json!(labels));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for label in labels {
        assert!(html.contains(&format!("<h2>{label}</h2>")), "{label}");
    }
    // The comparison's stalls chart: a row each, named without the extension, and whole in
    // the page's tooltips.
    let stalls = std::fs::read_to_string(out.join("stalls.svg")).unwrap();
    assert!(
        stalls.contains("\na/t (") && stalls.contains("\nb/t ("),
        "{stalls}"
    );
    assert!(html.contains("<title>a/t.wstrace ("), "{html}");
}

#[test]
fn a_comparison_names_what_differs_between_the_runs() {
    let d = dir("scoreboards");
    let input = root().join("tests/data/accelsim/vectoradd-100-32");
    ok(&ws_in(
        &d,
        &[
            "sweep",
            input.to_str().unwrap(),
            "--scoreboard",
            "bitmap,ranges",
            "-o",
            "sweep",
        ],
    ));
    ok(&ws_in(
        &d,
        &[
            "report",
            "sweep/gto.bitmap.wstrace",
            "sweep/gto.ranges.wstrace",
            "-o",
            "out",
        ],
    ));
    let html = std::fs::read_to_string(d.join("out/index.html")).unwrap();
    let comparison = &html[html.find("<h2 id=\"comparison\">").unwrap()..];
    let runs = &comparison[..comparison.find("</table>").unwrap()];
    assert!(
        runs.contains("<td>gto.bitmap.wstrace</td><td>bitmap scoreboard</td>")
            && runs.contains("<td>gto.ranges.wstrace</td><td>ranges scoreboard</td>"),
        "{runs}"
    );
    // The stalls chart's rows are named by the file names, which say the scoreboard; the
    // page's tooltips say the whole run.
    let stalls = std::fs::read_to_string(d.join("out/stalls.svg")).unwrap();
    for caption in ["with bitmap, ranges", "\ngto.bitmap\n", "\ngto.ranges\n"] {
        assert!(stalls.contains(caption), "{caption}: {stalls}");
    }
    for tip in [
        "<title>gto.bitmap.wstrace (bitmap scoreboard): ",
        "<title>gto.ranges.wstrace (ranges scoreboard): ",
    ] {
        assert!(html.contains(tip), "{tip}");
    }
}

#[test]
fn a_report_of_a_trace_without_warp_states_says_so_beside_each_chart_drawn_from_them() {
    let d = dir("verbosity-0");
    for v in ["0", "1"] {
        ok(&ws_in(
            &root(),
            &[
                "record",
                "kernels/reduce.json",
                "--verbosity",
                v,
                "-o",
                d.join(format!("v{v}.wstrace")).to_str().unwrap(),
            ],
        ));
        ok(&ws_in(
            &d,
            &["report", &format!("v{v}.wstrace"), "-o", &format!("r{v}")],
        ));
    }
    let page = |v: &str| std::fs::read_to_string(d.join(format!("r{v}/index.html"))).unwrap();
    let note = "warp states were not recorded (the trace was recorded with --verbosity 0); \
                record with --verbosity 1 (the default) or 2 to see them.";
    // Each figure: the note above the chart, if any, and the chart's SVG file.
    let figures = |html: &str| -> Vec<(Option<String>, String)> {
        html.split("<figure>")
            .skip(1)
            .map(|f| {
                let f = &f[..f.find("</figure>").unwrap()];
                let note = f
                    .strip_prefix("<div class=\"hint wrn\">")
                    .map(|n| n[..n.find("</div>").unwrap()].to_string());
                (note, f.to_string())
            })
            .collect()
    };
    let quiet = figures(&page("0"));
    assert_eq!(quiet.len(), 6);
    let mut noted = Vec::new();
    for (name, part) in [
        ("stalls", Some("stall bars")),
        ("timeline", Some("warp-state timeline")),
        ("dispatch", None),
        ("occupancy", Some("eligible-warps line")),
        ("slots", Some("warp-state strips")),
        ("source", Some("stall bars")),
    ] {
        let svg = std::fs::read_to_string(d.join(format!("r0/{name}.svg"))).unwrap();
        let (html_note, _) = quiet
            .iter()
            .find(|(_, f)| f.contains(&svg[..svg.find("</svg>").unwrap()]))
            .unwrap_or_else(|| panic!("no figure of {name}.svg"));
        match part {
            Some(part) => {
                assert_eq!(
                    html_note.as_deref(),
                    Some(format!("No {part}: {note}").as_str()),
                    "{name}"
                );
                // The chart itself says it too (wrapped over its lines).
                assert!(svg.contains(&format!("No {part}:")), "{name}");
                noted.push(name);
            }
            None => {
                assert_eq!(html_note, &None, "{name}");
                assert!(!svg.contains("not recorded"), "{name}");
            }
        }
    }
    assert_eq!(noted.len(), 5);
    assert!(figures(&page("1")).iter().all(|(n, _)| n.is_none()));
}

/// A launch file's several launches title the page by their kernels, each named once, not by
/// the first launch alone; past a title's room, by the trace's label and the counts.
#[test]
fn a_trace_of_several_launches_is_titled_by_all_its_kernels() {
    let d = dir("several-launches");
    let kernels = root().join("kernels");
    let vecadd = serde_json::json!({
        "kernel": kernels.join("vecadd.sasm"), "grid": 8, "block": 128,
        "params": {"a": "0x10000", "b": "0x20000", "c": "0x30000", "n": 1000}
    });
    let mufu = serde_json::json!({
        "kernel": kernels.join("mufu.sasm"), "grid": 2, "block": 16, "stream": 1,
        "params": {"out": 0, "n": 32}
    });
    let title = |name: &str, launches: Vec<&Value>| {
        let launch = d.join(format!("{name}.json"));
        let file = serde_json::json!({ "launches": launches });
        std::fs::write(&launch, file.to_string()).unwrap();
        let trace = d.join(format!("{name}.wstrace"));
        ok(&ws_in(
            &d,
            &[
                "record",
                launch.to_str().unwrap(),
                "-o",
                trace.to_str().unwrap(),
            ],
        ));
        let report = warpscope::report::build(&[trace], None).unwrap();
        let page = warpscope::report::html::page(&report);
        let title = warpscope::report::html::page_title(&report);
        assert!(
            page.contains(&format!("<title>{title}</title>")),
            "{name}: {title}"
        );
        title
    };
    assert_eq!(
        title("mixed", vec![&vecadd, &mufu, &vecadd]),
        "warpscope report — vecadd, mufu (3 launches)"
    );
    assert_eq!(
        title("same", vec![&vecadd, &vecadd]),
        "warpscope report — vecadd (2 launches)"
    );
    assert_eq!(title("one", vec![&vecadd]), "warpscope report — vecadd");
    // Kernels whose names would not fit: the trace names the page.
    let mut long = Vec::new();
    for (file, launch) in [("vecadd.sasm", &vecadd), ("mufu.sasm", &mufu)] {
        let name = format!(
            "{}_with_a_name_long_enough_to_crowd_a_title",
            &file[..file.len() - 5]
        );
        let text = std::fs::read_to_string(kernels.join(file)).unwrap();
        let text = text.replacen(".kernel vecadd", &format!(".kernel {name}"), 1);
        let text = text.replacen(".kernel mufu", &format!(".kernel {name}"), 1);
        let path = d.join(format!("{name}.sasm"));
        std::fs::write(&path, text).unwrap();
        let mut launch = launch.clone();
        launch["kernel"] = serde_json::json!(path);
        long.push(launch);
    }
    assert_eq!(
        title("long", long.iter().collect()),
        "warpscope report — long.wstrace (2 launches of 2 kernels)"
    );
}

/// The per-launch tables take their section titles, row labels and column headings from the
/// analyzer's one table of names (`analyze::flat`), as `analyze`'s text and `compare` do, so
/// the page says `Theoretical Active Warps per SM [warp]` where the text does.
#[test]
fn the_reports_launch_tables_are_titled_and_labelled_as_the_analyze_text() {
    use warpscope::analyze::flat;
    for name in ["reduce.small.gto.wstrace", "matmul.volta.gto.wstrace"] {
        let trace = root().join("traces").join(name);
        let report = warpscope::report::build(std::slice::from_ref(&trace), None).unwrap();
        let page = warpscope::report::html::page(&report);
        for (_, title) in flat::SECTIONS {
            assert!(
                page.contains(&format!("<h3>{title}</h3>")),
                "{name}: no section {title}"
            );
        }
        // Every row of a metric table is a label of one of the launch's metrics, or of a row
        // that shows several at once (as the text's rows do).
        let l = &report.traces[0].analysis.launches[0];
        let mut labels: Vec<String> = flat::metrics(l).into_iter().map(|m| m.label).collect();
        labels.extend(
            ["grid", "block", "access_bytes", "block_limit_shared_memory"].map(flat::label),
        );
        let head = "<thead><tr><th>metric</th><th class=\"n\">value</th></tr></thead><tbody>";
        let mut rows = 0;
        for table in page.split(head).skip(1) {
            let body = table.split("</tbody>").next().unwrap();
            for row in body.split("<tr><td>").skip(1) {
                let label = row.split("</td>").next().unwrap().replace("&amp;", "&");
                assert!(
                    labels.contains(&label),
                    "{name}: `{label}` is not how `analyze` names a metric"
                );
                rows += 1;
            }
        }
        assert!(rows >= 30, "{name}: {rows} rows");
        let dispatch = format!(
            "<th>{}</th><th class=\"n\">{}</th><th class=\"n\">{}</th>",
            flat::SM_COLUMN,
            flat::SM_BLOCKS,
            flat::SM_BUSY
        );
        assert!(page.contains(&dispatch), "{name}: no {dispatch}");
        for key in ["vertical_waste", "horizontal_waste"] {
            let row = format!("<tr><td>{}</td>", flat::label(key));
            assert!(page.contains(&row), "{name}: no {row}");
        }
    }
}

/// The occupancy card gives achieved and theoretical occupancy to a tenth of a percent, as
/// `analyze` does: whole percents showed 12.0 of 12.5 as "12% / 12%", a kernel at its limit.
#[test]
fn the_occupancy_card_has_analyze_precision() {
    for trace in samples() {
        let out = dir(&format!(
            "card-{}",
            trace.file_stem().unwrap().to_str().unwrap()
        ));
        ok(&ws_in(
            &root(),
            &[
                "report",
                trace.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
        ));
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        let analysis =
            warpscope::analyze::analyze_file(&trace, warpscope::analyze::Taxonomy::Nsight).unwrap();
        for l in &analysis.launches {
            let card = format!(
                "{:.1}% / {:.1}%",
                l.occupancy.achieved_pct, l.occupancy.theoretical_pct
            );
            assert!(
                html.contains(&card),
                "{}: no card `{card}`",
                trace.display()
            );
        }
    }
}

/// A hint's `quoted` instructions are `<code>` on the page, not backticks.
#[test]
fn hints_quote_instructions_as_code() {
    let trace = root().join("traces/vecadd.small.barriers.wstrace");
    let analysis =
        warpscope::analyze::analyze_file(&trace, warpscope::analyze::Taxonomy::Nsight).unwrap();
    let quoting = analysis.launches[0]
        .hints
        .iter()
        .filter(|h| h.message.contains('`'))
        .count();
    assert!(
        quoting > 0,
        "the sample has a hint that quotes an instruction"
    );
    let out = dir("hint-code");
    ok(&ws_in(
        &root(),
        &[
            "report",
            trace.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    ));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let hints: Vec<&str> = html
        .split("<div class=\"hint")
        .skip(1)
        .map(|d| &d[..d.find("</div>").unwrap()])
        .collect();
    assert!(hints.iter().all(|h| !h.contains('`')), "{hints:?}");
    assert_eq!(
        hints.iter().filter(|h| h.contains("<code>")).count(),
        quoting,
        "{hints:?}"
    );
}

/// A kernel whose load is strided by 128 bytes: the LDG on line 9 touches 32 sectors per
/// request, and the STG on line 12 waits for it.
const STRIDED_SASM: &str = "// strided: thread i loads a[32 i]\n.kernel strided\n.param a\n\
.param c\n\n    IMAD R0, %ctaid.x, %ntid.x, %tid.x\n    SHL R1, R0, 7\n    IADD R2, R1, %param.a\n\
    LDG R3, [R2]\n    SHL R4, R0, 2\n    IADD R5, R4, %param.c\n    STG [R5], R3\n    EXIT\n";

#[test]
fn an_assembled_kernels_profile_names_its_file_and_lines() {
    let d = dir("profile-sasm-lines");
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::write(d.join("src/strided.sasm"), STRIDED_SASM).unwrap();
    std::fs::write(
        d.join("src/strided.json"),
        r#"{"kernel": "strided.sasm", "grid": 4, "block": 128,
            "params": {"a": "0x100000", "c": "0x10000"}}"#,
    )
    .unwrap();
    let out = ok(&ws_in(&d, &["profile", "src/strided.json", "-o", "prof"]));
    assert!(
        out.contains("`LDG R3, [R2]` (pc 3, strided.sasm:9) touches 32.0 sectors per request"),
        "{out}"
    );
    let html = std::fs::read_to_string(d.join("prof/index.html")).unwrap();
    assert!(
        html.contains("<th>pc</th><th>line</th><th>instruction</th>"),
        "no line column"
    );
    assert!(html.contains("<td>3</td><td>9</td>"), "LDG's row");
    assert!(html.contains("of <code>src/strided.sasm</code>"));
    assert!(html.contains("strided.sasm:9"));

    // From the command line the file is named as given there.
    let trace = d.join("cl.wstrace");
    ok(&ws_in(
        &d,
        &[
            "record",
            "src/strided.sasm",
            "--grid",
            "4",
            "--block",
            "128",
            "--param",
            "a=0x100000",
            "--param",
            "c=0x10000",
            "-o",
            trace.to_str().unwrap(),
        ],
    ));
    let json: Value = serde_json::from_str(&ok(&ws_in(
        &d,
        &["analyze", trace.to_str().unwrap(), "--format", "json"],
    )))
    .unwrap();
    assert_eq!(json["launches"][0]["asm_file"], "src/strided.sasm");
    assert_eq!(json["launches"][0]["source"][6]["asm_line"], 12);
}
