//! Tests of the native assembler: forms, labels, params, directives, errors with exact
//! locations and hints, the assemble(disassemble(p)) == p property, and robustness on garbage.

use proptest::prelude::*;
use warpscope::asm::native::assemble;
use warpscope::asm::AsmErrors;
use warpscope::isa::{
    Addressing, BranchCond, CmpOp, ControlCode, Guard, Instruction, MufuFn, Opcode, Operand,
    OperandKind, Pred, Program, Reg, SpecialReg,
};

fn ok(src: &str) -> Program {
    match assemble(src) {
        Ok(p) => p,
        Err(e) => panic!("did not assemble:\n{}", e.render("k.sasm")),
    }
}

/// `p` without its source lines: a disassembly assembles back to the same program, with the
/// listing's lines in place of the source's.
fn without_lines(mut p: Program) -> Program {
    p.lines.clear();
    p
}

fn errs(src: &str) -> AsmErrors {
    match assemble(src) {
        Ok(p) => panic!("assembled but should not have:\n{p}"),
        Err(e) => e,
    }
}

fn r(n: u8) -> Operand {
    Operand::Reg(Reg(n))
}

fn imm(bits: u32) -> Operand {
    Operand::Imm(bits)
}

fn fimm(v: f32) -> Operand {
    Operand::Imm(v.to_bits())
}

fn p(n: u8, negated: bool) -> Operand {
    Operand::Pred {
        pred: Pred(n),
        negated,
    }
}

fn mem(base: Reg, offset: i32) -> Operand {
    Operand::Mem { base, offset }
}

const EVERY_FORM: &str = r#"
// every operand form the ISA has
.kernel every_form
.param a
.param n      ; a second parameter
.shared 0x100
top:
    MOV R0, %tid.x
    IADD R1, R0, 5
    ISUB R2, R1, -3
    IMUL R3, R2, 0x10
    IMAD R4, R3, R2, %param.n
    IDIV R5, R4, 7
    IREM R6, R4, R5
    SHL R7, R6, 2
    SHR R8, R7, 0xffffffff
    AND R9, R8, RZ
    OR R10, R9, %laneid
    XOR R11, R10, 1.5
    MIN R12, R11, -2147483648
    MAX R13, R12, 4294967295
    ISETP.LT P0, R13, R12
    ISETP.ge P1, R13, 0
    SEL R14, R13, R12, !P1
    SEL R14, R13, R12, PT
    FADD R15, R14, 2
    FMUL R16, R15, -0.25
    FFMA R17, R16, R15, 1e-7
    FMIN R18, R17, 3.0e5
    FMAX R19, R18, 0x7fc00000
    FSETP.NE P2, R19, 0
    I2F R20, R1
    F2I R21, R20
    MUFU.RCP R22, R20
    mufu.sqrt R23, 4
    LDG R24, [R0]
    LDG R24, [R0+4]
    STG [R0-8], R24
    LDS R25, [RZ+0x10]
    STS [R1 + 12], R25
    ATOMG.ADD R26, [R0], 1
    CMP R26, R25
    @P0 BRA top
    @!P2 BRA.NZ done
    BRA.P top
    BAR.SYNC
    MEMBAR
    NOP
done:
    EXIT
"#;

