//! Generated kernels for property tests of the timing model: short native kernels of global
//! and shared memory, MUFU, barriers (some reached after other warps or lanes exited, some
//! deadlocked by divergence), memory barriers and loops, each thread on its own words.

// Each test file that says `mod common;` uses only part of the shared code.
#![allow(dead_code)]

/// One line of a generated kernel's body.
#[derive(Debug, Clone)]
pub enum Line {
    Alu(u8, u8, u8),
    Fma(u8, u8, u8),
    Mufu(u8, u8),
    Load(u8),
    Store(u8),
    SharedStore(u8),
    SharedLoad(u8),
    Barrier,
    Membar,
    /// Threads at or past this thread index exit (whole warps, or some lanes of one).
    ExitFrom(u32),
    /// Half of each warp's lanes branch past a barrier: a deadlock.
    DivergentBarrier,
    /// The lines so far after the prologue run this many more times.
    Loop(u8),
}

pub fn line_strategy() -> impl proptest::strategy::Strategy<Value = Line> {
    use proptest::prelude::*;
    let reg = || 4u8..8;
    prop_oneof![
        3 => (reg(), reg(), reg()).prop_map(|(d, a, b)| Line::Alu(d, a, b)),
        2 => (reg(), reg(), reg()).prop_map(|(d, a, b)| Line::Fma(d, a, b)),
        1 => (reg(), reg()).prop_map(|(d, a)| Line::Mufu(d, a)),
        2 => reg().prop_map(Line::Load),
        1 => reg().prop_map(Line::Store),
        1 => reg().prop_map(Line::SharedStore),
        1 => reg().prop_map(Line::SharedLoad),
        1 => Just(Line::Barrier),
        1 => Just(Line::Membar),
        1 => Just(Line::DivergentBarrier),
        1 => (0u32..4).prop_map(|w| Line::ExitFrom(32 * w)),
        1 => (0u32..128).prop_map(Line::ExitFrom),
        1 => (1u8..4).prop_map(Line::Loop),
    ]
}

/// A kernel of the generated lines: each thread's word of global and shared memory, values
/// that stay finite, a loop counter in R8.
pub fn kernel_source(lines: &[Line]) -> String {
    const PROLOGUE: &str =
        ".kernel k\n.regs 10\n.shared 1024\n IMAD R0, %ctaid.x, %ntid.x, %tid.x\n \
         SHL R1, R0, 2\n SHL R3, %tid.x, 2\n MOV R4, 1\n MOV R5, 2\n MOV R6, 3\n MOV R7, 4\n";
    let mut body = String::new();
    let mut looped = false;
    for (k, line) in lines.iter().enumerate() {
        let text = match *line {
            Line::Alu(d, a, b) => format!("IADD R{d}, R{a}, R{b}"),
            Line::Fma(d, a, b) => format!("IMAD R{d}, R{a}, R{b}, R{d}"),
            Line::Mufu(d, a) => format!("I2F R{d}, R{a}"),
            Line::Load(d) => format!("LDG R{d}, [R1]"),
            Line::Store(a) => format!("STG [R1], R{a}"),
            Line::SharedStore(a) => format!("STS [R3], R{a}"),
            Line::SharedLoad(d) => format!("LDS R{d}, [R3]"),
            Line::Barrier => "BAR.SYNC".into(),
            Line::Membar => "MEMBAR".into(),
            Line::ExitFrom(t) => format!("ISETP.GE P0, %tid.x, {t}\n @P0 EXIT"),
            Line::DivergentBarrier => {
                format!("ISETP.LT P2, %laneid, 16\n @P2 BRA PAST{k}\n BAR.SYNC\nPAST{k}:\n NOP")
            }
            // The first loop goes around everything before it; later ones are dropped.
            Line::Loop(n) if !looped => {
                looped = true;
                body = format!(
                    " MOV R8, {n}\nTOP:\n{body} IADD R8, R8, -1\n ISETP.GT P1, R8, 0\n @P1 BRA TOP\n"
                );
                continue;
            }
            Line::Loop(_) => continue,
        };
        body.push(' ');
        body.push_str(&text);
        body.push('\n');
    }
    format!("{PROLOGUE}{body} EXIT\n")
}

/// The GPU the property tests run generated kernels on: `small` with two SMs and LSU and MIO
/// queues of two entries, so that warps throttle.
pub fn small_gpu(
    policy: warpscope::sim::config::Policy,
    scoreboard: warpscope::sim::config::ScoreboardKind,
    issue_width: u32,
) -> warpscope::sim::config::GpuConfig {
    let mut config = warpscope::sim::config::GpuConfig::preset("small").unwrap();
    config.num_sms = 2;
    config.scheduler.policy = policy;
    config.scheduler.scoreboard = scoreboard;
    config.sm.issue_width = issue_width;
    config.sm.lsu_queue = 2;
    config.sm.mio_queue = 2;
    config.validate().unwrap();
    config
}

/// A launch of the kernel of `lines`: `grid` blocks of `warps` full warps each.
pub fn generated_launch(lines: &[Line], grid: u32, warps: u32) -> warpscope::sim::KernelLaunch {
    let src = kernel_source(lines);
    let program = warpscope::asm::assemble(warpscope::asm::Dialect::Native, &src, "k")
        .unwrap_or_else(|e| panic!("{}\n{src}", e.render("k")));
    warpscope::sim::KernelLaunch {
        program: std::sync::Arc::new(program),
        grid: warpscope::sim::Dim3::linear(grid),
        block: warpscope::sim::Dim3::linear(32 * warps),
        params: vec![],
        stream: 0,
    }
}
