//! Lane semantics: executes one warp instruction on the active lanes. Shared by the functional
//! runner and the timing model, so both compute the same results.
//!
//! Operands are read when `execute` runs (at issue). Memory is read and written then too; the
//! register or predicate result comes back as a [`Writeback`] that the caller applies with
//! [`apply`] — at once in the functional runner, at completion in the timing model under
//! control codes, so a consumer that issues too early (a dependency the codes fail to protect)
//! really reads the stale value. (The timing model's other scoreboards hold every reader and
//! writer of the destination until completion, so it writes their results at issue.)
//!
//! Defined results instead of faults: `x / 0 = -1` (all ones), `x % 0 = x`,
//! `i32::MIN / -1 = i32::MIN`, `i32::MIN % -1 = 0`; shifts take the amount modulo 32; `F2I`
//! truncates and saturates, NaN gives 0.

use super::fault::FaultKind;
use super::simt_stack::Reconvergence;
use super::warp::WarpContext;
use super::{Dim3, KernelLaunch, LaneMask, MAX_WARP_SIZE};
use crate::isa::{
    Addressing, BranchCond, CmpOp, Instruction, MufuFn, Opcode, Operand, Program, SpecialReg,
};
use crate::sim::memory::GlobalMemory;

/// The per-block and per-SM context an instruction may read.
#[derive(Debug, Clone, Copy)]
pub struct ExecEnv<'a> {
    pub launch: &'a KernelLaunch,
    pub ctaid: Dim3,
    pub smid: u32,
    pub clock: u64,
}

/// Shared memory of one block, in words.
#[derive(Debug, Clone)]
pub struct SharedMemory {
    bytes: u32,
    words: Vec<u32>,
}

impl SharedMemory {
    pub fn new(bytes: u32) -> SharedMemory {
        SharedMemory {
            bytes,
            words: vec![0; bytes.div_ceil(4) as usize],
        }
    }

