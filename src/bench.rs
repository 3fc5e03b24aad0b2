//! `warpscope bench`: simulated warp instructions per host second on the timing model, with the
//! null observer, for a compute-bound kernel (an FFMA loop) and a memory-bound one (vector add
//! over a million elements). The numbers go into BENCHMARKS.md.

use crate::asm::{self, Dialect};
use crate::sim::config::GpuConfig;
use crate::sim::gpu::{simulate, SimError, SimOptions, SimReport};
use crate::sim::memory::GlobalMemory;
use crate::sim::observer::NullObserver;
use crate::sim::{Dim3, KernelLaunch};
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
    let mut memory = GlobalMemory::new(64 << 20);
    for i in 0..n as u64 {
        let _ = memory.write(4 * i, (i as f32).to_bits());
        let _ = memory.write(4 * (n as u64 + i), 1.0f32.to_bits());
    }
    let vecadd = run(
        "vecadd_1m",
        config,
        vecadd_launch(n * scale.min(8)),
        &mut memory,
    )?;
    Ok(vec![ffma, vecadd])
}
