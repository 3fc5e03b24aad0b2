//! Replay of Accel-Sim SASS traces (recorded on real NVIDIA GPUs by the NVBit tracer) on
//! warpscope's own timing model, into a standard warpscope trace.
//!
//! The front end: [`open`] reads a trace directory, a `kernelslist.g` or a single
//! `kernel-N.traceg`; each kernel file is scanned once ([`traceg::scan`]: validated, its static
//! instructions tabled, its thread blocks indexed by byte offset). Each kernel becomes a
//! `KernelLaunch` whose stand-in `Program` has one instruction per distinct trace PC (in PC
//! order) with the pipe of its opcode ([`opcodes`]) and its register operands, so the
//! scoreboards track the real dependencies. [`TraceSource`] implements the simulator's
//! [`InstructionSource`]: when the dispatcher grants a block it hands each warp its recorded
//! PCs, masks and addresses, read from the file by a thread that parses the launch's blocks
//! ahead in grant order. The trace header's listing shows
//! the real SASS PC and text (`/*0098*/ LDG.E.CG R4, [R4]`).
//!
//! Simplifications: timing-only (no register values, no memory contents; copies in the kernel
//! list move nothing); the first destination register of an instruction is tracked (as
//! Accel-Sim does), uniform registers are not, and at most six distinct sources are; warps must
//! have 32 lanes. The stand-in program is a timing vehicle: its operand lists follow the trace,
//! not the native signatures, so its native disassembly (used in deadlock and watchdog
//! messages) need not re-assemble; the trace header's listing carries the SASS text.

pub mod kernelslist;
pub mod opcodes;
pub mod traceg;

use crate::isa::{Instruction, Opcode, Operand, Pipe, Pred, Program, Reg};
use crate::sim::config::GpuConfig;
use crate::sim::exec::AccessKind;
use crate::sim::gpu::{prepare, SimOptions};
use crate::sim::memory::GlobalMemory;
use crate::sim::scoreboard::MAX_SOURCES;
use crate::sim::stream::{InstructionSource, ReplayFlow, ReplayOp, WarpStream};
use crate::sim::{KernelLaunch, LaunchError};
use crate::trace::recorder::{record_with_source, RecordOutcome};
use crate::trace::{TraceError, TraceFormat, TraceHeader};
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use traceg::{BlockReader, KernelHeader, KernelTrace, RegKind, StaticInst};

/// Why a trace could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{path}: {context}: {source}")]
    Io {
        path: String,
        context: &'static str,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: String,
        line: u64,
        message: String,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Trace(#[from] TraceError),
}

impl ReplayError {
    pub(crate) fn parse(path: &Path, line: u64, message: impl Into<String>) -> ReplayError {
        // A message quotes the bad text: control bytes from a damaged file are shown
        // escaped (`\u{0}`), not written to the terminal.
        let message: String = message.into();
        let message = match message.contains(char::is_control) {
            false => message,
            true => message
                .chars()
                .map(|c| match c.is_control() {
                    true => c.escape_default().to_string(),
                    false => c.to_string(),
                })
                .collect(),
        };
        ReplayError::Parse {
            path: path.display().to_string(),
            line,
            message,
        }
    }

    pub(crate) fn io(path: &Path, context: &'static str, source: std::io::Error) -> ReplayError {
        ReplayError::Io {
            path: path.display().to_string(),
            context,
            source,
        }
    }
}

/// A traced application: its kernels (scanned) and the copies of its kernel list.
#[derive(Debug, Clone)]
pub struct ReplayInput {
    /// The kernel list read, if any (a single `.traceg` has none).
    pub kernelslist: Option<PathBuf>,
    /// The kernels selected, in list order.
    pub kernels: Vec<KernelTrace>,
    /// Kernel launches in the list (or 1 for a single `.traceg`), selected or not.
    pub listed_kernels: usize,
    /// Every file the application's trace consists of: the kernel list and each kernel trace it
    /// names, selected or not (an output must never replace one of them).
    pub files: Vec<PathBuf>,
    /// Host-to-device copies: count and bytes (listed, not performed).
    pub memcpys: u64,
    pub memcpy_bytes: u64,
}

/// Which kernels of a traced application to replay, picked as Nsight Compute picks the
/// launches it profiles: those whose id and name match, less the first `skip` of them, at
/// most `count` of the rest. The default keeps every kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelFilter {
    /// Kernel ids to keep (a header's `-kernel id`, the N of `kernel-N.traceg`); empty: any.
    pub ids: Vec<RangeInclusive<u64>>,
    /// Keep only the kernels whose name contains this: as the header spells it (mangled) or
    /// demangled ([`crate::kernel_name::contains`]).
    pub name: Option<String>,
    /// Of the kernels that match, leave out this many first ones.
    pub skip: u64,
    /// Of the rest, keep at most this many.
    pub count: Option<u64>,
}