#[test]
fn every_opcode_form_assembles() {
    let prog = ok(EVERY_FORM);
    assert_eq!(prog.name, "every_form");
    assert_eq!(prog.params, vec!["a".to_string(), "n".to_string()]);
    assert_eq!(prog.shared_bytes, 256);
    assert_eq!(prog.addressing, Addressing::Byte);
    assert_eq!(prog.regs, 27);
    assert_eq!(prog.instructions.len(), 42);
    let at = |pc: usize| &prog.instructions[pc];

    assert_eq!(at(0).op, Opcode::Mov);
    assert_eq!(
        at(0).operands,
        vec![r(0), Operand::Special(SpecialReg::TidX)]
    );
    assert_eq!(at(1).operands, vec![r(1), r(0), imm(5)]);
    assert_eq!(at(2).operands, vec![r(2), r(1), imm(-3i32 as u32)]);
    assert_eq!(at(3).operands[2], imm(16));
    assert_eq!(at(4).op, Opcode::Imad);
    assert_eq!(at(4).operands[3], Operand::Param(1));
    assert_eq!(at(8).operands[2], imm(u32::MAX));
    assert_eq!(at(9).operands[2], Operand::Reg(Reg::RZ));
    assert_eq!(at(10).operands[2], Operand::Special(SpecialReg::LaneId));
    // A float literal in an integer opcode is still f32 bits.
    assert_eq!(at(11).operands[2], fimm(1.5));
    assert_eq!(at(12).operands[2], imm(0x8000_0000));
    assert_eq!(at(13).operands[2], imm(u32::MAX));
    assert_eq!(at(14).op, Opcode::Isetp(CmpOp::Lt));
    assert_eq!(at(14).operands[0], p(0, false));
    assert_eq!(at(15).op, Opcode::Isetp(CmpOp::Ge));
    assert_eq!(at(16).operands[3], p(1, true));
    assert_eq!(at(17).operands[3], p(7, false));
    // In a float opcode a plain integer is that float value; hex stays raw bits.
    assert_eq!(at(18).operands[2], fimm(2.0));
    assert_eq!(at(19).operands[2], fimm(-0.25));
    assert_eq!(at(20).operands[3], fimm(1e-7));
    assert_eq!(at(21).operands[2], fimm(3.0e5));
    assert_eq!(at(22).operands[2], imm(0x7fc0_0000));
    assert_eq!(at(23).op, Opcode::Fsetp(CmpOp::Ne));
    assert_eq!(at(23).operands[2], fimm(0.0));
    assert_eq!(at(24).operands, vec![r(20), r(1)]);
    assert_eq!(at(26).op, Opcode::Mufu(MufuFn::Rcp));
    assert_eq!(at(27).op, Opcode::Mufu(MufuFn::Sqrt));
    assert_eq!(at(27).operands[1], fimm(4.0));
    assert_eq!(at(28).operands[1], mem(Reg(0), 0));
    assert_eq!(at(29).operands[1], mem(Reg(0), 4));
    assert_eq!(at(30).operands, vec![mem(Reg(0), -8), r(24)]);
    assert_eq!(at(31).operands[1], mem(Reg::RZ, 16));
    assert_eq!(at(32).operands[0], mem(Reg(1), 12));
    assert_eq!(at(33).op, Opcode::AtomgAdd);
    assert_eq!(at(33).operands, vec![r(26), mem(Reg(0), 0), imm(1)]);
    assert_eq!(at(34).op, Opcode::Cmp);
    assert_eq!(at(35).op, Opcode::Bra(BranchCond::Always));
    assert_eq!(
        at(35).guard,
        Guard {
            pred: Pred(0),
            negated: false
        }
    );
    assert_eq!(at(35).operands, vec![Operand::Target(0)]);
    assert_eq!(at(36).op, Opcode::Bra(BranchCond::Nzp(0b110)));
    assert_eq!(
        at(36).guard,
        Guard {
            pred: Pred(2),
            negated: true
        }
    );
    assert_eq!(at(36).operands, vec![Operand::Target(41)]);
    assert_eq!(at(37).op, Opcode::Bra(BranchCond::Nzp(BranchCond::P)));
    assert_eq!(at(38).op, Opcode::BarSync);
    assert_eq!(at(39).op, Opcode::Membar);
    assert_eq!(at(40).op, Opcode::Nop);
    assert_eq!(at(41).op, Opcode::Exit);
    assert!(at(41).operands.is_empty());
    assert_eq!(
        prog.labels,
        vec![("top".to_string(), 0), ("done".to_string(), 41)]
    );
    // The disassembly assembles back to the same program.
    assert_eq!(without_lines(ok(&prog.to_string())), without_lines(prog));
}

