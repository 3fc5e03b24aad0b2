//! The native assembler (`.sasm`): SASS-like text to a [`Program`].
//!
//! The text is read line by line. A line holds labels (`NAME:`), then either a directive
//! (`.kernel`, `.regs`, `.shared`, `.param`, `.addressing`) or one instruction:
//!
//! ```text
//! loop: [B------:R-:W-:Y:S01] @!P0 ISETP.LT P1, R2, %param.n   // comment
//! ```
//!
//! Every bad line is reported (the first error of each line), and references that may point
//! forward — branch labels and `%param.NAME` — are resolved in a second pass. Lexing uses nom;
//! the parse itself is a small hand-written descent over the line so that every error knows the
//! column of the token it is about. Each instruction keeps the number of its line
//! ([`Program::lines`]), so that a profile can point at the line that was written.

use super::diag::{self, AsmErrors, Diagnostic};
use crate::isa::{
    Addressing, ControlCode, Guard, Instruction, Opcode, Operand, OperandKind, Pred, Program, Reg,
    SpecialReg,
};
use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_while};
use nom::character::complete::{char, digit0, digit1, hex_digit1, one_of, satisfy};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, tuple};
use nom::IResult;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The directives this assembler knows, for "did you mean" hints.
const DIRECTIVES: [&str; 5] = [".kernel", ".regs", ".shared", ".param", ".addressing"];
/// Largest `.regs`: `R0`..`R254`.
const MAX_REGS: u64 = Reg::MAX_INDEX as u64 + 1;
const REG_RANGE_HINT: &str = "registers are R0..R254 and RZ";
const PRED_RANGE_HINT: &str = "predicates are P0..P6 and PT";
const CONTROL_HINT: &str = "a control code looks like [B------:R-:W-:Y:S01]";

/// Assembles native text. The kernel name is empty when there is no `.kernel` directive.
pub fn assemble(source: &str) -> Result<Program, AsmErrors> {
    let mut asm = Assembler::default();
    for (i, full) in source.lines().enumerate() {
        let line = Line::new(i + 1, full);
        asm.line(&line);
    }
    let program = asm.finish()?;
    if program.instructions.is_empty() {
        // Caught here, not at launch, so that `asm` says so with a location as well.
        let line = source.lines().count().max(1);
        let mut d = Diagnostic::new(source, line, 1, "the kernel has no instructions");
        d.hint = Some("a kernel is a list of instructions ending in `EXIT`".into());
        return Err(AsmErrors(vec![d]));
    }
    Ok(program)
}

// ---------------------------------------------------------------------------------------------
// Lexing (nom)

type Res<'a, T> = IResult<&'a str, T>;

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '$')
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')
}

/// `[A-Za-z_.$][A-Za-z0-9_.$]*`: labels, mnemonics, directives, register names.
fn ident(i: &str) -> Res<'_, &str> {
    recognize(pair(satisfy(is_ident_start), take_while(is_ident_char)))(i)
}

/// The spelling of a number: optional sign, then `0x` hex digits, or a decimal with optional
/// fraction and exponent (`5`, `-3`, `1.5`, `.5`, `1e-7`, `3.0e5`).
fn number(i: &str) -> Res<'_, &str> {
    recognize(pair(
        opt(one_of("+-")),
        alt((
            recognize(pair(tag_no_case("0x"), hex_digit1)),
            recognize(pair(
                alt((
                    recognize(pair(digit1, opt(pair(char('.'), digit0)))),
                    recognize(pair(char('.'), digit1)),
                )),
                opt(tuple((one_of("eE"), opt(one_of("+-")), digit1))),
            )),
        )),
    ))(i)
}

/// An unsigned integer without sign: decimal or `0x` hex.
fn unsigned(i: &str) -> Res<'_, &str> {
    alt((recognize(pair(tag_no_case("0x"), hex_digit1)), digit1))(i)
}

/// The whole of `text` as one identifier, or `None`.
fn whole_ident(text: &str) -> Option<&str> {
    match ident(text) {
        Ok(("", id)) => Some(id),
        _ => None,
    }
}

