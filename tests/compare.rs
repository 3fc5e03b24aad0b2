//! `analyze --format csv`, `--kernel`, `compare` and `sweep`: the flat metric list they share,
//! baselines, z-scores, header differences, and sweeps that are the same bytes on every run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use warpscope::analyze::compare::{compare, Compared};
use warpscope::analyze::{analyze_file, flat, Taxonomy};

fn ws(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run warpscope")
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

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(format!("{name}.wstrace"))
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("compare")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn load(name: &str) -> Compared {
    let path = sample(name);
    let label = warpscope::trace_label::labels(&[&path]).remove(0);
    Compared::load(&path, label, Taxonomy::Nsight).unwrap()
}

fn row<'a>(
    c: &'a warpscope::analyze::compare::Comparison,
    metric: &str,
) -> &'a warpscope::analyze::compare::MetricRow {
    c.launches[0]
        .metrics
        .iter()
        .find(|r| r.metric == metric)
        .unwrap_or_else(|| panic!("no metric {metric}"))
}

#[test]
fn a_trace_compared_with_itself_differs_nowhere() {
    let a = load("reduce.small.gto");
    let c = compare(&[a.clone(), a], 1);
    assert!(
        c.header_differences.is_empty(),
        "{:?}",
        c.header_differences
    );
    for r in &c.launches[0].metrics {
        assert!(
            r.diff_pct[1].unwrap_or(0.0) == 0.0,
            "{}: {:?}",
            r.metric,
            r.diff_pct
        );
    }
}

#[test]
fn policies_differ_in_the_header_and_in_cycles() {
    let gto = load("reduce.small.gto");
    let lrr = load("reduce.small.lrr");
    let (g, l) = (
        gto.analysis.launches[0].cycles as f64,
        lrr.analysis.launches[0].cycles as f64,
    );
    let c = compare(&[gto, lrr], 1);
    let fields: Vec<_> = c
        .header_differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert!(fields.contains(&"config.scheduler.policy"), "{fields:?}");
    assert!(!fields.iter().any(|f| f.contains("listing")), "{fields:?}");
    // In JSON the values are themselves, not JSON text inside strings.
    let json = serde_json::to_value(&c).unwrap();
    let policy = json["header_differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == "config.scheduler.policy")
        .unwrap();
    assert_eq!(policy["values"], serde_json::json!(["gto", "lrr"]));
    let verbosity = json["header_differences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == "verbosity")
        .unwrap();
    assert_eq!(verbosity["values"], serde_json::json!([2, 1]));
    let cycles = row(&c, "cycles");
    assert_eq!(cycles.baseline_mean, Some(g));
    // Units say what the labels say: warp instructions, warp-cycles.
    assert_eq!(row(&c, "ipc").unit, "warp inst/cycle");
    assert_eq!(row(&c, "warp_states.long_scoreboard").unit, "warp-cycle");
    assert_eq!(cycles.unit, "cycle");
    assert!((cycles.diff_pct[1].unwrap() - (l - g) / g * 100.0).abs() < 1e-9);
    assert_eq!(cycles.diff_pct[0], None, "the baseline has no difference");
    assert!(
        cycles.z_score.iter().all(Option::is_none),
        "one baseline: no z-score"
    );
    // The warp-state breakdowns sit side by side.
    let barrier = row(&c, "warp_states_per_issue.barrier");
    assert!(barrier.values.iter().all(Option::is_some));
}

#[test]
fn several_baselines_give_their_mean_and_z_scores() {
    let traces = [
        load("reduce.small.gto"),
        load("reduce.small.lrr"),
        load("matmul.volta.gto"),
    ];
    let xs: Vec<f64> = traces
        .iter()
        .map(|t| t.analysis.launches[0].cycles as f64)
        .collect();
    let c = compare(&traces, 2);
    let r = row(&c, "cycles");
    let mean = (xs[0] + xs[1]) / 2.0;
    let sd = (((xs[0] - mean).powi(2) + (xs[1] - mean).powi(2)) / 1.0).sqrt();
    assert_eq!(r.baseline_mean, Some(mean));
    assert!((r.z_score[2].unwrap() - (xs[2] - mean) / sd).abs() < 1e-9);
    assert!((r.diff_pct[2].unwrap() - (xs[2] - mean) / mean * 100.0).abs() < 1e-9);
    // Different kernels and GPUs: the header says so first.
    let fields: Vec<_> = c
        .header_differences
        .iter()
        .map(|d| d.field.as_str())
        .collect();
    assert!(fields.contains(&"launches.0.kernel"), "{fields:?}");
    assert!(fields.contains(&"config.name"), "{fields:?}");
    let text = warpscope::analyze::compare::render_text(&c);
    assert!(text.contains("Header differences"), "{text}");
    assert!(text.contains("z-scores"), "{text}");
}

#[test]
fn csv_has_one_row_per_metric_and_matches_json() {
    let out = ok(&ws(&[
        "analyze",
        "traces/vecadd.small.barriers.wstrace",
        "--format",
        "csv",
    ]));
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("launch,kernel,section,metric,unit,value")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 6), "{rows:?}");
    let a = analyze_file(&sample("vecadd.small.barriers"), Taxonomy::Nsight).unwrap();
    assert_eq!(rows.len(), flat::metrics(&a.launches[0]).len());
    let cycles = rows.iter().find(|r| r[3] == "cycles").unwrap();
    assert_eq!(cycles[5], a.launches[0].cycles.to_string());
    let sectors = rows.iter().find(|r| r[3] == "global_sectors").unwrap();
    assert_eq!(sectors[5], a.launches[0].memory.global_sectors.to_string());
}

