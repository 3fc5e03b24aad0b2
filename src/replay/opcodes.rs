//! The one table that maps SASS opcodes (with their modifiers) to what the timing model needs:
//! the warpscope pipe, the memory space and access kind (L1TEX global/local/texture path or
//! MIO shared path), and whether the instruction is a branch, a barrier, a memory barrier or an
//! exit. Rows name the GPU generations an opcode exists on, by the `-binary version` of the
//! trace header: 61 (Pascal; Maxwell's 50–53 share its ISA), 70/72 (Volta), 75 (Turing), 80/86/87
//! (Ampere), 89 (Ada), 90 (Hopper).
//!
//! Simplifications: warpscope has six pipes, so FP64, half-precision and tensor-core math run on
//! the FMA pipe, and conversions, `S2R` and other variable-latency ALU operations on the MUFU
//! (MIO) pipe; latencies are the pipes' (from the GPU config), not per opcode. Generic `LD`/`ST`/
//! `ATOM` take the global (L1TEX) path even when their addresses fall in shared memory.
//! Uniform-datapath instructions run on the ALU pipe; uniform registers are not tracked.

use crate::isa::Pipe;
use crate::sim::exec::{AccessKind, Space};
use crate::sim::stream::{ReplayFlow, ReplayOp};

/// A GPU generation, as far as its SASS opcodes differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// Maxwell and Pascal (`sm_50`–`sm_62`).
    Pascal,
    /// `sm_70`, `sm_72`.
    Volta,
    /// `sm_75`.
    Turing,
    /// `sm_80`, `sm_86`, `sm_87`.
    Ampere,
    /// `sm_89`.
    Ada,
    /// `sm_90`.
    Hopper,
}

impl Generation {
    pub const ALL: [Generation; 6] = [
        Generation::Pascal,
        Generation::Volta,
        Generation::Turing,
        Generation::Ampere,
        Generation::Ada,
        Generation::Hopper,
    ];

    /// The generation of a trace's `-binary version` (compute capability × 10).
    pub fn from_binary_version(version: u32) -> Option<Generation> {
        match version {
            50..=53 | 60..=62 => Some(Generation::Pascal),
            70 | 72 => Some(Generation::Volta),
            75 => Some(Generation::Turing),
            80 | 86 | 87 => Some(Generation::Ampere),
            89 => Some(Generation::Ada),
            90 => Some(Generation::Hopper),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Generation::Pascal => "Pascal",
            Generation::Volta => "Volta",
            Generation::Turing => "Turing",
            Generation::Ampere => "Ampere",
            Generation::Ada => "Ada",
            Generation::Hopper => "Hopper",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The binary versions replay accepts, for error messages.
pub const SUPPORTED_VERSIONS: &str = "50-53, 60-62 (Maxwell/Pascal), 70, 72 (Volta), 75 (Turing), \
                                      80, 86, 87 (Ampere), 89 (Ada), 90 (Hopper)";

/// Where a memory instruction's addresses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemSpace {
    Global,
    Local,
    /// Generic addressing (`LD`/`ST`/`ATOM`): global or shared by address; taken as global.
    Generic,
    Texture,
    Shared,
}

impl MemSpace {
    /// The simulator's space: everything but shared memory is served by L1TEX.
    pub fn sim_space(self) -> Space {
        match self {
            MemSpace::Shared => Space::Shared,
            _ => Space::Global,
        }
    }
}

/// What one SASS opcode is to the timing model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub pipe: Pipe,
    pub mem: Option<(MemSpace, AccessKind)>,
    pub flow: ReplayFlow,
}

impl OpInfo {
    const fn new(pipe: Pipe) -> OpInfo {
        OpInfo {
            pipe,
            mem: None,
            flow: ReplayFlow::Next,
        }
    }

    const fn mem(space: MemSpace, kind: AccessKind) -> OpInfo {
        let pipe = match space {
            MemSpace::Shared => Pipe::Shared,
            _ => Pipe::Global,
        };
        OpInfo {
            pipe,
            mem: Some((space, kind)),
            flow: ReplayFlow::Next,
        }
    }