impl KernelFilter {
    /// Parses a list of kernel ids and inclusive ranges: `3`, `1,4`, `2-5,9`.
    pub fn parse_ids(text: &str) -> Result<Vec<RangeInclusive<u64>>, String> {
        let number = |t: &str| {
            t.trim().parse::<u64>().map_err(|_| {
                format!(
                    "`{}` is not a kernel id (expected a whole number)",
                    t.trim()
                )
            })
        };
        text.split(',')
            .map(|item| match item.split_once('-') {
                Some((from, to)) => {
                    let (from, to) = (number(from)?, number(to)?);
                    if from > to {
                        return Err(format!("`{}`: the range runs backwards", item.trim()));
                    }
                    Ok(from..=to)
                }
                None => number(item).map(|id| id..=id),
            })
            .collect()
    }

    fn is_all(&self) -> bool {
        *self == KernelFilter::default()
    }

    /// Whether a kernel with this header passes the id and name tests.
    fn matches(&self, header: &KernelHeader) -> bool {
        (self.ids.is_empty() || self.ids.iter().any(|r| r.contains(&header.kernel_id)))
            && self
                .name
                .as_ref()
                .map_or(true, |n| crate::kernel_name::contains(&header.name, n))
    }
}

impl std::fmt::Display for KernelFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.ids.is_empty() {
            let ids: Vec<String> = self
                .ids
                .iter()
                .map(|r| match r.start() == r.end() {
                    true => r.start().to_string(),
                    false => format!("{}-{}", r.start(), r.end()),
                })
                .collect();
            parts.push(format!("ids {}", ids.join(",")));
        }
        if let Some(name) = &self.name {
            parts.push(format!("name containing `{name}`"));
        }
        if self.skip > 0 {
            parts.push(format!("skip {}", self.skip));
        }
        if let Some(count) = self.count {
            parts.push(format!("count {count}"));
        }
        match parts.is_empty() {
            true => write!(f, "every kernel"),
            false => write!(f, "{}", parts.join("; ")),
        }
    }
}

/// Whether `path` names an Accel-Sim trace — a directory, a kernel list (`*.g`) or a
/// `.traceg` (compressed ones included, which [`open`] then explains it does not read) —
/// rather than a launch or kernel file.
pub fn is_trace_path(path: &Path) -> bool {
    path.is_dir() || is_kernel_file(path) || path.extension().is_some_and(|e| e == "g")
}

/// Whether `path` names one kernel's trace (`.traceg`, or a compressed one that
/// [`traceg::scan`] refuses with advice) rather than a kernel list.
fn is_kernel_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| ["traceg", "xz", "gz", "zst"].iter().any(|t| e == *t))
}

/// For a directory without `kernelslist.g`: " did you mean ...?" naming its immediate
/// subdirectories that hold one (the parent of a few traces is an easy thing to give), in name
/// order, at most three and how many more; else nothing.
fn traces_within(dir: &Path) -> String {
    const SHOWN: usize = 3;
    let mut within: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| dir.join(e.file_name()))
        .filter(|p| p.join("kernelslist.g").is_file())
        .collect();
    within.sort();
    let shown: Vec<String> = within
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    match shown.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [first @ .., last] if within.len() <= SHOWN => {
            format!("; did you mean {} or {last}?", first.join(", "))
        }
        _ => format!(
            "; did you mean one of {} (or {} more)?",
            shown.join(", "),
            within.len() - SHOWN
        ),
    }
}

/// Opens `path`: a directory holding `kernelslist.g`, a kernel list, or one `.traceg` file.
pub fn open(path: &Path) -> Result<ReplayInput, ReplayError> {
    open_filtered(path, &KernelFilter::default())
}

