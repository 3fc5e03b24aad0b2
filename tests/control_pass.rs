//! The auto-control pass: stall counts over fixed latencies, write barriers for variable-latency
//! producers, barrier reuse, read barriers for stores, loops — and the property that the codes
//! it emits, executed on a simple in-order model with the `barriers` scoreboard, never leave a
//! dependency unprotected.

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use warpscope::asm::control_pass::auto_control;
use warpscope::asm::native::assemble;
use warpscope::isa::{ControlCode, Opcode, Program};
use warpscope::sim::config::{CoreModel, GpuConfig, ScoreboardKind};
use warpscope::sim::scoreboard::{reads_sources_late, DepPath, Hazard, Scoreboard, Ticket};

fn program(src: &str) -> Program {
    assemble(src).unwrap_or_else(|e| panic!("{}\n{src}", e.render("t.sasm")))
}

fn volta() -> GpuConfig {
    GpuConfig::preset("volta").unwrap()
}

fn codes(p: &Program) -> Vec<ControlCode> {
    p.instructions
        .iter()
        .map(|i| i.control.expect("every instruction has a code"))
        .collect()
}

/// Cycles from the issue of `a` to the issue of `b` under the pass's timing assumption.
fn distance(c: &[ControlCode], a: usize, b: usize) -> u32 {
    c[a..b].iter().map(|c| c.stall.max(1) as u32).sum()
}

/// Runs one warp of `p` in order: an instruction issues when the previous one's stall has
/// elapsed and `check` passes; fixed-latency results complete exactly `L` cycles after issue,
/// variable ones after a random delay; stores read their sources after a random delay. A taken
/// branch is chosen by `rng` (bounded by `max_issues`). Returns every hazard reported.
fn simulate(p: &Program, config: &GpuConfig, seed: u64, max_issues: usize) -> Vec<Hazard> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let mut reads: Vec<(u64, Ticket)> = Vec::new();
    let mut completes: Vec<(u64, Ticket)> = Vec::new();
    let mut found = Vec::new();
    let (mut t, mut next_ok, mut pc, mut issued) = (0u64, 0u64, 0usize, 0usize);
    let n = p.instructions.len();
    while pc < n && issued < max_issues {
        reads.retain(|&(at, tk)| {
            if at <= t {
                sb.sources_read(0, tk);
            }
            at > t
        });
        completes.retain(|&(at, tk)| {
            if at <= t {
                sb.complete(0, tk);
            }
            at > t
        });
        let inst = &p.instructions[pc];
        if t >= next_ok && sb.check(0, inst).is_ok() {
            sb.hazards(0, pc as u32, inst, &mut found);
            let pipe = inst.op.pipe();
            let tk = sb.issue(0, pc as u32, inst, DepPath::of(pipe));
            let read_at = if reads_sources_late(inst.op) {
                t + rng.gen_range(0..=40)
            } else {
                t
            };
            if read_at == t {
                sb.sources_read(0, tk);
            } else {
                reads.push((read_at, tk));
            }
            let done_at = match config.fixed_latency(pipe) {
                Some(l) => t + l as u64,
                None => t + rng.gen_range(1..=300),
            };
            completes.push((done_at.max(read_at), tk));
            next_ok = t + inst.control.map_or(1, |c| c.stall.max(1)) as u64;
            issued += 1;
            pc = match (inst.op, inst.target()) {
                (Opcode::Exit, _) if inst.guard.is_always() => n,
                (Opcode::Exit, _) => {
                    if rng.gen_bool(0.5) {
                        n
                    } else {
                        pc + 1
                    }
                }
                (Opcode::Bra(_), Some(target)) if rng.gen_bool(0.6) => target as usize,
                _ => pc + 1,
            };
        }
        t += 1;
    }
    found
}

#[test]
fn iadd_raw_on_alu_latency_4_is_covered_by_stalls() {
    let config = volta();
    assert_eq!(config.pipes.alu.latency, 4);
    let p = auto_control(
        &program("IADD R1, R2, R3\nIADD R4, R1, R5\nEXIT\n"),
        &config,
    );
    let c = codes(&p);
    assert!(distance(&c, 0, 1) >= 4, "{p}");
    // With independent work in between, the stall is split.
    let p = auto_control(
        &program("IADD R1, R2, R3\nMOV R6, 1\nMOV R7, 2\nIADD R4, R1, R5\nEXIT\n"),
        &config,
    );
    let c = codes(&p);
    assert!(distance(&c, 0, 3) >= 4, "{p}");
    assert!(c
        .iter()
        .all(|c| (1..=15).contains(&c.stall) && !c.yield_hint));
    assert!(c
        .iter()
        .all(|c| c.wait_mask == 0 && c.write_barrier.is_none()));
}