/// The first whitespace- or comma-delimited word of `text`, for messages.
fn first_word(text: &str) -> &str {
    let end = text
        .find(|c: char| c.is_whitespace() || c == ',')
        .unwrap_or(text.len());
    match text.get(..end) {
        Some("") | None => text,
        Some(w) => w,
    }
}

/// Value of an unsigned integer spelling (`unsigned`), or `None` on overflow.
fn unsigned_value(text: &str) -> Option<u64> {
    match text.get(..2) {
        Some(p) if p.eq_ignore_ascii_case("0x") => u64::from_str_radix(text.get(2..)?, 16).ok(),
        _ => text.parse::<u64>().ok(),
    }
}

/// A register token: `Some(Ok(reg))`, `Some(Err(()))` for `R<n>` out of range, `None` when
/// the token is not a register name at all.
fn register(tok: &str) -> Option<Result<Reg, ()>> {
    if tok.eq_ignore_ascii_case("RZ") {
        return Some(Ok(Reg::RZ));
    }
    let digits = tok.strip_prefix(['R', 'r'])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u32>() {
        Ok(n) if n <= Reg::MAX_INDEX as u32 => Ok(Reg(n as u8)),
        _ => Err(()),
    })
}

/// A predicate token, like [`register`]: `P0`..`P6`, `PT`.
fn predicate(tok: &str) -> Option<Result<Pred, ()>> {
    if tok.eq_ignore_ascii_case("PT") {
        return Some(Ok(Pred::PT));
    }
    let digits = tok.strip_prefix(['P', 'p'])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u32>() {
        Ok(n) if n < Pred::PT.0 as u32 => Ok(Pred(n as u8)),
        _ => Err(()),
    })
}

/// The 32 bits of an immediate spelled `text` (already recognized by [`number`]).
fn immediate_bits(text: &str, float: bool) -> Result<u32, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let is_hex = body.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("0x"));
    if is_hex {
        let raw = body
            .get(2..)
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| format!("hex immediate `{text}` does not fit in 32 bits"))?;
        return if !negative {
            Ok(raw)
        } else if raw <= 1 << 31 {
            Ok(raw.wrapping_neg())
        } else {
            Err(format!("immediate `{text}` does not fit in 32 bits"))
        };
    }
    let is_float_literal = body.contains(['.', 'e', 'E']);
    if is_float_literal || float {
        let v: f32 = text
            .parse()
            .map_err(|_| format!("invalid float literal `{text}`"))?;
        if v.is_infinite() {
            return Err(format!("float literal `{text}` is out of f32 range"));
        }
        return Ok(v.to_bits());
    }
    let v: i64 = text
        .parse()
        .map_err(|_| format!("immediate `{text}` does not fit in 32 bits"))?;
    if (i32::MIN as i64..=u32::MAX as i64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(format!("immediate `{text}` does not fit in 32 bits"))
    }
}

/// Every mnemonic, computed once (for lookups and hints).
fn mnemonics() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(Opcode::mnemonics)
}

/// [`Opcode::from_mnemonic`] through a table built once: it is on the path of every line.
fn lookup_opcode(mnemonic: &str) -> Option<Opcode> {
    static TABLE: OnceLock<HashMap<String, Opcode>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        Opcode::all()
            .into_iter()
            .map(|o| (o.mnemonic(), o))
            .collect()
    });
    let upper = mnemonic.to_ascii_uppercase();
    match table.get(&upper) {
        Some(op) => Some(*op),
        // `BRA.<mask>` spellings other than the canonical one (there are none today, but
        // `from_mnemonic` is the authority).
        None if upper.starts_with("BRA.") => Opcode::from_mnemonic(&upper),
        None => None,
    }
}

