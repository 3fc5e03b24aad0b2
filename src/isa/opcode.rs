//! Opcodes with their modifiers, their operand signatures and the pipe that executes them.

use serde::{Deserialize, Serialize};

/// Integer/float comparison of `ISETP`/`FSETP`. Integer comparisons are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Lt => "LT",
            CmpOp::Le => "LE",
            CmpOp::Gt => "GT",
            CmpOp::Ge => "GE",
            CmpOp::Eq => "EQ",
            CmpOp::Ne => "NE",
        }
    }

    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// The function a `MUFU` (multi-function unit) instruction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MufuFn {
    Rcp,
    Sqrt,
    Rsq,
    Ex2,
    Lg2,
    Sin,
    Cos,
}

impl MufuFn {
    pub const ALL: [MufuFn; 7] = [
        MufuFn::Rcp,
        MufuFn::Sqrt,
        MufuFn::Rsq,
        MufuFn::Ex2,
        MufuFn::Lg2,
        MufuFn::Sin,
        MufuFn::Cos,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MufuFn::Rcp => "RCP",
            MufuFn::Sqrt => "SQRT",
            MufuFn::Rsq => "RSQ",
            MufuFn::Ex2 => "EX2",
            MufuFn::Lg2 => "LG2",
            MufuFn::Sin => "SIN",
            MufuFn::Cos => "COS",
        }
    }
}

/// Condition of a branch on the NZP flags set by `CMP` (the tiny-gpu `BRnzp`): the branch is
/// taken in a lane when `flags & mask != 0`. `Always` is the plain `BRA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BranchCond {
    Always,
    /// Bit 2 = N (negative), bit 1 = Z (zero), bit 0 = P (positive); never 0.
    Nzp(u8),
}

impl BranchCond {
    pub const N: u8 = 0b100;
    pub const Z: u8 = 0b010;
    pub const P: u8 = 0b001;

    /// `"NZP"`, `"ZP"`, ... — the letters of the mask in N, Z, P order.
    pub fn letters(mask: u8) -> String {
        let mut s = String::new();
        if mask & Self::N != 0 {
            s.push('N');
        }
        if mask & Self::Z != 0 {
            s.push('Z');
        }
        if mask & Self::P != 0 {
            s.push('P');
        }
        s
    }

    /// Parses a non-empty subset of `N`, `Z`, `P` in that order (case-insensitive).
    pub fn parse_letters(s: &str) -> Option<u8> {
        let mut mask = 0u8;
        let mut last = 8u8;
        for c in s.chars() {
            let bit = match c.to_ascii_uppercase() {
                'N' => Self::N,
                'Z' => Self::Z,
                'P' => Self::P,
                _ => return None,
            };
            if bit >= last {
                return None;
            }
            last = bit;
            mask |= bit;
        }
        (mask != 0).then_some(mask)
    }
}

/// What kind of operand a signature slot expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OperandKind {
    /// A destination general-purpose register (`R0`..`R254`, `RZ`).
    DstReg,
    /// A destination predicate (`P0`..`P6`, `PT`).
    DstPred,
    /// A value source: register, immediate, special register or parameter.
    Src,
    /// A predicate source, optionally negated (`P0`, `!P1`, `PT`).
    PredSrc,
    /// A memory address `[Ra+imm]`.
    Mem,
    /// A branch target label.
    Target,
}

impl OperandKind {
    pub fn describe(self) -> &'static str {
        match self {
            OperandKind::DstReg => "Rd",
            OperandKind::DstPred => "Pd",
            OperandKind::Src => "R|imm",
            OperandKind::PredSrc => "Pp",
            OperandKind::Mem => "[Ra+imm]",
            OperandKind::Target => "label",
        }
    }
}

/// The execution unit an instruction is issued to. Shared memory and `MUFU` go through the MIO
/// path (short scoreboard), global memory through L1TEX (long scoreboard).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pipe {
    /// Integer ALU: moves, adds, logic, compares, selects.
    Alu,
    /// FP32 and integer multiply-add.
    Fma,
    /// Multi-function unit: transcendental functions, conversions, integer division.
    Mufu,
    /// Shared memory (MIO path).
    Shared,
    /// Global memory and atomics (L1TEX path).
    Global,
    /// Branches, barriers, membar, exit.
    Branch,
}

impl Pipe {
    pub const ALL: [Pipe; 6] = [
        Pipe::Alu,
        Pipe::Fma,
        Pipe::Mufu,
        Pipe::Shared,
        Pipe::Global,
        Pipe::Branch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pipe::Alu => "alu",
            Pipe::Fma => "fma",
            Pipe::Mufu => "mufu",
            Pipe::Shared => "shared",
            Pipe::Global => "global",
            Pipe::Branch => "branch",
        }
    }
}