#[test]
fn kernel_filter_picks_launches_and_names_the_choices() {
    let out = ok(&ws(&[
        "analyze",
        "traces/reduce.small.gto.wstrace",
        "--kernel",
        "reduce",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["launches"].as_array().unwrap().len(), 1);
    let o = ws(&[
        "analyze",
        "traces/reduce.small.gto.wstrace",
        "--kernel",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no launch of kernel `nope`") && err.contains("reduce"),
        "{err}"
    );

    // A replay's mangled names: an exact name keeps only its kernel, a part of one every kernel
    // that contains it.
    let trace = dir("kernel-filter").join("v4.wstrace");
    ok(&ws(&[
        "replay",
        "tests/data/accelsim/v4-volta-2d",
        "-o",
        trace.to_str().unwrap(),
    ]));
    let names = |filter: &str| -> Vec<String> {
        let out = ok(&ws(&[
            "analyze",
            trace.to_str().unwrap(),
            "--kernel",
            filter,
            "--format",
            "json",
        ]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("_Z4loopPdi"), ["_Z4loopPdi"]);
    // `loop` is the first kernel's function name (as captions show it): exact.
    assert_eq!(names("loop"), ["_Z4loopPdi"]);
    assert_eq!(names("oop"), ["_Z4loopPdi", "_Z4loopPdi_again"]);
    assert_eq!(names("again"), ["_Z4loopPdi_again"]);
}

#[test]
fn compare_cli_formats_and_errors() {
    let (a, b) = (
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
    );
    let text = ok(&ws(&["compare", a, b]));
    assert!(text.contains("config.scheduler.policy"), "{text}");
    assert!(text.contains("[1]") && text.contains('%'), "{text}");
    // Every metric row ends at the same column, however long its name; the header
    // differences' values line up too.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("    ") && l.ends_with('%') || l.ends_with(" -"))
        .collect();
    assert!(rows.len() > 20, "{text}");
    assert!(
        rows.iter().all(|r| r.len() == rows[0].len()),
        "{}",
        rows.join("\n")
    );
    let bars: Vec<usize> = text
        .lines()
        .skip_while(|l| !l.starts_with("Header differences"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.find('|').unwrap())
        .collect();
    assert!(
        bars.len() >= 2 && bars.iter().all(|&b| b == bars[0]),
        "{text}"
    );
    let csv = ok(&ws(&["compare", a, b, "--format", "csv"]));
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("launch,kernel,section,metric,unit,trace,baseline,value"));
    let json = ok(&ws(&["compare", a, b, "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["baselines"], 1);
    assert_eq!(v["traces"][1], "reduce.small.lrr.wstrace");

    let o = ws(&["compare", a, b, "--baselines", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--baselines 2"));
    let o = ws(&["compare", a, "traces/missing.wstrace"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.wstrace"));
}

#[test]
fn sweep_records_every_combination_deterministically() {
    let d1 = dir("sweep1");
    let d2 = dir("sweep2");
    for (d, jobs) in [(&d1, "2"), (&d2, "1")] {
        let out = ok(&ws(&[
            "sweep",
            "kernels/reduce.json",
            "--policy",
            "lrr,gto",
            "--scoreboard",
            "bitmap,ranges",
            "--jobs",
            jobs,
            "-o",
            d.to_str().unwrap(),
        ]));
        assert!(out.contains("gto.ranges"), "{out}");
    }
    let mut names: Vec<_> = std::fs::read_dir(&d1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "compare.csv",
            "compare.txt",
            "gto.bitmap.wstrace",
            "gto.ranges.wstrace",
            "lrr.bitmap.wstrace",
            "lrr.ranges.wstrace",
            "sweep.csv"
        ]
    );
    // Same bytes whatever the number of threads.
    for n in &names {
        assert_eq!(
            std::fs::read(d1.join(n)).unwrap(),
            std::fs::read(d2.join(n)).unwrap(),
            "{n}"
        );
    }
    // The recorded traces are what `record` would write for that combination.
    let single = d1.join("single.wstrace");
    ok(&ws(&[
        "record",
        "kernels/reduce.json",
        "--policy",
        "gto",
        "--scoreboard",
        "ranges",
        "-o",
        single.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read(&single).unwrap(),
        std::fs::read(d1.join("gto.ranges.wstrace")).unwrap()
    );
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto",
        "-o",
        d1.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least two combinations"));
    // A combination stopped by the watchdog is marked in the summary (lrr needs 2606 cycles).
    let d = dir("sweep-stopped");
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--max-cycles",
        "2200",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .to_string()
    };
    assert!(
        row("lrr.bitmap").ends_with("[incomplete: see below]"),
        "{out}"
    );
    assert!(!row("gto.bitmap").contains("incomplete"), "{out}");
    // A value given twice would be one trace written twice, and a point the GPU cannot be
    // would fail: refused as a wrong command line before anything runs.
    for (flag, values, named) in [
        ("--policy", "gto,lrr,gto", "--policy lists gto twice"),
        // Seed 004's name for a policy is that policy: the message says why it is listed twice.
        (
            "--policy",
            "fine,lrr",
            "--policy lists lrr twice (`fine` is another name for lrr)",
        ),
        (
            "--policy",
            "gto,sequential,none",
            "--policy lists sequential twice (`none` is another name for sequential)",
        ),
        (
            "--scoreboard",
            "bitmap,bitmap",
            "--scoreboard lists bitmap twice",
        ),
        ("--warps", "8,16,16", "--warps lists 16 twice"),
        (
            "--gpu=volta --warps",
            "2,8",
            "gto.bitmap.w2: gpu config: sm.schedulers: 4 schedulers but only 2 warp slots",
        ),
    ] {
        let d = dir("sweep-twice");
        let (gpu, flag) = flag.split_once(' ').unwrap_or(("--gpu=small", flag));
        let o = ws(&[
            "sweep",
            "kernels/reduce.json",
            gpu,
            flag,
            values,
            "-o",
            d.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        // The whole line: a note where none belongs would be as wrong as a missing one.
        assert!(stderr.starts_with(&format!("error: {named}\n")), "{stderr}");
        assert!(
            std::fs::read_dir(&d).unwrap().next().is_none(),
            "{}",
            d.display()
        );
    }

    // In the compact format: version-8 traces, the same comparison.
    let d3 = dir("sweep3");
    ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "lrr,gto",
        "--scoreboard",
        "bitmap,ranges",
        "--format",
        "compact",
        "-o",
        d3.to_str().unwrap(),
    ]));
    let trace = std::fs::read(d3.join("gto.ranges.wstrace")).unwrap();
    assert_eq!(&trace[8..10], &8u16.to_le_bytes());
    for n in ["compare.csv", "compare.txt", "sweep.csv"] {
        assert_eq!(
            std::fs::read(d1.join(n)).unwrap(),
            std::fs::read(d3.join(n)).unwrap(),
            "{n}"
        );
    }
    // The written table reads as `compare`'s text does: analyze's titles and labels.
    let txt = std::fs::read_to_string(d1.join("compare.txt")).unwrap();
    assert!(
        txt.contains("\n  Scheduler Statistics\n    Schedulers ")
            && txt.contains("    Issued Warp Per Scheduler "),
        "{txt}"
    );
}

/// The names of the `.wstrace` files in `d`, sorted.
fn traces_in(d: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wstrace"))
        .collect();
    names.sort();
    names
}

fn header(path: &Path) -> warpscope::trace::TraceHeader {
    warpscope::trace::TraceReader::open(path)
        .unwrap()
        .header()
        .clone()
}

#[test]
fn sweep_varies_the_issue_width() {
    let d = dir("sweep-width");
    let out = ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "smt,lrr",
        "--issue-width",
        "1,2",
        "-o",
        d.to_str().unwrap(),
    ]));
    let labels = [
        ("smt.bitmap.i1", 1),
        ("smt.bitmap.i2", 2),
        ("lrr.bitmap.i1", 1),
        ("lrr.bitmap.i2", 2),
    ];
    let mut expected: Vec<String> = labels.iter().map(|(l, _)| format!("{l}.wstrace")).collect();
    expected.sort();
    assert_eq!(traces_in(&d), expected);
    let mut cycles = Vec::new();
    for (label, width) in labels {
        let h = header(&d.join(format!("{label}.wstrace")));
        assert_eq!(h.config.sm.issue_width, width, "{label}");
        let policy = label.split('.').next().unwrap();
        assert_eq!(h.config.scheduler.policy.name(), policy, "{label}");
        // The summary has a row per combination, in the plan's order.
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{label} "))),
            "{out}"
        );
        let a = analyze_file(&d.join(format!("{label}.wstrace")), Taxonomy::Nsight).unwrap();
        assert_eq!(a.launches[0].issue_slots.width, width, "{label}");
        cycles.push(a.launches[0].cycles);
    }
    // Two issue slots let smt issue from two warps in a cycle: the kernel runs faster than
    // at one.
    assert!(cycles[1] < cycles[0], "smt at width 2 vs 1: {cycles:?}");

    // One value applies to every combination and leaves the labels as they were.
    let d = dir("sweep-width-one");
    ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--issue-width",
        "2",
        "-o",
        d.to_str().unwrap(),
    ]));
    assert_eq!(traces_in(&d), ["gto.bitmap.wstrace", "lrr.bitmap.wstrace"]);
    for n in traces_in(&d) {
        assert_eq!(header(&d.join(&n)).config.sm.issue_width, 2, "{n}");
    }
}

#[test]
fn sweep_varies_the_memory_model_and_the_gpu() {
    let d = dir("sweep-memory");
    let out = ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--memory",
        "ideal,fixed:200,hierarchy",
        "-o",
        d.to_str().unwrap(),
    ]));
    assert_eq!(
        traces_in(&d),
        [
            "gto.bitmap.mem-fixed200.wstrace",
            "gto.bitmap.mem-hierarchy.wstrace",
            "gto.bitmap.mem-ideal.wstrace"
        ]
    );
    use warpscope::sim::config::MemoryModel;
    let mut cycles = Vec::new();
    for (label, model) in [
        ("gto.bitmap.mem-ideal", MemoryModel::Ideal),
        (
            "gto.bitmap.mem-fixed200",
            MemoryModel::Fixed { latency: 200 },
        ),
        ("gto.bitmap.mem-hierarchy", MemoryModel::Hierarchy),
    ] {
        let path = d.join(format!("{label}.wstrace"));
        assert_eq!(header(&path).config.memory.model, model, "{label}");
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{label} "))),
            "{out}"
        );
        cycles.push(analyze_file(&path, Taxonomy::Nsight).unwrap().launches[0].cycles);
    }
    // A 200-cycle memory is slower than an ideal one.
    assert!(cycles[0] < cycles[1], "{cycles:?}");

    // Several GPUs prefix the labels with their names; each has its own config.
    let d = dir("sweep-gpus");
    ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--gpu",
        "small,volta",
        "--policy",
        "gto,lrr",
        "--scoreboard",
        "bitmap",
        "-o",
        d.to_str().unwrap(),
    ]));
    assert_eq!(
        traces_in(&d),
        [
            "small.gto.bitmap.wstrace",
            "small.lrr.bitmap.wstrace",
            "volta.gto.bitmap.wstrace",
            "volta.lrr.bitmap.wstrace"
        ]
    );
    assert_eq!(
        header(&d.join("volta.lrr.bitmap.wstrace")).config.name,
        "volta"
    );
    assert_eq!(
        header(&d.join("small.gto.bitmap.wstrace")).config.name,
        "small"
    );

    // Wrong values are a usage error naming them, before anything runs.
    for (flag, values, named) in [
        ("--memory", "ideal,bogus", "`bogus` is not a memory model"),
        (
            "--memory",
            "fixed:200,fixed:200",
            "--memory lists fixed:200 twice",
        ),
        (
            "--memory",
            "fixed:0",
            "fixed:LATENCY needs a positive number",
        ),
        ("--issue-width", "1,2,1", "--issue-width lists 1 twice"),
        ("--issue-width", "0", "--issue-width"),
        ("--gpu", "small,small", "--gpu lists small twice"),
        ("--gpu", "small,nonesuch", "nonesuch"),
    ] {
        let d = dir("sweep-bad");
        let o = ws(&[
            "sweep",
            "kernels/reduce.json",
            "--policy",
            "gto,lrr",
            flag,
            values,
            "-o",
            d.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{values}: {stderr}");
        assert!(stderr.contains(named), "{values}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(std::fs::read_dir(&d).unwrap().next().is_none(), "{values}");
    }
    // A preset and a config file of its stem would write traces of the same names.
    let d = dir("sweep-gpu-stem");
    let file = d.join("small.json");
    let config = ws(&["config", "show", "small"]);
    std::fs::write(&file, &config.stdout).unwrap();
    let specs = format!("small,{}", file.display());
    let out = d.join("out");
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--gpu",
        &specs,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "--gpu: `small` and `{}` would both name their traces small",
            file.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn sweep_csv_has_a_row_per_combination_with_the_trace_s_figures() {
    let d = dir("sweep-csv");
    // gto at 2200 cycles completes, lrr (2606) is stopped by the watchdog.
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--scoreboard",
        "bitmap,barriers",
        "--max-cycles",
        "2200",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("the table (sweep.csv) are in"),
        "the summary names sweep.csv: {out}"
    );
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "combination,policy,scoreboard,warps,issue_width,memory,gpu,cycles,ipc,\
         warp_cycles_per_issue,top_stall,complete,checks_ok,hazards"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let labels: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        labels,
        ["gto.bitmap", "gto.barriers", "lrr.bitmap", "lrr.barriers"]
    );
    let mut completes = Vec::new();
    for r in &rows {
        let path = d.join(format!("{}.wstrace", r[0]));
        let h = header(&path);
        let a = analyze_file(&path, Taxonomy::Nsight).unwrap();
        let l = &a.launches[0];
        assert_eq!(r.len(), 14, "{r:?}");
        assert_eq!(r[1], h.config.scheduler.policy.name());
        assert_eq!(r[2], h.config.scheduler.scoreboard.name());
        assert_eq!(r[3], h.config.sm.max_warps.to_string());
        assert_eq!(r[4], h.config.sm.issue_width.to_string());
        assert_eq!(r[5], "hierarchy");
        assert_eq!(r[6], "small");
        assert_eq!(r[7], l.cycles.to_string(), "{r:?}");
        assert_eq!(r[8], format!("{:.6}", l.ipc), "{r:?}");
        assert_eq!(
            r[9],
            format!("{:.6}", l.warp_cycles_per_issued_instruction),
            "{r:?}"
        );
        let top = l
            .warp_states
            .iter()
            .filter(|(k, &v)| *k != "selected" && v > 0)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(k, _)| k.as_str())
            .unwrap();
        assert_eq!(r[10], top, "{r:?}");
        assert_eq!(r[11], a.complete.to_string(), "{r:?}");
        completes.push(a.complete);
        // reduce.json's expect is checked where the run finished; a stopped run's memory is
        // not the kernel's result, and is not checked.
        let checks = if a.complete { "true" } else { "" };
        assert_eq!(r[12], checks, "{r:?}");
        assert_eq!(r[13], l.hazards.to_string(), "{r:?}");
    }
    assert_eq!(completes, [true, true, false, false]);

    // The same bytes on a second run.
    let d2 = dir("sweep-csv2");
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--scoreboard",
        "bitmap,barriers",
        "--max-cycles",
        "2200",
        "--jobs",
        "1",
        "-o",
        d2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(csv, std::fs::read_to_string(d2.join("sweep.csv")).unwrap());
}

