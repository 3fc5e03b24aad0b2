//! The tiny-gpu front ends (text and hex): decoding, the R13–R15 mapping, equality of the two
//! front ends, disassembly round trips through the native assembler, located errors, and
//! robustness against arbitrary input.

use proptest::prelude::*;
use warpscope::asm::tinygpu::{assemble_hex, assemble_text};
use warpscope::asm::AsmErrors;
use warpscope::isa::{
    Addressing, BranchCond, Instruction, Opcode, Operand, Program, Reg, SpecialReg,
};

fn kernel(file: &str) -> String {
    let path = format!("{}/kernels/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn hex(source: &str) -> Program {
    assemble_hex(source).unwrap_or_else(|e| panic!("{e}"))
}

fn text(source: &str) -> Program {
    assemble_text(source).unwrap_or_else(|e| panic!("{e}"))
}

fn r(i: u8) -> Operand {
    Operand::Reg(Reg(i))
}

fn mem(i: u8) -> Operand {
    Operand::Mem {
        base: Reg(i),
        offset: 0,
    }
}

fn inst(op: Opcode, operands: Vec<Operand>) -> Instruction {
    Instruction::new(op, operands)
}

/// The single decoded instruction of a one-word program (padded with RETs for branch targets).
fn one(word: &str) -> Instruction {
    hex(&format!("{word} f000 f000 f000 f000 f000 f000 f000 f000"))
        .instructions
        .remove(0)
}

/// `(line, col, message)` of every diagnostic.
fn located(e: &AsmErrors) -> Vec<(usize, usize, String)> {
    e.0.iter()
        .map(|d| (d.line, d.col, d.message.clone()))
        .collect()
}

fn hint(e: &AsmErrors, i: usize) -> String {
    e.0[i].hint.clone().unwrap_or_default()
}

// ───────────────────────────── vecadd ─────────────────────────────

#[test]
fn vecadd_hex_and_text_are_equal_programs() {
    let from_hex = hex(&kernel("vecadd_tiny.hex"));
    let mut from_text = text(&kernel("vecadd_tiny.tgpu"));
    assert_eq!(from_hex.instructions.len(), 13);
    // Only the text has lines to name.
    assert!(from_hex.lines.is_empty());
    assert_eq!(from_text.lines.len(), 13);
    from_text.lines.clear();
    assert_eq!(from_hex, from_text);
}

#[test]
fn text_instructions_keep_their_source_lines() {
    // vecadd_tiny.tgpu: the comment header, `.threads` and blank lines hold no instruction.
    let p = text(&kernel("vecadd_tiny.tgpu"));
    assert_eq!(
        p.lines,
        vec![9, 10, 12, 13, 14, 16, 17, 19, 20, 22, 24, 25, 27]
    );
    // A label on its own line takes a line; one before an instruction shares it; CRLF ends
    // one line.
    let p = text("; c\r\nCONST R0, #1\r\nL:\r\n\r\nM: ADD R0, R0, R0\r\nBRn L\r\nRET");
    assert_eq!(p.lines, vec![2, 5, 6, 7]);
    assert_eq!(p.lines.len(), p.instructions.len());
}

#[test]
fn vecadd_decodes_as_the_seed_describes() {
    let p = hex(&kernel("vecadd_tiny.hex"));
    let ctaid = Operand::Special(SpecialReg::CtaidX);
    let ntid = Operand::Special(SpecialReg::NtidX);
    let tid = Operand::Special(SpecialReg::TidX);
    let expected = vec![
        inst(Opcode::Imul, vec![r(0), ctaid, ntid]),
        inst(Opcode::Iadd, vec![r(0), r(0), tid]),
        inst(Opcode::Mov, vec![r(1), Operand::Imm(0)]),
        inst(Opcode::Mov, vec![r(2), Operand::Imm(24)]),
        inst(Opcode::Mov, vec![r(3), Operand::Imm(48)]),
        inst(Opcode::Iadd, vec![r(4), r(1), r(0)]),
        inst(Opcode::Ldg, vec![r(4), mem(4)]),
        inst(Opcode::Iadd, vec![r(5), r(2), r(0)]),
        inst(Opcode::Ldg, vec![r(5), mem(5)]),
        inst(Opcode::Iadd, vec![r(6), r(4), r(5)]),
        inst(Opcode::Iadd, vec![r(7), r(3), r(0)]),
        inst(Opcode::Stg, vec![mem(7), r(6)]),
        inst(Opcode::Exit, vec![]),
    ];
    assert_eq!(p.instructions, expected);
    assert_eq!(p.name, "");
    assert_eq!(p.regs, 8);
    assert_eq!(p.addressing, Addressing::Word);
    assert_eq!(p.shared_bytes, 0);
    assert!(p.params.is_empty());
    assert!(p.labels.is_empty());
}

// ───────────────────────────── hex decoding ─────────────────────────────

#[test]
fn decodes_every_opcode() {
    assert_eq!(one("0x0000"), inst(Opcode::Nop, vec![]));
    assert_eq!(one("0x2123"), inst(Opcode::Cmp, vec![r(2), r(3)]));
    assert_eq!(one("0x3123"), inst(Opcode::Iadd, vec![r(1), r(2), r(3)]));
    assert_eq!(one("0x4123"), inst(Opcode::Isub, vec![r(1), r(2), r(3)]));
    assert_eq!(one("0x5123"), inst(Opcode::Imul, vec![r(1), r(2), r(3)]));
    assert_eq!(one("0x6123"), inst(Opcode::Idiv, vec![r(1), r(2), r(3)]));
    assert_eq!(one("0x7120"), inst(Opcode::Ldg, vec![r(1), mem(2)]));
    assert_eq!(one("0x8023"), inst(Opcode::Stg, vec![mem(2), r(3)]));
    assert_eq!(
        one("0x91ff"),
        inst(Opcode::Mov, vec![r(1), Operand::Imm(255)])
    );
    assert_eq!(one("0xf000"), inst(Opcode::Exit, vec![]));
    // Bits an instruction does not use are ignored, as the hardware's decoder ignores them.
    assert_eq!(one("0x0fff"), inst(Opcode::Nop, vec![]));
    assert_eq!(one("0xfabc"), inst(Opcode::Exit, vec![]));
}

#[test]
fn decodes_branch_masks_and_targets() {
    for (word, mask) in [
        ("0x1803", BranchCond::N),
        ("0x1403", BranchCond::Z),
        ("0x1203", BranchCond::P),
        ("0x1c03", BranchCond::N | BranchCond::Z),
        ("0x1a03", BranchCond::N | BranchCond::P),
        ("0x1603", BranchCond::Z | BranchCond::P),
        ("0x1e03", 0b111),
        ("0x1f03", 0b111), // bit 8 is unused
    ] {
        assert_eq!(
            one(word),
            inst(Opcode::Bra(BranchCond::Nzp(mask)), vec![Operand::Target(3)]),
            "{word}"
        );
    }
}

#[test]
fn branch_targets_are_labelled_by_pc() {
    // LOOP at 1, forward branch to 4, a second branch to 1, and a target at the end (pc 5).
    let p = hex("1e04 2120 1801 1c05 1201 f000");
    assert_eq!(
        p.labels,
        vec![
            ("L1".to_string(), 1),
            ("L4".to_string(), 4),
            ("L5".to_string(), 5)
        ]
    );
    assert_eq!(p.instructions[0].target(), Some(4));
    assert_eq!(p.instructions[3].target(), Some(5));
}

#[test]
fn r13_to_r15_are_special_sources_and_dropped_destinations() {
    let ctaid = Operand::Special(SpecialReg::CtaidX);
    let ntid = Operand::Special(SpecialReg::NtidX);
    let tid = Operand::Special(SpecialReg::TidX);
    let rz = Operand::Reg(Reg::RZ);
    assert_eq!(one("0x3def"), inst(Opcode::Iadd, vec![rz, ntid, tid]));
    assert_eq!(one("0x4fdd"), inst(Opcode::Isub, vec![rz, ctaid, ctaid]));
    assert_eq!(one("0x2ef0"), inst(Opcode::Cmp, vec![tid, r(0)]));
    assert_eq!(one("0x807f"), inst(Opcode::Stg, vec![mem(7), tid]));
    assert_eq!(one("0x7d10"), inst(Opcode::Ldg, vec![rz, mem(1)]));
    assert_eq!(one("0x9d05"), inst(Opcode::Mov, vec![rz, Operand::Imm(5)]));
    // RZ and special registers do not count towards the register file size.
    assert_eq!(hex("0x3def f000").regs, 0);
    assert_eq!(hex("0x3cef f000").regs, 13);
}

#[test]
fn hex_accepts_the_usual_spellings() {
    let plain = hex("50de 300f f000");
    for source in [
        "0x50de,0x300f,0xf000",
        "[0x50DE, 0X300F, 0xF000]",
        "const PROG = [0x50de, 0x300f, 0xf000];",
        "PROG = [0x50de, 0x300f, 0xf000,]",
        "let prog: number[] = [\n  0x50de, // MUL\n  0x300f, ; ADD\n  0xf000  # RET\n];\n",
        "\r\n0x50de\r\n0x300f\r\n0xf000\r\n",
    ] {
        assert_eq!(hex(source), plain, "{source:?}");
    }
}

// ───────────────────────────── text ─────────────────────────────

#[test]
fn text_syntax_variants_give_the_same_program() {
    let canonical =
        text("MUL R0, %blockIdx, %blockDim\nADD R0, R0, %threadIdx\nCONST R1, #16\nRET\n");
    for source in [
        "mul r0 r13 r14\nadd r0 r0 r15\nconst r1 #0x10\nret",
        "  Mul R0,R13,R14 // comment\n\tADD R0 , R0 ,%THREADIDX\nCONST R1, #16;c\r\nRET ; end",
        ".threads 8\nstart: MUL R0, %blockIdx, %blockDim\nADD R0, R0, %threadIdx\nCONST R1, #+16\nRET",
    ] {
        let p = text(source);
        assert_eq!(p.instructions, canonical.instructions, "{source:?}");
    }
}

#[test]
fn text_branches_resolve_labels() {
    let source = "\
        CONST R0, #0
        CONST R1, #1
        CONST R2, #4
LOOP:
        ADD R0, R0, R1
        CMP R0, R2
        BRn LOOP        ; while i < 4
        brZP done
        BRnzp LOOP
done: RET
";
    let p = text(source);
    assert_eq!(
        p.labels,
        vec![("LOOP".to_string(), 3), ("done".to_string(), 8)]
    );
    let bra = |mask, pc| {
        inst(
            Opcode::Bra(BranchCond::Nzp(mask)),
            vec![Operand::Target(pc)],
        )
    };
    assert_eq!(p.instructions[4], inst(Opcode::Cmp, vec![r(0), r(2)]));
    assert_eq!(p.instructions[5], bra(BranchCond::N, 3));
    assert_eq!(p.instructions[6], bra(BranchCond::Z | BranchCond::P, 8));
    assert_eq!(p.instructions[7], bra(0b111, 3));
    // The same program as words gives the same instructions (labels are named differently).
    let words = hex("9000 9101 9204 3001 2002 1803 1608 1e03 f000");
    assert_eq!(words.instructions, p.instructions);
    assert_eq!(
        words.labels,
        vec![("L3".to_string(), 3), ("L8".to_string(), 8)]
    );
}

// ───────────────────────────── round trip through the native assembler ─────────────────────────────

#[test]
fn disassembly_reassembles_with_the_native_assembler() {
    let loop_text = "CONST R0, #0\nCONST R1, #1\nL: ADD R0, R0, R1\nCMP R0, %blockDim\nBRn L\nBRz end\nSTR R0, %threadIdx\nend: RET\n";
    for mut p in [
        hex(&kernel("vecadd_tiny.hex")),
        text(&kernel("vecadd_tiny.tgpu")),
        text(loop_text),
        hex("1e04 2120 1801 1c05 1201 f000"),
        hex("0000 3def 9dff 7d10 807f f000"),
    ] {
        p.name = "tiny".to_string();
        let listing = p.to_string();
        let again = warpscope::asm::native::assemble(&listing)
            .unwrap_or_else(|e| panic!("{listing}\n{}", e.render("listing")));
        // (The lines are the listing's, not the source's; hex has none.)
        let (mut again, mut p) = (again, p);
        again.lines.clear();
        p.lines.clear();
        assert_eq!(again, p, "{listing}");
    }
}

// ───────────────────────────── errors ─────────────────────────────

#[test]
fn hex_invalid_opcode_nibble_is_located() {
    let e = assemble_hex("0x50de\n  0xa123, 0xf000\n\t0xe000").unwrap_err();
    let at: Vec<_> = located(&e).iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(at, vec![(2, 3), (3, 2)]);
    assert_eq!(e.0[0].message, "invalid opcode 0xa in word 0xa123");
    assert!(hint(&e, 0).contains("15 RET"));
}

#[test]
fn hex_bad_words_are_all_reported() {
    let e = assemble_hex("const PROG = [0x50de, 0xzz, 0x12345, ffffffffffffffffffffffff, 0x];")
        .unwrap_err();
    let found = located(&e);
    assert_eq!(found.len(), 4, "{e}");
    assert_eq!(
        found[0],
        (1, 23, "expected a 16-bit hex word, found `0xzz`".into())
    );
    assert_eq!(
        found[1],
        (
            1,
            29,
            "hex word `0x12345` (0x12345) does not fit in 16 bits".into()
        )
    );
    assert_eq!((found[2].0, found[2].1), (1, 38));
    assert_eq!(
        found[3],
        (1, 64, "expected a 16-bit hex word, found `0x`".into())
    );
}

#[test]
fn hex_structure_errors() {
    let e = assemble_hex("[0x1, , 0x2").unwrap_err();
    assert_eq!(
        located(&e),
        vec![
            (1, 1, "unclosed `[`".into()),
            (1, 7, "expected a word before `,`".into())
        ]
    );
    let e = assemble_hex("0xf000 ]").unwrap_err();
    assert_eq!(located(&e), vec![(1, 8, "unmatched `]`".into())]);
    let e = assemble_hex("[0xf000] 0x0000").unwrap_err();
    assert_eq!(located(&e)[0].1, 10);
    let e = assemble_hex("1 + 2 = [f000]").unwrap_err();
    assert_eq!(
        located(&e),
        vec![(1, 1, "unexpected `1` before `=`".into())]
    );
    let e = assemble_hex("// nothing here\n").unwrap_err();
    assert_eq!(e.0[0].message, "no instruction words found");
}

#[test]
fn hex_branch_errors() {
    let e = assemble_hex("0x1005 0xf000").unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (1, 1));
    assert!(e.0[0].message.contains("empty n,z,p mask"), "{e}");
    let e = assemble_hex("0xf000\n0x1e09 0xf000").unwrap_err();
    assert_eq!(
        located(&e),
        vec![(
            2,
            1,
            "branch word 0x1e09 targets pc 9, past the end of the program (3 words)".into()
        )]
    );
}