#[test]
fn long_fixed_latency_is_spread_over_several_instructions() {
    let mut config = volta();
    config.pipes.alu.latency = 40;
    let p = auto_control(
        &program("IADD R1, R2, R3\nMOV R6, 1\nMOV R7, 2\nIADD R4, R1, R5\nEXIT\n"),
        &config,
    );
    let c = codes(&p);
    assert!(distance(&c, 0, 3) >= 40, "{p}");
    assert!(c.iter().all(|c| c.stall <= 15));
    // A dependent right after a 40-cycle producer cannot be covered by one stall: barrier.
    let p = auto_control(
        &program("IADD R1, R2, R3\nIADD R4, R1, R5\nEXIT\n"),
        &config,
    );
    let c = codes(&p);
    let b = c[0].write_barrier.expect("write barrier");
    assert!(c[1].wait_mask & (1 << b) != 0, "{p}");
}

#[test]
fn ldg_fadd_gets_a_write_barrier_waited_on() {
    let p = auto_control(
        &program("LDG R1, [R2]\nIADD R4, R5, R6\nFADD R3, R1, R4\nEXIT\n"),
        &volta(),
    );
    let c = codes(&p);
    let b = c[0].write_barrier.expect("LDG gets a write barrier");
    assert!(c[2].waits_on(b), "{p}");
    assert!(!c[1].waits_on(b));
    assert_eq!(c[1].write_barrier, None);
    assert!(distance(&c, 1, 2) >= 4, "{p}");
}

#[test]
fn seven_live_loads_reuse_the_oldest_barrier() {
    let src = "LDG R1, [R0]\nLDG R2, [R0+4]\nLDG R3, [R0+8]\nLDG R4, [R0+12]\n\
               LDG R5, [R0+16]\nLDG R6, [R0+20]\nLDG R7, [R0+24]\n\
               IADD R8, R1, R7\nIADD R9, R2, R6\nEXIT\n";
    let p = auto_control(&program(src), &volta());
    let c = codes(&p);
    let bars: Vec<u8> = c[..7].iter().map(|c| c.write_barrier.unwrap()).collect();
    assert_eq!(bars, vec![0, 1, 2, 3, 4, 5, 0], "{p}");
    // R1 and R7 share B0: the consumer waits on it (for both loads).
    assert!(c[7].waits_on(0), "{p}");
    assert!(c[8].waits_on(1) && c[8].waits_on(5), "{p}");
    assert!(simulate(&p, &volta(), 1, 100).is_empty());
}

#[test]
fn store_source_overwritten_gets_a_read_barrier() {
    let p = auto_control(
        &program("STG [R0], R1\nMOV R1, R5\nSTG [R0+4], R2\nEXIT\n"),
        &volta(),
    );
    let c = codes(&p);
    let rb = c[0].read_barrier.expect("read barrier");
    assert!(c[1].waits_on(rb), "{p}");
    // Nothing writes R0 or R2 after the second store.
    assert_eq!(c[2].read_barrier, None, "{p}");
}

#[test]
fn loop_waits_at_the_label_and_is_hazard_free() {
    let src = "MOV R0, 0\n\
               MOV R2, 0\n\
               top: LDG R1, [R2]\n\
               LDG R7, [R2+4]\n\
               IADD R0, R0, 1\n\
               ISETP.LT P0, R0, 10\n\
               FADD R3, R3, R1\n\
               STG [R2+8], R3\n\
               IADD R2, R2, 16\n\
               @P0 BRA top\n\
               EXIT\n";
    let p = auto_control(&program(src), &volta());
    let c = codes(&p);
    // R7's load is never consumed: its barrier is live at the back edge, so `top` waits on it.
    let b7 = c[3].write_barrier.unwrap();
    assert!(c[2].waits_on(b7), "{p}");
    // The store's address register is bumped right after it.
    let rb = c[7].read_barrier.expect("read barrier");
    assert!(c[8].waits_on(rb), "{p}");
    // The ISETP → BRA predicate dependency is covered before the branch.
    assert!(distance(&c, 5, 9) >= 4, "{p}");
    // The last instruction of a block leaves every fixed-latency result ready.
    assert!(distance(&c, 8, 10) >= 4, "{p}");
    assert!(
        c[10].waits_on(b7),
        "the fall-through after the branch also waits: {p}"
    );
    for seed in 0..20 {
        assert_eq!(simulate(&p, &volta(), seed, 400), vec![]);
    }
}

#[test]
fn existing_codes_are_overwritten_and_empty_programs_pass() {
    let p = auto_control(
        &program("[B012345:R1:W2:Y:S15] IADD R1, R2, R3\nEXIT\n"),
        &volta(),
    );
    let c = codes(&p);
    assert_eq!(c[0].wait_mask, 0);
    assert_eq!(c[0].read_barrier, None);
    assert!(!c[0].yield_hint);
    let mut empty = program("EXIT\n");
    empty.instructions.clear();
    assert!(auto_control(&empty, &volta()).instructions.is_empty());
}