    fn index(&self, addr: u64) -> Result<usize, FaultKind> {
        if addr % 4 != 0 || addr + 4 > self.bytes as u64 {
            return Err(FaultKind::SharedMemory {
                addr,
                size: self.bytes,
            });
        }
        Ok((addr / 4) as usize)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// The addresses one memory instruction touched, for the timing model (coalescing, banks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemAccess {
    pub space: Space,
    pub kind: AccessKind,
    pub mask: LaneMask,
    /// Byte address per lane (valid where `mask` is set).
    pub addrs: [u64; MAX_WARP_SIZE],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteDst {
    Reg(u8),
    Pred(u8),
    Nzp,
}

/// A result waiting to be written into the warp's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writeback {
    pub dst: WriteDst,
    pub mask: LaneMask,
    pub values: [u32; MAX_WARP_SIZE],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Fell through to the next instruction.
    Next,
    /// A branch; `diverged` when some active lanes went each way.
    Branch { diverged: bool },
    /// `BAR.SYNC`: the warp waits until every live warp of the block has arrived.
    Barrier,
    /// `MEMBAR`: the warp waits until its outstanding memory operations are done.
    Membar,
    /// Lanes exited; `warp_done` when none are left.
    Exit { warp_done: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Executed {
    pub pc: u32,
    /// Lanes active in the SIMT stack at issue.
    pub active: LaneMask,
    /// Active lanes whose guard held: the lanes that did the work.
    pub executed: LaneMask,
    pub writeback: Option<Writeback>,
    pub mem: Option<MemAccess>,
    pub flow: Flow,
}

impl Executed {
    /// No lane did anything: a starting value for [`execute_into`].
    pub const NOTHING: Executed = Executed {
        pc: 0,
        active: 0,
        executed: 0,
        writeback: None,
        mem: None,
        flow: Flow::Next,
    };
}

/// A fault from `execute`, before the caller adds kernel, block and warp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecFault {
    pub pc: u32,
    pub lane: Option<u32>,
    pub kind: FaultKind,
}

fn special(env: &ExecEnv, warp: &WarpContext, s: SpecialReg, lane: u32) -> u32 {
    let tid = warp.tid[lane as usize];
    let (grid, block) = (env.launch.grid, env.launch.block);
    match s {
        SpecialReg::TidX => tid.x,
        SpecialReg::TidY => tid.y,
        SpecialReg::TidZ => tid.z,
        SpecialReg::NtidX => block.x,
        SpecialReg::NtidY => block.y,
        SpecialReg::NtidZ => block.z,
        SpecialReg::CtaidX => env.ctaid.x,
        SpecialReg::CtaidY => env.ctaid.y,
        SpecialReg::CtaidZ => env.ctaid.z,
        SpecialReg::NctaidX => grid.x,
        SpecialReg::NctaidY => grid.y,
        SpecialReg::NctaidZ => grid.z,
        SpecialReg::LaneId => lane,
        SpecialReg::WarpId => warp.warp_in_block,
        SpecialReg::SmId => env.smid,
        SpecialReg::Clock => env.clock as u32,
    }
}

#[inline]
fn read(env: &ExecEnv, warp: &WarpContext, operand: &Operand, lane: u32) -> u32 {
    match *operand {
        Operand::Reg(r) => warp.reg(r.0, lane),
        Operand::Imm(v) => v,
        Operand::Special(s) => special(env, warp, s, lane),
        Operand::Param(i) => env.launch.params.get(i as usize).copied().unwrap_or(0),
        Operand::Pred { pred, negated } => (warp.pred(pred.0, lane) != negated) as u32,
        Operand::Mem { base, offset } => warp.reg(base.0, lane).wrapping_add(offset as u32),
        Operand::Target(t) => t,
    }
}

/// One source operand for every lane at once (lanes outside `mask` may hold anything): a
/// full-warp register row in place, anything else built in `buf` (which starts empty so that
/// an operand read in place costs no fill).
#[inline]
fn read_all<'a>(
    env: &ExecEnv,
    warp: &'a WarpContext,
    operand: Option<&Operand>,
    mask: LaneMask,
    buf: &'a mut Option<[u32; MAX_WARP_SIZE]>,
) -> &'a [u32; MAX_WARP_SIZE] {
    match operand {
        None => buf.insert([0; MAX_WARP_SIZE]),
        Some(Operand::Reg(r)) => {
            if let Some(row) = warp.reg_row(r.0) {
                return row;
            }
            let out = buf.insert([0; MAX_WARP_SIZE]);
            warp.reg_lanes(r.0, out);
            out
        }
        Some(Operand::Imm(v)) => buf.insert([*v; MAX_WARP_SIZE]),
        Some(Operand::Param(i)) => {
            buf.insert([env.launch.params.get(*i as usize).copied().unwrap_or(0); MAX_WARP_SIZE])
        }
        Some(Operand::Special(sr)) => {
            let out = buf.insert([0; MAX_WARP_SIZE]);
            match sr {
                // Per lane, without a match per lane (every lane: those outside `mask` may
                // hold anything).
                SpecialReg::TidX | SpecialReg::TidY | SpecialReg::TidZ => {
                    for (o, t) in out.iter_mut().zip(&warp.tid) {
                        *o = match sr {
                            SpecialReg::TidX => t.x,
                            SpecialReg::TidY => t.y,
                            _ => t.z,
                        };
                    }
                }
                SpecialReg::LaneId => {
                    for (lane, o) in out.iter_mut().enumerate() {
                        *o = lane as u32;
                    }
                }
                // The same in every lane.
                _ => *out = [special(env, warp, *sr, 0); MAX_WARP_SIZE],
            }
            out
        }
        Some(o) => {
            let out = buf.insert([0; MAX_WARP_SIZE]);
            for lane in lanes(mask) {
                out[lane as usize] = read(env, warp, o, lane);
            }
            out
        }
    }
}