#[test]
fn sweep_says_why_every_policy_took_the_same_cycles() {
    let d = dir("sweep-same");
    let o = ws(&[
        "sweep",
        "kernels/matmul.json",
        "--gpu",
        "volta",
        "--policy",
        "gto,lrr,oldest",
        "-o",
        d.to_str().unwrap(),
    ]);
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    let cycles: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(7).unwrap())
        .collect();
    assert_eq!(cycles.len(), 3);
    assert!(cycles.iter().all(|c| *c == cycles[0]), "{csv}");
    let note = format!(
        "note: every combination took {} cycles, whatever the policy: no scheduler ever held \
         more than one warp at a time (8 warps on 16 schedulers), so the policy cannot reorder \
         anything\n",
        cycles[0]
    );
    assert!(stderr.contains(&note), "{stderr}");

    // Where the policies make a difference, nothing is said.
    let d = dir("sweep-differ");
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "-o",
        d.to_str().unwrap(),
    ]);
    ok(&o);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("every combination took"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn sweep_says_per_gpu_when_the_policy_made_no_difference_there() {
    // On volta every scheduler holds one warp: its policies tie (the scoreboards do not). On
    // small they differ, and nothing is said of it.
    let d = dir("sweep-same-per-gpu");
    let o = ws(&[
        "sweep",
        "kernels/matmul.json",
        "--gpu",
        "small,volta",
        "--policy",
        "gto,lrr,oldest",
        "--scoreboard",
        "bitmap,barriers",
        "-o",
        d.to_str().unwrap(),
    ]);
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    let cycles = |label: &str| -> u64 {
        let row = csv
            .lines()
            .find(|l| l.starts_with(&format!("{label},")))
            .unwrap_or_else(|| panic!("no {label} in {csv}"));
        row.split(',').nth(7).unwrap().parse().unwrap()
    };
    for scoreboard in ["bitmap", "barriers"] {
        let gto = cycles(&format!("volta.gto.{scoreboard}"));
        assert_eq!(gto, cycles(&format!("volta.lrr.{scoreboard}")));
        assert_eq!(gto, cycles(&format!("volta.oldest.{scoreboard}")));
    }
    assert_ne!(cycles("small.gto.bitmap"), cycles("small.lrr.bitmap"));
    let note = "note: on volta, the policy made no difference (combinations alike but for it \
                took the same cycles): no scheduler ever held more than one warp at a time (8 \
                warps on 16 schedulers), so the policy cannot reorder anything\n";
    assert!(stderr.contains(note), "{stderr}");
    assert!(!stderr.contains("on small,"), "{stderr}");
    assert_eq!(stderr.matches("note:").count(), 1, "{stderr}");

    // One scoreboard: every volta combination took the same cycles, and the note says how many.
    let d = dir("sweep-same-per-gpu-1");
    let o = ws(&[
        "sweep",
        "kernels/matmul.json",
        "--gpu",
        "small,volta",
        "--policy",
        "gto,lrr",
        "-o",
        d.to_str().unwrap(),
    ]);
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    let volta = csv.lines().find(|l| l.starts_with("volta.gto.")).unwrap();
    let note = format!(
        "note: on volta, every combination took {} cycles, whatever the policy: no scheduler",
        volta.split(',').nth(7).unwrap()
    );
    assert!(stderr.contains(&note), "{stderr}");
}

#[test]
fn a_sweep_with_one_runnable_combination_writes_its_table_and_a_line_for_each() {
    // small cannot hold the replayed kernel's 1024-thread blocks; volta can.
    let d = dir("sweep-one-runs");
    // An earlier sweep's comparison would not be this sweep's: it goes.
    std::fs::write(d.join("compare.txt"), "earlier").unwrap();
    std::fs::write(d.join("compare.csv"), "earlier").unwrap();
    let o = ws(&[
        "sweep",
        "tests/data/accelsim/vectoradd-100-32",
        "--gpu",
        "small,volta",
        "-o",
        d.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    // A combination failed: the status says so, as for a fault or a failed check.
    assert_eq!(o.status.code(), Some(1), "{out}");
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!(
        rows[0],
        "small.gto.bitmap,gto,bitmap,8,1,hierarchy,small,,,,,,,"
    );
    assert!(rows[1].starts_with("volta.gto.bitmap,"), "{csv}");
    let volta_cycles = rows[1].split(',').nth(7).unwrap();
    assert!(volta_cycles.parse::<u64>().unwrap() > 0, "{csv}");
    assert!(
        out.lines().any(|l| l.starts_with("small.gto.bitmap ")
            && l.ends_with(
                " not recorded: block of 1024 threads exceeds the limit of 256 threads per block"
            )),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("volta.gto.bitmap ") && l.contains(volta_cycles)),
        "{out}"
    );
    assert!(
        out.contains(
            "no comparison (compare.txt, compare.csv): only one of the 2 combinations was recorded"
        ),
        "{out}"
    );
    // The whole message, with the advice, under the summary.
    assert!(out.contains("(on gpu small; try another --gpu)"), "{out}");
    assert!(!d.join("compare.txt").exists());
    assert!(!d.join("compare.csv").exists());
    assert_eq!(traces_in(&d), ["volta.gto.bitmap.wstrace"]);

    // With two that run, they are compared and the third still has its line and its row.
    let d = dir("sweep-two-run");
    let o = ws(&[
        "sweep",
        "tests/data/accelsim/vectoradd-100-32",
        "--gpu",
        "small,pascal,volta",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().take(4).collect();
    assert!(lines[1].starts_with("small.gto.bitmap "), "{out}");
    assert!(
        lines[1].contains(" not recorded: block of 1024 threads"),
        "{out}"
    );
    assert!(lines[2].starts_with("pascal.gto.bitmap "), "{out}");
    assert!(lines[3].starts_with("volta.gto.bitmap "), "{out}");
    assert!(d.join("compare.txt").exists() && d.join("compare.csv").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("sweep.csv"))
            .unwrap()
            .lines()
            .count(),
        4
    );
}

#[test]
fn sweep_names_the_traces_in_its_directory_it_did_not_write() {
    let d = dir("sweep-stale");
    let sweep = |policies: &str| {
        ws(&[
            "sweep",
            "kernels/reduce.json",
            "--policy",
            policies,
            "-o",
            d.to_str().unwrap(),
        ])
    };
    let o = sweep("gto,lrr,oldest");
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("not written by this sweep"));
    let o = sweep("gto,lrr");
    ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "note: 1 .wstrace file in {} was not written by this sweep (oldest.bitmap.wstrace); \
             the comparison and sweep.csv leave it out\n",
            d.display()
        )),
        "{stderr}"
    );
    // Left where it was; the comparison has the new traces only.
    assert!(d.join("oldest.bitmap.wstrace").exists());
    let csv = std::fs::read_to_string(d.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!std::fs::read_to_string(d.join("compare.txt"))
        .unwrap()
        .contains("oldest"));
}