#[test]
fn labels_and_forward_references() {
    let prog = ok(".kernel k\n\
         start: entry:\n\
         BRA end\n\
         mid: NOP\n\
         .L.loop$1: BRA mid\n\
         BRA .L.loop$1\n\
         end:\n\
         after_end:\n");
    assert_eq!(prog.instructions.len(), 4);
    assert_eq!(prog.instructions[0].operands, vec![Operand::Target(4)]);
    assert_eq!(prog.instructions[2].operands, vec![Operand::Target(1)]);
    assert_eq!(prog.instructions[3].operands, vec![Operand::Target(2)]);
    let names: Vec<(&str, u32)> = prog.labels.iter().map(|(n, p)| (n.as_str(), *p)).collect();
    assert_eq!(
        names,
        vec![
            ("start", 0),
            ("entry", 0),
            ("mid", 1),
            (".L.loop$1", 2),
            ("end", 4),
            ("after_end", 4)
        ]
    );
    assert_eq!(prog.label_at(4), Some("end"));
}

#[test]
fn params_may_be_declared_after_use() {
    let prog = ok("MOV R0, %param.b\nIADD R1, R0, %param.a\n.param a\n.param b\n");
    assert_eq!(prog.params, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(prog.instructions[0].operands[1], Operand::Param(1));
    assert_eq!(prog.instructions[1].operands[2], Operand::Param(0));
    assert_eq!(prog.name, "", "no .kernel: empty name");
}

#[test]
fn regs_default_and_explicit() {
    assert_eq!(ok("EXIT\n").regs, 0);
    assert_eq!(ok("MOV RZ, 1\n").regs, 0);
    assert_eq!(ok("MOV R3, R1\n").regs, 4);
    assert_eq!(ok("LDG R0, [R9+4]\n").regs, 10);
    assert_eq!(ok(".regs 32\nMOV R3, R1\n").regs, 32);
    assert_eq!(ok(".regs 4\nMOV R3, R1\n").regs, 4);
    assert_eq!(ok(".regs 255\nMOV R254, R1\n").regs, 255);
    let e = errs(".regs 3\nMOV R3, R1\n");
    assert_eq!(e.0.len(), 1);
    let d = &e.0[0];
    assert_eq!((d.line, d.col), (1, 7));
    assert!(d.message.contains("R3"), "{}", d.message);
}

#[test]
fn control_codes_and_guards() {
    let prog = ok("[B0-2--5:R3:W1:-:S15] @!P3 IADD R1, R1, 1\n\
         [B------:R-:W-:Y:S01] EXIT\n\
         @PT NOP\n\
         @!PT NOP\n\
         lbl: [B------:R-:W0:-:S04] @P6 LDG R2, [R1]\n");
    let i = &prog.instructions;
    let c = i[0].control.expect("control code");
    assert_eq!(c.wait_mask, 0b100101);
    assert_eq!(c.read_barrier, Some(3));
    assert_eq!(c.write_barrier, Some(1));
    assert!(!c.yield_hint);
    assert_eq!(c.stall, 15);
    assert_eq!(
        i[0].guard,
        Guard {
            pred: Pred(3),
            negated: true
        }
    );
    assert_eq!(
        i[1].control,
        Some(ControlCode::parse("B------:R-:W-:Y:S01").unwrap())
    );
    assert!(i[1].guard.is_always());
    assert!(i[2].guard.is_always());
    assert_eq!(
        i[3].guard,
        Guard {
            pred: Pred::PT,
            negated: true
        }
    );
    assert!(i[3].control.is_none());
    assert_eq!(i[4].guard.pred, Pred(6));
    assert_eq!(i[4].control.unwrap().write_barrier, Some(0));
    assert_eq!(prog.labels, vec![("lbl".to_string(), 4)]);
}

#[test]
fn directives_and_case() {
    let prog = ok("  .KERNEL Saxpy\n.addressing word\n.shared 4096 // bytes\n\
                   iadd r1, r2, 0X1f\n  ; just a comment\n\n  exit ; bye\n");
    assert_eq!(prog.name, "Saxpy");
    assert_eq!(prog.addressing, Addressing::Word);
    assert_eq!(prog.shared_bytes, 4096);
    assert_eq!(prog.instructions[0].operands, vec![r(1), r(2), imm(31)]);
    assert_eq!(prog.instructions[1].op, Opcode::Exit);
    assert!(errs("").0[0].message.contains("no instructions"));
    assert_eq!(ok("\r\nEXIT\r\n").instructions.len(), 1);
}

#[test]
fn each_instruction_has_its_source_line() {
    // Labels alone, directives, comments and blank lines take lines but no instruction; a
    // label before an instruction shares its line; CRLF counts as one line end.
    let src =
        ".kernel k\r\n// comment\r\n\r\ntop:\r\n    MOV R1, 2\r\nnext: IADD R1, R1, 1 ; c\r\n\
               .param n\r\n  ; only a comment\r\n    @P0 BRA top\r\n    EXIT";
    let prog = ok(src);
    assert_eq!(prog.lines, vec![5, 6, 9, 10]);
    // A byte-order mark does not shift the lines (as it does not shift the diagnostics).
    let with_bom = format!("\u{feff}{src}");
    let prog = warpscope::asm::assemble(warpscope::asm::Dialect::Native, &with_bom, "k").unwrap();
    assert_eq!(prog.lines, vec![5, 6, 9, 10]);
    // The JSON of a program without lines (one written before them) still loads.
    let mut json: serde_json::Value = serde_json::to_value(&prog).unwrap();
    assert!(json.as_object_mut().unwrap().remove("lines").is_some());
    let old: Program = serde_json::from_value(json).unwrap();
    assert!(old.lines.is_empty());
    assert_eq!(old, without_lines(prog));
}

#[test]
fn unnamed_program_round_trips() {
    let prog = ok("MOV R1, 2\nEXIT\n");
    assert_eq!(prog.name, "");
    assert_eq!(without_lines(ok(&prog.to_string())), without_lines(prog));
}

// --- errors -----------------------------------------------------------------------------------

fn rendered(src: &str) -> String {
    errs(src).render("k.sasm")
}

#[test]
fn error_unknown_opcode() {
    let out = rendered(".kernel k\n    IADX R1, R2, R3\n");
    assert!(
        out.starts_with("k.sasm:2:5: error: unknown opcode `IADX`\n"),
        "{out}"
    );
    assert!(out.contains("= hint: did you mean IADD"), "{out}");
    assert!(
        out.contains("2 |     IADX R1, R2, R3\n  |     ^\n"),
        "{out}"
    );
}

#[test]
fn error_wrong_operand_count() {
    let out = rendered("  [B------:R-:W-:-:S01] IADD R1, R2\n");
    assert!(
        out.starts_with("k.sasm:1:25: error: `IADD` takes 3 operands, found 2\n"),
        "{out}"
    );
    assert!(
        out.contains("= hint: expected: IADD Rd, Ra|imm, Rb|imm\n"),
        "{out}"
    );
    let out = rendered("EXIT R1\n");
    assert!(out.starts_with("k.sasm:1:1: error: `EXIT` takes 0 operands, found 1\n"));
    assert!(out.contains("= hint: expected: EXIT\n"), "{out}");
}

#[test]
fn error_wrong_operand_kind() {
    let out = rendered("LDG R1, R2\n");
    assert!(
        out.starts_with("k.sasm:1:9: error: expected a memory operand"),
        "{out}"
    );
    assert!(
        out.contains("= hint: expected: LDG Rd, [Ra+imm]\n"),
        "{out}"
    );
    let out = rendered("ISETP.LT R1, R2, R3\n");
    assert!(
        out.starts_with("k.sasm:1:10: error: expected a destination predicate, found `R1`"),
        "{out}"
    );
    let out = rendered("MOV R1, P0\n");
    assert!(
        out.starts_with("k.sasm:1:9: error: expected a register, immediate"),
        "{out}"
    );
    assert!(out.contains("expected: MOV Rd, Ra|imm"), "{out}");
}

#[test]
fn error_undefined_label() {
    let out = rendered("loop:\n  NOP\n  BRA lop\n  BRA done\n");
    assert!(
        out.starts_with("k.sasm:3:7: error: undefined label `lop`\n"),
        "{out}"
    );
    assert!(out.contains("= hint: did you mean loop?"), "{out}");
    assert!(
        out.contains("k.sasm:4:7: error: undefined label `done`\n"),
        "{out}"
    );
    assert!(out.contains("2 errors"), "{out}");
}

#[test]
fn error_bad_register() {
    let out = rendered("MOV R255, R1\n");
    assert!(
        out.starts_with("k.sasm:1:5: error: register `R255` out of range\n"),
        "{out}"
    );
    assert!(
        out.contains("= hint: registers are R0..R254 and RZ\n"),
        "{out}"
    );
    let out = rendered("LDG R1, [R999+4]\n");
    assert!(
        out.starts_with("k.sasm:1:10: error: register `R999` out of range"),
        "{out}"
    );
    let out = rendered("SEL R1, R2, R3, P7\n");
    assert!(
        out.starts_with("k.sasm:1:17: error: predicate `P7` out of range"),
        "{out}"
    );
    assert!(out.contains("predicates are P0..P6 and PT"), "{out}");
}

#[test]
fn error_bad_control_code() {
    // The stall field starts at offset 16 inside the brackets; its digits at 17.
    let out = rendered("  [B------:R-:W-:Y:S16] EXIT\n");
    assert!(
        out.starts_with(
            "k.sasm:1:21: error: bad control code: stall count must be two digits 00-15\n"
        ),
        "{out}"
    );
    assert!(out.contains("[B------:R-:W-:Y:S01]"), "{out}");
    let out = rendered("[B1-----:R-:W-:Y:S01] EXIT\n");
    assert!(
        out.starts_with("k.sasm:1:3: error: bad control code"),
        "{out}"
    );
    let out = rendered("[B------:R-:W-:Y:S01 EXIT\n");
    assert!(
        out.starts_with("k.sasm:1:1: error: unclosed control code"),
        "{out}"
    );
}

#[test]
fn a_float_literal_is_an_error_only_where_it_would_be_read_as_a_number() {
    for (line, op) in [
        ("IADD R1, RZ, 1.5", "IADD"),
        ("ISETP.LT P0, R1, 0.5", "ISETP.LT"),
        ("SHL R1, R1, 2e0", "SHL"),
    ] {
        let out = rendered(&format!("{line}\nEXIT\n"));
        let col = line.rfind(' ').unwrap() + 2;
        assert!(
            out.starts_with(&format!("k.sasm:1:{col}: error: float literal")),
            "{out}"
        );
        assert!(
            out.contains(&format!("in the integer instruction {op}")),
            "{out}"
        );
    }
    // Float instructions read it as a float; MOV and the bitwise operations move its bits;
    // a hex immediate with an `e` digit is an integer.
    let prog = ok("FADD R1, RZ, 1.5\nMOV R2, 1.5\nXOR R3, R3, -0.0\nIADD R4, RZ, 0xe5\nEXIT\n");
    assert_eq!(prog.instructions[0].operands[2], fimm(1.5));
    assert_eq!(prog.instructions[1].operands[1], fimm(1.5));
    assert_eq!(prog.instructions[2].operands[2], imm(0x8000_0000));
    assert_eq!(prog.instructions[3].operands[2], imm(0xe5));
}

#[test]
fn error_directives_specials_params() {
    let out = rendered(".regz 4\n");
    assert!(
        out.starts_with("k.sasm:1:1: error: unknown directive `.regz`"),
        "{out}"
    );
    assert!(out.contains("did you mean .regs?"), "{out}");
    let out = rendered(".param a\n.param a\n");
    assert!(
        out.starts_with("k.sasm:2:8: error: parameter `a` is declared twice"),
        "{out}"
    );
    let out = rendered("x:\nx:\n");
    assert!(
        out.starts_with("k.sasm:2:1: error: label `x` is defined twice"),
        "{out}"
    );
    let out = rendered("MOV R0, %tid.w\n");
    assert!(
        out.starts_with("k.sasm:1:9: error: unknown special register `%tid.w`"),
        "{out}"
    );
    assert!(out.contains("did you mean %tid.x"), "{out}");
    let out = rendered(".param alpha\n.param beta\nMOV R0, %param.gamma\n");
    assert!(
        out.starts_with("k.sasm:3:9: error: unknown parameter `%param.gamma`"),
        "{out}"
    );
    assert!(out.contains("declared parameters: alpha, beta"), "{out}");
    let out = rendered(".kernel a\n.kernel b\n");
    assert!(
        out.starts_with("k.sasm:2:1: error: duplicate `.kernel` directive"),
        "{out}"
    );
    assert!(out.contains("first given on line 1"), "{out}");
    let out = rendered(".regs 4 5\n");
    assert!(
        out.starts_with("k.sasm:1:9: error: unexpected `5` after `4`"),
        "{out}"
    );
    let out = rendered("NOP\n.regs\n");
    assert!(
        out.starts_with("k.sasm:2:1: error: `.regs` expects a register count"),
        "{out}"
    );
    let out = rendered(".addressing bytes\n");
    assert!(out.contains("expected: .addressing byte|word"), "{out}");
    let out = rendered("MOV R0, 4294967296\nFADD R0, R0, 1e39\nLDG R0, [R1+2147483648]\n");
    assert!(
        out.contains("k.sasm:1:9: error: immediate `4294967296` does not fit"),
        "{out}"
    );
    assert!(
        out.contains("k.sasm:2:14: error: float literal `1e39` is out of f32 range"),
        "{out}"
    );
    assert!(out.contains("k.sasm:3:13: error: memory offset"), "{out}");
}

#[test]
fn several_errors_reported_in_one_run() {
    let src = ".kernel k\n\
               IADX R1, R2, R3\n\
               IADD R1, R2\n\
               MOV R300, 1\n\
               ok: NOP\n\
               BRA nowhere\n\
               [B------:R-:W-:Y:S99] EXIT\n\
               .bogus\n";
    let e = errs(src);
    let at: Vec<(usize, usize)> = e.0.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(at, vec![(2, 1), (3, 1), (4, 5), (6, 5), (7, 19), (8, 1)]);
    assert!(e
        .render("k.sasm")
        .ends_with("error: could not assemble k.sasm: 6 errors\n"));
}

// --- properties -------------------------------------------------------------------------------

/// Random raw material for one operand slot, interpreted according to the slot's kind.
#[derive(Debug, Clone)]
struct RawOperand {
    choice: u8,
    reg: u8,
    pred: u8,
    negated: bool,
    imm: u32,
    offset: i32,
    special: usize,
    param: usize,
    target: u32,
}

fn imm_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        (-70000i32..70000).prop_map(|v| v as u32),
        any::<f32>().prop_map(f32::to_bits),
        (-1000i32..1000).prop_map(|v| (v as f32 / 8.0).to_bits()),
        prop::sample::select(vec![
            f32::NAN.to_bits(),
            0xffc0_0001,
            f32::INFINITY.to_bits(),
            f32::NEG_INFINITY.to_bits(),
            1,           // smallest subnormal
            0x007f_ffff, // largest subnormal
            0x8000_0000, // -0.0
            f32::MAX.to_bits(),
            f32::MIN_POSITIVE.to_bits(),
            1e-7f32.to_bits(),
            1e16f32.to_bits(),
            65536,
            65537,
            0xffff_0000,
            0xfffe_ffff,
        ]),
    ]
}