/// [`open`], keeping only the kernels `filter` selects. The others are not scanned (only
/// their headers are read, when the filter needs them): one kernel of a large application
/// costs the scan of that kernel.
pub fn open_filtered(path: &Path, filter: &KernelFilter) -> Result<ReplayInput, ReplayError> {
    let list = if path.is_dir() {
        let list = path.join("kernelslist.g");
        if !list.is_file() {
            return Err(ReplayError::Unsupported(format!(
                "{}: a trace directory must hold kernelslist.g{}",
                path.display(),
                traces_within(path)
            )));
        }
        list
    } else {
        path.to_path_buf()
    };
    let mut input = ReplayInput {
        kernelslist: None,
        kernels: Vec::new(),
        listed_kernels: 0,
        files: Vec::new(),
        memcpys: 0,
        memcpy_bytes: 0,
    };
    let mut kernel_files = Vec::new();
    if is_kernel_file(&list) {
        kernel_files.push(list);
    } else {
        let text =
            std::fs::read_to_string(&list).map_err(|e| ReplayError::io(&list, "reading", e))?;
        for command in kernelslist::parse(&list, &text)? {
            match command {
                kernelslist::Command::Memcpy {
                    to_device, bytes, ..
                } => {
                    if to_device {
                        input.memcpys += 1;
                        input.memcpy_bytes += bytes;
                    }
                }
                kernelslist::Command::Kernel { path: k, line } => {
                    if !k.is_file() {
                        return Err(ReplayError::parse(
                            &list,
                            line,
                            format!("kernel trace {} does not exist", k.display()),
                        ));
                    }
                    kernel_files.push(k);
                }
            }
        }
        if kernel_files.is_empty() {
            return Err(ReplayError::Unsupported(format!(
                "{}: the kernel list names no kernel trace",
                list.display()
            )));
        }
        input.kernelslist = Some(list);
    }
    input.listed_kernels = kernel_files.len();
    input.files = input
        .kernelslist
        .iter()
        .chain(&kernel_files)
        .cloned()
        .collect();
    if filter.is_all() {
        for k in &kernel_files {
            input.kernels.push(traceg::scan(k)?);
        }
        return Ok(input);
    }
    let mut matched = 0u64;
    let mut seen = Vec::new();
    for k in &kernel_files {
        let header = traceg::header(k)?;
        if filter.matches(&header) {
            matched += 1;
            let wanted =
                matched > filter.skip && filter.count.map_or(true, |c| matched - filter.skip <= c);
            if wanted {
                input.kernels.push(traceg::scan(k)?);
            }
        }
        seen.push(format!(
            "{} `{}`",
            header.kernel_id,
            crate::kernel_name::function(&header.name)
        ));
    }
    if input.kernels.is_empty() {
        const SHOWN: usize = 20;
        let more = match seen.len() > SHOWN {
            true => format!(" and {} more", seen.len() - SHOWN),
            false => String::new(),
        };
        seen.truncate(SHOWN);
        let skipped = match matched {
            0 => String::new(),
            _ => ", all skipped".to_string(),
        };
        return Err(ReplayError::Unsupported(format!(
            "{}: the selection ({filter}) leaves no kernel: {matched} of {} match{skipped}; \
             the kernels are (id `name`): {}{more}",
            path.display(),
            kernel_files.len(),
            seen.join(", ")
        )));
    }
    Ok(input)
}

