//! Streaming parser for Accel-Sim `kernel-N.traceg` files (NVBit tracer versions 3–5).
//!
//! A file is a header of `-key = value` lines, then thread blocks: `#BEGIN_TB`,
//! `thread block = x,y,z`, and per warp `warp = N`, `insts = K` and K instruction lines
//! `[line_num] PC mask dest_num [dests] opcode src_num [srcs] mem_width [address mode and
//! addresses] [immediate]`, then `#END_TB`. Address modes: 0 lists one hex address per executing
//! lane, 1 gives a base and a stride, 2 a base and one signed delta per further executing lane.
//!
//! [`scan`] reads the file once: it validates every line, builds the static instruction table
//! (one entry per PC) and records where each thread block starts. [`BlockReader`] later seeks
//! to one block and turns it into per-warp instruction streams, so memory stays proportional
//! to the blocks being simulated, not to the file. Every error names the file and line.
//! Lines are read as slices of a window of the file; instruction lines of the usual shape are
//! parsed from their bytes, and everything else (with every error) goes through the text
//! parser, [`parse_inst_line`], which the byte parser only ever agrees with. A line that is,
//! byte for byte, the line the byte parser last took after the same instruction is taken as
//! it was then, and one that is that line up to its addresses has only those read
//! ([`LineMemo`]).
//!
//! Simplifications: for base+stride addresses the k-th executing lane gets `base + k·stride`
//! (the tracer only uses the mode for contiguous masks); Hopper TMA instructions
//! (`UTMALDG`, `UBLKCP`, ...) keep their mode-specific fields unparsed and replay without
//! addresses; register values (tracer version 6) are not supported.

use super::opcodes::{self, Generation, OpInfo};
use super::ReplayError;
use crate::sim::stream::{StreamBuilder, WarpStream};
use crate::sim::Dim3;
use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The tracer versions whose line format replay reads.
pub const TRACER_VERSIONS: [u32; 3] = [3, 4, 5];

/// The `-key = value` header of a kernel trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelHeader {
    pub name: String,
    pub kernel_id: u64,
    pub grid: Dim3,
    pub block: Dim3,
    pub shmem: u32,
    pub nregs: u32,
    pub binary_version: u32,
    pub stream_id: u64,
    pub tracer_version: u32,
    pub lineinfo: bool,
    /// Line of `-grid dim`, for errors about the grid.
    pub grid_line: u64,
}

/// The kind of a register operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// `R0`–`R255` (`R255` is `RZ`).
    Reg,
    /// `P0`–`P7` (`P7` is `PT`).
    Pred,
    /// Turing's uniform registers `UR0`–`UR63`.
    UniformReg,
    /// Uniform predicates `UP0`–`UP7`.
    UniformPred,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceReg {
    pub kind: RegKind,
    pub num: u16,
}

impl fmt::Display for TraceReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.num) {
            (RegKind::Reg, 255) => write!(f, "RZ"),
            (RegKind::Pred, 7) => write!(f, "PT"),
            (RegKind::UniformReg, 63) => write!(f, "URZ"),
            (RegKind::UniformPred, 7) => write!(f, "UPT"),
            (RegKind::Reg, n) => write!(f, "R{n}"),
            (RegKind::Pred, n) => write!(f, "P{n}"),
            (RegKind::UniformReg, n) => write!(f, "UR{n}"),
            (RegKind::UniformPred, n) => write!(f, "UP{n}"),
        }
    }
}

fn parse_reg(token: &str) -> Result<TraceReg, String> {
    // `R<n>`, nearly every register in a trace, first.
    if let [b'R', digits @ ..] = token.as_bytes() {
        if (1..=3).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
            let num = digits.iter().fold(0u16, |v, &b| v * 10 + (b - b'0') as u16);
            if num <= 255 {
                return Ok(TraceReg {
                    kind: RegKind::Reg,
                    num,
                });
            }
        }
    }
    if let Some(r) = named_reg(token.as_bytes()) {
        return Ok(r);
    }
    let (kind, digits, max) = if let Some(d) = token.strip_prefix("UR") {
        (RegKind::UniformReg, d, 63)
    } else if let Some(d) = token.strip_prefix("UP") {
        (RegKind::UniformPred, d, 7)
    } else if let Some(d) = token.strip_prefix('R') {
        (RegKind::Reg, d, 255)
    } else if let Some(d) = token.strip_prefix('P') {
        (RegKind::Pred, d, 7)
    } else {
        return Err(format!(
            "`{token}` is not a register (expected R<n>, P<n>, UR<n> or UP<n>)"
        ));
    };
    match digits.parse::<u16>() {
        Ok(num) if num <= max && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(TraceReg { kind, num })
        }
        _ => Err(format!("`{token}` is not a register number (0..={max})")),
    }
}

/// One parsed instruction line. The buffers are reused from line to line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstLine {
    /// The CUDA source line (`[line_num]`, traces recorded with lineinfo; else 0).
    pub source_line: u32,
    pub pc: u64,
    /// Active and predicate-true lanes.
    pub mask: u32,
    pub dsts: Vec<TraceReg>,
    pub opcode: String,
    pub srcs: Vec<TraceReg>,
    pub mem_width: u32,
    /// Whether the line carries per-lane addresses (a memory instruction, not TMA).
    pub has_addrs: bool,
    /// One address per set bit of `mask`, lowest lane first.
    pub addrs: Vec<u64>,
    /// For addresses given as a base and a stride (address mode 1): the stride (wrapping).
    pub stride: Option<u64>,
}

fn parse_hex(token: &str, what: &str) -> Result<u64, String> {
    let digits = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
        .unwrap_or(token);
    // Nearly every token is plain hex digits that fit: add them up without the general
    // parser; anything else takes it (its rules and errors).
    if (1..=16).contains(&digits.len()) {
        let mut value = 0u64;
        let mut plain = true;
        for b in digits.bytes() {
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => {
                    plain = false;
                    break;
                }
            };
            value = value << 4 | d as u64;
        }
        if plain {
            return Ok(value);
        }
    }
    u64::from_str_radix(digits, 16)
        .map_err(|_| format!("bad number `{token}` for {what} (expected hexadecimal)"))
}

fn parse_dec<T: std::str::FromStr + TryFrom<u64>>(token: &str, what: &str) -> Result<T, String> {
    // Plain digits that fit (the common case) without the general parser.
    if (1..=18).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_digit()) {
        let value = token.bytes().fold(0u64, |v, b| v * 10 + (b - b'0') as u64);
        if let Ok(v) = T::try_from(value) {
            return Ok(v);
        }
    }
    token.parse::<T>().map_err(|_| {
        match !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            true => format!("`{token}` is too large for {what}"),
            false => format!("bad number `{token}` for {what} (expected decimal)"),
        }
    })
}

const TMA_OPCODES: [&str; 7] = [
    "UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UBLKCP", "UBLKPF", "UBLKRED",
];

/// Parses one instruction line into `out`. The error says what is wrong, without position.
pub fn parse_inst_line(text: &str, lineinfo: bool, out: &mut InstLine) -> Result<(), String> {
    let mut tokens = text.split_ascii_whitespace();
    let mut next = |what: &str| {
        tokens
            .next()
            .ok_or_else(|| format!("wrong field count: the line ends before its {what}"))
    };
    if lineinfo {
        let line = parse_dec::<u64>(next("source line number")?, "the source line number")?;
        out.source_line = line.min(u32::MAX as u64) as u32;
    }
    out.pc = parse_hex(next("PC")?, "the PC")?;
    let mask_text = next("active mask")?;
    let mask_digits = mask_text.strip_prefix("0x").unwrap_or(mask_text);
    if mask_digits.len() > 8 {
        return Err(format!(
            "mask `{mask_text}` is wider than 32 lanes (at most 8 hex digits)"
        ));
    }
    out.mask = parse_hex(mask_text, "the active mask")? as u32;
    let dst_count: usize = parse_dec(next("destination count")?, "the destination count")?;
    if dst_count > 8 {
        return Err(format!(
            "destination count {dst_count} is implausible (at most 8)"
        ));
    }
    out.dsts.clear();
    for _ in 0..dst_count {
        out.dsts.push(parse_reg(next("destination registers")?)?);
    }
    let opcode = next("opcode")?;
    if !opcode
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
    {
        return Err(format!("`{opcode}` is not an opcode"));
    }
    out.opcode.clear();
    out.opcode.push_str(opcode);
    let src_count: usize = parse_dec(next("source count")?, "the source count")?;
    if src_count > 16 {
        return Err(format!(
            "source count {src_count} is implausible (at most 16)"
        ));
    }
    out.srcs.clear();
    for _ in 0..src_count {
        out.srcs.push(parse_reg(next("source registers")?)?);
    }
    // Warpgroup MMAs (`HGMMA`, `IGMMA`, ...) carry a commit-group flag.
    if out.opcode.get(1..5) == Some("GMMA") {
        parse_dec::<u32>(
            next("GMMA commit-group flag")?,
            "the GMMA commit-group flag",
        )?;
    }
    out.mem_width = parse_dec(next("memory width")?, "the memory width")?;
    out.has_addrs = false;
    out.addrs.clear();
    out.stride = None;
    if out.opcode.starts_with('U') && TMA_OPCODES.iter().any(|t| out.opcode.starts_with(t)) {
        // TMA transfers are not per-lane accesses; their fields are not modelled.
        return Ok(());
    }
    if out.mem_width > 0 {
        out.has_addrs = true;
        let lanes = out.mask.count_ones() as usize;
        let mode: u32 = parse_dec(next("address mode")?, "the address mode")?;
        match mode {
            0 => {
                for _ in 0..lanes {
                    out.addrs.push(parse_hex(
                        next("addresses (one per active lane)")?,
                        "an address",
                    )?);
                }
            }
            1 => {
                let base = parse_hex(next("base address")?, "the base address")?;
                let stride: i64 = parse_dec(next("address stride")?, "the address stride")?;
                out.stride = Some(stride as u64);
                for k in 0..lanes as i64 {
                    out.addrs
                        .push(base.wrapping_add_signed(k.wrapping_mul(stride)));
                }
            }
            2 => {
                let mut addr = parse_hex(next("base address")?, "the base address")?;
                if lanes > 0 {
                    out.addrs.push(addr);
                }
                for _ in 1..lanes {
                    let delta: i64 = parse_dec(
                        next("address deltas (one per further active lane)")?,
                        "an address delta",
                    )?;
                    addr = addr.wrapping_add_signed(delta);
                    out.addrs.push(addr);
                }
            }
            m => {
                return Err(format!(
                    "unknown address mode {m} (0: list, 1: base+stride, 2: base+deltas)"
                ))
            }
        }
    }
    // An optional immediate closes the line.
    if let Some(imm) = tokens.next() {
        let ok = imm.parse::<i64>().is_ok() || parse_hex(imm, "").is_ok();
        if !ok {
            return Err(format!("bad number `{imm}` for the immediate"));
        }
    }
    let extra = tokens.count();
    if extra > 0 {
        return Err(format!(
            "wrong field count: {extra} field(s) after the end of the instruction"
        ));
    }
    Ok(())
}

/// The byte parser for a reader that needs only the PC, mask and addresses: the registers are
/// checked but not kept and the opcode is not copied, so `out`'s destinations, opcode and
/// sources are left as they were. A static part spelled as `spelling(pc)` (a spelling the byte
/// parser took, with its layout) is not read at all. It accepts exactly the lines the byte
/// parser in full ([`plain_pc`], [`plain_mask`], [`plain_static`] keeping, [`plain_tail`])
/// accepts, and says where their addresses start.
fn parse_plain_addresses<'s>(
    line: &[u8],
    lineinfo: bool,
    out: &mut InstLine,
    spelling: impl FnOnce(u64) -> Option<&'s Spelling>,
) -> Option<Option<AddressStart>> {
    let mut line = plain_pc(line, lineinfo, out)?;
    plain_mask(&mut line, out)?;
    let layout = match spelling(out.pc).filter(|(bytes, _)| line.strip(bytes)) {
        Some(&(_, layout)) => layout,
        None => plain_static::<false>(&mut line, out)?.1,
    };
    plain_tail::<true>(line, layout, out)
}

/// Lines the byte parser took, by the static instruction of the instruction line before them.
/// Nearly every line of a warp is, byte for byte, the line that followed the same instruction
/// in the warp before, up to its addresses if it has any: the same bytes say the same, so
/// such a line is taken without being cut or read, and a line with addresses is read from its
/// addresses on.
#[derive(Debug, Default)]
struct LineMemo {
    /// The static instruction of the last instruction line.
    prev: Option<u32>,
    /// By static instruction, the last line taken after it.
    next: Vec<Option<SeenLine>>,
}

/// A line with its line break (or, with addresses, up to its address mode), and what it says.
#[derive(Debug, Default)]
struct SeenLine {
    line: Vec<u8>,
    /// The address mode, for a line kept up to it.
    mode: Option<u64>,
    /// Its static instruction.
    index: u32,
    pc: u64,
    mask: u32,
    mem_width: u32,
}