#[test]
fn special_register_as_address_is_an_error() {
    let e = assemble_hex("0x70d0 0x80f1 0xf000").unwrap_err();
    let at: Vec<_> = located(&e).iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(at, vec![(1, 1), (1, 8)]);
    assert!(e.0[0]
        .message
        .contains("`%blockIdx` (R13) cannot be a load/store address"));
    assert!(e.0[1].message.contains("`%threadIdx` (R15)"));
    let e = assemble_text("LDR R1, %blockDim\nSTR R15, R1\nRET").unwrap_err();
    let at: Vec<_> = located(&e).iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(at, vec![(1, 9), (2, 5)]);
    assert!(hint(&e, 0).contains("CONST R12, #0"));
}

#[test]
fn const_out_of_range_is_located() {
    let e = assemble_text(
        "CONST R1, #255\n  CONST R1, #256\nCONST R2, #-1\nCONST R3, #99999999999999999999999\nRET",
    )
    .unwrap_err();
    let found = located(&e);
    assert_eq!(found.len(), 3);
    assert_eq!(
        found[0],
        (
            2,
            13,
            "immediate `#256` is out of range: CONST takes 0–255".into()
        )
    );
    assert_eq!((found[1].0, found[1].1), (3, 11));
    assert_eq!((found[2].0, found[2].1), (4, 11));
}