/// The largest byte index `<= i` that is a char boundary of `s`.
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` from byte `off` on (clamped to a char boundary).
fn suffix_at(s: &str, off: usize) -> &str {
    s.get(floor_boundary(s, off)..).unwrap_or("")
}

/// [`diag::nearest`], skipping candidates whose length alone puts them past its distance limit
/// (the edit distance is at least the difference in length), so that hints stay cheap.
fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = (word.len() / 2).max(2);
    let len = word.chars().count();
    diag::nearest(
        word,
        candidates
            .into_iter()
            .filter(|c| c.chars().count().abs_diff(len) <= limit),
    )
}

fn did_you_mean(cands: &[&str]) -> Option<String> {
    (!cands.is_empty()).then(|| format!("did you mean {}?", cands.join(", ")))
}

// ---------------------------------------------------------------------------------------------
// Lines and errors

/// One source line: `full` as written, `code` the same without its comment.
struct Line<'s> {
    no: usize,
    full: &'s str,
    code: &'s str,
}

impl<'s> Line<'s> {
    fn new(no: usize, full: &'s str) -> Line<'s> {
        let cut = [full.find("//"), full.find(';')]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(full.len());
        Line {
            no,
            full,
            code: full.get(..cut).unwrap_or(full),
        }
    }

    /// 1-based character column of `at`, a slice of `self.code`.
    fn col(&self, at: &str) -> usize {
        let off = (at.as_ptr() as usize)
            .saturating_sub(self.code.as_ptr() as usize)
            .min(self.code.len());
        let off = floor_boundary(self.full, off);
        self.full.get(..off).map_or(0, |s| s.chars().count()) + 1
    }

    fn diag(&self, at: &str, message: String, hint: Option<String>) -> Diagnostic {
        Diagnostic {
            line: self.no,
            col: self.col(at),
            message,
            source_line: self.full.to_string(),
            hint,
        }
    }
}

/// An error inside one line: where (a slice of the line's code), what, and a hint.
struct Fail<'s> {
    at: &'s str,
    message: String,
    hint: Option<String>,
}

fn fail<T>(at: &str, message: impl Into<String>) -> Result<T, Fail<'_>> {
    Err(Fail {
        at,
        message: message.into(),
        hint: None,
    })
}

fn fail_hint<T>(
    at: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Result<T, Fail<'_>> {
    Err(Fail {
        at,
        message: message.into(),
        hint: Some(hint.into()),
    })
}

/// A name used before it could be resolved: a branch label or a parameter.
struct Fixup {
    inst: usize,
    operand: usize,
    name: String,
    diag: Diagnostic,
}

/// Where a directive was given, to report duplicates.
#[derive(Clone, Copy)]
struct Seen {
    line: usize,
}

#[derive(Default)]
struct Assembler {
    errors: Vec<Diagnostic>,
    instructions: Vec<Instruction>,
    /// The line of each instruction, beside `instructions`.
    lines: Vec<u32>,
    labels: Vec<(String, u32)>,
    label_index: HashMap<String, (u32, usize)>,
    params: Vec<String>,
    param_index: HashMap<String, (u16, usize)>,
    name: Option<(String, Seen)>,
    regs: Option<(u16, Seen, Diagnostic)>,
    shared: Option<(u32, Seen)>,
    addressing: Option<(Addressing, Seen)>,
    target_fixups: Vec<Fixup>,
    param_fixups: Vec<Fixup>,
}

/// Fixups found while parsing one instruction, committed only if the whole line parses.
#[derive(Default)]
struct Pending {
    targets: Vec<Fixup>,
    params: Vec<Fixup>,
}

impl Assembler {
    fn line(&mut self, line: &Line<'_>) {
        let rest = self.labels_of(line);
        if rest.is_empty() {
            return;
        }
        if rest.starts_with('.') {
            if let Err(f) = self.directive(line, rest) {
                self.errors.push(line.diag(f.at, f.message, f.hint));
            }
            return;
        }
        let mut pending = Pending::default();
        // (A text of more than 4·10⁹ lines cannot be held; saturate rather than wrap.)
        self.lines.push(u32::try_from(line.no).unwrap_or(u32::MAX));
        match self.instruction(line, rest, &mut pending) {
            Ok(inst) => {
                self.instructions.push(inst);
                self.target_fixups.append(&mut pending.targets);
                self.param_fixups.append(&mut pending.params);
            }
            Err(f) => {
                self.errors.push(line.diag(f.at, f.message, f.hint));
                // Keep the PCs of later labels right.
                self.instructions
                    .push(Instruction::new(Opcode::Nop, vec![]));
            }
        }
    }

    /// Defines the labels at the start of the line; returns the rest, trimmed.
    fn labels_of<'s>(&mut self, line: &Line<'s>) -> &'s str {
        let mut rest = line.code.trim_start();
        while let Ok((after, name)) = ident(rest) {
            let Some(after) = after.trim_start().strip_prefix(':') else {
                break;
            };
            let pc = self.instructions.len() as u32;
            if let Some((_, first)) = self.label_index.get(name) {
                self.errors.push(line.diag(
                    rest,
                    format!("label `{name}` is defined twice"),
                    Some(format!("first defined on line {first}")),
                ));
            } else {
                self.label_index.insert(name.to_string(), (pc, line.no));
                self.labels.push((name.to_string(), pc));
            }
            rest = after.trim_start();
        }
        rest.trim_end()
    }

    // --- directives ---------------------------------------------------------------------------

    fn directive<'s>(&mut self, line: &Line<'s>, text: &'s str) -> Result<(), Fail<'s>> {
        let (args, name) = match ident(text) {
            Ok(r) => r,
            Err(_) => return fail(text, format!("unknown directive `{}`", first_word(text))),
        };
        if !args.is_empty() && !args.starts_with(char::is_whitespace) {
            return fail(
                args,
                format!("unexpected `{}` after `{name}`", first_word(args)),
            );
        }
        let lower = name.to_ascii_lowercase();
        let seen = Seen { line: line.no };
        let duplicate = |prev: Option<Seen>| -> Result<(), Fail<'s>> {
            match prev {
                Some(p) => fail_hint(
                    text,
                    format!("duplicate `{lower}` directive"),
                    format!("first given on line {}", p.line),
                ),
                None => Ok(()),
            }
        };
        match lower.as_str() {
            ".kernel" => {
                duplicate(self.name.as_ref().map(|n| n.1))?;
                let arg = single_arg(args, text, "a kernel name")?;
                let Some(id) = whole_ident(arg) else {
                    return fail(arg, format!("invalid kernel name `{arg}`"));
                };
                self.name = Some((id.to_string(), seen));
            }
            ".regs" => {
                duplicate(self.regs.as_ref().map(|r| r.1))?;
                let arg = single_arg(args, text, "a register count")?;
                let n = match unsigned(arg) {
                    Ok(("", digits)) => unsigned_value(digits),
                    _ => return fail(arg, format!("invalid register count `{arg}`")),
                };
                let n = match n {
                    Some(n) if n <= MAX_REGS => n as u16,
                    _ => {
                        return fail_hint(
                            arg,
                            format!("register count `{arg}` is too large"),
                            format!("at most {MAX_REGS} ({REG_RANGE_HINT})"),
                        )
                    }
                };
                let at = line.diag(arg, String::new(), None);
                self.regs = Some((n, seen, at));
            }
            ".shared" => {
                duplicate(self.shared.as_ref().map(|s| s.1))?;
                let arg = single_arg(args, text, "a size in bytes")?;
                let n = match unsigned(arg) {
                    Ok(("", digits)) => unsigned_value(digits),
                    _ => return fail(arg, format!("invalid shared-memory size `{arg}`")),
                };
                let Some(n) = n.and_then(|n| u32::try_from(n).ok()) else {
                    return fail(
                        arg,
                        format!("shared-memory size `{arg}` does not fit in 32 bits"),
                    );
                };
                self.shared = Some((n, seen));
            }
            ".param" => {
                let arg = single_arg(args, text, "a parameter name")?;
                let Some(id) = whole_ident(arg) else {
                    return fail(arg, format!("invalid parameter name `{arg}`"));
                };
                if let Some((_, first)) = self.param_index.get(id) {
                    return fail_hint(
                        arg,
                        format!("parameter `{id}` is declared twice"),
                        format!("first declared on line {first}"),
                    );
                }
                let Ok(index) = u16::try_from(self.params.len()) else {
                    return fail(arg, "too many parameters");
                };
                self.param_index.insert(id.to_string(), (index, line.no));
                self.params.push(id.to_string());
            }
            ".addressing" => {
                duplicate(self.addressing.as_ref().map(|a| a.1))?;
                let arg = single_arg(args, text, "`byte` or `word`")?;
                let mode = if arg.eq_ignore_ascii_case("byte") {
                    Addressing::Byte
                } else if arg.eq_ignore_ascii_case("word") {
                    Addressing::Word
                } else {
                    return fail_hint(
                        arg,
                        format!("unknown addressing mode `{arg}`"),
                        "expected: .addressing byte|word",
                    );
                };
                self.addressing = Some((mode, seen));
            }
            _ => {
                let msg = format!("unknown directive `{name}`");
                let hint = did_you_mean(&nearest(name, DIRECTIVES))
                    .unwrap_or_else(|| format!("directives are {}", DIRECTIVES.join(", ")));
                return fail_hint(text, msg, hint);
            }
        }
        Ok(())
    }

    // --- instructions -------------------------------------------------------------------------

    fn instruction<'s>(
        &mut self,
        line: &Line<'s>,
        text: &'s str,
        pending: &mut Pending,
    ) -> Result<Instruction, Fail<'s>> {
        let mut rest = text;
        let mut control = None;
        if let Some(inner) = rest.strip_prefix('[') {
            let Some(close) = inner.find(']') else {
                return fail_hint(rest, "unclosed control code: expected `]`", CONTROL_HINT);
            };
            let code_text = inner.get(..close).unwrap_or("");
            match ControlCode::parse(code_text) {
                Ok(c) => control = Some(c),
                Err(e) => {
                    return fail_hint(
                        suffix_at(code_text, e.offset),
                        format!("bad control code: {}", e.message),
                        CONTROL_HINT,
                    )
                }
            }
            rest = inner.get(close + 1..).unwrap_or("").trim_start();
        }

        let mut guard = Guard::ALWAYS;
        if let Some(after_at) = rest.strip_prefix('@') {
            let (after_bang, negated) = match after_at.strip_prefix('!') {
                Some(r) => (r, true),
                None => (after_at, false),
            };
            let (after, tok) = match ident(after_bang) {
                Ok(r) => r,
                Err(_) => {
                    return fail_hint(
                        rest,
                        "expected a predicate after `@`",
                        "a guard looks like @P0, @!P3 or @PT",
                    )
                }
            };
            guard = Guard {
                pred: pred_or_fail(tok, after_bang, "a guard predicate")?,
                negated,
            };
            rest = after.trim_start();
        }

        let (after, mnemonic) = match ident(rest) {
            Ok(r) => r,
            Err(_) if rest.is_empty() => {
                return fail(rest, "expected an instruction after the guard")
            }
            Err(_) => {
                return fail(
                    rest,
                    format!("expected an instruction, found `{}`", first_word(rest)),
                )
            }
        };
        let Some(op) = lookup_opcode(mnemonic) else {
            let hint = did_you_mean(&nearest(mnemonic, mnemonics().iter().map(String::as_str)));
            return Err(Fail {
                at: rest,
                message: format!("unknown opcode `{mnemonic}`"),
                hint,
            });
        };
        if !after.is_empty() && !after.starts_with(char::is_whitespace) {
            return fail_hint(
                after,
                format!("unexpected `{}` after `{mnemonic}`", first_word(after)),
                format!("expected: {}", op.form()),
            );
        }

        let operands_text = after.trim();
        let segments: Vec<&'s str> = if operands_text.is_empty() {
            vec![]
        } else {
            operands_text.split(',').collect()
        };
        let signature = op.signature();
        if segments.len() != signature.len() {
            let n = signature.len();
            return fail_hint(
                rest,
                format!(
                    "`{}` takes {n} operand{}, found {}",
                    op.mnemonic(),
                    if n == 1 { "" } else { "s" },
                    segments.len()
                ),
                format!("expected: {}", op.form()),
            );
        }

        let inst_index = self.instructions.len();
        let mut operands = Vec::with_capacity(signature.len());
        for (k, (seg, kind)) in segments.iter().zip(signature).enumerate() {
            let t = seg.trim();
            if t.is_empty() {
                return fail_hint(seg, "missing operand", format!("expected: {}", op.form()));
            }
            let operand = match self.operand(t, *kind, op)? {
                Parsed::Done(o) => o,
                Parsed::Label(name) => {
                    pending.targets.push(Fixup {
                        inst: inst_index,
                        operand: k,
                        name: name.to_string(),
                        diag: line.diag(t, String::new(), None),
                    });
                    Operand::Target(0)
                }
                Parsed::Param(name) => {
                    pending.params.push(Fixup {
                        inst: inst_index,
                        operand: k,
                        name: name.to_string(),
                        diag: line.diag(t, String::new(), None),
                    });
                    Operand::Param(0)
                }
            };
            operands.push(operand);
        }
        Ok(Instruction {
            guard,
            op,
            operands,
            control,
        })
    }

    /// Parses one trimmed, non-empty operand of the given kind.
    fn operand<'s>(
        &self,
        t: &'s str,
        kind: OperandKind,
        op: Opcode,
    ) -> Result<Parsed<'s>, Fail<'s>> {
        let form = || format!("expected: {}", op.form());
        match kind {
            OperandKind::DstReg => match register(t) {
                Some(Ok(r)) => Ok(Parsed::Done(Operand::Reg(r))),
                Some(Err(())) => {
                    fail_hint(t, format!("register `{t}` out of range"), REG_RANGE_HINT)
                }
                None => fail_hint(
                    t,
                    format!("expected a destination register, found `{t}`"),
                    form(),
                ),
            },
            OperandKind::DstPred => {
                if t.starts_with('!') {
                    return fail_hint(t, "a destination predicate cannot be negated", form());
                }
                match predicate(t) {
                    Some(Ok(p)) => Ok(Parsed::Done(Operand::Pred {
                        pred: p,
                        negated: false,
                    })),
                    Some(Err(())) => {
                        fail_hint(t, format!("predicate `{t}` out of range"), PRED_RANGE_HINT)
                    }
                    None => fail_hint(
                        t,
                        format!("expected a destination predicate, found `{t}`"),
                        form(),
                    ),
                }
            }
            OperandKind::PredSrc => {
                let (body, negated) = match t.strip_prefix('!') {
                    Some(b) => (b.trim_start(), true),
                    None => (t, false),
                };
                match predicate(body) {
                    Some(Ok(p)) => Ok(Parsed::Done(Operand::Pred { pred: p, negated })),
                    Some(Err(())) => fail_hint(
                        body,
                        format!("predicate `{body}` out of range"),
                        PRED_RANGE_HINT,
                    ),
                    None => fail_hint(t, format!("expected a predicate, found `{t}`"), form()),
                }
            }
            OperandKind::Src => self.source_operand(t, op),
            OperandKind::Mem => mem_operand(t, op).map(Parsed::Done),
            OperandKind::Target => match whole_ident(t) {
                Some(name) => Ok(Parsed::Label(name)),
                None => fail_hint(t, format!("expected a label, found `{t}`"), form()),
            },
        }
    }

    fn source_operand<'s>(&self, t: &'s str, op: Opcode) -> Result<Parsed<'s>, Fail<'s>> {
        let form = || format!("expected: {}", op.form());
        if let Some(name) = t.strip_prefix('%') {
            if let Some(param) = name.strip_prefix("param.") {
                return match whole_ident(param) {
                    Some(p) => Ok(Parsed::Param(p)),
                    None => fail(t, format!("invalid parameter reference `{t}`")),
                };
            }
            if let Some(s) = SpecialReg::from_name(&name.to_ascii_lowercase()) {
                return Ok(Parsed::Done(Operand::Special(s)));
            }
            let names: Vec<String> = SpecialReg::ALL
                .iter()
                .map(|s| format!("%{}", s.name()))
                .collect();
            let near = nearest(t, names.iter().map(String::as_str));
            let hint = did_you_mean(&near).unwrap_or_else(|| {
                format!("special registers are {}, or %param.NAME", names.join(", "))
            });
            return fail_hint(t, format!("unknown special register `{t}`"), hint);
        }
        if t.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) {
            return match number(t) {
                // Integer arithmetic would take a float's bits as a number (1.5 as
                // 1069547520); MOV and the bitwise operations work on bits, where a float
                // constant is an idiom (`XOR R1, R1, -0.0` negates).
                Ok(("", text))
                    if !op.is_float()
                        && !matches!(op, Opcode::Mov | Opcode::And | Opcode::Or | Opcode::Xor)
                        && !text.to_ascii_lowercase().starts_with("0x")
                        && text.contains(['.', 'e', 'E']) =>
                {
                    fail_hint(
                        t,
                        format!(
                            "float literal `{text}` in the integer instruction {}",
                            op.mnemonic()
                        ),
                        "write an integer, or load the float's bits with `MOV Rn, 1.5` first",
                    )
                }
                Ok(("", text)) => match immediate_bits(text, op.is_float()) {
                    Ok(bits) => Ok(Parsed::Done(Operand::Imm(bits))),
                    Err(msg) => fail(t, msg),
                },
                _ => fail_hint(t, format!("invalid immediate `{t}`"), form()),
            };
        }
        match register(t) {
            Some(Ok(r)) => Ok(Parsed::Done(Operand::Reg(r))),
            Some(Err(())) => fail_hint(t, format!("register `{t}` out of range"), REG_RANGE_HINT),
            None => fail_hint(
                t,
                format!("expected a register, immediate, %special or %param.NAME, found `{t}`"),
                form(),
            ),
        }
    }

    // --- second pass --------------------------------------------------------------------------

    fn finish(mut self) -> Result<Program, AsmErrors> {
        for fix in std::mem::take(&mut self.target_fixups) {
            match self.label_index.get(&fix.name) {
                Some(&(pc, _)) => self.set_operand(&fix, Operand::Target(pc)),
                None => {
                    let near = nearest(&fix.name, self.labels.iter().map(|(n, _)| n.as_str()));
                    let mut d = fix.diag;
                    d.message = format!("undefined label `{}`", fix.name);
                    d.hint = did_you_mean(&near);
                    self.errors.push(d);
                }
            }
        }
        for fix in std::mem::take(&mut self.param_fixups) {
            match self.param_index.get(&fix.name) {
                Some(&(index, _)) => self.set_operand(&fix, Operand::Param(index)),
                None => {
                    let mut d = fix.diag;
                    d.message = format!("unknown parameter `%param.{}`", fix.name);
                    d.hint = Some(if self.params.is_empty() {
                        format!("no parameters are declared; add `.param {}`", fix.name)
                    } else {
                        format!("declared parameters: {}", self.params.join(", "))
                    });
                    self.errors.push(d);
                }
            }
        }
        let used = Program::regs_used(&self.instructions);
        let regs = match self.regs.take() {
            Some((n, _, mut d)) => {
                if n < used {
                    d.message = format!(
                        "`.regs {n}` is too small: the kernel uses R{} and needs at least {used}",
                        used - 1
                    );
                    self.errors.push(d);
                }
                n
            }
            None => used,
        };
        if !self.errors.is_empty() {
            let mut errors = self.errors;
            errors.sort_by_key(|d| (d.line, d.col));
            return Err(AsmErrors(errors));
        }
        Ok(Program {
            name: self.name.map(|n| n.0).unwrap_or_default(),
            instructions: self.instructions,
            labels: self.labels,
            regs,
            shared_bytes: self.shared.map_or(0, |s| s.0),
            params: self.params,
            addressing: self.addressing.map(|a| a.0).unwrap_or_default(),
            lines: self.lines,
        })
    }

    fn set_operand(&mut self, fix: &Fixup, operand: Operand) {
        if let Some(slot) = self
            .instructions
            .get_mut(fix.inst)
            .and_then(|i| i.operands.get_mut(fix.operand))
        {
            *slot = operand;
        }
    }
}

/// An operand as parsed in the first pass.
enum Parsed<'s> {
    Done(Operand),
    Label(&'s str),
    Param(&'s str),
}

/// The one argument of a directive: present and alone.
fn single_arg<'s>(args: &'s str, directive: &'s str, what: &str) -> Result<&'s str, Fail<'s>> {
    let args = args.trim();
    if args.is_empty() {
        let name = first_word(directive);
        return fail(directive, format!("`{name}` expects {what}"));
    }
    let end = args.find(char::is_whitespace).unwrap_or(args.len());
    let (arg, extra) = args.split_at(end);
    let extra = extra.trim_start();
    if !extra.is_empty() {
        return fail(
            extra,
            format!("unexpected `{}` after `{arg}`", first_word(extra)),
        );
    }
    Ok(arg)
}

fn pred_or_fail<'s>(tok: &'s str, at: &'s str, what: &str) -> Result<Pred, Fail<'s>> {
    match predicate(tok) {
        Some(Ok(p)) => Ok(p),
        Some(Err(())) => fail_hint(
            at,
            format!("predicate `{tok}` out of range"),
            PRED_RANGE_HINT,
        ),
        None => fail_hint(
            at,
            format!("expected {what}, found `{tok}`"),
            PRED_RANGE_HINT,
        ),
    }
}

/// `[Ra]`, `[Ra+imm]`, `[Ra - imm]`, `[imm]` (base `RZ`).
fn mem_operand(t: &str, op: Opcode) -> Result<Operand, Fail<'_>> {
    let form = || format!("expected: {}", op.form());
    let Some(inner) = t.strip_prefix('[') else {
        return fail_hint(
            t,
            format!("expected a memory operand `[Ra+imm]`, found `{t}`"),
            form(),
        );
    };
    let Some(inner) = inner.strip_suffix(']') else {
        return fail_hint(t, "unclosed memory operand: expected `]`", form());
    };
    let body = inner.trim_start();
    if body.is_empty() {
        return fail_hint(inner, "empty memory operand", form());
    }
    // An absolute address: `[imm]`.
    if let Ok((after, digits)) = unsigned(body) {
        if !after.trim().is_empty() {
            return fail_hint(
                after,
                format!(
                    "unexpected `{}` in memory operand",
                    first_word(after.trim_start())
                ),
                form(),
            );
        }
        return match unsigned_value(digits).and_then(|v| i32::try_from(v).ok()) {
            Some(offset) => Ok(Operand::Mem {
                base: Reg::RZ,
                offset,
            }),
            None => fail(body, format!("memory offset `{digits}` out of range")),
        };
    }
    let (after, tok) = match ident(body) {
        Ok(r) => r,
        Err(_) => {
            return fail_hint(
                body,
                format!("expected a base register, found `{}`", first_word(body)),
                form(),
            )
        }
    };
    let base = match register(tok) {
        Some(Ok(r)) => r,
        Some(Err(())) => {
            return fail_hint(
                body,
                format!("register `{tok}` out of range"),
                REG_RANGE_HINT,
            )
        }
        None => {
            return fail_hint(
                body,
                format!("expected a base register, found `{tok}`"),
                form(),
            )
        }
    };
    let after = after.trim_start();
    if after.is_empty() {
        return Ok(Operand::Mem { base, offset: 0 });
    }
    let (num, negative) = match (after.strip_prefix('+'), after.strip_prefix('-')) {
        (Some(n), _) => (n.trim_start(), false),
        (_, Some(n)) => (n.trim_start(), true),
        _ => {
            return fail_hint(
                after,
                format!(
                    "expected `+` or `-` after `{tok}`, found `{}`",
                    first_word(after)
                ),
                form(),
            )
        }
    };
    let digits = match unsigned(num) {
        Ok((end, digits)) if end.trim().is_empty() => digits,
        _ => {
            return fail_hint(
                num,
                format!("invalid memory offset `{}`", num.trim_end()),
                form(),
            )
        }
    };
    let value = unsigned_value(digits)
        .and_then(|v| i64::try_from(v).ok())
        .map(|v| if negative { -v } else { v })
        .and_then(|v| i32::try_from(v).ok());
    match value {
        Some(offset) => Ok(Operand::Mem { base, offset }),
        None => fail(
            num,
            format!("memory offset `{digits}` out of range (must fit in i32)"),
        ),
    }
}
