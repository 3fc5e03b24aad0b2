//! The tiny-gpu front end (seed 000): tiny-gpu's 16-bit ISA, as assembly text (`.tgpu`) or as
//! the program memory's hex words (`.hex`), turned into the ordinary native [`Program`].
//!
//! tiny-gpu (by adam-maj) has sixteen 8-bit registers per thread, of which `R13`–`R15` are the
//! read-only `%blockIdx`, `%blockDim` and `%threadIdx`; memory is addressed in words. The
//! translation is one native instruction per tiny-gpu instruction, so PCs are preserved:
//!
//! | word              | tiny-gpu            | native                               |
//! |-------------------|---------------------|--------------------------------------|
//! | `0000 ---- ---- ----` | `NOP`           | `NOP`                                |
//! | `0001 nzp- iiii iiii` | `BRnzp label`   | `BRA.NZP label` (mask from n, z, p)  |
//! | `0010 ---- ssss tttt` | `CMP Rs, Rt`    | `CMP Rs, Rt` (NZP from sign of Rs−Rt) |
//! | `0011 dddd ssss tttt` | `ADD Rd, Rs, Rt` | `IADD` (`SUB`→`ISUB`, `MUL`→`IMUL`, `DIV`→`IDIV`) |
//! | `0111 dddd ssss ----` | `LDR Rd, Rs`    | `LDG Rd, [Rs]`                       |
//! | `1000 ---- ssss tttt` | `STR Rs, Rt`    | `STG [Rs], Rt` (stores Rt at address Rs) |
//! | `1001 dddd iiii iiii` | `CONST Rd, #imm` | `MOV Rd, imm`                       |
//! | `1111 ---- ---- ----` | `RET`           | `EXIT`                               |
//!
//! As a source, `R13`/`R14`/`R15` become `%ctaid.x`/`%ntid.x`/`%tid.x`; as a destination they
//! become `RZ` (tiny-gpu drops those writes: `if (rd < 13)`). They cannot be a load/store
//! address register, because a native memory base must be a general register; that rare case is
//! reported as an error. Programs use [`Addressing::Word`]: tiny-gpu address `a` is byte `4a`.
//!
//! Simplifications: registers are 32 bits wide here, not tiny-gpu's 8. Bits an instruction does
//! not use (the `-` above) are ignored in hex, as tiny-gpu's decoder ignores them.
//!
//! **Text syntax** (as tiny-gpu's own kernels): one instruction per line, operands separated by
//! commas or whitespace, `#imm` immediates (decimal or `#0x..`, 0–255), `;` or `//` comments,
//! `NAME:` labels (on their own line or before an instruction), case-insensitive mnemonics, and
//! `%blockIdx`, `%blockDim`, `%threadIdx` or `R13`–`R15` for the read-only registers. The
//! directive `.threads N` is accepted and ignored: the launch file sets the block size. `.data`
//! is rejected: memory contents come from the launch file's `memory` initialisers.
//!
//! **Hex syntax**: 16-bit words in hexadecimal (with or without `0x`), separated by commas
//! and/or whitespace, optionally in `[` `]` and optionally preceded by `const NAME =` — so the
//! seed's `const PROG = [0x50de, ...];` line is accepted verbatim. `//`, `;` and `#` start
//! comments. Branch targets are named `L<pc>`.
//!
//! Every error is collected and reported with its line and column; no input panics. Text keeps
//! each instruction's line ([`Program::lines`]); hex, whose words are not lines of a program
//! one writes, keeps none.

use super::diag::{nearest, AsmErrors, Diagnostic};
use crate::isa::{Addressing, BranchCond, Instruction, Opcode, Operand, Program, Reg, SpecialReg};
use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_till1, take_while, take_while1};
use nom::character::complete::{char as chr, digit1, hex_digit1, space0};
use nom::combinator::{all_consuming, opt, recognize};
use nom::sequence::{pair, preceded, terminated};
use nom::IResult;
use std::collections::HashMap;

/// The first read-only register: `R13` = `%blockIdx`, `R14` = `%blockDim`, `R15` = `%threadIdx`.
const FIRST_SPECIAL: u8 = 13;

/// The read-only registers by their tiny-gpu names.
const SPECIAL_NAMES: [(&str, u8); 3] = [("blockIdx", 13), ("blockDim", 14), ("threadIdx", 15)];

