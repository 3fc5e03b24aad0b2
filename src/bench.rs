//! `warpscope bench`: simulated warp instructions per host second on the timing model, with the
//! null observer, for a compute-bound kernel (an FFMA loop) and a memory-bound one (vector add
//! over a million elements). The numbers go into BENCHMARKS.md.
//!
//! [`run_trace`] measures tracing on the memory-bound kernel: the cost of recording a binary
//! trace (against the null observer), the trace's size, and how fast it decodes back.
//! [`run_replay`] measures replay of an Accel-Sim trace: the whole `warpscope replay` (scan,
//! simulation, recording), and the same simulation with the null observer, which says how much
//! of the time the trace takes. [`run_charts`] times every chart of every sample trace against
//! the chart bounds.

use crate::asm::{self, Dialect};
use crate::replay::{self, ReplayError};
use crate::sim::config::GpuConfig;
use crate::sim::gpu::{prepare, simulate, simulate_with_source, SimError, SimOptions, SimReport};
use crate::sim::memory::GlobalMemory;
use crate::sim::observer::NullObserver;
use crate::sim::{Dim3, KernelLaunch};
use crate::trace::{Recorder, TraceError, TraceFormat, TraceHeader, TraceReader};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const FFMA_LOOP: &str = "
.kernel ffma_loop
.param iterations
    MOV R1, 0
    MOV R2, 1.0
    MOV R3, 0.5
    MOV R4, 2.0
    MOV R5, 3.0
    MOV R6, 4.0
LOOP:
    FFMA R2, R2, R3, 1.0
    FFMA R4, R4, R3, 2.0
    FFMA R5, R5, R3, 3.0
    FFMA R6, R6, R3, 4.0
    IADD R1, R1, 1
    ISETP.LT P0, R1, %param.iterations
    @P0 BRA LOOP
    EXIT
";

pub const VECADD: &str = "
.kernel vecadd
.param a
.param b
.param c
.param n
    IMAD R0, %ctaid.x, %ntid.x, %tid.x
    ISETP.GE P0, R0, %param.n
    @P0 EXIT
    SHL R1, R0, 2
    IADD R2, R1, %param.a
    IADD R3, R1, %param.b
    LDG R4, [R2]
    LDG R5, [R3]
    FADD R6, R4, R5
    IADD R7, R1, %param.c
    STG [R7], R6
    EXIT
";

#[derive(Debug, Clone)]
pub struct BenchResult {
    pub name: &'static str,
    pub gpu: String,
    pub report: SimReport,
    pub elapsed: Duration,
}