#[test]
fn sweep_replays_an_accelsim_trace_at_every_combination() {
    let d1 = dir("sweep-replay1");
    let d2 = dir("sweep-replay2");
    let trace = "tests/data/accelsim/vectoradd-100-32";
    for (d, jobs) in [(&d1, "2"), (&d2, "1")] {
        let out = ok(&ws(&[
            "sweep",
            trace,
            "--gpu",
            "volta",
            "--policy",
            "gto,lrr",
            "--scoreboard",
            "bitmap,barriers",
            "--jobs",
            jobs,
            "-o",
            d.to_str().unwrap(),
        ]));
        assert!(out.contains("lrr.barriers"), "{out}");
        // 32 warps' S2Rs queue at the MUFU pipe (where Accel-Sim's opcode table puts S2R), now
        // that the loads' DRAM latency is volta's ~400 cycles in all.
        assert!(out.contains("math_pipe_throttle"), "{out}");
    }
    for n in ["gto.bitmap.wstrace", "lrr.barriers.wstrace", "compare.txt"] {
        assert_eq!(
            std::fs::read(d1.join(n)).unwrap(),
            std::fs::read(d2.join(n)).unwrap(),
            "{n}"
        );
    }
    // Each trace is what `replay` writes for that combination.
    let single = d1.join("single.wstrace");
    ok(&ws(&[
        "replay",
        trace,
        "--gpu",
        "volta",
        "--policy",
        "lrr",
        "--scoreboard",
        "barriers",
        "-o",
        single.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read(&single).unwrap(),
        std::fs::read(d1.join("lrr.barriers.wstrace")).unwrap()
    );

    // The kernel selection of `replay` applies; the kernel-file flags do not.
    let d3 = dir("sweep-replay3");
    let d3s = d3.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "tests/data/accelsim/v4-volta-2d",
            "--policy",
            "gto,lrr",
        ];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["-o", d3s]);
        ws(&a)
    };
    ok(&run(&["--kernel-name", "again"]));
    let header = warpscope::trace::TraceReader::open(&d3.join("gto.bitmap.wstrace"))
        .unwrap()
        .header()
        .clone();
    assert_eq!(header.launches.len(), 1);
    assert_eq!(header.launches[0].kernel, "_Z4loopPdi_again");
    let o = run(&["--grid", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--grid is only for sweeping a kernel file")
    );
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--kernels",
        "1",
        "-o",
        d3.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("kernel selection flags are for Accel-Sim traces"));
}

