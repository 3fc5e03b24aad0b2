//! Replay of Accel-Sim SASS traces: the shared real Pascal trace, small tracer-v4 and v5
//! fixtures, malformed inputs, and the `warpscope replay` command.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use warpscope::analyze::{analyze_file, Taxonomy};
use warpscope::replay::{self, KernelFilter, ReplayError};
use warpscope::sim::config::GpuConfig;
use warpscope::sim::gpu::SimOptions;
use warpscope::sim::observer::WarpRef;
use warpscope::trace::{Event, TraceFormat, TraceReader};

const BIN: &str = env!("CARGO_BIN_EXE_warpscope");

/// The real Pascal trace, from the in-repo copy of `../shared/data/accelsim/vectoradd-100-32`.
fn shared_vectoradd() -> PathBuf {
    fixture("vectoradd-100-32")
}

#[test]
fn the_in_repo_copy_of_the_shared_trace_is_unaltered() {
    let shared =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/accelsim/vectoradd-100-32");
    let copy = shared_vectoradd();
    for f in ["kernelslist.g", "kernel-1.traceg"] {
        let ours = std::fs::read(copy.join(f)).unwrap();
        assert!(ours.len() > 100, "{f}");
        // Outside this workspace (a bare clone) only the copy exists.
        if let Ok(theirs) = std::fs::read(shared.join(f)) {
            assert_eq!(ours, theirs, "{f} differs from the shared original");
        }
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/accelsim")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("warpscope-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn volta() -> GpuConfig {
    GpuConfig::preset("volta").unwrap()
}

/// What the trace file itself says, counted independently of the replay parser: per
/// (block line, warp) the masks of its instruction lines, in order.
fn masks_in_file(path: &Path, lineinfo: bool) -> BTreeMap<(String, u32), Vec<u32>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: BTreeMap<(String, u32), Vec<u32>> = BTreeMap::new();
    let (mut block, mut warp) = (String::new(), 0u32);
    for line in text.lines() {
        let line = line.trim();
        if let Some(b) = line.strip_prefix("thread block = ") {
            block = b.to_string();
        } else if let Some(w) = line.strip_prefix("warp = ") {
            warp = w.parse().unwrap();
        } else if line.starts_with(|c: char| c.is_ascii_hexdigit()) && !line.starts_with("insts") {
            let mask = line.split_whitespace().nth(1 + lineinfo as usize).unwrap();
            out.entry((block.clone(), warp))
                .or_default()
                .push(u32::from_str_radix(mask, 16).unwrap());
        }
    }
    out
}

struct Replayed {
    events: Vec<Event>,
    report: warpscope::sim::gpu::SimReport,
    path: PathBuf,
}

fn replay_to(input: &Path, config: &GpuConfig, name: &str, verbosity: u8) -> Replayed {
    let trace_input = replay::open(input).unwrap();
    let path = tmp(name);
    let outcome = replay::replay(
        config,
        &trace_input,
        SimOptions::default(),
        &path,
        TraceFormat::from_path(&path),
        verbosity,
    )
    .unwrap();
    assert!(outcome.record.fault.is_none(), "{:?}", outcome.record.fault);
    let mut reader = TraceReader::open(&path).unwrap();
    let events: Vec<Event> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(reader.complete(), Some(true));
    Replayed {
        events,
        report: outcome.record.report,
        path,
    }
}

/// Per warp (warp in block), the active masks of its issued instructions in issue order.
fn issued_masks(events: &[Event]) -> BTreeMap<(u32, u32, u32), Vec<u32>> {
    let mut who: HashMap<WarpRef, (u32, u32, u32)> = HashMap::new();
    let mut out: BTreeMap<(u32, u32, u32), Vec<u32>> = BTreeMap::new();
    for e in events {
        match e {
            Event::WarpLaunch { warp, info, .. } => {
                who.insert(*warp, (info.launch, info.block, info.warp_in_block));
            }
            Event::Issue { warp, active, .. } => {
                out.entry(who[warp]).or_default().push(*active);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn shared_vectoradd_replays_with_the_shape_of_the_real_trace() {
    let file = shared_vectoradd().join("kernel-1.traceg");
    let in_file = masks_in_file(&file, false);
    // The file itself: one block of 32 warps; 4 do the work, warp 3 with 4 lanes after the
    // bounds check (its EXIT takes the other 28).
    assert_eq!(in_file.len(), 32);
    let working: Vec<u32> = in_file
        .iter()
        .filter(|(_, m)| m.len() > 9)
        .map(|((_, w), _)| *w)
        .collect();
    assert_eq!(working, [0, 1, 2, 3]);
    assert_eq!(in_file[&("0,0,0".into(), 3)][8], 0xffff_fff0);
    assert_eq!(in_file[&("0,0,0".into(), 3)][9], 0x0000_000f);
    let file_threads: u64 = in_file
        .values()
        .flatten()
        .map(|m| m.count_ones() as u64)
        .sum();

    let r = replay_to(&shared_vectoradd(), &volta(), "vectoradd.wstrace", 1);
    let issued = issued_masks(&r.events);
    assert_eq!(issued.len(), 32, "32 warps launched and issued");
    for ((_, _, w), masks) in &issued {
        assert_eq!(
            masks,
            &in_file[&("0,0,0".into(), *w)],
            "warp {w} issues exactly the file's instructions and masks"
        );
    }
    let working: Vec<u32> = issued
        .iter()
        .filter(|(_, m)| m.len() > 9)
        .map(|((_, _, w), _)| *w)
        .collect();
    assert_eq!(working, [0, 1, 2, 3]);
    let warp3 = &issued[&(0, 0, 3)];
    assert!(warp3[9..].iter().all(|m| m.count_ones() == 4));
    assert_eq!(r.report.thread_instructions, file_threads);
    // Accel-Sim's own simulator counts the same thread instructions for this trace.
    assert_eq!(r.report.thread_instructions, 10516);
    assert_eq!(r.report.warp_instructions, 32 * 9 + 4 * 14);
}

#[test]
fn shared_vectoradd_analysis_charges_long_scoreboard_to_the_fadd() {
    let r = replay_to(
        &shared_vectoradd(),
        &volta(),
        "vectoradd-analysis.wstrace",
        1,
    );
    let analysis = analyze_file(&r.path, Taxonomy::Nsight).unwrap();
    let launch = &analysis.launches[0];
    assert_eq!(launch.name, "_Z6vecAddIfEvPT_S1_S1_i");
    assert_eq!(
        launch.signature,
        "vecAdd<float>(float*, float*, float*, int)"
    );
    assert_eq!(launch.thread_instructions, 10516);
    // The text report heads the launch with the name a CUDA programmer wrote, and gives the
    // mangled one that other tools list.
    let text = warpscope::analyze::render_text(&analysis);
    assert!(
        text.contains("\nvecAdd<float>(float*, float*, float*, int) (launch 0): cycles 0.."),
        "{text}"
    );
    assert!(
        text.contains("\n  mangled name: _Z6vecAddIfEvPT_S1_S1_i\n"),
        "{text}"
    );
    // `S2R R0` is not a wrong disassembly: the hotspots say what the trace leaves out.
    assert!(
        text.contains("(replayed SASS shows register operands only"),
        "{text}"
    );
    // `analyze --kernel` takes either spelling, whole or in part.
    for name in [
        "vecAdd<float>",
        "_Z6vecAdd",
        "vecAdd<float>(float*, float*, float*, int)",
    ] {
        let mut kept = analysis.clone();
        kept.retain_kernel(name).unwrap();
        assert_eq!(kept.launches.len(), 1, "{name}");
    }
    let e = analysis
        .clone()
        .retain_kernel("vecAdd<double>")
        .unwrap_err();
    assert!(
        e.contains("(its kernels: vecAdd<float>(float*, float*, float*, int))"),
        "{e}"
    );
    let line = |needle: &str| {
        launch
            .source
            .iter()
            .find(|s| s.text.contains(needle))
            .unwrap_or_else(|| panic!("no listing line with {needle}"))
    };
    // The listing shows the real PCs and SASS.
    assert_eq!(line("FADD").text, "/*00d0*/ FADD R0, R2, R4");
    assert_eq!(line("/*0098*/").text, "/*0098*/ LDG.E.CG R4, [R4]");
    let fadd = line("FADD");
    assert_eq!(fadd.executions, 4);
    assert_eq!(fadd.top_state.as_deref(), Some("long_scoreboard"));
    assert!(fadd.warp_cycles["long_scoreboard"] > 100);
    // The wait is attributed to the loads that produce the FADD's sources.
    let loads: u64 = launch
        .source
        .iter()
        .filter(|s| s.text.contains("LDG"))
        .map(|s| {
            s.attributed_warp_cycles
                .get("long_scoreboard")
                .copied()
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(loads, fadd.warp_cycles["long_scoreboard"]);
}

#[test]
fn replay_is_deterministic() {
    let a = replay_to(&shared_vectoradd(), &volta(), "det-a.wstrace", 2);
    let b = replay_to(&shared_vectoradd(), &volta(), "det-b.wstrace", 2);
    assert_eq!(
        std::fs::read(&a.path).unwrap(),
        std::fs::read(&b.path).unwrap()
    );
    // Memory events (verbosity 2) come from the trace's addresses: the three copies' lines.
    let sectors: u64 = a
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Memory { mem, .. } => Some(mem.sectors as u64),
            _ => None,
        })
        .sum();
    // 3 accesses × 3 full warps × 4 sectors + 3 × 1 sector for warp 3's 16 bytes.
    assert_eq!(sectors, 3 * 3 * 4 + 3);
}

#[test]
fn tracer_v5_fixture_replays_barriers_shared_memory_and_all_address_modes() {
    let dir = fixture("v5-ampere-reduce");
    let input = replay::open(&dir).unwrap();
    let k = &input.kernels[0];
    assert_eq!((k.header.tracer_version, k.header.binary_version), (5, 80));
    assert!(k.header.lineinfo);
    assert!(input.unknown_opcodes().is_empty());
    let r = replay_to(&dir, &volta(), "v5.wstrace", 2);
    let in_file = masks_in_file(&dir.join("kernel-1.traceg"), true);
    let threads: u64 = in_file
        .values()
        .flatten()
        .map(|m| m.count_ones() as u64)
        .sum();
    assert_eq!(r.report.thread_instructions, threads);
    assert_eq!(issued_masks(&r.events).len(), 4, "2 blocks × 2 warps");
    let releases = r
        .events
        .iter()
        .filter(|e| matches!(e, Event::BarrierRelease { .. }))
        .count();
    assert_eq!(releases, 2, "one BAR.SYNC release per block");
    let shared_accesses = r
        .events
        .iter()
        .filter(|e| {
            matches!(e, Event::Memory { mem, .. }
                if mem.space == warpscope::sim::observer::MemSpace::Shared)
        })
        .count();
    assert_eq!(shared_accesses, 8, "STS and LDS of 4 warps");
    let analysis = analyze_file(&r.path, Taxonomy::Nsight).unwrap();
    let listing: Vec<&str> = analysis.launches[0]
        .source
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    assert!(
        listing.contains(&"/*0030*/ IMAD R3, R0, UR4"),
        "{listing:?}"
    );
    assert!(
        listing.contains(&"/*0040*/ ISETP.GE.AND P0, R3, UR4"),
        "{listing:?}"
    );
    assert!(listing.contains(&"/*0070*/ STS [R0], R4"), "{listing:?}");
}

#[test]
fn tracer_v4_fixture_replays_two_streams_a_2d_grid_and_lists_unknown_opcodes() {
    let dir = fixture("v4-volta-2d");
    let input = replay::open(&dir).unwrap();
    assert_eq!(input.kernels.len(), 2);
    assert_eq!(input.memcpys, 1);
    assert_eq!(input.unknown_opcodes(), [("FROB.X".to_string(), 8)]);
    let launches = input.launches();
    assert_eq!((launches[0].stream, launches[1].stream), (0, 1));
    let r = replay_to(&dir, &volta(), "v4.jsonl", 1);
    assert_eq!(r.report.launches.len(), 2);
    // The second kernel is on another stream: it starts before the first one ends.
    assert!(r.report.launches[1].start_cycle < r.report.launches[0].end_cycle);
    let issued = issued_masks(&r.events);
    // Blocks of 1 or 2 loop trips by linear index (the file lists them y-major).
    let per_block: Vec<usize> = (0..4).map(|b| issued[&(0, b, 0)].len()).collect();
    assert_eq!(per_block, [10, 15, 10, 15]);
    let in_file = masks_in_file(&dir.join("kernel-1.traceg"), false);
    assert_eq!(in_file[&("1,0,0".into(), 0)], issued[&(0, 1, 0)]);
    assert_eq!(in_file[&("0,1,0".into(), 0)], issued[&(0, 2, 0)]);
    // `--kernel loop` is the first kernel's function name as captions show it: that one
    // kernel, not also `_Z4loopPdi_again`, whose name merely contains it.
    let analysis = warpscope::analyze::analyze(
        TraceReader::open(&r.path).unwrap(),
        warpscope::analyze::Taxonomy::Nsight,
    )
    .unwrap();
    let mut kept = analysis.clone();
    kept.retain_kernel("loop").unwrap();
    let names: Vec<&str> = kept.launches.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["_Z4loopPdi"]);
    let mut kept = analysis;
    kept.retain_kernel("oop").unwrap();
    assert_eq!(kept.launches.len(), 2);
}

/// Per trace PC, the CUDA line its lines give (`[line_num] PC ...` with lineinfo), read from
/// the file independently of the replay parser; every line of a PC must agree.
fn cuda_lines_in_file(path: &Path) -> BTreeMap<u64, u32> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        let mut tokens = line.split_whitespace();
        let (Some(first), Some(second)) = (tokens.next(), tokens.next()) else {
            continue;
        };
        let (Ok(cuda), Ok(pc)) = (first.parse::<u32>(), u64::from_str_radix(second, 16)) else {
            continue;
        };
        assert_eq!(*out.entry(pc).or_insert(cuda), cuda, "PC {pc:x}");
    }
    out
}

#[test]
fn lineinfo_maps_pcs_to_cuda_lines_and_the_analysis_sums_them_by_line() {
    let dir = fixture("v5-ampere-reduce");
    let r = replay_to(&dir, &volta(), "lineinfo.wstrace", 1);
    let in_file = cuda_lines_in_file(&dir.join("kernel-1.traceg"));
    let header = TraceReader::open(&r.path).unwrap().header().clone();
    // The listing is in PC order, as the file's PCs sorted.
    let want: Vec<u32> = in_file.values().copied().collect();
    assert_eq!(header.launches[0].source_lines, want);
    assert!(want.len() > 10);

    let analysis = analyze_file(&r.path, Taxonomy::Nsight).unwrap();
    let launch = &analysis.launches[0];
    let by_line = &launch.cuda_source;
    let distinct: std::collections::BTreeSet<u32> = want.iter().copied().collect();
    assert_eq!(
        by_line.iter().map(|c| c.line).collect::<Vec<_>>(),
        Vec::from_iter(distinct)
    );
    for c in by_line {
        let pcs: Vec<_> = launch
            .source
            .iter()
            .filter(|s| s.cuda_line == Some(c.line))
            .collect();
        assert_eq!(
            c.pcs,
            pcs.iter().map(|s| s.pc).collect::<Vec<_>>(),
            "line {}",
            c.line
        );
        assert_eq!(c.executions, pcs.iter().map(|s| s.executions).sum::<u64>());
        assert_eq!(
            c.total_warp_cycles,
            pcs.iter().map(|s| s.total_warp_cycles).sum::<u64>()
        );
        assert_eq!(c.total_warp_cycles, c.warp_cycles.values().sum::<u64>());
        assert_eq!(
            c.total_attributed_warp_cycles,
            pcs.iter()
                .map(|s| s.total_attributed_warp_cycles)
                .sum::<u64>()
        );
    }
    let all: u64 = launch.source.iter().map(|s| s.total_warp_cycles).sum();
    assert_eq!(
        by_line.iter().map(|c| c.total_warp_cycles).sum::<u64>(),
        all
    );
    // The STS waiting for the LDG's value is line 7, where the kernel spends its time.
    let sts = launch
        .source
        .iter()
        .find(|s| s.text.contains("STS"))
        .unwrap();
    assert_eq!(sts.cuda_line, Some(7));
    let top = by_line.iter().max_by_key(|c| c.total_warp_cycles).unwrap();
    assert_eq!(
        (top.line, top.top_state.as_deref()),
        (7, Some("long_scoreboard"))
    );
    let text = warpscope::analyze::render_text(&analysis);
    assert!(
        text.contains("by CUDA source line (the trace's lineinfo):"),
        "{text}"
    );
    let report = tmp("lineinfo-report");
    let o = Command::new(BIN)
        .arg("report")
        .arg(&r.path)
        .arg("-o")
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<h3>CUDA Source Lines</h3>"));
    let line_7 = "<tr><td>7</td><td>7</td><td class=\"n\">4</td><td class=\"n\">1604</td>";
    assert!(html.contains(line_7));
    // The source chart's tooltip names each instruction's line.
    assert!(html.contains("PC 7: /*0070*/ STS [R0], R4 (CUDA line 7); executed 4 times"));

    // Without lineinfo nothing changes: no source lines in the header or the analysis.
    let plain = replay_to(&fixture("v4-volta-2d"), &volta(), "no-lineinfo.jsonl", 1);
    let header_line = std::fs::read_to_string(&plain.path).unwrap();
    let header_line = header_line.lines().next().unwrap();
    assert!(!header_line.contains("source_lines"), "{header_line}");
    let analysis = analyze_file(&plain.path, Taxonomy::Nsight).unwrap();
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(!json.contains("cuda_source") && !json.contains("cuda_line"));
    assert!(!warpscope::analyze::render_text(&analysis).contains("CUDA source line"));
}

/// A tiny v4 trace with `body` as the only warp's instruction lines (and `insts` their count).
fn tiny_trace(name: &str, header_extra: &str, block: &str) -> PathBuf {
    let path = tmp(name);
    let text = format!(
        "-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-nregs = 8\n\
         -binary version = 70\n-accelsim tracer version = 4\n{header_extra}\n\
         #traces format = PC mask ...\n\n{block}"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn error_of(name: &str, header_extra: &str, block: &str) -> String {
    let path = tiny_trace(name, header_extra, block);
    match replay::open(&path) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{name}: accepted"),
    }
}

#[test]
fn control_bytes_of_a_damaged_trace_are_shown_escaped() {
    let block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n\
                 0000 ff\0\0\x1b 0 EXIT 0 0\n#END_TB\n";
    let e = error_of("nul.traceg", "", block);
    assert!(!e.contains(char::is_control), "{e:?}");
    assert!(e.contains("ff\\u{0}\\u{0}\\u{1b}"), "{e}");
}

#[test]
fn malformed_traces_are_rejected_with_file_and_line() {
    let ok_block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n\
                    0000 ffffffff 1 R1 MOV 0 0\n0010 ffffffff 0 EXIT 0 0\n#END_TB\n";
    assert!(replay::open(&tiny_trace("ok.traceg", "", ok_block)).is_ok());
    let twice = format!("{ok_block}{ok_block}");
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        (
            "twice.traceg",
            "-grid dim = (2,1,1)",
            &twice,
            "twice.traceg:17: thread block (0,0,0) appears twice in the trace (first at line 10)",
        ),
        (
            "huge-grid.traceg",
            "-grid dim = (2147483647,65535,65535)",
            ok_block,
            "huge-grid.traceg:7: the grid (2147483647,65535,65535) has 9223090559730712575 thread blocks but the trace holds 1",
        ),
        (
            "sm.traceg",
            "-binary version = 35",
            ok_block,
            "sm.traceg:7: binary version 35 is not supported",
        ),
        (
            "warp.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 1\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n",
            "warp.traceg:12: warp 1 does not exist: a block of 32 threads has 1 warp",
        ),
        (
            "nregs.traceg",
            "-nregs = 100000",
            ok_block,
            "nregs.traceg:7: 100000 registers per thread: a thread has at most 255",
        ),
        (
            "shmem.traceg",
            "-shmem = 99999999999",
            ok_block,
            "shmem.traceg:7: `99999999999` is too large for the shared memory size",
        ),
        (
            "bad-number.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n00zz ffffffff 0 EXIT 0 0\n#END_TB\n",
            "bad-number.traceg:14: bad number `00zz` for the PC",
        ),
        (
            "fields.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 1 R1 MOV 0\n#END_TB\n",
            "fields.traceg:14: wrong field count",
        ),
        (
            "mask.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 1ffffffff 0 EXIT 0 0\n#END_TB\n",
            "mask.traceg:14: mask `1ffffffff` is wider than 32 lanes",
        ),
        (
            "end.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n",
            "end.traceg:10: missing #END_TB",
        ),
        (
            "mode.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 1 R2 LDG.E 1 R2 4 3 0x100 4\n#END_TB\n",
            "mode.traceg:14: unknown address mode 3",
        ),
        (
            "count.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 3\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n",
            "count.traceg:13: warp 0: `insts = 3` but 1 instruction line(s) follow",
        ),
        (
            "version.traceg",
            "-accelsim tracer version = 6",
            ok_block,
            "version.traceg:7: tracer version 6 is not supported",
        ),
        (
            "blocks.traceg",
            "-grid dim = (2,1,1)",
            ok_block,
            "blocks.traceg:7: the grid (2,1,1) has 2 thread blocks but the trace holds 1",
        ),
        (
            "lanes.traceg",
            "-block dim = (20,1,1)",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n",
            "lanes.traceg:14: mask ffffffff names lanes beyond warp 0's 20 thread(s)",
        ),
        (
            "pc.traceg",
            "",
            "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n0000 ffffffff 0 EXIT 0 0\n0000 ffffffff 0 NOP 0 0\n#END_TB\n",
            "pc.traceg:15: PC 0000 is `NOP` here but was `EXIT` at line 14",
        ),
    ];
    for (name, header, block, want) in cases {
        let e = error_of(name, header, block);
        assert!(e.contains(want), "{name}: got `{e}`, want `{want}`");
    }
}

/// `kernel-1.traceg` of the shared vector add with the sections of `drop` (warp numbers)
/// taken out of its one block, in a directory of its own; and the line of `#END_TB` there.
fn vectoradd_without_warps(name: &str, drop: &[u32]) -> (PathBuf, u64) {
    let text = std::fs::read_to_string(shared_vectoradd().join("kernel-1.traceg")).unwrap();
    let mut kept = Vec::new();
    let mut dropping = false;
    for line in text.lines() {
        if let Some(w) = line.trim().strip_prefix("warp = ") {
            dropping = drop.contains(&w.trim().parse().unwrap());
        } else if line.trim().starts_with("#END_TB") || line.trim().is_empty() {
            dropping = false;
        }
        if !dropping {
            kept.push(line);
        }
    }
    let dir = tmp(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kernel-1.traceg"), kept.join("\n") + "\n").unwrap();
    std::fs::copy(
        shared_vectoradd().join("kernelslist.g"),
        dir.join("kernelslist.g"),
    )
    .unwrap();
    let end = kept.iter().position(|l| l.starts_with("#END_TB")).unwrap() as u64 + 1;
    (dir, end)
}

#[test]
fn a_block_with_a_warp_missing_is_rejected_naming_the_warps() {
    // The audit's case: warp 31 of the 1024-thread block gone. It replayed 335 warp
    // instructions of a 31-warp block, with exit code 0.
    let (dir, end) = vectoradd_without_warps("misswarp", &[31]);
    let want = format!(
        "kernel-1.traceg:{end}: thread block (0,0,0) has 31 of its 32 warps: warp 31 is missing"
    );
    match replay::open(&dir) {
        Err(e) => assert!(e.to_string().contains(&want), "got `{e}`, want `{want}`"),
        Ok(_) => panic!("a block without warp 31 was accepted"),
    }
    let out = tmp("misswarp.wstrace");
    let run = Command::new(BIN)
        .args(["replay", dir.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&want), "{stderr}");
    assert!(!out.exists());

    // Several, with a run of them as a range.
    let (dir, end) = vectoradd_without_warps("misswarps", &[0, 7, 29, 30, 31]);
    let want = format!(
        "kernel-1.traceg:{end}: thread block (0,0,0) has 27 of its 32 warps: warps 0, 7 and 29–31 are missing"
    );
    match replay::open(&dir) {
        Err(e) => assert!(e.to_string().contains(&want), "got `{e}`, want `{want}`"),
        Ok(_) => panic!("a block without five warps was accepted"),
    }

    // A warp that ran nothing is written by the tracer as `insts = 0`, and is no error.
    let block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n\
                 warp = 1\ninsts = 0\n#END_TB\n";
    let path = tiny_trace("empty-warp.traceg", "-block dim = (64,1,1)", block);
    assert!(replay::open(&path).is_ok());
    let block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n\
                 warp = 2\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n";
    assert!(error_of("two-missing.traceg", "-block dim = (128,1,1)", block).contains(
        "two-missing.traceg:18: thread block (0,0,0) has 2 of its 4 warps: warps 1 and 3 are missing"
    ));
}

#[test]
fn unsupported_gpus_and_missing_files_are_errors() {
    let input = replay::open(&shared_vectoradd()).unwrap();
    let tiny = GpuConfig::preset("tiny").unwrap();
    let e = replay::replay(
        &tiny,
        &input,
        SimOptions::default(),
        &tmp("tiny.wstrace"),
        TraceFormat::Binary,
        1,
    )
    .unwrap_err();
    assert!(matches!(e, ReplayError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("32-lane warps"), "{e}");
    assert!(!tmp("tiny.wstrace").exists());

    let xz = tmp("kernel-1.traceg.xz");
    std::fs::write(&xz, [0xfd, b'7', b'z', b'X', b'Z', 0]).unwrap();
    let e = replay::open(&xz).unwrap_err().to_string();
    assert!(e.contains("compressed traces are not read directly"), "{e}");

    let list = tmp("kernelslist.g");
    std::fs::write(&list, "MemcpyHtoD,0x10,4\nkernel-9.traceg\n").unwrap();
    let e = replay::open(&list).unwrap_err().to_string();
    assert!(e.contains("kernelslist.g:2: kernel trace"), "{e}");
    assert!(e.contains("kernel-9.traceg does not exist"), "{e}");
}

/// The ids of the kernels `filter` keeps of `input`, with the first one's name.
fn selected(input: &Path, filter: &KernelFilter) -> (Vec<u64>, String) {
    let opened = replay::open_filtered(input, filter).unwrap();
    assert_eq!(opened.listed_kernels, 2);
    let ids = opened.kernels.iter().map(|k| k.header.kernel_id).collect();
    (ids, opened.kernels[0].header.name.clone())
}

#[test]
fn kernel_selection_keeps_the_kernels_asked_for_in_list_order() {
    let dir = fixture("v4-volta-2d");
    let by = |ids: &str, name: Option<&str>, skip: u64, count: Option<u64>| KernelFilter {
        ids: match ids {
            "" => Vec::new(),
            ids => KernelFilter::parse_ids(ids).unwrap(),
        },
        name: name.map(str::to_string),
        skip,
        count,
    };
    let ids = |filter: KernelFilter| selected(&dir, &filter).0;
    assert_eq!(
        selected(&dir, &by("", None, 0, None)),
        (vec![1, 2], "_Z4loopPdi".into())
    );
    assert_eq!(
        selected(&dir, &by("2", None, 0, None)),
        (vec![2], "_Z4loopPdi_again".into())
    );
    assert_eq!(ids(by("1-2", None, 0, None)), [1, 2]);
    assert_eq!(ids(by("2,7-9", None, 0, None)), [2]);
    assert_eq!(ids(by("", Some("again"), 0, None)), [2]);
    assert_eq!(ids(by("", Some("loop"), 1, None)), [2]);
    assert_eq!(ids(by("", Some("loop"), 0, Some(1))), [1]);
    assert_eq!(ids(by("1-2", Some("Pdi"), 1, Some(5))), [2]);
    // A part of the demangled name selects too: `_Z4loopPdi` is `loop(double*, int)`.
    assert_eq!(ids(by("", Some("loop(double*"), 0, None)), [1]);
    let single =
        replay::open_filtered(&dir.join("kernel-1.traceg"), &by("1", None, 0, None)).unwrap();
    assert_eq!((single.kernels.len(), single.listed_kernels), (1, 1));

    // Nothing left: the error lists what there is.
    let e = replay::open_filtered(&dir, &by("", Some("loop"), 2, None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the selection (name containing `loop`; skip 2) leaves no kernel"),
        "{e}"
    );
    assert!(e.contains("2 of 2 match, all skipped"), "{e}");
    // By their demangled names; a name that does not demangle as it is.
    assert!(e.contains("1 `loop`, 2 `_Z4loopPdi_again`"), "{e}");
    let e = replay::open_filtered(&dir, &by("5-6", None, 0, None))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("(ids 5-6) leaves no kernel: 0 of 2 match;"),
        "{e}"
    );
}

#[test]
fn a_selected_kernel_replays_as_its_own_file_does() {
    let dir = fixture("v4-volta-2d");
    let filter = KernelFilter {
        ids: vec![2..=2],
        ..KernelFilter::default()
    };
    let input = replay::open_filtered(&dir, &filter).unwrap();
    let path = tmp("selected-2.jsonl");
    let outcome = replay::replay(
        &volta(),
        &input,
        SimOptions::default(),
        &path,
        TraceFormat::from_path(&path),
        1,
    )
    .unwrap();
    let alone = replay_to(&dir.join("kernel-2.traceg"), &volta(), "alone-2.jsonl", 1);
    assert_eq!(outcome.record.report.warp_instructions, 50);
    assert_eq!(outcome.record.report.cycles, alone.report.cycles);
    let events: Vec<Event> = TraceReader::open(&path)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(events, alone.events);
}

#[test]
fn kernels_left_out_are_not_scanned() {
    // Kernel 1's body is damaged past its header: only a scan finds that.
    let dir = tmp("select-damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let good = fixture("v4-volta-2d");
    let one = std::fs::read_to_string(good.join("kernel-1.traceg")).unwrap();
    let cut = one.rfind("#END_TB").unwrap();
    std::fs::write(dir.join("kernel-1.traceg"), &one[..cut]).unwrap();
    std::fs::copy(good.join("kernel-2.traceg"), dir.join("kernel-2.traceg")).unwrap();
    std::fs::write(
        dir.join("kernelslist.g"),
        "kernel-1.traceg\nkernel-2.traceg\n",
    )
    .unwrap();
    let e = replay::open(&dir).unwrap_err().to_string();
    assert!(
        e.contains("kernel-1.traceg:") && e.contains("missing #END_TB"),
        "{e}"
    );
    let only_two = KernelFilter {
        name: Some("again".into()),
        ..KernelFilter::default()
    };
    let input = replay::open_filtered(&dir, &only_two).unwrap();
    assert_eq!(input.kernels.len(), 1);
    assert_eq!(input.kernels[0].header.kernel_id, 2);
}

#[test]
fn kernel_id_lists_parse_or_say_what_is_wrong() {
    assert_eq!(KernelFilter::parse_ids("3"), Ok(vec![3..=3]));
    assert_eq!(KernelFilter::parse_ids("1,4"), Ok(vec![1..=1, 4..=4]));
    assert_eq!(KernelFilter::parse_ids(" 2 - 5 ,9"), Ok(vec![2..=5, 9..=9]));
    for (text, want) in [
        ("", "`` is not a kernel id"),
        ("1,,2", "`` is not a kernel id"),
        ("x", "`x` is not a kernel id"),
        ("-3", "`` is not a kernel id"),
        ("5-2", "`5-2`: the range runs backwards"),
    ] {
        let e = KernelFilter::parse_ids(text).unwrap_err();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn without_gpu_a_trace_replays_on_the_preset_for_its_architecture() {
    let ok_block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n\
                    0000 ffffffff 1 R1 MOV 0 0\n0010 ffffffff 0 EXIT 0 0\n#END_TB\n";
    let hopper = tiny_trace("sm90.traceg", "-binary version = 90", ok_block);
    for (trace, version, gpu) in [
        (shared_vectoradd(), 61, "pascal"),
        (fixture("v5-ampere-reduce"), 80, "volta"),
        (hopper, 90, "hopper"),
    ] {
        assert_eq!(replay::open(&trace).unwrap().default_gpu(), gpu);
        let o = Command::new(BIN)
            .arg("replay")
            .arg(&trace)
            .arg("-o")
            .arg(tmp("default-gpu.wstrace"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        assert!(stdout.contains(&format!(" on {gpu}: ")), "{stdout}");
        let note = format!("note: replaying on {gpu}, the preset for sm_{version} traces");
        assert!(stderr.contains(&note), "{stderr}");
    }
    // A GPU asked for is loaded before the scan, and no note is given.
    let o = Command::new(BIN)
        .arg("replay")
        .arg(shared_vectoradd())
        .args(["--gpu", "hopper", "-o"])
        .arg(tmp("asked-gpu.wstrace"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains(" on hopper: "));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"));
}

#[test]
fn cli_replays_the_kernels_selected_and_names_their_ids() {
    let out = tmp("cli-select.wstrace");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["replay"])
            .arg(fixture("v4-volta-2d"))
            .args(["--gpu", "volta", "-o"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--kernel-name", "Pdi", "--launch-skip", "1"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(stdout.contains("replayed 1 of 2 kernels from"), "{stdout}");
    assert!(
        stdout.contains("  kernel 2 _Z4loopPdi_again (sm_70"),
        "{stdout}"
    );
    assert!(!stdout.contains("kernel 1 "), "{stdout}");
    let header = TraceReader::open(&out).unwrap().header().clone();
    assert_eq!(header.launches.len(), 1);

    let o = run(&["--kernels", "5-2"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("`5-2`: the range runs backwards"),
        "{stderr}"
    );
    let o = run(&["--launch-count", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--kernels", "3"]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("(ids 3) leaves no kernel"), "{stderr}");
}

/// The parent of a few traces (as `tests/data/accelsim` and `../shared/data/accelsim` are) is
/// an easy input to give: the error names the subdirectories that are traces, in name order,
/// at most three and how many more.
#[test]
fn a_directory_of_traces_names_the_ones_within() {
    let root = fixture("");
    let err = match replay::open(&root) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{} is not a trace", root.display()),
    };
    let within = |name: &str| root.join(name).display().to_string();
    assert_eq!(
        err,
        format!(
            "{}: a trace directory must hold kernelslist.g; did you mean {}, {} or {}?",
            root.display(),
            within("v4-volta-2d"),
            within("v5-ampere-reduce"),
            within("vectoradd-100-32")
        )
    );

    let dir = tmp("traces-within");
    let _ = std::fs::remove_dir_all(&dir);
    // Made out of order, beside a directory that is no trace and a file that is no directory.
    for name in ["e", "b", "d", "a", "c"] {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("kernelslist.g"), "").unwrap();
    }
    std::fs::create_dir_all(dir.join("0-not-a-trace")).unwrap();
    std::fs::write(dir.join("kernelslist.g.bak"), "").unwrap();
    let replay = |input: &Path| {
        let o = Command::new(BIN)
            .arg("replay")
            .arg(input)
            .arg("-o")
            .arg(tmp("traces-within.wstrace"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        stderr
    };
    let d = |name: &str| dir.join(name).display().to_string();
    assert_eq!(
        replay(&dir),
        format!(
            "error: {}: a trace directory must hold kernelslist.g; did you mean one of {}, {}, {} \
             (or 2 more)?\n",
            dir.display(),
            d("a"),
            d("b"),
            d("c")
        )
    );
    for name in ["a", "b", "c", "d"] {
        std::fs::remove_dir_all(dir.join(name)).unwrap();
    }
    assert!(replay(&dir).ends_with(&format!("; did you mean {}?\n", d("e"))));
    // None within: the message as it was.
    assert_eq!(
        replay(&dir.join("0-not-a-trace")),
        format!(
            "error: {}: a trace directory must hold kernelslist.g\n",
            d("0-not-a-trace")
        )
    );
}

#[test]
fn profile_and_sweep_warn_of_unknown_opcodes_as_replay_does_and_a_clean_trace_says_nothing() {
    let warning =
        "warning: 1 opcode(s) not in the table replayed as generic instructions: FROB.X ×8";
    let dir = tmp("unknown-opcodes");
    let _ = std::fs::remove_dir_all(&dir);
    for (command, out) in [("profile", "profile"), ("sweep", "sweep")] {
        let mut c = Command::new(BIN);
        c.arg(command)
            .arg(fixture("v4-volta-2d"))
            .arg("-o")
            .arg(dir.join(out));
        if command == "sweep" {
            c.args(["--policy", "gto,lrr"]);
        }
        let o = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{command}: {stderr}");
        assert_eq!(stderr.matches(warning).count(), 1, "{command}: {stderr}");
    }
    // Nothing to warn of: no warning, and no line counting none.
    let o = Command::new(BIN)
        .arg("replay")
        .arg(shared_vectoradd())
        .arg("-o")
        .arg(dir.join("vectoradd.wstrace"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.contains("unknown opcodes"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn cli_replays_and_reports_on_stdout_and_stderr() {
    let out = tmp("cli.wstrace");
    let o = Command::new(BIN)
        .args(["replay"])
        .arg(fixture("v4-volta-2d"))
        .args(["--gpu", "volta", "--policy", "lrr", "--sms", "2", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("replayed 2 kernels"), "{stdout}");
    // The summary names kernels demangled, without parameters.
    assert!(stdout.contains("  kernel 1 loop (sm_70"), "{stdout}");
    assert!(
        stdout.contains("100 warp instructions (3072 thread instructions)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("unknown opcodes: 1 (8 warp instructions)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: 1 opcode(s) not in the table"),
        "{stderr}"
    );
    assert!(stderr.contains("FROB.X ×8"), "{stderr}");
    assert!(stderr.contains("M warp instructions/s"), "{stderr}");
    let header = TraceReader::open(&out).unwrap().header().clone();
    assert_eq!(header.config.num_sms, 2);
    assert_eq!(
        header.launches[0].listing[2],
        "/*0020*/ LDG.E.64.SYS R4, [R2]"
    );

    let bad = tiny_trace(
        "cli-bad.traceg",
        "",
        "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n",
    );
    let o = Command::new(BIN)
        .args(["replay"])
        .arg(&bad)
        .args(["--gpu", "volta", "-o"])
        .arg(tmp("cli-bad.wstrace"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("cli-bad.traceg:10: missing #END_TB"),
        "{stderr}"
    );
    assert!(!tmp("cli-bad.wstrace").exists());

    let help = Command::new(BIN)
        .args(["replay", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Examples:") && help.contains("warpscope replay"),
        "{help}"
    );
}

#[test]
fn skipping_idle_cycles_is_invisible_in_replay() {
    let input = replay::open(&fixture("v5-ampere-reduce")).unwrap();
    let run = |skip_idle: bool, name: &str| {
        let path = tmp(name);
        let options = SimOptions {
            skip_idle,
            ..SimOptions::default()
        };
        let out = replay::replay(&volta(), &input, options, &path, TraceFormat::Binary, 2).unwrap();
        let events: Vec<Event> = TraceReader::open(&path)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (out.record.report, events)
    };
    let (skipped, a) = run(true, "skip.wstrace");
    let (stepped, b) = run(false, "step.wstrace");
    assert_eq!(skipped, stepped);
    assert_eq!(a, b);
}

/// Runs `scripts/gen-accelsim-trace.py` with `args` and `--out dir`.
fn generate(args: &[&str], dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-accelsim-trace.py");
    let o = Command::new("python3")
        .arg(&script)
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .expect("python3 runs scripts/gen-accelsim-trace.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn generator_script_writes_a_deterministic_trace_that_replays() {
    let (a, b) = (tmp("gen-a"), tmp("gen-b"));
    generate(&["--elements", "1000", "--block", "128"], &a);
    generate(&["--elements", "1000", "--block", "128"], &b);
    let text = std::fs::read(a.join("kernel-1.traceg")).unwrap();
    assert_eq!(text, std::fs::read(b.join("kernel-1.traceg")).unwrap());
    let input = replay::open(&a).unwrap();
    assert_eq!(input.memcpys, 3);
    assert!(input.unknown_opcodes().is_empty());
    // 1000 elements in 8 blocks of 4 warps: 31 full warps, one with 8 lanes, none idle.
    assert_eq!(input.warp_instructions(), 32 * 15);
    // Full warps: 5 full-mask prologue lines, an EXIT with no lanes, 9 full-mask body lines;
    // the last warp's EXIT takes its 24 lanes past the end.
    let full = 5 * 32 + 9 * 32;
    assert_eq!(
        input.thread_instructions(),
        31 * full + (5 * 32 + 24 + 9 * 8)
    );
    let r = replay_to(&a, &volta(), "gen.wstrace", 0);
    assert_eq!(r.report.thread_instructions, input.thread_instructions());
}

#[test]
fn generator_fma_trips_loop_the_working_warps_and_make_math_pipe_the_wait() {
    let dir = tmp("gen-fma");
    generate(&["--elements", "8192", "--fma-trips", "12"], &dir);
    let input = replay::open(&dir).unwrap();
    assert!(input.unknown_opcodes().is_empty());
    // 256 full warps of 15 + 7 per trip.
    assert_eq!(input.warp_instructions(), 256 * (15 + 7 * 12));
    let r = replay_to(&dir, &volta(), "gen-fma.wstrace", 1);
    assert_eq!(r.report.warp_instructions, input.warp_instructions());
    let analysis = analyze_file(&r.path, Taxonomy::Nsight).unwrap();
    let launch = &analysis.launches[0];
    let ffma = launch
        .source
        .iter()
        .find(|s| s.text.contains("/*0100*/"))
        .expect("the loop's first FFMA is listed");
    assert_eq!(ffma.executions, 256 * 12);
    // Four independent FFMAs a trip on a pipe that takes one every other cycle: the loop's
    // warps mostly wait for the pipe or for their turn, not for memory.
    let waits = |state: &str| ffma.warp_cycles.get(state).copied().unwrap_or(0);
    assert!(
        waits("math_pipe_throttle") + waits("not_selected") > waits("long_scoreboard"),
        "{:?}",
        ffma.warp_cycles
    );
}

/// A launch's blocks are read ahead on a thread while the simulation runs; they are the blocks
/// read when granted, and blocks asked for out of order are read directly instead.
#[test]
fn blocks_read_ahead_are_the_blocks_read_when_granted() {
    use warpscope::sim::stream::InstructionSource;
    let dir = tmp("ahead");
    generate(&["--elements", "20000", "--block", "64"], &dir);
    let input = replay::open(&dir).unwrap();
    let blocks = input.kernels[0].blocks();
    let warps = input.kernels[0].warps_per_block();
    // More blocks than the read-ahead holds, so the worker waits for the simulation.
    assert!(blocks > 64, "{blocks}");
    let mut ahead = input.source().unwrap();
    let in_order: Vec<_> = (0..blocks)
        .map(|b| ahead.block_streams(0, b, warps))
        .collect();
    // The last block first: from then on each block is read when asked for.
    let mut direct = input.source().unwrap();
    let last = direct.block_streams(0, blocks - 1, warps);
    assert_eq!(&last, in_order.last().unwrap());
    for (b, streams) in in_order.iter().enumerate() {
        assert_eq!(
            &direct.block_streams(0, b as u64, warps),
            streams,
            "block {b}"
        );
    }
    assert!(ahead.take_error().is_none() && direct.take_error().is_none());
    assert!(in_order.iter().flatten().any(|s| *s != Default::default()));
    // A source dropped half-way stops its worker.
    let mut half = input.source().unwrap();
    for b in 0..blocks / 2 {
        assert_eq!(half.block_streams(0, b, warps), in_order[b as usize]);
    }
    drop(half);
}

/// One way of damaging a trace file, as people's files get damaged: edited by hand, cut
/// short, concatenated, or with a field gone.
#[derive(Debug, Clone)]
enum Damage {
    /// The file ends at this fraction (per mille) of its length.
    Truncate(u16),
    /// Line `at` (modulo the line count) is dropped.
    DropLine(u16),
    /// Line `at` appears twice.
    DuplicateLine(u16),
    /// Lines `at` and `at + 1` change places.
    SwapLines(u16),
    /// Token `token` of line `at` is replaced by `with`.
    ReplaceToken { at: u16, token: u8, with: String },
    /// The byte at this fraction (per mille) of the file becomes `byte`.
    SetByte(u16, u8),
}

fn damage_strategy() -> impl proptest::strategy::Strategy<Value = Damage> {
    use proptest::prelude::*;
    let token = prop_oneof![
        Just(String::new()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("ffffffff".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("4294967296".to_string()),
        Just("R300".to_string()),
        Just("#END_TB".to_string()),
        Just("#BEGIN_TB".to_string()),
        Just("2".to_string()),
        Just("0x".to_string()),
        "[0-9a-fA-FxRPUZ=#,() .-]{1,12}",
    ];
    prop_oneof![
        (0u16..1000).prop_map(Damage::Truncate),
        any::<u16>().prop_map(Damage::DropLine),
        any::<u16>().prop_map(Damage::DuplicateLine),
        any::<u16>().prop_map(Damage::SwapLines),
        (any::<u16>(), 0u8..12, token).prop_map(|(at, token, with)| Damage::ReplaceToken {
            at,
            token,
            with
        }),
        (0u16..1000, any::<u8>()).prop_map(|(at, b)| Damage::SetByte(at, b)),
    ]
}

fn apply_damage(text: &[u8], damage: &Damage) -> Vec<u8> {
    let split =
        |t: &[u8]| -> Vec<Vec<u8>> { t.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
    let join = |lines: Vec<Vec<u8>>| lines.join(&b'\n');
    let mut lines = split(text);
    let n = lines.len();
    match damage {
        Damage::Truncate(f) => text[..text.len() * *f as usize / 1000].to_vec(),
        Damage::DropLine(at) => {
            lines.remove(*at as usize % n);
            join(lines)
        }
        Damage::DuplicateLine(at) => {
            let i = *at as usize % n;
            lines.insert(i, lines[i].clone());
            join(lines)
        }
        Damage::SwapLines(_) if n < 2 => join(lines),
        Damage::SwapLines(at) => {
            let i = *at as usize % (n - 1);
            lines.swap(i, i + 1);
            join(lines)
        }
        Damage::ReplaceToken { at, token, with } => {
            let i = *at as usize % n;
            let line = String::from_utf8_lossy(&lines[i]).into_owned();
            let mut tokens: Vec<&str> = line.split(' ').collect();
            let t = *token as usize % tokens.len();
            tokens[t] = with;
            lines[i] = tokens.join(" ").into_bytes();
            join(lines)
        }
        Damage::SetByte(f, b) => {
            let mut out = text.to_vec();
            if !out.is_empty() {
                let i = (out.len() - 1) * *f as usize / 1000;
                out[i] = *b;
            }
            out
        }
    }
}

proptest::proptest! {
    // A fixed seed: the same damaged files on every run (the search for new ones is a
    // matter of raising `cases` locally).
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(4),
        ..Default::default()
    })]

    /// A damaged kernel trace is replayed or rejected — never a panic — and a rejection
    /// names the file (and, for what is wrong in its text, the line).
    #[test]
    fn damaged_traces_are_replayed_or_rejected_never_a_panic(
        which in 0usize..3,
        damages in proptest::collection::vec(damage_strategy(), 1..4),
    ) {
        let source = [
            "vectoradd-100-32/kernel-1.traceg",
            "v4-volta-2d/kernel-1.traceg",
            "v5-ampere-reduce/kernel-1.traceg",
        ][which];
        let mut text = std::fs::read(fixture(source)).unwrap();
        for d in &damages {
            text = apply_damage(&text, d);
        }
        let path = tmp("damaged.traceg");
        std::fs::write(&path, &text).unwrap();
        match replay::open(&path) {
            Err(e) => {
                let message = e.to_string();
                proptest::prop_assert!(
                    message.contains(&*path.to_string_lossy()),
                    "{message}"
                );
            }
            Ok(input) => {
                let out = path.with_extension("wstrace");
                let options = SimOptions { max_cycles: 1_000_000, ..SimOptions::default() };
                match replay::replay(&volta(), &input, options, &out, TraceFormat::Binary, 1) {
                    // A fault (deadlock, watchdog) still leaves a readable trace.
                    Ok(_) => {
                        let mut reader = TraceReader::open(&out).unwrap();
                        proptest::prop_assert!(reader.by_ref().all(|e| e.is_ok()));
                        proptest::prop_assert!(reader.complete().is_some());
                    }
                    Err(e) => {
                        let message = e.to_string();
                        proptest::prop_assert!(
                            message.contains(&*path.to_string_lossy()),
                            "{message}"
                        );
                    }
                }
            }
        }
    }
}

/// `bench --replay`: the recorded and the untraced replay of the shared trace agree with
/// `replay` itself, the temporary trace is removed, and a bad trace is a clean error.
#[test]
fn bench_replay_measures_both_runs_of_the_same_replay() {
    let out = tmp("bench.wstrace");
    let r = warpscope::bench::run_replay(
        &volta(),
        &shared_vectoradd(),
        &out,
        Some(TraceFormat::Binary),
    )
    .unwrap();
    assert!(!out.exists());
    let replayed = replay_to(&shared_vectoradd(), &volta(), "bench-ref.wstrace", 1);
    assert_eq!(r.warp_instructions, 344);
    assert_eq!(r.warp_instructions, replayed.report.warp_instructions);
    assert_eq!(r.cycles, replayed.report.cycles);
    let recording = r.recording.as_ref().unwrap();
    assert_eq!(recording.events, replayed.events.len() as u64);
    assert_eq!(
        recording.bytes,
        std::fs::metadata(&replayed.path).unwrap().len()
    );
    assert!(r.replay_rate().unwrap() > 0.0 && r.null_rate() > 0.0);
    assert!(r.overhead().unwrap() > 0.0);
    // Without the recording replay: the same run, no file, no recording figures.
    let alone = warpscope::bench::run_replay(&volta(), &shared_vectoradd(), &out, None).unwrap();
    assert!(!out.exists());
    assert_eq!(
        (alone.warp_instructions, alone.cycles),
        (r.warp_instructions, r.cycles)
    );
    assert!(alone.recording.is_none() && alone.replay_rate().is_none());

    let o = Command::new(BIN)
        .args(["bench", "--replay"])
        .arg(shared_vectoradd())
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["warp_instructions"], 344);
    assert_eq!(v["cycles"].as_u64(), Some(r.cycles));
    assert!(v["targets"]["replay_at_least_5m_per_second"].is_boolean());
    // The peak memory, where the host reports it: more than the few MB of an idle process.
    if Path::new("/proc/self/status").exists() {
        assert!(v["peak_rss_bytes"].as_u64().unwrap() > 2 << 20, "{v}");
    }
    let o = Command::new(BIN)
        .args(["bench", "--no-trace", "--json", "--replay"])
        .arg(shared_vectoradd())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cycles"].as_u64(), Some(r.cycles));
    assert!(v["record_seconds"].is_null() && v["null_seconds"].as_f64().unwrap() > 0.0);
    let o = Command::new(BIN)
        .args(["bench", "--no-trace"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--replay"));

    let o = Command::new(BIN)
        .args(["bench", "--replay", "tests/data/accelsim/no-such-trace"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("bench --replay") && e.contains("no-such-trace"),
        "{e}"
    );
}

#[test]
fn one_core_pipelines_work_in_line_and_write_the_same_bytes() {
    // Enough blocks to read ahead, events for many encoder batches and compressed blocks.
    let dir = tmp("gen-threads");
    generate(&["--elements", "120000", "--fma-trips", "2"], &dir);
    let run = |threads: &str, args: &[&str], out: &Path| {
        let o = Command::new(BIN)
            .env(warpscope::threads::THREADS_VAR, threads)
            .args(args)
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    for format in ["bin", "compact", "grouped"] {
        let traces = ["1", "2"].map(|threads| {
            let out = tmp(&format!("threads-{format}-{threads}.wstrace"));
            let input = dir.to_str().unwrap();
            run(
                threads,
                &["replay", input, "--gpu", "volta", "--format", format, "-o"],
                &out,
            );
            (std::fs::read(&out).unwrap(), out)
        });
        assert!(
            traces[0].0.len() > 200_000,
            "{format}: {}",
            traces[0].0.len()
        );
        assert!(
            traces[0].0 == traces[1].0,
            "{format}: in line and threaded differ"
        );
        // Read back with and without the inflater thread.
        let json = ["1", "2"].map(|threads| {
            let o = Command::new(BIN)
                .env(warpscope::threads::THREADS_VAR, threads)
                .args(["analyze", "--format", "json"])
                .arg(&traces[0].1)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        });
        assert!(json[0] == json[1], "{format}: analyses differ");
        assert!(String::from_utf8_lossy(&json[0]).contains("\"complete\": true"));
    }
}

#[test]
fn an_output_never_replaces_the_trace_it_replays_and_a_failed_rename_leaves_nothing() {
    let dir = tmp("own-files");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["kernelslist.g", "kernel-1.traceg"] {
        std::fs::copy(shared_vectoradd().join(f), dir.join(f)).unwrap();
    }
    let before = |f: &str| std::fs::read(shared_vectoradd().join(f)).unwrap();
    let replay_into = |input: &Path, out: &Path, extra: &[&str]| {
        Command::new(BIN)
            .arg("replay")
            .arg(input)
            .args(extra)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap()
    };
    // The kernel list, a kernel file given alone or through the list, selected or not.
    let cases: [(&Path, &str, &[&str]); 4] = [
        (&dir, "kernelslist.g", &[]),
        (&dir, "kernel-1.traceg", &[]),
        (&dir.join("kernel-1.traceg"), "kernel-1.traceg", &[]),
        (&dir, "kernel-1.traceg", &["--kernel-name", "vecAdd"]),
    ];
    for (input, target, extra) in cases {
        let o = replay_into(input, &dir.join(target), extra);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{target}: {stderr}");
        assert!(
            stderr.contains("a file of the trace being replayed"),
            "{stderr}"
        );
        for f in ["kernelslist.g", "kernel-1.traceg"] {
            assert!(
                std::fs::read(dir.join(f)).unwrap() == before(f),
                "{f} changed"
            );
        }
    }
    // An output that could not be renamed into place (a directory is there) is refused before
    // the replay, and leaves no temporary file behind.
    let blocked = tmp("own-files-blocked");
    std::fs::create_dir_all(&blocked).unwrap();
    let o = replay_into(&dir, &blocked, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is a directory: give a file name for the trace",
            blocked.display()
        )),
        "{stderr}"
    );
    assert!(o.stdout.is_empty(), "refused before replaying");
    assert!(!warpscope::pending::tmp_path(&blocked).exists());

    // `record` refuses to write its trace over the launch file it runs.
    let launch = tmp("own-launch.json");
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    // (The check comes before the launch file is read: its kernels need not be beside it.)
    let text = std::fs::read_to_string(kernels.join("reduce.json")).unwrap();
    std::fs::write(&launch, &text).unwrap();
    let o = Command::new(BIN)
        .arg("record")
        .arg(&launch)
        .arg("-o")
        .arg(&launch)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("would replace the input"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&launch).unwrap(), text);
}

#[test]
fn a_stopped_replay_names_the_recorded_instructions_and_why_each_warp_waits() {
    let out = tmp("stopped.wstrace");
    let o = Command::new(BIN)
        .arg("replay")
        .arg(shared_vectoradd())
        .args(["--max-cycles", "300", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    // The trace's SASS and addresses, not the stand-in program's (which has FFMA for the
    // FADD), and the wait in words with the producer's instruction.
    assert!(
        stderr.contains(
            "warp 0 at /*00d0*/ FADD R0, R2, R4: waiting for R2 (L1TEX path) from /*00b0*/ LDG.E.CG R2, [R2]"
        ),
        "{stderr}"
    );
    assert!(
        !stderr.contains("FFMA") && !stderr.contains("Scoreboard {"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: the run stopped at --max-cycles 300"),
        "{stderr}"
    );
    // The trace keeps the same words in its fault event.
    let mut r = TraceReader::open(&out).unwrap();
    let mut fault = None;
    r.for_each_event(|e| {
        if let Event::Fault { fault: f, .. } = e {
            fault = Some(f.to_string());
        }
    })
    .unwrap();
    let fault = fault.expect("a fault event");
    assert!(fault.contains("at /*00d0*/ FADD R0, R2, R4"), "{fault}");

    // A native kernel names its own instructions by pc.
    let o = Command::new(BIN)
        .args(["run", "kernels/reduce.json", "--max-cycles", "100"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(
            "at pc 5 `STS [R3], R2`: waiting for R2 (L1TEX path) from pc 3 `LDG R2, [R1]`"
        ),
        "{stderr}"
    );
}

#[test]
fn an_accelsim_trace_given_where_a_warpscope_trace_belongs_gets_advice() {
    let va = shared_vectoradd();
    let kernel = va.join("kernel-1.traceg");
    // Outputs never written: the input is refused first.
    let unused = tmp("never-written");
    let unused = unused.to_str().unwrap();
    let cases: [(&[&str], &Path, &str); 7] = [
        (
            &["analyze"],
            &va,
            "is an Accel-Sim trace, not a warpscope trace",
        ),
        (
            &["analyze"],
            &kernel,
            "is an Accel-Sim trace, not a warpscope trace",
        ),
        (&["trace", "info"], &va, "replay it first"),
        (&["trace", "dump"], &kernel, "replay it first"),
        (&["export", "--perfetto", unused], &va, "warpscope profile"),
        (&["run"], &va, "is an Accel-Sim trace: `warpscope replay"),
        (
            &["record", "-o", unused],
            &kernel,
            "is an Accel-Sim trace: `warpscope replay",
        ),
    ];
    for (args, input, want) in cases {
        let o = Command::new(BIN).args(args).arg(input).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    // A directory of traces (a profile's output) names one.
    let dir = tmp("a-profile");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("k.wstrace"), b"").unwrap();
    for args in [
        &["render", "--chart", "timeline", "-o", unused][..],
        &["report", "-o", unused],
    ] {
        let o = Command::new(BIN).args(args).arg(&dir).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("is a directory, not a trace (it holds 1 .wstrace file, e.g. "),
            "{stderr}"
        );
    }
}