impl SeenLine {
    /// For a line kept up to its address mode `mode`: what the byte parser makes of the rest
    /// of a line that starts like it, `rest` (to its line break), as in
    /// [`LineMemo::take_addressed`].
    #[inline(never)]
    fn take_addresses<const ADDRS: bool>(
        &self,
        mode: u64,
        rest: &[u8],
        out: &mut InstLine,
    ) -> Option<u32> {
        // The mode's token must end where it ended.
        if !PlainLine(rest).at_space() {
            return None;
        }
        self.fill::<ADDRS>(out, true);
        let mut rest = PlainLine(rest);
        plain_addresses::<ADDRS>(&mut rest, mode, out)?;
        plain_end(rest)?;
        Some(self.index)
    }

    /// Puts what the remembered line says in `out` (and, if `ADDRS`, empties its addresses).
    fn fill<const ADDRS: bool>(&self, out: &mut InstLine, has_addrs: bool) {
        out.pc = self.pc;
        out.mask = self.mask;
        out.mem_width = self.mem_width;
        out.has_addrs = has_addrs;
        out.stride = None;
        if ADDRS {
            out.addrs.clear();
        }
    }
}

impl LineMemo {
    /// If `pending` (what the line reader has not handed out) starts with the line remembered
    /// after the last instruction line (up to its address mode, for a line with addresses,
    /// which the byte parser must then take from there): its static instruction and length
    /// (line break included), with what it says in `out` as the byte parser would have put it.
    #[inline(always)]
    fn recall<const ADDRS: bool>(
        &self,
        pending: &[u8],
        out: &mut InstLine,
    ) -> Option<(u32, usize)> {
        let seen = self.next.get(self.prev? as usize)?.as_ref()?;
        let rest = pending.strip_prefix(&seen.line[..])?;
        let Some(mode) = seen.mode else {
            seen.fill::<ADDRS>(out, false);
            return Some((seen.index, seen.line.len()));
        };
        // Cut at its line break, as the line reader would cut it, so that its addresses are
        // read from this line only; a line cut short by the window is left to the reader.
        let len = memchr::memchr(b'\n', rest)? + 1;
        let k = seen.take_addresses::<ADDRS>(mode, &rest[..len], out)?;
        Some((k, seen.line.len() + len))
    }

    /// If `line` (the whole line, given to the byte parser) starts with the line remembered
    /// after the last instruction line up to its address mode, and the byte parser takes its
    /// addresses and the rest: its static instruction, with its PC, mask, width and (if
    /// `ADDRS`) addresses in `out`.
    fn take_addressed<const ADDRS: bool>(&self, line: &[u8], out: &mut InstLine) -> Option<u32> {
        let seen = self.next.get(self.prev? as usize)?.as_ref()?;
        let mode = seen.mode?;
        let rest = line.strip_prefix(&seen.line[..])?;
        seen.take_addresses::<ADDRS>(mode, rest, out)
    }

    /// Remembers `line` (with its line break, if it has one), which the byte parser took as
    /// `taken` of static instruction `index` with addresses from `addresses`, as the line
    /// after the last instruction line.
    fn remember(
        &mut self,
        line: &[u8],
        index: u32,
        taken: &InstLine,
        addresses: Option<AddressStart>,
    ) {
        let Some(prev) = self.prev else {
            return;
        };
        let (line, mode) = match addresses {
            Some(start) => (&line[..line.len() - start.after_mode], Some(start.mode)),
            // A line without a break (the file's last) could be the start of a longer one.
            None if line.ends_with(b"\n") => (line, None),
            None => return,
        };
        let prev = prev as usize;
        if self.next.len() <= prev {
            self.next.resize_with(prev + 1, || None);
        }
        let seen = self.next[prev].get_or_insert_with(SeenLine::default);
        seen.line.clear();
        seen.line.extend_from_slice(line);
        seen.mode = mode;
        seen.index = index;
        seen.pc = taken.pc;
        seen.mask = taken.mask;
        seen.mem_width = taken.mem_width;
    }
}

/// A static part as a line spelled it (from the destination count through the last source),
/// and its opcode's layout.
type Spelling = (Box<[u8]>, Layout);

/// What an opcode says about the fields after the sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    /// A warpgroup MMA (`HGMMA`, `IGMMA`, ...): a commit-group flag follows the sources.
    gmma: bool,
    /// A TMA transfer: the fields after the memory width are not per-lane addresses.
    tma: bool,
}

impl Layout {
    fn of(opcode: &[u8]) -> Layout {
        Layout {
            gmma: opcode.get(1..5) == Some(&b"GMMA"[..]),
            tma: opcode.starts_with(b"U")
                && TMA_OPCODES.iter().any(|t| opcode.starts_with(t.as_bytes())),
        }
    }
}

/// The byte parser, [`plain_pc`], [`plain_mask`], [`plain_static`] and [`plain_tail`] in turn, is
/// [`parse_inst_line`] for lines of the usual shape, from their bytes: plain hexadecimal and
/// decimal numbers, registers as tracers write them, tokens that are text. Anything else
/// (unusual spellings, the line's errors) it declines (`None`, with `out` in no particular
/// state), and [`parse_inst_line`] decides: a line it accepts is valid UTF-8 and one that
/// parser accepts with the same result.
///
/// This part reads the source line number (with `lineinfo`) and PC, and returns the rest of
/// the line.
fn plain_pc<'a>(line: &'a [u8], lineinfo: bool, out: &mut InstLine) -> Option<PlainLine<'a>> {
    let mut line = PlainLine(line);
    if lineinfo {
        out.source_line = line.dec()?.min(u32::MAX as u64) as u32;
    }
    out.pc = line.hex()?;
    Some(line)
}

/// The active mask.
fn plain_mask(line: &mut PlainLine, out: &mut InstLine) -> Option<()> {
    let mask = line.token()?;
    // The width limit (for a lowercase `0x` only) as the general parser counts it.
    if mask.strip_prefix(b"0x").unwrap_or(mask).len() > 8 {
        return None;
    }
    out.mask = PlainLine(mask).hex()? as u32;
    Some(())
}

/// Destinations, opcode and sources, into `out` if `KEEP` (else only checked); the bytes they
/// span and the opcode's layout.
fn plain_static<'a, const KEEP: bool>(
    line: &mut PlainLine<'a>,
    out: &mut InstLine,
) -> Option<(&'a [u8], Layout)> {
    line.skip_space();
    let start = line.0;
    plain_regs::<KEEP>(line, 8, &mut out.dsts)?;
    let opcode = line.token()?;
    if !opcode.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    // Every other field the byte parser takes is ASCII: the opcode decides whether the line
    // is text.
    if KEEP {
        out.opcode.clear();
        out.opcode.push_str(std::str::from_utf8(opcode).ok()?);
    } else if !opcode.is_ascii() {
        std::str::from_utf8(opcode).ok()?;
    }
    plain_regs::<KEEP>(line, 16, &mut out.srcs)?;
    let spelling = &start[..start.len() - line.0.len()];
    Some((spelling, Layout::of(opcode)))
}

/// A register count of at most `max` and that many registers, into `regs` if `KEEP`.
fn plain_regs<const KEEP: bool>(
    line: &mut PlainLine,
    max: u64,
    regs: &mut Vec<TraceReg>,
) -> Option<()> {
    let count = line.dec().filter(|&n| n <= max)?;
    if KEEP {
        regs.clear();
    }
    for _ in 0..count {
        let reg = plain_reg(line.token()?)?;
        if KEEP {
            regs.push(reg);
        }
    }
    Some(())
}

/// The fields after the sources: commit-group flag, memory width, addresses, immediate. The
/// addresses go into `out.addrs` if `ADDRS` (else they are only checked, and `out.addrs` is
/// left as it was). For a line with addresses, where they start.
fn plain_tail<const ADDRS: bool>(
    mut line: PlainLine,
    layout: Layout,
    out: &mut InstLine,
) -> Option<Option<AddressStart>> {
    if layout.gmma {
        u32::try_from(line.dec()?).ok()?;
    }
    out.mem_width = u32::try_from(line.dec()?).ok()?;
    out.has_addrs = false;
    out.stride = None;
    if ADDRS {
        out.addrs.clear();
    }
    if layout.tma {
        // The general parser ignores the rest, but the line must still be text.
        std::str::from_utf8(line.0).ok()?;
        return Some(None);
    }
    let mut start = None;
    if out.mem_width > 0 {
        out.has_addrs = true;
        let mode = line.dec()?;
        start = Some(AddressStart {
            after_mode: line.0.len(),
            mode,
        });
        plain_addresses::<ADDRS>(&mut line, mode, out)?;
    }
    plain_end(line)?;
    Some(start)
}

/// Where the addresses of a line start: after its address mode, of which this many bytes of
/// the line follow.
#[derive(Debug, Clone, Copy)]
struct AddressStart {
    after_mode: usize,
    mode: u64,
}

/// The addresses in address mode `mode`, one per lane of `out.mask`, into `out.addrs` (which
/// the caller emptied) if `ADDRS`.
fn plain_addresses<const ADDRS: bool>(
    line: &mut PlainLine,
    mode: u64,
    out: &mut InstLine,
) -> Option<()> {
    let lanes = out.mask.count_ones() as usize;
    match mode {
        0 => {
            for _ in 0..lanes {
                let addr = line.hex()?;
                if ADDRS {
                    out.addrs.push(addr);
                }
            }
        }
        1 => {
            let base = line.hex()?;
            let stride = line.signed_dec()?;
            out.stride = Some(stride as u64);
            if ADDRS {
                // `base + k·stride` for the k-th lane, as a running sum (which, unlike the
                // products, compiles to vector adds), in a fixed-size array (which, unlike a
                // vector's `resize`, needs no filling first).
                let mut lane_addrs = [0u64; 32];
                let mut addr = base;
                for a in &mut lane_addrs {
                    *a = addr;
                    addr = addr.wrapping_add_signed(stride);
                }
                out.addrs.extend_from_slice(&lane_addrs[..lanes]);
            }
        }
        2 => {
            let mut addr = line.hex()?;
            if ADDRS && lanes > 0 {
                out.addrs.push(addr);
            }
            for _ in 1..lanes {
                addr = addr.wrapping_add_signed(line.signed_dec()?);
                if ADDRS {
                    out.addrs.push(addr);
                }
            }
        }
        _ => return None,
    }
    Some(())
}

/// An optional immediate, and then the end of the line.
fn plain_end(mut line: PlainLine) -> Option<()> {
    if let Some(immediate) = line.token() {
        let mut immediate = PlainLine(immediate);
        immediate
            .clone()
            .hex()
            .or_else(|| immediate.signed_dec().map(|v| v as u64))?;
    }
    match line.token() {
        Some(_) => None,
        None => Some(()),
    }
}

/// What is left of a line, read a token at a time. Tokens are cut at ASCII whitespace, as
/// `split_ascii_whitespace` cuts them; numbers are read as they are cut, in one pass.
#[derive(Clone)]
struct PlainLine<'a>(&'a [u8]);

impl<'a> PlainLine<'a> {
    fn skip_space(&mut self) {
        while let [b, rest @ ..] = self.0 {
            if BYTE_CLASS[*b as usize] != SPACE {
                break;
            }
            self.0 = rest;
        }
    }

    /// Whether a token ends here.
    fn at_space(&self) -> bool {
        match self.0.first() {
            Some(&b) => BYTE_CLASS[b as usize] == SPACE,
            None => true,
        }
    }

    /// Whether the next tokens are exactly `spelling` (which starts and ends with a token);
    /// if so, moves past them.
    fn strip(&mut self, spelling: &[u8]) -> bool {
        self.skip_space();
        match self.0.strip_prefix(spelling) {
            Some(rest) if PlainLine(rest).at_space() => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }

    /// The next token, if any.
    fn token(&mut self) -> Option<&'a [u8]> {
        self.skip_space();
        let len = self
            .0
            .iter()
            .position(|&b| BYTE_CLASS[b as usize] == SPACE)
            .unwrap_or(self.0.len());
        let (token, rest) = self.0.split_at(len);
        self.0 = rest;
        (len > 0).then_some(token)
    }

    /// A token of 1 to 16 hexadecimal digits after an optional `0x` or `0X`: what
    /// [`parse_hex`] reads without its general parser.
    // Inlined where it is used: a call costs a third of reading an address.
    #[inline(always)]
    fn hex(&mut self) -> Option<u64> {
        self.skip_space();
        let token = match self.0 {
            [b'0', b'x' | b'X', rest @ ..] => rest,
            token => token,
        };
        // Indexed rather than re-sliced a digit at a time: a slice moved per digit costs
        // twice the instructions, and addresses have a dozen digits.
        let mut value = 0u64;
        let mut digits = 0;
        while let Some(&b) = token.get(digits) {
            let digit = BYTE_CLASS[b as usize];
            if digit > 15 {
                break;
            }
            value = value << 4 | digit as u64;
            digits += 1;
        }
        self.0 = &token[digits..];
        ((1..=16).contains(&digits) && self.at_space()).then_some(value)
    }

    /// A token of 1 to 18 decimal digits, which always fit: what [`parse_dec`] reads without
    /// its general parser.
    fn dec(&mut self) -> Option<u64> {
        self.skip_space();
        self.dec_here()
    }