#[test]
fn sweep_gives_a_run_of_several_launches_its_span_and_a_line_per_launch() {
    let d = dir("sweep-launches");
    let out = ok(&ws(&[
        "sweep",
        "tests/data/accelsim/v4-volta-2d",
        "--policy",
        "gto,lrr",
        "-o",
        d.to_str().unwrap(),
    ]));
    assert!(
        out.starts_with(
            "combination                          cycles      ipc warp-cyc/issue  top stall\n"
        ),
        "{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("gto.bitmap "))
        .unwrap();
    let (run, launches) = (lines[at], &lines[at + 1..at + 3]);
    // Numbered as `analyze`, `compare` (the sweep's own compare.txt) and `report` number
    // launches: by their index in the trace, from 0 (replay's `kernel 1` is the Accel-Sim
    // trace's kernel id).
    assert!(launches[0].starts_with("  launch 0: loop "), "{out}");
    assert!(
        launches[1].starts_with("  launch 1: _Z4loopPdi_again "),
        "{out}"
    );
    let compared = std::fs::read_to_string(d.join("compare.txt")).unwrap();
    assert!(
        compared.contains("\nLaunch 1: _Z4loopPdi_again |"),
        "{compared}"
    );
    assert!(lines[at + 3].starts_with("lrr.bitmap "), "{out}");
    // The run's line is the launches' span and all their instructions, as the analysis has it.
    let analysis = analyze_file(&d.join("gto.bitmap.wstrace"), Taxonomy::Nsight).unwrap();
    let l = &analysis.launches;
    let span = l.iter().map(|l| l.end_cycle).max().unwrap()
        - l.iter().map(|l| l.start_cycle).min().unwrap();
    let sum: u64 = l.iter().map(|l| l.cycles).sum();
    assert!(span < sum, "the fixture's launches overlap on two streams");
    let instructions: u64 = l.iter().map(|l| l.warp_instructions).sum();
    let field = |line: &str, i: usize| line.split_whitespace().nth(i).unwrap().to_string();
    assert_eq!(field(run, 1), span.to_string(), "{out}");
    assert_eq!(
        field(run, 2),
        format!("{:.3}", instructions as f64 / span as f64),
        "{out}"
    );
    assert_eq!(field(launches[0], 3), l[0].cycles.to_string(), "{out}");
}

#[test]
fn sweep_and_profile_check_the_launch_file_s_expect() {
    let d = dir("sweep-expect");
    let mut launch: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("kernels/vecadd.json").unwrap()).unwrap();
    launch["kernel"] = serde_json::Value::from(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels")
            .join(launch["kernel"].as_str().unwrap())
            .to_str()
            .unwrap(),
    );
    let good = d.join("good.json");
    std::fs::write(&good, launch.to_string()).unwrap();
    // The first expected word made wrong.
    launch["expect"][0]["f32"][0] = serde_json::Value::from(12345.0);
    let wrong = d.join("wrong.json");
    std::fs::write(&wrong, launch.to_string()).unwrap();

    let sweep = |file: &Path, out: &str| {
        ws(&[
            "sweep",
            file.to_str().unwrap(),
            "--policy",
            "gto,lrr",
            "-o",
            d.join(out).to_str().unwrap(),
        ])
    };
    let out = ok(&sweep(&good, "good"));
    assert!(!out.contains("checks failed"), "{out}");
    let o = sweep(&wrong, "wrong");
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    for label in ["gto.bitmap", "lrr.bitmap"] {
        let row = out.lines().find(|l| l.starts_with(label)).unwrap();
        assert!(row.ends_with("[checks failed: see below]"), "{out}");
        assert!(out.contains(&format!("{label}: error: 1 of ")), "{out}");
    }
    // Both traces and the comparison are still written.
    assert!(d.join("wrong/lrr.bitmap.wstrace").exists());
    assert!(d.join("wrong/compare.txt").exists());
    // sweep.csv says which combinations' checks passed.
    for (out, ok) in [("good", "true"), ("wrong", "false")] {
        let csv = std::fs::read_to_string(d.join(out).join("sweep.csv")).unwrap();
        for row in csv.lines().skip(1) {
            assert_eq!(row.split(',').nth(12), Some(ok), "{csv}");
        }
    }

    let profile = |file: &Path, out: &str| {
        ws(&[
            "profile",
            file.to_str().unwrap(),
            "-o",
            d.join(out).to_str().unwrap(),
        ])
    };
    let out = ok(&profile(&good, "profile-good"));
    assert!(out.contains("\nchecks: "), "{out}");
    assert!(out.contains(" passed, 0 failed\n"), "{out}");
    let o = profile(&wrong, "profile-wrong");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains(" passed, 1 failed\n"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: 1 of ") && err.contains("expect[0]"),
        "{err}"
    );
    // The report is written in full.
    assert!(d.join("profile-wrong/index.html").exists());
}

/// Two sample traces copied to `a/t.wstrace` and `b/t.wstrace` (as two sweeps name theirs).
fn same_name_in_two_directories(name: &str) -> [PathBuf; 2] {
    let d = dir(name);
    let paths = ["a", "b"].map(|sub| d.join(sub).join("t.wstrace"));
    for (path, trace) in paths.iter().zip(["reduce.small.gto", "reduce.small.lrr"]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(sample(trace), path).unwrap();
    }
    paths
}

#[test]
fn traces_of_one_file_name_are_told_apart_by_their_directories() {
    let [a, b] = same_name_in_two_directories("same-name");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let csv = ok(&ws(&["compare", a, b, "--format", "csv"]));
    let traces: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",cycles,"))
        .map(|l| l.split(',').nth(5).unwrap())
        .collect();
    assert_eq!(traces, ["a/t.wstrace", "b/t.wstrace"], "{csv}");
    let text = ok(&ws(&["compare", a, b]));
    assert!(text.contains("[0]  a/t.wstrace  gto  baseline"), "{text}");
    assert!(text.contains("[1]  b/t.wstrace  lrr\n"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&ws(&["compare", a, b, "--format", "json"]))).unwrap();
    assert_eq!(
        json["traces"],
        serde_json::json!(["a/t.wstrace", "b/t.wstrace"])
    );
    // Distinct file names stay the labels.
    let c = ok(&ws(&[
        "compare",
        "traces/reduce.small.gto.wstrace",
        b,
        "--format",
        "json",
    ]));
    let json: serde_json::Value = serde_json::from_str(&c).unwrap();
    assert_eq!(
        json["traces"],
        serde_json::json!(["reduce.small.gto.wstrace", "t.wstrace"])
    );
}

