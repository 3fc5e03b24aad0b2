//! End-to-end tests of `warpscope record` and `warpscope trace dump|convert|info`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ws(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run warpscope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_trace")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn record(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["record", "kernels/vecadd_tiny.json", "-o", s(out)];
    args.extend_from_slice(extra);
    ws(&args)
}

fn info_json(path: &Path) -> Value {
    let o = ws(&["trace", "info", s(path), "--json"]);
    ok(&o);
    serde_json::from_str(&stdout(&o)).expect("info --json prints one JSON object")
}

#[test]
fn record_vecadd_then_info_shows_complete_and_counts() {
    let d = dir("record_info");
    let t = d.join("vecadd.wstrace");
    let o = record(&t, &[]);
    ok(&o);
    let out = stdout(&o);
    for want in [
        "cycles",
        "warp instructions",
        "events",
        "bytes per warp instruction",
    ] {
        assert!(out.contains(want), "missing {want:?} in:\n{out}");
    }
    assert!(out.contains(s(&t)), "{out}");
    assert!(!Path::new(&format!("{}.tmp", s(&t))).exists());

    let v = info_json(&t);
    assert_eq!(v["complete"], true);
    assert_eq!(v["format"], "binary");
    assert_eq!(v["gpu"], "tiny");
    assert_eq!(v["verbosity"], 1);
    assert_eq!(v["launches"][0]["kernel"], "vecadd_tiny");
    assert_eq!(v["launches"][0]["grid"], serde_json::json!([6, 1, 1]));
    assert_eq!(v["launches"][0]["block"], serde_json::json!([4, 1, 1]));
    let counts = v["counts"].as_object().unwrap();
    let total: u64 = counts.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(v["events"].as_u64().unwrap(), total);
    assert_eq!(counts["kernel_launch"], 1);
    assert_eq!(counts["block_assign"], 6);
    assert_eq!(counts["fault"], 0);
    assert!(counts["issue"].as_u64().unwrap() > 0);
    // The summary's event count is the trace's.
    assert!(out.contains(&format!("{total} events")), "{out}");

    let o = ws(&["trace", "info", s(&t)]);
    ok(&o);
    let text = stdout(&o);
    for want in [
        "complete: yes",
        "gpu tiny",
        "vecadd_tiny",
        "issue",
        "warp_launch",
        "0.1",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn record_twice_gives_identical_bytes() {
    let d = dir("deterministic");
    for ext in ["wstrace", "jsonl"] {
        let a = d.join(format!("a.{ext}"));
        let b = d.join(format!("b.{ext}"));
        ok(&record(&a, &[]));
        ok(&record(&b, &[]));
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{ext}"
        );
    }
}

#[test]
fn format_and_verbosity_flags() {
    let d = dir("flags");
    // --format overrides the extension.
    let t = d.join("forced.wstrace");
    ok(&record(&t, &["--format", "jsonl", "--verbosity", "0"]));
    assert_eq!(std::fs::read(&t).unwrap()[0], b'{');
    let v = info_json(&t);
    assert_eq!(v["format"], "jsonl");
    assert_eq!(v["verbosity"], 0);
    assert_eq!(v["counts"]["warp_state"], 0);
    let o = record(&t, &["--verbosity", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn dump_header_first_and_one_line_per_event() {
    let d = dir("dump");
    let t = d.join("vecadd.wstrace");
    ok(&record(&t, &[]));
    let events = info_json(&t)["events"].as_u64().unwrap();
    let o = ws(&["trace", "dump", s(&t)]);
    ok(&o);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // Header + events + trailer.
    assert_eq!(lines.len() as u64, events + 2);
    let header: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(header["format"], "warpscope-trace");
    assert_eq!(header["config"]["name"], "tiny");
    for l in &lines[1..lines.len() - 1] {
        let e: Value = serde_json::from_str(l).unwrap();
        assert!(e["event"].is_string(), "{l}");
    }
    let trailer: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    assert_eq!(trailer["trailer"]["complete"], true);
    assert_eq!(trailer["trailer"]["events"].as_u64(), Some(events));
    // Dumping the binary trace is the JSON Lines recording.
    let j = d.join("vecadd.jsonl");
    ok(&record(&j, &[]));
    assert_eq!(out.as_bytes(), std::fs::read(&j).unwrap());
}

#[test]
fn convert_round_trip_is_identical() {
    let d = dir("convert");
    let bin = d.join("a.wstrace");
    let jsonl = d.join("b.jsonl");
    let back = d.join("c.wstrace");
    ok(&record(&bin, &[]));
    ok(&ws(&["trace", "convert", s(&bin), s(&jsonl)]));
    assert_eq!(std::fs::read(&jsonl).unwrap()[0], b'{');
    ok(&ws(&["trace", "convert", s(&jsonl), s(&back)]));
    assert_eq!(std::fs::read(&bin).unwrap(), std::fs::read(&back).unwrap());
    assert!(!Path::new(&format!("{}.tmp", s(&back))).exists());
    // JSON Lines -> JSON Lines is also identical.
    let again = d.join("d.jsonl");
    ok(&ws(&["trace", "convert", s(&back), s(&again)]));
    assert_eq!(
        std::fs::read(&jsonl).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn compact_format_records_converts_and_analyses_like_the_default() {
    let d = dir("compact");
    let bin = d.join("a.wstrace");
    let compact = d.join("b.wstrace");
    let record = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "record",
            "kernels/reduce.json",
            "--gpu",
            "small",
            "-o",
            s(out),
        ];
        args.extend_from_slice(extra);
        ws(&args)
    };
    ok(&record(&bin, &[]));
    let o = record(&compact, &["--format", "compact"]);
    ok(&o);
    assert!(stdout(&o).contains("(compact,"), "{}", stdout(&o));
    let info = stdout(&ws(&["trace", "info", s(&compact)]));
    assert!(info.contains("format version 8"), "{info}");
    // The same events and the same analysis as the default format.
    let dump = |t: &Path| stdout(&ws(&["trace", "dump", s(t)]));
    let events = |text: String| text.lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(events(dump(&bin)), events(dump(&compact)));
    let analysis = |t: &Path| stdout(&ws(&["analyze", s(t), "--format", "json"]));
    assert_eq!(analysis(&bin), analysis(&compact));
    // Converting either way gives back the other's bytes: the header's version follows
    // the format written.
    let back = d.join("c.wstrace");
    ok(&ws(&[
        "trace",
        "convert",
        s(&compact),
        s(&back),
        "--format",
        "bin",
    ]));
    assert_eq!(events(dump(&back)), events(dump(&bin)));
    let small = d.join("d.wstrace");
    ok(&ws(&[
        "trace",
        "convert",
        s(&bin),
        s(&small),
        "--format",
        "compact",
    ]));
    assert_eq!(events(dump(&small)), events(dump(&bin)));
    assert!(std::fs::metadata(&small).unwrap().len() < std::fs::metadata(&bin).unwrap().len());
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&bin).unwrap());
    assert_eq!(
        std::fs::read(&small).unwrap(),
        std::fs::read(&compact).unwrap()
    );
    assert_eq!(info_json(&small)["version"], 8);
    // Through JSON Lines (whose header remembers the version) a compact trace comes back
    // compact, byte for byte; an upper-case extension is still JSON Lines.
    let lines = d.join("e.JSONL");
    ok(&ws(&["trace", "convert", s(&compact), s(&lines)]));
    assert_eq!(std::fs::read(&lines).unwrap()[0], b'{');
    let again = d.join("f.wstrace");
    ok(&ws(&["trace", "convert", s(&lines), s(&again)]));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&compact).unwrap()
    );
}

