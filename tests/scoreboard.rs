//! The scenarios of seeds/002 against each scoreboard kind: the I0/I2/I1 load example, warp
//! isolation, WAW, a full range table, wait masks over two barriers, a read barrier protecting
//! a store's source (WAR), and the hazard reports of the barriers kind.

use warpscope::asm::native::assemble;
use warpscope::isa::Instruction;
use warpscope::sim::config::ScoreboardKind;
use warpscope::sim::scoreboard::{Blocked, DepPath, Hazard, HazardKind, RegRef, Scoreboard};

fn insts(src: &str) -> Vec<Instruction> {
    assemble(src)
        .unwrap_or_else(|e| panic!("{}", e.render("t.sasm")))
        .instructions
}

fn hazards(sb: &Scoreboard, pc: u32, inst: &Instruction) -> Vec<Hazard> {
    let mut out = Vec::new();
    sb.hazards(0, pc, inst, &mut out);
    out
}

/// I0: LDG R1,[R2]; I2: IMUL R4,R5,R6 (independent); I1: IADD R2,R1,R3 (depends on I0).
const SEED_EXAMPLE: &str = "LDG R1, [R2]\nIMUL R4, R5, R6\nIADD R2, R1, R3\n";
const SEED_EXAMPLE_CODED: &str = "[B------:R-:W0:-:S01] LDG R1, [R2]\n\
                                  [B------:R-:W-:-:S01] IMUL R4, R5, R6\n\
                                  [B0-----:R-:W-:-:S01] IADD R2, R1, R3\n";

#[test]
fn seed002_load_example_bitmap_and_ranges() {
    for kind in [ScoreboardKind::Bitmap, ScoreboardKind::Ranges] {
        let p = insts(SEED_EXAMPLE);
        let mut sb = Scoreboard::new(kind, 4, 4);
        assert_eq!(sb.check(0, &p[0]), Ok(()));
        let i0 = sb.issue(0, 0, &p[0], DepPath::Long);
        sb.sources_read(0, i0);
        // I2 does not read R1: it issues while I0 is pending.
        assert_eq!(sb.check(0, &p[1]), Ok(()), "{kind:?}");
        let i2 = sb.issue(0, 1, &p[1], DepPath::Fixed);
        sb.sources_read(0, i2);
        sb.complete(0, i2);
        assert_eq!(
            sb.check(0, &p[2]),
            Err(Blocked::Register {
                reg: RegRef::Reg(1),
                producer_pc: 0,
                path: DepPath::Long
            }),
            "{kind:?}"
        );
        assert!(sb.pending(0));
        sb.complete(0, i0);
        assert_eq!(sb.check(0, &p[2]), Ok(()), "{kind:?}");
        assert!(!sb.pending(0));
    }
}

#[test]
fn seed002_load_example_barriers() {
    let p = insts(SEED_EXAMPLE_CODED);
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 4, 4);
    let i0 = sb.issue(0, 0, &p[0], DepPath::Long);
    sb.sources_read(0, i0);
    assert_eq!(sb.check(0, &p[1]), Ok(()));
    assert!(hazards(&sb, 1, &p[1]).is_empty());
    let i2 = sb.issue(0, 1, &p[1], DepPath::Fixed);
    sb.sources_read(0, i2);
    sb.complete(0, i2);
    assert_eq!(
        sb.check(0, &p[2]),
        Err(Blocked::DependencyBarrier {
            barrier: 0,
            producer_pc: 0,
            path: DepPath::Long
        })
    );
    sb.complete(0, i0);
    assert_eq!(sb.check(0, &p[2]), Ok(()));
    assert!(hazards(&sb, 2, &p[2]).is_empty());
    assert!(!sb.pending(0));
}