/// Every operation of the ISA, with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Opcode {
    Mov,
    Iadd,
    Isub,
    Imul,
    Imad,
    /// Signed division; `x / 0` is `-1` (all ones) and `i32::MIN / -1` is `i32::MIN`.
    Idiv,
    /// Signed remainder; `x % 0` is `x` and `i32::MIN % -1` is 0.
    Irem,
    /// Shift left; the shift amount is taken modulo 32.
    Shl,
    /// Logical shift right; the shift amount is taken modulo 32.
    Shr,
    And,
    Or,
    Xor,
    /// Signed minimum.
    Min,
    /// Signed maximum.
    Max,
    Isetp(CmpOp),
    Sel,
    Fadd,
    Fmul,
    Ffma,
    Fmin,
    Fmax,
    Fsetp(CmpOp),
    I2f,
    /// Float to signed integer, truncating; NaN gives 0, out-of-range values saturate.
    F2i,
    Mufu(MufuFn),
    Ldg,
    Stg,
    Lds,
    Sts,
    AtomgAdd,
    /// Sets the per-lane NZP flags from the sign of `Ra − Rb` (tiny-gpu's `CMP`).
    Cmp,
    Bra(BranchCond),
    BarSync,
    Membar,
    Exit,
    Nop,
}

use OperandKind::*;

impl Opcode {
    /// Every opcode, with every modifier, for hints and property tests.
    pub fn all() -> Vec<Opcode> {
        let mut v = vec![
            Opcode::Mov,
            Opcode::Iadd,
            Opcode::Isub,
            Opcode::Imul,
            Opcode::Imad,
            Opcode::Idiv,
            Opcode::Irem,
            Opcode::Shl,
            Opcode::Shr,
            Opcode::And,
            Opcode::Or,
            Opcode::Xor,
            Opcode::Min,
            Opcode::Max,
            Opcode::Sel,
            Opcode::Fadd,
            Opcode::Fmul,
            Opcode::Ffma,
            Opcode::Fmin,
            Opcode::Fmax,
            Opcode::I2f,
            Opcode::F2i,
            Opcode::Ldg,
            Opcode::Stg,
            Opcode::Lds,
            Opcode::Sts,
            Opcode::AtomgAdd,
            Opcode::Cmp,
            Opcode::Bra(BranchCond::Always),
            Opcode::BarSync,
            Opcode::Membar,
            Opcode::Exit,
            Opcode::Nop,
        ];
        v.extend(CmpOp::ALL.map(Opcode::Isetp));
        v.extend(CmpOp::ALL.map(Opcode::Fsetp));
        v.extend(MufuFn::ALL.map(Opcode::Mufu));
        v.extend((1..8u8).map(|m| Opcode::Bra(BranchCond::Nzp(m))));
        v
    }

    /// The mnemonic with modifiers, as written in native assembly: `ISETP.LT`, `MUFU.RCP`.
    pub fn mnemonic(self) -> String {
        match self {
            Opcode::Isetp(c) => format!("ISETP.{}", c.name()),
            Opcode::Fsetp(c) => format!("FSETP.{}", c.name()),
            Opcode::Mufu(f) => format!("MUFU.{}", f.name()),
            Opcode::Bra(BranchCond::Nzp(m)) => format!("BRA.{}", BranchCond::letters(m)),
            other => other.base_name().to_string(),
        }
    }