#[test]
fn the_text_comparison_names_each_run_as_the_report_does() {
    // File names that say nothing of the run: only the run column tells the runs apart.
    let d = dir("runs");
    let runs = [
        ("a", vec![]),
        ("b", vec!["--policy", "lrr", "--scoreboard", "ranges"]),
        ("c", vec!["--sms", "1"]),
    ];
    let mut traces = Vec::new();
    for (name, flags) in &runs {
        let path = d.join(format!("{name}.wstrace"));
        let mut args = vec!["record", "kernels/reduce.json", "--gpu", "small"];
        args.extend(flags);
        args.extend(["-o", path.to_str().unwrap()]);
        ok(&ws(&args));
        traces.push(path.to_str().unwrap().to_string());
    }
    let traces: Vec<&str> = traces.iter().map(String::as_str).collect();
    let text = ok(&ws(&[&["compare"], traces.as_slice()].concat()));
    // The table's rows: index and trace, run, role.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.trim_start().starts_with('['))
        .take(3)
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    let text_runs: Vec<&str> = rows.iter().map(|r| r[2]).collect();
    assert_eq!(rows[0][3], "baseline", "{text}");
    assert!(
        text.lines().nth(1).unwrap().trim_end().ends_with("run"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&ws(&[
        &["compare"],
        traces.as_slice(),
        &["--format", "json"],
    ]
    .concat())))
    .unwrap();
    assert_eq!(json["runs"], serde_json::json!(text_runs), "{text}");
    // What differs, by meaning, then other config fields by path.
    assert_eq!(text_runs[0], "gto, bitmap scoreboard, num_sms 2", "{text}");
    assert_eq!(text_runs[1], "lrr, ranges scoreboard, num_sms 2", "{text}");
    assert_eq!(text_runs[2], "gto, bitmap scoreboard, num_sms 1", "{text}");
    // The report's comparison table has the same run column.
    let out = d.join("report");
    ok(&ws(&[
        &["report"],
        traces.as_slice(),
        &["-o", out.to_str().unwrap()],
    ]
    .concat()));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let table = &html[html.find("<h2 id=\"comparison\">").unwrap()..];
    for (i, run) in text_runs.iter().enumerate() {
        let row = format!("<td>[{i}]</td><td>{}.wstrace</td><td>{run}</td>", runs[i].0);
        assert!(table.contains(&row), "{row} not in the report");
    }
    // And `report.txt` has the text table.
    let txt = std::fs::read_to_string(out.join("report.txt")).unwrap();
    for run in &text_runs {
        assert!(txt.contains(&format!("  {run}")), "{txt}");
    }
}

/// The row labels of the text `text`, by section: `analyze`'s `  Section: Title` blocks up to
/// the source hotspots, or `compare`'s `  Title` headings of the launch tables. A row's label
/// is its text up to the first two spaces.
fn text_rows(text: &str, analyze: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        let heading = match analyze {
            true => line.strip_prefix("  Section: "),
            false => line
                .strip_prefix("  ")
                .filter(|t| !t.starts_with(' ') && !t.starts_with("metric")),
        };
        if let Some(title) = heading {
            section = Some(title.to_string()).filter(|t| t != "Source Hotspots");
            continue;
        }
        if line.starts_with("Launch ") {
            section = None;
        }
        let (Some(s), Some(row)) = (&section, line.strip_prefix("    ")) else {
            continue;
        };
        let label = row.split("  ").next().unwrap().trim_end();
        out.push((s.clone(), label.to_string()));
    }
    out
}

#[test]
fn the_text_comparison_labels_rows_and_sections_as_analyze_does() {
    let (a, b) = (
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
    );
    let analyzed = text_rows(&ok(&ws(&["analyze", a])), true);
    let compare_text = ok(&ws(&["compare", a, b]));
    let compared = text_rows(&compare_text, false);
    assert!(compared.len() > 100, "{compare_text}");
    let has = |section: &str, label: &str| {
        compared
            .iter()
            .any(|(s, l)| s.as_str() == section && l.as_str() == label)
    };
    // Every row of analyze's sections is a row of the comparison, in the same section under
    // the same title: as it is, or, for the text's tables, as their columns name it.
    let mut checked = 0;
    for (section, label) in &analyzed {
        let expected: Vec<String> = match (section.as_str(), label.as_str()) {
            // Table headings and the sum of the state table, not metrics.
            (_, "state" | "slots" | "sm" | "global") | ("Warp State Statistics", "total") => {
                continue
            }
            // The note under the global-memory table, and its wrapped lines.
            ("Memory Workload Analysis", note) if note.starts_with("note: ") || note.is_empty() => {
                continue
            }
            // A row of the global-memory table: its loads' and stores' metrics (the reduction
            // has no atomics).
            ("Memory Workload Analysis", field)
                if !field.starts_with("Global ") && !field.starts_with("Shared ") =>
            {
                let fields: Vec<String> = match field {
                    "Access Size [byte]" => vec![
                        "Min Access Size [byte]".into(),
                        "Max Access Size [byte]".into(),
                    ],
                    _ => vec![field.to_string()],
                };
                ["Global Load", "Global Store"]
                    .iter()
                    .flat_map(|d| fields.iter().map(move |f| format!("{d} {f}")))
                    .filter(|l| {
                        !l.starts_with("Global Store") || !l.contains("Hit") && !l.contains("DRAM")
                    })
                    .collect()
            }
            // One row of the text for two metrics, the smallest and largest access.
            (_, "Access Size [byte]") => vec![
                "Min Access Size [byte]".into(),
                "Max Access Size [byte]".into(),
            ],
            (_, "Grid Size" | "Block Size") => ["X", "Y", "Z"]
                .iter()
                .map(|axis| format!("{label} {axis}"))
                .collect(),
            ("Warp State Statistics", state) if !state.contains(' ') => vec![
                format!("{state} [warp-cycles]"),
                format!("{state} [per issue]"),
            ],
            ("Dispatch", sm) if sm.parse::<u32>().is_ok() => {
                vec![format!("sm {sm} blocks"), format!("sm {sm} busy cycles")]
            }
            _ => vec![label.clone()],
        };
        for e in expected {
            assert!(
                has(section, &e),
                "`{e}` not under {section}:\n{compare_text}"
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "{analyzed:?}");
    for (section, label) in [
        ("Scheduler Statistics", "Issued Warp Per Scheduler"),
        ("Scheduler Statistics", "Idle With Eligible Warps [%]"),
        ("Warp State Statistics", "long_scoreboard [warp-cycles]"),
        ("Memory Workload Analysis", "Global Load L2 Hit Rate [%]"),
        (
            "Memory Workload Analysis",
            "L2 Hit Rate (loads, atomics) [%]",
        ),
    ] {
        assert!(has(section, label), "{label}:\n{compare_text}");
    }
    // No raw key or section name is left in the text.
    for raw in [
        "launch_statistics",
        "issued_warp_per_scheduler",
        "warp_states.",
    ] {
        assert!(!compare_text.contains(raw), "{raw}:\n{compare_text}");
    }
    // The machine-readable formats keep their keys; JSON has the label beside them.
    let csv = ok(&ws(&["compare", a, b, "--format", "csv"]));
    assert_eq!(
        csv.lines().next(),
        Some("launch,kernel,section,metric,unit,trace,baseline,value,diff_pct,z_score,completed")
    );
    assert!(csv.contains("\n0,reduce,scheduler,issued_warp_per_scheduler,warp,"));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&ws(&["compare", a, b, "--format", "json"]))).unwrap();
    let issued = json["launches"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "issued_warp_per_scheduler")
        .unwrap();
    assert_eq!(issued["section"], "scheduler");
    assert_eq!(issued["label"], "Issued Warp Per Scheduler");
    assert!(json.get("filter").is_none() && json["launches"][0].get("hidden").is_none());
}