/// Every tiny-gpu mnemonic, for "did you mean" hints.
const MNEMONICS: [&str; 17] = [
    "NOP", "BRn", "BRz", "BRp", "BRnz", "BRnp", "BRzp", "BRnzp", "CMP", "ADD", "SUB", "MUL", "DIV",
    "LDR", "STR", "CONST", "RET",
];

fn special_of(r: u8) -> Option<SpecialReg> {
    match r {
        13 => Some(SpecialReg::CtaidX),
        14 => Some(SpecialReg::NtidX),
        15 => Some(SpecialReg::TidX),
        _ => None,
    }
}

fn special_name(r: u8) -> &'static str {
    SPECIAL_NAMES
        .iter()
        .find(|(_, i)| *i == r)
        .map_or("?", |(n, _)| n)
}

/// One decoded tiny-gpu instruction, the meeting point of the text and hex front ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tiny {
    Nop,
    Br {
        mask: u8,
        target: u32,
    },
    Cmp {
        rs: u8,
        rt: u8,
    },
    /// `op` is the opcode nibble: 3 ADD, 4 SUB, 5 MUL, 6 DIV.
    Alu {
        op: u8,
        rd: u8,
        rs: u8,
        rt: u8,
    },
    Ldr {
        rd: u8,
        rs: u8,
    },
    Str {
        rs: u8,
        rt: u8,
    },
    Const {
        rd: u8,
        imm: u8,
    },
    Ret,
}

/// Why an address register cannot be used, or `None` when it can.
fn base_problem(r: u8) -> Option<(String, String)> {
    (r >= FIRST_SPECIAL).then(|| {
        (
            format!(
                "`%{}` (R{r}) cannot be a load/store address register: in warpscope a memory \
                 base must be a general register",
                special_name(r)
            ),
            format!(
                "copy it into an ordinary register first, e.g. `CONST R12, #0` then \
                 `ADD R12, R12, %{}`",
                special_name(r)
            ),
        )
    })
}

/// Translates one tiny-gpu instruction into the native one.
fn lower(t: Tiny) -> Result<Instruction, (String, String)> {
    let src = |r: u8| special_of(r).map_or(Operand::Reg(Reg(r)), Operand::Special);
    let dst = |r: u8| Operand::Reg(if r >= FIRST_SPECIAL { Reg::RZ } else { Reg(r) });
    let mem = |r: u8| match base_problem(r) {
        Some(p) => Err(p),
        None => Ok(Operand::Mem {
            base: Reg(r),
            offset: 0,
        }),
    };
    Ok(match t {
        Tiny::Nop => Instruction::new(Opcode::Nop, vec![]),
        Tiny::Br { mask, target } => Instruction::new(
            Opcode::Bra(BranchCond::Nzp(mask)),
            vec![Operand::Target(target)],
        ),
        Tiny::Cmp { rs, rt } => Instruction::new(Opcode::Cmp, vec![src(rs), src(rt)]),
        Tiny::Alu { op, rd, rs, rt } => {
            let opcode = match op {
                3 => Opcode::Iadd,
                4 => Opcode::Isub,
                5 => Opcode::Imul,
                _ => Opcode::Idiv,
            };
            Instruction::new(opcode, vec![dst(rd), src(rs), src(rt)])
        }
        Tiny::Ldr { rd, rs } => Instruction::new(Opcode::Ldg, vec![dst(rd), mem(rs)?]),
        Tiny::Str { rs, rt } => Instruction::new(Opcode::Stg, vec![mem(rs)?, src(rt)]),
        Tiny::Const { rd, imm } => {
            Instruction::new(Opcode::Mov, vec![dst(rd), Operand::Imm(imm as u32)])
        }
        Tiny::Ret => Instruction::new(Opcode::Exit, vec![]),
    })
}

/// The program of `instructions`; `lines` is each one's source line (empty for hex, which
/// has no lines to name).
fn finish(instructions: Vec<Instruction>, labels: Vec<(String, u32)>, lines: Vec<u32>) -> Program {
    Program {
        name: String::new(),
        regs: Program::regs_used(&instructions),
        instructions,
        labels,
        shared_bytes: 0,
        params: vec![],
        addressing: Addressing::Word,
        lines,
    }
}