    /// [`PlainLine::dec`] of a token that starts here.
    fn dec_here(&mut self) -> Option<u64> {
        let token = self.0;
        let mut value = 0u64;
        let mut digits = 0;
        while let Some(&b) = token.get(digits) {
            if !b.is_ascii_digit() {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add((b - b'0') as u64);
            digits += 1;
        }
        self.0 = &token[digits..];
        ((1..=18).contains(&digits) && self.at_space()).then_some(value)
    }

    /// [`PlainLine::dec`] after an optional minus sign.
    // Inlined: a call costs more than reading the one-digit stride it nearly always is.
    #[inline(always)]
    fn signed_dec(&mut self) -> Option<i64> {
        self.skip_space();
        match self.0 {
            // No digits after the sign (a space, say) is no number, as `dec` finds.
            [b'-', rest @ ..] => {
                self.0 = rest;
                self.dec_here().map(|v| -(v as i64))
            }
            _ => self.dec_here().map(|v| v as i64),
        }
    }
}

/// Per byte: its value as a hexadecimal digit, [`SPACE`] (what `u8::is_ascii_whitespace`
/// and so `split_ascii_whitespace` take for space) or [`OTHER`].
const BYTE_CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            d @ b'0'..=b'9' => d - b'0',
            d @ b'a'..=b'f' => d - b'a' + 10,
            d @ b'A'..=b'F' => d - b'A' + 10,
            b' ' | b'\t' | b'\n' | b'\x0c' | b'\r' => SPACE,
            _ => OTHER,
        };
        b += 1;
    }
    table
};
const SPACE: u8 = 0xfe;
const OTHER: u8 = 0xff;

/// The zero registers and true predicates, which have names instead of numbers.
fn named_reg(token: &[u8]) -> Option<TraceReg> {
    let (kind, num) = match token {
        b"RZ" => (RegKind::Reg, 255),
        b"PT" => (RegKind::Pred, 7),
        b"URZ" => (RegKind::UniformReg, 63),
        b"UPT" => (RegKind::UniformPred, 7),
        _ => return None,
    };
    Some(TraceReg { kind, num })
}

/// A register named as [`parse_reg`] names it, with 1 to 3 digits.
fn plain_reg(token: &[u8]) -> Option<TraceReg> {
    if let Some(r) = named_reg(token) {
        return Some(r);
    }
    let (kind, digits, max) = match token {
        [b'U', b'R', digits @ ..] => (RegKind::UniformReg, digits, 63),
        [b'U', b'P', digits @ ..] => (RegKind::UniformPred, digits, 7),
        [b'R', digits @ ..] => (RegKind::Reg, digits, 255),
        [b'P', digits @ ..] => (RegKind::Pred, digits, 7),
        _ => return None,
    };
    if digits.len() > 3 {
        return None;
    }
    let num = PlainLine(digits).dec().filter(|&n| n <= max)? as u16;
    Some(TraceReg { kind, num })
}

/// One static instruction: what every line with this PC says about it.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticInst {
    pub pc: u64,
    pub opcode: String,
    pub dsts: Vec<TraceReg>,
    pub srcs: Vec<TraceReg>,
    pub info: OpInfo,
    /// Whether the opcode table knows the opcode (else `info` is the generic class).
    pub known: bool,
    /// Bytes per lane, for memory instructions.
    pub width: u32,
    /// Where the PC first appears.
    pub first_line: u64,
    /// The CUDA source line of the PC's first line (traces recorded with lineinfo; else 0).
    pub source_line: u32,
    /// Dynamic warp instructions at this PC.
    pub count: u64,
    /// How the first line of the PC the byte parser read in full spelled its static part, and
    /// its opcode's layout. A line of the PC with this spelling says the same about the
    /// instruction, so neither its registers nor its opcode need reading again.
    spelling: Option<Spelling>,
}

impl StaticInst {
    /// SASS-like text: `LDG.E.CG R4, [R4]`, `STG.E [R6], R0`, `FADD R0, R2, R4`.
    pub fn text(&self) -> String {
        let mut ops: Vec<String> = self.dsts.iter().map(|r| r.to_string()).collect();
        let mut srcs: Vec<String> = self.srcs.iter().map(|r| r.to_string()).collect();
        // The first source of a memory instruction is its address (stores name it first,
        // after no destination, as SASS does).
        if self.info.mem.is_some() && !srcs.is_empty() {
            srcs[0] = format!("[{}]", srcs[0]);
        }
        ops.append(&mut srcs);
        if ops.is_empty() {
            self.opcode.clone()
        } else {
            format!("{} {}", self.opcode, ops.join(", "))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockEntry {
    /// Byte offset of the block's `#BEGIN_TB` line.
    offset: u64,
    /// Its line number.
    line: u64,
}

/// A scanned kernel trace: header, static instruction table and block index.
#[derive(Debug, Clone)]
pub struct KernelTrace {
    pub path: PathBuf,
    pub header: KernelHeader,
    pub generation: Generation,
    /// Sorted by PC; the index is the PC of the replayed `Program`.
    pub statics: Vec<StaticInst>,
    pc_index: HashMap<u64, u32>,
    /// By linear block index (x fastest).
    blocks: Vec<BlockEntry>,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Lane addresses of all memory instructions.
    addresses: u64,
}

impl KernelTrace {
    pub fn warps_per_block(&self) -> u32 {
        self.header.block.count().div_ceil(32) as u32
    }

    pub fn blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// The program index of a trace PC.
    pub fn index_of(&self, pc: u64) -> Option<u32> {
        self.pc_index.get(&pc).copied()
    }

    /// Opcodes the table does not know, with their dynamic warp-instruction counts.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        let mut map: HashMap<&str, u64> = HashMap::default();
        for s in self.statics.iter().filter(|s| !s.known) {
            *map.entry(s.opcode.as_str()).or_default() += s.count;
        }
        let mut v: Vec<(String, u64)> = map.into_iter().map(|(k, c)| (k.to_string(), c)).collect();
        v.sort();
        v
    }
}

/// Reads lines with their byte offsets and numbers. Lines are handed out as slices of a window
/// of the file; only a line cut by the window's end is moved (to the window's start) before
/// more of the file is read behind it.
struct LineReader<R> {
    reader: R,
    /// `window[..end]` holds the file from byte `offset - start` on; `window[start..end]` is
    /// what is not yet handed out.
    window: Vec<u8>,
    start: usize,
    end: usize,
    /// Where the last line handed out starts in `window`.
    line_start: usize,
    /// Byte offset of the next line.
    offset: u64,
    /// Number of the last line read (1-based).
    line: u64,
    path: PathBuf,
}

/// How much of a file a [`LineReader`] reads at a time.
const WINDOW_BYTES: usize = 1 << 16;

impl<R: Read> LineReader<R> {
    fn new(reader: R, path: &Path) -> LineReader<R> {
        LineReader {
            reader,
            window: vec![0; WINDOW_BYTES],
            start: 0,
            end: 0,
            line_start: 0,
            offset: 0,
            line: 0,
            path: path.to_path_buf(),
        }
    }

    fn err(&self, message: impl Into<String>) -> ReplayError {
        ReplayError::parse(&self.path, self.line, message)
    }

    /// The next line without its line break, or `None` at end of file. The reader comes back
    /// beside the line, read-only while the line (a slice of its window) is in use, for the
    /// line's number and errors.
    fn next_line(&mut self) -> Result<Option<(&[u8], &Self)>, ReplayError> {
        let newline = loop {
            if let Some(i) = memchr::memchr(b'\n', &self.window[self.start..self.end]) {
                break Some(self.start + i);
            }
            if !self.refill()? {
                break None;
            }
        };
        let first = self.start;
        let (last, next) = match newline {
            Some(i) => (i, i + 1),
            None if first == self.end => return Ok(None),
            // The last line of a file without a final line break.
            None => (self.end, self.end),
        };
        self.start = next;
        self.line_start = first;
        self.offset += (next - first) as u64;
        self.line += 1;
        let this = &*self;
        let mut line = &this.window[first..last];
        while let [rest @ .., b'\r'] = line {
            line = rest;
        }
        Ok(Some((line, this)))
    }

    /// The last line handed out with its line break (the file's last line may have none).
    fn raw_line(&self) -> &[u8] {
        &self.window[self.line_start..self.start]
    }

    /// What is read but not handed out yet: the next lines, the last of them maybe cut short.
    fn pending(&self) -> &[u8] {
        &self.window[self.start..self.end]
    }

    /// Moves past the next line, which is `len` bytes with its line break, as
    /// [`Self::next_line`] would; the reader comes back as there.
    fn skip_line(&mut self, len: usize) -> &Self {
        self.line_start = self.start;
        self.start += len;
        self.offset += len as u64;
        self.line += 1;
        self
    }

    /// A line as text: the files are UTF-8, and a line that is not is an error at its number.
    fn text<'l>(&self, line: &'l [u8]) -> Result<&'l str, ReplayError> {
        std::str::from_utf8(line).map_err(|_| self.err("the line is not valid UTF-8 text"))
    }

    /// Reads more of the file behind what is not handed out yet; false at end of file.
    fn refill(&mut self) -> Result<bool, ReplayError> {
        if self.start > 0 {
            self.window.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.window.len() {
            // One line fills the window.
            self.window.resize(2 * self.window.len(), 0);
        }
        loop {
            match self.reader.read(&mut self.window[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReplayError::io(&self.path, "reading", e)),
            }
        }
    }
}

impl<R: Read + Seek> LineReader<R> {
    /// Goes to the line at byte `offset` (which must start a line), `lines_before` lines into
    /// the file. Within the window (the next block, read in file order) nothing is read again.
    fn seek(&mut self, offset: u64, lines_before: u64) -> Result<(), ReplayError> {
        let window_offset = self.offset - self.start as u64;
        if (window_offset..=window_offset + self.end as u64).contains(&offset) {
            self.start = (offset - window_offset) as usize;
        } else {
            self.reader
                .seek(SeekFrom::Start(offset))
                .map_err(|e| ReplayError::io(&self.path, "seeking", e))?;
            self.start = 0;
            self.end = 0;
        }
        self.offset = offset;
        self.line = lines_before;
        Ok(())
    }
}

/// What a block's parse needs to know about its kernel.
struct BlockShape {
    grid: Dim3,
    threads_per_block: u64,
    warps_per_block: u32,
    lineinfo: bool,
}

impl BlockShape {
    fn valid_lanes(&self, warp: u32) -> u32 {
        let first = warp as u64 * 32;
        let lanes = self.threads_per_block.saturating_sub(first).min(32);
        if lanes >= 32 {
            u32::MAX
        } else {
            (1u32 << lanes) - 1
        }
    }
}

fn parse_key_dim(text: &str) -> Option<Dim3> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    parse_triple(inner)
}

fn parse_triple(text: &str) -> Option<Dim3> {
    let mut it = text.split(',').map(|p| p.trim().parse::<u32>());
    let x = it.next()?.ok()?;
    let y = it.next()?.ok()?;
    let z = it.next()?.ok()?;
    if it.next().is_some() {
        return None;
    }
    Some(Dim3::new(x, y, z))
}

/// The warp whose instruction lines are being read.
struct OpenWarp {
    warp: u32,
    /// `insts = K` and the line it is on.
    declared: Option<(u64, u64)>,
    /// Instruction lines seen so far.
    seen: u64,
}

/// What a pass over thread blocks does with their lines.
trait BlockSink {
    /// Parses a line that may be an instruction line with the byte parser (see [`plain_pc`]),
    /// given with its line break: true only for a line [`parse_inst_line`] accepts alike, at
    /// least as to PC, mask and addresses. On false, the general parser takes the line.
    fn parse_plain(&mut self, line: &[u8], lineinfo: bool, inst: &mut InstLine) -> bool;

    /// The length (line break included) of the next line, the start of `pending`, if it is a
    /// line the byte parser took before (see [`LineMemo`]); the line is then taken as
    /// [`Self::parse_plain`] took it.
    fn recall(&mut self, pending: &[u8], inst: &mut InstLine) -> Option<usize>;

    /// Warp `warp` declares `insts = count`.
    fn declare(&mut self, _warp: u32, _count: u64) {}

    /// A valid instruction line of warp `warp`, at line `line`: the one [`Self::parse_plain`]
    /// was last given, parsed by it or by the general parser.
    fn inst(&mut self, warp: u32, inst: &InstLine, line: u64) -> Result<(), ReplayError>;
}