/// The stand-in native instruction for a static trace instruction: an opcode of the right
/// pipe, memory kind and control flow, with the trace's registers as operands.
fn stand_in(s: &StaticInst) -> Instruction {
    let dst = s.dsts.iter().find_map(|r| match r.kind {
        RegKind::Reg => Some(Operand::Reg(Reg(r.num as u8))),
        RegKind::Pred => Some(Operand::Pred {
            pred: Pred(r.num as u8),
            negated: false,
        }),
        _ => None,
    });
    let mut srcs: Vec<Operand> = Vec::new();
    for r in &s.srcs {
        let op = match r.kind {
            RegKind::Reg if r.num != 255 => Operand::Reg(Reg(r.num as u8)),
            RegKind::Pred if r.num != 7 => Operand::Pred {
                pred: Pred(r.num as u8),
                negated: false,
            },
            _ => continue,
        };
        if !srcs.contains(&op) && srcs.len() < MAX_SOURCES {
            srcs.push(op);
        }
    }
    let info = s.info;
    let op = match (info.flow, info.mem, info.pipe) {
        (ReplayFlow::Exit, _, _) => Opcode::Exit,
        (ReplayFlow::Barrier, _, _) => Opcode::BarSync,
        (ReplayFlow::Membar, _, _) => Opcode::Membar,
        (ReplayFlow::Branch, _, _) => Opcode::Bra(crate::isa::BranchCond::Always),
        (_, Some((_, AccessKind::Load)), Pipe::Global) => Opcode::Ldg,
        (_, Some((_, AccessKind::Store)), Pipe::Global) => Opcode::Stg,
        (_, Some((_, AccessKind::Atomic)), Pipe::Global) => Opcode::AtomgAdd,
        (_, Some((_, AccessKind::Store)), Pipe::Shared) => Opcode::Sts,
        (_, Some(_), Pipe::Shared) => Opcode::Lds,
        (_, _, Pipe::Global) if dst.is_some() => Opcode::Ldg,
        (_, _, Pipe::Global) => Opcode::Stg,
        (_, _, Pipe::Shared) if dst.is_some() => Opcode::Lds,
        (_, _, Pipe::Shared) => Opcode::Sts,
        (_, _, Pipe::Mufu) => Opcode::Mufu(crate::isa::MufuFn::Rcp),
        (_, _, Pipe::Fma) => Opcode::Ffma,
        (_, _, Pipe::Branch) => Opcode::Bra(crate::isa::BranchCond::Always),
        (_, _, Pipe::Alu) => Opcode::Iadd,
    };
    let mut operands = Vec::with_capacity(srcs.len() + 1);
    if op.writes_first_operand() {
        operands.push(dst.unwrap_or(Operand::Reg(Reg::RZ)));
    }
    operands.extend(srcs);
    Instruction::new(op, operands)
}

impl KernelTrace {
    /// The stand-in program: one instruction per static PC, in PC order.
    pub fn program(&self) -> Program {
        let instructions: Vec<Instruction> = self.statics.iter().map(stand_in).collect();
        let regs = (self.header.nregs as u16).max(Program::regs_used(&instructions));
        Program {
            name: self.header.name.clone(),
            instructions,
            labels: Vec::new(),
            regs,
            shared_bytes: self.header.shmem,
            params: Vec::new(),
            addressing: Default::default(),
            // (The CUDA lines are the header's `source_lines`; there is no assembly text.)
            lines: Vec::new(),
        }
    }

    /// PC → text, with the real SASS PC: `/*0098*/ LDG.E.CG R4, [R4]`.
    pub fn listing(&self) -> Vec<String> {
        self.statics
            .iter()
            .map(|s| format!("/*{:04x}*/ {}", s.pc, s.text()))
            .collect()
    }

    /// PC → CUDA source line, for a trace recorded with lineinfo (empty without).
    pub fn source_lines(&self) -> Vec<u32> {
        match self.header.lineinfo {
            true => self.statics.iter().map(|s| s.source_line).collect(),
            false => Vec::new(),
        }
    }

    /// Per-PC control flow and memory access, for the simulator's stream hook.
    pub fn replay_ops(&self) -> Arc<[ReplayOp]> {
        self.statics.iter().map(|s| s.info.replay_op()).collect()
    }
}

impl ReplayInput {
    /// An error if writing `output` would replace one of the trace's own [`files`]
    /// (`ReplayInput::files`): `-o kernel-1.traceg` would destroy the recording it replays.
    pub fn check_output(&self, output: &Path) -> Result<(), ReplayError> {
        // An output that does not exist yet cannot be one of them.
        let Ok(out) = output.canonicalize() else {
            return Ok(());
        };
        match self
            .files
            .iter()
            .find(|f| f.canonicalize().is_ok_and(|f| f == out))
        {
            Some(f) => Err(ReplayError::Unsupported(format!(
                "the output would replace {}, a file of the trace being replayed; write it elsewhere",
                f.display()
            ))),
            None => Ok(()),
        }
    }