    const fn flow(flow: ReplayFlow) -> OpInfo {
        OpInfo {
            pipe: Pipe::Branch,
            mem: None,
            flow,
        }
    }

    /// The generic class of an opcode the table does not know: the ALU pipe, or — when the
    /// trace gives it addresses — a global load (it writes a register) or store.
    pub fn generic(has_addresses: bool, has_destination: bool) -> OpInfo {
        if !has_addresses {
            return OpInfo::new(Pipe::Alu);
        }
        let kind = if has_destination {
            AccessKind::Load
        } else {
            AccessKind::Store
        };
        OpInfo::mem(MemSpace::Global, kind)
    }

    /// What the simulator's stream hook needs per PC.
    pub fn replay_op(self) -> ReplayOp {
        ReplayOp {
            flow: self.flow,
            mem: self.mem.map(|(space, kind)| (space.sim_space(), kind)),
        }
    }
}

const PASCAL: u8 = 1 << Generation::Pascal as u8;
const VOLTA_UP: u8 = !PASCAL & ALL;
const TURING_UP: u8 = VOLTA_UP & !(1 << Generation::Volta as u8);
const AMPERE_UP: u8 = TURING_UP & !(1 << Generation::Turing as u8);
const HOPPER: u8 = 1 << Generation::Hopper as u8;
const ALL: u8 = 0b11_1111;

use crate::sim::exec::AccessKind::{Atomic, Load, Store};
use MemSpace::{Generic, Global, Local, Shared, Texture};
use Pipe::{Alu, Fma, Mufu};
use ReplayFlow::{Barrier, Branch, Exit, Membar};

/// `(base opcode, generations, class)`. The base is the opcode before its first `.`; rows for
/// the same base with different generations may differ in class.
const TABLE: &[(&str, u8, OpInfo)] = &[
    // Integer and logic ALU.
    ("MOV", ALL, OpInfo::new(Alu)),
    ("MOV32I", ALL, OpInfo::new(Alu)),
    ("SEL", ALL, OpInfo::new(Alu)),
    ("ISETP", ALL, OpInfo::new(Alu)),
    ("IMNMX", ALL, OpInfo::new(Alu)),
    ("IABS", AMPERE_UP, OpInfo::new(Alu)),
    ("LOP3", ALL, OpInfo::new(Alu)),
    ("SHF", ALL, OpInfo::new(Alu)),
    ("PRMT", ALL, OpInfo::new(Alu)),
    ("LEA", ALL, OpInfo::new(Alu)),
    ("IADD3", ALL, OpInfo::new(Alu)),
    ("FLO", ALL, OpInfo::new(Alu)),
    ("POPC", ALL, OpInfo::new(Alu)),
    ("BREV", ALL, OpInfo::new(Alu)),
    ("P2R", ALL, OpInfo::new(Alu)),
    ("R2P", ALL, OpInfo::new(Alu)),
    ("VOTE", ALL, OpInfo::new(Alu)),
    ("NOP", ALL, OpInfo::new(Alu)),
    ("CS2R", VOLTA_UP, OpInfo::new(Alu)),
    ("PLOP3", VOLTA_UP, OpInfo::new(Alu)),
    ("BMSK", AMPERE_UP, OpInfo::new(Alu)),
    ("SGXT", AMPERE_UP, OpInfo::new(Alu)),
    ("VIADD", HOPPER, OpInfo::new(Alu)),
    ("VIMNMX", HOPPER, OpInfo::new(Alu)),
    ("ELECT", HOPPER, OpInfo::new(Alu)),
    // Maxwell/Pascal-only integer and logic forms.
    ("IADD", PASCAL, OpInfo::new(Alu)),
    ("IADD32I", PASCAL, OpInfo::new(Alu)),
    ("ISCADD", PASCAL, OpInfo::new(Alu)),
    ("ISCADD32I", PASCAL, OpInfo::new(Alu)),
    ("LOP", PASCAL, OpInfo::new(Alu)),
    ("LOP32I", PASCAL, OpInfo::new(Alu)),
    ("SHL", PASCAL, OpInfo::new(Alu)),
    ("SHR", PASCAL, OpInfo::new(Alu)),
    ("BFE", PASCAL, OpInfo::new(Alu)),
    ("BFI", PASCAL, OpInfo::new(Alu)),
    ("ICMP", PASCAL, OpInfo::new(Alu)),
    ("CSET", PASCAL, OpInfo::new(Alu)),
    ("CSETP", PASCAL, OpInfo::new(Alu)),
    ("PSET", PASCAL, OpInfo::new(Alu)),
    ("PSETP", PASCAL, OpInfo::new(Alu)),
    ("FCMP", PASCAL, OpInfo::new(Alu)),
    // FP32 compare/select/min-max execute on the ALU pipe.
    ("FSETP", ALL, OpInfo::new(Alu)),
    ("FSET", ALL, OpInfo::new(Alu)),
    ("FSEL", ALL, OpInfo::new(Alu)),
    ("FMNMX", ALL, OpInfo::new(Alu)),
    ("FCHK", ALL, OpInfo::new(Alu)),
    // Uniform datapath (Turing on): ALU pipe, uniform registers untracked.
    ("UMOV", TURING_UP, OpInfo::new(Alu)),
    ("UIADD3", TURING_UP, OpInfo::new(Alu)),
    ("UIMAD", TURING_UP, OpInfo::new(Alu)),
    ("ULOP3", TURING_UP, OpInfo::new(Alu)),
    ("USHF", TURING_UP, OpInfo::new(Alu)),
    ("ULEA", TURING_UP, OpInfo::new(Alu)),
    ("UISETP", TURING_UP, OpInfo::new(Alu)),
    ("USEL", TURING_UP, OpInfo::new(Alu)),
    ("UPRMT", TURING_UP, OpInfo::new(Alu)),
    ("UFLO", TURING_UP, OpInfo::new(Alu)),
    ("UPOPC", TURING_UP, OpInfo::new(Alu)),
    ("UBREV", TURING_UP, OpInfo::new(Alu)),
    ("UPLOP3", TURING_UP, OpInfo::new(Alu)),
    ("ULDC", TURING_UP, OpInfo::new(Alu)),
    ("S2UR", TURING_UP, OpInfo::new(Alu)),
    ("R2UR", TURING_UP, OpInfo::new(Alu)),
    ("VOTEU", TURING_UP, OpInfo::new(Alu)),
    ("UBMSK", AMPERE_UP, OpInfo::new(Alu)),
    ("USGXT", AMPERE_UP, OpInfo::new(Alu)),
    ("UCGABAR_ARV", HOPPER, OpInfo::new(Alu)),
    ("UCGABAR_WAIT", HOPPER, OpInfo::new(Alu)),
    ("USETMAXREG", HOPPER, OpInfo::new(Alu)),
    // FP32, integer multiply-add, FP16, FP64 and tensor math: the FMA pipe.
    ("FADD", ALL, OpInfo::new(Fma)),
    ("FADD32I", ALL, OpInfo::new(Fma)),
    ("FMUL", ALL, OpInfo::new(Fma)),
    ("FMUL32I", ALL, OpInfo::new(Fma)),
    ("FFMA", ALL, OpInfo::new(Fma)),
    ("FFMA32I", ALL, OpInfo::new(Fma)),
    ("FSWZADD", ALL, OpInfo::new(Fma)),
    ("HADD2", ALL, OpInfo::new(Fma)),
    ("HMUL2", ALL, OpInfo::new(Fma)),
    ("HFMA2", ALL, OpInfo::new(Fma)),
    ("HSETP2", ALL, OpInfo::new(Fma)),
    ("HMNMX2", AMPERE_UP, OpInfo::new(Fma)),
    ("DADD", ALL, OpInfo::new(Fma)),
    ("DMUL", ALL, OpInfo::new(Fma)),
    ("DFMA", ALL, OpInfo::new(Fma)),
    ("DSETP", ALL, OpInfo::new(Fma)),
    ("DMNMX", PASCAL, OpInfo::new(Fma)),
    ("XMAD", PASCAL, OpInfo::new(Fma)),
    ("IMADSP", PASCAL, OpInfo::new(Fma)),
    ("IMUL", PASCAL, OpInfo::new(Fma)),
    ("IMUL32I", PASCAL, OpInfo::new(Fma)),
    ("IMAD", ALL, OpInfo::new(Fma)),
    ("IMAD32I", PASCAL, OpInfo::new(Fma)),
    ("IDP", ALL, OpInfo::new(Fma)),
    ("HMMA", VOLTA_UP, OpInfo::new(Fma)),
    ("IMMA", TURING_UP, OpInfo::new(Fma)),
    ("BMMA", TURING_UP, OpInfo::new(Fma)),
    ("DMMA", AMPERE_UP, OpInfo::new(Fma)),
    ("HGMMA", HOPPER, OpInfo::new(Fma)),
    ("IGMMA", HOPPER, OpInfo::new(Fma)),
    ("QGMMA", HOPPER, OpInfo::new(Fma)),
    ("BGMMA", HOPPER, OpInfo::new(Fma)),
    ("WARPGROUP", HOPPER, OpInfo::new(Fma)),
    // Transcendentals, conversions and special-register reads: the MUFU pipe (MIO path).
    ("MUFU", ALL, OpInfo::new(Mufu)),
    ("RRO", PASCAL, OpInfo::new(Mufu)),
    ("I2F", ALL, OpInfo::new(Mufu)),
    ("F2I", ALL, OpInfo::new(Mufu)),
    ("F2F", ALL, OpInfo::new(Mufu)),
    ("I2I", ALL, OpInfo::new(Mufu)),
    ("FRND", ALL, OpInfo::new(Mufu)),
    ("F2FP", AMPERE_UP, OpInfo::new(Alu)),
    ("I2IP", AMPERE_UP, OpInfo::new(Alu)),
    ("S2R", ALL, OpInfo::new(Mufu)),
    ("B2R", ALL, OpInfo::new(Mufu)),
    ("R2B", ALL, OpInfo::new(Mufu)),
    ("MATCH", VOLTA_UP, OpInfo::new(Mufu)),
    ("REDUX", AMPERE_UP, OpInfo::new(Mufu)),
    // Shared memory and the other MIO operations.
    ("LDS", ALL, OpInfo::mem(Shared, Load)),
    ("STS", ALL, OpInfo::mem(Shared, Store)),
    ("ATOMS", ALL, OpInfo::mem(Shared, Atomic)),
    ("LDSM", TURING_UP, OpInfo::mem(Shared, Load)),
    ("STSM", HOPPER, OpInfo::mem(Shared, Store)),
    ("STAS", HOPPER, OpInfo::mem(Shared, Store)),
    ("SHFL", ALL, OpInfo::new(Pipe::Shared)),
    ("LDC", ALL, OpInfo::new(Pipe::Shared)),
    ("SYNCS", HOPPER, OpInfo::new(Pipe::Shared)),
    // Global, local, generic and texture memory: the L1TEX path.
    ("LDG", ALL, OpInfo::mem(Global, Load)),
    ("STG", ALL, OpInfo::mem(Global, Store)),
    ("ATOMG", ALL, OpInfo::mem(Global, Atomic)),
    ("RED", ALL, OpInfo::mem(Global, Atomic)),
    ("LDL", ALL, OpInfo::mem(Local, Load)),
    ("STL", ALL, OpInfo::mem(Local, Store)),
    ("LD", ALL, OpInfo::mem(Generic, Load)),
    ("ST", ALL, OpInfo::mem(Generic, Store)),
    ("ATOM", ALL, OpInfo::mem(Generic, Atomic)),
    ("CCTL", ALL, OpInfo::new(Pipe::Global)),
    ("TEX", ALL, OpInfo::mem(Texture, Load)),
    ("TLD", ALL, OpInfo::mem(Texture, Load)),
    ("TLD4", ALL, OpInfo::mem(Texture, Load)),
    ("TXD", ALL, OpInfo::mem(Texture, Load)),
    ("TXQ", ALL, OpInfo::mem(Texture, Load)),
    ("TMML", ALL, OpInfo::mem(Texture, Load)),
    ("TEXS", PASCAL, OpInfo::mem(Texture, Load)),
    ("TLDS", PASCAL, OpInfo::mem(Texture, Load)),
    ("TLD4S", PASCAL, OpInfo::mem(Texture, Load)),
    ("SULD", ALL, OpInfo::mem(Global, Load)),
    ("SUST", ALL, OpInfo::mem(Global, Store)),
    ("SUATOM", ALL, OpInfo::mem(Global, Atomic)),
    ("SURED", ALL, OpInfo::mem(Global, Atomic)),
    ("LDGSTS", AMPERE_UP, OpInfo::mem(Global, Load)),
    ("LDGDEPBAR", AMPERE_UP, OpInfo::new(Alu)),
    ("UTMALDG", HOPPER, OpInfo::new(Pipe::Global)),
    ("UTMASTG", HOPPER, OpInfo::new(Pipe::Global)),
    ("UTMAPF", HOPPER, OpInfo::new(Pipe::Global)),
    ("UTMAREDG", HOPPER, OpInfo::new(Pipe::Global)),
    ("UBLKCP", HOPPER, OpInfo::new(Pipe::Global)),
    ("UBLKPF", HOPPER, OpInfo::new(Pipe::Global)),
    ("UBLKRED", HOPPER, OpInfo::new(Pipe::Global)),
    // Control flow.
    ("BRA", ALL, OpInfo::flow(Branch)),
    ("BRX", ALL, OpInfo::flow(Branch)),
    ("JMP", ALL, OpInfo::flow(Branch)),
    ("JMX", ALL, OpInfo::flow(Branch)),
    ("CALL", VOLTA_UP, OpInfo::flow(Branch)),
    ("RET", ALL, OpInfo::flow(Branch)),
    ("CAL", PASCAL, OpInfo::flow(Branch)),
    ("JCAL", PASCAL, OpInfo::flow(Branch)),
    ("PRET", PASCAL, OpInfo::flow(Branch)),
    ("BRK", PASCAL, OpInfo::flow(Branch)),
    ("CONT", PASCAL, OpInfo::flow(Branch)),
    ("PBK", PASCAL, OpInfo::flow(Branch)),
    ("PCNT", PASCAL, OpInfo::flow(Branch)),
    ("SSY", PASCAL, OpInfo::flow(Branch)),
    ("SYNC", PASCAL, OpInfo::flow(Branch)),
    ("PEXIT", PASCAL, OpInfo::flow(Branch)),
    ("BSSY", VOLTA_UP, OpInfo::flow(Branch)),
    ("BSYNC", VOLTA_UP, OpInfo::flow(Branch)),
    ("BREAK", VOLTA_UP, OpInfo::flow(Branch)),
    ("BMOV", VOLTA_UP, OpInfo::flow(Branch)),
    ("WARPSYNC", VOLTA_UP, OpInfo::flow(Branch)),
    ("YIELD", VOLTA_UP, OpInfo::flow(Branch)),
    ("NANOSLEEP", VOLTA_UP, OpInfo::flow(Branch)),
    ("ACQBULK", HOPPER, OpInfo::flow(Branch)),
    ("KILL", ALL, OpInfo::flow(Exit)),
    ("EXIT", ALL, OpInfo::flow(Exit)),
    ("BPT", ALL, OpInfo::flow(Branch)),
    ("BAR", ALL, OpInfo::flow(Barrier)),
    ("MEMBAR", ALL, OpInfo::flow(Membar)),
    ("FENCE", HOPPER, OpInfo::flow(Membar)),
    ("ERRBAR", VOLTA_UP, OpInfo::flow(Branch)),
    ("DEPBAR", ALL, OpInfo::new(Alu)),
];

/// The class of `opcode` (with modifiers, as the trace writes it: `LDG.E.64.SYS`,
/// `BAR.SYNC.DEFER_BLOCKING`) on generation `generation`, or `None` when the table does not
/// know it there.
pub fn classify(opcode: &str, generation: Generation) -> Option<OpInfo> {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let bit = generation.bit();
    let info = TABLE
        .iter()
        .find(|(name, gens, _)| *name == base && gens & bit != 0)
        .map(|(_, _, info)| *info)?;
    // The modifiers that change the class: an arrive-only barrier does not wait.
    if base == "BAR" && parts.any(|m| m == "ARV") {
        return Some(OpInfo::new(Pipe::Branch));
    }
    Some(info)
}

/// The access width in bytes a memory opcode's modifiers state (`.64` → 8, `.U16` → 2,
/// `.128` → 16); 4 when none does. Accel-Sim reads the width this way too, because the
/// tracer's `mem_width` field is unreliable.
pub fn access_width(opcode: &str) -> u32 {
    for part in opcode.split('.').skip(1) {
        let digits = part
            .strip_prefix('U')
            .or_else(|| part.strip_prefix('S'))
            .unwrap_or(part);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(bits) = digits.parse::<u32>() {
                if bits >= 8 {
                    return bits / 8;
                }
            }
        }
    }
    4
}

