//! The `warpscope` binary, run as a user would: output formats, exit codes and error messages.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_warpscope");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in the crate root.
fn ws(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a clean failure: exit code 1, no panic, and `want` in stderr.
fn assert_fails_with(o: &Output, want: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(want),
        "stderr does not contain {want:?}:\n{err}"
    );
}

/// A command line that cannot work: exit status 2 (as clap gives), the message and a pointer
/// to --help.
fn assert_usage_error(o: &Output, want: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(
        err.contains(want),
        "stderr does not contain {want:?}:\n{err}"
    );
    assert!(err.contains("try '--help'"), "{err}");
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{}", stdout(o)))
}

#[test]
fn run_launch_file_json() {
    let o = ws(&[
        "run",
        "kernels/vecadd_tiny.json",
        "--json",
        "--dump",
        "192:24",
        "--dump",
        "0x0:2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    for key in [
        "kernel",
        "warp_instructions",
        "thread_instructions",
        "dumps",
        "checks",
    ] {
        assert!(v.get(key).is_some(), "missing key {key} in {v}");
    }
    assert_eq!(v["kernel"], "vecadd_tiny");
    assert_eq!(v["warp_instructions"], 78);
    assert_eq!(v["thread_instructions"], 312);
    assert_eq!(v["checks"]["passed"], 24);
    assert_eq!(v["checks"]["failed"], 0);
    let c: Vec<u64> = (1..=24).map(|i| 11 * i).collect();
    assert_eq!(v["dumps"]["192:24"], serde_json::json!(c));
    assert_eq!(v["dumps"]["0x0:2"], serde_json::json!([10, 20]));
}

#[test]
fn run_launch_file_summary() {
    let o = ws(&["run", "kernels/vecadd_tiny.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("vecadd_tiny"), "{out}");
    assert!(out.contains("78 warp instructions"), "{out}");
    assert!(out.contains("24 passed, 0 failed"), "{out}");
}

#[test]
fn run_kernel_with_flags() {
    let o = ws(&[
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "8",
        "--block",
        "128",
        "--param",
        "a=0x10000",
        "--param",
        "b=0x20000",
        "--param",
        "c=196608",
        "--param",
        "n=1000",
        "--mem",
        "kernels/mem/vecadd_inputs.json",
        "--dump",
        "0x30000:4:f32",
        "--dump",
        "196608:1",
        "--dump",
        "0x30fa0:2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["kernel"], "vecadd");
    assert_eq!(
        v["dumps"]["0x30000:4:f32"],
        serde_json::json!([1000.0, 999.5, 999.0, 998.5])
    );
    assert_eq!(
        v["dumps"]["196608:1"],
        serde_json::json!([1000.0f32.to_bits()])
    );
    // c[1000] and c[1001]: past n, untouched.
    assert_eq!(v["dumps"]["0x30fa0:2"], serde_json::json!([0, 0]));
    assert_eq!(v["checks"]["passed"], 0);
    assert_eq!(v["checks"]["failed"], 0);

    // The same in the human form, with a warp-size override.
    let o = ws(&[
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "2",
        "--block",
        "4",
        "--param",
        "a=0",
        "--param",
        "b=0",
        "--param",
        "c=64",
        "--param",
        "n=8",
        "--dump",
        "64:2",
        "--warp-size",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("dump 64:2: [0, 0]"), "{out}");
    assert!(out.contains("of 4 lanes"), "{out}");
}

#[test]
fn run_kernel_flag_errors() {
    let base = ["run", "kernels/vecadd.sasm", "--grid", "1", "--block", "1"];
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        ws(&args)
    };
    assert_fails_with(&with(&[]), "--param: missing parameters `a`, `b`, `c`, `n`");
    assert_fails_with(
        &with(&[
            "--param", "a=0", "--param", "b=0", "--param", "c=0", "--param", "n=1", "--param",
            "m=1",
        ]),
        "unknown parameter `m`; kernel `vecadd` has .param a, b, c, n",
    );
    assert_fails_with(&with(&["--param", "a"]), "expected NAME=VALUE");
    assert_fails_with(&with(&["--param", "a=zz"]), "--param a:");
    assert_usage_error(
        &ws(&["run", "kernels/vecadd.sasm", "--grid", "0", "--block", "1"]),
        "'--grid <X[,Y,Z]>': expected 1 to 3 positive integers",
    );
    assert_usage_error(
        &ws(&[
            "run",
            "kernels/vecadd.sasm",
            "--grid",
            "1",
            "--block",
            "2,,3",
        ]),
        "invalid value '2,,3' for '--block",
    );
    assert_usage_error(
        &ws(&["run", "kernels/vecadd.sasm"]),
        "needs --grid and --block",
    );
    let full = [
        "--param", "a=0", "--param", "b=0", "--param", "c=0", "--param", "n=0",
    ];
    let mut args = full.to_vec();
    args.extend(["--dump", "6:1"]);
    assert_usage_error(
        &with(&args),
        "'6:1' for '--dump <ADDR:COUNT[:f32]>': address 6",
    );
    let mut args = full.to_vec();
    args.extend(["--dump", "0:x"]);
    assert_usage_error(&with(&args), "'0:x' for '--dump <ADDR:COUNT[:f32]>': COUNT");
    assert_usage_error(
        &ws(&["run", "kernels/vecadd_tiny.json", "--grid", "2"]),
        "--grid is only for running a kernel file",
    );
}

#[test]
fn malformed_kernel_gives_located_diagnostics() {
    let dir = scratch("malformed");
    let bad = dir.join("bad.sasm");
    std::fs::write(&bad, ".kernel bad\n    IADX R1, R2, R3\n    EXIT\n").unwrap();
    let bad = bad.to_str().unwrap();
    for o in [
        ws(&["asm", bad]),
        ws(&["run", bad, "--grid", "1", "--block", "1"]),
    ] {
        assert_fails_with(&o, "bad.sasm:2:5: error:");
        assert!(stderr(&o).contains('^'), "{}", stderr(&o));
    }
    // Through a launch file: the launch file and field, then the kernel's diagnostics.
    std::fs::write(
        dir.join("bad.json"),
        r#"{"kernel": "bad.sasm", "grid": 1, "block": 1}"#,
    )
    .unwrap();
    let o = ws(&["run", dir.join("bad.json").to_str().unwrap()]);
    assert_fails_with(&o, "bad.json: kernel: ");
    assert_fails_with(&o, "bad.sasm:2:5: error:");
}

#[test]
fn garbage_inputs_never_panic() {
    let dir = scratch("garbage");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(2000).collect();
    for name in ["g.sasm", "g.tgpu", "g.hex", "g.json"] {
        std::fs::write(dir.join(name), &bytes).unwrap();
        let path = dir.join(name);
        let p = path.to_str().unwrap();
        let o = if name.ends_with(".json") {
            ws(&["run", p])
        } else {
            ws(&["run", p, "--grid", "1", "--block", "1"])
        };
        assert_fails_with(&o, name);
    }
    assert_fails_with(
        &ws(&["asm", "kernels/nonexistent.sasm"]),
        "nonexistent.sasm: cannot read",
    );
    assert_fails_with(&ws(&["asm", "Cargo.toml"]), "cannot tell the dialect");
}

#[test]
fn bad_launch_files_name_the_field() {
    let dir = scratch("bad_launch");
    std::fs::copy(root().join("kernels/vecadd.sasm"), dir.join("vecadd.sasm")).unwrap();
    let params = r#""params": {"a": 0, "b": 0, "c": 0, "n": 1}"#;
    let cases: Vec<(&str, String, &str)> = vec![
        ("unknown_field", format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {params}, "blok": 1}}"#), "unknown_field.json:1:99: blok: unknown field `blok` (did you mean `block`?); expected one of"),
        ("bad_grid", format!(r#"{{"kernel": "vecadd.sasm", "grid": [0], "block": 1, {params}}}"#), "bad_grid.json:1:37: grid: expected 1 to 3 positive integers"),
        ("bad_launch_grid", format!(r#"{{"launches": [{{"kernel": "vecadd.sasm", "grid": -1, "block": 1, {params}}}]}}"#), "launches[0].grid: expected 1 to 3 positive integers"),
        ("missing_param", r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1, "params": {"a": 0, "b": 0, "c": 0}}"#.into(), "missing_param.json: params: missing parameter `n`"),
        ("unknown_param", r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1, "params": {"a": 0, "b": 0, "c": 0, "n": 1, "x": 1}}"#.into(), "unknown_param.json: params: unknown parameter `x`; kernel `vecadd` has .param a, b, c, n"),
        ("missing_kernel", r#"{"kernel": "nope.sasm", "grid": 1, "block": 1}"#.into(), "missing_kernel.json: kernel: "),
        ("bad_json", r#"{"kernel": "vecadd.sasm", "grid": 1 "block": 1}"#.into(), "bad_json.json:1:37: expected `,` or `}`"),
        ("bad_memory", format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {params}, "memory": [{{"address": 0, "fill": "linear", "count": 2, "value": 3}}]}}"#), "bad_memory.json: memory[0].value: only used with \"fill\": \"constant\""),
    ];
    for (name, text, want) in cases {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        let o = ws(&["run", path.to_str().unwrap()]);
        assert_fails_with(&o, want);
    }
    let o = ws(&["run", dir.join("missing_kernel.json").to_str().unwrap()]);
    assert_fails_with(&o, "nope.sasm: cannot read");
}

#[test]
fn failing_expect_exits_1_with_a_diff() {
    let dir = scratch("failing_expect");
    std::fs::copy(root().join("kernels/vecadd.sasm"), dir.join("vecadd.sasm")).unwrap();
    let text = r#"{
      "kernel": "vecadd.sasm", "grid": 1, "block": 32,
      "params": {"a": 0, "b": 128, "c": 256, "n": 32},
      "memory": [{"address": 0, "f32": [1.0, 2.0]}, {"address": 128, "f32": [0.5, 0.5]}],
      "expect": [
        {"address": 256, "f32": [1.5, 2.5]},
        {"address": 256, "f32": [1.5, 9.0]},
        {"address": 264, "fill": "constant", "value": 7, "count": 20}
      ]
    }"#;
    let path = dir.join("fail.json");
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    let o = ws(&["run", p]);
    assert_fails_with(&o, "21 of 24 expected words differ");
    let err = stderr(&o);
    assert!(
        err.contains("expect[1]: 0x00000104 (260): expected 9.0, got 2.5"),
        "{err}"
    );
    assert!(err.contains("expected 7 (0x00000007), got 0"), "{err}");
    assert!(err.contains("... and 11 more mismatches"), "{err}");
    assert!(stdout(&o).contains("3 passed, 21 failed"), "{}", stdout(&o));

    let o = ws(&["run", p, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["checks"]["passed"], 3);
    assert_eq!(v["checks"]["failed"], 21);

    // A large failing region: every mismatch is counted, the first thousand kept (it held
    // every one, and 64 Mi of them aborted on memory).
    let big = text.replace(r#""count": 20"#, r#""count": 60000"#);
    std::fs::write(&path, big).unwrap();
    let o = ws(&["run", p]);
    assert_fails_with(&o, "60001 of 60004 expected words differ");
    assert!(
        stderr(&o).contains("... and 59991 more mismatches"),
        "{}",
        stderr(&o)
    );
}

/// `run kernels/vecadd.sasm` on one block of `block` threads, with null pointers and `n`.
fn run_vecadd(block: &str, n: &str, extra: &[&str]) -> Output {
    let n = format!("n={n}");
    let mut args = vec![
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "1",
        "--block",
        block,
        "--param",
        "a=0",
        "--param",
        "b=0",
        "--param",
        "c=0",
        "--param",
        &n,
    ];
    args.extend_from_slice(extra);
    ws(&args)
}

#[test]
fn the_functional_runner_refuses_blocks_the_gpu_cannot_hold() {
    // The wrapped product of these dimensions was 0 threads (a silent no-op run), and larger
    // ones exhausted memory; the limit is the GPU's, as on the timing simulator.
    for (block, threads) in [
        ("65536,65536,65536", "281474976710656"),
        ("4294967295,4294967295,4294967295", "18446744073709551615"),
        ("512", "512"),
    ] {
        let o = run_vecadd(block, "4", &["--functional"]);
        assert_fails_with(
            &o,
            &format!("block of {threads} threads exceeds the limit of 256 threads per block"),
        );
    }
}

#[test]
fn a_fault_exits_1_with_its_location() {
    let o = ws(&[
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "1",
        "--block",
        "4",
        "--param",
        "a=2",
        "--param",
        "b=0",
        "--param",
        "c=0",
        "--param",
        "n=4",
    ]);
    assert_fails_with(
        &o,
        "kernel `vecadd`, block (0,0,0), warp 0, lane 0, pc 6 `LDG R4, [R2]`",
    );
    assert_fails_with(&o, "misaligned");
    let o = ws(&[
        "run",
        "kernels/loop.json",
        "--functional",
        "--max-instructions",
        "10",
    ]);
    assert_fails_with(&o, "watchdog");
    assert_fails_with(&o, "--max-instructions N");
    // The timing simulator's watchdog counts cycles.
    let o = ws(&["run", "kernels/loop.json", "--max-cycles", "100"]);
    assert_fails_with(&o, "fault at cycle 100 on small: kernel `loop`: watchdog");
    assert_fails_with(&o, "hint: the run stopped at --max-cycles 100");
    let o = ws(&["run", "kernels/loop.json", "--max-cycles", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The same memory fault on the timing simulator.
    let o = ws(&[
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "1",
        "--block",
        "4",
        "--param",
        "a=2",
        "--param",
        "b=0",
        "--param",
        "c=0",
        "--param",
        "n=4",
        "--functional",
    ]);
    assert_fails_with(&o, "pc 6 `LDG R4, [R2]`");
    assert_fails_with(&o, "misaligned");
}

#[test]
fn asm_listing_reassembles() {
    let dir = scratch("reassemble");
    for kernel in [
        "vecadd.sasm",
        "matmul.sasm",
        "reduce.sasm",
        "divergent.sasm",
        "loop.sasm",
        "mufu.sasm",
        "vecadd_tiny.tgpu",
        "vecadd_tiny.hex",
    ] {
        let src = format!("kernels/{kernel}");
        let want = ws(&["asm", &src, "--emit", "json"]);
        assert!(want.status.success(), "{kernel}: {}", stderr(&want));
        // The same program, but for its lines: the listing's are not the source's.
        let without_lines = |mut v: Value| {
            v.as_object_mut().unwrap().remove("lines");
            v
        };
        let program = without_lines(json(&want));
        for extra in [None, Some("--pcs")] {
            let mut args = vec!["asm", src.as_str(), "--emit", "listing"];
            args.extend(extra);
            let listing = ws(&args);
            assert!(listing.status.success(), "{kernel}: {}", stderr(&listing));
            let copy = dir.join(format!("{kernel}.sasm"));
            std::fs::write(&copy, &listing.stdout).unwrap();
            let again = ws(&["asm", copy.to_str().unwrap(), "--emit", "json"]);
            assert!(
                again.status.success(),
                "{kernel} {extra:?}: {}",
                stderr(&again)
            );
            assert_eq!(without_lines(json(&again)), program, "{kernel} {extra:?}");
        }
    }
    // --dialect overrides the extension.
    let dir_hex = dir.join("prog.txt");
    std::fs::copy(root().join("kernels/vecadd_tiny.hex"), &dir_hex).unwrap();
    let o = ws(&["asm", dir_hex.to_str().unwrap(), "--dialect", "tinygpu-hex"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("EXIT"));
}

#[test]
fn every_help_has_an_example() {
    for args in [
        vec!["--help"],
        vec!["asm", "--help"],
        vec!["run", "--help"],
        vec!["help", "run"],
        vec!["config", "--help"],
        vec!["config", "show", "--help"],
        vec!["config", "list", "--help"],
        vec!["bench", "--help"],
        vec!["help", "bench"],
    ] {
        let o = ws(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("Example"), "{args:?}: {}", stdout(&o));
    }
    let o = ws(&["--version"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains(env!("CARGO_PKG_VERSION")));
    let o = ws(&["run", "--version"]);
    assert!(o.status.success());
    // No arguments: usage on stderr, a usage error code, no panic.
    let o = ws(&[]);
    assert!(!o.status.success());
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn run_defaults_to_the_timing_simulator() {
    let o = ws(&["run", "kernels/vecadd_tiny.json", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["simulator"], "timing");
    assert_eq!(v["gpu"], "tiny");
    assert_eq!(v["warp_size"], 4);
    assert_eq!(v["policy"], "lrr");
    assert_eq!(v["scoreboard"], "bitmap");
    assert_eq!(v["hazards"], 0);
    let cycles = v["cycles"].as_u64().unwrap();
    assert!(cycles > 78, "{v}");
    let ipc = v["ipc"].as_f64().unwrap();
    assert!((ipc - 78.0 / cycles as f64).abs() < 1e-9, "{v}");
    let sms = v["sms"].as_array().unwrap();
    assert_eq!(sms.len(), 2);
    let blocks: u64 = sms.iter().map(|s| s["blocks"].as_u64().unwrap()).sum();
    assert_eq!(blocks, 6);
    assert!(sms.iter().all(|s| s["busy_cycles"].as_u64().unwrap() > 0));
    assert_eq!(v["launches"][0]["warp_instructions"], 78);
    assert_eq!(v["launches"][0]["warps"], 6);

    // The human summary names gpu, policy and scoreboard, cycles, IPC and per-SM blocks.
    let o = ws(&[
        "run",
        "kernels/reduce.json",
        "--gpu",
        "volta",
        "--policy",
        "lrr",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "gpu volta (4 SMs, policy lrr, scoreboard bitmap, memory hierarchy)",
        " cycles, IPC ",
        "blocks per SM: [1, 1, 1, 1]",
        "checks: 4 passed, 0 failed",
    ] {
        assert!(out.contains(want), "{want:?} not in:\n{out}");
    }

    // --functional: the old runner, same results, no timing keys.
    let o = ws(&["run", "kernels/vecadd_tiny.json", "--json", "--functional"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["simulator"], "functional");
    assert_eq!(v["warp_instructions"], 78);
    assert!(v.get("cycles").is_none(), "{v}");
}

#[test]
fn run_timing_overrides() {
    let o = ws(&[
        "run",
        "kernels/vecadd.json",
        "--json",
        "--gpu",
        "small",
        "--policy",
        "two_level",
        "--scoreboard",
        "barriers",
        "--memory",
        "fixed:50",
        "--sms",
        "3",
        "--warps",
        "16",
        "--issue-width",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["policy"], "two_level");
    assert_eq!(v["scoreboard"], "barriers");
    assert_eq!(v["memory_model"], "fixed:50");
    assert_eq!(v["sms"].as_array().unwrap().len(), 3);
    assert_eq!(v["checks"]["failed"], 0);

    // A value out of a flag's range is a usage error; one that only clashes with the rest of
    // the GPU names the flag and the field.
    assert_usage_error(
        &ws(&["run", "kernels/loop.json", "--warps", "0"]),
        "invalid value '0' for '--warps <N>': 0 is not in 1..=1024",
    );
    assert_usage_error(
        &ws(&["run", "kernels/loop.json", "--sms", "1025"]),
        "invalid value '1025' for '--sms <N>': 1025 is not in 1..=1024",
    );
    assert_usage_error(
        &ws(&["run", "kernels/loop.json", "--issue-width", "9"]),
        "1..=8",
    );
    assert_usage_error(
        &ws(&["run", "kernels/loop.json", "--gpu", "volta", "--warps", "2"]),
        "invalid value '2' for '--warps': sm.schedulers: 4 schedulers but only 2 warp slots",
    );
    // A GPU file's own bad field is a failed run, naming the field.
    let dir = scratch("bad_gpu_field");
    let gpu = dir.join("gpu.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&stdout(&ws(&["config", "show", "small"]))).unwrap();
    config["sm"]["max_warps"] = 0.into();
    std::fs::write(&gpu, config.to_string()).unwrap();
    let o = ws(&["run", "kernels/loop.json", "--gpu", gpu.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("gpu config: sm.max_warps: must be at least 1"),
        "{}",
        stderr(&o)
    );
    let o = ws(&["run", "kernels/loop.json", "--policy", "fifo"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("lrr, gto, two_level"), "{}", stderr(&o));
    let o = ws(&["run", "kernels/loop.json", "--scoreboard", "magic"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bitmap, ranges, barriers"),
        "{}",
        stderr(&o)
    );
    let o = ws(&["run", "kernels/loop.json", "--memory", "fast"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("fixed:LATENCY"), "{}", stderr(&o));
    assert_fails_with(
        &ws(&["run", "kernels/loop.json", "--gpu", "fermi"]),
        "unknown GPU `fermi`: expected a preset (tiny, small, pascal, volta, hopper)",
    );
    assert_fails_with(
        &ws(&["run", "kernels/loop.json", "--gpu", "voltaa"]),
        "unknown GPU `voltaa` (did you mean `volta`?): expected a preset",
    );
    // A block that does not fit the GPU is an error, not a panic.
    assert_fails_with(
        &ws(&["run", "kernels/reduce.json", "--gpu", "tiny"]),
        "exceeds the limit of 4 threads per block",
    );
    // Timing-only flags with --functional, and the other way round.
    assert_usage_error(
        &ws(&[
            "run",
            "kernels/loop.json",
            "--functional",
            "--policy",
            "gto",
        ]),
        "--policy is for the timing simulator",
    );
    assert_usage_error(
        &ws(&["run", "kernels/loop.json", "--max-instructions", "5"]),
        "--max-instructions is for --functional",
    );
}

#[test]
fn run_with_a_gpu_config_file() {
    let dir = scratch("gpu_file");
    let o = ws(&["config", "show", "small"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o).replace("\"num_sms\": 2", "\"num_sms\": 5");
    let path = dir.join("five.json");
    std::fs::write(&path, text).unwrap();
    let o = ws(&[
        "run",
        "kernels/matmul.json",
        "--json",
        "--gpu",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["sms"].as_array().unwrap().len(), 5);
    assert_eq!(v["checks"]["failed"], 0);

    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        stdout(&ws(&["config", "show", "small"])).replace("\"max_warps\": 8", "\"max_warps\": 0"),
    )
    .unwrap();
    assert_fails_with(
        &ws(&["run", "kernels/loop.json", "--gpu", bad.to_str().unwrap()]),
        "sm.max_warps: must be at least 1",
    );
    assert_fails_with(
        &ws(&["run", "kernels/loop.json", "--gpu", "missing.json"]),
        "missing.json: cannot read",
    );
}

#[test]
fn run_faults_and_failed_expects_on_the_timing_simulator() {
    // A misaligned load faults under the timing model too.
    let o = ws(&[
        "run",
        "kernels/vecadd.sasm",
        "--grid",
        "1",
        "--block",
        "4",
        "--param",
        "a=2",
        "--param",
        "b=0",
        "--param",
        "c=0",
        "--param",
        "n=4",
    ]);
    assert_fails_with(&o, "fault at cycle");
    assert_fails_with(&o, "misaligned");
    // A kernel whose warp waits at a barrier that half of its lanes branch past: deadlock,
    // exit 1.
    let dir = scratch("timing_faults");
    let k = dir.join("stuck.sasm");
    std::fs::write(
        &k,
        ".kernel stuck\n    ISETP.LT P0, %laneid, 16\n    @P0 BRA SKIP\n    BAR.SYNC\nSKIP:\n    EXIT\n",
    )
    .unwrap();
    let o = ws(&["run", k.to_str().unwrap(), "--grid", "1", "--block", "64"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(stderr(&o).contains("deadlock"), "{}", stderr(&o));
    // A warp that exits before the barrier is not waited for (the barrier counts live
    // threads): the others go on, on the timing simulator as on the functional one. (The
    // timing loop once reported a deadlock here: the release came in a cycle in which nothing
    // had issued, and its skip to the next wake-up did not see that the released warps were
    // to be looked at again.)
    let k = dir.join("exits_early.sasm");
    std::fs::write(
        &k,
        ".kernel exits_early\n    ISETP.GE P0, %tid.x, 32\n    @P0 EXIT\n    BAR.SYNC\n    EXIT\n",
    )
    .unwrap();
    for functional in [false, true] {
        let mut args = vec!["run", k.to_str().unwrap(), "--grid", "1", "--block", "64"];
        if functional {
            args.push("--functional");
        }
        let o = ws(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("6 warp instructions"), "{}", stdout(&o));
    }
    // expect checks work under timing: exit 1 with the diff.
    std::fs::copy(root().join("kernels/vecadd.sasm"), dir.join("vecadd.sasm")).unwrap();
    std::fs::write(
        dir.join("fail.json"),
        r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 32, "gpu": "volta",
            "params": {"a": 0, "b": 128, "c": 256, "n": 32},
            "memory": [{"address": 0, "f32": [1.0, 2.0]}],
            "expect": [{"address": 256, "f32": [1.0, 3.0]}]}"#,
    )
    .unwrap();
    let o = ws(&["run", dir.join("fail.json").to_str().unwrap()]);
    assert_fails_with(&o, "1 of 2 expected words differ");
    assert_fails_with(&o, "expected 3.0, got 2.0");
    assert!(stdout(&o).contains("gpu volta"), "{}", stdout(&o));
}

#[test]
fn config_show_and_list() {
    let o = ws(&["config", "show", "volta"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let loaded = warpscope::sim::config::GpuConfig::from_json(&stdout(&o)).unwrap();
    assert_eq!(
        loaded,
        warpscope::sim::config::GpuConfig::preset("volta").unwrap()
    );
    let o = ws(&["config", "list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for name in warpscope::sim::config::GpuConfig::PRESETS {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.len() > name.len() + 10),
            "{name} not listed:\n{out}"
        );
    }
    assert_fails_with(&ws(&["config", "show", "fermi"]), "unknown GPU `fermi`");
}

#[test]
fn asm_auto_control_listing_reassembles() {
    let dir = scratch("auto_control");
    for kernel in [
        "vecadd.sasm",
        "reduce.sasm",
        "mufu.sasm",
        "vecadd_tiny.tgpu",
    ] {
        let src = format!("kernels/{kernel}");
        for gpu in [None, Some("volta"), Some("tiny")] {
            let mut args = vec!["asm", src.as_str(), "--auto-control"];
            if let Some(g) = gpu {
                args.extend(["--gpu", g]);
            }
            let listing = ws(&args);
            assert!(listing.status.success(), "{kernel}: {}", stderr(&listing));
            let text = stdout(&listing);
            assert!(text.contains("[B"), "{kernel}: no control codes:\n{text}");
            let copy = dir.join(format!("{kernel}.{}.sasm", gpu.unwrap_or("default")));
            std::fs::write(&copy, &text).unwrap();
            let want = ws(&[
                "asm",
                src.as_str(),
                "--auto-control",
                "--emit",
                "json",
                "--gpu",
                gpu.unwrap_or("small"),
            ]);
            let again = ws(&["asm", copy.to_str().unwrap(), "--emit", "json"]);
            assert!(again.status.success(), "{kernel}: {}", stderr(&again));
            // The same program, the lines aside (the listing's are not the source's).
            let without_lines = |mut v: Value| {
                v.as_object_mut().unwrap().remove("lines");
                v
            };
            assert_eq!(
                without_lines(json(&again)),
                without_lines(json(&want)),
                "{kernel} {gpu:?}"
            );
        }
    }
    let o = ws(&["asm", "kernels/vecadd.sasm", "--gpu", "volta"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--auto-control"), "{}", stderr(&o));
    assert_fails_with(
        &ws(&[
            "asm",
            "kernels/vecadd.sasm",
            "--auto-control",
            "--gpu",
            "fermi",
        ]),
        "unknown GPU `fermi`",
    );
}

#[test]
fn bench_help_and_errors() {
    let o = ws(&["bench", "--help"]);
    assert!(stdout(&o).contains("BENCHMARKS.md"), "{}", stdout(&o));
    // tiny cannot hold the benchmarks' 256-thread blocks: a clean error.
    assert_fails_with(
        &ws(&["bench", "--gpu", "tiny"]),
        "exceeds the limit of 4 threads per block",
    );
    let o = ws(&["bench", "--scale", "0"]);
    assert!(!o.status.success());
}

#[test]
fn no_command_writes_an_output_over_its_input_or_another_output() {
    let d = scratch("clobber");
    let trace = d.join("t.wstrace");
    std::fs::copy("traces/reduce.small.gto.wstrace", &trace).unwrap();
    let before = std::fs::read(&trace).unwrap();
    let t = trace.to_str().unwrap();
    for (args, want) in [
        (
            vec!["export", t, "--perfetto", t],
            "the export would replace the trace it is made from",
        ),
        (
            vec!["render", t, "--chart", "timeline", "-o", t],
            "the chart would replace the trace it is made from",
        ),
    ] {
        assert_fails_with(&ws(&args), want);
    }
    assert!(std::fs::read(&trace).unwrap() == before);

    // study: two outputs on one file, and a failure found before anything is written.
    let svg = d.join("s.svg");
    let s = svg.to_str().unwrap();
    assert_fails_with(
        &ws(&["study", "--svg", s, "--html", s]),
        "given for both the figure and the HTML page",
    );
    let missing = d.join("nodir/x.html");
    assert_fails_with(
        &ws(&["study", "--svg", s, "--html", missing.to_str().unwrap()]),
        "directory",
    );
    let big = d.join("big.wstrace");
    assert_fails_with(
        &ws(&[
            "study",
            "--groups",
            "1000",
            "--lat",
            "1000",
            "--stalls",
            "heavy",
            "--svg",
            s,
            "--trace",
            big.to_str().unwrap(),
        ]),
        "too many to draw",
    );
    assert!(!svg.exists() && !big.exists());
}

#[test]
fn a_byte_order_mark_is_ignored_and_an_empty_kernel_is_refused_before_it_runs() {
    let d = scratch("bom");
    let bom = "\u{feff}";
    let kernel = std::fs::read_to_string("kernels/vecadd.sasm").unwrap();
    std::fs::write(d.join("vecadd.sasm"), format!("{bom}{kernel}")).unwrap();
    let launch = std::fs::read_to_string("kernels/vecadd.json").unwrap();
    std::fs::write(d.join("vecadd.json"), format!("{bom}{launch}")).unwrap();
    let config = stdout(&ws(&["config", "show", "small"]));
    std::fs::write(d.join("gpu.json"), format!("{bom}{config}")).unwrap();
    // The copies run as the originals do (the launch file names its kernel beside it).
    let plain = ws(&["run", "kernels/vecadd.json"]);
    let marked = ws(&[
        "run",
        d.join("vecadd.json").to_str().unwrap(),
        "--gpu",
        d.join("gpu.json").to_str().unwrap(),
    ]);
    assert!(marked.status.success(), "{}", stderr(&marked));
    let cycles = |o: &Output| {
        stdout(o)
            .lines()
            .find(|l| l.contains("cycles"))
            .map(str::to_string)
    };
    assert_eq!(cycles(&plain), cycles(&marked));

    let empty = d.join("empty.sasm");
    std::fs::write(&empty, ".kernel empty\n.regs 2\n").unwrap();
    for extra in [&[][..], &["--functional"]] {
        let mut args = vec![
            "run",
            empty.to_str().unwrap(),
            "--grid",
            "1",
            "--block",
            "32",
        ];
        args.extend_from_slice(extra);
        let o = ws(&args);
        // The assembler says so, with the place, before anything runs.
        assert_fails_with(&o, "empty.sasm:2:1: error: the kernel has no instructions");
        assert!(!stderr(&o).contains("try another --gpu"), "{}", stderr(&o));
    }
}

#[test]
fn config_errors_name_what_was_given_not_a_flag_that_was_not() {
    let o = ws(&["config", "show", "nope"]);
    assert_fails_with(
        &o,
        "unknown GPU `nope`: expected a preset (tiny, small, pascal, volta, hopper)",
    );
    assert!(!stderr(&o).contains("--gpu"), "{}", stderr(&o));
    let d = scratch("config-errors");
    let file = d.join("c.json");
    std::fs::write(&file, "{\"name\":\"x\"}").unwrap();
    let o = ws(&["config", "show", file.to_str().unwrap()]);
    assert_fails_with(&o, "missing field `num_sms`");
    // The path once, not twice.
    assert_eq!(stderr(&o).matches("c.json").count(), 1, "{}", stderr(&o));
}

#[test]
fn json_output_is_one_object_even_when_the_kernel_faults() {
    for extra in [
        &["--max-cycles", "10"][..],
        &["--functional", "--max-instructions", "10"],
    ] {
        let mut args = vec!["run", "kernels/reduce.json", "--json"];
        args.extend_from_slice(extra);
        let o = ws(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let v = json(&o);
        assert_eq!(v["complete"], false, "{v}");
        assert_eq!(v["kernel"], "reduce");
        assert!(v["fault"].as_str().unwrap().contains("watchdog"), "{v}");
        assert_eq!(v["cycles"].is_u64(), extra[0] == "--max-cycles", "{v}");
    }
}

#[test]
fn a_float_past_f32_range_is_an_error_not_infinity() {
    let d = scratch("f32-range");
    std::fs::copy("kernels/vecadd.sasm", d.join("vecadd.sasm")).unwrap();
    let launch = d.join("l.json");
    std::fs::write(
        &launch,
        r#"{"kernel":"vecadd.sasm","grid":1,"block":32,"params":{"a":0,"b":0,"c":0,"n":1e40}}"#,
    )
    .unwrap();
    assert_fails_with(
        &ws(&["run", launch.to_str().unwrap()]),
        "params.n: 1e40 is out of f32 range",
    );
    let o = run_vecadd("32", "-1e39", &[]);
    assert_fails_with(&o, "`-1e39` is out of f32 range");
}

#[test]
fn an_output_that_cannot_be_a_file_is_refused_before_the_run() {
    let d = scratch("output-paths");
    let dir = d.to_str().unwrap();
    let slash = format!("{dir}/");
    let missing = d.join("nodir/x.wstrace");
    let missing = missing.to_str().unwrap();
    let trace = "traces/reduce.small.gto.wstrace";
    let replay_input = "tests/data/accelsim/vectoradd-100-32";
    for (args, want) in [
        (
            vec!["render", trace, "--chart", "timeline", "-o", &slash],
            format!("{slash} is a directory: give a file name for the chart"),
        ),
        (
            vec!["record", "kernels/reduce.json", "-o", dir],
            format!("{dir} is a directory: give a file name for the trace"),
        ),
        (
            vec!["replay", replay_input, "-o", dir],
            format!("{dir} is a directory: give a file name for the trace"),
        ),
        (
            vec!["replay", replay_input, "-o", missing],
            format!("{missing}: the directory {dir}/nodir does not exist"),
        ),
        (
            vec!["export", trace, "--perfetto", &slash],
            format!("{slash} is a directory: give a file name for the export"),
        ),
        (
            vec!["trace", "convert", trace, dir],
            format!("{dir} is a directory: give a file name for the converted trace"),
        ),
    ] {
        let out = ws(&args);
        assert_fails_with(&out, &want);
        // Refused before anything ran: no progress, no summary.
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_mistyped_input_is_not_found_rather_than_missing_flags() {
    for command in [
        vec!["run"],
        vec!["record", "-o", "never.wstrace"],
        vec!["profile", "-o", "never-profile"],
        vec!["sweep", "--policy", "gto,lrr", "-o", "never-sweep"],
    ] {
        let mut args = command.clone();
        args.insert(1, "kernels/reduce.jsn");
        let out = ws(&args);
        assert_fails_with(&out, "kernels/reduce.jsn: cannot read: No such file");
        // A directory is an Accel-Sim trace to the commands that take those.
        args[1] = "kernels";
        let out = ws(&args);
        match command[0] {
            "run" | "record" => {
                assert_fails_with(&out, "kernels is a directory: give a launch file (.json)")
            }
            _ => assert_fails_with(&out, "kernels: a trace directory must hold kernelslist.g"),
        }
    }
    // A launch file where a trace is expected says what it is.
    assert_fails_with(
        &ws(&["analyze", "kernels/reduce.json"]),
        "not a warpscope trace header",
    );
}

#[test]
fn gpu_help_names_the_default_of_the_command_s_own_input() {
    let help = |command: &str| stdout(&ws(&[command, "--help"]));
    for command in ["run", "record"] {
        let h = help(command);
        assert!(
            h.contains("Default: the launch file's \"gpu\", else small."),
            "{h}"
        );
        assert!(!h.contains("Accel-Sim trace, pascal"), "{h}");
    }
    let h = help("replay");
    assert!(
        h.contains("Default: pascal for a trace before sm_70, hopper from sm_90, else volta."),
        "{h}"
    );
    assert!(!h.contains("else small"), "{h}");
    let h = help("profile");
    assert!(
        h.contains("else small; for an Accel-Sim trace, pascal before sm_70, hopper from sm_90, else volta"),
        "{h}"
    );
}

#[test]
fn a_launch_the_gpu_refuses_leaves_no_new_output_directory_and_names_the_gpu() {
    let d = scratch("refused-launch");
    let want = "kernels/matmul.json: kernel `matmul`: block of 64 threads exceeds the limit \
                of 4 threads per block (on gpu tiny; try another --gpu)";
    let run = ws(&["run", "kernels/matmul.json", "--gpu", "tiny"]);
    assert_fails_with(&run, want);
    // `record`, `profile` and `sweep` say what `run` says, word for word.
    let record = d.join("x.wstrace");
    let o = ws(&[
        "record",
        "kernels/matmul.json",
        "--gpu",
        "tiny",
        "-o",
        record.to_str().unwrap(),
    ]);
    assert_eq!(stderr(&o), stderr(&run));
    assert_eq!(o.status.code(), Some(1));
    // A directory the command created (with its new parents) goes again when nothing was
    // written into it; one that existed stays, and so does anything it held.
    let new = d.join("new/nested/pt");
    let kept = d.join("kept");
    std::fs::create_dir(&kept).unwrap();
    let holding = d.join("holding");
    std::fs::create_dir(&holding).unwrap();
    std::fs::write(holding.join("notes.txt"), "mine").unwrap();
    for out in [&new, &kept, &holding] {
        let o = ws(&[
            "profile",
            "kernels/matmul.json",
            "--gpu",
            "tiny",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(stderr(&o), stderr(&run), "{}", out.display());
        assert_eq!(o.status.code(), Some(1));
    }
    let o = ws(&[
        "sweep",
        "kernels/matmul.json",
        "--gpu",
        "tiny",
        "--policy",
        "lrr,gto",
        "-o",
        d.join("new/sweep").to_str().unwrap(),
    ]);
    assert_fails_with(&o, "no combination could be recorded");
    assert!(!d.join("new").exists(), "nothing new is left behind");
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_to_string(holding.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&holding).unwrap().count(), 1);
    assert!(!record.exists());

    // A replayed kernel the GPU cannot hold gets the same hint.
    let o = ws(&[
        "replay",
        "tests/data/accelsim/vectoradd-100-32",
        "--gpu",
        "small",
        "-o",
        record.to_str().unwrap(),
    ]);
    assert_fails_with(
        &o,
        "tests/data/accelsim/vectoradd-100-32: kernel `_Z6vecAddIfEvPT_S1_S1_i`: block of 1024 \
         threads exceeds the limit of 256 threads per block (on gpu small; try another --gpu)",
    );
}

#[test]
fn a_block_that_outgrows_the_warps_flag_is_told_to_raise_the_flag_not_to_change_the_gpu() {
    let d = scratch("warps-flag-too-small");
    let advice = "(--warps 8 on gpu pascal, whose SMs have 64 warp slots; give a larger --warps \
                  or leave it out)";
    let o = ws(&[
        "replay",
        "tests/data/accelsim/vectoradd-100-32",
        "--warps",
        "8",
        "-o",
        d.join("x.wstrace").to_str().unwrap(),
    ]);
    assert_fails_with(
        &o,
        &format!(
            "tests/data/accelsim/vectoradd-100-32: kernel `_Z6vecAddIfEvPT_S1_S1_i`: a block \
             needs 32 warps but an SM has 8 warp slots (sm.max_warps) {advice}"
        ),
    );
    let o = ws(&[
        "run",
        "kernels/reduce.json",
        "--gpu",
        "small",
        "--warps",
        "4",
    ]);
    assert_fails_with(
        &o,
        "a block needs 8 warps but an SM has 4 warp slots (sm.max_warps) (--warps 4 on gpu \
         small, whose SMs have 8 warp slots; give a larger --warps or leave it out)",
    );
    // A sweep names the hint under the combination that failed; the others still compare.
    let o = ws(&[
        "sweep",
        "kernels/reduce.json",
        "--gpu",
        "small",
        "--warps",
        "4,8",
        "--policy",
        "gto,lrr",
        "-o",
        d.join("sweep").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "gto.bitmap.w4: kernel `reduce`: a block needs 8 warps but an SM has 4 warp slots \
             (sm.max_warps) (--warps 4 on gpu small, whose SMs have 8 warp slots;"
        ),
        "{out}"
    );
    // A preset's own limit still points at another preset.
    let o = ws(&["run", "kernels/reduce.json", "--gpu", "tiny"]);
    assert_fails_with(&o, "(on gpu tiny; try another --gpu)");
}

#[test]
fn a_kernel_of_no_known_extension_is_told_how_to_name_its_dialect() {
    let d = scratch("unknown-dialect");
    let kernel = d.join("vecadd.txt");
    std::fs::copy("kernels/vecadd.sasm", &kernel).unwrap();
    let k = kernel.to_str().unwrap();
    let advice = "vecadd.txt: cannot tell the dialect from the file name; use the extension \
                  .sasm, .tgpu or .hex, or give --dialect native|tinygpu|tinygpu-hex";
    assert_fails_with(&ws(&["asm", k]), advice);
    let flags = [
        "--grid", "1", "--block", "32", "--param", "a=0", "--param", "b=0",
    ];
    let mut run = vec!["run", k];
    run.extend_from_slice(&flags);
    run.extend_from_slice(&["--param", "c=0", "--param", "n=1"]);
    assert_fails_with(&ws(&run), advice);
    // Every value the advice names is one --dialect takes (and the right one assembles).
    for value in ["native", "tinygpu", "tinygpu-hex"] {
        let o = ws(&["asm", k, "--dialect", value]);
        assert_ne!(o.status.code(), Some(2), "{value}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("cannot tell the dialect"),
            "{}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    assert!(ws(&["asm", k, "--dialect", "native"]).status.success());
    let mut run_native = run.clone();
    run_native.extend_from_slice(&["--dialect", "native"]);
    let o = ws(&run_native);
    assert!(o.status.success(), "{}", stderr(&o));
    // In a launch file the dialect is named by its own key, not by a flag.
    let launch = d.join("l.json");
    std::fs::write(
        &launch,
        r#"{"kernel":"vecadd.txt","grid":1,"block":32,"params":{"a":0,"b":0,"c":0,"n":1}}"#,
    )
    .unwrap();
    let o = ws(&["run", launch.to_str().unwrap()]);
    assert_fails_with(
        &o,
        &format!(
            "/l.json: kernel: {k}: cannot tell the dialect from the file name; use the \
             extension .sasm, .tgpu or .hex, or set \"dialect\" beside \"kernel\" \
             (\"native\", \"tinygpu\", \"tinygpu-hex\")"
        ),
    );
    assert!(!stderr(&o).contains("--dialect"), "{}", stderr(&o));
    let named = d.join("named.json");
    std::fs::write(
        &named,
        r#"{"kernel":"vecadd.txt","dialect":"native","grid":1,"block":32,"params":{"a":0,"b":0,"c":0,"n":1}}"#,
    )
    .unwrap();
    let o = ws(&["run", named.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A closed stderr (`warpscope ... 2>&1 | head -1` once `head` has its line) loses the
/// messages, not the command: it still writes its output and exits 0, where `eprintln!`
/// panicked with exit code 101.
#[test]
fn a_closed_stderr_is_not_a_panic() {
    let dir = scratch("closed-stderr");
    let out = dir.join("va.wstrace");
    // The pipe's reading end is closed before the command starts: every write to stderr fails.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(BIN)
        .args(["replay", "tests/data/accelsim/vectoradd-100-32", "-o"])
        .arg(&out)
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(out.exists());
}

/// `asm --opcodes` lists every opcode family once, with its operands and the pipe, latency and
/// interval of --gpu; README's instruction table lists the same families on the same pipes,
/// so neither drifts from the assembler.
#[test]
fn asm_lists_the_opcodes_as_the_readme_does() {
    use warpscope::isa::{Opcode, Pipe};
    let o = ws(&["asm", "--opcodes", "--gpu", "volta"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let volta = warpscope::sim::config::GpuConfig::preset("volta").unwrap();
    // Rows by opcode: the first column.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.starts_with("opcode"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"))
    };
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| opcode | form | semantics | pipe |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    for op in Opcode::all() {
        let family = match op.mnemonic().split_once('.') {
            Some(("ISETP" | "FSETP", _)) => format!("{}.cmp", op.base_name()),
            Some(("MUFU", _)) => "MUFU.fn".to_string(),
            Some(("BRA", _)) => "BRA.nzp".to_string(),
            _ => op.base_name().to_string(),
        };
        let r = row(&family);
        assert_eq!(r[1], op.pipe().name(), "{family}");
        let pipe = volta.pipes.get(op.pipe());
        let latency = match op.pipe() {
            Pipe::Global => "memory".to_string(),
            _ => pipe.latency.to_string(),
        };
        assert_eq!(
            (r[2], r[3]),
            (latency.as_str(), pipe.interval.to_string().as_str())
        );
        let documented = table
            .iter()
            .find(|l| {
                let cell = l.split('|').nth(1).unwrap_or("");
                cell.split('/')
                    .any(|name| name.trim() == format!("`{family}`"))
            })
            .unwrap_or_else(|| panic!("README's instruction table lacks {family}"));
        let readme_pipe = documented.trim_end_matches('|').rsplit('|').next().unwrap();
        assert_eq!(
            readme_pipe.trim(),
            op.pipe().name(),
            "README's pipe of {family}"
        );
    }
    assert_eq!(rows.len(), 37, "{out}");
    // The operands, destinations first; a source after an address is Rb.
    assert!(
        out.contains("ATOMG.ADD  global      memory         2  Rd, [Ra+imm], Rb|imm\n"),
        "{out}"
    );
    assert!(out.contains("(cmp: LT LE GT GE EQ NE)"), "{out}");
    // Without --gpu, small's pipes; --gpu without a use is a usage error, a file with
    // --opcodes another.
    let small = stdout(&ws(&["asm", "--opcodes"]));
    assert!(
        small.contains("on small\n") && small.contains("MUFU.fn    mufu            16         4"),
        "{small}"
    );
    assert_usage_error(
        &ws(&["asm", "kernels/vecadd.sasm", "--gpu", "volta"]),
        "--gpu applies to --auto-control or --opcodes",
    );
    assert_usage_error(
        &ws(&["asm", "kernels/vecadd.sasm", "--opcodes"]),
        "cannot be used with",
    );
    assert_usage_error(&ws(&["asm"]), "required");
}

#[cfg(unix)]
#[test]
fn outputs_write_through_symlinks_and_refuse_special_files() {
    let d = scratch("special-outputs");
    let trace = "traces/reduce.small.gto.wstrace";
    // A link stays a link: the file it points to is what gets written.
    let link = d.join("link.svg");
    std::os::unix::fs::symlink("real.svg", &link).unwrap();
    let o = ws(&[
        "render",
        trace,
        "--chart",
        "stalls",
        "-o",
        link.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(d.join("real.svg"))
        .unwrap()
        .starts_with("<svg"));
    // A device is refused before anything is written (a rename would replace it, and as root
    // did replace /dev/stdout), by every kind of output.
    for args in [
        &["render", trace, "--chart", "stalls", "-o", "/dev/null"][..],
        &["record", "kernels/reduce.json", "-o", "/dev/null"],
        &["trace", "convert", trace, "/dev/null"],
    ] {
        let o = ws(args);
        assert_fails_with(&o, "/dev/null is not a regular file");
    }
    let null = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(&null));
    // `-` is not standard output here.
    let o = ws(&["render", trace, "--chart", "stalls", "-o", "-"]);
    assert_usage_error(&o, "`-`: give a file name for the chart");
}
