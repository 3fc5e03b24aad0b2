//! Every bundled kernel with its launch file: `kernels/NAME.json` must pass its own `expect`
//! (so adding a kernel adds a test), and the bigger kernels are also checked against reference
//! computations written here in Rust.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use warpscope::asm::{self, Dialect};
use warpscope::launchfile::{LaunchFile, LaunchFileError, RunOutcome};
use warpscope::sim::functional::{self, FunctionalOptions};
use warpscope::sim::memory::GlobalMemory;

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

fn launch_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(kernels_dir())
        .expect("kernels/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn load(name: &str) -> LaunchFile {
    let path = kernels_dir().join(name);
    LaunchFile::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn run(lf: &LaunchFile, warp_size: u32) -> RunOutcome {
    let options = FunctionalOptions {
        warp_size,
        ..FunctionalOptions::default()
    };
    lf.run_functional(options)
        .unwrap_or_else(|e| panic!("{}: {e}", lf.path.display()))
}

fn words(memory: &GlobalMemory, address: u64, count: usize) -> Vec<u32> {
    memory.read_words(address, count).expect("in bounds")
}

#[test]
fn every_bundled_launch_file_passes_its_checks() {
    let files = launch_files();
    assert!(
        files.len() >= 8,
        "expected the bundled kernels, found {files:?}"
    );
    for path in files {
        let lf = LaunchFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!lf.expect.is_empty(), "{}: has no expect", path.display());
        let outcome = run(&lf, lf.warp_size());
        let report = lf.check(&outcome.memory);
        let shown: Vec<String> = report
            .mismatches
            .iter()
            .take(10)
            .map(|m| m.to_string())
            .collect();
        assert!(
            report.ok() && report.passed > 0,
            "{}: {} passed, {} failed\n{}",
            path.display(),
            report.passed,
            report.failed,
            shown.join("\n")
        );
    }
}

