//! The disassembler: `Program` back to native assembly text that assembles to an equal program.

use super::{Addressing, Instruction, Opcode, Operand, Program};
use std::fmt::{self, Write};

/// How an immediate is written: as a float for float opcodes when that round-trips exactly,
/// otherwise as signed decimal for small values and hex for the rest.
fn write_imm(out: &mut String, bits: u32, float: bool) {
    if float {
        let v = f32::from_bits(bits);
        if v.is_finite() {
            let text = format!("{v:?}");
            if text.parse::<f32>().map(f32::to_bits) == Ok(bits) {
                out.push_str(&text);
                return;
            }
        }
        let _ = write!(out, "0x{bits:x}");
        return;
    }
    let signed = bits as i32;
    if (-65536..=65536).contains(&signed) {
        let _ = write!(out, "{signed}");
    } else {
        let _ = write!(out, "0x{bits:x}");
    }
}

pub(super) fn write_operand(out: &mut String, program: &Program, op: Opcode, operand: &Operand) {
    match *operand {
        Operand::Reg(r) if r.is_zero() => out.push_str("RZ"),
        Operand::Reg(r) => {
            let _ = write!(out, "R{}", r.0);
        }
        Operand::Pred { pred, negated } => {
            if negated {
                out.push('!');
            }
            if pred.is_true() {
                out.push_str("PT");
            } else {
                let _ = write!(out, "P{}", pred.0);
            }
        }
        Operand::Imm(bits) => write_imm(out, bits, op.is_float()),
        Operand::Special(s) => {
            let _ = write!(out, "%{}", s.name());
        }
        Operand::Param(i) => match program.params.get(i as usize) {
            Some(name) => {
                let _ = write!(out, "%param.{name}");
            }
            None => {
                let _ = write!(out, "%param.#{i}");
            }
        },
        Operand::Mem { base, offset } => {
            out.push('[');
            write_operand(out, program, op, &Operand::Reg(base));
            if offset > 0 {
                let _ = write!(out, "+{offset}");
            } else if offset < 0 {
                let _ = write!(out, "-{}", (offset as i64).unsigned_abs());
            }
            out.push(']');
        }
        Operand::Target(pc) => match program.label_at(pc) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "L{pc}");
            }
        },
    }
}

pub(super) fn instruction_to_string(program: &Program, inst: &Instruction) -> String {
    let mut out = String::new();
    if let Some(code) = &inst.control {
        let _ = write!(out, "{code} ");
    }
    if !inst.guard.is_always() {
        out.push('@');
        if inst.guard.negated {
            out.push('!');
        }
        if inst.guard.pred.is_true() {
            out.push_str("PT");
        } else {
            let _ = write!(out, "P{}", inst.guard.pred.0);
        }
        out.push(' ');
    }
    out.push_str(&inst.op.mnemonic());
    for (i, operand) in inst.operands.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        write_operand(&mut out, program, inst.op, operand);
    }
    out
}

/// A listing line (what [`Program::listing`] and a replay's header store) without the
/// control code it opens with, `[B------:R-:W-:-:S01] FADD R6, R4, R5` → `FADD R6, R4, R5`:
/// tables too narrow for the whole line would otherwise show little but the code.
pub fn without_control_code(line: &str) -> &str {
    match line.strip_prefix('[').and_then(|rest| rest.split_once(']')) {
        Some((_, after)) => after.trim_start(),
        None => line,
    }
}

/// The instruction of a listing line, past a replay's `/*00a0*/` PC and a control code:
/// `/*0040*/ @P0 BRA 0x80` → `@P0 BRA 0x80`, `[B------:R-:W-:-:S01] FADD R6, R4, R5` →
/// `FADD R6, R4, R5`; what a column too narrow for the whole line shows first.
pub fn listing_instruction(line: &str) -> &str {
    let line = line.trim_start();
    let line = match line
        .strip_prefix("/*")
        .and_then(|rest| rest.split_once("*/"))
    {
        Some((_, after)) => after,
        None => line,
    };
    without_control_code(line.trim_start())
}

/// Whether a listing line is a replayed SASS instruction: a replay's lines, and only its,
/// open with the real PC, `/*00a0*/`. Such a line names registers only (see
/// [`REPLAYED_OPERANDS`]).
pub fn is_replayed(line: &str) -> bool {
    line.trim_start().starts_with("/*")
}

/// What a replayed instruction's text leaves out, for a note under tables that show it: the
/// Accel-Sim tracer records the registers an instruction reads and writes, nothing else.
pub const REPLAYED_OPERANDS: &str = "replayed SASS shows register operands only: the Accel-Sim \
     trace records no predicates, special registers (S2R's SR_TID), constants or immediates";

/// The opcode with its modifiers of a listing line (`LDG.E.64`), past a replay's `/*00a0*/`
/// PC, a control code and a guard predicate; empty for an empty line.
pub fn listing_opcode(line: &str) -> &str {
    listing_instruction(line)
        .split_whitespace()
        .find(|token| !token.starts_with('@'))
        .unwrap_or("")
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An unnamed program (no `.kernel`) prints no `.kernel` line: `.kernel ` alone would
        // not assemble.
        if !self.name.is_empty() {
            writeln!(f, ".kernel {}", self.name)?;
        }
        writeln!(f, ".regs {}", self.regs)?;
        if self.shared_bytes != 0 {
            writeln!(f, ".shared {}", self.shared_bytes)?;
        }
        for p in &self.params {
            writeln!(f, ".param {p}")?;
        }
        if self.addressing == Addressing::Word {
            writeln!(f, ".addressing word")?;
        }
        let labels_at = |pc: u32, f: &mut fmt::Formatter<'_>| -> fmt::Result {
            for (name, _) in self.labels.iter().filter(|(_, p)| *p == pc) {
                writeln!(f, "{name}:")?;
            }
            Ok(())
        };
        for (pc, inst) in self.instructions.iter().enumerate() {
            labels_at(pc as u32, f)?;
            writeln!(f, "    {}", instruction_to_string(self, inst))?;
        }
        labels_at(self.instructions.len() as u32, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_line_loses_its_control_code_and_keeps_its_operands() {
        let line = "[B01----:R-:W-:-:S01] FADD R6, R4, R5";
        assert_eq!(without_control_code(line), "FADD R6, R4, R5");
        assert_eq!(without_control_code("FADD R6, R4, R5"), "FADD R6, R4, R5");
        assert_eq!(
            without_control_code("/*0098*/ LDG.E.64 R4, [R2]"),
            "/*0098*/ LDG.E.64 R4, [R2]"
        );
    }

    #[test]
    fn the_opcode_of_a_listing_line_skips_pc_control_code_and_guard() {
        assert_eq!(listing_instruction("/*0040*/ @P0 BRA 0x80"), "@P0 BRA 0x80");
        assert_eq!(
            listing_instruction("[B------:R-:W-:-:S01] FADD R6, R4, R5"),
            "FADD R6, R4, R5"
        );
        assert_eq!(listing_instruction("EXIT"), "EXIT");
        assert_eq!(listing_opcode("/*0098*/ LDG.E.64 R4, [R2]"), "LDG.E.64");
        assert_eq!(
            listing_opcode("[B------:R-:W-:-:S01] @!P0 LDG R1, [R0]"),
            "LDG"
        );
        assert_eq!(listing_opcode("@P1 STG [R0], R1"), "STG");
        assert_eq!(listing_opcode(""), "");
    }
}
