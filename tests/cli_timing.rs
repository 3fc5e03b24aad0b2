//! Every bundled launch file under the timing simulator, through the library (`LaunchFile` +
//! `simulate`) rather than the binary: its `expect` passes on every preset that can hold its
//! blocks, under every policy and scoreboard, and its final memory equals the functional
//! runner's.

use std::path::{Path, PathBuf};
use warpscope::launchfile::LaunchFile;
use warpscope::sim::config::{GpuConfig, Policy, ScoreboardKind};
use warpscope::sim::functional::FunctionalOptions;
use warpscope::sim::gpu::{prepare, SimError, SimOptions};
use warpscope::sim::observer::NullObserver;

fn launch_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "bundled launch files: {files:?}");
    files
}

fn load(path: &Path) -> LaunchFile {
    LaunchFile::load(path).unwrap_or_else(|e| panic!("{e}"))
}

const OPTIONS: SimOptions = SimOptions {
    max_cycles: 5_000_000,
    skip_idle: true,
};

/// Whether every launch of `lf` fits on `config`'s SMs. Only `tiny` (4-thread blocks) may
/// refuse a bundled kernel; any other refusal is a failure.
fn fits(lf: &LaunchFile, config: &GpuConfig) -> bool {
    match prepare(config, &lf.kernel_launches()) {
        Ok(_) => true,
        Err(e) => {
            assert_eq!(
                config.name,
                "tiny",
                "{}: does not fit on {}: {e}",
                lf.path.display(),
                config.name
            );
            false
        }
    }
}

#[test]
fn bundled_kernels_pass_on_every_preset_policy_and_scoreboard() {
    let files: Vec<LaunchFile> = launch_files().iter().map(|p| load(p)).collect();
    let mut combos = Vec::new();
    for preset in GpuConfig::PRESETS {
        for policy in Policy::ALL {
            for scoreboard in ScoreboardKind::ALL {
                let mut c = GpuConfig::preset(preset).unwrap();
                c.scheduler.policy = policy;
                c.scheduler.scoreboard = scoreboard;
                c.validate().unwrap();
                combos.push(c);
            }
        }
    }
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = combos
            .iter()
            .map(|config| {
                let files = &files;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    let mut ran = 0;
                    for lf in files {
                        if !fits(lf, config) {
                            continue;
                        }
                        ran += 1;
                        let what = format!(
                            "{} on {} / {} / {}",
                            lf.path.display(),
                            config.name,
                            config.scheduler.policy.name(),
                            config.scheduler.scoreboard.name()
                        );
                        match lf.run_timing(config, OPTIONS, &mut NullObserver) {
                            Ok(o) => {
                                let check = lf.check(&o.memory);
                                if !check.ok() {
                                    failures.push(format!(
                                        "{what}: {} of {} checks failed, first: {}",
                                        check.failed,
                                        check.passed + check.failed,
                                        check.mismatches[0]
                                    ));
                                }
                                if o.report.hazards != 0 {
                                    failures.push(format!("{what}: {} hazards", o.report.hazards));
                                }
                            }
                            Err(SimError::Fault { fault, .. }) => {
                                failures.push(format!("{what}: fault: {fault}"))
                            }
                            Err(SimError::Launch(e)) => {
                                failures.push(format!("{what}: launch: {e}"))
                            }
                        }
                    }
                    // Even tiny holds the tiny-gpu kernels.
                    assert!(ran >= 2, "{}: only {ran} kernels ran", config.name);
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The byte range worth comparing: up to the end of the furthest `memory` or `expect` region,
/// plus 64 KiB, within the memory limit.
fn compared_words(lf: &LaunchFile) -> usize {
    let end = lf
        .memory
        .iter()
        .chain(lf.expect.iter().map(|e| &e.region))
        .map(|r| r.address + 4 * r.values.len() as u64)
        .max()
        .unwrap_or(0);
    ((end + (64 << 10)).min(lf.memory_limit) / 4) as usize
}

#[test]
fn timing_and_functional_final_memory_agree() {
    for path in launch_files() {
        let lf = load(&path);
        let config = lf.gpu_config().unwrap();
        let timing = lf
            .run_timing(&config, OPTIONS, &mut NullObserver)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let functional = lf
            .run_functional(FunctionalOptions {
                warp_size: config.warp_size,
                ..FunctionalOptions::default()
            })
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let n = compared_words(&lf);
        let t = timing.memory.read_words(0, n).unwrap();
        let f = functional.memory.read_words(0, n).unwrap();
        if let Some(i) = (0..n).find(|&i| t[i] != f[i]) {
            panic!(
                "{}: memory differs at byte 0x{:x}: timing {:#x}, functional {:#x}",
                path.display(),
                4 * i,
                t[i],
                f[i]
            );
        }
        assert_eq!(
            timing.report.warp_instructions,
            functional.total.warp_instructions,
            "{}",
            path.display()
        );
        assert_eq!(
            timing.report.thread_instructions,
            functional.total.thread_instructions,
            "{}",
            path.display()
        );
        assert!(lf.check(&timing.memory).ok(), "{}", path.display());
    }
}

#[test]
fn launch_file_gpu_field_resolves_presets_and_files() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_timing_gpu");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/vecadd_tiny.tgpu"),
        dir.join("k.tgpu"),
    )
    .unwrap();
    let mut tiny = GpuConfig::preset("tiny").unwrap();
    tiny.name = "my_tiny".into();
    tiny.num_sms = 3;
    std::fs::write(dir.join("gpu.json"), tiny.to_json()).unwrap();
    let write = |name: &str, gpu: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                r#"{{"kernel": "k.tgpu", "grid": 6, "block": 4, {gpu}
                   "expect": [{{"address": 192, "fill": "linear", "count": 24, "start": 0, "step": 0}}]}}"#
            ),
        )
        .unwrap();
        load(&path)
    };
    assert_eq!(write("none.json", "").gpu_config().unwrap().name, "small");
    assert_eq!(
        write("preset.json", r#""gpu": "tiny","#)
            .gpu_config()
            .unwrap(),
        GpuConfig::preset("tiny").unwrap()
    );
    assert_eq!(
        write("file.json", r#""gpu": "gpu.json","#)
            .gpu_config()
            .unwrap(),
        tiny
    );
    let e = write("bad.json", r#""gpu": "fermi","#)
        .gpu_config()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.json: gpu: unknown GPU `fermi`")
            && e.contains("tiny, small, pascal, volta"),
        "{e}"
    );
}