/// Parses decimal digits, or `0x` hex digits, into a `u64`; `None` when it overflows.
fn parse_number(text: &str) -> IResult<&str, Option<u64>> {
    alt((
        |i| {
            let (rest, digits) = preceded(tag_no_case("0x"), hex_digit1)(i)?;
            Ok((rest, fold_digits(digits, 16)))
        },
        |i| {
            let (rest, digits) = digit1(i)?;
            Ok((rest, fold_digits(digits, 10)))
        },
    ))(text)
}

fn fold_digits(digits: &str, radix: u32) -> Option<u64> {
    digits.chars().try_fold(0u64, |acc, c| {
        acc.checked_mul(radix as u64)?
            .checked_add(c.to_digit(radix)? as u64)
    })
}

/// The diagnostics of one run, collected in any order and reported in source order.
struct Errors<'s> {
    source: &'s str,
    list: Vec<Diagnostic>,
}

impl<'s> Errors<'s> {
    fn new(source: &'s str) -> Self {
        Errors {
            source,
            list: Vec::new(),
        }
    }

    fn add(&mut self, off: usize, msg: impl Into<String>, hint: Option<String>) {
        let d = Diagnostic::at_offset(self.source, off, msg);
        self.list.push(match hint {
            Some(h) => d.with_hint(h),
            None => d,
        });
    }

    fn push(&mut self, off: usize, (msg, hint): Problem) {
        self.add(off, msg, hint);
    }

    fn finish(mut self) -> Result<(), AsmErrors> {
        if self.list.is_empty() {
            return Ok(());
        }
        self.list.sort_by_key(|d| (d.line, d.col));
        Err(AsmErrors(self.list))
    }
}

// ───────────────────────────── hex front end ─────────────────────────────