/// A source operand of an arithmetic instruction as its lane loop reads it, classified once
/// per PC (see [`Decoded`]).
#[derive(Debug, Clone, Copy)]
enum Src {
    /// No such operand: zeros.
    None,
    Reg(u8),
    Imm(u32),
    Param(u16),
    /// Anything else: the `k`th of the instruction's sources, through [`read_all`].
    Other(u8),
}

/// What [`execute_into`] needs of an arithmetic instruction beyond its opcode: the destination
/// and the sources, worked out once.
#[derive(Debug, Clone, Copy)]
struct AluOperands {
    dst: Option<WriteDst>,
    srcs: [Src; 3],
}

/// What [`execute_into`] reads of a program besides its instructions, worked out once: the
/// reconvergence table and each PC's arithmetic operands (a warp instruction would otherwise
/// look through the opcode's signature and the operand list every time it issues).
#[derive(Debug, Clone)]
pub struct Decoded {
    pub reconvergence: Reconvergence,
    alu: Vec<AluOperands>,
}

impl Decoded {
    pub fn of(program: &Program) -> Decoded {
        let alu = program
            .instructions
            .iter()
            .map(|inst| {
                let dst = match inst.op {
                    Opcode::Cmp => Some(WriteDst::Nzp),
                    Opcode::Isetp(_) | Opcode::Fsetp(_) => {
                        inst.dst_pred().map(|p| WriteDst::Pred(p.0))
                    }
                    _ => inst.dst_reg().map(|r| WriteDst::Reg(r.0)),
                };
                let srcs = inst.sources();
                let src = |k: usize| match srcs.get(k) {
                    None => Src::None,
                    Some(Operand::Reg(r)) => Src::Reg(r.0),
                    Some(Operand::Imm(v)) => Src::Imm(*v),
                    Some(Operand::Param(i)) => Src::Param(*i),
                    Some(_) => Src::Other(k as u8),
                };
                AluOperands {
                    dst,
                    srcs: [src(0), src(1), src(2)],
                }
            })
            .collect();
        Decoded {
            reconvergence: Reconvergence::of(program),
            alu,
        }
    }
}

/// [`read_all`] of a decoded source.
#[inline(always)]
fn read_src<'a>(
    env: &ExecEnv,
    warp: &'a WarpContext,
    inst: &Instruction,
    src: Src,
    mask: LaneMask,
    buf: &'a mut Option<[u32; MAX_WARP_SIZE]>,
) -> &'a [u32; MAX_WARP_SIZE] {
    match src {
        Src::None => buf.insert([0; MAX_WARP_SIZE]),
        Src::Reg(r) => {
            if let Some(row) = warp.reg_row(r) {
                return row;
            }
            let out = buf.insert([0; MAX_WARP_SIZE]);
            warp.reg_lanes(r, out);
            out
        }
        Src::Imm(v) => buf.insert([v; MAX_WARP_SIZE]),
        Src::Param(i) => {
            buf.insert([env.launch.params.get(i as usize).copied().unwrap_or(0); MAX_WARP_SIZE])
        }
        Src::Other(k) => read_all(env, warp, inst.sources().get(k as usize), mask, buf),
    }
}

fn idiv(a: u32, b: u32) -> u32 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        u32::MAX
    } else {
        a.wrapping_div(b) as u32
    }
}