/// Parses one block after its `#BEGIN_TB` line, handing every instruction line to `sink`.
/// Returns the block's coordinates.
fn parse_block<R: Read>(
    reader: &mut LineReader<R>,
    shape: &BlockShape,
    begin_line: u64,
    inst: &mut InstLine,
    sink: &mut impl BlockSink,
) -> Result<Dim3, ReplayError> {
    let mut ctaid: Option<Dim3> = None;
    let mut warp: Option<OpenWarp> = None;
    let mut seen_warps = vec![false; shape.warps_per_block as usize];
    let close_warp = |lines: &LineReader<R>, warp: &Option<OpenWarp>| -> Result<(), ReplayError> {
        if let Some(OpenWarp {
            warp: w,
            declared,
            seen,
        }) = warp
        {
            match declared {
                Some((count, at)) if count != seen => Err(ReplayError::parse(
                    &lines.path,
                    *at,
                    format!("warp {w}: `insts = {count}` but {seen} instruction line(s) follow"),
                )),
                None => Err(lines.err(format!("warp {w} has no `insts =` line"))),
                _ => Ok(()),
            }
        } else {
            Ok(())
        }
    };
    loop {
        let (line, lines, mut count) = match sink.recall(reader.pending(), inst) {
            Some(len) => (None, reader.skip_line(len), None),
            // The blank line between warps, and the `warp =` and `insts =` lines after it, are
            // read where they lie, without the line reader's work of cutting them out.
            None if reader.pending().first() == Some(&b'\n') => {
                reader.skip_line(1);
                continue;
            }
            None => match pending_count(reader.pending()) {
                Some((count, len)) => (None, reader.skip_line(len), Some(count)),
                None => {
                    let Some((line, lines)) = reader.next_line()? else {
                        return Err(ReplayError::parse(
                            &reader.path,
                            begin_line,
                            "missing #END_TB: the thread block started here is not closed at the end of the file",
                        ));
                    };
                    (Some(line), lines, plain_count(lines.raw_line()))
                }
            },
        };
        // Nearly every line is an instruction line the byte parser takes (or took before), or
        // a `warp =` or `insts =` line as tracers write them; the rest (with every error) goes
        // through the text.
        let text = match line {
            Some(line)
                if count.is_none() && !sink.parse_plain(lines.raw_line(), shape.lineinfo, inst) =>
            {
                Some(lines.text(line)?.trim())
            }
            _ => None,
        };
        if text.is_some_and(str::is_empty) {
            continue;
        }
        // Directive words (`thread`, `warp`, `insts`, `#...`) never start with a hex digit;
        // instruction lines always do (PC, or line number with lineinfo).
        if let Some(text) = text.filter(|t| !t.as_bytes()[0].is_ascii_hexdigit()) {
            if text.starts_with('#') {
                if text.starts_with("#END_TB") {
                    close_warp(lines, &warp)?;
                    let id = ctaid.ok_or_else(|| {
                        lines.err("the thread block ends without a `thread block = x,y,z` line")
                    })?;
                    // The tracer's post-processing writes every warp of a block, one that ran
                    // nothing as `insts = 0`: a missing warp is a cut or edited file, and
                    // replaying it would run a smaller block than the kernel launched.
                    let missing: Vec<u32> = (0..shape.warps_per_block)
                        .filter(|&w| !seen_warps[w as usize])
                        .collect();
                    if !missing.is_empty() {
                        return Err(lines.err(format!(
                            "thread block {id} has {} of its {}: {}",
                            shape.warps_per_block - missing.len() as u32,
                            crate::words::count(shape.warps_per_block as u64, "warp", "warps"),
                            missing_warps(&missing)
                        )));
                    }
                    return Ok(id);
                }
                if text.starts_with("#BEGIN_TB") {
                    return Err(ReplayError::parse(
                        &lines.path,
                        begin_line,
                        format!(
                            "missing #END_TB: the thread block started here is still open at line {}",
                            lines.line
                        ),
                    ));
                }
                continue;
            }
            if let Some(rest) = text.strip_prefix("thread block") {
                let value = rest.trim_start().strip_prefix('=').unwrap_or("");
                let id = parse_triple(value).ok_or_else(|| {
                    lines.err(format!("bad `thread block =` value `{}`", value.trim()))
                })?;
                if id.x >= shape.grid.x || id.y >= shape.grid.y || id.z >= shape.grid.z {
                    return Err(lines.err(format!(
                        "thread block {id} is outside the grid {}",
                        shape.grid
                    )));
                }
                ctaid = Some(id);
                continue;
            }
            if let Some(text_count) = text_count(text) {
                count = Some(text_count.map_err(|m| lines.err(m))?);
            } else if text.starts_with("cluster") {
                // Hopper cluster coordinates: not modelled.
                continue;
            } else {
                return Err(lines.err(format!(
                    "unexpected line `{}` in a thread block",
                    shorten(text)
                )));
            }
        }
        match count {
            Some(Count::Warp(w)) => {
                if w >= shape.warps_per_block {
                    return Err(lines.err(format!(
                        "warp {w} does not exist: a block of {} threads has {}",
                        shape.threads_per_block,
                        crate::words::count(shape.warps_per_block as u64, "warp", "warps")
                    )));
                }
                if std::mem::replace(&mut seen_warps[w as usize], true) {
                    return Err(lines.err(format!("warp {w} appears twice in this thread block")));
                }
                close_warp(lines, &warp)?;
                warp = Some(OpenWarp {
                    warp: w,
                    declared: None,
                    seen: 0,
                });
                continue;
            }
            Some(Count::Insts(count)) => {
                match warp.as_mut() {
                    Some(OpenWarp {
                        warp: w,
                        declared: declared @ None,
                        ..
                    }) => {
                        *declared = Some((count, lines.line));
                        sink.declare(*w, count);
                    }
                    Some(OpenWarp {
                        warp: w,
                        declared: Some(_),
                        ..
                    }) => return Err(lines.err(format!("warp {w} has a second `insts =` line"))),
                    None => return Err(lines.err("`insts =` before any `warp =` line")),
                }
                continue;
            }
            None => {}
        }
        if ctaid.is_none() {
            return Err(lines.err(format!(
                "expected `thread block = x,y,z`, found `{}`",
                shorten(lines.text(lines.raw_line())?.trim())
            )));
        }
        let Some(OpenWarp {
            warp: w,
            declared,
            seen,
        }) = warp.as_mut()
        else {
            return Err(lines.err("instruction line before any `warp =` line"));
        };
        let Some((count, _)) = *declared else {
            return Err(lines.err(format!("warp {w}: instruction line before `insts =`")));
        };
        if *seen >= count {
            return Err(lines.err(format!(
                "warp {w}: more instruction lines than `insts = {count}`"
            )));
        }
        *seen += 1;
        if let Some(text) = text {
            parse_inst_line(text, shape.lineinfo, inst).map_err(|m| lines.err(m))?;
        }
        let valid = shape.valid_lanes(*w);
        if inst.mask & !valid != 0 {
            return Err(lines.err(format!(
                "mask {:08x} names lanes beyond warp {w}'s {} thread(s) (valid lanes {valid:08x})",
                inst.mask,
                valid.count_ones()
            )));
        }
        let w = *w;
        sink.inst(w, inst, lines.line)?;
        // The warp's next lines are nearly always lines taken before (see [`LineMemo`]): they
        // are taken here with the checks an instruction line of this warp needs, until one is
        // not such a line, or not a valid one, which the loop above then reads (and reports).
        while *seen < count {
            let Some(len) = sink.recall(reader.pending(), inst) else {
                break;
            };
            if inst.mask & !valid != 0 {
                break;
            }
            *seen += 1;
            let line = reader.skip_line(len).line;
            sink.inst(w, inst, line)?;
        }
    }
}

/// `missing` (ascending, not empty) in words: "warp 31 is missing", "warps 2, 5 and 9–31 are
/// missing" (three or more consecutive warps as a range: a block can miss 31 of 32).
fn missing_warps(missing: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < missing.len() {
        let mut j = i;
        while j + 1 < missing.len() && missing[j + 1] == missing[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}–{}", missing[i], missing[j]));
        } else {
            parts.extend(missing[i..=j].iter().map(u32::to_string));
        }
        i = j + 1;
    }
    match (missing.len(), parts.split_last()) {
        (1, _) => format!("warp {} is missing", missing[0]),
        (_, Some((last, []))) => format!("warps {last} are missing"),
        (_, Some((last, rest))) => format!("warps {} and {last} are missing", rest.join(", ")),
        (_, None) => String::new(),
    }
}

/// A `warp = N` or `insts = N` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    Warp(u32),
    Insts(u64),
}

/// A `warp =` or `insts =` line's count, or what is wrong with it; `None` for other lines.
fn text_count(text: &str) -> Option<Result<Count, String>> {
    if let Some(rest) = text.strip_prefix("warp") {
        let value = rest.trim_start().strip_prefix('=').unwrap_or("").trim();
        return Some(parse_dec(value, "the warp").map(Count::Warp));
    }
    let rest = text.strip_prefix("insts")?;
    let value = rest.trim_start().strip_prefix('=').unwrap_or("").trim();
    Some(parse_dec(value, "the instruction count").map(Count::Insts))
}

/// A `warp = N` or `insts = N` line as tracers write it (1 to 9 digits, then the line break),
/// from its bytes: what [`text_count`] reads from its text.
fn plain_count(line: &[u8]) -> Option<Count> {
    let (digits, warp) = match line.strip_prefix(b"warp = ") {
        Some(digits) => (digits, true),
        None => (line.strip_prefix(b"insts = ")?, false),
    };
    let digits = digits.strip_suffix(b"\n")?;
    let digits = digits.strip_suffix(b"\r").unwrap_or(digits);
    if !(1..=9).contains(&digits.len()) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().fold(0u32, |v, &b| v * 10 + (b - b'0') as u32);
    Some(if warp {
        Count::Warp(n)
    } else {
        Count::Insts(n as u64)
    })
}

/// A `warp =` or `insts =` line as [`plain_count`] reads it at the start of `pending`, and its
/// length with its line break.
fn pending_count(pending: &[u8]) -> Option<(Count, usize)> {
    if !matches!(pending.first(), Some(b'w' | b'i')) {
        return None;
    }
    // No longer than `insts = ` and nine digits with a CR LF.
    let head = &pending[..pending.len().min(20)];
    let len = memchr::memchr(b'\n', head)? + 1;
    Some((plain_count(&pending[..len])?, len))
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 40 {
        format!("{}...", text.chars().take(40).collect::<String>())
    } else {
        text.to_string()
    }
}

fn open(path: &Path) -> Result<LineReader<File>, ReplayError> {
    if path
        .extension()
        .is_some_and(|e| e == "xz" || e == "gz" || e == "zst")
    {
        return Err(ReplayError::Unsupported(format!(
            "{}: compressed traces are not read directly; decompress it first (e.g. `xz -dk`) \
             and point the kernel list at the .traceg",
            path.display()
        )));
    }
    let file = File::open(path).map_err(|e| ReplayError::io(path, "opening", e))?;
    Ok(LineReader::new(file, path))
}

fn parse_header<R: Read>(
    lines: &mut LineReader<R>,
) -> Result<(KernelHeader, Option<u64>), ReplayError> {
    let mut h = KernelHeader {
        name: String::new(),
        kernel_id: 0,
        grid: Dim3::new(0, 0, 0),
        block: Dim3::new(0, 0, 0),
        shmem: 0,
        nregs: 0,
        binary_version: 0,
        stream_id: 0,
        tracer_version: 0,
        lineinfo: false,
        grid_line: 0,
    };
    let mut seen = [false; 4]; // name, grid, block, binary version
    let mut version_line = 0;
    let mut block_line = 0;
    let mut first_block = None;
    loop {
        let offset = lines.offset;
        let Some((line, lines)) = lines.next_line()? else {
            break;
        };
        let text = lines.text(line)?.trim();
        if text.is_empty() {
            continue;
        }
        if text.starts_with("#BEGIN_TB") {
            first_block = Some(offset);
            break;
        }
        if text.starts_with('#') {
            continue;
        }
        let Some(body) = text.strip_prefix('-') else {
            return Err(lines.err(format!(
                "expected a `-key = value` header line or #BEGIN_TB, found `{}`",
                shorten(text)
            )));
        };
        let Some((key, value)) = body.split_once('=') else {
            return Err(lines.err(format!("header line `{}` has no `=`", shorten(text))));
        };
        let (key, value) = (key.trim(), value.trim());
        let line = lines.line;
        let err = |m: String| ReplayError::parse(&lines.path, line, m);
        match key {
            "kernel name" => {
                h.name = value.to_string();
                seen[0] = true;
            }
            "kernel id" => h.kernel_id = parse_dec(value, "the kernel id").map_err(err)?,
            "grid dim" | "block dim" => {
                let d = parse_key_dim(value)
                    .filter(|d| d.x > 0 && d.y > 0 && d.z > 0)
                    .ok_or_else(|| {
                        err(format!(
                            "bad {key} `{value}` (expected (x,y,z), each at least 1)"
                        ))
                    })?;
                if key == "grid dim" {
                    h.grid = d;
                    h.grid_line = line;
                    seen[1] = true;
                } else {
                    h.block = d;
                    block_line = line;
                    seen[2] = true;
                }
            }
            "shmem" => h.shmem = parse_dec(value, "the shared memory size").map_err(err)?,
            "nregs" => {
                h.nregs = parse_dec(value, "the register count").map_err(err)?;
                // A thread has at most 255 registers (R0–R254) on every generation; a larger
                // count is a damaged header, not a kernel.
                if h.nregs > crate::isa::Reg::MAX_INDEX as u32 + 1 {
                    return Err(err(format!(
                        "{} registers per thread: a thread has at most {}",
                        h.nregs,
                        crate::isa::Reg::MAX_INDEX as u32 + 1
                    )));
                }
            }
            "binary version" => {
                h.binary_version = parse_dec(value, "the binary version").map_err(err)?;
                seen[3] = true;
                version_line = line;
            }
            "cuda stream id" => h.stream_id = parse_dec(value, "the stream id").map_err(err)?,
            "accelsim tracer version" => {
                h.tracer_version = parse_dec(value, "the tracer version").map_err(err)?;
                if !TRACER_VERSIONS.contains(&h.tracer_version) {
                    return Err(err(format!(
                        "tracer version {} is not supported (supported: 3, 4, 5)",
                        h.tracer_version
                    )));
                }
            }
            "enable lineinfo" => {
                h.lineinfo = parse_dec::<u32>(value, "enable lineinfo").map_err(err)? != 0
            }
            // nvbit version, shared/local memory bases, cluster shape: not needed for timing.
            _ => {}
        }
    }
    for (i, what) in ["-kernel name", "-grid dim", "-block dim", "-binary version"]
        .iter()
        .enumerate()
    {
        if !seen[i] {
            return Err(ReplayError::parse(
                &lines.path,
                lines.line.max(1),
                format!("the kernel header has no `{what}` line"),
            ));
        }
    }
    if h.block.count() > 1024 {
        return Err(ReplayError::parse(
            &lines.path,
            block_line,
            format!(
                "a block of {} threads exceeds CUDA's limit of 1024",
                h.block.count()
            ),
        ));
    }
    if Generation::from_binary_version(h.binary_version).is_none() {
        return Err(ReplayError::parse(
            &lines.path,
            version_line,
            format!(
                "binary version {} is not supported (supported: {})",
                h.binary_version,
                opcodes::SUPPORTED_VERSIONS
            ),
        ));
    }
    if h.tracer_version == 0 {
        // Traces before the version line existed use the version-3 layout.
        h.tracer_version = 3;
    }
    Ok((h, first_block))
}