/// Decodes one 16-bit word. Branch targets are checked by the caller, who knows the length.
fn decode(w: u16) -> Result<Tiny, (String, String)> {
    let op = (w >> 12) as u8;
    let rd = ((w >> 8) & 15) as u8;
    let rs = ((w >> 4) & 15) as u8;
    let rt = (w & 15) as u8;
    let imm = (w & 255) as u8;
    Ok(match op {
        0 => Tiny::Nop,
        1 => {
            let mask = ((w >> 9) & 7) as u8;
            if mask == 0 {
                return Err((
                    format!("branch word 0x{w:04x} has an empty n,z,p mask (bits 11..9)"),
                    "a tiny-gpu branch needs at least one of n (bit 11), z (bit 10), p (bit 9)"
                        .to_string(),
                ));
            }
            Tiny::Br {
                mask,
                target: imm as u32,
            }
        }
        2 => Tiny::Cmp { rs, rt },
        3..=6 => Tiny::Alu { op, rd, rs, rt },
        7 => Tiny::Ldr { rd, rs },
        8 => Tiny::Str { rs, rt },
        9 => Tiny::Const { rd, imm },
        15 => Tiny::Ret,
        _ => {
            return Err((
                format!("invalid opcode 0x{op:x} in word 0x{w:04x}"),
                "tiny-gpu opcodes are 0 NOP, 1 BRnzp, 2 CMP, 3 ADD, 4 SUB, 5 MUL, 6 DIV, 7 LDR, \
                 8 STR, 9 CONST and 15 RET"
                    .to_string(),
            ))
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HexTok<'a> {
    Open,
    Close,
    Comma,
    Eq,
    Colon,
    Word(&'a str),
}

impl HexTok<'_> {
    fn text(&self) -> &str {
        match self {
            HexTok::Open => "[",
            HexTok::Close => "]",
            HexTok::Comma => ",",
            HexTok::Eq => "=",
            HexTok::Colon => ":",
            HexTok::Word(w) => w,
        }
    }
}

/// Splits hex source into tokens with byte offsets, dropping whitespace and comments.
fn hex_tokens(source: &str) -> Vec<(HexTok<'_>, usize)> {
    let mut toks = Vec::new();
    let mut rest = source;
    loop {
        rest = rest.trim_start();
        let off = source.len() - rest.len();
        let Some(c) = rest.chars().next() else { break };
        let punct = match c {
            '[' => Some(HexTok::Open),
            ']' => Some(HexTok::Close),
            ',' => Some(HexTok::Comma),
            '=' => Some(HexTok::Eq),
            ':' => Some(HexTok::Colon),
            _ => None,
        };
        if let Some(p) = punct {
            toks.push((p, off));
            rest = &rest[1..];
        } else if c == '#' || c == ';' || rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
        } else {
            let end = rest
                .char_indices()
                .skip(1)
                .find(|&(i, c)| {
                    c.is_whitespace()
                        || "[],=:#;".contains(c)
                        || (c == '/' && rest[i..].starts_with("//"))
                })
                .map_or(rest.len(), |(i, _)| i);
            toks.push((HexTok::Word(&rest[..end]), off));
            rest = &rest[end..];
        }
    }
    toks
}

fn is_ident(s: &str) -> bool {
    all_consuming(ident)(s).is_ok()
}

/// Assembles a tiny-gpu program given as 16-bit hex words (see the module docs for the syntax).
pub fn assemble_hex(source: &str) -> Result<Program, AsmErrors> {
    let mut errs = Errors::new(source);
    let toks = hex_tokens(source);
    const FORM_HINT: &str =
        "a hex program is a list of 16-bit words, optionally written `const PROG = [0x50de, ...];`";

    // An optional `const NAME =` / `NAME: type =` header.
    let mut body = &toks[..];
    if let Some(eq) = toks.iter().position(|(t, _)| *t == HexTok::Eq) {
        let head = &toks[..eq];
        let mut i = 0;
        if let Some((HexTok::Word(w), _)) = head.first() {
            if ["const", "let", "var", "static"].contains(w) && head.len() > 1 {
                i = 1;
            }
        }
        let named = matches!(head.get(i), Some((HexTok::Word(w), _)) if is_ident(w));
        let typed = head.len() == i + 1 || matches!(head.get(i + 1), Some((HexTok::Colon, _)));
        if named && typed {
            body = &toks[eq + 1..];
        } else {
            let (t, off) = head.get(i).copied().unwrap_or(toks[eq]);
            errs.add(
                off,
                format!("unexpected `{}` before `=`", t.text()),
                Some(FORM_HINT.to_string()),
            );
            body = &toks[eq + 1..];
        }
    }

    // The word list, optionally bracketed.
    let mut words: Vec<(u16, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    let mut closed = false;
    let mut after_word = false;
    for (n, &(tok, off)) in body.iter().enumerate() {
        if closed {
            errs.add(
                off,
                format!("unexpected `{}` after `]`", tok.text()),
                Some(FORM_HINT.to_string()),
            );
            break;
        }
        match tok {
            HexTok::Open if n == 0 => open = Some(off),
            HexTok::Close if open.is_some() => closed = true,
            HexTok::Close => errs.add(off, "unmatched `]`".to_string(), None),
            HexTok::Comma if after_word => after_word = false,
            HexTok::Comma => errs.add(off, "expected a word before `,`".to_string(), None),
            HexTok::Word(w) => {
                after_word = true;
                let digits = w
                    .strip_prefix("0x")
                    .or_else(|| w.strip_prefix("0X"))
                    .unwrap_or(w);
                let value = if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit()) {
                    fold_digits(digits, 16)
                } else {
                    errs.add(
                        off,
                        format!("expected a 16-bit hex word, found `{w}`"),
                        Some("words are hexadecimal, with or without `0x`: 0x50de or 50de".into()),
                    );
                    continue;
                };
                match value {
                    Some(v) if v <= 0xffff => words.push((v as u16, off)),
                    _ => errs.add(
                        off,
                        format!("hex word `{w}` (0x{}) does not fit in 16 bits", digits.to_ascii_lowercase()),
                        Some("tiny-gpu instructions are 16-bit words, 0x0000 to 0xffff; words are read as hex, even without `0x`".into()),
                    ),
                }
            }
            HexTok::Open | HexTok::Eq | HexTok::Colon => errs.add(
                off,
                format!("unexpected `{}`", tok.text()),
                Some(FORM_HINT.to_string()),
            ),
        }
    }
    if let (Some(off), false) = (open, closed) {
        errs.add(off, "unclosed `[`".to_string(), None);
    }

    let mut instructions = Vec::with_capacity(words.len());
    let mut targets: Vec<u32> = Vec::new();
    let len = words.len() as u32;
    for &(w, off) in &words {
        match decode(w).and_then(|t| {
            if let Tiny::Br { target, .. } = t {
                if target > len {
                    return Err((
                        format!(
                            "branch word 0x{w:04x} targets pc {target}, past the end of the \
                             program ({len} words)"
                        ),
                        "a branch target is the index of a word in this list".to_string(),
                    ));
                }
                targets.push(target);
            }
            lower(t)
        }) {
            Ok(inst) => instructions.push(inst),
            Err((msg, hint)) => errs.add(off, msg, Some(hint)),
        }
    }
    if words.is_empty() && errs.list.is_empty() {
        errs.add(
            0,
            "no instruction words found".to_string(),
            Some(FORM_HINT.to_string()),
        );
    }
    errs.finish()?;
    targets.sort_unstable();
    targets.dedup();
    let labels = targets
        .into_iter()
        .map(|pc| (format!("L{pc}"), pc))
        .collect();
    Ok(finish(instructions, labels, Vec::new()))
}

// ───────────────────────────── text front end ─────────────────────────────

/// A label or mnemonic-like name: `[A-Za-z_][A-Za-z0-9_]*`.
fn ident(i: &str) -> IResult<&str, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))(i)
}