fn irem(a: u32, b: u32) -> u32 {
    let (a, b) = (a as i32, b as i32);
    if b == 0 {
        a as u32
    } else {
        a.wrapping_rem(b) as u32
    }
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn mufu(func: MufuFn, x: f32) -> f32 {
    match func {
        MufuFn::Rcp => 1.0 / x,
        MufuFn::Sqrt => x.sqrt(),
        MufuFn::Rsq => 1.0 / x.sqrt(),
        MufuFn::Ex2 => x.exp2(),
        MufuFn::Lg2 => x.log2(),
        MufuFn::Sin => x.sin(),
        MufuFn::Cos => x.cos(),
    }
}

/// The value an arithmetic opcode computes from its (up to three) sources.
fn alu(op: Opcode, a: u32, b: u32, c: u32) -> u32 {
    match op {
        Opcode::Mov => a,
        Opcode::Iadd => a.wrapping_add(b),
        Opcode::Isub => a.wrapping_sub(b),
        Opcode::Imul => a.wrapping_mul(b),
        Opcode::Imad => a.wrapping_mul(b).wrapping_add(c),
        Opcode::Idiv => idiv(a, b),
        Opcode::Irem => irem(a, b),
        Opcode::Shl => a.wrapping_shl(b & 31),
        Opcode::Shr => a.wrapping_shr(b & 31),
        Opcode::And => a & b,
        Opcode::Or => a | b,
        Opcode::Xor => a ^ b,
        Opcode::Min => (a as i32).min(b as i32) as u32,
        Opcode::Max => (a as i32).max(b as i32) as u32,
        Opcode::Sel => {
            if c != 0 {
                a
            } else {
                b
            }
        }
        Opcode::Fadd => (f(a) + f(b)).to_bits(),
        Opcode::Fmul => (f(a) * f(b)).to_bits(),
        Opcode::Ffma => f(a).mul_add(f(b), f(c)).to_bits(),
        Opcode::Fmin => f(a).min(f(b)).to_bits(),
        Opcode::Fmax => f(a).max(f(b)).to_bits(),
        Opcode::I2f => (a as i32 as f32).to_bits(),
        Opcode::F2i => f(a) as i32 as u32,
        Opcode::Mufu(func) => mufu(func, f(a)).to_bits(),
        Opcode::Isetp(cmp) => cmp.holds(a as i32, b as i32) as u32,
        Opcode::Fsetp(cmp) => cmp.holds(f(a), f(b)) as u32,
        Opcode::Cmp => {
            let d = (a as i32 as i64) - (b as i32 as i64);
            if d < 0 {
                BranchCond::N as u32
            } else if d == 0 {
                BranchCond::Z as u32
            } else {
                BranchCond::P as u32
            }
        }
        _ => 0,
    }
}

/// [`alu`] over the first `n` lanes into `out`, with the opcode decided once (so the common
/// opcodes' lane loops vectorize).
fn alu_lanes(
    op: Opcode,
    a: &[u32; MAX_WARP_SIZE],
    b: &[u32; MAX_WARP_SIZE],
    c: &[u32; MAX_WARP_SIZE],
    n: usize,
    out: &mut [u32; MAX_WARP_SIZE],
) {
    // A full warp's loop has a constant trip count, so it compiles to straight vector code
    // without a remainder loop.
    macro_rules! each {
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {
            if n == MAX_WARP_SIZE {
                for (((o, &$x), &$y), &$z) in out.iter_mut().zip(a).zip(b).zip(c) {
                    *o = $e;
                }
            } else {
                for (((o, &$x), &$y), &$z) in out.iter_mut().zip(a).zip(b).zip(c).take(n) {
                    *o = $e;
                }
            }
        };
    }
    // A comparison's loop per operator, so that the operator is not matched per lane.
    macro_rules! compare {
        ($cmp:expr, |$x:ident, $y:ident| ($p:expr, $q:expr)) => {
            match $cmp {
                CmpOp::Lt => each!(|$x, $y, _z| CmpOp::Lt.holds($p, $q) as u32),
                CmpOp::Le => each!(|$x, $y, _z| CmpOp::Le.holds($p, $q) as u32),
                CmpOp::Gt => each!(|$x, $y, _z| CmpOp::Gt.holds($p, $q) as u32),
                CmpOp::Ge => each!(|$x, $y, _z| CmpOp::Ge.holds($p, $q) as u32),
                CmpOp::Eq => each!(|$x, $y, _z| CmpOp::Eq.holds($p, $q) as u32),
                CmpOp::Ne => each!(|$x, $y, _z| CmpOp::Ne.holds($p, $q) as u32),
            }
        };
    }
    match op {
        Opcode::Mov => each!(|x, _y, _z| x),
        Opcode::Iadd => each!(|x, y, _z| x.wrapping_add(y)),
        Opcode::Isub => each!(|x, y, _z| x.wrapping_sub(y)),
        Opcode::Imul => each!(|x, y, _z| x.wrapping_mul(y)),
        Opcode::Imad => each!(|x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        Opcode::Shl => each!(|x, y, _z| x.wrapping_shl(y & 31)),
        Opcode::Shr => each!(|x, y, _z| x.wrapping_shr(y & 31)),
        Opcode::And => each!(|x, y, _z| x & y),
        Opcode::Or => each!(|x, y, _z| x | y),
        Opcode::Xor => each!(|x, y, _z| x ^ y),
        Opcode::Fadd => each!(|x, y, _z| (f(x) + f(y)).to_bits()),
        Opcode::Fmul => each!(|x, y, _z| (f(x) * f(y)).to_bits()),
        Opcode::Ffma => ffma_lanes(out, a, b, c, n),
        Opcode::Isetp(cmp) => compare!(cmp, |x, y| (x as i32, y as i32)),
        Opcode::Fsetp(cmp) => compare!(cmp, |x, y| (f(x), f(y))),
        _ => {
            for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c).take(n) {
                *o = alu(op, x, y, z);
            }
        }
    }
}

/// Fused multiply-add per lane, rounded once as the hardware does. Without the FMA
/// instructions enabled at compile time, `mul_add` calls the C library once per lane; where
/// the CPU has them, a copy of the loop compiled for them does all lanes in a few vector
/// instructions (same IEEE result).
fn ffma_lanes(
    out: &mut [u32; MAX_WARP_SIZE],
    a: &[u32; MAX_WARP_SIZE],
    b: &[u32; MAX_WARP_SIZE],
    c: &[u32; MAX_WARP_SIZE],
    n: usize,
) {
    #[inline(always)]
    fn lanes_fma(
        out: &mut [u32; MAX_WARP_SIZE],
        a: &[u32; MAX_WARP_SIZE],
        b: &[u32; MAX_WARP_SIZE],
        c: &[u32; MAX_WARP_SIZE],
        n: usize,
    ) {
        // As in `alu_lanes`: a full warp's loop has a constant trip count.
        if n == MAX_WARP_SIZE {
            for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
                *o = f(x).mul_add(f(y), f(z)).to_bits();
            }
        } else {
            for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c).take(n) {
                *o = f(x).mul_add(f(y), f(z)).to_bits();
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "fma")]
        fn with_fma(
            out: &mut [u32; MAX_WARP_SIZE],
            a: &[u32; MAX_WARP_SIZE],
            b: &[u32; MAX_WARP_SIZE],
            c: &[u32; MAX_WARP_SIZE],
            n: usize,
        ) {
            lanes_fma(out, a, b, c, n)
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports FMA (checked just above).
            return unsafe { with_fma(out, a, b, c, n) };
        }
    }
    lanes_fma(out, a, b, c, n)
}