#[test]
fn pending_register_of_one_warp_never_blocks_another() {
    for kind in ScoreboardKind::ALL {
        let p = insts(SEED_EXAMPLE_CODED);
        let mut sb = Scoreboard::new(kind, 2, 4);
        sb.issue(0, 0, &p[0], DepPath::Long);
        assert!(sb.check(0, &p[2]).is_err(), "{kind:?}");
        assert_eq!(sb.check(1, &p[2]), Ok(()), "{kind:?}");
        assert!(!sb.pending(1));
        // A new warp taking slot 0 starts clean.
        sb.reset_warp(0);
        assert_eq!(sb.check(0, &p[2]), Ok(()), "{kind:?}");
        assert!(!sb.pending(0));
    }
}

#[test]
fn waw_blocks_under_bitmap_and_ranges() {
    for kind in [ScoreboardKind::Bitmap, ScoreboardKind::Ranges] {
        let p = insts("LDG R1, [R2]\nMOV R1, 7\n");
        let mut sb = Scoreboard::new(kind, 1, 4);
        let t = sb.issue(0, 0, &p[0], DepPath::Long);
        assert_eq!(
            sb.check(0, &p[1]),
            Err(Blocked::Register {
                reg: RegRef::Reg(1),
                producer_pc: 0,
                path: DepPath::Long
            }),
            "{kind:?}"
        );
        sb.sources_read(0, t);
        sb.complete(0, t);
        assert_eq!(sb.check(0, &p[1]), Ok(()));
    }
}

#[test]
fn ranges_with_two_slots_hold_a_third_load() {
    let p = insts("LDG R1, [R0]\nLDG R2, [R0+4]\nLDG R3, [R0+8]\nIADD R4, R1, R2\n");
    let mut sb = Scoreboard::new(ScoreboardKind::Ranges, 1, 2);
    let a = sb.issue(0, 0, &p[0], DepPath::Long);
    sb.issue(0, 1, &p[1], DepPath::Long);
    assert_eq!(sb.check(0, &p[2]), Err(Blocked::TableFull));
    // A RAW is reported before the full table.
    assert!(matches!(
        sb.check(0, &p[3]),
        Err(Blocked::Register {
            reg: RegRef::Reg(1),
            ..
        })
    ));
    sb.complete(0, a);
    assert_eq!(sb.check(0, &p[2]), Ok(()));
}

#[test]
fn wait_mask_over_two_barriers_needs_both_free() {
    let p = insts(
        "[B------:R-:W1:-:S01] LDG R1, [R0]\n\
         [B------:R-:W4:-:S01] LDG R2, [R0+4]\n\
         [B-1--4-:R-:W-:-:S01] IADD R3, R1, R2\n",
    );
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let a = sb.issue(0, 0, &p[0], DepPath::Long);
    let b = sb.issue(0, 1, &p[1], DepPath::Long);
    sb.sources_read(0, a);
    sb.sources_read(0, b);
    assert_eq!(
        sb.check(0, &p[2]),
        Err(Blocked::DependencyBarrier {
            barrier: 1,
            producer_pc: 0,
            path: DepPath::Long
        })
    );
    sb.complete(0, a);
    assert_eq!(
        sb.check(0, &p[2]),
        Err(Blocked::DependencyBarrier {
            barrier: 4,
            producer_pc: 1,
            path: DepPath::Long
        })
    );
    sb.complete(0, b);
    assert_eq!(sb.check(0, &p[2]), Ok(()));
}

#[test]
fn read_barrier_protects_a_store_source_war() {
    let p = insts(
        "[B------:R3:W-:-:S01] STG [R0], R1\n\
         [B---3--:R-:W-:-:S01] MOV R1, R5\n",
    );
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let st = sb.issue(0, 0, &p[0], DepPath::Long);
    assert_eq!(
        sb.check(0, &p[1]),
        Err(Blocked::DependencyBarrier {
            barrier: 3,
            producer_pc: 0,
            path: DepPath::Long
        })
    );
    sb.sources_read(0, st);
    assert_eq!(sb.check(0, &p[1]), Ok(()));
    assert!(hazards(&sb, 1, &p[1]).is_empty());
    // The store itself is still in flight, but it holds no barrier any more.
    assert!(!sb.pending(0));
    sb.complete(0, st);
}