fn assert_clean_failure(o: &Output, want: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr:\n{err}");
    assert!(err.contains(want), "missing {want:?} in:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn damaged_traces_fail_cleanly_with_an_offset() {
    let d = dir("damaged");
    let t = d.join("good.wstrace");
    ok(&record(&t, &[]));
    let bytes = std::fs::read(&t).unwrap();

    let truncated = d.join("truncated.wstrace");
    std::fs::write(&truncated, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let flipped = d.join("flipped.wstrace");
    let mut f = bytes.clone();
    // A byte in the middle of the first block's payload (past the header's CRC at offset 14,
    // the JSON header, whose length is at offset 10, and the block's 8-byte frame).
    let header_end = 18 + u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let block_len = u32::from_le_bytes(bytes[header_end..header_end + 4].try_into().unwrap());
    let at = header_end + 8 + block_len as usize / 2;
    f[at] ^= 0x40;
    std::fs::write(&flipped, &f).unwrap();
    let magic = d.join("magic.wstrace");
    let mut m = bytes.clone();
    m[0] = b'X';
    std::fs::write(&magic, &m).unwrap();

    for path in [&truncated, &flipped, &magic] {
        let out = d.join("out.jsonl");
        for args in [
            vec!["trace", "info", s(path)],
            vec!["trace", "info", s(path), "--json"],
            vec!["trace", "dump", s(path)],
            vec!["trace", "convert", s(path), s(&out)],
        ] {
            let o = ws(&args);
            assert_clean_failure(&o, "offset ");
        }
        // A failed convert leaves neither the output nor its temp file.
        assert!(!out.exists());
        assert!(!Path::new(&format!("{}.tmp", s(&out))).exists());
    }
    assert_clean_failure(&ws(&["trace", "info", s(&truncated)]), "truncated");
    assert_clean_failure(&ws(&["trace", "info", s(&magic)]), "magic");
    assert_clean_failure(
        &ws(&["trace", "info", s(&d.join("missing.wstrace"))]),
        "missing.wstrace",
    );
    // JSON Lines has no CRC (nor binary traces before version 7): a GPU config no GPU could
    // have is refused all the same. In a binary trace the header's CRC catches the edit first.
    let lines = d.join("good.jsonl");
    ok(&ws(&["trace", "convert", s(&t), s(&lines)]));
    for (good, bad, want) in [
        (&t, d.join("sms0.wstrace"), "trace header CRC mismatch"),
        (
            &lines,
            d.join("sms0.jsonl"),
            "bad trace header: gpu config: num_sms: must be at least 1",
        ),
    ] {
        let bytes = std::fs::read(good).unwrap();
        let key = b"\"num_sms\":";
        let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        let mut edited = bytes.clone();
        edited[at] = b'0';
        assert_eq!(edited[at + 1], b',', "a one-digit SM count");
        std::fs::write(&bad, &edited).unwrap();
        assert_clean_failure(&ws(&["analyze", s(&bad)]), want);
    }
}

/// A JSON Lines trace is parsed a line at a time: an error names the file's line and the
/// column in it once (not serde_json's "at line 1"), and an end of input inside a line is a
/// truncated trace — not, for the first line, a launch file given where a trace belongs.
#[test]
fn a_json_lines_trace_cut_short_says_so_at_the_file_s_line_and_column() {
    let d = dir("jsonl_cut");
    let good = d.join("good.jsonl");
    ok(&record(&good, &[]));
    let text = std::fs::read_to_string(&good).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 20, "{} lines", lines.len());
    let fourteen: String = lines[..14].iter().map(|l| format!("{l}\n")).collect();
    let cases = [
        (
            text[..50].to_string(),
            "line 1, column 50: the trace looks truncated: the file ends inside this trace \
             header line (EOF while parsing",
        ),
        (
            format!("{fourteen}{}", &lines[14][..10]),
            "line 15, column 10: the trace looks truncated: the file ends inside this event \
             line (EOF while parsing",
        ),
        (
            format!("{fourteen}{{\"cycle\":3}}\n{}\n", lines[15..].join("\n")),
            "line 15, column 11: bad event: missing field",
        ),
        (
            format!(
                "{}\n{}",
                lines[..lines.len() - 1].join("\n"),
                "{\"trailer\":{"
            ),
            &format!(
                "line {}, column 12: the trace looks truncated: the file ends inside this \
                 trailer line",
                lines.len()
            ),
        ),
    ];
    for (i, (content, want)) in cases.iter().enumerate() {
        let bad = d.join(format!("bad{i}.jsonl"));
        std::fs::write(&bad, content).unwrap();
        for args in [vec!["analyze", s(&bad)], vec!["trace", "info", s(&bad)]] {
            let o = ws(&args);
            assert_clean_failure(&o, &format!("{}: {want}", s(&bad)));
            let err = stderr(&o);
            assert!(!err.contains(" at line "), "{err}");
            assert!(!err.contains("launch file"), "{err}");
        }
    }
    // A pretty-printed launch file also ends its first line inside a JSON object, but more
    // lines follow: that is the wrong input, and said to be.
    assert_clean_failure(
        &ws(&["analyze", "kernels/reduce.json"]),
        "kernels/reduce.json: line 1, column 1: not a warpscope trace header (EOF while \
         parsing an object); a launch file or GPU config is the input of `record` or `profile`",
    );
}

/// The audit's case: one bit of the header flipped (a register count of 10 read as 90, a
/// kernel renamed) gave an analysis of wrong data and exit 0. Every command that reads a
/// trace now refuses it, naming the file and the header's bytes, in every binary format.
#[test]
fn a_damaged_header_is_refused_by_every_command_that_reads_a_trace() {
    let d = dir("damaged_header");
    for format in ["bin", "compact", "grouped"] {
        let good = d.join(format!("good.{format}.wstrace"));
        let o = ws(&[
            "record",
            "kernels/reduce.json",
            "--gpu",
            "small",
            "--format",
            format,
            "-o",
            s(&good),
        ]);
        ok(&o);
        let bytes = std::fs::read(&good).unwrap();
        let header_end = 18 + u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
        let key = b"\"regs_per_thread\":1";
        let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len() - 1;
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x08; // '1' → '9'
        let bad = d.join(format!("regs90.{format}.wstrace"));
        std::fs::write(&bad, &flipped).unwrap();
        let want = format!("bytes 8–{}: trace header CRC mismatch", header_end - 1);
        let (out, jsonl, svg, json) = (
            d.join("out"),
            d.join("out.jsonl"),
            d.join("out.svg"),
            d.join("out.json"),
        );
        for args in [
            vec!["analyze", s(&bad)],
            vec!["trace", "info", s(&bad)],
            vec!["trace", "dump", s(&bad)],
            vec!["trace", "convert", s(&bad), s(&jsonl)],
            vec!["render", s(&bad), "--chart", "timeline", "-o", s(&svg)],
            vec!["report", s(&bad), "-o", s(&out)],
            vec!["compare", s(&good), s(&bad)],
            vec!["export", s(&bad), "--perfetto", s(&json)],
        ] {
            let o = ws(&args);
            assert_clean_failure(&o, &want);
            assert!(stderr(&o).contains(s(&bad)), "{args:?}: {}", stderr(&o));
        }
        // The clean file still reads.
        ok(&ws(&["analyze", s(&good)]));
    }
}

#[test]
fn runaway_kernel_writes_an_incomplete_trace() {
    let d = dir("runaway");
    let k = d.join("spin.sasm");
    std::fs::write(&k, ".kernel spin\nL:\n BRA L\n").unwrap();
    for ext in ["wstrace", "jsonl"] {
        let t = d.join(format!("spin.{ext}"));
        let o = ws(&[
            "record",
            s(&k),
            "--grid",
            "1",
            "--block",
            "32",
            "--max-cycles",
            "1000",
            "-o",
            s(&t),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("watchdog"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
        assert!(t.exists());
        let v = info_json(&t);
        assert_eq!(v["complete"], false);
        assert_eq!(v["counts"]["fault"], 1);
        let o = ws(&["trace", "info", s(&t)]);
        ok(&o);
        assert!(stdout(&o).contains("complete: no"), "{}", stdout(&o));
        let o = ws(&["trace", "dump", s(&t)]);
        ok(&o);
        let last = stdout(&o).lines().last().unwrap().to_string();
        assert!(last.contains("\"complete\":false"), "{last}");
    }
}

#[test]
fn record_checks_the_launch_files_expect() {
    let d = dir("expect");
    let text = std::fs::read_to_string("kernels/vecadd_tiny.json").unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["kernel"] = Value::String(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels/vecadd_tiny.tgpu")
            .to_str()
            .unwrap()
            .into(),
    );
    v["expect"][0]["words"][0] = 12.into();
    let launch = d.join("wrong.json");
    std::fs::write(&launch, v.to_string()).unwrap();
    let t = d.join("wrong.wstrace");
    let o = ws(&["record", s(&launch), "-o", s(&t)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 24 expected words differs"),
        "{}",
        stderr(&o)
    );
    // The trace is still there and complete: the run itself finished.
    assert_eq!(info_json(&t)["complete"], true);
}

#[test]
fn record_rejects_flags_like_run() {
    let d = dir("flags_like_run");
    let t = d.join("x.wstrace");
    // Wrong commands, not failed runs: exit status 2, as for clap's own errors.
    let o = record(&t, &["--grid", "4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--grid is only for running a kernel file"));
    let o = ws(&["record", "kernels/vecadd.sasm", "-o", s(&t)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs --grid and --block"));
    assert!(!t.exists());
}

#[test]
fn helps_have_examples() {
    for args in [
        vec!["record", "--help"],
        vec!["trace", "--help"],
        vec!["trace", "dump", "--help"],
        vec!["trace", "convert", "--help"],
        vec!["trace", "info", "--help"],
        vec!["help", "record"],
        vec!["help", "trace"],
    ] {
        let o = ws(&args);
        ok(&o);
        assert!(stdout(&o).contains("Example"), "{args:?}: {}", stdout(&o));
    }
    let o = ws(&["--help"]);
    assert!(stdout(&o).contains("record"), "{}", stdout(&o));
}

#[test]
fn analyze_prints_the_sections_and_json_of_a_sample_trace() {
    let bin = env!("CARGO_BIN_EXE_warpscope");
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/reduce.small.gto.wstrace"
    );
    let out = std::process::Command::new(bin)
        .args(["analyze", sample])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for section in [
        "Launch Statistics",
        "Scheduler Statistics",
        "Warp State Statistics",
        "Issue Slots",
        "Source Hotspots",
        "barrier",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    let out = std::process::Command::new(bin)
        .args([
            "analyze",
            sample,
            "--format",
            "json",
            "--taxonomy",
            "detailed",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let states = v["launches"][0]["warp_states"].as_object().unwrap();
    assert!(
        states.keys().any(|k| k.starts_with("scoreboard:")),
        "{states:?}"
    );
    let help = std::process::Command::new(bin)
        .args(["analyze", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8(help.stdout).unwrap().contains("Example"));
    let bad = std::process::Command::new(bin)
        .args(["analyze", "Cargo.toml"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&bad.stderr).contains("panicked"));
}

#[test]
fn ctrl_c_removes_the_temporary_trace_and_keeps_the_earlier_file() {
    let d = dir("ctrl_c");
    let out = d.join("long.wstrace");
    std::fs::write(&out, "an earlier file").unwrap();
    let tmp = d.join("long.wstrace.tmp");
    // A vector add over 2^26 elements: tens of seconds, interrupted as soon as it writes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args([
            "record",
            "kernels/vecadd.sasm",
            "--grid",
            "262144",
            "--block",
            "256",
            "--param",
            "a=0",
            "--param",
            "b=0",
            "--param",
            "c=0",
            "--param",
            "n=67108864",
            "--gpu",
            "small",
            "-o",
            s(&out),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run warpscope");
    // Waiting for the file is waiting for an event; the deadline only keeps a broken build
    // from hanging the suite.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !tmp.exists() && std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(tmp.exists(), "the recording never started writing");
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(!tmp.exists(), "the temporary trace is left behind");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "an earlier file");
}

#[test]
fn an_empty_file_is_called_empty_not_a_truncated_trace() {
    let d = dir("empty");
    for name in ["empty.wstrace", "empty.jsonl"] {
        let path = d.join(name);
        std::fs::write(&path, b"").unwrap();
        for args in [vec!["analyze", s(&path)], vec!["trace", "info", s(&path)]] {
            let o = ws(&args);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
            assert_eq!(
                stderr(&o).trim_end(),
                format!(
                    "error: {}: the file is empty (0 bytes), not a trace",
                    path.display()
                ),
                "{args:?}"
            );
        }
    }
}