    /// The mnemonic without modifiers.
    pub fn base_name(self) -> &'static str {
        match self {
            Opcode::Mov => "MOV",
            Opcode::Iadd => "IADD",
            Opcode::Isub => "ISUB",
            Opcode::Imul => "IMUL",
            Opcode::Imad => "IMAD",
            Opcode::Idiv => "IDIV",
            Opcode::Irem => "IREM",
            Opcode::Shl => "SHL",
            Opcode::Shr => "SHR",
            Opcode::And => "AND",
            Opcode::Or => "OR",
            Opcode::Xor => "XOR",
            Opcode::Min => "MIN",
            Opcode::Max => "MAX",
            Opcode::Isetp(_) => "ISETP",
            Opcode::Sel => "SEL",
            Opcode::Fadd => "FADD",
            Opcode::Fmul => "FMUL",
            Opcode::Ffma => "FFMA",
            Opcode::Fmin => "FMIN",
            Opcode::Fmax => "FMAX",
            Opcode::Fsetp(_) => "FSETP",
            Opcode::I2f => "I2F",
            Opcode::F2i => "F2I",
            Opcode::Mufu(_) => "MUFU",
            Opcode::Ldg => "LDG",
            Opcode::Stg => "STG",
            Opcode::Lds => "LDS",
            Opcode::Sts => "STS",
            Opcode::AtomgAdd => "ATOMG.ADD",
            Opcode::Cmp => "CMP",
            Opcode::Bra(_) => "BRA",
            Opcode::BarSync => "BAR.SYNC",
            Opcode::Membar => "MEMBAR",
            Opcode::Exit => "EXIT",
            Opcode::Nop => "NOP",
        }
    }

    /// Parses a mnemonic with its modifiers (case-insensitive): `isetp.lt`, `BRA.NZ`, `BAR.SYNC`.
    pub fn from_mnemonic(text: &str) -> Option<Opcode> {
        let upper = text.to_ascii_uppercase();
        if let Some(rest) = upper.strip_prefix("BRA.") {
            return BranchCond::parse_letters(rest).map(|m| Opcode::Bra(BranchCond::Nzp(m)));
        }
        Opcode::all().into_iter().find(|op| op.mnemonic() == upper)
    }

    /// Every mnemonic, for "did you mean" hints.
    pub fn mnemonics() -> Vec<String> {
        Opcode::all().into_iter().map(Opcode::mnemonic).collect()
    }

    /// Whether the first operand is a destination (register or predicate).
    pub fn writes_first_operand(self) -> bool {
        matches!(
            self.signature().first(),
            Some(OperandKind::DstReg | OperandKind::DstPred)
        )
    }

    /// The operand kinds this opcode takes, in assembly order.
    pub fn signature(self) -> &'static [OperandKind] {
        match self {
            Opcode::Mov | Opcode::I2f | Opcode::F2i | Opcode::Mufu(_) => &[DstReg, Src],
            Opcode::Iadd
            | Opcode::Isub
            | Opcode::Imul
            | Opcode::Idiv
            | Opcode::Irem
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Min
            | Opcode::Max
            | Opcode::Fadd
            | Opcode::Fmul
            | Opcode::Fmin
            | Opcode::Fmax => &[DstReg, Src, Src],
            Opcode::Imad | Opcode::Ffma => &[DstReg, Src, Src, Src],
            Opcode::Isetp(_) | Opcode::Fsetp(_) => &[DstPred, Src, Src],
            Opcode::Sel => &[DstReg, Src, Src, PredSrc],
            Opcode::Ldg | Opcode::Lds => &[DstReg, Mem],
            Opcode::Stg | Opcode::Sts => &[Mem, Src],
            Opcode::AtomgAdd => &[DstReg, Mem, Src],
            Opcode::Cmp => &[Src, Src],
            Opcode::Bra(_) => &[Target],
            Opcode::BarSync | Opcode::Membar | Opcode::Exit | Opcode::Nop => &[],
        }
    }

    /// The expected form, for "wrong operand count" hints: `IADD Rd, Ra|imm, Rb|imm`, the
    /// value sources lettered in order as SASS documentation letters them.
    pub fn form(self) -> String {
        // An address is `[Ra+imm]`: the value sources after it start at Rb.
        let first = match self.signature().contains(&OperandKind::Mem) {
            true => 1,
            false => 0,
        };
        let mut sources = ["Ra|imm", "Rb|imm", "Rc|imm", "Rd|imm"][first..]
            .iter()
            .copied();
        let ops: Vec<&str> = self
            .signature()
            .iter()
            .map(|k| match k {
                OperandKind::Src => sources.next().unwrap_or("Rx|imm"),
                _ => k.describe(),
            })
            .collect();
        if ops.is_empty() {
            self.mnemonic()
        } else {
            format!("{} {}", self.mnemonic(), ops.join(", "))
        }
    }

    /// Whether sources are read as f32 (decides how immediates are written and parsed).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Opcode::Fadd
                | Opcode::Fmul
                | Opcode::Ffma
                | Opcode::Fmin
                | Opcode::Fmax
                | Opcode::Fsetp(_)
                | Opcode::F2i
                | Opcode::Mufu(_)
        )
    }

    pub fn pipe(self) -> Pipe {
        match self {
            Opcode::Mov
            | Opcode::Iadd
            | Opcode::Isub
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Min
            | Opcode::Max
            | Opcode::Isetp(_)
            | Opcode::Sel
            | Opcode::Cmp
            | Opcode::Nop => Pipe::Alu,
            Opcode::Imul
            | Opcode::Imad
            | Opcode::Fadd
            | Opcode::Fmul
            | Opcode::Ffma
            | Opcode::Fmin
            | Opcode::Fmax
            | Opcode::Fsetp(_) => Pipe::Fma,
            Opcode::Idiv | Opcode::Irem | Opcode::I2f | Opcode::F2i | Opcode::Mufu(_) => Pipe::Mufu,
            Opcode::Lds | Opcode::Sts => Pipe::Shared,
            Opcode::Ldg | Opcode::Stg | Opcode::AtomgAdd => Pipe::Global,
            Opcode::Bra(_) | Opcode::BarSync | Opcode::Membar | Opcode::Exit => Pipe::Branch,
        }
    }

    pub fn is_memory(self) -> bool {
        matches!(self.pipe(), Pipe::Shared | Pipe::Global)
    }
}