/// `NAME:` with optional spaces before the colon.
fn label_def(i: &str) -> IResult<&str, &str> {
    terminated(ident, pair(space0, chr(':')))(i)
}

/// A register `R0`..`R15` (case-insensitive); `Err` carries the out-of-range text.
fn register(i: &str) -> IResult<&str, Option<u64>> {
    let (rest, digits) = preceded(alt((chr('R'), chr('r'))), digit1)(i)?;
    Ok((rest, fold_digits(digits, 10)))
}

/// `#N`, `#0xN`, `#-N`: an immediate with its sign.
fn immediate(i: &str) -> IResult<&str, (bool, Option<u64>)> {
    let (rest, (sign, value)) =
        preceded(chr('#'), pair(opt(alt((chr('-'), chr('+')))), parse_number))(i)?;
    Ok((rest, (sign == Some('-'), value)))
}

/// What an operand slot of a mnemonic expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dst,
    Src,
    Base,
    Imm,
    Label,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mn {
    Nop,
    Br(u8),
    Cmp,
    Alu(u8),
    Ldr,
    Str,
    Const,
    Ret,
}

impl Mn {
    fn parse(word: &str) -> Option<Mn> {
        let upper = word.to_ascii_uppercase();
        Some(match upper.as_str() {
            "NOP" => Mn::Nop,
            "CMP" => Mn::Cmp,
            "ADD" => Mn::Alu(3),
            "SUB" => Mn::Alu(4),
            "MUL" => Mn::Alu(5),
            "DIV" => Mn::Alu(6),
            "LDR" => Mn::Ldr,
            "STR" => Mn::Str,
            "CONST" => Mn::Const,
            "RET" => Mn::Ret,
            _ => Mn::Br(BranchCond::parse_letters(upper.strip_prefix("BR")?)?),
        })
    }

    fn kinds(self) -> &'static [Kind] {
        use Kind::*;
        match self {
            Mn::Nop | Mn::Ret => &[],
            Mn::Br(_) => &[Label],
            Mn::Cmp => &[Src, Src],
            Mn::Alu(_) => &[Dst, Src, Src],
            Mn::Ldr => &[Dst, Base],
            Mn::Str => &[Base, Src],
            Mn::Const => &[Dst, Imm],
        }
    }

    fn form(self) -> &'static str {
        match self {
            Mn::Nop => "NOP",
            Mn::Ret => "RET",
            Mn::Br(_) => "BRnzp label",
            Mn::Cmp => "CMP Rs, Rt",
            Mn::Alu(3) => "ADD Rd, Rs, Rt",
            Mn::Alu(4) => "SUB Rd, Rs, Rt",
            Mn::Alu(5) => "MUL Rd, Rs, Rt",
            Mn::Alu(_) => "DIV Rd, Rs, Rt",
            Mn::Ldr => "LDR Rd, Rs",
            Mn::Str => "STR Rs, Rt",
            Mn::Const => "CONST Rd, #imm",
        }
    }
}

/// A checked operand value.
#[derive(Debug, Clone, Copy)]
enum Val<'a> {
    R(u8),
    Imm(u8),
    Label(&'a str, usize),
}

type Problem = (String, Option<String>);

fn problem(msg: impl Into<String>, hint: Option<&str>) -> Problem {
    (msg.into(), hint.map(str::to_string))
}