#[test]
fn every_metric_has_a_label_of_its_own() {
    for name in [
        "reduce.small.gto",
        "vecadd.small.barriers",
        "matmul.volta.gto",
    ] {
        for taxonomy in [Taxonomy::Nsight, Taxonomy::Detailed] {
            let a = analyze_file(&sample(name), taxonomy).unwrap();
            let metrics = flat::metrics(&a.launches[0]);
            for m in &metrics {
                // (One-word keys may be their own label: `issued`, a row of the slot table.)
                assert!(
                    m.label != m.name || !m.name.contains(['_', '.']),
                    "{name}: no label for {}",
                    m.name
                );
                assert_ne!(flat::section_title(m.section), m.section);
            }
            let mut labels: Vec<(&str, &str)> = metrics
                .iter()
                .map(|m| (m.section, m.label.as_str()))
                .collect();
            labels.sort();
            labels.dedup();
            assert_eq!(
                labels.len(),
                metrics.len(),
                "{name}: two metrics, one label"
            );
        }
    }
}

fn compare_json(args: &[&str]) -> serde_json::Value {
    let base = [
        "compare",
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
        "--format",
        "json",
    ];
    serde_json::from_str(&ok(&ws(&[&base[..], args].concat()))).unwrap()
}

fn metric_keys(json: &serde_json::Value) -> Vec<String> {
    json["launches"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn changed_hides_exactly_the_rows_that_are_equal_in_every_trace() {
    use warpscope::analyze::compare::RowFilter;
    let c = compare(&[load("reduce.small.gto"), load("reduce.small.lrr")], 1);
    let all = c.launches[0].metrics.clone();
    let changed = RowFilter {
        changed: true,
        metrics: vec![],
    };
    let f = c.clone().filtered(&changed).unwrap();
    let kept = &f.launches[0].metrics;
    let expected: Vec<_> = all
        .iter()
        .filter(|r| r.values[0] != r.values[1])
        .cloned()
        .collect();
    assert_eq!(kept, &expected);
    let hidden = all.len() - kept.len();
    assert_eq!(f.launches[0].hidden, Some(hidden));
    // Both kinds are there: the policy changes cycles, not the launch's shape.
    let keys: Vec<&str> = kept.iter().map(|r| r.metric.as_str()).collect();
    assert!(keys.contains(&"cycles") && keys.contains(&"warp_states.barrier"));
    assert!(!keys.contains(&"threads") && !keys.contains(&"warp_states.long_scoreboard"));
    // Memory was recorded in one trace only: absent in the other is a change.
    assert!(keys.contains(&"global_requests"), "{keys:?}");

    // The command line: text, JSON and CSV keep the same rows.
    let (a, b) = (
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
    );
    let text = ok(&ws(&["compare", a, b, "--changed"]));
    let rows = text_rows(&text, false);
    assert_eq!(rows.len(), kept.len(), "{text}");
    let labels: Vec<&str> = rows.iter().map(|(_, l)| l.as_str()).collect();
    let expected_labels: Vec<&str> = kept.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, expected_labels);
    assert!(
        text.contains(&format!(
            "  {hidden} rows hidden: the same in every trace (--changed)\n"
        )),
        "{text}"
    );
    let json = compare_json(&["--changed"]);
    assert_eq!(metric_keys(&json), keys);
    assert_eq!(json["launches"][0]["hidden"], hidden);
    assert_eq!(json["filter"]["changed"], true);
    let csv = ok(&ws(&["compare", a, b, "--changed", "--format", "csv"]));
    assert_eq!(csv.lines().count(), 1 + 2 * kept.len());

    // A trace beside itself: nothing changed, every row hidden, and said so.
    let text = ok(&ws(&["compare", a, a, "--changed"]));
    assert!(text_rows(&text, false).is_empty(), "{text}");
    assert!(
        text.contains(&format!("  {} rows hidden: the same", all.len())),
        "{text}"
    );
}

#[test]
fn metric_patterns_keep_the_rows_whose_section_key_or_label_contains_them() {
    // A section key.
    let json = compare_json(&["--metric", "warp_state"]);
    let rows = json["launches"][0]["metrics"].as_array().unwrap();
    assert!(rows.len() > 10);
    assert!(rows.iter().all(|r| r["section"] == "warp_state"), "{json}");
    // A label, in any case, a section title and keys, comma-separated or repeated.
    let json = compare_json(&[
        "--metric",
        "idle WITH eligible,l2_hit",
        "--metric",
        "Dispatch",
    ]);
    let keys = metric_keys(&json);
    assert!(keys.contains(&"idle_with_eligible_pct".to_string()));
    assert!(keys.contains(&"l2_hits".to_string()) && keys.contains(&"l2_hit_rate_pct".into()));
    assert!(keys.contains(&"tail_cycles".to_string()));
    // Exactly the rows that contain one of them (the `dispatch` section's title is its key).
    let all = compare_json(&[]);
    let all = all["launches"][0]["metrics"].as_array().unwrap();
    let expected: Vec<&str> = all
        .iter()
        .filter(|r| {
            ["section", "metric", "label"].iter().any(|f| {
                let field = r[f].as_str().unwrap().to_lowercase();
                ["idle with eligible", "l2_hit", "dispatch"]
                    .iter()
                    .any(|p| field.contains(p))
            })
        })
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert_eq!(keys, expected);
    assert!(keys.contains(&"warp_states.dispatch_stall".to_string()));
    assert_eq!(json["launches"][0]["hidden"], all.len() - keys.len());
    // With --changed: the matching rows that changed.
    let json = compare_json(&["--metric", "scheduler", "--changed"]);
    let keys = metric_keys(&json);
    assert!(keys.contains(&"issued_warp_per_scheduler".to_string()));
    assert!(!keys.contains(&"schedulers".to_string()), "{keys:?}");
    // The text says why the rest is gone.
    let text = ok(&ws(&[
        "compare",
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
        "--metric",
        "Eligible",
    ]));
    let labels: Vec<String> = text_rows(&text, false).into_iter().map(|r| r.1).collect();
    assert_eq!(
        labels,
        [
            "Eligible Warps Per Scheduler",
            "No Eligible [%]",
            "One or More Eligible [%]",
            "Idle With Eligible Warps [%]"
        ],
        "{text}"
    );
    assert!(
        text.contains("rows hidden: not matching --metric eligible\n"),
        "{text}"
    );
}

#[test]
fn a_metric_pattern_that_matches_nothing_is_an_error_naming_the_sections() {
    for args in [
        &["--metric", "nope"][..],
        &["--metric", "cycles,nope", "--changed"],
    ] {
        let o = ws(&[
            &[
                "compare",
                "traces/reduce.small.gto.wstrace",
                "traces/reduce.small.lrr.wstrace",
            ][..],
            args,
        ]
        .concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("no metric matches `nope`"), "{err}");
        assert!(!err.contains("did you mean"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        for s in [
            "launch_statistics (Launch Statistics)",
            "scheduler (Scheduler Statistics)",
            "warp_state (Warp State Statistics)",
            "memory (Memory Workload Analysis)",
            "dispatch (Dispatch)",
        ] {
            assert!(err.contains(s), "{s}: {err}");
        }
    }
}

#[test]
fn a_misspelt_metric_pattern_suggests_the_word_meant() {
    let o = ws(&[
        "compare",
        "traces/reduce.small.gto.wstrace",
        "traces/reduce.small.lrr.wstrace",
        "--metric",
        "long_scorebord",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no metric matches `long_scorebord` (did you mean `long_scoreboard`?)"),
        "{err}"
    );
}

/// `sweep --changed --metric` prints the comparison's rows asked for after the summary, as
/// `compare` would, while compare.txt keeps them all; a pattern that matches nothing is an
/// error that leaves the traces written.
#[test]
fn sweep_prints_the_metrics_asked_for() {
    let d = dir("sweep-metric");
    let out = ok(&ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--changed",
        "--metric",
        "eligible,occupancy",
        "-o",
        d.to_str().unwrap(),
    ]));
    let (summary, picked) = out
        .split_once("warpscope compare — 2 traces")
        .unwrap_or_else(|| panic!("no comparison after the summary:\n{out}"));
    assert!(summary.contains("gto.bitmap "), "{summary}");
    for row in [
        "Eligible Warps Per Scheduler",
        "Achieved Occupancy [%]",
        "rows hidden: not matching --metric eligible,occupancy, or the same in every trace (--changed)",
    ] {
        assert!(picked.contains(row), "{row}: {picked}");
    }
    // Rows the same in both runs (the grid) or not asked for (the stalls) are not printed.
    assert!(!picked.contains("long_scoreboard"), "{picked}");
    assert!(!picked.contains("Grid Size"), "{picked}");
    let full = std::fs::read_to_string(d.join("compare.txt")).unwrap();
    assert!(full.contains("long_scoreboard") && !full.contains("rows hidden"));

    let d = dir("sweep-metric-typo");
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--policy",
        "gto,lrr",
        "--metric",
        "eligble",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--metric: no metric matches `eligble` (did you mean `eligible`?)"),
        "{err}"
    );
    for f in [
        "gto.bitmap.wstrace",
        "lrr.bitmap.wstrace",
        "compare.txt",
        "sweep.csv",
    ] {
        assert!(d.join(f).is_file(), "{f}");
    }
}

#[test]
fn a_run_the_watchdog_stopped_is_marked_incomplete_in_every_format() {
    let d = dir("incomplete");
    let cut = d.join("cut.wstrace");
    let o = ws(&[
        "record",
        "kernels/reduce.json",
        "--max-cycles",
        "500",
        "-o",
        cut.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "the watchdog stops the run");
    let (full, cut) = ("traces/reduce.small.gto.wstrace", cut.to_str().unwrap());
    let text = ok(&ws(&["compare", full, cut]));
    let trace_row = text.lines().find(|l| l.contains("cut.wstrace")).unwrap();
    assert!(
        trace_row.ends_with("INCOMPLETE: its run stopped early"),
        "{text}"
    );
    assert!(
        text.contains("\n  incomplete in [1]: those figures stop where the run did"),
        "{text}"
    );
    // The complete baseline is not marked.
    let base_row = text
        .lines()
        .find(|l| l.contains(full.rsplit('/').next().unwrap()));
    assert!(!base_row.unwrap().contains("INCOMPLETE"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&ws(&["compare", full, cut, "--format", "json"]))).unwrap();
    assert_eq!(json["complete"], serde_json::json!([true, false]));
    assert_eq!(
        json["launches"][0]["completed"],
        serde_json::json!([true, false])
    );
    let csv = ok(&ws(&["compare", full, cut, "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(!rows.is_empty());
    for row in rows {
        let want = if row.contains(",cut.wstrace,") {
            ",false"
        } else {
            ",true"
        };
        assert!(row.ends_with(want), "{row}");
    }
    // Two complete traces: no mark anywhere.
    let text = ok(&ws(&["compare", full, "traces/reduce.small.lrr.wstrace"]));
    assert!(!text.to_lowercase().contains("incomplete"), "{text}");
}

#[test]
fn header_differences_name_kernel_parameters() {
    let d = dir("param-names");
    let record = |n: &str, out: &Path| {
        ok(&ws(&[
            "record",
            "kernels/vecadd.sasm",
            "--grid",
            "1",
            "--block",
            "32",
            "--gpu",
            "small",
            "--param",
            "a=0",
            "--param",
            "b=4096",
            "--param",
            "c=8192",
            "--param",
            n,
            "-o",
            out.to_str().unwrap(),
        ]));
    };
    let (a, b) = (d.join("n32.wstrace"), d.join("n16.wstrace"));
    record("n=32", &a);
    record("n=16", &b);
    let text = ok(&ws(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]));
    let header: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Header differences"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        header.iter().any(|l| l.contains("launches.0.params.n")),
        "{header:?}"
    );
    assert!(!text.contains("params.3"), "{text}");
    assert!(!text.contains("param_names"), "{text}");
}

#[test]
fn header_differences_name_the_assembly_file_not_each_line() {
    // Two kernels from two files: the files differ, and so do their lines — which, like the
    // listings, the kernel and file already say.
    let d = dir("asm-files");
    let (a, b) = (d.join("vecadd.wstrace"), d.join("loop.wstrace"));
    ok(&ws(&[
        "record",
        "kernels/vecadd.json",
        "-o",
        a.to_str().unwrap(),
    ]));
    ok(&ws(&[
        "record",
        "kernels/loop.json",
        "-o",
        b.to_str().unwrap(),
    ]));
    let text = ok(&ws(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]));
    let file = text
        .lines()
        .find(|l| l.trim_start().starts_with("launches.0.asm_file"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        file.contains("\"kernels/vecadd.sasm\"") && file.contains("\"kernels/loop.sasm\""),
        "{file}"
    );
    assert!(!text.contains("asm_lines"), "{text}");

    // Nor each CUDA line of a replay recorded with lineinfo (52 of them here) beside one
    // without.
    let (a, b) = (d.join("reduce.wstrace"), d.join("vectoradd.wstrace"));
    for (trace, out) in [
        ("tests/data/accelsim/v5-ampere-reduce", &a),
        ("tests/data/accelsim/vectoradd-100-32", &b),
    ] {
        ok(&ws(&[
            "replay",
            trace,
            "--gpu",
            "volta",
            "-o",
            out.to_str().unwrap(),
        ]));
    }
    let text = ok(&ws(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]));
    assert!(text.contains("launches.0.kernel"), "{text}");
    assert!(!text.contains("source_lines"), "{text}");
}

/// A `--warps` list that cannot matter (the loop's blocks hit the SM's block limit before
/// its warp slots) gets a note saying why every value took the same cycles.
#[test]
fn a_sweep_says_when_warp_slots_made_no_difference() {
    let out = dir("sweep-warps-note");
    let o = ws(&[
        "sweep",
        "kernels/loop.json",
        "--gpu",
        "volta",
        "--policy",
        "gto,lrr",
        "--warps",
        "32,64",
        "-o",
        out.to_str().unwrap(),
    ]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "note: --warps 32,64 made no difference: each setting took the same cycles as the \
             others; even at --warps 32 an SM holds at most 32 warps (32 blocks), limited by blocks"
        ),
        "{err}"
    );
    // Where the slots do matter, no such note.
    let out = dir("sweep-warps-matter");
    let o = ws(&[
        "sweep",
        "kernels/vecadd.json",
        "--gpu",
        "small",
        "--warps",
        "4,8",
        "-o",
        out.to_str().unwrap(),
    ]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("made no difference"), "{err}");
}

#[test]
fn a_change_from_zero_says_so_where_no_percentage_exists() {
    let text = ok(&ws(&[
        "compare",
        "traces/reduce.small.gto.wstrace",
        "traces/matmul.volta.gto.wstrace",
    ]));
    let line = text
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("math_pipe_throttle [warp-cycles]")
        })
        .unwrap_or_else(|| panic!("{text}"));
    // reduce on small never waits for a math pipe; matmul on volta does.
    assert!(line.trim_end().ends_with("from 0"), "{line}");
}