/// Every base opcode the table knows on `generation`, for tests and documentation.
pub fn known_opcodes(generation: Generation) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|(_, gens, _)| gens & generation.bit() != 0)
        .map(|(name, _, _)| *name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(op: &str, g: Generation) -> OpInfo {
        classify(op, g).unwrap_or_else(|| panic!("{op} unknown on {}", g.name()))
    }

    #[test]
    fn binary_versions_map_to_generations() {
        let cases = [
            (61, Generation::Pascal),
            (52, Generation::Pascal),
            (70, Generation::Volta),
            (75, Generation::Turing),
            (80, Generation::Ampere),
            (86, Generation::Ampere),
            (89, Generation::Ada),
            (90, Generation::Hopper),
        ];
        for (v, g) in cases {
            assert_eq!(Generation::from_binary_version(v), Some(g), "version {v}");
        }
        for v in [0, 35, 63, 71, 100, 120] {
            assert_eq!(Generation::from_binary_version(v), None, "version {v}");
        }
    }

    #[test]
    fn pascal_vectoradd_opcodes_classify() {
        let g = Generation::Pascal;
        assert_eq!(class("XMAD.PSL.CBCC", g).pipe, Pipe::Fma);
        assert_eq!(class("IADD.X", g).pipe, Pipe::Alu);
        assert_eq!(class("SHL", g).pipe, Pipe::Alu);
        assert_eq!(class("S2R", g).pipe, Pipe::Mufu);
        assert_eq!(class("FADD", g).pipe, Pipe::Fma);
        let ldg = class("LDG.E.CG", g);
        assert_eq!((ldg.pipe, ldg.mem), (Pipe::Global, Some((Global, Load))));
        assert_eq!(class("STG.E", g).mem, Some((Global, Store)));
        assert_eq!(class("EXIT", g).flow, ReplayFlow::Exit);
        assert_eq!(class("SSY", g).flow, ReplayFlow::Branch);
        // Volta removed XMAD and the Pascal convergence opcodes.
        assert!(classify("XMAD", Generation::Volta).is_none());
        assert!(classify("SSY", Generation::Volta).is_none());
    }

    #[test]
    fn volta_opcodes_classify() {
        let g = Generation::Volta;
        assert_eq!(class("IMAD.MOV.U32", g).pipe, Pipe::Fma);
        assert_eq!(class("IADD3", g).pipe, Pipe::Alu);
        assert_eq!(class("HMMA.884.F32.F32", g).pipe, Pipe::Fma);
        assert_eq!(class("BSSY", g).flow, ReplayFlow::Branch);
        assert_eq!(class("WARPSYNC", g).pipe, Pipe::Branch);
        let lds = class("LDS.U.128", g);
        assert_eq!((lds.pipe, lds.mem), (Pipe::Shared, Some((Shared, Load))));
        assert_eq!(class("BAR.SYNC", g).flow, ReplayFlow::Barrier);
        assert_eq!(class("BAR.ARV", g).flow, ReplayFlow::Next);
        assert_eq!(class("MEMBAR.SC.GPU", g).flow, ReplayFlow::Membar);
        // Turing introduced the uniform datapath.
        assert!(classify("UMOV", g).is_none());
        assert!(classify("IADD", g).is_none());
    }

    #[test]
    fn turing_opcodes_classify() {
        let g = Generation::Turing;
        assert_eq!(class("UMOV", g).pipe, Pipe::Alu);
        assert_eq!(class("ULDC.64", g).pipe, Pipe::Alu);
        assert_eq!(class("LDSM.16.M88.4", g).mem, Some((Shared, Load)));
        assert_eq!(class("IMMA.8816.S8.S8", g).pipe, Pipe::Fma);
        assert!(classify("LDGSTS.E", g).is_none());
    }

    #[test]
    fn ampere_and_ada_opcodes_classify() {
        for g in [Generation::Ampere, Generation::Ada] {
            let cp = class("LDGSTS.E.BYPASS.LTC128B.128", g);
            assert_eq!((cp.pipe, cp.mem), (Pipe::Global, Some((Global, Load))));
            assert_eq!(class("LDGDEPBAR", g).pipe, Pipe::Alu);
            assert_eq!(class("DMMA.884", g).pipe, Pipe::Fma);
            assert_eq!(class("REDUX.SUM", g).pipe, Pipe::Mufu);
            assert_eq!(
                class("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", g).mem,
                Some((Global, Atomic))
            );
            assert!(classify("HGMMA.64x128x16.F32", g).is_none());
        }
    }

    #[test]
    fn hopper_opcodes_classify() {
        let g = Generation::Hopper;
        assert_eq!(class("HGMMA.64x128x16.F32.BF16", g).pipe, Pipe::Fma);
        assert_eq!(class("UTMALDG.2D", g).pipe, Pipe::Global);
        assert_eq!(class("SYNCS.ARRIVE.TRANS64.A1T0", g).pipe, Pipe::Shared);
        assert_eq!(class("ELECT", g).pipe, Pipe::Alu);
        assert_eq!(class("FENCE.VIEW.ASYNC.S", g).flow, ReplayFlow::Membar);
        assert_eq!(class("STSM.16.M88.4", g).mem, Some((Shared, Store)));
    }

    #[test]
    fn every_generation_has_the_common_core() {
        for g in Generation::ALL {
            for op in [
                "MOV", "FFMA", "LDG", "STG", "LDS", "STS", "BRA", "EXIT", "BAR", "S2R",
            ] {
                assert!(classify(op, g).is_some(), "{op} on {}", g.name());
            }
            assert!(known_opcodes(g).len() > 60, "{}", g.name());
        }
    }

    #[test]
    fn unknown_opcodes_get_the_generic_class() {
        assert!(classify("FROBNICATE.X", Generation::Volta).is_none());
        assert_eq!(OpInfo::generic(false, true).pipe, Pipe::Alu);
        assert_eq!(OpInfo::generic(true, true).mem, Some((Global, Load)));
        assert_eq!(OpInfo::generic(true, false).mem, Some((Global, Store)));
    }

    #[test]
    fn access_width_comes_from_the_modifiers() {
        assert_eq!(access_width("LDG.E.64"), 8);
        assert_eq!(access_width("LDG.E.128.SYS"), 16);
        assert_eq!(access_width("LDS.U16"), 2);
        assert_eq!(access_width("LDG.E.CG"), 4);
        assert_eq!(access_width("STG.E"), 4);
    }

    #[test]
    fn memory_spaces_take_their_paths() {
        assert_eq!(Shared.sim_space(), Space::Shared);
        for s in [Global, Local, Generic, Texture] {
            assert_eq!(s.sim_space(), Space::Global);
        }
        let op = class("LDL.64", Generation::Ampere).replay_op();
        assert_eq!(op.mem, Some((Space::Global, Load)));
    }
}