/// Classifies one operand word against the slot it fills.
fn operand<'a>(word: &'a str, off: usize, kind: Kind, mn: Mn) -> Result<Val<'a>, Problem> {
    let reg = if let Some(name) = word.strip_prefix('%') {
        match SPECIAL_NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(&(_, r)) => Some(r),
            None => {
                return Err(problem(
                    format!("unknown special register `{word}`"),
                    Some("tiny-gpu has %blockIdx, %blockDim and %threadIdx (R13, R14, R15)"),
                ))
            }
        }
    } else if let Some(index) = whole(register, word) {
        match index {
            Some(r) if r <= 15 => Some(r as u8),
            _ => {
                return Err(problem(
                    format!("there is no register `{word}`"),
                    Some("tiny-gpu has R0–R15; R13–R15 are %blockIdx, %blockDim, %threadIdx"),
                ))
            }
        }
    } else {
        None
    };
    let imm = whole(immediate, word);
    let what = match (reg, imm) {
        (Some(_), _) => "a register",
        (_, Some(_)) => "an immediate",
        _ if is_ident(word) => "a label",
        _ => "",
    };
    match kind {
        Kind::Dst | Kind::Src | Kind::Base => {
            if let Some(r) = reg {
                if kind == Kind::Base {
                    if let Some((msg, hint)) = base_problem(r) {
                        return Err((msg, Some(hint)));
                    }
                }
                return Ok(Val::R(r));
            }
            let hint = match (imm.is_some(), mn) {
                (true, Mn::Const) => None,
                (true, _) => Some("tiny-gpu arithmetic reads registers only; load the constant with `CONST Rn, #N` first"),
                _ => None,
            };
            Err(problem(
                expected(
                    "a register (R0–R15, %blockIdx, %blockDim, %threadIdx)",
                    what,
                    word,
                ),
                hint,
            ))
        }
        Kind::Imm => match imm {
            Some((false, Some(v))) if v <= 255 => Ok(Val::Imm(v as u8)),
            Some(_) => Err(problem(
                format!("immediate `{word}` is out of range: CONST takes 0–255"),
                Some("tiny-gpu's CONST encodes an unsigned 8-bit immediate"),
            )),
            None => {
                let bare = whole(parse_number, word).is_some();
                Err(problem(
                    expected("an immediate `#N`", what, word),
                    bare.then_some("write immediates with a `#`: `#5`"),
                ))
            }
        },
        Kind::Label => {
            if reg.is_none() && imm.is_none() && is_ident(word) {
                Ok(Val::Label(word, off))
            } else {
                Err(problem(
                    expected("a label", what, word),
                    Some("branch to a label defined as `NAME:` in this file"),
                ))
            }
        }
    }
}

/// The value of `parser` when it consumes all of `word`.
fn whole<'a, T>(parser: impl FnMut(&'a str) -> IResult<&'a str, T>, word: &'a str) -> Option<T> {
    all_consuming(parser)(word).ok().map(|(_, v)| v)
}

fn expected(want: &str, what: &str, word: &str) -> String {
    if what.is_empty() {
        format!("expected {want}, found `{word}`")
    } else {
        format!("expected {want}, found {what} `{word}`")
    }
}

/// An instruction waiting for its labels to be resolved.
struct Pending<'a> {
    mn: Mn,
    off: usize,
    /// Its 1-based source line.
    line: u32,
    vals: Vec<Val<'a>>,
}