fn raw_operand() -> impl Strategy<Value = RawOperand> {
    (
        any::<u8>(),
        prop_oneof![0u8..=255, 250u8..=255],
        0u8..8,
        any::<bool>(),
        imm_bits(),
        prop_oneof![any::<i32>(), -64i32..64, Just(i32::MIN), Just(i32::MAX)],
        0..SpecialReg::ALL.len(),
        any::<usize>(),
        any::<u32>(),
    )
        .prop_map(
            |(choice, reg, pred, negated, imm, offset, special, param, target)| RawOperand {
                choice,
                reg,
                pred,
                negated,
                imm,
                offset,
                special,
                param,
                target,
            },
        )
}

type RawInst = (
    usize,
    Option<(u8, bool)>,
    Option<ControlCode>,
    Vec<RawOperand>,
);

fn control_code() -> impl Strategy<Value = ControlCode> {
    (
        0u8..64,
        prop::option::of(0u8..6),
        prop::option::of(0u8..6),
        any::<bool>(),
        0u8..16,
    )
        .prop_map(
            |(wait_mask, read_barrier, write_barrier, yield_hint, stall)| ControlCode {
                wait_mask,
                read_barrier,
                write_barrier,
                yield_hint,
                stall,
            },
        )
}

fn raw_inst() -> impl Strategy<Value = RawInst> {
    (
        any::<usize>(),
        prop::option::of((0u8..8, any::<bool>())),
        prop::option::of(control_code()),
        prop::collection::vec(raw_operand(), 4),
    )
}