/// Reads only the header of a kernel trace: enough to select kernels before scanning them.
pub fn header(path: &Path) -> Result<KernelHeader, ReplayError> {
    let mut lines = open(path)?;
    Ok(parse_header(&mut lines)?.0)
}

/// Files at least this large are scanned in two halves at once.
const PARALLEL_SCAN_BYTES: u64 = 4 << 20;

/// What a scan of some of a file's thread blocks found (line numbers relative to where it
/// started reading, which is the start of the file for the first part).
#[derive(Default)]
struct ScanPart {
    /// (linear index, entry), in file order.
    blocks: Vec<(u64, BlockEntry)>,
    /// In order of first appearance.
    statics: Vec<StaticInst>,
    pc_index: HashMap<u64, u32>,
    warp_instructions: u64,
    thread_instructions: u64,
    addresses: u64,
    /// Lines read before stopping.
    lines: u64,
}

/// Reads a whole kernel trace once: validates it and builds its static table and block index.
pub fn scan(path: &Path) -> Result<KernelTrace, ReplayError> {
    scan_split(path, PARALLEL_SCAN_BYTES)
}

/// [`scan`], in two halves if the file has at least `parallel_bytes`.
fn scan_split(path: &Path, parallel_bytes: u64) -> Result<KernelTrace, ReplayError> {
    let mut lines = open(path)?;
    let (header, first_block) = parse_header(&mut lines)?;
    let generation =
        Generation::from_binary_version(header.binary_version).expect("checked by parse_header");
    let shape = BlockShape {
        grid: header.grid,
        threads_per_block: header.block.count(),
        warps_per_block: header.block.count().div_ceil(32) as u32,
        lineinfo: header.lineinfo,
    };
    // A large file is scanned in two halves on two threads. Any error in either (or between
    // them) has the file scanned again in one piece, so that errors and their line numbers are
    // exactly those of reading it in order.
    let split = split_point(path, lines.offset, parallel_bytes);
    let part = match split {
        Some(split) => std::thread::scope(|scope| {
            let second = scope.spawn(|| {
                let mut lines = open_at(path, split)?;
                scan_blocks(path, &mut lines, &shape, generation, None, u64::MAX)
            });
            let first = scan_blocks(path, &mut lines, &shape, generation, first_block, split);
            let second = second
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            match (first, second) {
                (Ok(first), Ok(second)) => merge_parts(first, second),
                _ => None,
            }
        }),
        None => None,
    };
    let part = match part {
        Some(part) => part,
        None => {
            if split.is_some() {
                lines = open(path)?;
                parse_header(&mut lines)?;
            }
            scan_blocks(path, &mut lines, &shape, generation, first_block, u64::MAX)?
        }
    };
    finish_scan(path, header, generation, part)
}

/// The offset of the first `#BEGIN_TB` line in the second half of a file large enough to
/// scan in two halves (after `header_end`), if there is one.
fn split_point(path: &Path, header_end: u64, parallel_bytes: u64) -> Option<u64> {
    let len = std::fs::metadata(path).ok()?.len();
    if len < parallel_bytes {
        return None;
    }
    let mid = (len / 2).max(header_end);
    let mut lines = open_at(path, mid).ok()?;
    // The line `mid` falls in is partial.
    {
        let (line, lines) = lines.next_line().ok()??;
        lines.text(line).ok()?;
    }
    loop {
        let offset = lines.offset;
        let (line, lines) = lines.next_line().ok()??;
        if lines.text(line).ok()?.trim_start().starts_with("#BEGIN_TB") {
            return Some(offset);
        }
    }
}

/// [`open`], positioned at byte `offset` (which must start a line), counting lines from there.
fn open_at(path: &Path, offset: u64) -> Result<LineReader<File>, ReplayError> {
    let mut lines = open(path)?;
    lines.seek(offset, 0)?;
    Ok(lines)
}

/// The second part after the first, with its line numbers made absolute; `None` where they
/// disagree (a PC with two meanings), for the scan in one piece to report.
fn merge_parts(mut first: ScanPart, second: ScanPart) -> Option<ScanPart> {
    let base = first.lines;
    first
        .blocks
        .extend(second.blocks.into_iter().map(|(linear, entry)| {
            (
                linear,
                BlockEntry {
                    offset: entry.offset,
                    line: entry.line + base,
                },
            )
        }));
    for mut s in second.statics {
        match first.pc_index.get(&s.pc) {
            Some(&k) => {
                let f = &mut first.statics[k as usize];
                if f.opcode != s.opcode || f.dsts != s.dsts || f.srcs != s.srcs {
                    return None;
                }
                f.count += s.count;
                if f.spelling.is_none() {
                    f.spelling = s.spelling;
                }
            }
            None => {
                s.first_line += base;
                first.pc_index.insert(s.pc, first.statics.len() as u32);
                first.statics.push(s);
            }
        }
    }
    first.warp_instructions += second.warp_instructions;
    first.thread_instructions += second.thread_instructions;
    first.addresses += second.addresses;
    first.lines += second.lines;
    Some(first)
}

/// Scans thread blocks from where `lines` is (the block at `pending` first, if given) until
/// the end of the file or a block that starts at or after byte `stop_at`.
fn scan_blocks<R: Read>(
    path: &Path,
    lines: &mut LineReader<R>,
    shape: &BlockShape,
    generation: Generation,
    mut pending: Option<u64>,
    stop_at: u64,
) -> Result<ScanPart, ReplayError> {
    let mut sink = ScanSink {
        path,
        generation,
        part: ScanPart::default(),
        spelling: Vec::new(),
        last: None,
        memo: LineMemo::default(),
    };
    let mut inst = InstLine::default();
    loop {
        let (offset, begin_line) = match pending.take() {
            Some(offset) => (offset, lines.line),
            None => {
                let offset = lines.offset;
                if offset >= stop_at {
                    break;
                }
                let Some((line, lines)) = lines.next_line()? else {
                    break;
                };
                let text = lines.text(line)?.trim();
                if text.is_empty() || (text.starts_with('#') && !text.starts_with("#BEGIN_TB")) {
                    continue;
                }
                if !text.starts_with("#BEGIN_TB") {
                    return Err(lines.err(format!("expected #BEGIN_TB, found `{}`", shorten(text))));
                }
                (offset, lines.line)
            }
        };
        let ctaid = parse_block(lines, shape, begin_line, &mut inst, &mut sink)?;
        let grid = shape.grid;
        let linear = ctaid.x as u64
            + ctaid.y as u64 * grid.x as u64
            + ctaid.z as u64 * grid.x as u64 * grid.y as u64;
        sink.part.blocks.push((
            linear,
            BlockEntry {
                offset,
                line: begin_line,
            },
        ));
    }
    sink.part.lines = lines.line;
    Ok(sink.part)
}

/// The scan's side of [`parse_block`]: counts and the static instruction table.
struct ScanSink<'a> {
    path: &'a Path,
    generation: Generation,
    part: ScanPart,
    /// The static part of the last line the byte parser read in full.
    spelling: Vec<u8>,
    /// How the byte parser took the last line it was given, if it did.
    last: Option<Taken>,
    /// Lines taken as spelled as their static instruction.
    memo: LineMemo,
}

fn spelled(last: Option<Taken>, spelling: &[u8]) -> Option<Spelling> {
    match last {
        Some(Taken::Parsed(layout)) => Some((spelling.into(), layout)),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Taken {
    /// The static part spelled as static instruction `k`'s.
    Spelled(u32),
    /// In full, its static part in `ScanSink::spelling`.
    Parsed(Layout),
}

impl BlockSink for ScanSink<'_> {
    fn parse_plain(&mut self, line: &[u8], lineinfo: bool, inst: &mut InstLine) -> bool {
        self.last = None;
        if let Some(k) = self.memo.take_addressed::<false>(line, inst) {
            self.last = Some(Taken::Spelled(k));
            return true;
        }
        let Some(mut rest) = plain_pc(line, lineinfo, inst) else {
            return false;
        };
        if plain_mask(&mut rest, inst).is_none() {
            return false;
        }
        if let Some(&k) = self.part.pc_index.get(&inst.pc) {
            if let Some((spelling, layout)) = &self.part.statics[k as usize].spelling {
                if rest.strip(spelling) {
                    // Spelled alike, parsed alike: the rest decides, as in full.
                    let Some(addresses) = plain_tail::<false>(rest, *layout, inst) else {
                        return false;
                    };
                    self.memo.remember(line, k, inst, addresses);
                    self.last = Some(Taken::Spelled(k));
                    return true;
                }
            }
        }
        let Some((spelling, layout)) = plain_static::<true>(&mut rest, inst) else {
            return false;
        };
        if plain_tail::<false>(rest, layout, inst).is_none() {
            return false;
        }
        self.spelling.clear();
        self.spelling.extend_from_slice(spelling);
        self.last = Some(Taken::Parsed(layout));
        true
    }

    // Called for every line: a call of its own costs as much as a line's memo check.
    #[inline(always)]
    fn recall(&mut self, pending: &[u8], inst: &mut InstLine) -> Option<usize> {
        let (k, len) = self.memo.recall::<false>(pending, inst)?;
        self.last = Some(Taken::Spelled(k));
        Some(len)
    }

    // Inlined into the block's loop: called for every line, and nearly every line is one
    // spelled as its static instruction was.
    #[inline]
    fn inst(&mut self, _warp: u32, i: &InstLine, line: u64) -> Result<(), ReplayError> {
        let part = &mut self.part;
        part.warp_instructions += 1;
        part.thread_instructions += i.mask.count_ones() as u64;
        // One address per executing lane (the byte parser leaves the scan's `addrs` unfilled).
        if i.has_addrs {
            part.addresses += i.mask.count_ones() as u64;
        }
        let last = self.last.take();
        if let Some(Taken::Spelled(k)) = last {
            part.statics[k as usize].count += 1;
            self.memo.prev = Some(k);
            return Ok(());
        }
        self.static_inst(i, line, last)
    }
}

impl ScanSink<'_> {
    /// [`BlockSink::inst`] for a line not taken as spelled as its static instruction: its PC
    /// is looked up (and compared) or tabled.
    #[inline(never)]
    fn static_inst(
        &mut self,
        i: &InstLine,
        line: u64,
        last: Option<Taken>,
    ) -> Result<(), ReplayError> {
        let part = &mut self.part;
        match part.pc_index.get(&i.pc) {
            Some(&k) => {
                self.memo.prev = Some(k);
                let s = &mut part.statics[k as usize];
                if s.opcode != i.opcode || s.dsts != i.dsts || s.srcs != i.srcs {
                    return Err(ReplayError::parse(
                        self.path,
                        line,
                        format!(
                            "PC {:04x} is `{}` here but was `{}` at line {}",
                            i.pc, i.opcode, s.opcode, s.first_line
                        ),
                    ));
                }
                s.count += 1;
                if s.spelling.is_none() {
                    s.spelling = spelled(last, &self.spelling);
                }
            }
            None => {
                let known = opcodes::classify(&i.opcode, self.generation);
                let info =
                    known.unwrap_or_else(|| OpInfo::generic(i.has_addrs, !i.dsts.is_empty()));
                self.memo.prev = Some(part.statics.len() as u32);
                part.pc_index.insert(i.pc, part.statics.len() as u32);
                part.statics.push(StaticInst {
                    pc: i.pc,
                    opcode: i.opcode.clone(),
                    dsts: i.dsts.clone(),
                    srcs: i.srcs.clone(),
                    info,
                    known: known.is_some(),
                    width: opcodes::access_width(&i.opcode),
                    first_line: line,
                    source_line: i.source_line,
                    count: 1,
                    spelling: spelled(last, &self.spelling),
                });
            }
        }
        Ok(())
    }
}