#[test]
fn unknown_mnemonic_has_a_hint() {
    let e = assemble_text("CONST R1, #1\n    ADDD R1, R1, R1\nIADD R1, R1, R1\nBR end\nend: RET")
        .unwrap_err();
    let found = located(&e);
    assert_eq!(
        found[0],
        (2, 5, "unknown tiny-gpu instruction `ADDD`".into())
    );
    assert_eq!(hint(&e, 0), "did you mean `ADD`?");
    assert_eq!((found[1].0, found[1].1), (3, 1));
    assert!(hint(&e, 1).contains("native (.sasm) instruction"), "{e}");
    assert_eq!((found[2].0, found[2].1), (4, 1));
    assert!(hint(&e, 2).contains("BRnzp"));
}

#[test]
fn data_directive_is_rejected_with_a_hint() {
    let e = assemble_text(".threads 8\n  .data 0 1 2 3\nRET").unwrap_err();
    assert_eq!(
        located(&e),
        vec![(2, 3, "`.data` is not supported in warpscope kernels".into())]
    );
    assert!(hint(&e, 0).contains("launch file's `memory` initialisers"));
    let e = assemble_text(".kernel k\n.threads lots\nRET").unwrap_err();
    assert_eq!(
        located(&e),
        vec![
            (1, 1, "unknown directive `.kernel`".into()),
            (2, 10, "`.threads` takes a positive thread count".into())
        ]
    );
}