/// Assembles tiny-gpu assembly text (see the module docs for the syntax).
pub fn assemble_text(source: &str) -> Result<Program, AsmErrors> {
    let mut errs = Errors::new(source);
    let mut pending: Vec<Pending> = Vec::new();
    let mut labels: Vec<(String, u32)> = Vec::new();
    let mut defined: HashMap<&str, (u32, usize)> = HashMap::new();

    let mut line_start = 0;
    for (line_index, raw) in source.split_inclusive('\n').enumerate() {
        let base = line_start;
        line_start += raw.len();
        let mut line = raw.trim_end_matches(['\n', '\r']);
        if let Some(i) = line.find(';') {
            line = &line[..i];
        }
        if let Some(i) = line.find("//") {
            line = &line[..i];
        }
        let pos = |rest: &str| base + (line.len() - rest.len());
        let mut rest = line.trim_start();

        while let Ok((r, name)) = label_def(rest) {
            let off = pos(rest);
            let pc = pending.len() as u32;
            if full_register(name) {
                errs.push(
                    off,
                    problem(
                        format!("label `{name}` looks like a register"),
                        Some("choose another name, e.g. `LOOP`"),
                    ),
                );
            } else if let Some(&(_, first)) = defined.get(name) {
                let first_line = Diagnostic::at_offset(source, first, "").line;
                errs.push(
                    off,
                    (
                        format!("label `{name}` is defined twice"),
                        Some(format!("first defined on line {first_line}")),
                    ),
                );
            } else {
                defined.insert(name, (pc, off));
                labels.push((name.to_string(), pc));
            }
            rest = r.trim_start();
        }
        if rest.is_empty() {
            continue;
        }

        if let Some(after_dot) = rest.strip_prefix('.') {
            let name_end = after_dot
                .find(|c: char| c.is_whitespace())
                .unwrap_or(after_dot.len());
            let (name, args) = after_dot.split_at(name_end);
            let args = args.trim();
            match name {
                "threads" => {
                    // Accepted for compatibility; the launch file sets the block size.
                    if !matches!(fold_digits_full(args), Some(n) if n > 0) {
                        let off = if args.is_empty() { pos(rest) } else { pos(args) };
                        errs.push(
                            off,
                            problem(
                                "`.threads` takes a positive thread count",
                                Some("`.threads` is ignored anyway: the launch file sets the block size"),
                            ),
                        );
                    }
                }
                "data" => errs.push(
                    pos(rest),
                    problem(
                        "`.data` is not supported in warpscope kernels",
                        Some("initial memory comes from the launch file's `memory` initialisers"),
                    ),
                ),
                _ => errs.push(
                    pos(rest),
                    problem(
                        format!("unknown directive `.{name}`"),
                        Some("tiny-gpu text accepts `.threads N` (ignored: the launch file sets the block size)"),
                    ),
                ),
            }
            continue;
        }

        // The mnemonic, then its operands.
        let split: IResult<&str, &str> = take_till1(|c: char| c.is_whitespace() || c == ',')(rest);
        let (mut r, word) = match split {
            Ok(v) => v,
            Err(_) => {
                errs.push(
                    pos(rest),
                    problem("expected an instruction before `,`", None),
                );
                continue;
            }
        };
        let mn_off = pos(rest);
        let Some(mn) = Mn::parse(word) else {
            errs.push(mn_off, unknown_mnemonic(word));
            continue;
        };
        let mut words: Vec<(&str, usize)> = Vec::new();
        let mut bad = false;
        loop {
            r = r.trim_start();
            if r.is_empty() {
                break;
            }
            if let Some(after) = r.strip_prefix(',') {
                let comma = pos(r);
                let next = after.trim_start();
                if words.is_empty() {
                    errs.push(comma, problem("expected an operand before `,`", None));
                    bad = true;
                    break;
                }
                if next.is_empty() || next.starts_with(',') {
                    errs.push(comma, problem("expected an operand after `,`", None));
                    bad = true;
                    break;
                }
                r = next;
            }
            let split: IResult<&str, &str> = take_till1(|c: char| c.is_whitespace() || c == ',')(r);
            let Ok((r2, w)) = split else { break };
            words.push((w, pos(r)));
            r = r2;
        }
        if bad {
            continue;
        }
        let kinds = mn.kinds();
        if words.len() != kinds.len() {
            let off = words.get(kinds.len()).map_or(mn_off, |&(_, o)| o);
            errs.push(
                off,
                (
                    format!(
                        "`{word}` takes {} operand{}, found {}",
                        kinds.len(),
                        if kinds.len() == 1 { "" } else { "s" },
                        words.len()
                    ),
                    Some(format!("expected `{}`", mn.form())),
                ),
            );
            continue;
        }
        let mut vals = Vec::with_capacity(kinds.len());
        for (&(w, off), &kind) in words.iter().zip(kinds) {
            match operand(w, off, kind, mn) {
                Ok(v) => vals.push(v),
                Err(p) => {
                    errs.push(off, p);
                    bad = true;
                }
            }
        }
        // Keep the PC count right even for a bad instruction, so later labels stay correct.
        pending.push(Pending {
            mn,
            off: mn_off,
            line: u32::try_from(line_index + 1).unwrap_or(u32::MAX),
            vals: if bad { vec![] } else { vals },
        });
    }

    let mut instructions = Vec::with_capacity(pending.len());
    let mut lines = Vec::with_capacity(pending.len());
    for p in &pending {
        if p.vals.len() != p.mn.kinds().len() {
            continue; // already reported
        }
        let reg = |i: usize| match p.vals.get(i) {
            Some(Val::R(r)) => *r,
            _ => 0,
        };
        let tiny = match p.mn {
            Mn::Nop => Tiny::Nop,
            Mn::Ret => Tiny::Ret,
            Mn::Cmp => Tiny::Cmp {
                rs: reg(0),
                rt: reg(1),
            },
            Mn::Alu(op) => Tiny::Alu {
                op,
                rd: reg(0),
                rs: reg(1),
                rt: reg(2),
            },
            Mn::Ldr => Tiny::Ldr {
                rd: reg(0),
                rs: reg(1),
            },
            Mn::Str => Tiny::Str {
                rs: reg(0),
                rt: reg(1),
            },
            Mn::Const => Tiny::Const {
                rd: reg(0),
                imm: match p.vals.get(1) {
                    Some(Val::Imm(v)) => *v,
                    _ => 0,
                },
            },
            Mn::Br(mask) => {
                let Some(&Val::Label(name, off)) = p.vals.first() else {
                    continue;
                };
                match defined.get(name) {
                    Some(&(pc, _)) if pc <= 255 => Tiny::Br { mask, target: pc },
                    Some(&(pc, _)) => {
                        errs.push(
                            off,
                            problem(
                                format!("label `{name}` is at pc {pc}, beyond tiny-gpu's 8-bit branch target (0–255)"),
                                Some("tiny-gpu programs hold at most 256 instructions"),
                            ),
                        );
                        continue;
                    }
                    None => {
                        let names = nearest(name, defined.keys().copied());
                        let hint = names
                            .first()
                            .map(|n| format!("did you mean `{n}`?"))
                            .unwrap_or_else(|| "define it as `NAME:` before an instruction".into());
                        errs.push(off, (format!("undefined label `{name}`"), Some(hint)));
                        continue;
                    }
                }
            }
        };
        match lower(tiny) {
            Ok(inst) => {
                instructions.push(inst);
                lines.push(p.line);
            }
            Err((msg, hint)) => errs.push(p.off, (msg, Some(hint))),
        }
    }

    if pending.is_empty() && errs.list.is_empty() {
        errs.push(
            0,
            problem(
                "no instructions found",
                Some("a tiny-gpu kernel is a list of instructions ending in `RET`"),
            ),
        );
    }
    errs.finish()?;
    Ok(finish(instructions, labels, lines))
}