impl BenchResult {
    pub fn warp_instructions_per_second(&self) -> f64 {
        self.report.warp_instructions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

fn program(src: &str) -> Arc<crate::isa::Program> {
    Arc::new(asm::assemble(Dialect::Native, src, "bench").expect("bench kernels assemble"))
}

/// The compute-bound launch: `blocks` blocks of 256 threads, `iterations` loop trips each.
pub fn ffma_launch(blocks: u32, iterations: u32) -> KernelLaunch {
    KernelLaunch {
        program: program(FFMA_LOOP),
        grid: Dim3::linear(blocks),
        block: Dim3::linear(256),
        params: vec![iterations],
        stream: 0,
    }
}

/// The memory-bound launch over `n` floats: a at 0, b after it, c after b.
pub fn vecadd_launch(n: u32) -> KernelLaunch {
    let bytes = n * 4;
    KernelLaunch {
        program: program(VECADD),
        grid: Dim3::linear(n.div_ceil(256)),
        block: Dim3::linear(256),
        params: vec![0, bytes, 2 * bytes, n],
        stream: 0,
    }
}

fn run(
    name: &'static str,
    config: &GpuConfig,
    launch: KernelLaunch,
    memory: &mut GlobalMemory,
) -> Result<BenchResult, SimError> {
    let start = Instant::now();
    let report = simulate(
        config,
        &[launch],
        memory,
        SimOptions {
            max_cycles: u64::MAX,
            skip_idle: true,
        },
        &mut NullObserver,
    )?;
    Ok(BenchResult {
        name,
        gpu: config.name.clone(),
        report,
        elapsed: start.elapsed(),
    })
}

/// Runs both benchmarks; `scale` multiplies their size (1 = the documented size).
pub fn run_all(config: &GpuConfig, scale: u32) -> Result<Vec<BenchResult>, SimError> {
    let scale = scale.max(1);
    let mut memory = GlobalMemory::new(64 << 20);
    let ffma = run(
        "ffma_loop",
        config,
        ffma_launch(64 * scale, 1000),
        &mut memory,
    )?;
    let n = 1 << 20;
    let mut memory = vecadd_memory(n);
    let vecadd = run(
        "vecadd_1m",
        config,
        vecadd_launch(n * scale.min(8)),
        &mut memory,
    )?;
    Ok(vec![ffma, vecadd])
}

/// Global memory for [`vecadd_launch`]`(n)`: a[i] = i, b[i] = 1.
fn vecadd_memory(n: u32) -> GlobalMemory {
    let mut memory = GlobalMemory::new(64 << 20);
    for i in 0..n as u64 {
        let _ = memory.write(4 * i, (i as f32).to_bits());
        let _ = memory.write(4 * (n as u64 + i), 1.0f32.to_bits());
    }
    memory
}

/// Why [`run_trace`] failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceBenchError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("the traced run differs from the untraced one: {0}")]
    Mismatch(String),
}

/// Figures of [`run_trace`].
#[derive(Debug, Clone)]
pub struct TraceBench {
    pub name: &'static str,
    pub gpu: String,
    pub verbosity: u8,
    /// `Binary` (format version 4) or `Compact` (version 5).
    pub format: TraceFormat,
    pub warp_instructions: u64,
    pub cycles: u64,
    /// Simulation with the null observer.
    pub null_elapsed: Duration,
    /// Simulation with a [`Recorder`] writing the binary format to memory, trailer included.
    pub record_elapsed: Duration,
    pub events: u64,
    /// Size of the whole binary trace (header, blocks, trailer).
    pub bytes: u64,
    /// Size of the JSON header alone (part of `bytes`).
    pub header_bytes: u64,
    /// Full decodes of the trace with [`TraceReader`].
    pub read_passes: u32,
    /// Total time of all decode passes.
    pub read_elapsed: Duration,
    /// Total time of as many full analyses ([`crate::analyze::analyze`]) as decode passes.
    pub analyze_elapsed: Duration,
}

impl TraceBench {
    /// Recording time over null-observer time.
    pub fn overhead(&self) -> f64 {
        self.record_elapsed.as_secs_f64() / self.null_elapsed.as_secs_f64().max(1e-9)
    }

    /// Trace bytes (whole file) per simulated warp instruction.
    pub fn bytes_per_warp_instruction(&self) -> f64 {
        self.bytes as f64 / (self.warp_instructions as f64).max(1.0)
    }

    /// Events per simulated warp instruction.
    pub fn events_per_warp_instruction(&self) -> f64 {
        self.events as f64 / (self.warp_instructions as f64).max(1.0)
    }

    fn read_seconds(&self) -> f64 {
        self.read_elapsed.as_secs_f64().max(1e-9)
    }

    /// Decode speed in MB (10^6 bytes) of trace per second.
    pub fn read_mb_per_second(&self) -> f64 {
        self.bytes as f64 * self.read_passes as f64 / 1e6 / self.read_seconds()
    }

    /// Decoded events per second.
    pub fn read_events_per_second(&self) -> f64 {
        self.events as f64 * self.read_passes as f64 / self.read_seconds()
    }

    /// One analysis's time.
    pub fn analyze_seconds(&self) -> f64 {
        self.analyze_elapsed.as_secs_f64() / self.read_passes.max(1) as f64
    }

    /// Events analysed per second (decoding included).
    pub fn analyze_events_per_second(&self) -> f64 {
        self.events as f64 / self.analyze_seconds().max(1e-9)
    }