#[test]
fn the_pass_keeps_each_instruction_on_its_source_line() {
    // It only writes codes: no instruction is added or moved, so the lines still match.
    let src = "// loads\nLDG R1, [R0]\n\nFADD R2, R1, R1\nSTG [R0], R2\nEXIT\n";
    let before = program(src);
    let after = auto_control(&before, &volta());
    assert_eq!(before.lines, vec![2, 4, 5, 6]);
    assert_eq!(after.lines, before.lines);
    assert_eq!(after.instructions.len(), before.instructions.len());
}

#[test]
fn uncoded_program_has_hazards_that_the_pass_removes() {
    let p = program("LDG R1, [R2]\nIADD R3, R1, R1\nMOV R1, 0\nEXIT\n");
    assert!(!simulate(&p, &volta(), 3, 100).is_empty());
    assert!(simulate(&auto_control(&p, &volta()), &volta(), 3, 100).is_empty());
}

const TEMPLATES: &[&str] = &[
    "IADD R{d}, R{a}, R{b}",
    "IMUL R{d}, R{a}, R{b}",
    "FFMA R{d}, R{a}, R{b}, R{c}",
    "MOV R{d}, R{a}",
    "ISETP.LT P{p}, R{a}, R{b}",
    "SEL R{d}, R{a}, R{b}, !P{q}",
    "MUFU.RCP R{d}, R{a}",
    "IDIV R{d}, R{a}, R{b}",
    "LDG R{d}, [R{a}+4]",
    "LDS R{d}, [R{a}]",
    "STG [R{a}], R{b}",
    "STS [R{a}+8], R{b}",
    "ATOMG.ADD R{d}, [R{a}], R{b}",
    "CMP R{a}, R{b}",
    "BRA.NZ L{next}",
    "BAR.SYNC",
    "NOP",
];

/// One random instruction: template, registers, predicate and guard choices.
type Gen = (usize, [u8; 4], [u8; 2], Option<(u8, bool)>);

fn gen() -> impl Strategy<Value = Gen> {
    (
        0..TEMPLATES.len(),
        [0u8..6, 0u8..6, 0u8..6, 0u8..6],
        [0u8..3, 0u8..3],
        prop::option::weighted(0.2, (0u8..3, any::<bool>())),
    )
}

fn render(gens: &[Gen], branches: &[(usize, usize)]) -> String {
    let mut src = String::new();
    for (i, (t, r, p, guard)) in gens.iter().enumerate() {
        let text = TEMPLATES[*t]
            .replace("{d}", &r[0].to_string())
            .replace("{a}", &r[1].to_string())
            .replace("{b}", &r[2].to_string())
            .replace("{c}", &r[3].to_string())
            .replace("{p}", &p[0].to_string())
            .replace("{q}", &p[1].to_string())
            .replace("{next}", &(i + 1).to_string());
        let guard = guard.map_or(String::new(), |(g, neg)| {
            format!("@{}P{g} ", if neg { "!" } else { "" })
        });
        src.push_str(&format!("L{i}: {guard}{text}\n"));
        for &(at, target) in branches {
            if at == i {
                src.push_str(&format!("@P0 BRA L{target}\n"));
            }
        }
    }
    src.push_str(&format!("L{}: EXIT\n", gens.len()));
    src
}

fn config(kind: usize, alu: u32, fma: u32) -> GpuConfig {
    let mut c = GpuConfig::preset(["small", "volta", "hopper", "tiny"][kind]).unwrap();
    if !matches!(c.sm.core, CoreModel::NonPipelined { .. }) {
        c.pipes.alu.latency = alu;
        c.pipes.fma.latency = fma;
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn straight_line_codes_leave_no_hazard(
        gens in prop::collection::vec(gen(), 1..40),
        kind in 0usize..4,
        alu in prop::sample::select(vec![1u32, 2, 4, 6, 15, 16, 33]),
        fma in prop::sample::select(vec![1u32, 4, 5, 20, 47]),
        seed in any::<u64>(),
    ) {
        let src = render(&gens, &[]);
        let cfg = config(kind, alu, fma);
        let p = auto_control(&program(&src), &cfg);
        for c in codes(&p) {
            prop_assert!((1..=15).contains(&c.stall));
        }
        let hz = simulate(&p, &cfg, seed, usize::MAX);
        prop_assert!(hz.is_empty(), "{:?}\n{}", hz, p);
    }

    #[test]
    fn branchy_codes_leave_no_hazard(
        gens in prop::collection::vec(gen(), 2..30),
        branches in prop::collection::vec((0usize..30, 0usize..31), 0..4),
        kind in 0usize..4,
        alu in prop::sample::select(vec![1u32, 4, 6, 16, 33]),
        fma in prop::sample::select(vec![1u32, 4, 20]),
        seed in any::<u64>(),
    ) {
        let n = gens.len();
        let branches: Vec<(usize, usize)> =
            branches.into_iter().map(|(a, t)| (a % n, t % (n + 1))).collect();
        let src = render(&gens, &branches);
        let cfg = config(kind, alu, fma);
        let p = auto_control(&program(&src), &cfg);
        let hz = simulate(&p, &cfg, seed, 300);
        prop_assert!(hz.is_empty(), "{:?}\n{}", hz, p);
    }
}