    /// The GPU preset a replay runs on when none is asked for, by the newest architecture among
    /// the kernels: `pascal` before sm_70 (Maxwell's nearest too), `hopper` from sm_90, else
    /// `volta` (the presets differ in latencies, pipes and caches; all run blocks of up to 1024
    /// threads, as every traced GPU does).
    pub fn default_gpu(&self) -> &'static str {
        match self.kernels.iter().map(|k| k.header.binary_version).max() {
            Some(v) if v >= 90 => "hopper",
            Some(v) if v < 70 => "pascal",
            _ => "volta",
        }
    }

    /// One launch per kernel, in list order; CUDA stream ids become dense stream numbers in
    /// order of first use.
    pub fn launches(&self) -> Vec<KernelLaunch> {
        let mut streams: HashMap<u64, u32> = HashMap::new();
        self.kernels
            .iter()
            .map(|k| {
                let next = streams.len() as u32;
                let stream = *streams.entry(k.header.stream_id).or_insert(next);
                KernelLaunch {
                    program: Arc::new(k.program()),
                    grid: k.header.grid,
                    block: k.header.block,
                    params: Vec::new(),
                    stream,
                }
            })
            .collect()
    }

    pub fn warp_instructions(&self) -> u64 {
        self.kernels.iter().map(|k| k.warp_instructions).sum()
    }

    pub fn thread_instructions(&self) -> u64 {
        self.kernels.iter().map(|k| k.thread_instructions).sum()
    }

    /// Opcodes the table does not know (over all kernels), with dynamic counts.
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        let mut map: HashMap<String, u64> = HashMap::new();
        for k in &self.kernels {
            for (op, n) in k.unknown_opcodes() {
                *map.entry(op).or_default() += n;
            }
        }
        let mut v: Vec<(String, u64)> = map.into_iter().collect();
        v.sort();
        v
    }

    /// The simulator's view of the files: reads thread blocks as they are granted.
    pub fn source(&self) -> Result<TraceSource<'_>, ReplayError> {
        let readers = self
            .kernels
            .iter()
            .map(BlockReader::open)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TraceSource {
            input: self,
            ops: self.kernels.iter().map(KernelTrace::replay_ops).collect(),
            readers,
            ahead: self.kernels.iter().map(|_| ReadAhead::NotStarted).collect(),
            error: None,
            blocks_read: 0,
        })
    }
}

/// [`InstructionSource`] over scanned trace files. A read error (the file changed or vanished
/// since it was scanned) is kept in `TraceSource::error` and the block replays empty.
pub struct TraceSource<'a> {
    input: &'a ReplayInput,
    ops: Vec<Arc<[ReplayOp]>>,
    readers: Vec<BlockReader>,
    /// Per launch: its blocks read ahead in order on a thread of their own.
    ahead: Vec<ReadAhead>,
    error: Option<ReplayError>,
    pub blocks_read: u64,
}

/// Parsed blocks travel from the read-ahead thread in batches of up to this many warp
/// instructions (at least one block each): on one core, each handover costs a switch between
/// threads, which would otherwise come once per block.
const READ_AHEAD_BATCH_INSTS: usize = 16 * 1024;
/// How many batches a launch's read-ahead thread may hold before it waits.
const READ_AHEAD_BATCHES: usize = 2;

type BlockResult = Result<Vec<WarpStream>, ReplayError>;

/// A launch's blocks parsed ahead of the simulation. The dispatcher grants a launch's blocks in
/// index order, so a thread can read them from the file in that order while the simulation
/// runs; the results (blocks and errors) are those of reading each when granted.
enum ReadAhead {
    NotStarted,
    Running {
        /// The block the next received result is for.
        next: u64,
        /// The rest of the batch last received, in reverse order (the next one last).
        batch: Vec<BlockResult>,
        batches: Receiver<Vec<BlockResult>>,
        worker: JoinHandle<()>,
    },
    /// Blocks asked for out of order (or the worker is gone): read each when granted.
    Off,
}