fn ident_strategy(prefix: &'static str) -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.$]{0,8}".prop_map(move |s| format!("{prefix}{s}"))
}

fn build_operand(kind: OperandKind, raw: &RawOperand, n_params: usize, len: u32) -> Operand {
    let reg = Reg(raw.reg);
    match kind {
        OperandKind::DstReg => Operand::Reg(reg),
        OperandKind::DstPred => Operand::Pred {
            pred: Pred(raw.pred),
            negated: false,
        },
        OperandKind::PredSrc => Operand::Pred {
            pred: Pred(raw.pred),
            negated: raw.negated,
        },
        OperandKind::Mem => Operand::Mem {
            base: reg,
            offset: raw.offset,
        },
        OperandKind::Target => Operand::Target(raw.target % (len + 1)),
        OperandKind::Src => match raw.choice % 4 {
            0 => Operand::Reg(reg),
            1 => Operand::Special(SpecialReg::ALL[raw.special]),
            2 if n_params > 0 => Operand::Param((raw.param % n_params) as u16),
            _ => Operand::Imm(raw.imm),
        },
    }
}

fn program_strategy() -> impl Strategy<Value = Program> {
    (
        prop_oneof![1 => Just(String::new()), 7 => ident_strategy("k")],
        prop::collection::vec(raw_inst(), 1..24),
        prop::collection::btree_set(ident_strategy("p_"), 0..4),
        prop::collection::vec((ident_strategy("L_x"), any::<u32>()), 0..4),
        any::<u8>(),
        prop_oneof![Just(0u32), any::<u32>()],
        any::<bool>(),
    )
        .prop_map(
            |(name, raws, params, extra_labels, extra_regs, shared, word)| {
                let params: Vec<String> = params.into_iter().collect();
                let ops = Opcode::all();
                let len = raws.len() as u32;
                let instructions: Vec<Instruction> = raws
                    .iter()
                    .map(|(op_i, guard, control, raw_ops)| {
                        let op = ops[op_i % ops.len()];
                        let operands = op
                            .signature()
                            .iter()
                            .zip(raw_ops)
                            .map(|(k, raw)| build_operand(*k, raw, params.len(), len))
                            .collect();
                        Instruction {
                            guard: guard.map_or(Guard::ALWAYS, |(pred, negated)| Guard {
                                pred: Pred(pred),
                                negated,
                            }),
                            op,
                            operands,
                            control: *control,
                        }
                    })
                    .collect();
                // Every branch target gets a label; a few extra labels (possibly sharing a PC).
                let mut labels: Vec<(String, u32)> = Vec::new();
                let mut targets: Vec<u32> =
                    instructions.iter().filter_map(|i| i.target()).collect();
                targets.sort_unstable();
                targets.dedup();
                for pc in targets {
                    labels.push((format!("L_{pc}"), pc));
                }
                for (i, (n, pc)) in extra_labels.into_iter().enumerate() {
                    labels.push((format!("{n}_{i}"), pc % (len + 1)));
                }
                labels.sort_by_key(|l| l.1); // stable: definition order within a PC
                let used = Program::regs_used(&instructions);
                let regs = (used + extra_regs as u16 % 8).min(255);
                Program {
                    name,
                    instructions,
                    labels,
                    regs,
                    shared_bytes: shared,
                    params,
                    addressing: if word {
                        Addressing::Word
                    } else {
                        Addressing::Byte
                    },
                    lines: Vec::new(),
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn assemble_of_disassemble_is_identity(prog in program_strategy()) {
        let text = prog.to_string();
        match assemble(&text) {
            Ok(back) => {
                // Each instruction's line of the listing is its disassembly.
                let listed: Vec<&str> = text.lines().collect();
                prop_assert_eq!(back.lines.len(), back.instructions.len());
                for (pc, &line) in back.lines.iter().enumerate() {
                    let at = listed.get(line as usize - 1).map(|l| l.trim().to_string());
                    prop_assert_eq!(at, Some(prog.instruction_text(pc as u32)));
                }
                prop_assert_eq!(without_lines(back), prog, "text:\n{}", text)
            }
            Err(e) => prop_assert!(false, "did not assemble:\n{}\n{}", text, e.render("gen.sasm")),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn garbage_never_panics(text in ".*") {
        let _ = assemble(&text);
    }

    #[test]
    fn line_noise_never_panics(
        lines in prop::collection::vec("[ \\t.@!%\\[\\]:+,;/0-9A-Za-z_$x\u{e9}\u{1F600}-]{0,40}", 0..12)
    ) {
        let _ = assemble(&lines.join("\n"));
    }

    #[test]
    fn mutated_kernels_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<char>()), 1..8)
    ) {
        let mut chars: Vec<char> = EVERY_FORM.chars().collect();
        for (at, kind, c) in edits {
            let i = at.index(chars.len() + 1);
            match kind {
                0 => chars.insert(i, c),
                1 if i < chars.len() => { chars.remove(i); }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        let text: String = chars.into_iter().collect();
        if let Err(e) = assemble(&text) {
            // Every diagnostic points into the source and renders.
            for d in &e.0 {
                prop_assert!(d.line >= 1 && d.col >= 1);
            }
            let _ = e.render("m.sasm");
        }
    }
}

#[test]
fn a_kernel_without_instructions_is_an_assembly_error() {
    // `run` used to be the first to say so, at launch; `asm` printed an empty listing.
    for (src, at) in [("", "k.sasm:1:1"), (".kernel k\n.regs 2\n", "k.sasm:2:1")] {
        let out = rendered(src);
        assert!(
            out.starts_with(&format!("{at}: error: the kernel has no instructions\n")),
            "{out}"
        );
        assert!(out.contains("ending in `EXIT`"), "{out}");
    }
}