fn lanes(mask: LaneMask) -> impl Iterator<Item = u32> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let lane = m.trailing_zeros();
            m &= m - 1;
            lane
        })
    })
}

/// Executes the warp's next instruction and describes it in `out` (whose old contents are
/// overwritten; the description is several hundred bytes, so callers keep one buffer). On a
/// fault nothing of this instruction is written and `out` holds nothing meaningful.
pub fn execute_into(
    program: &Program,
    decoded: &Decoded,
    warp: &mut WarpContext,
    env: &ExecEnv,
    global: &mut GlobalMemory,
    shared: &mut SharedMemory,
    out: &mut Executed,
) -> Result<(), ExecFault> {
    let Some(pc) = warp.simt.pc() else {
        return Err(ExecFault {
            pc: 0,
            lane: None,
            kind: FaultKind::Deadlock {
                detail: "warp has already exited".into(),
            },
        });
    };
    let fault = |lane: Option<u32>, kind: FaultKind| ExecFault { pc, lane, kind };
    let Some(inst) = program.instructions.get(pc as usize) else {
        return Err(fault(
            None,
            FaultKind::PcOutOfProgram {
                len: program.instructions.len() as u32,
            },
        ));
    };
    let active = warp.simt.active();
    let executed = if inst.guard.pred.0 >= 7 {
        // PT: every active lane, or none for @!PT.
        if inst.guard.negated {
            0
        } else {
            active
        }
    } else {
        let holds = warp.pred_lanes(inst.guard.pred.0);
        active & if inst.guard.negated { !holds } else { holds }
    };
    out.pc = pc;
    out.active = active;
    out.executed = executed;
    out.writeback = None;
    out.mem = None;
    out.flow = Flow::Next;
    let op = inst.op;
    match op {
        Opcode::Bra(cond) => {
            let taken = match cond {
                BranchCond::Always => executed,
                BranchCond::Nzp(mask) => executed & warp.nzp_lanes(mask),
            };
            let target = inst.target().unwrap_or(pc + 1);
            let diverged = warp
                .simt
                .branch(taken, target, pc + 1, decoded.reconvergence.ipdom(pc));
            out.flow = Flow::Branch { diverged };
        }
        Opcode::Exit => {
            warp.exited |= executed;
            warp.simt.exit(executed, pc + 1);
            out.flow = Flow::Exit {
                warp_done: warp.simt.is_done(),
            };
        }
        Opcode::BarSync | Opcode::Membar | Opcode::Nop => {
            warp.simt.jump(pc + 1);
            if executed != 0 {
                out.flow = match op {
                    Opcode::BarSync => Flow::Barrier,
                    Opcode::Membar => Flow::Membar,
                    _ => Flow::Next,
                };
            }
        }
        Opcode::Ldg | Opcode::Stg | Opcode::AtomgAdd | Opcode::Lds | Opcode::Sts => {
            memory_op(program, inst, warp, env, executed, global, shared, out)
                .map_err(|(lane, kind)| fault(Some(lane), kind))?;
            warp.simt.jump(pc + 1);
        }
        _ => {
            let ops = decoded
                .alu
                .get(pc as usize)
                .copied()
                .unwrap_or(AluOperands {
                    dst: None,
                    srcs: [Src::None; 3],
                });
            // Arithmetic has no effect but its result: nothing to compute without one.
            if let (Some(dst), true) = (ops.dst, executed != 0) {
                let n = warp.warp_size as usize;
                let (mut buf_a, mut buf_b, mut buf_c) = (None, None, None);
                let [sa, sb, sc] = ops.srcs;
                let a = read_src(env, warp, inst, sa, executed, &mut buf_a);
                let b = read_src(env, warp, inst, sb, executed, &mut buf_b);
                let c = read_src(env, warp, inst, sc, executed, &mut buf_c);
                let wb = out.writeback.insert(Writeback {
                    dst,
                    mask: executed,
                    values: [0; MAX_WARP_SIZE],
                });
                alu_lanes(op, a, b, c, n, &mut wb.values);
            }
            warp.simt.jump(pc + 1);
        }
    }
    Ok(())
}