/// The block index checked against the grid, and the statics in PC order.
fn finish_scan(
    path: &Path,
    header: KernelHeader,
    generation: Generation,
    part: ScanPart,
) -> Result<KernelTrace, ReplayError> {
    let ScanPart {
        mut blocks,
        mut statics,
        warp_instructions,
        thread_instructions,
        addresses,
        ..
    } = part;
    let total_blocks = header.grid.count();
    blocks.sort_by_key(|&(linear, _)| linear);
    if let Some(pair) = blocks.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(ReplayError::parse(
            path,
            pair[1].1.line,
            format!(
                "thread block {} appears twice in the trace (first at line {})",
                header.grid.unlinear(pair[1].0),
                pair[0].1.line
            ),
        ));
    }
    // Distinct and inside the grid: as many as the grid has means every block is there, and
    // position i holds block i.
    let present = blocks.len() as u64;
    if present != total_blocks {
        return Err(ReplayError::parse(
            path,
            header.grid_line,
            format!(
                "the grid {} has {} but the trace holds {present}",
                header.grid,
                crate::words::count(total_blocks, "thread block", "thread blocks")
            ),
        ));
    }
    let blocks: Vec<BlockEntry> = blocks.into_iter().map(|(_, entry)| entry).collect();
    statics.sort_by_key(|s| s.pc);
    let pc_index = statics
        .iter()
        .enumerate()
        .map(|(i, s)| (s.pc, i as u32))
        .collect();
    Ok(KernelTrace {
        path: path.to_path_buf(),
        header,
        generation,
        statics,
        pc_index,
        blocks,
        warp_instructions,
        thread_instructions,
        addresses,
    })
}

/// Reads single thread blocks of a scanned kernel trace on demand.
pub struct BlockReader {
    lines: LineReader<File>,
    inst: InstLine,
    memo: LineMemo,
    /// Instructions and addresses of the last block read: room for the next block's.
    last_len: (usize, usize),
}

impl BlockReader {
    pub fn open(trace: &KernelTrace) -> Result<BlockReader, ReplayError> {
        Ok(BlockReader {
            lines: open(&trace.path)?,
            inst: InstLine::default(),
            memo: LineMemo::default(),
            last_len: (0, 0),
        })
    }

    /// The instruction streams of block `block` (linear index), one per warp of the block.
    pub fn read(
        &mut self,
        trace: &KernelTrace,
        block: u64,
    ) -> Result<Vec<WarpStream>, ReplayError> {
        let entry = *trace.blocks.get(block as usize).ok_or_else(|| {
            ReplayError::parse(
                &trace.path,
                trace.header.grid_line,
                format!("thread block {block} is not in the trace"),
            )
        })?;
        self.lines.seek(entry.offset, entry.line - 1)?;
        // The `#BEGIN_TB` line itself.
        self.lines.next_line()?;
        let shape = BlockShape {
            grid: trace.header.grid,
            threads_per_block: trace.header.block.count(),
            warps_per_block: trace.warps_per_block(),
            lineinfo: trace.header.lineinfo,
        };
        let (insts, addrs) = self.last_len;
        let mut sink = ReadSink {
            trace,
            streams: StreamBuilder::new(shape.warps_per_block, insts, addrs),
            taken: None,
            memo: &mut self.memo,
        };
        parse_block(
            &mut self.lines,
            &shape,
            entry.line,
            &mut self.inst,
            &mut sink,
        )?;
        self.last_len = sink.streams.len();
        Ok(sink.streams.finish())
    }
}

/// The block reader's side of [`parse_block`]: the warps' streams.
struct ReadSink<'a> {
    trace: &'a KernelTrace,
    streams: StreamBuilder,
    /// The program index of the last line the byte parser took, if its PC was scanned.
    taken: Option<u32>,
    memo: &'a mut LineMemo,
}

/// Instructions reserved for a warp's stream up front (in its block's buffer): what `insts =`
/// declares, up to this (a larger stream grows as it is read, so a wrong count cannot
/// allocate much ahead).
const RESERVE_INSTS: u64 = 4096;