#[test]
fn operand_errors_are_located() {
    let source = "\
ADD R1, R2, #3
ADD R1, R2
SUB R1, R2, R16
CMP R1, %laneid
BRn tpo
ADD R1,, R2
BRz R3
CONST R1, 5
top: top: RET
";
    let e = assemble_text(source).unwrap_err();
    let found = located(&e);
    let at: Vec<_> = found.iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(
        at,
        vec![
            (1, 13),
            (2, 1),
            (3, 13),
            (4, 9),
            (5, 5),
            (6, 7),
            (7, 5),
            (8, 11),
            (9, 6)
        ],
        "{e}"
    );
    assert!(hint(&e, 0).contains("CONST Rn, #N"));
    assert_eq!(found[1].2, "`ADD` takes 3 operands, found 2");
    assert_eq!(hint(&e, 1), "expected `ADD Rd, Rs, Rt`");
    assert_eq!(found[2].2, "there is no register `R16`");
    assert_eq!(found[4].2, "undefined label `tpo`");
    assert_eq!(hint(&e, 4), "did you mean `top`?");
    assert_eq!(hint(&e, 7), "write immediates with a `#`: `#5`");
    assert_eq!(found[8].2, "label `top` is defined twice");
}

#[test]
fn branch_to_a_label_beyond_pc_255_is_an_error() {
    let mut source = String::from("BRnzp far\n");
    source.push_str(&"NOP\n".repeat(300));
    source.push_str("far: RET\n");
    let e = assemble_text(&source).unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (1, 7));
    assert!(e.0[0].message.contains("pc 301"), "{e}");
}