#[test]
fn hazards_raw_without_codes() {
    let p = insts(SEED_EXAMPLE);
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let i0 = sb.issue(0, 0, &p[0], DepPath::Long);
    sb.sources_read(0, i0);
    // The codes say nothing, so nothing blocks; the dependency is reported instead.
    assert_eq!(sb.check(0, &p[2]), Ok(()));
    assert_eq!(
        hazards(&sb, 1, &p[2]),
        vec![Hazard {
            kind: HazardKind::Raw,
            reg: RegRef::Reg(1),
            producer_pc: 0,
            consumer_pc: 1
        }]
    );
}

#[test]
fn hazards_waw_and_war() {
    let p = insts("LDG R1, [R2]\nMOV R1, 3\nSTG [R0], R4\nMOV R4, 5\n");
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let ld = sb.issue(0, 0, &p[0], DepPath::Long);
    sb.sources_read(0, ld);
    assert_eq!(
        hazards(&sb, 1, &p[1]),
        vec![Hazard {
            kind: HazardKind::Waw,
            reg: RegRef::Reg(1),
            producer_pc: 0,
            consumer_pc: 1
        }]
    );
    let st = sb.issue(0, 2, &p[2], DepPath::Long);
    assert_eq!(
        hazards(&sb, 3, &p[3]),
        vec![Hazard {
            kind: HazardKind::War,
            reg: RegRef::Reg(4),
            producer_pc: 2,
            consumer_pc: 3
        }]
    );
    sb.sources_read(0, st);
    assert!(hazards(&sb, 3, &p[3]).is_empty());
}

#[test]
fn correctly_coded_sequence_reports_no_hazard() {
    let p = insts(
        "[B------:R-:W0:-:S01] LDG R1, [R2]\n\
         [B------:R-:W1:-:S01] LDS R3, [R2]\n\
         [B------:R2:W-:-:S01] STG [R2+4], R6\n\
         [B01----:R-:W-:-:S04] IADD R4, R1, R3\n\
         [B--2---:R-:W-:-:S01] MOV R6, R4\n",
    );
    let mut sb = Scoreboard::new(ScoreboardKind::Barriers, 1, 4);
    let mut t = Vec::new();
    for (pc, inst) in p.iter().enumerate().take(3) {
        assert!(hazards(&sb, pc as u32, inst).is_empty());
        t.push(sb.issue(0, pc as u32, inst, DepPath::Long));
    }
    sb.sources_read(0, t[0]);
    sb.sources_read(0, t[1]);
    assert!(sb.check(0, &p[3]).is_err());
    sb.complete(0, t[1]);
    sb.complete(0, t[0]);
    assert_eq!(sb.check(0, &p[3]), Ok(()));
    assert!(hazards(&sb, 3, &p[3]).is_empty());
    let add = sb.issue(0, 3, &p[3], DepPath::Fixed);
    sb.sources_read(0, add);
    sb.complete(0, add); // after its 4 cycles
    assert!(sb.check(0, &p[4]).is_err());
    sb.sources_read(0, t[2]);
    assert_eq!(sb.check(0, &p[4]), Ok(()));
    assert!(hazards(&sb, 4, &p[4]).is_empty());
}

#[test]
fn only_barriers_report_hazards() {
    for kind in [ScoreboardKind::Bitmap, ScoreboardKind::Ranges] {
        let p = insts(SEED_EXAMPLE);
        let mut sb = Scoreboard::new(kind, 1, 4);
        sb.issue(0, 0, &p[0], DepPath::Long);
        assert!(hazards(&sb, 2, &p[2]).is_empty());
        assert_eq!(sb.kind(), kind);
    }
}