impl BlockSink for ReadSink<'_> {
    fn parse_plain(&mut self, line: &[u8], lineinfo: bool, inst: &mut InstLine) -> bool {
        self.taken = None;
        if let Some(k) = self.memo.take_addressed::<true>(line, inst) {
            self.taken = Some(k);
            return true;
        }
        // The scan took the registers and opcode; a stream needs neither.
        let trace = self.trace;
        let mut index = None;
        let taken = parse_plain_addresses(line, lineinfo, inst, |pc| {
            index = trace.index_of(pc);
            trace.statics[index? as usize].spelling.as_ref()
        });
        let Some(addresses) = taken else {
            return false;
        };
        self.taken = index;
        if let Some(k) = index {
            self.memo.remember(line, k, inst, addresses);
        }
        true
    }

    // Called for every line: a call of its own costs as much as a line's memo check.
    #[inline(always)]
    fn recall(&mut self, pending: &[u8], inst: &mut InstLine) -> Option<usize> {
        let (k, len) = self.memo.recall::<true>(pending, inst)?;
        self.taken = Some(k);
        Some(len)
    }

    fn declare(&mut self, warp: u32, count: u64) {
        self.streams.begin_warp(warp);
        let insts = count.min(RESERVE_INSTS);
        // Addresses as many as the kernel's instructions carry on average, rounded up (a warp
        // of the average short by one address would grow its stream to twice the size).
        let addrs = (insts * self.trace.addresses).div_ceil(self.trace.warp_instructions.max(1));
        self.streams.reserve(insts as usize, addrs as usize);
    }

    // Inlined into the block's loop: called for every line.
    #[inline]
    fn inst(&mut self, _warp: u32, i: &InstLine, line: u64) -> Result<(), ReplayError> {
        let Some(pc) = self.taken.take().or_else(|| self.trace.index_of(i.pc)) else {
            return Err(ReplayError::parse(
                &self.trace.path,
                line,
                format!("PC {:04x} was not in the trace when it was scanned", i.pc),
            ));
        };
        self.memo.prev = Some(pc);
        match (i.has_addrs, i.stride, i.addrs.first()) {
            // Kept as the base and the stride: a sixteenth of a full warp's addresses to write
            // here and for the SM to read back, long after, from memory rather than cache.
            (true, Some(stride), Some(&first)) => {
                self.streams.push_strided(pc, i.mask, first, stride)
            }
            (has_addrs, ..) => self.streams.push(pc, i.mask, has_addrs.then_some(&i.addrs)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Result<InstLine, String> {
        let mut out = InstLine::default();
        parse_inst_line(text, false, &mut out).map(|()| out)
    }

    #[test]
    fn parses_alu_and_memory_lines() {
        let l = line("0030 ffffffff 1 R2 XMAD 2 R0 R2 0 ").unwrap();
        assert_eq!((l.pc, l.mask, l.opcode.as_str()), (0x30, u32::MAX, "XMAD"));
        assert_eq!(l.dsts.len(), 1);
        assert_eq!(l.srcs.iter().map(|r| r.num).collect::<Vec<_>>(), [0, 2]);
        assert!(!l.has_addrs);

        let l = line("0098 0000000f 1 R4 LDG.E.CG 1 R4 4 1 0x7f2b2d500180 4 ").unwrap();
        assert_eq!(
            l.addrs,
            [
                0x7f2b2d500180,
                0x7f2b2d500184,
                0x7f2b2d500188,
                0x7f2b2d50018c
            ]
        );

        let l = line("00d8 00000005 0 STG.E 2 R6 R0 4 0 0x100 0x200").unwrap();
        assert_eq!(l.addrs, [0x100, 0x200]);

        let l = line("00d8 00000007 0 STG.E 2 R6 R0 4 2 0x100 8 -4").unwrap();
        assert_eq!(l.addrs, [0x100, 0x108, 0x104]);
    }

    #[test]
    fn parses_version_5_registers_and_immediates() {
        let l = line("0010 ffffffff 1 P0 ISETP.GE.AND 2 R0 UR4 0 0x1f").unwrap();
        assert_eq!(l.dsts[0].kind, RegKind::Pred);
        assert_eq!(l.srcs[1].kind, RegKind::UniformReg);
        let mut out = InstLine::default();
        parse_inst_line("17 0020 ffffffff 0 EXIT 0 0", true, &mut out).unwrap();
        assert_eq!(out.pc, 0x20);
        let l = line("0040 ffffffff 2 R4 R5 HGMMA.64x8x16.F32 2 R2 R3 1 0").unwrap();
        assert_eq!(l.opcode, "HGMMA.64x8x16.F32");
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let cases = [
            ("0008 ffffffff 1 R1 MOV 0", "wrong field count"),
            ("0008 fffffffff 1 R1 MOV 0 0", "wider than 32 lanes"),
            ("zz08 ffffffff 1 R1 MOV 0 0", "bad number `zz08` for the PC"),
            ("0008 ffffffff 1 X1 MOV 0 0", "not a register"),
            (
                "0098 00000003 1 R4 LDG.E 1 R4 4 7 0x100",
                "unknown address mode 7",
            ),
            (
                "0098 00000003 1 R4 LDG.E 1 R4 4 0 0x100",
                "wrong field count",
            ),
            ("0008 ffffffff 1 R1 MOV 0 0 5 6", "wrong field count"),
            (
                "0008 ffffffff 1 R1 MOV 0 0 zz",
                "bad number `zz` for the immediate",
            ),
        ];
        for (text, want) in cases {
            let e = line(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn number_and_register_fast_paths_agree_with_the_general_parsers() {
        for t in [
            "0",
            "ff",
            "FF",
            "0x7f5000000000",
            "ffffffffffffffff",
            "00000000000000001",
        ] {
            let digits = t.strip_prefix("0x").unwrap_or(t);
            assert_eq!(
                parse_hex(t, "x").ok(),
                u64::from_str_radix(digits, 16).ok(),
                "{t}"
            );
        }
        // Beyond 64 bits, signs and junk take the general parser and its errors.
        assert!(parse_hex("1ffffffffffffffff", "x").is_err());
        assert_eq!(parse_hex("+ff", "x"), Ok(0xff));
        assert!(parse_hex("0x", "x")
            .unwrap_err()
            .contains("bad number `0x`"));
        assert!(parse_hex("12g4", "x").is_err());
        for t in [
            "0", "7", "255", "256", "65535", "65536", "-3", "+4", "007", "",
        ] {
            assert_eq!(parse_dec::<u16>(t, "x").ok(), t.parse::<u16>().ok(), "{t}");
            assert_eq!(parse_dec::<i64>(t, "x").ok(), t.parse::<i64>().ok(), "{t}");
        }
        assert_eq!(parse_dec::<u64>("18446744073709551615", "x"), Ok(u64::MAX));
        for (t, ok) in [("R0", true), ("R255", true), ("R256", false), ("R", false)] {
            assert_eq!(parse_reg(t).is_ok(), ok, "{t}");
        }
        assert_eq!(parse_reg("R007").map(|r| r.num), Ok(7));
        assert_eq!(parse_reg("RZ").map(|r| r.num), Ok(255));
    }

    /// The scan's result as text, its PC index in PC order (a hash map prints in no fixed order).
    fn comparable(scan: &Result<KernelTrace, ReplayError>) -> String {
        match scan {
            Ok(t) => {
                let mut index: Vec<_> = t.pc_index.iter().collect();
                index.sort();
                let without_index = KernelTrace {
                    pc_index: HashMap::default(),
                    ..t.clone()
                };
                format!("{without_index:?} {index:?}")
            }
            Err(e) => format!("{e:?}"),
        }
    }

    #[test]
    fn a_scan_in_two_halves_is_a_scan_in_one() {
        let dir = std::env::temp_dir().join(format!("ws-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = "-kernel name = k\n-kernel id = 1\n-grid dim = (8,1,1)\n-block dim = (32,1,1)\n-shmem = 0\n-nregs = 8\n-binary version = 70\n-cuda stream id = 0\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n";
        let block = |b: u32, second_pc: &str| {
            format!("#BEGIN_TB\nthread block = {b},0,0\nwarp = 0\ninsts = 2\n0000 ffffffff 1 R1 MOV 0 0\n0010 ffffffff 0 {second_pc} 0 0\n#END_TB\n")
        };
        let good: String = (0..8).map(|b| block(b, "EXIT")).collect();
        // The second half disagrees with the first about PC 0x10.
        let bad: String = (0..8)
            .map(|b| block(b, if b == 6 { "NOP" } else { "EXIT" }))
            .collect();
        let broken = good.replace("thread block = 5,0,0", "thread block = 5,0");
        for (name, body) in [("good", good), ("bad", bad), ("broken", broken)] {
            let path = dir.join(format!("{name}.traceg"));
            std::fs::write(&path, format!("{header}{body}")).unwrap();
            let halves = scan_split(&path, 0);
            let whole = scan_split(&path, u64::MAX);
            assert_eq!(comparable(&halves), comparable(&whole), "{name}");
            assert_eq!(name == "good", whole.is_ok(), "{name}: {whole:?}");
            if let Ok(t) = whole {
                assert_eq!((t.blocks(), t.warp_instructions), (8, 16));
                assert_eq!(t.statics[1].count, 8);
            }
        }
        assert!(split_point(&dir.join("good.traceg"), 0, 0).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_warps_are_listed_with_runs_as_ranges() {
        assert_eq!(missing_warps(&[31]), "warp 31 is missing");
        assert_eq!(missing_warps(&[1, 3]), "warps 1 and 3 are missing");
        assert_eq!(missing_warps(&[4, 5]), "warps 4 and 5 are missing");
        assert_eq!(missing_warps(&[1, 2, 3]), "warps 1–3 are missing");
        assert_eq!(
            missing_warps(&[0, 7, 8, 29, 30, 31]),
            "warps 0, 7, 8 and 29–31 are missing"
        );
    }

    #[test]
    fn counts_as_tracers_write_them_are_read_from_bytes() {
        for (line, want) in [
            ("warp = 3\n", Some(Count::Warp(3))),
            ("insts = 15\r\n", Some(Count::Insts(15))),
            ("warp = 007\n", Some(Count::Warp(7))),
            ("insts = 999999999\n", Some(Count::Insts(999_999_999))),
            ("warp = 1234567890\n", None),
            ("warp =3\n", None),
            ("warp = 3", None),
            ("warp = 3 \n", None),
            ("insts = +5\n", None),
            ("insts = \n", None),
        ] {
            assert_eq!(plain_count(line.as_bytes()), want, "{line:?}");
        }
    }

    #[test]
    fn static_text_reads_like_sass() {
        let mut l = line("0098 ffffffff 1 R4 LDG.E.CG 1 R4 4 1 0x100 4").unwrap();
        let mk = |l: &InstLine| StaticInst {
            pc: l.pc,
            opcode: l.opcode.clone(),
            dsts: l.dsts.clone(),
            srcs: l.srcs.clone(),
            info: opcodes::classify(&l.opcode, Generation::Pascal).unwrap(),
            known: true,
            width: 4,
            first_line: 1,
            source_line: 0,
            count: 1,
            spelling: None,
        };
        assert_eq!(mk(&l).text(), "LDG.E.CG R4, [R4]");
        l = line("00d8 ffffffff 0 STG.E 2 R6 R0 4 1 0x100 4").unwrap();
        assert_eq!(mk(&l).text(), "STG.E [R6], R0");
        l = line("00d0 ffffffff 1 R0 FADD 2 R2 R4 0").unwrap();
        assert_eq!(mk(&l).text(), "FADD R0, R2, R4");
        l = line("00f0 ffffffff 0 EXIT 0 0").unwrap();
        assert_eq!(mk(&l).text(), "EXIT");
    }

    /// Lines as `BufRead::read_until` cuts them, line breaks (and carriage returns before
    /// them) dropped, each with the offset after it.
    fn lines_by_read_until(text: &[u8]) -> Vec<(Vec<u8>, u64)> {
        use std::io::BufRead;
        let mut reader = text;
        let mut lines = Vec::new();
        let mut offset = 0;
        loop {
            let mut line = Vec::new();
            let n = reader.read_until(b'\n', &mut line).unwrap();
            if n == 0 {
                return lines;
            }
            offset += n as u64;
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            lines.push((line, offset));
        }
    }

    /// `lines`'s lines to the end of the file, with the offset after each and its number.
    fn read_to_end(lines: &mut LineReader<std::io::Cursor<Vec<u8>>>) -> Vec<(Vec<u8>, u64, u64)> {
        let mut out = Vec::new();
        while let Some((line, lines)) = lines.next_line().unwrap() {
            out.push((line.to_vec(), lines.offset, lines.line));
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(6),
            ..Default::default()
        })]

        /// Through any window size, with a seek anywhere after any line: the lines, offsets and
        /// numbers of reading the file with `read_until`.
        #[test]
        fn the_line_reader_reads_what_read_until_reads(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::prelude::Just(b'\n'),
                    proptest::prelude::Just(b'\r'),
                    proptest::prelude::Just(b'a'),
                    proptest::prelude::any::<u8>(),
                ],
                0..300,
            ),
            window in proptest::prop_oneof![1usize..9, proptest::prelude::Just(WINDOW_BYTES)],
            read_first in proptest::prelude::any::<proptest::sample::Index>(),
            seek_to in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let want: Vec<(Vec<u8>, u64, u64)> = lines_by_read_until(&text)
                .into_iter()
                .zip(1..)
                .map(|((line, offset), number)| (line, offset, number))
                .collect();
            let mut lines = LineReader {
                window: vec![0; window],
                ..LineReader::new(std::io::Cursor::new(text.clone()), Path::new("t"))
            };
            proptest::prop_assert_eq!(&read_to_end(&mut lines), &want);

            // Some lines in, back or ahead to the start of line `k` (0-based).
            lines.seek(0, 0).unwrap();
            for _ in 0..read_first.index(want.len() + 1) {
                lines.next_line().unwrap();
            }
            let k = seek_to.index(want.len() + 1);
            let offset = if k == 0 { 0 } else { want[k - 1].1 };
            lines.seek(offset, k as u64).unwrap();
            proptest::prop_assert_eq!(&read_to_end(&mut lines), &want[k..]);

            // Line `k` skipped as a line taken again is: then the lines after it.
            if k < want.len() {
                let start = if k == 0 { 0 } else { want[k - 1].1 };
                lines.seek(start, k as u64).unwrap();
                let pending = lines.pending().len();
                let len = (want[k].1 - start) as usize;
                if len <= pending {
                    let skipped = lines.skip_line(len);
                    proptest::prop_assert_eq!((skipped.offset, skipped.line), (want[k].1, want[k].2));
                    proptest::prop_assert_eq!(&read_to_end(&mut lines), &want[k + 1..]);
                }
            }
        }
    }

    #[test]
    fn a_line_that_is_not_text_is_an_error_at_its_number() {
        let dir = std::env::temp_dir().join(format!("ws-utf8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = "-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-binary version = 70\n\n";
        let block = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0000 ffffffff 0 EXIT 0 0\n#END_TB\n";
        let good = format!("{header}{block}").into_bytes();
        assert!(scan(&{
            let path = dir.join("good.traceg");
            std::fs::write(&path, &good).unwrap();
            path
        })
        .is_ok());
        // A byte of the header, of a directive, of an instruction line (as an address and as
        // the opcode) and after the block.
        for (at, number) in [("kernel", 1), ("warp", 8), ("ffff", 10), ("EXIT", 10)] {
            let mut text = good.clone();
            let i = text
                .windows(at.len())
                .position(|w| w == at.as_bytes())
                .unwrap();
            text[i + 1] = 0xc3;
            let path = dir.join("bad.traceg");
            std::fs::write(&path, &text).unwrap();
            let e = scan(&path).unwrap_err().to_string();
            assert!(
                e.ends_with(&format!(
                    "bad.traceg:{number}: the line is not valid UTF-8 text"
                )),
                "{at}: {e}"
            );
        }
        let mut after = good.clone();
        after.extend(b"\n\xff\n");
        let path = dir.join("after.traceg");
        std::fs::write(&path, &after).unwrap();
        let e = scan(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("after.traceg:13: the line is not valid UTF-8 text"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The general parser's verdict on a line as `parse_block` hands it over: text, trimmed.
    fn general(line: &[u8], lineinfo: bool) -> Option<Result<InstLine, String>> {
        let text = std::str::from_utf8(line).ok()?;
        let mut out = InstLine::default();
        Some(parse_inst_line(text.trim(), lineinfo, &mut out).map(|()| out))
    }

    /// The byte parser's line number, PC and mask, and the rest of the line.
    fn plain_head<'a>(line: &'a [u8], lineinfo: bool, out: &mut InstLine) -> Option<PlainLine<'a>> {
        let mut line = plain_pc(line, lineinfo, out)?;
        plain_mask(&mut line, out)?;
        Some(line)
    }

    /// The byte parser in full.
    fn parse_plain_inst_line(line: &[u8], lineinfo: bool, out: &mut InstLine) -> bool {
        (|| {
            let mut line = plain_head(line, lineinfo, out)?;
            let (_, layout) = plain_static::<true>(&mut line, out)?;
            plain_tail::<true>(line, layout, out)
        })()
        .is_some()
    }

    fn line_with_addresses() -> InstLine {
        line("0098 0000000f 1 R4 LDG.E.CG 1 R4 4 1 0x100 4").unwrap()
    }

    /// The byte parser's result, into a line left over from an earlier memory instruction.
    fn plain(bytes: &[u8], lineinfo: bool) -> Option<InstLine> {
        let mut out = line_with_addresses();
        parse_plain_inst_line(bytes, lineinfo, &mut out).then_some(out)
    }

    #[test]
    fn the_byte_parser_takes_every_instruction_line_of_the_fixtures() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/accelsim");
        let mut taken = 0;
        for name in [
            "vectoradd-100-32/kernel-1.traceg",
            "v4-volta-2d/kernel-1.traceg",
            "v4-volta-2d/kernel-2.traceg",
            "v5-ampere-reduce/kernel-1.traceg",
        ] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let lineinfo = text.contains("-enable lineinfo = 1");
            for l in text.lines() {
                if let Some(Ok(want)) = general(l.as_bytes(), lineinfo) {
                    assert_eq!(plain(l.as_bytes(), lineinfo), Some(want), "{name}: {l}");
                    taken += 1;
                }
            }
        }
        assert!(taken > 400, "{taken}");
    }

    /// Tokens that no field of a well-formed line is: signs, prefixes, widths and characters
    /// the general parser rejects or reads its own way.
    fn odd_token() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            prop::sample::select(vec![
                "",
                "0x",
                "0X1f",
                "+5",
                "-0",
                "007",
                "R0007",
                "UR007",
                "R",
                "UR",
                "RZZ",
                "X1",
                "R+1",
                "P-1",
                "R１",
                "UPT",
                "URZ",
                "PT",
                "4294967296",
                "99999999999999999999",
                "ffffffffffffffff",
                "1ffffffffffffffff",
                "0x0x12",
                "\u{a0}",
                "é",
                "LD\u{b}G",
                "#END_TB",
                "warp",
            ])
            .prop_map(str::to_string),
            "[0-9a-fA-FxX+-]{1,20}",
            "\\PC{1,4}",
        ]
    }

    fn hex_token() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            8 => "[0-9a-f]{1,12}",
            1 => "0x[0-9a-fA-F]{1,16}",
            1 => "0X[0-9A-F]{1,16}",
            1 => "[0-9a-f]{16}",
        ]
    }

    fn signed_token() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            6 => "-?[0-9]{1,4}",
            1 => "-?[0-9]{17,18}",
        ]
    }

    fn reg_token() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0u32..256).prop_map(|n| format!("R{n}")),
            1 => (0u32..8).prop_map(|n| format!("P{n}")),
            1 => (0u32..64).prop_map(|n| format!("UR{n}")),
            1 => (0u32..8).prop_map(|n| format!("UP{n}")),
            1 => prop::sample::select(vec!["RZ", "PT", "URZ", "UPT", "R256", "P8", "UR64", "UP8"])
                .prop_map(str::to_string),
        ]
    }

    /// Instruction lines: well-formed ones (every field kind, address mode and tracer
    /// version), then maybe damaged: a token replaced, dropped or added, odd whitespace
    /// between tokens or around the line, a byte set to anything.
    fn inst_line_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::collection::vec;
        use proptest::prelude::*;
        let mask = prop_oneof![
            4 => Just(u32::MAX),
            2 => any::<u32>(),
            1 => Just(0u32),
            1 => Just(1u32),
        ];
        let opcode = prop::sample::select(vec![
            "MOV",
            "LDG.E.SYS",
            "STG.E",
            "LDS",
            "EXIT",
            "HGMMA.64x8x16.F32",
            "IGMMA",
            "UTMALDG",
            "UBLKCP.S.G",
            "UMOV",
            "ÄDD",
        ]);
        let line = (
            (any::<bool>(), "[0-9]{1,5}", hex_token(), mask, 0usize..6),
            (vec(reg_token(), 0..4), opcode, vec(reg_token(), 0..5)),
            (
                prop::sample::select(vec!["0", "0", "4", "8", "16"]),
                0u32..3,
            ),
            prop_oneof![
                3 => Just(None),
                1 => hex_token().prop_map(Some),
                1 => signed_token().prop_map(Some),
            ],
        )
            .prop_flat_map(|(head, ops, (width, mode), immediate)| {
                let lanes = head.3.count_ones() as usize;
                let addresses = match mode {
                    0 => vec(hex_token(), lanes..=lanes).boxed(),
                    1 => (hex_token(), signed_token())
                        .prop_map(|(b, s)| vec![b, s])
                        .boxed(),
                    _ => (
                        hex_token(),
                        vec(
                            signed_token(),
                            lanes.saturating_sub(1)..=lanes.saturating_sub(1),
                        ),
                    )
                        .prop_map(|(b, mut d)| {
                            d.insert(0, b);
                            d
                        })
                        .boxed(),
                };
                (Just((head, ops, width, mode, immediate)), addresses)
            })
            .prop_map(
                |(
                    (
                        (lineinfo, number, pc, mask, spelling),
                        (dsts, op, srcs),
                        width,
                        mode,
                        immediate,
                    ),
                    addresses,
                )| {
                    let mut t = Vec::new();
                    if lineinfo {
                        t.push(number);
                    }
                    t.push(pc);
                    t.push(match spelling {
                        0 | 1 => format!("{mask:08x}"),
                        2 => format!("{mask:x}"),
                        3 => format!("0x{mask:08x}"),
                        4 => format!("0X{mask:x}"),
                        _ => format!("{mask:09x}"),
                    });
                    t.push(dsts.len().to_string());
                    t.extend(dsts);
                    t.push(op.to_string());
                    t.push(srcs.len().to_string());
                    t.extend(srcs);
                    if op.contains("GMMA") {
                        t.push("1".to_string());
                    }
                    t.push(width.to_string());
                    if width != "0" {
                        t.push(mode.to_string());
                        t.extend(addresses);
                    }
                    t.extend(immediate);
                    t
                },
            );
        let damage = prop_oneof![
            4 => Just(vec![]),
            3 => vec((0u8..6, any::<prop::sample::Index>(), odd_token(), any::<u8>()), 1..3),
        ];
        let separator =
            prop::sample::select(vec!["\t", "  ", "\x0b", "\x0c", "\r", "\u{a0}", "\u{3000}"]);
        (line, damage, separator).prop_map(|(mut tokens, damage, separator)| {
            let mut separators = vec![" "; tokens.len()];
            let (mut lead, mut trail) = ("", "");
            let mut byte = None;
            for (kind, at, odd, b) in damage {
                let i = at.index(tokens.len());
                match kind {
                    0 => tokens[i] = odd,
                    1 => {
                        tokens.remove(i);
                    }
                    2 => tokens.insert(i, odd),
                    3 => {
                        let j = at.index(separators.len());
                        separators[j] = separator;
                    }
                    4 => (lead, trail) = (separator, separator),
                    _ => byte = Some((at, b)),
                }
            }
            let mut text = lead.to_string();
            for (i, t) in tokens.iter().enumerate() {
                if i > 0 {
                    text.push_str(separators[i % separators.len()]);
                }
                text.push_str(t);
            }
            text.push_str(trail);
            let mut bytes = text.into_bytes();
            if let Some((at, b)) = byte.filter(|_| !bytes.is_empty()) {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            bytes
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 4096,
            rng_seed: proptest::test_runner::RngSeed::Fixed(5),
            ..Default::default()
        })]

        /// Whatever the byte parser accepts, the general parser accepts with the same result;
        /// what the general parser rejects (or cannot read as text), the byte parser declines.
        #[test]
        fn the_byte_parser_accepts_only_what_the_general_parser_accepts_alike(
            line in inst_line_strategy(),
            lineinfo in proptest::prelude::any::<bool>(),
        ) {
            if let Some(fast) = plain(&line, lineinfo) {
                proptest::prop_assert_eq!(general(&line, lineinfo), Some(Ok(fast)));
            }
        }

        /// A `warp =` or `insts =` line read from its bytes is what the text path reads.
        #[test]
        fn counts_read_from_bytes_are_counts_read_from_text(
            line in "(warp|insts|warps|inst)( |\t)?=?( |  )?[0-9+ -]{0,11}[ \r]?\n?",
        ) {
            if let Some(count) = plain_count(line.as_bytes()) {
                let text = std::str::from_utf8(line.as_bytes()).unwrap();
                proptest::prop_assert_eq!(text_count(text.trim()), Some(Ok(count)));
            }
        }

        /// The scan's byte parser, which checks addresses without keeping them, takes a line
        /// exactly when the byte parser in full does, with the same static part.
        #[test]
        fn the_scan_takes_what_the_byte_parser_takes(
            line in inst_line_strategy(),
            lineinfo in proptest::prelude::any::<bool>(),
        ) {
            let full = plain(&line, lineinfo);
            let mut out = line_with_addresses();
            let scanned = (|| {
                let mut rest = plain_head(&line, lineinfo, &mut out)?;
                let (_, layout) = plain_static::<true>(&mut rest, &mut out)?;
                plain_tail::<false>(rest, layout, &mut out)
            })()
            .is_some();
            let statics = |l: &InstLine| {
                (l.pc, l.mask, l.dsts.clone(), l.opcode.clone(), l.srcs.clone(), l.mem_width, l.has_addrs)
            };
            proptest::prop_assert_eq!(scanned.then(|| statics(&out)), full.as_ref().map(statics));
        }

        /// The reader's byte parser, with no spelling, the line's own or another one the byte
        /// parser took, reads PC, mask and addresses as the byte parser in full does, and
        /// declines what it declines (and so whatever the general parser rejects).
        #[test]
        fn the_reader_reads_addresses_as_the_byte_parser_reads_them(
            line in inst_line_strategy(),
            lineinfo in proptest::prelude::any::<bool>(),
        ) {
            let full = plain(&line, lineinfo);
            let own = full.as_ref().and_then(|_| {
                let mut out = InstLine::default();
                let mut rest = plain_head(&line, lineinfo, &mut out)?;
                let (bytes, layout) = plain_static::<true>(&mut rest, &mut out)?;
                Some((Box::from(bytes), layout))
            });
            let other: Spelling = (Box::from(&b"1 R4 LDG.E.SYS 1 R4"[..]), Layout::of(b"LDG"));
            for spelling in [None, own.as_ref(), Some(&other)] {
                let mut out = line_with_addresses();
                let read = parse_plain_addresses(&line, lineinfo, &mut out, |_| spelling).is_some();
                let addresses = |l: &InstLine| (l.pc, l.mask, l.mem_width, l.has_addrs, l.addrs.clone(), l.stride);
                proptest::prop_assert_eq!(
                    read.then(|| addresses(&out)),
                    full.as_ref().map(addresses),
                    "{:?}", spelling
                );
            }
        }
    }

    /// Two blocks of three warps (32, 32 and 16 threads) whose lines repeat lines of the warps
    /// before them, after other lines and in other orders, with line feeds or CRLF and no line
    /// break at the end: the reader's streams (blocks in order, then again) and the scan's
    /// counts are those of reading every line with the general parser (memory lines the same
    /// up to their addresses, with other addresses or a stride only the general parser
    /// reads). A line taken again where its mask names lanes the warp does not have, and lines
    /// the same up to bad addresses or a longer address mode, are the errors they are when read.
    #[test]
    fn lines_taken_again_are_read_as_when_first_read() {
        let dir = std::env::temp_dir().join(format!("ws-memo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = "0000 ffffffff 1 R1 MOV 0 0";
        let b = "0010 ffffffff 1 R2 LDG.E 1 R1 4 1 0x1000 4";
        let c = "0020 ffffffff 0 EXIT 0 0";
        let a16 = "0000 0000ffff 1 R1 MOV 0 0";
        let b16 = "0010 0000ffff 1 R2 LDG.E 1 R1 4 1 0x2000 4";
        let c16 = "0020 0000ffff 0 EXIT 0 0";
        let b_elsewhere = "0010 ffffffff 1 R2 LDG.E 1 R1 4 1 0x1800 +4";
        let good: [[&[&str]; 3]; 2] = [
            [&[a, b, c], &[a, c], &[a16, b16, c16]],
            [&[a, b, c], &[a, b_elsewhere, c], &[a16, c16]],
        ];
        let full_mask_line = [a, c16];
        let bad_address = [a, "0010 ffffffff 1 R2 LDG.E 1 R1 4 1 0x18g0 4", c];
        let longer_mode = [a, "0010 ffffffff 1 R2 LDG.E 1 R1 4 10 0x1800 4", c];
        let bad = [
            (
                (2, &full_mask_line[..]),
                "bad.traceg:36: mask ffffffff names lanes beyond warp 2's 16 thread(s) (valid lanes 0000ffff)",
            ),
            (
                (1, &bad_address[..]),
                "bad.traceg:32: bad number `0x18g0` for the base address (expected hexadecimal)",
            ),
            (
                (1, &longer_mode[..]),
                "bad.traceg:32: unknown address mode 10 (0: list, 1: base+stride, 2: base+deltas)",
            ),
        ];
        let write = |name: &str, blocks: &[[&[&str]; 3]; 2], eol: &str| {
            let mut text = String::from(
                "-kernel name = k\n-grid dim = (2,1,1)\n-block dim = (80,1,1)\n-binary version = 70\n",
            );
            for (block, warps) in blocks.iter().enumerate() {
                text += &format!("#BEGIN_TB\nthread block = {block},0,0\n");
                for (warp, lines) in warps.iter().enumerate() {
                    text += &format!("warp = {warp}\ninsts = {}\n", lines.len());
                    for l in lines.iter() {
                        text += l;
                        text += "\n";
                    }
                }
                text += "#END_TB\n";
            }
            let path = dir.join(name);
            std::fs::write(&path, text.trim_end().replace('\n', eol)).unwrap();
            path
        };
        for eol in ["\n", "\r\n"] {
            let trace = scan(&write("good.traceg", &good, eol)).unwrap();
            let mut want = Vec::new();
            let (mut warp_instructions, mut thread_instructions) = (0, 0);
            for warps in &good {
                let mut streams = StreamBuilder::new(warps.len() as u32, 0, 0);
                for (w, lines) in warps.iter().enumerate() {
                    streams.begin_warp(w as u32);
                    for l in lines.iter() {
                        let inst = line(l).unwrap();
                        let pc = trace.index_of(inst.pc).unwrap();
                        let addrs = inst.has_addrs.then_some(&inst.addrs[..]);
                        streams.push(pc, inst.mask, addrs);
                        warp_instructions += 1;
                        thread_instructions += inst.mask.count_ones() as u64;
                    }
                }
                want.push(streams.finish());
            }
            assert_eq!(
                (trace.warp_instructions, trace.thread_instructions),
                (warp_instructions, thread_instructions)
            );
            let counts: Vec<u64> = trace.statics.iter().map(|s| s.count).collect();
            assert_eq!(counts, [6, 4, 6]);
            let mut reader = BlockReader::open(&trace).unwrap();
            for block in [0, 1, 0, 1, 1] {
                assert_eq!(
                    reader.read(&trace, block).unwrap(),
                    want[block as usize],
                    "{block}"
                );
            }
            for ((warp, lines), want) in bad {
                let mut blocks = good;
                blocks[1][warp] = lines;
                let e = scan(&write("bad.traceg", &blocks, eol))
                    .unwrap_err()
                    .to_string();
                assert!(e.ends_with(want), "{e}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A scan of one block of one warp with these instruction lines (after 8 lines of header
    /// and block), each `{}` in a line taking the next PC.
    fn scan_lines(name: &str, insts: &[&str]) -> Result<KernelTrace, ReplayError> {
        let dir = std::env::temp_dir().join(format!("ws-spelled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = format!(
            "-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-binary version = 70\n#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = {}\n",
            insts.len()
        );
        for l in insts {
            text.push_str(l);
            text.push('\n');
        }
        text.push_str("#END_TB\n");
        let path = dir.join(format!("{name}.traceg"));
        std::fs::write(&path, text).unwrap();
        let scan = scan(&path);
        let _ = std::fs::remove_dir_all(&dir);
        scan
    }

    #[test]
    fn a_known_pc_spelled_as_before_is_taken_and_one_spelled_otherwise_is_compared() {
        let first = "0010 ffffffff 1 R1 IADD 2 R2 R3 0";
        // Same bytes; other spacing and spellings of the same registers; another mask.
        let alike = [
            first,
            "0010  ffffffff 1 R1 IADD 2 R2 R3 0",
            "0010 ffffffff 1  R1 IADD 2 R2 R3 0",
            "0010 ffffffff 1 R1\tIADD 2 R2 R3 0 ",
            "0010 ffffffff 1 R1 IADD 2 R02 R3 0",
            " 0010 0000000f 1 R1 IADD 2 R2 R3 0",
            "0010 ffffffff 1 R1 IADD 2 R2 R3 0 0x10",
        ];
        let mut lines = vec![first];
        lines.extend(alike);
        let t = scan_lines("alike", &lines).unwrap();
        assert_eq!(
            (t.statics.len(), t.statics[0].count),
            (1, lines.len() as u64)
        );
        assert_eq!(t.statics[0].text(), "IADD R1, R2, R3");
        assert_eq!(
            t.statics[0].spelling.as_ref().map(|(b, _)| &b[..]),
            Some(&b"1 R1 IADD 2 R2 R3"[..])
        );
        // A first line the byte parser declines leaves the spelling to the next it takes.
        let t = scan_lines(
            "odd-first",
            &["0010 ffffffff 1 R0001 IADD 2 R2 R3 0", first, first],
        )
        .unwrap();
        assert_eq!(t.statics[0].count, 3);
        assert_eq!(
            t.statics[0].spelling.as_ref().map(|(b, _)| &b[..]),
            Some(&b"1 R1 IADD 2 R2 R3"[..])
        );
        // Lines that differ from the first, or extend its spelling, or spell it alike but
        // break a later field: the errors of the general parser and the comparison.
        for (line, want) in [
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R4 0",
                "PC 0010 is `IADD` here but was `IADD` at line 9",
            ),
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R33 0",
                "PC 0010 is `IADD` here but was `IADD` at line 9",
            ),
            (
                "0010 ffffffff 1 R1 IADD 3 R2 R3 R4 0",
                "PC 0010 is `IADD` here but was `IADD` at line 9",
            ),
            (
                "0010 ffffffff 1 R1 IADD.X 2 R2 R3 0",
                "PC 0010 is `IADD.X` here but was `IADD` at line 9",
            ),
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R3",
                "wrong field count: the line ends before its memory width",
            ),
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R3 0 1 2",
                "wrong field count: 1 field(s) after the end",
            ),
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R3 4 1 0x10",
                "wrong field count: the line ends before its address stride",
            ),
            (
                "0010 ffffffff 1 R1 IADD 2 R2 R3R 0",
                "`R3R` is not a register number",
            ),
            (
                "0010 fffffffff 1 R1 IADD 2 R2 R3 0",
                "mask `fffffffff` is wider than 32 lanes (at most 8 hex digits)",
            ),
        ] {
            let e = scan_lines("differs", &[first, first, line, first])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("differs.traceg:11: {want}")),
                "{line}: {e}"
            );
        }
    }
}