#[test]
fn empty_text_is_an_error() {
    for source in ["", "\n\n; only comments\n", "label_only:\n"] {
        let e = assemble_text(source).unwrap_err();
        assert_eq!(e.0[0].message, "no instructions found", "{source:?}");
    }
}

// ───────────────────────────── robustness ─────────────────────────────

proptest! {
    #[test]
    fn arbitrary_text_never_panics(source in "\\PC*") {
        let _ = assemble_text(&source);
        let _ = assemble_hex(&source);
    }

    #[test]
    fn tiny_looking_text_never_panics(
        lines in prop::collection::vec(
            "(L[0-9]: ?)?(ADD|CONST|BRnz|LDR|STR|RET|\\.data|\\.threads|CMP)? ?(R1[0-9]?|%blockIdx|#[0-9x]{0,5}|L[0-9]|,|é| |;)*",
            0..12,
        )
    ) {
        let source = lines.join("\n");
        if let Err(e) = assemble_text(&source) {
            prop_assert!(!e.0.is_empty());
            for d in &e.0 {
                let _ = d.render("fuzz.tgpu");
            }
        }
    }

    #[test]
    fn arbitrary_words_decode_or_report(words in prop::collection::vec(any::<u16>(), 0..40)) {
        let source: Vec<String> = words.iter().map(|w| format!("0x{w:04x}")).collect();
        match assemble_hex(&source.join(", ")) {
            Ok(p) => {
                prop_assert_eq!(p.instructions.len(), words.len());
                prop_assert!(p.labels.iter().all(|(_, pc)| *pc as usize <= words.len()));
            }
            Err(e) => {
                prop_assert!(!e.0.is_empty());
                prop_assert!(e.0.iter().all(|d| d.line == 1));
            }
        }
    }
}