    /// One analysis's time over the recording time.
    pub fn analyze_over_record(&self) -> f64 {
        self.analyze_seconds() / self.record_elapsed.as_secs_f64().max(1e-9)
    }
}

/// Decodes a whole trace held in memory; returns the number of events.
pub fn decode_trace(bytes: &[u8]) -> Result<u64, TraceError> {
    let mut reader = TraceReader::new(std::io::Cursor::new(bytes))?;
    let n = reader.for_each_event(|e| {
        std::hint::black_box(e);
    })?;
    if reader.trailer().is_none() {
        return Err(TraceError::Truncated {
            offset: bytes.len() as u64,
            expected: "a trailer",
        });
    }
    Ok(n)
}

/// Tracing cost on `vecadd_1m` (`vecadd_launch(1 << 20)`): simulates it with the null
/// observer, then with a [`Recorder`] writing the binary format at `verbosity` into a
/// `Vec<u8>`, then decodes that trace `read_passes` times (at least once) with
/// [`TraceReader`]. Both runs start from the same memory; their reports must agree.
pub fn run_trace(
    config: &GpuConfig,
    verbosity: u8,
    format: TraceFormat,
    read_passes: u32,
) -> Result<TraceBench, TraceBenchError> {
    let n = 1 << 20;
    let options = SimOptions {
        max_cycles: u64::MAX,
        skip_idle: true,
    };
    let launches = [vecadd_launch(n)];

    let mut memory = vecadd_memory(n);
    let start = Instant::now();
    let report = simulate(config, &launches, &mut memory, options, &mut NullObserver)?;
    let null_elapsed = start.elapsed();
    drop(memory);

    let prepared = prepare(config, &launches).map_err(SimError::Launch)?;
    let header = TraceHeader::new(config, &prepared, 0, verbosity);
    let header_bytes = serde_json::to_string(&header)
        .expect("a trace header serializes")
        .len() as u64;
    let mut memory = vecadd_memory(n);
    let start = Instant::now();
    let mut rec = Recorder::new(Vec::with_capacity(1 << 20), format, &header)?;
    let traced = simulate(config, &launches, &mut memory, options, &mut rec)?;
    let events = rec.events();
    let trace = rec.finish(true)?;
    let record_elapsed = start.elapsed();
    drop(memory);
    if traced.cycles != report.cycles || traced.warp_instructions != report.warp_instructions {
        return Err(TraceBenchError::Mismatch(format!(
            "{} cycles / {} warp instructions traced, {} / {} untraced",
            traced.cycles, traced.warp_instructions, report.cycles, report.warp_instructions
        )));
    }

    let read_passes = read_passes.max(1);
    let start = Instant::now();
    for _ in 0..read_passes {
        let decoded = decode_trace(&trace)?;
        // Version 6 stores a pipe group's change as one event and reads back one per warp.
        let grouped = format == TraceFormat::Grouped;
        if decoded != events && !(grouped && decoded > events) {
            return Err(TraceBenchError::Mismatch(format!(
                "{decoded} events decoded, {events} recorded"
            )));
        }
    }
    let read_elapsed = start.elapsed();

    let start = Instant::now();
    for _ in 0..read_passes {
        let reader = TraceReader::new(std::io::Cursor::new(&trace[..]))?;
        let analysis = crate::analyze::analyze(reader, crate::analyze::Taxonomy::Nsight)?;
        let issued: u64 = analysis.launches.iter().map(|l| l.warp_instructions).sum();
        if issued != report.warp_instructions {
            return Err(TraceBenchError::Mismatch(format!(
                "{issued} warp instructions analysed, {} simulated",
                report.warp_instructions
            )));
        }
    }
    let analyze_elapsed = start.elapsed();

    Ok(TraceBench {
        name: "vecadd_1m",
        gpu: config.name.clone(),
        verbosity,
        format,
        warp_instructions: report.warp_instructions,
        cycles: report.cycles,
        null_elapsed,
        record_elapsed,
        events,
        bytes: trace.len() as u64,
        header_bytes,
        read_passes,
        read_elapsed,
        analyze_elapsed,
    })
}

/// Why [`run_replay`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayBenchError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("the run without a trace differs from the recorded one: {0}")]
    Mismatch(String),
}

/// Figures of [`run_replay`].
#[derive(Debug, Clone)]
pub struct ReplayBench {
    pub gpu: String,
    pub warp_instructions: u64,
    pub cycles: u64,
    /// Opening the trace: every line validated, the thread blocks indexed.
    pub scan_elapsed: Duration,
    /// The replay recording a trace to a file, as `warpscope replay` does (unless asked for
    /// the null replay alone).
    pub recording: Option<ReplayRecording>,
    /// The same replay with the null observer: the front end and the timing model alone.
    pub null_elapsed: Duration,
}

/// What the recording replay of [`run_replay`] took and wrote.
#[derive(Debug, Clone)]
pub struct ReplayRecording {
    pub elapsed: Duration,
    pub events: u64,
    pub bytes: u64,
}

impl ReplayBench {
    /// Warp instructions per second of the whole recording replay, scan included, as
    /// `replay` counts.
    pub fn replay_rate(&self) -> Option<f64> {
        let r = self.recording.as_ref()?;
        Some(self.warp_instructions as f64 / (self.scan_elapsed + r.elapsed).as_secs_f64())
    }

    /// The same without the trace: scan and simulation with the null observer.
    pub fn null_rate(&self) -> f64 {
        self.warp_instructions as f64 / (self.scan_elapsed + self.null_elapsed).as_secs_f64()
    }