/// A memory instruction's access (and loaded values) into `out.mem` and `out.writeback`.
#[allow(clippy::too_many_arguments)]
fn memory_op(
    program: &Program,
    inst: &Instruction,
    warp: &WarpContext,
    env: &ExecEnv,
    executed: LaneMask,
    global: &mut GlobalMemory,
    shared: &mut SharedMemory,
    out: &mut Executed,
) -> Result<(), (u32, FaultKind)> {
    let op = inst.op;
    let space = if matches!(op, Opcode::Lds | Opcode::Sts) {
        Space::Shared
    } else {
        Space::Global
    };
    let kind = match op {
        Opcode::Ldg | Opcode::Lds => AccessKind::Load,
        Opcode::Stg | Opcode::Sts => AccessKind::Store,
        _ => AccessKind::Atomic,
    };
    let scale = if program.addressing == Addressing::Word {
        4
    } else {
        1
    };
    let mem_operand = inst
        .operands
        .iter()
        .find(|o| matches!(o, Operand::Mem { .. }))
        .copied()
        .unwrap_or(Operand::Imm(0));
    let data_operand = match kind {
        AccessKind::Load => None,
        AccessKind::Store => inst.operands.get(1),
        AccessKind::Atomic => inst.operands.get(2),
    };
    let access = out.mem.insert(MemAccess {
        space,
        kind,
        mask: executed,
        addrs: [0; MAX_WARP_SIZE],
    });
    let mut base_buf = None;
    let (base, offset) = match mem_operand {
        Operand::Mem { base, offset } => (
            read_all(
                env,
                warp,
                Some(&Operand::Reg(base)),
                executed,
                &mut base_buf,
            ),
            offset as u32,
        ),
        other => (
            read_all(env, warp, Some(&other), executed, &mut base_buf),
            0,
        ),
    };
    // Check every lane before touching memory, so a fault leaves memory as it was.
    for lane in lanes(executed) {
        let addr = base[lane as usize].wrapping_add(offset) as u64 * scale;
        access.addrs[lane as usize] = addr;
        match space {
            Space::Global => global
                .validate(addr)
                .map_err(|e| (lane, FaultKind::global(e)))?,
            Space::Shared => {
                shared.index(addr).map_err(|k| (lane, k))?;
            }
        }
    }
    let mut values = [0u32; MAX_WARP_SIZE];
    // Plain global loads and stores a warp at a time (the addresses are valid).
    match (space, kind) {
        (Space::Global, AccessKind::Load) => {
            global.read_lanes(executed, &access.addrs, &mut values);
            out.writeback = inst.dst_reg().filter(|_| executed != 0).map(|r| Writeback {
                dst: WriteDst::Reg(r.0),
                mask: executed,
                values,
            });
            return Ok(());
        }
        (Space::Global, AccessKind::Store) => {
            let mut data_buf = None;
            let data = read_all(env, warp, data_operand, executed, &mut data_buf);
            global.write_lanes(executed, &access.addrs, data);
            out.writeback = None;
            return Ok(());
        }
        _ => {}
    }
    for lane in lanes(executed) {
        let addr = access.addrs[lane as usize];
        let data = data_operand.map_or(0, |o| read(env, warp, o, lane));
        let err = |k| (lane, k);
        values[lane as usize] = match (space, kind) {
            (Space::Global, AccessKind::Load) => {
                global.read(addr).map_err(|e| err(FaultKind::global(e)))?
            }
            (Space::Global, AccessKind::Store) => {
                global
                    .write(addr, data)
                    .map_err(|e| err(FaultKind::global(e)))?;
                0
            }
            (Space::Global, AccessKind::Atomic) => global
                .atomic_add(addr, data)
                .map_err(|e| err(FaultKind::global(e)))?,
            (Space::Shared, AccessKind::Store) => {
                let i = shared.index(addr).map_err(err)?;
                shared.words[i] = data;
                0
            }
            (Space::Shared, _) => {
                let i = shared.index(addr).map_err(err)?;
                shared.words[i]
            }
        };
    }
    out.writeback = match (kind, inst.dst_reg()) {
        (AccessKind::Load | AccessKind::Atomic, Some(r)) if executed != 0 => Some(Writeback {
            dst: WriteDst::Reg(r.0),
            mask: executed,
            values,
        }),
        _ => None,
    };
    Ok(())
}