impl ReadAhead {
    fn start(kernel: &KernelTrace) -> ReadAhead {
        let kernel = kernel.clone();
        let (to, batches) = sync_channel(READ_AHEAD_BATCHES);
        let worker = std::thread::Builder::new()
            .name("replay-read".into())
            .spawn(move || {
                let mut reader = match BlockReader::open(&kernel) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = to.send(vec![Err(e)]);
                        return;
                    }
                };
                let mut batch = Vec::new();
                let mut insts = 0;
                for block in 0..kernel.blocks() {
                    let result = reader.read(&kernel, block);
                    let failed = result.is_err();
                    if let Ok(warps) = &result {
                        insts += warps.iter().map(WarpStream::len).sum::<usize>();
                    }
                    batch.push(result);
                    if insts >= READ_AHEAD_BATCH_INSTS || failed || block + 1 == kernel.blocks() {
                        // Reversed, so that the receiver pops the next block off the end.
                        batch.reverse();
                        insts = 0;
                        // A send fails once the simulation no longer wants blocks.
                        if to.send(std::mem::take(&mut batch)).is_err() || failed {
                            return;
                        }
                    }
                }
            });
        match worker {
            Ok(worker) => ReadAhead::Running {
                next: 0,
                batch: Vec::new(),
                batches,
                worker,
            },
            Err(_) => ReadAhead::Off,
        }
    }

    /// Block `block` if it is the next one read ahead; `None` to read it directly.
    fn take(&mut self, kernel: &KernelTrace, block: u64) -> Option<BlockResult> {
        if matches!(self, ReadAhead::NotStarted) {
            *self = if block == 0 && kernel.blocks() > 1 && crate::threads::helpers_pay() {
                ReadAhead::start(kernel)
            } else {
                ReadAhead::Off
            };
        }
        if let ReadAhead::Running {
            next,
            batch,
            batches,
            ..
        } = self
        {
            if *next == block {
                if batch.is_empty() {
                    *batch = batches.recv().unwrap_or_default();
                }
                if let Some(result) = batch.pop() {
                    *next += 1;
                    return Some(result);
                }
            }
            self.stop();
        }
        None
    }

    /// Stops the worker (it ends at its next send) and reads directly from now on.
    fn stop(&mut self) {
        if let ReadAhead::Running {
            batches, worker, ..
        } = std::mem::replace(self, ReadAhead::Off)
        {
            drop(batches);
            let _ = worker.join();
        }
    }
}

impl Drop for TraceSource<'_> {
    fn drop(&mut self) {
        for ahead in &mut self.ahead {
            ahead.stop();
        }
    }
}

impl TraceSource<'_> {
    /// The first read error, if any.
    pub fn take_error(&mut self) -> Option<ReplayError> {
        self.error.take()
    }
}

impl InstructionSource for TraceSource<'_> {
    fn replay_ops(&self, launch: usize) -> Option<Arc<[ReplayOp]>> {
        self.ops.get(launch).cloned()
    }

    fn listing(&self, launch: usize) -> Option<Arc<[String]>> {
        self.input.kernels.get(launch).map(|k| k.listing().into())
    }

    fn block_streams(&mut self, launch: usize, block: u64, warps: u32) -> Vec<WarpStream> {
        let empty = || vec![WarpStream::new(); warps as usize];
        if self.error.is_some() {
            return empty();
        }
        let (Some(kernel), Some(reader), Some(ahead)) = (
            self.input.kernels.get(launch),
            self.readers.get_mut(launch),
            self.ahead.get_mut(launch),
        ) else {
            return empty();
        };
        let result = ahead
            .take(kernel, block)
            .unwrap_or_else(|| reader.read(kernel, block));
        match result {
            Ok(streams) => {
                self.blocks_read += 1;
                streams
            }
            Err(e) => {
                self.error = Some(e);
                empty()
            }
        }
    }
}

/// What [`replay`] produced.
#[derive(Debug)]
pub struct ReplayOutcome {
    pub record: RecordOutcome,
    /// Thread blocks read back from the trace files during the run.
    pub blocks_read: u64,
}

/// Replays `input` on `config` and records a warpscope trace to `path` (temp file, rename);
/// `path` may not be one of the input's files.
pub fn replay(
    config: &GpuConfig,
    input: &ReplayInput,
    options: SimOptions,
    path: &Path,
    format: TraceFormat,
    verbosity: u8,
) -> Result<ReplayOutcome, ReplayError> {
    input.check_output(path)?;
    if config.warp_size != 32 {
        return Err(ReplayError::Unsupported(format!(
            "GPU `{}` has {}-lane warps; Accel-Sim traces are recorded with 32-lane warps",
            config.name, config.warp_size
        )));
    }
    let launches = input.launches();
    let prepared = prepare(config, &launches)?;
    let mut header = TraceHeader::new(config, &prepared, 0, verbosity);
    for (h, k) in header.launches.iter_mut().zip(&input.kernels) {
        h.listing = k.listing();
        h.source_lines = k.source_lines();
    }
    let mut source = input.source()?;
    let mut memory = GlobalMemory::default();
    let record = record_with_source(
        config,
        &launches,
        &mut memory,
        options,
        path,
        format,
        &header,
        &mut source,
    )?;
    if let Some(e) = source.take_error() {
        // The output would describe a different run than the files; do not leave it behind.
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(ReplayOutcome {
        record,
        blocks_read: source.blocks_read,
    })
}