    /// Recording replay time over null-observer replay time (scan excluded).
    pub fn overhead(&self) -> Option<f64> {
        let r = self.recording.as_ref()?;
        Some(r.elapsed.as_secs_f64() / self.null_elapsed.as_secs_f64().max(1e-9))
    }
}

/// Replay cost on the Accel-Sim trace at `trace` (a directory, kernel list or `.traceg`):
/// opens (scans) it, replays it recording a trace in format `record` at the default verbosity
/// to `out` (removed afterwards) unless `record` is `None`, then replays it again with the
/// null observer. Both runs must agree.
pub fn run_replay(
    config: &GpuConfig,
    trace: &std::path::Path,
    out: &std::path::Path,
    record: Option<TraceFormat>,
) -> Result<ReplayBench, ReplayBenchError> {
    let options = SimOptions::default();
    let start = Instant::now();
    let input = replay::open(trace)?;
    let scan_elapsed = start.elapsed();

    let mut recorded = None;
    if let Some(format) = record {
        let start = Instant::now();
        let run = replay::replay(
            config,
            &input,
            options,
            out,
            format,
            crate::trace::DEFAULT_VERBOSITY,
        );
        let elapsed = start.elapsed();
        let _ = std::fs::remove_file(out);
        let run = run?.record;
        if let Some(fault) = run.fault {
            return Err(ReplayBenchError::Sim(SimError::Fault {
                fault,
                partial: Box::new(run.report),
            }));
        }
        recorded = Some((
            run.report,
            ReplayRecording {
                elapsed,
                events: run.events,
                bytes: run.bytes,
            },
        ));
    }

    let launches = input.launches();
    let mut source = input.source()?;
    let mut memory = GlobalMemory::default();
    let start = Instant::now();
    let report = simulate_with_source(
        config,
        &launches,
        &mut memory,
        options,
        &mut source,
        &mut NullObserver,
    )?;
    let null_elapsed = start.elapsed();
    if let Some(e) = source.take_error() {
        return Err(e.into());
    }
    if let Some((traced, _)) = &recorded {
        if traced.cycles != report.cycles || traced.warp_instructions != report.warp_instructions {
            return Err(ReplayBenchError::Mismatch(format!(
                "{} cycles / {} warp instructions recorded, {} / {} without a trace",
                traced.cycles, traced.warp_instructions, report.cycles, report.warp_instructions
            )));
        }
    }
    Ok(ReplayBench {
        gpu: config.name.clone(),
        warp_instructions: report.warp_instructions,
        cycles: report.cycles,
        scan_elapsed,
        recording: recorded.map(|(_, r)| r),
        null_elapsed,
    })
}

/// One chart of one trace, rendered and timed by [`run_charts`].
#[derive(Debug, Clone)]
pub struct ChartBench {
    pub trace: std::path::PathBuf,
    pub chart: crate::render::ChartKind,
    /// Reading the trace and drawing the chart.
    pub elapsed: Duration,
    pub bytes: usize,
}

/// The bounds every chart of every sample trace must meet.
pub const CHART_SECONDS_BOUND: f64 = 2.0;
pub const CHART_BYTES_BOUND: usize = 2 << 20;

impl ChartBench {
    pub fn within_bounds(&self) -> bool {
        self.elapsed.as_secs_f64() < CHART_SECONDS_BOUND && self.bytes < CHART_BYTES_BOUND
    }
}

/// Renders every chart of every `.wstrace` file in `dir` (in name order), timing each one from
/// reading the trace to the finished SVG.
pub fn run_charts(dir: &std::path::Path) -> Result<Vec<ChartBench>, crate::render::RenderError> {
    use crate::render::{chart, ChartKind, RenderError, RenderOptions};
    let listing = std::fs::read_dir(dir).map_err(|e| RenderError::Trace {
        path: dir.to_path_buf(),
        source: TraceError::Io {
            context: "listing the trace directory",
            source: e,
        },
    })?;
    let mut traces: Vec<_> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wstrace"))
        .collect();
    traces.sort();
    let mut out = Vec::new();
    for trace in traces {
        for kind in ChartKind::ALL {
            let start = Instant::now();
            let c = chart(
                kind,
                std::slice::from_ref(&trace),
                &RenderOptions::default(),
            )?;
            out.push(ChartBench {
                trace: trace.clone(),
                chart: kind,
                elapsed: start.elapsed(),
                bytes: c.svg.len(),
            });
        }
    }
    Ok(out)
}