/// Writes a result into the warp's registers.
pub fn apply(warp: &mut WarpContext, wb: &Writeback) {
    match wb.dst {
        WriteDst::Reg(r) => return warp.set_reg_lanes(r, wb.mask, &wb.values),
        WriteDst::Pred(p) => return warp.set_pred_lanes(p, wb.mask, &wb.values),
        WriteDst::Nzp => {}
    }
    for lane in lanes(wb.mask) {
        let v = wb.values[lane as usize];
        match wb.dst {
            WriteDst::Reg(r) => warp.set_reg(r, lane, v),
            WriteDst::Pred(p) => warp.set_pred(p, lane, v != 0),
            WriteDst::Nzp => warp.set_nzp(lane, v as u8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_loops_match_the_scalar_alu() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let specials = [
            0u32,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            1,
            0x0080_0000,
            0x3f80_0000,
        ];
        for _ in 0..2000 {
            let mut pick = || -> [u32; MAX_WARP_SIZE] {
                std::array::from_fn(|_| {
                    if rng.gen_bool(0.2) {
                        specials[rng.gen_range(0..specials.len())]
                    } else {
                        rng.gen()
                    }
                })
            };
            let (a, b, c) = (pick(), pick(), pick());
            let compares = CmpOp::ALL
                .iter()
                .flat_map(|&c| [Opcode::Isetp(c), Opcode::Fsetp(c)]);
            for op in [
                Opcode::Ffma,
                Opcode::Fadd,
                Opcode::Fmul,
                Opcode::Imad,
                Opcode::Iadd,
                Opcode::Isub,
                Opcode::Imul,
                Opcode::Shl,
                Opcode::Shr,
                Opcode::And,
                Opcode::Or,
                Opcode::Xor,
            ]
            .into_iter()
            .chain(compares)
            {
                for n in [32, 13] {
                    let mut got = [0u32; MAX_WARP_SIZE];
                    alu_lanes(op, &a, &b, &c, n, &mut got);
                    for lane in 0..n {
                        let want = alu(op, a[lane], b[lane], c[lane]);
                        if f(want).is_nan() {
                            assert!(f(got[lane]).is_nan(), "{op:?} lane {lane}");
                        } else {
                            assert_eq!(
                                got[lane], want,
                                "{op:?} {:#x} {:#x} {:#x}",
                                a[lane], b[lane], c[lane]
                            );
                        }
                    }
                    assert!(got[n..].iter().all(|&v| v == 0), "{op:?} past lane {n}");
                }
            }
        }
    }

    #[test]
    fn defined_division_results() {
        assert_eq!(idiv(7, 0), u32::MAX);
        assert_eq!(irem(7, 0), 7);
        assert_eq!(idiv(i32::MIN as u32, -1i32 as u32), i32::MIN as u32);
        assert_eq!(irem(i32::MIN as u32, -1i32 as u32), 0);
        assert_eq!(idiv(-7i32 as u32, 2) as i32, -3);
        assert_eq!(irem(-7i32 as u32, 2) as i32, -1);
    }

    #[test]
    fn cmp_sets_nzp_from_a_minus_b() {
        assert_eq!(alu(Opcode::Cmp, 1, 2, 0), BranchCond::N as u32);
        assert_eq!(alu(Opcode::Cmp, 2, 2, 0), BranchCond::Z as u32);
        assert_eq!(alu(Opcode::Cmp, 3, 2, 0), BranchCond::P as u32);
        // No overflow: i32::MIN - 1 is negative.
        assert_eq!(
            alu(Opcode::Cmp, i32::MIN as u32, 1, 0),
            BranchCond::N as u32
        );
    }

    #[test]
    fn float_and_shift_semantics() {
        let one = 1.0f32.to_bits();
        let two = 2.0f32.to_bits();
        assert_eq!(f(alu(Opcode::Ffma, two, two, one)), 5.0);
        assert_eq!(alu(Opcode::F2i, f32::NAN.to_bits(), 0, 0), 0);
        assert_eq!(alu(Opcode::F2i, 1e20f32.to_bits(), 0, 0), i32::MAX as u32);
        assert_eq!(alu(Opcode::Shl, 1, 33, 0), 2);
        assert_eq!(alu(Opcode::Shr, 0x8000_0000, 31, 0), 1);
        assert_eq!(
            f(alu(Opcode::Mufu(MufuFn::Rcp), 4.0f32.to_bits(), 0, 0)),
            0.25
        );
    }
}