fn full_register(word: &str) -> bool {
    all_consuming(register)(word).is_ok()
}

fn fold_digits_full(text: &str) -> Option<u64> {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
        fold_digits(text, 10)
    } else {
        None
    }
}

fn unknown_mnemonic(word: &str) -> Problem {
    let upper = word.to_ascii_uppercase();
    let hint = if upper == "BR" {
        Some("a branch names its condition: BRn, BRz, BRp, BRnz, BRnp, BRzp or BRnzp".to_string())
    } else if Opcode::from_mnemonic(word).is_some() {
        Some(format!(
            "`{word}` is a native (.sasm) instruction; tiny-gpu has {}",
            MNEMONICS.join(", ")
        ))
    } else {
        let near = nearest(word, MNEMONICS);
        (!near.is_empty()).then(|| {
            let list: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            format!("did you mean {}?", list.join(" or "))
        })
    };
    (format!("unknown tiny-gpu instruction `{word}`"), hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_on_comments_and_punctuation() {
        let toks: Vec<_> = hex_tokens("const P = [0x1,2//c\n3#x\n];")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(
            toks,
            vec![
                HexTok::Word("const"),
                HexTok::Word("P"),
                HexTok::Eq,
                HexTok::Open,
                HexTok::Word("0x1"),
                HexTok::Comma,
                HexTok::Word("2"),
                HexTok::Word("3"),
                HexTok::Close,
            ]
        );
    }

    #[test]
    fn numbers_overflow_to_none() {
        assert_eq!(parse_number("0x10").unwrap().1, Some(16));
        assert_eq!(parse_number("99999999999999999999999").unwrap().1, None);
    }
}
