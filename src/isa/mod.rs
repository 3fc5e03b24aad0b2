//! The instruction set: a small SASS-like ISA with 32-bit registers.
//!
//! One enum per concept (opcode, operand, special register, comparison, MUFU function, branch
//! condition, control code). Every front end — native assembly, tiny-gpu text and hex — produces
//! the same [`Program`], and [`Program`]'s `Display` is the disassembler: it prints native text
//! that assembles back to an equal program.
//!
//! Simplifications: one instruction per PC (the PC is the instruction index, not a byte address);
//! no vector loads; predicates are per lane bits `P0`–`P6` plus the constant `PT`.

mod control;
mod display;
mod opcode;

pub use control::ControlCode;
pub use display::{
    is_replayed, listing_instruction, listing_opcode, without_control_code, REPLAYED_OPERANDS,
};
pub use opcode::{BranchCond, CmpOp, MufuFn, Opcode, OperandKind, Pipe};

use serde::{Deserialize, Serialize};

/// A general-purpose register index. `R0`–`R254`; index 255 is `RZ` (reads 0, writes dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Reg(pub u8);

impl Reg {
    pub const RZ: Reg = Reg(255);
    /// Highest register a program may name.
    pub const MAX_INDEX: u8 = 254;

    pub fn is_zero(self) -> bool {
        self.0 == 255
    }
}

/// A predicate register. `P0`–`P6`; index 7 is `PT` (always true, writes dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pred(pub u8);

impl Pred {
    pub const PT: Pred = Pred(7);

    pub fn is_true(self) -> bool {
        self.0 == 7
    }
}

/// `@P0` / `@!P3` in front of an instruction. The default guard is `@PT`: always execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Guard {
    pub pred: Pred,
    pub negated: bool,
}

impl Guard {
    pub const ALWAYS: Guard = Guard {
        pred: Pred::PT,
        negated: false,
    };

    pub fn is_always(self) -> bool {
        self == Guard::ALWAYS
    }
}

impl Default for Guard {
    fn default() -> Self {
        Guard::ALWAYS
    }
}

/// Read-only per-thread values, as SASS reads them with `S2R`; here any source may name one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SpecialReg {
    TidX,
    TidY,
    TidZ,
    NtidX,
    NtidY,
    NtidZ,
    CtaidX,
    CtaidY,
    CtaidZ,
    NctaidX,
    NctaidY,
    NctaidZ,
    LaneId,
    WarpId,
    SmId,
    Clock,
}

impl SpecialReg {
    pub const ALL: [SpecialReg; 16] = [
        SpecialReg::TidX,
        SpecialReg::TidY,
        SpecialReg::TidZ,
        SpecialReg::NtidX,
        SpecialReg::NtidY,
        SpecialReg::NtidZ,
        SpecialReg::CtaidX,
        SpecialReg::CtaidY,
        SpecialReg::CtaidZ,
        SpecialReg::NctaidX,
        SpecialReg::NctaidY,
        SpecialReg::NctaidZ,
        SpecialReg::LaneId,
        SpecialReg::WarpId,
        SpecialReg::SmId,
        SpecialReg::Clock,
    ];

    /// The name as written in assembly, without the leading `%`.
    pub fn name(self) -> &'static str {
        match self {
            SpecialReg::TidX => "tid.x",
            SpecialReg::TidY => "tid.y",
            SpecialReg::TidZ => "tid.z",
            SpecialReg::NtidX => "ntid.x",
            SpecialReg::NtidY => "ntid.y",
            SpecialReg::NtidZ => "ntid.z",
            SpecialReg::CtaidX => "ctaid.x",
            SpecialReg::CtaidY => "ctaid.y",
            SpecialReg::CtaidZ => "ctaid.z",
            SpecialReg::NctaidX => "nctaid.x",
            SpecialReg::NctaidY => "nctaid.y",
            SpecialReg::NctaidZ => "nctaid.z",
            SpecialReg::LaneId => "laneid",
            SpecialReg::WarpId => "warpid",
            SpecialReg::SmId => "smid",
            SpecialReg::Clock => "clock",
        }
    }

    pub fn from_name(name: &str) -> Option<SpecialReg> {
        SpecialReg::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One operand slot of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    Reg(Reg),
    /// A predicate operand (`ISETP`'s destination, `SEL`'s selector); `negated` only for sources.
    Pred {
        pred: Pred,
        negated: bool,
    },
    /// An immediate, stored as the 32 bits it puts on the operand bus (float literals as f32 bits).
    Imm(u32),
    Special(SpecialReg),
    /// A kernel parameter, by index into [`Program::params`].
    Param(u16),
    /// `[Ra+imm]`: a base register plus a signed byte offset.
    Mem {
        base: Reg,
        offset: i32,
    },
    /// A branch target, already resolved to a PC.
    Target(u32),
}