/// A warp size no warp can have is refused as such, not as a block that does not fit an SM.
#[test]
fn the_functional_runner_refuses_a_warp_size_past_a_warps_lanes() {
    use warpscope::sim::functional::RunError;
    use warpscope::sim::LaunchError;
    let lf = load("vecadd.json");
    for warp_size in [0, 33] {
        let options = FunctionalOptions {
            warp_size,
            ..FunctionalOptions::default()
        };
        let err = lf.run_functional(options).unwrap_err();
        assert!(
            matches!(
                err,
                RunError::Launch(LaunchError::WarpSize { warp_size: w, .. }) if w == warp_size
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("kernel `vecadd`: warp size {warp_size} is not in 1..=32")
        );
    }
}

#[test]
fn results_do_not_depend_on_the_warp_size() {
    for path in launch_files() {
        let lf = LaunchFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for warp_size in [1, 4, 7, 16, 32] {
            let outcome = run(&lf, warp_size);
            let report = lf.check(&outcome.memory);
            assert!(
                report.ok(),
                "{} with warp size {warp_size}: {} failed",
                path.display(),
                report.failed
            );
        }
    }
}

#[test]
fn vecadd_tiny_gives_the_elevens_times_table() {
    let lf = load("vecadd_tiny.json");
    assert_eq!(lf.gpu.as_deref(), Some("tiny"));
    assert_eq!(lf.warp_size(), 4);
    let outcome = run(&lf, lf.warp_size());
    let c = words(&outcome.memory, 192, 24);
    let expected: Vec<u32> = (1..=24).map(|i| 11 * i).collect();
    assert_eq!(c, expected);
    // The inputs are where seed 000 puts them (tiny-gpu words 0 and 24 = bytes 0 and 96).
    assert_eq!(
        words(&outcome.memory, 0, 24),
        (1..=24).map(|i| 10 * i).collect::<Vec<u32>>()
    );
    assert_eq!(
        words(&outcome.memory, 96, 24),
        (1..=24).collect::<Vec<u32>>()
    );
    // 13 instructions per thread, one warp of 4 per block, 6 blocks.
    assert_eq!(outcome.total.warp_instructions, 13 * 6);
    assert_eq!(outcome.total.thread_instructions, 13 * 24);
}

#[test]
fn tiny_gpu_text_and_hex_agree() {
    let text = load("vecadd_tiny.json");
    let hex = load("vecadd_tiny_hex.json");
    assert_eq!(text.launches[0].dialect, Dialect::Tinygpu);
    assert_eq!(hex.launches[0].dialect, Dialect::TinygpuHex);
    let (pt, ph) = (
        &text.launches[0].launch.program,
        &hex.launches[0].launch.program,
    );
    assert_eq!(pt.instructions, ph.instructions);
    assert_eq!(pt.addressing, ph.addressing);
    let (a, b) = (run(&text, 4), run(&hex, 4));
    assert_eq!(a.total, b.total);
    assert_eq!(words(&a.memory, 0, 72), words(&b.memory, 0, 72));
}

#[test]
fn bundled_listings_reassemble_to_the_same_program() {
    let mut kernels: Vec<PathBuf> = std::fs::read_dir(kernels_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| Dialect::from_path(p).is_some())
        .collect();
    kernels.sort();
    assert!(kernels.len() >= 8);
    for path in kernels {
        let (program, _) =
            warpscope::launchfile::assemble_file(&path, None).unwrap_or_else(|e| panic!("{e}"));
        let listing = program.to_string();
        let again = asm::assemble(Dialect::Native, &listing, "unnamed")
            .unwrap_or_else(|e| panic!("{}:\n{}", path.display(), e.render("listing")));
        // The same program but for its lines: the listing's, not the kernel file's.
        let (mut again, mut program) = (again, program);
        assert_eq!(again.lines.len(), again.instructions.len());
        again.lines.clear();
        program.lines.clear();
        assert_eq!(again, program, "{}", path.display());
    }
}

#[test]
fn matmul_matches_a_reference_product() {
    let lf = load("matmul.json");
    let n = 16usize;
    let before = lf.initial_memory();
    let a: Vec<i32> = words(&before, 0x1000, n * n)
        .into_iter()
        .map(|w| w as i32)
        .collect();
    let b: Vec<i32> = words(&before, 0x2000, n * n)
        .into_iter()
        .map(|w| w as i32)
        .collect();
    let outcome = run(&lf, 32);
    let c: Vec<i32> = words(&outcome.memory, 0x3000, n * n)
        .into_iter()
        .map(|w| w as i32)
        .collect();
    for row in 0..n {
        for col in 0..n {
            let want: i32 = (0..n).map(|k| a[row * n + k] * b[k * n + col]).sum();
            assert_eq!(c[row * n + col], want, "C[{row}][{col}]");
        }
    }
}

#[test]
fn reduce_sums_random_data() {
    let lf = load("reduce.json");
    let launch = &lf.launches[0].launch;
    let blocks = launch.grid.x as usize;
    let per_block = launch.block.x as usize;
    let mut rng = StdRng::seed_from_u64(42);
    let data: Vec<u32> = (0..blocks * per_block)
        .map(|_| rng.gen_range(0..1_000_000))
        .collect();
    let mut memory = GlobalMemory::default();
    memory.write_words(0, &data).unwrap();
    functional::run(launch, &mut memory, FunctionalOptions::default()).unwrap();
    let sums = words(&memory, 0x2000, blocks);
    for (b, got) in sums.iter().enumerate() {
        let want: u32 = data[b * per_block..(b + 1) * per_block].iter().sum();
        assert_eq!(*got, want, "block {b}");
    }
}

#[test]
fn loop_and_divergent_match_reference_code() {
    fn collatz(mut x: u32) -> u32 {
        let mut steps = 0;
        while x > 1 {
            x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
            steps += 1;
        }
        steps
    }
    let lf = load("loop.json");
    let data = words(&lf.initial_memory(), 0, 64);
    let out = words(&run(&lf, 32).memory, 0x1000, 64);
    for i in 0..64 {
        assert_eq!(out[i], collatz(data[i]), "collatz({})", data[i]);
    }

    let lf = load("divergent.json");
    let n = lf.launches[0].launch.params[2] as usize;
    let data = words(&lf.initial_memory(), 0, 64);
    let out = words(&run(&lf, 32).memory, 0x1000, 64);
    for i in 0..64 {
        let want = if i >= n {
            0
        } else if i % 2 == 1 {
            3 * data[i] + 1 + 100
        } else {
            data[i] / 2 + 100
        };
        assert_eq!(out[i], want, "out[{i}]");
    }
}

#[test]
fn mufu_matches_std_math() {
    let lf = load("mufu.json");
    let out = words(&run(&lf, 32).memory, 0, 128);
    for i in 0..32 {
        let x = (i + 1) as f64;
        let want = [1.0 / x.sqrt(), 1.0 / x.sqrt(), x, x * 0.5 + 1.5];
        for (j, w) in want.iter().enumerate() {
            let got = f32::from_bits(out[4 * i + j]) as f64;
            assert!(
                (got - w).abs() <= 1e-4 * w.abs().max(1.0),
                "out[{i}][{j}] = {got}, want {w}"
            );
        }
    }
}

fn parse_err(text: &str) -> String {
    let path = kernels_dir().join("test_launch.json");
    match LaunchFile::parse(&path, text) {
        Ok(_) => panic!("expected an error for {text}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("test_launch.json:"), "{msg}");
            msg
        }
    }
}

#[test]
fn launch_file_errors_name_the_field() {
    let ok_params = r#""params": {"a": 0, "b": 0, "c": 0, "n": 1}"#;
    let cases: Vec<(String, &str)> = vec![
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "gird": 2}}"#), "gird: unknown field `gird` (did you mean `grid`?); expected one of `description`, `kernel`"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": [1, 0], "block": 1, {ok_params}}}"#), "grid: expected 1 to 3 positive integers"),
        (format!(r#"{{"launches": [{{"kernel": "vecadd.sasm", "grid": 1, "block": [1,2,3,4], {ok_params}}}]}}"#), "launches[0].block: expected 1 to 3 positive integers"),
        (r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1, "params": {"a": 0, "b": 0, "c": 0}}"#.into(), "params: missing parameter `n`"),
        (r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1, "params": {"a": 0, "b": 0, "c": 0, "n": 1, "m": 1}}"#.into(), "params: unknown parameter `m`; kernel `vecadd` has .param a, b, c, n"),
        (r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1, "params": [1, 2]}"#.into(), "params: 2 values given"),
        (r#"{"kernel": "vecadd.sasm", "grid": 1, "block": 1}"#.into(), "params: missing parameters `a`, `b`, `c`, `n`"),
        (r#"{"kernel": "nope.sasm", "grid": 1, "block": 1}"#.into(), "kernel: "),
        (r#"{"kernel": "vecadd.sasm", "grid": 1}"#.into(), "block: missing"),
        (r#"{"grid": 1, "block": 1}"#.into(), "kernel: missing"),
        (r#"{"kernel": "vecadd.sasm", "grid": 1,, }"#.into(), ":1:37: key must be a string"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "memory": [{{"address": 6, "words": [1]}}]}}"#), "memory[0].address: address 6"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "memory_limit": 4096, "memory": [{{"address": 4096, "words": [1]}}]}}"#), "memory[0]: 1 word at 0x1000 would pass the memory limit"),
        // An endless file is refused without being read to its (missing) end.
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "memory_limit": 4096, "memory": [{{"address": 0, "file": "/dev/zero"}}]}}"#), "memory[0].file: /dev/zero at 0x0 would pass the memory limit of 0x1000 bytes"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "expect": [{{"address": 0, "file": "missing.bin"}}]}}"#), "expect[0].file: cannot read"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "expect": [{{"address": 0, "words": [1], "tolerance": 0.5}}]}}"#), "expect[0].tolerance: only applies to f32 values"),
        (format!(r#"{{"kernel": "vecadd.sasm", "grid": 1, "block": 1, {ok_params}, "launches": []}}"#), "kernel: cannot be combined with `launches`"),
        ("[1, 2]".into(), "expected a JSON object"),
    ];
    for (text, want) in cases {
        let msg = parse_err(&text);
        assert!(msg.contains(want), "{text}\n  gave: {msg}\n  want: {want}");
    }
}

#[test]
fn a_kernel_that_does_not_assemble_reports_its_diagnostics() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels_rs_asm_error");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bad.sasm"),
        ".kernel bad\n    IADX R1, R2, R3\n    EXIT\n",
    )
    .unwrap();
    let err = LaunchFile::parse(
        &dir.join("bad.json"),
        r#"{"kernel": "bad.sasm", "grid": 1, "block": 1}"#,
    )
    .unwrap_err();
    assert!(matches!(err, LaunchFileError::Kernel { .. }));
    let (file, errors) = err.asm_errors().expect("assembler errors");
    assert!(file.ends_with("bad.sasm"));
    let rendered = errors.render(file);
    assert!(rendered.contains("bad.sasm:2:5: error:"), "{rendered}");
    assert!(err.to_string().contains("bad.json: kernel: "), "{err}");
}

#[test]
fn launches_run_in_order_and_share_memory() {
    let dir = kernels_dir();
    // Two launches of vecadd: the second adds the first's result to b again.
    let text = r#"{
      "launches": [
        {"kernel": "vecadd.sasm", "grid": 1, "block": 32, "params": [0, 128, 256, 32]},
        {"kernel": "vecadd.sasm", "grid": 1, "block": 32, "params": [256, 128, 384, 32], "stream": 1}
      ],
      "memory": [
        {"address": 0, "f32": [1.0, 2.0]},
        {"address": 128, "f32": [10.0, 20.0]}
      ],
      "expect": [{"address": 384, "f32": [21.0, 42.0]}]
    }"#;
    let lf =
        LaunchFile::parse(&dir.join("two_launches.json"), text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lf.launches.len(), 2);
    assert_eq!(lf.launches[1].launch.stream, 1);
    let outcome = run(&lf, 32);
    assert_eq!(outcome.launches.len(), 2);
    let report = lf.check(&outcome.memory);
    assert!(report.ok(), "{:?}", report.mismatches);
    assert_eq!(report.passed, 2);
}