/// One decoded instruction: guard, opcode (with its modifiers), operands in assembly order,
/// and the optional control code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Instruction {
    pub guard: Guard,
    pub op: Opcode,
    /// Operands in the order they are written: destinations first, as in SASS.
    pub operands: Vec<Operand>,
    pub control: Option<ControlCode>,
}

impl Instruction {
    pub fn new(op: Opcode, operands: Vec<Operand>) -> Instruction {
        Instruction {
            guard: Guard::ALWAYS,
            op,
            operands,
            control: None,
        }
    }

    /// The general-purpose register this instruction writes, if any (RZ counts as none).
    pub fn dst_reg(&self) -> Option<Reg> {
        if !self.op.writes_first_operand() {
            return None;
        }
        match self.operands.first() {
            Some(Operand::Reg(r)) if !r.is_zero() => Some(*r),
            _ => None,
        }
    }

    /// The predicate this instruction writes, if any (PT counts as none).
    pub fn dst_pred(&self) -> Option<Pred> {
        if !self.op.writes_first_operand() {
            return None;
        }
        match self.operands.first() {
            Some(Operand::Pred { pred, .. }) if !pred.is_true() => Some(*pred),
            _ => None,
        }
    }

    /// The operands this instruction reads (everything after the destination, when it has one).
    pub fn sources(&self) -> &[Operand] {
        if self.op.writes_first_operand() {
            self.operands.get(1..).unwrap_or(&[])
        } else {
            &self.operands
        }
    }

    /// Every general-purpose register read: plain sources, memory bases (RZ excluded).
    pub fn src_regs(&self) -> impl Iterator<Item = Reg> + '_ {
        self.sources().iter().filter_map(|o| match o {
            Operand::Reg(r) | Operand::Mem { base: r, .. } if !r.is_zero() => Some(*r),
            _ => None,
        })
    }

    /// Every predicate read: the guard and predicate sources (PT excluded).
    pub fn src_preds(&self) -> impl Iterator<Item = Pred> + '_ {
        let guard = (!self.guard.pred.is_true()).then_some(self.guard.pred);
        guard
            .into_iter()
            .chain(self.sources().iter().filter_map(|o| match o {
                Operand::Pred { pred, .. } if !pred.is_true() => Some(*pred),
                _ => None,
            }))
    }

    /// The branch target, for `BRA`.
    pub fn target(&self) -> Option<u32> {
        self.operands.iter().find_map(|o| match o {
            Operand::Target(t) => Some(*t),
            _ => None,
        })
    }
}

/// How addresses in `LDG`/`STG`/`ATOMG` are counted. Native kernels use bytes; the tiny-gpu
/// dialect addresses 32-bit words, so address `a` there is byte `4a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Addressing {
    #[default]
    Byte,
    Word,
}

/// A whole kernel, as every front end produces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    pub name: String,
    pub instructions: Vec<Instruction>,
    /// Labels by PC, in PC order; several labels may name one PC.
    pub labels: Vec<(String, u32)>,
    /// Registers per thread (`.regs`), at least highest used + 1.
    pub regs: u16,
    /// Shared memory per block in bytes (`.shared`).
    pub shared_bytes: u32,
    /// Kernel parameter names (`.param`), one 32-bit word each, in order.
    pub params: Vec<String>,
    pub addressing: Addressing,
    /// The 1-based line of the source text each instruction was assembled from, by PC (one
    /// per instruction), so that a profile can name the line a student wrote; empty for a
    /// program that has no text lines (tiny-gpu hex, a replay's stand-in, one built in code).
    /// Where the program came from, not what it does: the disassembly assembles back to the
    /// same program with the lines of the listing instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

impl Program {
    /// Highest general-purpose register any instruction names, plus one.
    pub fn regs_used(instructions: &[Instruction]) -> u16 {
        instructions
            .iter()
            .flat_map(|i| i.operands.iter())
            .filter_map(|o| match o {
                Operand::Reg(r) | Operand::Mem { base: r, .. } if !r.is_zero() => {
                    Some(r.0 as u16 + 1)
                }
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The disassembly of one instruction, as listings and fault messages show it.
    pub fn instruction_text(&self, pc: u32) -> String {
        match self.instructions.get(pc as usize) {
            Some(inst) => display::instruction_to_string(self, inst),
            None => format!("<pc {pc} out of program>"),
        }
    }

    /// PC → instruction text for every instruction (what the trace header stores).
    pub fn listing(&self) -> Vec<String> {
        (0..self.instructions.len() as u32)
            .map(|pc| self.instruction_text(pc))
            .collect()
    }

    pub fn label_at(&self, pc: u32) -> Option<&str> {
        self.labels
            .iter()
            .find(|(_, p)| *p == pc)
            .map(|(n, _)| n.as_str())
    }
}
