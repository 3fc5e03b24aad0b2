//! The binary trace format (see `docs/trace-format.md`): magic, version, JSON header, then
//! CRC-framed blocks of compactly encoded events, then a trailer block.

use super::event::Event;
use super::{TraceError, TraceHeader, MAX_LEN};
use crate::isa::Pipe;
use crate::sim::memory::HitLevel;
use crate::sim::observer::{MemEvent, MemKind, MemSpace, WarpInfo, WarpRef, WarpState};
use crate::sim::scoreboard::{DepPath, Hazard, HazardKind, RegRef};
use crate::sim::{Dim3, Fault};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::sync::mpsc;

/// First eight bytes of every binary trace.
pub const MAGIC: [u8; 8] = *b"WSTRACE\0";
/// The newest binary format version; this build reads every version up to it (version 2
/// added state groups and predicted states, version 3 predicted completions — older files
/// never contain them —, version 4 split the streams by kind of event and deflates each alone,
/// version 5 writes a scheduler's state changes of a cycle as runs checked against a replayed
/// issue stage, version 6 writes the change of a pipe's ready warps once, with the warps that
/// join the group; versions 7, 8 and 9 are 4, 5 and 6 with the header under a CRC) and writes
/// [`DEFAULT_VERSION`] or, on request, [`COMPACT_VERSION`] or [`GROUPED_VERSION`].
pub const FORMAT_VERSION: u16 = 9;

/// The version the writer uses by default: version 8 ([`COMPACT_VERSION`]) is 40 % smaller
/// but takes about twice as long to decode, so it is a choice (`--format compact`).
pub const DEFAULT_VERSION: u16 = 7;
/// The version of the compact binary format.
pub const COMPACT_VERSION: u16 = 8;
/// The version that stores pipe groups (see [`crate::trace::groups`]): the default one plus a
/// record for a group's change and a byte naming the group of a warp that joins one.
pub const GROUPED_VERSION: u16 = 9;
/// The first version whose header carries a CRC. Before it a damaged byte of the header (a
/// register count, a kernel name) was read as data and analysed without a word.
pub const HEADER_CRC_VERSION: u16 = 7;

/// The event encoding of format `version`: versions 7–9 encode events as 4–6 do, and differ
/// from them only in the header's CRC. Everything past the header speaks of encodings.
pub fn encoding(version: u16) -> u16 {
    match version {
        DEFAULT_VERSION => 4,
        COMPACT_VERSION => 5,
        GROUPED_VERSION => 6,
        v => v,
    }
}

/// Where the header's JSON starts in a file of format `version`: after the magic, the
/// version, the JSON's length and, from [`HEADER_CRC_VERSION`], the header's CRC.
pub fn json_offset(version: u16) -> u64 {
    match version >= HEADER_CRC_VERSION {
        true => 18,
        false => 14,
    }
}

/// The CRC of a header: of its version and length fields (so that a version flipped to
/// another encoding, or a length that moved the JSON's end, is caught too) and of its JSON.
fn header_crc(fields: &[u8], json: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(fields);
    h.update(json);
    h.finalize()
}

/// The encoding of runs (version 5, written in files of version 8).
const RUNS: u16 = 5;
/// The encoding with pipe groups (version 6, written in files of version 9).
const GROUPS: u16 = 6;

/// Whether `encoding` writes runs (5; 6 is 4 with groups).
fn writes_runs(encoding: u16) -> bool {
    encoding == RUNS
}
/// A block is closed once its encoded events reach this many bytes. Larger blocks deflate a
/// little better (256 KiB: 3 % fewer bytes) but the analyzer's three-thread pipeline then
/// takes longer to fill: on the benchmark trace analysis took twice as long.
pub const BLOCK_TARGET: usize = 64 * 1024;
/// libdeflate compression level of the event blocks of `encoding`. Compression runs on
/// its own thread, and on one core its time adds to the simulation's. The default version is
/// the fast one, so it takes level 1 (a hash-table match finder): 44 % of level 6's
/// instructions for 2.2 % more bytes on a replayed vector add. The compact version is the
/// small one and keeps level 6, which saves it 5.6 % over level 1; level 9 would save another
/// 0.7 % at twice the time (BENCHMARKS.md).
fn deflate_level(encoding: u16) -> i32 {
    match writes_runs(encoding) {
        true => 6,
        false => 1,
    }
}

thread_local! {
    // Each holds its working state (hundreds of KiB for the compressor): one per thread,
    // made once (a compressor, once per level asked for), not one per stream.
    static COMPRESSOR: RefCell<Option<(i32, libdeflater::Compressor)>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<libdeflater::Decompressor> =
        RefCell::new(libdeflater::Decompressor::new());
}

/// `data` as one raw DEFLATE stream (RFC 1951), compressed at `level`.
fn deflate(data: &[u8], level: i32) -> Vec<u8> {
    COMPRESSOR.with_borrow_mut(|kept| {
        if !matches!(kept, Some((l, _)) if *l == level) {
            let lvl = libdeflater::CompressionLvl::new(level).expect("a level libdeflate has");
            *kept = Some((level, libdeflater::Compressor::new(lvl)));
        }
        let (_, c) = kept.as_mut().expect("made above");
        let mut out = vec![0; c.deflate_compress_bound(data.len())];
        let n = c
            .deflate_compress(data, &mut out)
            .expect("the output buffer has the compressor's own bound");
        out.truncate(n);
        out
    })
}

/// Inflates a raw DEFLATE stream that must decode to exactly `out.len()` bytes into `out`;
/// the error says how it does not.
fn inflate_into(deflated: &[u8], out: &mut [u8]) -> Result<(), String> {
    let len = out.len();
    let n = DECOMPRESSOR
        .with_borrow_mut(|d| d.deflate_decompress(deflated, out))
        .map_err(|e| match e {
            libdeflater::DecompressionError::InsufficientSpace => {
                format!("inflates to more than {len} bytes")
            }
            libdeflater::DecompressionError::BadData => "does not inflate".to_string(),
        })?;
    if n != len {
        return Err(format!("inflates to {n} bytes, its header says {len}"));
    }
    Ok(())
}

/// Streams of a version-4 block, in their order in the block.
const STREAMS: usize = 8;
const S_TAGS: usize = 0;
const S_ISSUE_WARPS: usize = 1;
const S_STATE_WARPS: usize = 2;
const S_WARPS: usize = 3;
const S_ISSUE_ARGS: usize = 4;
/// State groups' member and miss masks.
const S_GROUPS: usize = 5;
const S_STATE_ARGS: usize = 6;
const S_ARGS: usize = 7;

/// Block kinds (first payload byte).
const BLOCK_EVENTS: u8 = 0x01;
const BLOCK_TRAILER: u8 = 0xFF;

/// Event codes (low 5 bits of the tag byte).
const T_KERNEL_LAUNCH: u8 = 0;
const T_KERNEL_COMPLETE: u8 = 1;
const T_BLOCK_ASSIGN: u8 = 2;
const T_BLOCK_COMPLETE: u8 = 3;
const T_WARP_LAUNCH: u8 = 4;
const T_WARP_EXIT: u8 = 5;
const T_ISSUE: u8 = 6;
const T_COMPLETE: u8 = 7;
const T_REFILL: u8 = 8;
const T_BARRIER_ARRIVE: u8 = 9;
const T_BARRIER_RELEASE: u8 = 10;
const T_MEMORY: u8 = 11;
const T_HAZARD: u8 = 12;
const T_FAULT: u8 = 13;
/// Version 2: the state changes of several warps of one scheduler in one cycle.
const T_STATE_GROUP: u8 = 14;
/// Version 3: a completion, the one [`Completions`] predicts.
const T_COMPLETE_PREDICTED: u8 = 15;
/// Version 2: a warp_state event whose state is the warp's predicted one.
const T_STATE_PREDICTED: u8 = 31;
/// Version 5: a run, the state changes of one scheduler's warps in one cycle, that differs
/// from the predicted one (code 14 of versions 2–4).
const T_RUN: u8 = 14;
/// Version 5: a run exactly as predicted (code 31 of versions 2–4).
const T_RUN_EXACT: u8 = 31;
/// Version 6: a pipe group's change — the refill code with the same-warp bit, which no event
/// without a warp has.
const T_PIPE_STATE: u8 = T_REFILL | SAME_WARP;
/// `T_STATE + n` is a warp_state event with state number n (0..=14).
const T_STATE: u8 = 16;
const STATES: u8 = 15;

const SAME_WARP: u8 = 0x80;
const DELTA_SHIFT: u8 = 5;
const DELTA_ESCAPE: u8 = 3;

// Issue flag bits.
const F_PIPE: u8 = 0x07;
const F_SLOT: u8 = 0x08;
const F_ACTIVE: u8 = 0x10;
const F_PC: u8 = 0x20;
const F_SELECTED: u8 = 0x40;

/// A state group names at most this many members after its first (so that the group's
/// prediction-miss bits fit in one u64).
const GROUP_SPAN: usize = 63;

// ---------------------------------------------------------------------------------------------
// CRC-32 (IEEE 802.3, the zlib/PNG one).

/// CRC-32 of `data` (the checksum of `b"123456789"` is `0xCBF43926`). `crc32fast` folds 64
/// bytes at a time with carry-less multiplication where the CPU has it; a byte-at-a-time
/// table was 3 % of the analyzer's decode thread (the same values, so the same files).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

// ---------------------------------------------------------------------------------------------
// Primitive encodings.

#[inline]
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// pc relative to a prediction, as a zigzag of the wrapping 32-bit difference.
fn pc_delta(pc: u32, predicted: u32) -> u64 {
    zigzag(pc.wrapping_sub(predicted) as i32 as i64)
}

fn pipe_code(p: Pipe) -> u8 {
    match p {
        Pipe::Alu => 0,
        Pipe::Fma => 1,
        Pipe::Mufu => 2,
        Pipe::Shared => 3,
        Pipe::Global => 4,
        Pipe::Branch => 5,
    }
}

fn path_code(p: DepPath) -> u8 {
    match p {
        DepPath::Fixed => 0,
        DepPath::Short => 1,
        DepPath::Long => 2,
    }
}

fn reg_code(r: RegRef) -> u64 {
    match r {
        RegRef::Reg(r) => r as u64,
        RegRef::Pred(p) => 256 + p as u64,
        RegRef::Nzp => 512,
    }
}

fn level_code(l: HitLevel) -> u8 {
    match l {
        HitLevel::Ideal => 0,
        HitLevel::L1 => 1,
        HitLevel::L2 => 2,
        HitLevel::Dram => 3,
    }
}

fn state_code(s: &WarpState) -> u8 {
    match s {
        WarpState::Selected => 0,
        WarpState::NotSelected => 1,
        WarpState::Scoreboard { .. } => 2,
        WarpState::DependencyBarrier { .. } => 3,
        WarpState::StallCount => 4,
        WarpState::CtaBarrier => 5,
        WarpState::Membar => 6,
        WarpState::PipeBusy { .. } => 7,
        WarpState::MioThrottle => 8,
        WarpState::LgThrottle => 9,
        WarpState::TableFull => 10,
        WarpState::BranchResolving => 11,
        WarpState::NoInstruction => 12,
        WarpState::Drain => 13,
        WarpState::Sleeping => 14,
    }
}

/// Per-warp context both encoder and decoder keep, so that common values cost nothing.
#[derive(Debug)]
struct Context {
    last_cycle: u64,
    prev_warp: WarpRef,
    groups: Groups,
    completions: Completions,
}

/// Completions predicted from issues (version 3), kept alike by encoder and decoder: each
/// issue at a pc whose latency (issue to completion) is known from an earlier completion there,
/// and below [`WHEEL`] cycles, is expected to complete that many cycles later. At a completion
/// the expectations already past are dropped; if the earliest one left (by cycle, then SM,
/// then issue order — the order in which the simulator retires) is this very completion, it
/// costs its tag alone. A wrong expectation only costs bytes: the writer uses it only when it
/// is right.
#[derive(Debug, Default)]
struct Completions {
    /// Expectations by due cycle modulo [`WHEEL`]: all due in `now .. now + WHEEL`, so a
    /// bucket's are all due the same cycle; kept in retire order (sm, issue number).
    wheel: Vec<Bucket>,
    /// Every expectation due before this cycle has been dropped.
    now: u64,
    live: usize,
    issued: u64,
    /// By pc below [`DENSE_PCS`]: cycles from issue to completion the last time, if any.
    latency: Vec<Option<u64>>,
    /// Per warp slot: its last [`RECENT`] issues (pc, cycle), to learn latencies from.
    recent: Table<Recent>,
}

/// A warp's last [`RECENT`] issues (pc, cycle), in a ring (`next` is the oldest).
#[derive(Debug, Clone, Copy)]
struct Recent {
    issues: [(u32, u64); RECENT],
    next: usize,
}

impl Recent {
    /// The cycle of the latest of these issues at `pc`.
    fn latest(&self, pc: u32) -> Option<u64> {
        (1..=RECENT)
            .map(|k| self.issues[(self.next + RECENT - k) % RECENT])
            .find(|&(p, _)| p == pc)
            .map(|(_, c)| c)
    }
}

/// An expected completion: (sm, issue number, slot, pc), ordered as retired within a cycle.
type Expected = (u32, u64, u32, u32);

/// The expectations due in one cycle, in retire order, from `head` on: a completion takes
/// the first by moving `head` (a bucket can hold a hundred, which removing from the front
/// shifted each time).
#[derive(Debug, Default)]
struct Bucket {
    items: Vec<Expected>,
    head: usize,
}

impl Bucket {
    fn len(&self) -> usize {
        self.items.len() - self.head
    }

    fn first(&self) -> Option<&Expected> {
        self.items.get(self.head)
    }

    fn take_first(&mut self) {
        self.head += 1;
        if self.head >= self.items.len() {
            self.clear();
        }
    }

    /// Inserts `e` after the expectations of its SM and of SMs before it.
    // Mostly it goes last, which needs no search: that much is inlined (as a call it was a
    // sixth of the writer's `Encoder::issue`), the search is not.
    #[inline(always)]
    fn insert(&mut self, e: Expected) {
        if self.items[self.head..].last().map_or(true, |x| x.0 <= e.0) {
            self.items.push(e);
            return;
        }
        self.insert_sorted(e);
    }

    #[inline(never)]
    fn insert_sorted(&mut self, e: Expected) {
        let at = self.head + self.items[self.head..].partition_point(|x| x.0 <= e.0);
        self.items.insert(at, e);
    }

    fn clear(&mut self) {
        self.items.clear();
        self.head = 0;
    }
}

/// Cycles ahead that completions are expected (longer latencies are not predicted).
const WHEEL: u64 = 1024;
const RECENT: usize = 8;
/// Expectations kept at most (a corrupt trace cannot make them pile up).
const MAX_EXPECTED: usize = 1 << 16;

impl Completions {
    fn issue(&mut self, w: WarpRef, cycle: u64, pc: u32) {
        self.issue_inlined(w, cycle, pc);
    }

    /// [`issue`](Self::issue), inlined into the writer's `Encoder::issue`: as a call its
    /// frame was a sixth of the latter.
    #[inline(always)]
    fn issue_inlined(&mut self, w: WarpRef, cycle: u64, pc: u32) {
        self.expire(cycle);
        let recent = self.recent.get_or_insert_with(w.sm, w.slot, || Recent {
            issues: [(u32::MAX, 0); RECENT],
            next: 0,
        });
        recent.issues[recent.next] = (pc, cycle);
        recent.next = (recent.next + 1) % RECENT;
        let latency = self.latency.get(pc as usize).copied().flatten();
        if let Some(due) = latency
            .filter(|&l| l < WHEEL)
            .and_then(|l| cycle.checked_add(l))
        {
            if self.live < MAX_EXPECTED {
                let e = (w.sm, self.issued, w.slot, pc);
                // Issue numbers grow, so within an SM a new expectation goes last.
                self.bucket(due).insert(e);
                self.live += 1;
            }
        }
        self.issued += 1;
    }

    fn bucket(&mut self, due: u64) -> &mut Bucket {
        if self.wheel.is_empty() {
            self.wheel.resize_with(WHEEL as usize, Bucket::default);
        }
        &mut self.wheel[(due % WHEEL) as usize]
    }

    /// Drops the expectations due before `cycle`.
    fn expire(&mut self, cycle: u64) {
        if cycle <= self.now {
            return;
        }
        if self.live > 0 {
            let passed = (cycle - self.now).min(WHEEL);
            for t in self.now..self.now + passed {
                // Expectations exist, so the wheel does.
                let bucket = &mut self.wheel[(t % WHEEL) as usize];
                self.live -= bucket.len();
                bucket.clear();
            }
        }
        self.now = cycle;
    }

    /// The completion expected next at `cycle`, if any: (warp, pc).
    fn expected(&mut self, cycle: u64) -> Option<(WarpRef, u32)> {
        self.expire(cycle);
        if self.live == 0 {
            return None;
        }
        let &(sm, _, slot, pc) = self.bucket(cycle).first()?;
        Some((WarpRef { sm, slot }, pc))
    }

    /// Warp `w` completed `pc` at `cycle`; `expected` says it was the expected completion
    /// (just returned by [`expected`](Self::expected) for `cycle`).
    fn complete(&mut self, w: WarpRef, pc: u32, cycle: u64, expected: bool) {
        if expected {
            self.bucket(cycle).take_first();
            self.live -= 1;
            return;
        }
        self.learn(w, pc, cycle);
    }

    /// [`expected`](Self::expected) and [`complete`](Self::complete) of warp `w`'s
    /// completion of `pc` at `cycle` in one call, returning whether it was the expected one
    /// (the writer's two calls looked up the bucket twice).
    // Inlined into the writer's loop: as a call its frame was a fifth of the completion.
    #[inline(always)]
    fn retire(&mut self, w: WarpRef, pc: u32, cycle: u64) -> bool {
        self.expire(cycle);
        if self.live > 0 {
            let bucket = self.bucket(cycle);
            let hit = bucket
                .first()
                .is_some_and(|&(sm, _, slot, p)| sm == w.sm && slot == w.slot && p == pc);
            if hit {
                bucket.take_first();
                self.live -= 1;
                return true;
            }
        }
        self.learn(w, pc, cycle);
        false
    }

    /// An unexpected completion of `pc` by warp `w` at `cycle`: the latency of `pc` is
    /// learnt from the warp's latest issue of it.
    #[inline]
    fn learn(&mut self, w: WarpRef, pc: u32, cycle: u64) {
        let issued = self.recent.get(w.sm, w.slot).and_then(|r| r.latest(pc));
        if let Some(issued) = issued.filter(|&c| c <= cycle) {
            if pc < DENSE_PCS {
                if self.latency.len() <= pc as usize {
                    self.latency.resize(pc as usize + 1, None);
                }
                self.latency[pc as usize] = Some(cycle - issued);
            }
        }
    }
}

/// What state groups and predicted states need, kept alike by encoder and decoder: every
/// warp slot's lanes and last issued pc, every launched warp's scheduler and current state,
/// each scheduler's warps in launch order (the order in which the simulator reports a
/// scheduler's state changes), and per warp the state that last followed each state.
#[derive(Debug, Default)]
struct Groups {
    /// One record per warp slot an event names: every per-warp value the decoder reads for an
    /// event is behind one look-up.
    warps: Table<WarpRec>,
    schedulers: Vec<GroupScheduler>,
    /// Index in `schedulers` by (sm, scheduler).
    scheduler_index: Table<u32>,
    /// By the last issued pc (below [`DENSE_PCS`]), then by [`state_code`] of a state: the
    /// state a warp changed to from it last time.
    by_pc: Vec<[Option<WarpState>; STATES as usize]>,
    /// Version 5: the issue stage as far as the trace shows it (see [`IssueLimits`]).
    limits: IssueLimits,
    /// Whether the issue-stage model is kept (version 5 only: it costs version 4 time).
    model: bool,
    /// The pipe of each pc (below [`DENSE_PCS`]) as issues showed it, [`NO_PIPE`] if unseen.
    pipe_by_pc: Vec<u8>,
    /// LSU and MIO queue occupancy per SM, by `GroupScheduler::sm_index`.
    queues: Vec<SmQueues>,
    sm_index: Table<u32>,
    /// Indices into `schedulers` in (sm, scheduler) order, the order of a cycle's runs, and
    /// their [`sched_key`]s.
    order: Vec<u32>,
    order_keys: Vec<u64>,
    /// The cycle and [`sched_key`] of the last run: a run's scheduler is named relative to it
    /// within a cycle.
    last_run: (u64, u64),
}

const DENSE_PCS: u32 = 4096;

/// `WarpRec::ready_pipe` of a warp not known to wait for a pipe only.
const NO_PIPE: u8 = u8::MAX;

/// From the header's config: what decides a ready warp's state (the simulator's
/// `pipe_entry`): each pipe's issue interval and the LSU and MIO queue depths.
#[derive(Debug, Clone, Copy, Default)]
struct IssueLimits {
    interval: [u64; 6],
    lsu_queue: u32,
    mio_queue: u32,
}

impl IssueLimits {
    fn of(header: &TraceHeader) -> Self {
        let c = &header.config;
        IssueLimits {
            interval: Pipe::ALL.map(|p| c.pipes.get(p).interval as u64),
            lsu_queue: c.sm.lsu_queue,
            mio_queue: c.sm.mio_queue,
        }
    }
}

/// An SM's in-flight LSU (global) and MIO (shared, mufu) instructions, counted from issues
/// and completions, and the last cycle either count reached or left its queue's depth.
#[derive(Debug, Clone, Copy)]
struct SmQueues {
    lsu: u32,
    mio: u32,
    crossed_at: u64,
}

/// One pipe of a scheduler: when it is free again, and the value before this cycle's issue
/// (a scheduler's warps are looked at before it issues).
#[derive(Debug, Clone, Copy, Default)]
struct PipeClock {
    issued_at: u64,
    free_before: u64,
    free_after: u64,
}

impl PipeClock {
    fn free(&self, cycle: u64) -> u64 {
        if self.issued_at == cycle {
            self.free_before
        } else {
            self.free_after
        }
    }
}

/// `WarpRec::sched` of a slot no warp_launch has named.
const UNLAUNCHED: u32 = u32::MAX;
/// `WarpRec::position` of a warp among no scheduler's members: one that exited, or a slot no
/// warp_launch named.
const NOT_MEMBER: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct WarpRec {
    /// Lanes of the slot's current warp (from warp_launch); unknown = all 32.
    lanes: u32,
    /// Last issued pc; unknown = u32::MAX (so the prediction is pc 0).
    pc: u32,
    /// Index of its scheduler in `Groups::schedulers`, or [`UNLAUNCHED`].
    sched: u32,
    /// Index in its scheduler's `members`; [`NOT_MEMBER`] for a warp that exited or a slot no
    /// warp_launch named.
    position: u32,
    state: Option<WarpState>,
    /// The cycle of the warp's last issue (a warp that issued this cycle is `Selected`).
    issued: Option<u64>,
    /// Version 5: the pipe its next instruction waits for when only a pipe or queue holds
    /// it ([`NO_PIPE`] otherwise); the producer pc it waits on; the cycle that producer
    /// completed while it waited.
    ready_pipe: u8,
    producer: u32,
    released: u64,
    /// Version 6: the pipe group (of its scheduler) it is in, by [`pipe_code`]; [`NO_PIPE`]
    /// for none. Joined by a state change that names the group, left by any other and by an
    /// issue; a group's change sets the state of every member (see [`settle`]).
    group: u8,
    /// Version 6: how many changes its group had when it joined.
    joined: u32,
}

const UNKNOWN_WARP: WarpRec = WarpRec {
    lanes: u32::MAX,
    pc: u32::MAX,
    sched: UNLAUNCHED,
    position: NOT_MEMBER,
    state: None,
    issued: None,
    ready_pipe: NO_PIPE,
    producer: u32::MAX,
    released: u64::MAX,
    group: NO_PIPE,
    joined: 0,
};

impl WarpRec {
    fn launched(&self) -> bool {
        self.sched != UNLAUNCHED
    }
}

#[derive(Debug, Clone)]
struct GroupScheduler {
    /// Warp slots in launch order.
    members: Vec<u32>,
    /// By [`state_code`] of a state: the state a warp of this scheduler changed to from it
    /// last time.
    next: [Option<WarpState>; STATES as usize],
    sm: u32,
    id: u32,
    sm_index: u32,
    pipes: [PipeClock; 6],
    /// The cycle of its last issue, and how many LSU and MIO instructions it issued then.
    last_issue: u64,
    own_lsu: u32,
    own_mio: u32,
    /// The last cycle a completion released one of its warps.
    released_at: u64,
    /// Masks over the first 64 members (bit = position): those waiting only for pipe p
    /// (`ready[p]`), those in each state a ready warp can be in or `Selected`, those that
    /// issued at `last_issue` and those a completion released at `released_at`. A cycle's
    /// predicted run is mostly mask arithmetic over them.
    ready: [u64; 6],
    in_state: [u64; 5],
    issued: u64,
    released: u64,
    /// Version 6, by pipe: how many changes its group has had, and the last one.
    groups: [(u32, Option<WarpState>); 6],
}

/// Version 6: warp `g` takes its group's last change if the group changed since it joined.
/// Each side settles a warp before reading its state, so a group's change is one write
/// however many warps it holds.
#[inline(always)]
fn settle(g: &mut WarpRec, groups: &[(u32, Option<WarpState>); 6]) {
    if let Some(&(changes, state)) = groups.get(g.group as usize) {
        if changes != g.joined {
            g.state = state;
            g.joined = changes;
        }
    }
}

/// Version 6: warp `g`, whose state just changed, is now in the group of pipe `group`
/// ([`NO_PIPE`]: in none).
#[inline(always)]
fn join(g: &mut WarpRec, groups: &[(u32, Option<WarpState>); 6], group: u8) {
    g.group = group;
    if let Some(&(changes, _)) = groups.get(group as usize) {
        g.joined = changes;
    }
}

/// Index in `GroupScheduler::in_state` of a state a ready warp can be in, or `Selected`.
fn mask_index(state: WarpState) -> Option<usize> {
    match state {
        WarpState::NotSelected => Some(0),
        WarpState::PipeBusy { .. } => Some(1),
        WarpState::LgThrottle => Some(2),
        WarpState::MioThrottle => Some(3),
        WarpState::Selected => Some(4),
        _ => None,
    }
}

const SELECTED_MASK: usize = 4;

impl GroupScheduler {
    fn new(sm: u32, id: u32, sm_index: u32) -> Self {
        GroupScheduler {
            members: Vec::new(),
            next: [None; STATES as usize],
            sm,
            id,
            sm_index,
            pipes: [PipeClock::default(); 6],
            last_issue: u64::MAX,
            own_lsu: 0,
            own_mio: 0,
            released_at: u64::MAX,
            ready: [0; 6],
            in_state: [0; 5],
            issued: 0,
            released: 0,
            groups: [(0, None); 6],
        }
    }

    /// Member `position` went from `old` (waiting for pipe `old_pipe`) to `state` (waiting
    /// for `ready_pipe`; [`NO_PIPE`] for none).
    #[inline(always)]
    fn note(
        &mut self,
        position: u32,
        old: Option<WarpState>,
        old_pipe: u8,
        state: WarpState,
        ready_pipe: u8,
    ) {
        if position as usize >= RUN_SPAN {
            return;
        }
        let bit = 1u64 << position;
        if let Some(i) = old.and_then(mask_index) {
            self.in_state[i] &= !bit;
        }
        if let Some(m) = self.ready.get_mut(old_pipe as usize) {
            *m &= !bit;
        }
        self.released &= !bit;
        if let Some(i) = mask_index(state) {
            self.in_state[i] |= bit;
        }
        if let Some(m) = self.ready.get_mut(ready_pipe as usize) {
            *m |= bit;
        }
    }

    /// Member `at` left: the members after it move down one position.
    fn remove_position(&mut self, at: usize) {
        if at >= RUN_SPAN {
            return;
        }
        let low = (1u64 << at) - 1;
        let squeeze = |m: &mut u64| *m = (*m & low) | ((*m >> 1) & !low);
        for m in self.ready.iter_mut().chain(&mut self.in_state) {
            squeeze(m);
        }
        squeeze(&mut self.issued);
        squeeze(&mut self.released);
    }
}

/// SMs kept in the dense part of a [`Table`].
const DENSE_LIMIT: u32 = 1024;
/// Warp slots (or schedulers) per SM kept in the dense part of a [`Table`].
const DENSE_STRIDE: u32 = 256;

/// Values by a pair of small ids (sm and slot, or sm and scheduler): in one flat vector for
/// ids below [`DENSE_LIMIT`] × [`DENSE_STRIDE`], a map beyond (so a corrupt trace's huge ids
/// cost memory only per id seen).
#[derive(Debug)]
struct Table<T> {
    dense: Vec<Option<T>>,
    sparse: Sparse<T>,
}

/// The part of a [`Table`] for ids too large for its dense part.
type Sparse<T> = HashMap<(u32, u32), T>;

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            dense: Vec::new(),
            sparse: HashMap::default(),
        }
    }
}

impl<T> Table<T> {
    #[inline]
    fn dense_index(a: u32, b: u32) -> Option<usize> {
        (a < DENSE_LIMIT && b < DENSE_STRIDE).then(|| (a * DENSE_STRIDE + b) as usize)
    }

    /// Where `(a, b)` would sit in the dense part, if `b` fits a row. Only a row below
    /// [`DENSE_LIMIT`] is ever allocated, so an index below the dense part's length also
    /// says `a` fits: one comparison less on every look-up (they were a twentieth of the
    /// encoder thread).
    #[inline(always)]
    fn row_index(a: u32, b: u32) -> Option<usize> {
        (b < DENSE_STRIDE).then(|| a as usize * DENSE_STRIDE as usize + b as usize)
    }

    #[inline]
    fn get(&self, a: u32, b: u32) -> Option<&T> {
        match Self::row_index(a, b) {
            Some(i) if i < self.dense.len() => self.dense[i].as_ref(),
            _ => self.get_outside(a, b),
        }
    }

    #[inline]
    fn get_mut(&mut self, a: u32, b: u32) -> Option<&mut T> {
        match Self::row_index(a, b) {
            Some(i) if i < self.dense.len() => self.dense[i].as_mut(),
            _ => Self::get_mut_outside(&mut self.sparse, a, b),
        }
    }

    /// The dense row of `a` (empty if not allocated), and the sparse part, for
    /// [`get_mut_outside`](Self::get_mut_outside) with the pairs the row does not hold.
    #[inline(always)]
    fn row_mut(&mut self, a: u32) -> (&mut [Option<T>], &mut Sparse<T>) {
        let start = a as usize * DENSE_STRIDE as usize;
        let row = match self.dense.get_mut(start..start + DENSE_STRIDE as usize) {
            Some(row) => row,
            None => &mut [],
        };
        (row, &mut self.sparse)
    }

    /// [`get`](Self::get) of a pair past the dense part's end: in the sparse part unless it
    /// belongs in a dense row not allocated yet.
    #[inline(never)]
    fn get_outside(&self, a: u32, b: u32) -> Option<&T> {
        match Self::dense_index(a, b) {
            Some(_) => None,
            None => self.sparse.get(&(a, b)),
        }
    }

    #[inline(never)]
    fn get_mut_outside(sparse: &mut Sparse<T>, a: u32, b: u32) -> Option<&mut T> {
        match Self::dense_index(a, b) {
            Some(_) => None,
            None => sparse.get_mut(&(a, b)),
        }
    }

    #[inline(always)]
    fn get_or_insert_with(&mut self, a: u32, b: u32, f: impl FnOnce() -> T) -> &mut T {
        match Self::row_index(a, b) {
            Some(i) if i < self.dense.len() => self.dense[i].get_or_insert_with(f),
            _ => self.grow_or_sparse(a, b, f),
        }
    }

    /// [`get_or_insert_with`](Self::get_or_insert_with) past the dense part's end: rare (a
    /// new SM's row, or ids too large for the dense part), so out of line, keeping the
    /// growing and hashing out of the look-ups made for every event.
    #[cold]
    #[inline(never)]
    fn grow_or_sparse(&mut self, a: u32, b: u32, f: impl FnOnce() -> T) -> &mut T {
        match Self::dense_index(a, b) {
            Some(i) => {
                // Whole rows, so that a row's slots are allocated together.
                self.dense
                    .resize_with((a as usize + 1) * DENSE_STRIDE as usize, || None);
                self.dense[i].get_or_insert_with(f)
            }
            None => self.sparse.entry((a, b)).or_insert_with(f),
        }
    }
}

impl Groups {
    /// The record of warp slot `w`, made on first use.
    #[inline(always)]
    fn warp(&mut self, w: WarpRef) -> &mut WarpRec {
        self.warps.get_or_insert_with(w.sm, w.slot, || UNKNOWN_WARP)
    }

    /// The launched warp in slot `w`, if any.
    #[inline(always)]
    fn launched(&self, w: WarpRef) -> Option<&WarpRec> {
        self.warps.get(w.sm, w.slot).filter(|g| g.launched())
    }

    fn launch(&mut self, w: WarpRef, scheduler: u32, lanes: u32) {
        self.exit(w);
        let next = self.schedulers.len() as u32;
        let sched = *self
            .scheduler_index
            .get_or_insert_with(w.sm, scheduler, || next);
        if sched == next {
            let queues = self.queues.len() as u32;
            let sm_index = *self.sm_index.get_or_insert_with(w.sm, 0, || queues);
            if sm_index == queues {
                self.queues.push(SmQueues {
                    lsu: 0,
                    mio: 0,
                    crossed_at: u64::MAX,
                });
            }
            self.schedulers
                .push(GroupScheduler::new(w.sm, scheduler, sm_index));
            let key = sched_key(&self.schedulers[sched as usize]);
            let at = self.order_keys.partition_point(|&k| k < key);
            self.order.insert(at, sched);
            self.order_keys.insert(at, key);
        }
        let members = &mut self.schedulers[sched as usize].members;
        members.push(w.slot);
        *self.warp(w) = WarpRec {
            lanes,
            sched,
            position: (members.len() - 1) as u32,
            ..UNKNOWN_WARP
        };
    }

    fn exit(&mut self, w: WarpRef) {
        let Some(g) = self.warps.get_mut(w.sm, w.slot).filter(|g| g.launched()) else {
            return;
        };
        g.state = None;
        g.group = NO_PIPE;
        // A warp that exited is among no scheduler's members (what the warp_launch of a used
        // slot finds: looking for it there was most of a launch).
        if g.position == NOT_MEMBER {
            return;
        }
        let position = g.position as usize;
        // No position any more: a corrupt trace that changes an exited warp's state must not
        // mark another member's bit in the scheduler's masks.
        g.position = NOT_MEMBER;
        let s = &mut self.schedulers[g.sched as usize];
        // Its position says where it is; the search is only a fallback.
        let at = match s.members.get(position) {
            Some(&x) if x == w.slot => Some(position),
            _ => s.members.iter().position(|&x| x == w.slot),
        };
        let Some(at) = at else {
            return;
        };
        s.members.remove(at);
        if self.model {
            s.remove_position(at);
        }
        // The members share the exiting warp's SM: its row is found once, not per member.
        let (row, sparse) = self.warps.row_mut(w.sm);
        for &slot in &s.members[at..] {
            let m = match row.get_mut(slot as usize) {
                Some(m) => m.as_mut(),
                None => Table::get_mut_outside(sparse, w.sm, slot),
            };
            if let Some(m) = m {
                m.position = m.position.saturating_sub(1);
            }
        }
    }

    /// Warp `w` issued `pc` to `pipe` at `cycle`; with `selected` it then changes to
    /// `Selected` (as [`set_state`](Self::set_state) does: on the record in hand, so that an
    /// issue costs one look-up). Returns the warp's lanes and its last pc before this issue
    /// (what the writer encodes the issue against).
    #[inline(always)]
    fn issue(&mut self, w: WarpRef, cycle: u64, pc: u32, pipe: Pipe, selected: bool) -> (u32, u32) {
        let g = self.warps.get_or_insert_with(w.sm, w.slot, || UNKNOWN_WARP);
        let before = (g.lanes, g.pc);
        g.issued = Some(cycle);
        g.pc = pc;
        if g.launched() {
            settle(g, &self.schedulers[g.sched as usize].groups);
        }
        g.group = NO_PIPE;
        if !self.model {
            if selected && g.launched() {
                let next = &mut self.schedulers[g.sched as usize].next;
                moved(g, next, &mut self.by_pc, WarpState::Selected);
            }
            return before;
        }
        g.ready_pipe = NO_PIPE;
        self.issue_model(w, cycle, pc, pipe);
        if selected {
            self.set_state(w, WarpState::Selected);
        }
        before
    }

    /// Version 5: what [`issue`](Self::issue) tells the issue-stage model.
    fn issue_model(&mut self, w: WarpRef, cycle: u64, pc: u32, pipe: Pipe) {
        let g = self.warp(w);
        let (sched, position) = (g.sched, g.position);
        let p = pipe_code(pipe);
        if pc < DENSE_PCS {
            if self.pipe_by_pc.len() <= pc as usize {
                self.pipe_by_pc.resize(pc as usize + 1, NO_PIPE);
            }
            self.pipe_by_pc[pc as usize] = p;
        }
        if sched == UNLAUNCHED {
            return;
        }
        let s = &mut self.schedulers[sched as usize];
        let clock = &mut s.pipes[p as usize];
        if clock.issued_at != cycle {
            clock.free_before = clock.free_after;
            clock.issued_at = cycle;
        }
        clock.free_after = cycle.saturating_add(self.limits.interval[p as usize]);
        if s.last_issue != cycle {
            s.last_issue = cycle;
            s.own_lsu = 0;
            s.own_mio = 0;
            s.issued = 0;
        }
        if (position as usize) < RUN_SPAN {
            s.issued |= 1 << position;
            // Its next instruction is not known to be ready.
            for m in &mut s.ready {
                *m &= !(1 << position);
            }
        }
        let q = &mut self.queues[s.sm_index as usize];
        match pipe {
            Pipe::Global => {
                s.own_lsu += 1;
                q.lsu = q.lsu.saturating_add(1);
                if q.lsu == self.limits.lsu_queue {
                    q.crossed_at = cycle;
                }
            }
            Pipe::Mufu | Pipe::Shared => {
                s.own_mio += 1;
                q.mio = q.mio.saturating_add(1);
                if q.mio == self.limits.mio_queue {
                    q.crossed_at = cycle;
                }
            }
            _ => {}
        }
    }

    /// Warp `w` completed `pc` at `cycle`: a queue entry frees, and a warp waiting on `pc`
    /// may go.
    // Inlined: version 4 keeps no model, and a call to find that out was 1 % of the encoder
    // thread.
    #[inline(always)]
    fn complete(&mut self, w: WarpRef, pc: u32, cycle: u64) {
        if self.model {
            self.complete_model(w, pc, cycle);
        }
    }

    /// Version 5: what [`complete`](Self::complete) tells the issue-stage model.
    fn complete_model(&mut self, w: WarpRef, pc: u32, cycle: u64) {
        let Some(g) = self.warps.get_mut(w.sm, w.slot).filter(|g| g.launched()) else {
            return;
        };
        let s = &mut self.schedulers[g.sched as usize];
        if g.producer == pc
            && matches!(
                g.state,
                Some(WarpState::Scoreboard { .. } | WarpState::DependencyBarrier { .. })
            )
        {
            g.released = cycle;
            if s.released_at != cycle {
                s.released_at = cycle;
                s.released = 0;
            }
            if (g.position as usize) < RUN_SPAN {
                s.released |= 1 << g.position;
            }
        }
        let q = &mut self.queues[s.sm_index as usize];
        match self.pipe_by_pc.get(pc as usize).copied() {
            Some(4) => {
                if q.lsu == self.limits.lsu_queue {
                    q.crossed_at = cycle;
                }
                q.lsu = q.lsu.saturating_sub(1);
            }
            Some(2 | 3) => {
                if q.mio == self.limits.mio_queue {
                    q.crossed_at = cycle;
                }
                q.mio = q.mio.saturating_sub(1);
            }
            _ => {}
        }
    }

    /// The state a warp of scheduler `s` whose next instruction needs only pipe `p` has at
    /// `cycle` (the simulator's `pipe_entry`, before `s` issues in that cycle).
    #[inline(always)]
    fn entry(&self, s: &GroupScheduler, p: u8, cycle: u64) -> WarpState {
        let pipe = Pipe::ALL[p as usize];
        if s.pipes[p as usize].free(cycle) > cycle {
            return WarpState::PipeBusy { pipe };
        }
        let q = &self.queues[s.sm_index as usize];
        let (own_lsu, own_mio) = if s.last_issue == cycle {
            (s.own_lsu, s.own_mio)
        } else {
            (0, 0)
        };
        match pipe {
            Pipe::Global if q.lsu.saturating_sub(own_lsu) >= self.limits.lsu_queue => {
                WarpState::LgThrottle
            }
            Pipe::Mufu | Pipe::Shared if q.mio.saturating_sub(own_mio) >= self.limits.mio_queue => {
                WarpState::MioThrottle
            }
            _ => WarpState::NotSelected,
        }
    }

    /// [`entry`](Self::entry) of pipe `p`, looked up once per run in `cache`.
    #[inline(always)]
    fn entry_cached(
        &self,
        s: &GroupScheduler,
        p: u8,
        cycle: u64,
        cache: &mut [Option<WarpState>; 6],
    ) -> WarpState {
        *cache[p as usize].get_or_insert_with(|| self.entry(s, p, cycle))
    }

    /// What warp `g` goes to when it leaves state `from` (what followed `from` at its pc last
    /// time, else on its scheduler); a ready state is refined by the pipe of its next pc.
    fn after(
        &self,
        g: &WarpRec,
        s: &GroupScheduler,
        from: usize,
        cycle: u64,
        cache: &mut [Option<WarpState>; 6],
    ) -> Option<WarpState> {
        let t = self
            .by_pc
            .get(g.pc as usize)
            .and_then(|t| t[from])
            .or(s.next[from])?;
        if is_ready(t) {
            let next = g.pc.wrapping_add(1) as usize;
            if let Some(&p) = self.pipe_by_pc.get(next).filter(|&&p| p != NO_PIPE) {
                return Some(self.entry_cached(s, p, cycle, cache));
            }
        }
        Some(t)
    }

    /// Version 5: the state launched warp `g` of scheduler `s` is predicted to change to at
    /// `cycle`; `None` for no change.
    #[inline(always)]
    fn predict_v5(
        &self,
        g: &WarpRec,
        s: &GroupScheduler,
        cycle: u64,
        cache: &mut [Option<WarpState>; 6],
    ) -> Option<WarpState> {
        let cur = g.state?;
        let new = if g.issued == Some(cycle) {
            WarpState::Selected
        } else {
            match cur {
                WarpState::NotSelected
                | WarpState::PipeBusy { .. }
                | WarpState::LgThrottle
                | WarpState::MioThrottle
                    if g.ready_pipe != NO_PIPE =>
                {
                    self.entry_cached(s, g.ready_pipe, cycle, cache)
                }
                WarpState::Selected => self.after(g, s, 0, cycle, cache)?,
                WarpState::Scoreboard { .. } | WarpState::DependencyBarrier { .. }
                    if g.released == cycle =>
                {
                    self.after(g, s, state_code(&cur) as usize, cycle, cache)?
                }
                _ => return None,
            }
        };
        (new != cur).then_some(new)
    }

    /// Whether scheduler `s` may see its warps change without an explicit cause at `cycle`:
    /// it issued then or the cycle before, one of its pipes frees, a completion released one
    /// of its warps, or its SM's LSU or MIO queue filled or drained.
    #[inline(always)]
    fn candidate(&self, s: &GroupScheduler, cycle: u64) -> bool {
        let q = &self.queues[s.sm_index as usize];
        s.last_issue == cycle
            || s.last_issue.wrapping_add(1) == cycle
            || s.released_at == cycle
            || q.crossed_at == cycle
            || q.crossed_at.wrapping_add(1) == cycle
            || s.pipes.iter().any(|p| p.free_after == cycle)
    }

    /// The masks a predicted run is made of (see [`predicted_run`](Self::predicted_run)).
    #[inline(always)]
    fn run_masks(&self, s: &GroupScheduler, cycle: u64) -> RunMasks {
        let issued = if s.last_issue == cycle { s.issued } else { 0 };
        let released = if s.released_at == cycle {
            s.released
        } else {
            0
        };
        let mut m = RunMasks {
            selected: issued & !s.in_state[SELECTED_MASK],
            moving: [0; 6],
            entries: [WarpState::NotSelected; 6],
            one_by_one: (s.in_state[SELECTED_MASK] | released) & !issued,
        };
        for p in 0..6 {
            let ready = s.ready[p] & !issued;
            if ready != 0 {
                let e = self.entry(s, p as u8, cycle);
                let already = mask_index(e).map_or(0, |i| s.in_state[i]);
                m.entries[p] = e;
                m.moving[p] = ready & !already;
            }
        }
        m
    }

    /// Whether the predicted run of `s` at `cycle`, made of `m`, has a member.
    fn any_predicted(&self, s: &GroupScheduler, m: &RunMasks, cycle: u64) -> bool {
        if m.selected | m.moving.iter().fold(0, |a, &b| a | b) != 0 {
            return true;
        }
        let mut rest = m.one_by_one;
        let mut cache = [None; 6];
        while rest != 0 {
            let i = rest.trailing_zeros();
            rest &= rest - 1;
            let g = s
                .members
                .get(i as usize)
                .and_then(|&slot| self.warps.get(s.sm, slot));
            if g.is_some_and(|g| self.predict_v5(g, s, cycle, &mut cache).is_some()) {
                return true;
            }
        }
        false
    }

    /// The predicted run of scheduler `sched` at `cycle` into `out`: (position, new state)
    /// of each member (the first 64) predicted to change, in member order. The same as
    /// [`predict_v5`](Self::predict_v5) of every member, from the scheduler's masks: issuers
    /// become `Selected`, the warps ready but for pipe p take that pipe's entry state, and
    /// only the selected and released ones are looked at one by one.
    fn predicted_run(&self, sched: u32, cycle: u64, out: &mut Vec<(u32, WarpState)>) {
        let s = &self.schedulers[sched as usize];
        let m = self.run_masks(s, cycle);
        self.fill_run(s, &m, cycle, out);
    }

    fn fill_run(
        &self,
        s: &GroupScheduler,
        m: &RunMasks,
        cycle: u64,
        out: &mut Vec<(u32, WarpState)>,
    ) {
        out.clear();
        let moving = m.moving.iter().fold(0, |a, &b| a | b);
        let mut rest = m.selected | moving | m.one_by_one;
        let mut cache = [None; 6];
        while rest != 0 {
            let i = rest.trailing_zeros();
            rest &= rest - 1;
            let bit = 1u64 << i;
            let state = if m.selected & bit != 0 {
                WarpState::Selected
            } else if moving & bit != 0 {
                let p = m.moving.iter().position(|&x| x & bit != 0).unwrap_or(0);
                m.entries[p]
            } else {
                let Some(g) = s
                    .members
                    .get(i as usize)
                    .and_then(|&slot| self.warps.get(s.sm, slot))
                else {
                    continue;
                };
                match self.predict_v5(g, s, cycle, &mut cache) {
                    Some(state) => state,
                    None => continue,
                }
            };
            out.push((i, state));
        }
    }

    /// Version 5: finds the scheduler a run names. Counting from the scheduler after the last
    /// run's in this cycle (the first, in a new cycle), in (sm, scheduler) order, over the
    /// candidates whose predicted run is not empty: with `Pick::Nth(k)` the k-th (1-based);
    /// with `Pick::Sched(i)` the count at scheduler index `i` (`None` if it is not among
    /// them). Leaves the found scheduler's predicted run in `out`.
    fn pick(&self, cycle: u64, pick: Pick, out: &mut Vec<(u32, WarpState)>) -> Option<(u32, u64)> {
        let (c, last) = self.last_run;
        let start = if c == cycle {
            self.order_keys.partition_point(|&k| k <= last)
        } else {
            0
        };
        let target = match pick {
            Pick::Sched(i) => sched_key(&self.schedulers[i as usize]),
            Pick::Nth(_) => u64::MAX,
        };
        let mut k = 0;
        for (&i, &key) in self.order[start..].iter().zip(&self.order_keys[start..]) {
            if key > target {
                break;
            }
            let s = &self.schedulers[i as usize];
            if !self.candidate(s, cycle) {
                continue;
            }
            let m = self.run_masks(s, cycle);
            if let Pick::Sched(t) = pick {
                if t == i {
                    self.fill_run(s, &m, cycle, out);
                    return (!out.is_empty()).then_some((i, k + 1));
                }
            }
            if self.any_predicted(s, &m, cycle) {
                k += 1;
                if matches!(pick, Pick::Nth(n) if n == k) {
                    self.fill_run(s, &m, cycle, out);
                    return Some((i, k));
                }
            }
        }
        None
    }

    /// The record of warp slot `w`; [`UNKNOWN_WARP`] for a slot no event has named (what a
    /// new record starts as).
    #[inline(always)]
    fn record(&self, w: WarpRef) -> &WarpRec {
        self.warps.get(w.sm, w.slot).unwrap_or(&UNKNOWN_WARP)
    }

    #[inline]
    fn last_pc(&self, w: WarpRef) -> u32 {
        self.record(w).pc
    }

    fn set_state(&mut self, w: WarpRef, state: WarpState) {
        self.change(w, 0, Some(state));
    }

    /// Version 6: warp `w`, whose state just changed, is in the group of pipe `group` (by
    /// [`pipe_code`]; [`NO_PIPE`] for none).
    fn set_group(&mut self, w: WarpRef, group: u8) {
        if let Some(g) = self.warps.get_mut(w.sm, w.slot).filter(|g| g.launched()) {
            join(g, &self.schedulers[g.sched as usize].groups, group);
        }
    }

    /// Version 6: the group of pipe `pipe` (by [`pipe_code`]) of scheduler `scheduler` of SM
    /// `sm` changed to `state`: so did each of its members, in the model's eyes (the tables
    /// of what follows a state learn nothing from it; both sides skip it alike).
    fn pipe_state(&mut self, sm: u32, scheduler: u32, pipe: u8, state: WarpState) {
        if let Some(&sched) = self.scheduler_index.get(sm, scheduler) {
            self.change_group(sched, pipe, state);
        }
    }

    /// [`pipe_state`](Self::pipe_state) of the scheduler at index `sched`.
    fn change_group(&mut self, sched: u32, pipe: u8, state: WarpState) {
        if let Some(group) = self.schedulers[sched as usize]
            .groups
            .get_mut(pipe as usize)
        {
            *group = (group.0.wrapping_add(1), Some(state));
        }
    }

    /// [`set_state`](Self::set_state) of warp `w` at `cycle`, returning whether `state` was
    /// its [`prediction`] and its last pc: one look-up for the three.
    #[inline(always)]
    fn change_to(&mut self, w: WarpRef, cycle: u64, state: WarpState) -> (bool, u32) {
        let Some(g) = self.warps.get_mut(w.sm, w.slot) else {
            return (false, UNKNOWN_WARP.pc);
        };
        if !g.launched() {
            return (false, g.pc);
        }
        let predicted = predict_and_settle(
            g,
            &mut self.schedulers,
            &mut self.by_pc,
            &self.pipe_by_pc,
            self.model,
            cycle,
            state,
        );
        (predicted, g.pc)
    }

    /// [`change_to`](Self::change_to) of a warp that is a member of its scheduler's warps
    /// (what [`position`](Self::position) finds); `None`, changing nothing, for any other.
    #[inline(always)]
    fn change_member(
        &mut self,
        w: WarpRef,
        cycle: u64,
        state: WarpState,
        group: u8,
    ) -> Option<Change> {
        let g = self.warps.get_mut(w.sm, w.slot)?;
        // A launched warp is at its position among its scheduler's members until it exits
        // (`launch` and `exit` keep them so), and a slot no warp_launch named has none: the
        // position alone says it is a member, without reading the members.
        if g.position == NOT_MEMBER {
            return None;
        }
        debug_assert!(g.launched());
        debug_assert_eq!(
            self.schedulers[g.sched as usize]
                .members
                .get(g.position as usize),
            Some(&w.slot)
        );
        let (scheduler, position, last_pc) = (g.sched, g.position as usize, g.pc);
        let predicted = predict_and_settle(
            g,
            &mut self.schedulers,
            &mut self.by_pc,
            &self.pipe_by_pc,
            self.model,
            cycle,
            state,
        );
        join(g, &self.schedulers[scheduler as usize].groups, group);
        Some(Change {
            scheduler,
            position,
            predicted,
            last_pc,
        })
    }

    /// Warp `w` changes state at `cycle`: to `state`, or with `None` to its prediction.
    /// Returns the new state; `None` if the warp is unknown or has no prediction.
    // Inlined: as a call it was 1 % more of the decode thread.
    #[inline(always)]
    fn change(&mut self, w: WarpRef, cycle: u64, state: Option<WarpState>) -> Option<WarpState> {
        let Groups {
            warps,
            schedulers,
            by_pc,
            pipe_by_pc,
            model,
            ..
        } = self;
        let g = warps.get_mut(w.sm, w.slot).filter(|g| g.launched())?;
        settle(g, &schedulers[g.sched as usize].groups);
        let state = match state {
            Some(s) => s,
            None => prediction(by_pc, schedulers, g, cycle)?,
        };
        let old_pipe = g.ready_pipe;
        let sched = &mut schedulers[g.sched as usize];
        let old = moved(g, &mut sched.next, by_pc, state);
        if *model {
            note_wait(g, state, pipe_by_pc);
            sched.note(g.position, old, old_pipe, state, g.ready_pipe);
        }
        Some(state)
    }

    /// The scheduler (index in `schedulers`) of a launched, resident warp and its position
    /// among the scheduler's warps.
    // Inlined into the state group's decoding: a call per group was 3 % of the decode thread.
    #[inline(always)]
    fn position(&self, w: WarpRef) -> Option<(u32, usize)> {
        let g = self.launched(w)?;
        // An exited warp keeps its record (without a state) but is no member.
        let members = &self.schedulers[g.sched as usize].members;
        (members.get(g.position as usize) == Some(&w.slot))
            .then_some((g.sched, g.position as usize))
    }
}

/// What [`Groups::change_member`] found: the warp's scheduler (index in
/// `Groups::schedulers`) and position among its warps, whether its new state was the
/// predicted one, and its last pc.
struct Change {
    scheduler: u32,
    position: usize,
    predicted: bool,
    last_pc: u32,
}

/// Whether a warp in `state` waits only for its pipe or queue (or could issue).
fn is_ready(state: WarpState) -> bool {
    matches!(
        state,
        WarpState::NotSelected
            | WarpState::PipeBusy { .. }
            | WarpState::LgThrottle
            | WarpState::MioThrottle
    )
}

/// Version 5: what warp `g`, now in `state`, waits for: the pipe of its next instruction when
/// only a pipe or queue holds it, or the producer pc it waits on.
#[inline]
fn note_wait(g: &mut WarpRec, state: WarpState, pipe_by_pc: &[u8]) {
    let next_pipe = || {
        pipe_by_pc
            .get(g.pc.wrapping_add(1) as usize)
            .copied()
            .unwrap_or(NO_PIPE)
    };
    g.ready_pipe = match state {
        WarpState::PipeBusy { pipe } => pipe_code(pipe),
        WarpState::LgThrottle => pipe_code(Pipe::Global),
        WarpState::NotSelected => next_pipe(),
        WarpState::MioThrottle => match next_pipe() {
            p @ (2 | 3) => p,
            _ => NO_PIPE,
        },
        _ => NO_PIPE,
    };
    if let WarpState::Scoreboard { producer_pc, .. }
    | WarpState::DependencyBarrier { producer_pc, .. } = state
    {
        g.producer = producer_pc;
    }
}

/// What a predicted run is made of: the issuers not yet `Selected`, per pipe the ready warps
/// that move to its entry state (and that state), and the warps to predict one by one.
struct RunMasks {
    selected: u64,
    moving: [u64; 6],
    entries: [WarpState; 6],
    one_by_one: u64,
}

/// A scheduler's place in the order of a cycle's runs.
fn sched_key(s: &GroupScheduler) -> u64 {
    (s.sm as u64) << 32 | s.id as u64
}

/// How a version-5 run names its scheduler (see [`Groups::pick`]).
#[derive(Debug, Clone, Copy)]
enum Pick {
    Nth(u64),
    Sched(u32),
}

/// Members of a scheduler a version-5 run can name (a u64 mask).
const RUN_SPAN: usize = 64;

/// The positions of a predicted run (see [`Groups::predicted_run`]) as a mask.
fn run_mask(run: &[(u32, WarpState)]) -> u64 {
    run.iter().fold(0, |m, &(p, _)| m | 1 << p)
}

/// The state `run` predicts at `position`, if any; positions are asked in increasing order,
/// `at` keeps the place in `run` from one to the next.
fn predicted_at(run: &[(u32, WarpState)], at: &mut usize, position: u32) -> Option<WarpState> {
    while *at < run.len() && run[*at].0 < position {
        *at += 1;
    }
    run.get(*at).filter(|p| p.0 == position).map(|p| p.1)
}

/// Launched warp `g` of the scheduler whose table is `next` changes to `state`: what follows
/// its old state is learnt, per scheduler and per pc. Returns the old state.
#[inline(always)]
fn moved(
    g: &mut WarpRec,
    next: &mut [Option<WarpState>; STATES as usize],
    by_pc: &mut Vec<[Option<WarpState>; STATES as usize]>,
    state: WarpState,
) -> Option<WarpState> {
    let old = g.state;
    if let Some(prev) = old {
        let from = state_code(&prev) as usize;
        next[from] = Some(state);
        learn_by_pc(by_pc, g.pc, from, state);
    }
    g.state = Some(state);
    old
}

/// Learns that a warp whose last issue was at `pc` went from state `from` to `state` (the pc
/// table of predictions; pcs past `DENSE_PCS` are not learnt).
#[inline(always)]
fn learn_by_pc(
    by_pc: &mut Vec<[Option<WarpState>; STATES as usize]>,
    pc: u32,
    from: usize,
    state: WarpState,
) {
    if pc < DENSE_PCS {
        let pc = pc as usize;
        if by_pc.len() <= pc {
            by_pc.resize(pc + 1, [None; STATES as usize]);
        }
        by_pc[pc][from] = Some(state);
    }
}

/// Whether `state` is what was predicted for warp `g` at `cycle`, once `g` (and its
/// scheduler) took `state` in. The writer's: `by_pc` has all its [`DENSE_PCS`] rows (see
/// [`BinaryWriter::with_raw_header`]).
#[inline(always)]
fn predict_and_settle(
    g: &mut WarpRec,
    schedulers: &mut [GroupScheduler],
    by_pc: &mut [[Option<WarpState>; STATES as usize]],
    pipe_by_pc: &[u8],
    model: bool,
    cycle: u64,
    state: WarpState,
) -> bool {
    // `prediction`, then what `Groups::change` does, in one: the old state's code and the
    // pc's row of `by_pc` are found once for reading the prediction and learning the change.
    let sched = &mut schedulers[g.sched as usize];
    settle(g, &sched.groups);
    let old = g.state;
    let old_pipe = g.ready_pipe;
    let issued_now = g.issued == Some(cycle);
    let predicted = match old {
        Some(prev) => {
            let from = state_code(&prev) as usize;
            // Rows exist only below `DENSE_PCS`.
            let row = by_pc.get_mut(g.pc as usize);
            let guess = if issued_now {
                Some(WarpState::Selected)
            } else {
                row.as_ref().and_then(|t| t[from]).or(sched.next[from])
            };
            sched.next[from] = Some(state);
            if let Some(t) = row {
                t[from] = Some(state);
            }
            guess == Some(state)
        }
        None => issued_now && state == WarpState::Selected,
    };
    g.state = Some(state);
    if model {
        note_wait(g, state, pipe_by_pc);
        sched.note(g.position, old, old_pipe, state, g.ready_pipe);
    }
    predicted
}

/// The state launched warp `g` is predicted to change to at `cycle`: `Selected` if it issued
/// then, else what followed its current state last time at its pc, or else on its scheduler.
#[inline]
fn prediction(
    by_pc: &[[Option<WarpState>; STATES as usize]],
    schedulers: &[GroupScheduler],
    g: &WarpRec,
    cycle: u64,
) -> Option<WarpState> {
    if g.issued == Some(cycle) {
        return Some(WarpState::Selected);
    }
    let from = state_code(&g.state?) as usize;
    by_pc
        .get(g.pc as usize)
        .and_then(|t| t[from])
        .or_else(|| schedulers[g.sched as usize].next[from])
}

impl Context {
    /// The context of `encoding` (the issue-stage model from `limits` from encoding 5).
    fn new(encoding: u16, limits: IssueLimits) -> Self {
        Context {
            last_cycle: 0,
            prev_warp: WarpRef { sm: 0, slot: 0 },
            groups: Groups {
                limits,
                model: writes_runs(encoding),
                last_run: (u64::MAX, 0),
                ..Groups::default()
            },
            completions: Completions::default(),
        }
    }

    #[inline]
    fn last_pc(&self, w: WarpRef) -> u32 {
        self.groups.last_pc(w)
    }
}

// ---------------------------------------------------------------------------------------------
// Encoder.

struct Encoder {
    cx: Context,
    /// Consecutive warp_state events of one scheduler in one cycle, in member order, not yet
    /// encoded.
    run: Vec<RunMember>,
    run_cycle: u64,
    run_scheduler: u32,
    /// A predicted run (see [`Groups::predicted_run`]).
    predicted: Vec<(u32, WarpState)>,
    /// The event encoding written: 4, 5 or 6.
    encoding: u16,
}

/// A warp_state event of the run being gathered.
#[derive(Debug, Clone, Copy)]
struct RunMember {
    warp: WarpRef,
    state: WarpState,
    /// Its position among its scheduler's warps.
    position: usize,
    /// Version 4, which takes each state change into the context as it comes (a run's
    /// predictions are those of its members one after another): whether the state was the
    /// predicted one, and the warp's last pc.
    predicted: bool,
    last_pc: u32,
    /// Version 6: the pipe group it joins ([`NO_PIPE`]: none).
    group: u8,
}

/// Whether a warp in `state` can be in a pipe group: the states of a warp ready but for its
/// pipe or that pipe's queue. Version 6 writes a group byte after each such state.
fn groupable(state: &WarpState) -> bool {
    matches!(
        state,
        WarpState::NotSelected
            | WarpState::PipeBusy { .. }
            | WarpState::MioThrottle
            | WarpState::LgThrottle
    )
}

/// Version 6's byte after a [`groupable`] state: 0 for no group, else 1 + the pipe's code.
fn group_byte(group: u8) -> u8 {
    match group {
        NO_PIPE => 0,
        p => p + 1,
    }
}

/// Version 6: a group byte (see [`group_byte`]) as the pipe code, [`NO_PIPE`] for none.
fn group_of(cur: &mut Cursor) -> Result<u8, TraceError> {
    let off = cur.offset();
    match cur.byte("pipe group")? {
        0 => Ok(NO_PIPE),
        b => pipe_of(cur, off, b - 1).map(pipe_code),
    }
}

/// The fields of a warp state after its code (register, producer, barrier, pipe).
#[inline(always)]
fn put_state_details(out: &mut Vec<u8>, state: &WarpState, last_pc: u32) {
    match *state {
        WarpState::Scoreboard {
            reg,
            producer_pc,
            path,
        } => {
            put_varint(out, reg_code(reg));
            put_varint(out, pc_delta(producer_pc, last_pc));
            out.push(path_code(path));
        }
        WarpState::DependencyBarrier {
            barrier,
            producer_pc,
            path,
        } => {
            out.push(barrier);
            put_varint(out, pc_delta(producer_pc, last_pc));
            out.push(path_code(path));
        }
        WarpState::PipeBusy { pipe } => out.push(pipe_code(pipe)),
        _ => {}
    }
}

impl Encoder {
    // Inlined: most callers pass a known `warp` (or none), and as a call it was a tenth of
    // the encoder thread.
    #[inline(always)]
    fn tag(
        &mut self,
        tags: &mut Vec<u8>,
        warps: &mut Vec<u8>,
        code: u8,
        cycle: u64,
        warp: Option<WarpRef>,
    ) {
        let delta = cycle - self.cx.last_cycle;
        self.cx.last_cycle = cycle;
        let same = match warp {
            Some(w) if w == self.cx.prev_warp => SAME_WARP,
            _ => 0,
        };
        let inline = delta.min(DELTA_ESCAPE as u64) as u8;
        tags.push(code | (inline << DELTA_SHIFT) | same);
        if inline == DELTA_ESCAPE {
            put_varint(tags, delta - DELTA_ESCAPE as u64);
        }
        if let Some(w) = warp {
            if same == 0 {
                if w.sm == self.cx.prev_warp.sm {
                    put_varint(
                        warps,
                        zigzag(w.slot as i64 - self.cx.prev_warp.slot as i64) << 1,
                    );
                } else {
                    put_varint(warps, ((w.sm as u64) << 1) | 1);
                    put_varint(warps, w.slot as u64);
                }
            }
            self.cx.prev_warp = w;
        }
    }

    /// Takes a warp_state event into the current run, encoding the run first when the event
    /// cannot extend it. Returns `false` only if the event joined a run already started
    /// (nothing was encoded since the previous event).
    // Inlined into the writer's loop: most events only extend the run, and as calls the
    // writer, this and `flush_run` spent more on their frames than on the extending.
    #[inline(always)]
    fn push_state(
        &mut self,
        s: &mut Streams,
        cycle: u64,
        w: WarpRef,
        state: WarpState,
        group: u8,
    ) -> bool {
        let member = if writes_runs(self.encoding) {
            // Version 5 names members by position in a u64 mask, and predicts a run from the
            // states before it: the changes are taken in when the run is encoded.
            self.cx
                .groups
                .position(w)
                .filter(|&(_, i)| i < RUN_SPAN)
                .map(|(scheduler, position)| {
                    let m = RunMember {
                        warp: w,
                        state,
                        position,
                        predicted: false,
                        last_pc: 0,
                        group,
                    };
                    (scheduler, m)
                })
        } else {
            self.cx
                .groups
                .change_member(w, cycle, state, group)
                .map(|c| {
                    let m = RunMember {
                        warp: w,
                        state,
                        position: c.position,
                        predicted: c.predicted,
                        last_pc: c.last_pc,
                        group,
                    };
                    (c.scheduler, m)
                })
        };
        let Some((scheduler, m)) = member else {
            self.lone_state(s, cycle, w, state, group);
            return true;
        };
        // Still `true` for a run started here: a held-back issue may have been encoded just
        // before.
        let joins = self.extends(cycle, scheduler, m.position);
        if !joins {
            // Most runs (two in three) start after an issue or another event encoded the
            // last one: then there is nothing to encode.
            self.flush_run(s);
            self.run_cycle = cycle;
            self.run_scheduler = scheduler;
        }
        // Pushed here whether it starts a run or not: built once, where it is kept (a call
        // to start a run with it copied it through the stack for every event).
        self.run.push(m);
        !joins
    }

    /// Whether a member at `position` of `scheduler` at `cycle` can join the current run.
    #[inline(always)]
    fn extends(&self, cycle: u64, scheduler: u32, position: usize) -> bool {
        let (Some(first), Some(last)) = (self.run.first(), self.run.last()) else {
            return false;
        };
        cycle == self.run_cycle
            && scheduler == self.run_scheduler
            && position > last.position
            // Version 4 names members by position after the first, in a u64 mask.
            && (writes_runs(self.encoding) || position - first.position <= GROUP_SPAN)
    }

    /// Encodes the current run, then the state change alone: no run can hold it.
    #[inline(never)]
    fn lone_state(&mut self, s: &mut Streams, cycle: u64, w: WarpRef, state: WarpState, group: u8) {
        self.flush_run(s);
        self.single_state(s, cycle, w, state, group);
    }

    /// Encodes the buffered run, if any.
    #[inline(always)]
    fn flush_run(&mut self, s: &mut Streams) {
        if !self.run.is_empty() {
            self.encode_run(s);
        }
    }

    /// Encodes the buffered run: version 5 as a run record; version 4 one event as itself,
    /// several as a state group.
    #[inline(never)]
    fn encode_run(&mut self, s: &mut Streams) {
        match self.run.len() {
            _ if writes_runs(self.encoding) => self.run_record(s),
            1 => {
                let m = self.run[0];
                let cycle = self.run_cycle;
                self.state_record(s, cycle, m.warp, m.state, m.predicted, m.last_pc, m.group);
            }
            _ => self.state_group(s),
        }
        self.run.clear();
    }

    /// One state change no run holds (of a warp no warp_launch named, or, in version 5, past
    /// a run's reach).
    fn single_state(
        &mut self,
        s: &mut Streams,
        cycle: u64,
        w: WarpRef,
        state: WarpState,
        group: u8,
    ) {
        let (predicted, last_pc) = self.cx.groups.change_to(w, cycle, state);
        self.cx.groups.set_group(w, group);
        let predicted = predicted && !writes_runs(self.encoding);
        self.state_record(s, cycle, w, state, predicted, last_pc, group);
    }

    /// A warp_state event as itself: the predicted tag, or the state's code and details.
    // Inlined: most runs are one event long, and this call was half of encoding one.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn state_record(
        &mut self,
        s: &mut Streams,
        cycle: u64,
        w: WarpRef,
        state: WarpState,
        predicted: bool,
        last_pc: u32,
        group: u8,
    ) {
        let [tags, _, warps, ..] = &mut s.bufs;
        if predicted {
            self.tag(tags, warps, T_STATE_PREDICTED, cycle, Some(w));
        } else {
            let code = T_STATE + state_code(&state);
            self.tag(tags, warps, code, cycle, Some(w));
            put_state_details(&mut s.bufs[S_STATE_ARGS], &state, last_pc);
        }
        if self.encoding == GROUPS && groupable(&state) {
            s.bufs[S_STATE_ARGS].push(group_byte(group));
        }
    }

    /// Version 4: a state group — the first warp, a bit mask of the other members (by
    /// position after the first), a bit mask of the members whose state is not the predicted
    /// one, and those states.
    fn state_group(&mut self, s: &mut Streams) {
        let cycle = self.run_cycle;
        let first = self.run[0];
        let [tags, _, warps, ..] = &mut s.bufs;
        self.tag(tags, warps, T_STATE_GROUP, cycle, Some(first.warp));
        let members = self.run[1..]
            .iter()
            .fold(0u64, |m, r| m | 1 << (r.position - first.position - 1));
        put_varint(&mut s.bufs[S_GROUPS], members);
        let mut misses = 0u64;
        let states = &mut s.bufs[S_STATE_ARGS];
        let grouped = self.encoding == GROUPS;
        for (k, m) in self.run.iter().enumerate() {
            if !m.predicted {
                misses |= 1 << k;
                states.push(state_code(&m.state));
                put_state_details(states, &m.state, m.last_pc);
            }
            if grouped && groupable(&m.state) {
                states.push(group_byte(m.group));
            }
        }
        put_varint(&mut s.bufs[S_GROUPS], misses);
    }

    /// Version 5: the buffered run as one record — which scheduler (see [`Groups::pick`])
    /// and, unless it is exactly the predicted run, how it differs: the members as a mask
    /// XOR the predicted ones, a mask of the members whose state is written, those states.
    fn run_record(&mut self, s: &mut Streams) {
        let cycle = self.run_cycle;
        let sched = self.run_scheduler;
        let mut predicted = std::mem::take(&mut self.predicted);
        let groups = &self.cx.groups;
        let picked = groups.pick(cycle, Pick::Sched(sched), &mut predicted);
        if picked.is_none() {
            groups.predicted_run(sched, cycle, &mut predicted);
        }
        let exact = picked.is_some()
            && predicted.len() == self.run.len()
            && predicted
                .iter()
                .zip(&self.run)
                .all(|(&(p, predicted), m)| p as usize == m.position && predicted == m.state);
        let code = if exact { T_RUN_EXACT } else { T_RUN };
        let [tags, _, state_warps, ..] = &mut s.bufs;
        self.tag(tags, state_warps, code, cycle, None);
        let g = &self.cx.groups.schedulers[sched as usize];
        let (sm, id) = (g.sm, g.id);
        match picked {
            Some((_, k)) => put_varint(state_warps, k),
            None => {
                put_varint(state_warps, 0);
                put_varint(state_warps, sm as u64);
                put_varint(state_warps, id as u64);
            }
        }
        if !exact {
            let pmask = run_mask(&predicted);
            let amask = self.run.iter().fold(0u64, |a, m| a | 1 << m.position);
            put_varint(&mut s.bufs[S_GROUPS], pmask ^ amask);
            let mut misses = 0u64;
            let mut at = 0;
            for (k, m) in self.run.iter().enumerate() {
                let guess = predicted_at(&predicted, &mut at, m.position as u32);
                if guess != Some(m.state) {
                    misses |= 1 << k;
                    let out = &mut s.bufs[S_STATE_ARGS];
                    out.push(state_code(&m.state));
                    put_state_details(out, &m.state, self.cx.groups.last_pc(m.warp));
                }
            }
            put_varint(&mut s.bufs[S_GROUPS], misses);
        }
        for m in &self.run {
            self.cx.groups.set_state(m.warp, m.state);
        }
        self.cx.groups.last_run = (cycle, (sm as u64) << 32 | id as u64);
        self.predicted = predicted;
    }

    /// Encodes issue `e`; `selected_follows` (version 4) marks an issue whose
    /// `warp_state(Selected)` (same warp, same cycle) comes next and is elided.
    #[inline(never)]
    fn issue(&mut self, s: &mut Streams, e: &Issue, selected_follows: bool) {
        self.issue_inlined(s, e, selected_follows);
    }

    /// [`issue`](Self::issue), inlined where the writer meets the `Selected` after an issue
    /// (nine issues in ten): as a call, its frame was a tenth of the issue's cost.
    #[inline(always)]
    fn issue_inlined(&mut self, s: &mut Streams, e: &Issue, selected_follows: bool) {
        let [tags, issue_warps, _, _, out, ..] = &mut s.bufs;
        self.tag(tags, issue_warps, T_ISSUE, e.cycle, Some(e.warp));
        let (lanes, last) = self
            .cx
            .groups
            .issue(e.warp, e.cycle, e.pc, e.pipe, selected_follows);
        let predicted = last.wrapping_add(1);
        let mut flags = pipe_code(e.pipe);
        if e.slot != 0 {
            flags |= F_SLOT;
        }
        if e.active != lanes {
            flags |= F_ACTIVE;
        }
        if e.pc != predicted {
            flags |= F_PC;
        }
        if selected_follows {
            flags |= F_SELECTED;
        }
        out.push(flags);
        if flags & F_PC != 0 {
            put_varint(out, pc_delta(e.pc, predicted));
        }
        if flags & F_ACTIVE != 0 {
            put_varint(out, e.active as u64);
        }
        if flags & F_SLOT != 0 {
            put_varint(out, e.slot as u64);
        }
        self.cx.completions.issue_inlined(e.warp, e.cycle, e.pc);
    }

    /// Encodes warp `w`'s completion of `pc` at `cycle`.
    // Called by the writer directly: through `encode` each completion (a sixth of the events)
    // paid for its frame and second dispatch. Inlined there: the call's frame was 1 % of the
    // encoder thread.
    #[inline(always)]
    fn complete(&mut self, s: &mut Streams, cycle: u64, w: WarpRef, pc: u32) {
        let [tags, _, _, warps, _, _, _, out] = &mut s.bufs;
        if self.cx.completions.retire(w, pc, cycle) {
            self.tag(tags, warps, T_COMPLETE_PREDICTED, cycle, None);
        } else {
            self.tag(tags, warps, T_COMPLETE, cycle, Some(w));
            put_varint(out, pc_delta(pc, self.cx.last_pc(w)));
        }
        self.cx.groups.complete(w, pc, cycle);
    }

    /// Version 6: a pipe group's change (code [`T_REFILL`] with the same-warp bit, which
    /// an event without a warp cannot otherwise have): sm, scheduler, the pipe, the state.
    fn pipe_state(
        &mut self,
        s: &mut Streams,
        cycle: u64,
        sm: u32,
        scheduler: u32,
        pipe: Pipe,
        state: WarpState,
    ) {
        let [tags, _, _, warps, _, _, _, out] = &mut s.bufs;
        self.tag(tags, warps, T_PIPE_STATE, cycle, None);
        put_varint(out, sm as u64);
        put_varint(out, scheduler as u64);
        out.push(pipe_code(pipe));
        out.push(state_code(&state));
        put_state_details(out, &state, 0);
        self.cx
            .groups
            .pipe_state(sm, scheduler, pipe_code(pipe), state);
    }

    /// Encodes `e`, an event other than a warp_state or an issue.
    fn encode(&mut self, s: &mut Streams, e: &Event) {
        let [tags, _, _, warps, _, _, _, out] = &mut s.bufs;
        let cycle = e.cycle();
        match e {
            Event::KernelLaunch { launch, .. } => {
                self.tag(tags, warps, T_KERNEL_LAUNCH, cycle, None);
                put_varint(out, *launch as u64);
            }
            Event::KernelComplete { launch, .. } => {
                self.tag(tags, warps, T_KERNEL_COMPLETE, cycle, None);
                put_varint(out, *launch as u64);
            }
            Event::BlockAssign {
                launch, block, sm, ..
            } => {
                self.tag(tags, warps, T_BLOCK_ASSIGN, cycle, None);
                for v in [*launch, *block, *sm] {
                    put_varint(out, v as u64);
                }
            }
            Event::BlockComplete {
                launch, block, sm, ..
            } => {
                self.tag(tags, warps, T_BLOCK_COMPLETE, cycle, None);
                for v in [*launch, *block, *sm] {
                    put_varint(out, v as u64);
                }
            }
            Event::WarpLaunch { warp, info, .. } => {
                self.tag(tags, warps, T_WARP_LAUNCH, cycle, Some(*warp));
                for v in [
                    info.launch,
                    info.block,
                    info.ctaid.x,
                    info.ctaid.y,
                    info.ctaid.z,
                    info.warp_in_block,
                    info.scheduler,
                ] {
                    put_varint(out, v as u64);
                }
                // Lanes stored inverted: a full warp costs one byte.
                put_varint(out, !info.lanes as u64);
                self.cx.groups.launch(*warp, info.scheduler, info.lanes);
            }
            Event::WarpExit { warp, .. } => {
                self.tag(tags, warps, T_WARP_EXIT, cycle, Some(*warp));
                self.cx.groups.exit(*warp);
            }
            // Written by `push_state` and `issue`, never through here.
            Event::WarpState { .. } | Event::Issue { .. } => {}
            Event::Complete { warp, pc, .. } => self.complete(s, cycle, *warp, *pc),
            Event::Refill {
                sm,
                scheduler,
                slots,
                ..
            } => {
                self.tag(tags, warps, T_REFILL, cycle, None);
                for v in [*sm, *scheduler, *slots] {
                    put_varint(out, v as u64);
                }
            }
            Event::BarrierArrive { warp, .. } => {
                self.tag(tags, warps, T_BARRIER_ARRIVE, cycle, Some(*warp))
            }
            Event::BarrierRelease {
                sm, launch, block, ..
            } => {
                self.tag(tags, warps, T_BARRIER_RELEASE, cycle, None);
                for v in [*sm, *launch, *block] {
                    put_varint(out, v as u64);
                }
            }
            Event::Memory { warp, pc, mem, .. } => {
                self.tag(tags, warps, T_MEMORY, cycle, Some(*warp));
                put_varint(out, pc_delta(*pc, self.cx.last_pc(*warp)));
                let space = match mem.space {
                    MemSpace::Global => 0,
                    MemSpace::Shared => 1,
                };
                let kind = match mem.kind {
                    MemKind::Load => 0,
                    MemKind::Store => 1,
                    MemKind::Atomic => 2,
                };
                out.push(space | (kind << 1) | (level_code(mem.level) << 3));
                put_varint(out, mem.sectors as u64);
                put_varint(out, mem.replays as u64);
                put_varint(out, zigzag(mem.complete_at.wrapping_sub(cycle) as i64));
            }
            Event::Hazard { warp, hazard, .. } => {
                self.tag(tags, warps, T_HAZARD, cycle, Some(*warp));
                out.push(match hazard.kind {
                    HazardKind::Raw => 0,
                    HazardKind::War => 1,
                    HazardKind::Waw => 2,
                });
                put_varint(out, reg_code(hazard.reg));
                put_varint(out, hazard.producer_pc as u64);
                put_varint(out, hazard.consumer_pc as u64);
            }
            Event::Fault { fault, .. } => {
                self.tag(tags, warps, T_FAULT, cycle, None);
                let json = serde_json::to_vec(fault).expect("a fault serializes");
                put_varint(out, json.len() as u64);
                out.extend_from_slice(&json);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writer.

/// The streams a block's events are split into (version 4; versions 1–3 had three: tags,
/// warps, fields): tags and cycle deltas, then warp references and fields, each split by
/// the kind of event — kept apart, alike values sit together and deflate far better.
#[derive(Debug, Default)]
struct Streams {
    bufs: [Vec<u8>; STREAMS],
}

impl Streams {
    fn len(&self) -> usize {
        self.bufs.iter().map(Vec::len).sum()
    }
}

/// The payload of an events block: kind, decoded length, then each stream's decoded and
/// compressed lengths, then their DEFLATE streams (each stream deflated alone gets codes
/// fitted to its own values).
fn events_payload(streams: &[Vec<u8>], level: i32) -> Vec<u8> {
    let deflated: Vec<Vec<u8>> = streams
        .iter()
        .map(|b| match b.is_empty() {
            true => Vec::new(),
            false => deflate(b, level),
        })
        .collect();
    let mut payload = vec![BLOCK_EVENTS];
    put_varint(&mut payload, streams.iter().map(|b| b.len() as u64).sum());
    for (b, z) in streams.iter().zip(&deflated) {
        put_varint(&mut payload, b.len() as u64);
        put_varint(&mut payload, z.len() as u64);
    }
    for z in &deflated {
        payload.extend_from_slice(z);
    }
    payload
}

/// Blocks compressed on a second thread while the simulation goes on (DEFLATE is a third of
/// the recorder's work); payloads come back in the order the blocks went in, so the file is
/// the same bytes as when compressing in line.
struct Compressor {
    blocks: mpsc::Sender<Vec<Vec<u8>>>,
    payloads: mpsc::Receiver<Vec<u8>>,
    in_flight: usize,
}

/// Blocks handed to the compressor and not yet written, at most (bounds the memory held).
const MAX_IN_FLIGHT: usize = 2;

impl Compressor {
    /// `None` if no thread can be started or no core would run it (the writer then compresses
    /// in line).
    fn start(level: i32) -> Option<Compressor> {
        if !crate::threads::helpers_pay() {
            return None;
        }
        let (blocks, inbox) = mpsc::channel::<Vec<Vec<u8>>>();
        let (outbox, payloads) = mpsc::channel();
        std::thread::Builder::new()
            .name("trace-deflate".into())
            .spawn(move || {
                for raw in inbox {
                    if outbox.send(events_payload(&raw, level)).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Compressor {
            blocks,
            payloads,
            in_flight: 0,
        })
    }
}

fn compressor_stopped() -> TraceError {
    TraceError::io("compressing a block")(std::io::Error::other("the compression thread stopped"))
}

/// An issue event's fields.
#[derive(Debug, Clone, Copy)]
struct Issue {
    cycle: u64,
    warp: WarpRef,
    pc: u32,
    active: u32,
    pipe: Pipe,
    slot: u32,
}

/// Writes a binary trace: header at construction, events with [`BinaryWriter::write`], the
/// trailer with [`BinaryWriter::finish`].
pub struct BinaryWriter<W: Write> {
    out: W,
    compressor: Option<Compressor>,
    /// Version 4: an issue held back to see whether its `Selected` follows.
    pending: Option<Issue>,
    enc: Encoder,
    /// The format version written (the encoder knows only its encoding).
    version: u16,
    streams: Streams,
    /// The cycle of the last event written (events come in cycle order).
    last_cycle: u64,
    events: u64,
    /// Until `events` reaches this, the streams cannot have reached [`BLOCK_TARGET`] (see
    /// [`maybe_flush`](Self::maybe_flush)).
    check_from: u64,
    offset: u64,
}

/// Bytes one event other than a fault (whose JSON has no bound) can add to the streams at
/// most, with room to spare, when the members of a run count as written by the events that
/// joined them: a held-back issue (37), a run's record less its members (42), then the event
/// itself (a warp_launch: 61, a member: [`MAX_MEMBER_BYTES`]). Counted whole, a run of 64
/// members (618 bytes) made the bound four times larger and the writer looked at the streams'
/// length three times as often.
const MAX_EVENT_BYTES: usize = 256;

/// Bytes one member of a run adds to its record at most, with room to spare (its state's code
/// and details: 9).
const MAX_MEMBER_BYTES: usize = 16;

impl<W: Write> BinaryWriter<W> {
    pub fn new(out: W, header: &TraceHeader) -> Result<Self, TraceError> {
        let json = serde_json::to_string(header).expect("a trace header serializes");
        Self::with_raw_header(out, &json, DEFAULT_VERSION)
    }

    /// Writes `header_json` verbatim as the header (used by format conversion, so that a
    /// converted trace is byte-identical to the original), in format `version` (7, 8 or 9:
    /// every version this build writes puts the header under a CRC; any other is an error,
    /// and nothing is written).
    pub fn with_raw_header(
        mut out: W,
        header_json: &str,
        version: u16,
    ) -> Result<Self, TraceError> {
        if ![DEFAULT_VERSION, COMPACT_VERSION, GROUPED_VERSION].contains(&version) {
            return Err(TraceError::UnwritableVersion { version });
        }
        if header_json.len() as u64 > MAX_LEN {
            return Err(TraceError::Oversized {
                offset: 10,
                what: "header",
                len: header_json.len() as u64,
                limit: MAX_LEN,
            });
        }
        let mut head = Vec::with_capacity(18 + header_json.len());
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&version.to_le_bytes());
        head.extend_from_slice(&(header_json.len() as u32).to_le_bytes());
        let crc = header_crc(&head[8..14], header_json.as_bytes());
        head.extend_from_slice(&crc.to_le_bytes());
        head.extend_from_slice(header_json.as_bytes());
        out.write_all(&head)
            .map_err(TraceError::io("writing the header"))?;
        // The issue-stage model needs the config; a header that is no trace header makes an
        // unreadable file anyway.
        let limits = serde_json::from_str::<TraceHeader>(header_json)
            .map(|h| IssueLimits::of(&h))
            .unwrap_or_default();
        let encoding = encoding(version);
        let mut cx = Context::new(encoding, limits);
        // Every row at once (480 KiB): a missing row reads as no prediction, as a row of
        // `None`s does, and the writer's state changes then look theirs up without growing
        // the table (a test for every change).
        cx.groups.by_pc = vec![[None; STATES as usize]; DENSE_PCS as usize];
        Ok(BinaryWriter {
            out,
            enc: Encoder {
                cx,
                run: Vec::new(),
                run_cycle: 0,
                run_scheduler: 0,
                predicted: Vec::new(),
                encoding,
            },
            version,
            streams: Streams::default(),
            compressor: Compressor::start(deflate_level(encoding)),
            pending: None,
            last_cycle: 0,
            events: 0,
            check_from: 0,
            offset: head.len() as u64,
        })
    }

    /// Appends one event; an event earlier than the previous one is rejected.
    // Inlined into the loop of `TraceWriter::write_events`.
    #[inline(always)]
    pub fn write(&mut self, event: &Event) -> Result<(), TraceError> {
        // The cycle is taken in each arm: `Event::cycle`'s own match on the variant was 3 %
        // of the encoder thread.
        match *event {
            Event::WarpState { cycle, warp, state } => {
                return self.state_event(cycle, warp, state, NO_PIPE)
            }
            Event::Issue {
                cycle,
                warp,
                pc,
                active,
                pipe,
                slot,
            } => {
                self.advance(cycle)?;
                let issue = Issue {
                    cycle,
                    warp,
                    pc,
                    active,
                    pipe,
                    slot,
                };
                if let Some(p) = &self.pending {
                    self.enc.issue(&mut self.streams, p, false);
                    self.pending = None;
                }
                self.enc.flush_run(&mut self.streams);
                // Version 4 elides the `Selected` after an issue (version 5's runs predict it).
                if !writes_runs(self.enc.encoding) {
                    self.pending = Some(issue);
                } else {
                    self.enc.issue(&mut self.streams, &issue, false);
                }
            }
            Event::Complete { cycle, warp, pc } => {
                self.advance(cycle)?;
                if let Some(p) = &self.pending {
                    self.enc.issue(&mut self.streams, p, false);
                    self.pending = None;
                }
                self.enc.flush_run(&mut self.streams);
                self.enc.complete(&mut self.streams, cycle, warp, pc);
            }
            _ => {
                self.advance(event.cycle())?;
                if let Some(p) = &self.pending {
                    self.enc.issue(&mut self.streams, p, false);
                    self.pending = None;
                }
                self.enc.flush_run(&mut self.streams);
                self.enc.encode(&mut self.streams, event);
                if matches!(event, Event::Fault { .. }) {
                    // Its JSON has no bound: look at the streams' length now.
                    self.check_from = 0;
                }
            }
        }
        self.maybe_flush()
    }

    /// A warp_state event, of a warp that joins the group of pipe `group` (by [`pipe_code`];
    /// [`NO_PIPE`] for none: always so before version 6).
    #[inline(always)]
    fn state_event(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        state: WarpState,
        group: u8,
    ) -> Result<(), TraceError> {
        self.advance(cycle)?;
        // The held-back issue is encoded where it is and then dropped: taking it out first
        // copied it, for every issue.
        if let Some(p) = &self.pending {
            let follows =
                matches!(state, WarpState::Selected) && p.cycle == cycle && p.warp == warp;
            self.enc.issue_inlined(&mut self.streams, p, follows);
            self.pending = None;
            if follows {
                return self.maybe_flush();
            }
        }
        if !self
            .enc
            .push_state(&mut self.streams, cycle, warp, state, group)
        {
            // Only buffered: no stream grew.
            return Ok(());
        }
        self.maybe_flush()
    }

    /// [`Observer::ready_state`](crate::sim::observer::Observer::ready_state): a warp_state
    /// event whose warp joins the group of `pipe`. Only version 6 stores the group; the
    /// others write the warp_state event.
    pub fn write_ready_state(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        state: WarpState,
        pipe: Pipe,
    ) -> Result<(), TraceError> {
        let group = match self.enc.encoding == GROUPS && groupable(&state) {
            true => pipe_code(pipe),
            false => NO_PIPE,
        };
        self.state_event(cycle, warp, state, group)
    }

    /// [`Observer::pipe_state`](crate::sim::observer::Observer::pipe_state): the group of
    /// `pipe` of scheduler `scheduler` of SM `sm` changed to `state`. Version 6 only: no
    /// other version can store it.
    pub fn write_pipe_state(
        &mut self,
        cycle: u64,
        sm: u32,
        scheduler: u32,
        pipe: Pipe,
        state: WarpState,
    ) -> Result<(), TraceError> {
        if self.enc.encoding != GROUPS || !groupable(&state) {
            return Err(TraceError::Unsupported(format!(
                "a pipe group's change to {state:?} in format version {}",
                self.version
            )));
        }
        self.advance(cycle)?;
        if let Some(p) = &self.pending {
            self.enc.issue(&mut self.streams, p, false);
            self.pending = None;
        }
        self.enc.flush_run(&mut self.streams);
        self.enc
            .pipe_state(&mut self.streams, cycle, sm, scheduler, pipe, state);
        self.maybe_flush()
    }

    /// Counts an event at `cycle`, rejecting it if earlier than the previous one.
    #[inline(always)]
    fn advance(&mut self, cycle: u64) -> Result<(), TraceError> {
        if cycle < self.last_cycle {
            return Err(self.out_of_order(cycle));
        }
        self.last_cycle = cycle;
        self.events += 1;
        Ok(())
    }

    #[cold]
    fn out_of_order(&self, cycle: u64) -> TraceError {
        TraceError::OutOfOrder {
            offset: self.offset,
            previous: self.last_cycle,
            cycle,
        }
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// The format version written.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Closes the block once the streams reach [`BLOCK_TARGET`] bytes. Their length (a sum
    /// over eight streams) is looked at only once enough events have passed since the last
    /// look for them to have reached it, at [`MAX_EVENT_BYTES`] each beyond the run kept back.
    #[inline(always)]
    fn maybe_flush(&mut self) -> Result<(), TraceError> {
        if self.events < self.check_from {
            debug_assert!(self.streams.len() < BLOCK_TARGET);
            return Ok(());
        }
        self.check_flush()
    }

    // Out of line: summing the eight lengths for every event was 2 % of the encoder thread.
    #[inline(never)]
    fn check_flush(&mut self) -> Result<(), TraceError> {
        if self.streams.len() >= BLOCK_TARGET {
            self.flush_block()?;
        }
        // The members already in the run are written by a later event, beyond its own bound.
        let pending = self.enc.run.len() * MAX_MEMBER_BYTES;
        let room = BLOCK_TARGET.saturating_sub(self.streams.len() + pending + 1);
        self.check_from = self.events + (room / MAX_EVENT_BYTES) as u64 + 1;
        Ok(())
    }

    fn write_block(&mut self, payload: &[u8]) -> Result<(), TraceError> {
        let mut frame = [0u8; 8];
        frame[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        frame[4..].copy_from_slice(&crc32(payload).to_le_bytes());
        self.out
            .write_all(&frame)
            .and_then(|_| self.out.write_all(payload))
            .map_err(TraceError::io("writing a block"))?;
        self.offset += 8 + payload.len() as u64;
        Ok(())
    }

    fn flush_block(&mut self) -> Result<(), TraceError> {
        if self.streams.bufs[S_TAGS].is_empty() {
            return Ok(());
        }
        // The next block's streams are likely as long as these: reserving that much spares
        // them growing step by step.
        let raw: Vec<Vec<u8>> = self
            .streams
            .bufs
            .iter_mut()
            .map(|b| {
                let len = b.len();
                std::mem::replace(b, Vec::with_capacity(len))
            })
            .collect();
        match self.compressor.as_mut() {
            Some(c) => {
                c.blocks.send(raw).map_err(|_| compressor_stopped())?;
                c.in_flight += 1;
                self.write_compressed(MAX_IN_FLIGHT)
            }
            None => self.write_block(&events_payload(&raw, deflate_level(self.enc.encoding))),
        }
    }

    /// Writes compressed blocks as they come back until at most `keep` are in flight.
    fn write_compressed(&mut self, keep: usize) -> Result<(), TraceError> {
        while let Some(c) = self.compressor.as_mut().filter(|c| c.in_flight > keep) {
            let payload = c.payloads.recv().map_err(|_| compressor_stopped())?;
            c.in_flight -= 1;
            self.write_block(&payload)?;
        }
        Ok(())
    }

    /// Writes the last events and the trailer, flushes, and returns the writer.
    pub fn finish(mut self, complete: bool) -> Result<W, TraceError> {
        if let Some(p) = self.pending.take() {
            self.enc.issue(&mut self.streams, &p, false);
        }
        self.enc.flush_run(&mut self.streams);
        self.flush_block()?;
        self.write_compressed(0)?;
        let mut trailer = vec![BLOCK_TRAILER, complete as u8];
        put_varint(&mut trailer, self.events);
        put_varint(&mut trailer, self.enc.cx.last_cycle);
        self.write_block(&trailer)?;
        self.out.flush().map_err(TraceError::io("flushing"))?;
        Ok(self.out)
    }
}

// ---------------------------------------------------------------------------------------------
// Decoder.

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// File offset of `data[0]`.
    base: u64,
}

impl Cursor<'_> {
    /// The file offset errors name: that of the block's payload (inside a compressed block
    /// the decoded position is in the message).
    fn offset(&self) -> u64 {
        self.base
    }

    #[inline]
    fn byte(&mut self, what: &'static str) -> Result<u8, TraceError> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.ends(what)),
        }
    }

    #[cold]
    #[inline(never)]
    fn ends(&self, what: &'static str) -> TraceError {
        TraceError::Malformed {
            offset: self.offset(),
            message: format!(
                "block ends inside an event (decoded byte {}), expected {what}",
                self.pos
            ),
        }
    }

    #[inline]
    fn varint(&mut self, what: &'static str) -> Result<u64, TraceError> {
        // Most values fit in one byte.
        if let Some(&b) = self.data.get(self.pos) {
            if b & 0x80 == 0 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        self.long_varint(what)
    }

    #[inline(never)]
    fn long_varint(&mut self, what: &'static str) -> Result<u64, TraceError> {
        let start = self.offset();
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.byte(what)?;
            if i == 9 && b > 1 {
                break;
            }
            v |= ((b & 0x7F) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(TraceError::Malformed {
            offset: start,
            message: format!("varint for {what} longer than 64 bits"),
        })
    }

    #[inline]
    fn u32(&mut self, what: &'static str) -> Result<u32, TraceError> {
        let start = self.offset();
        let v = self.varint(what)?;
        u32::try_from(v).map_err(|_| TraceError::Malformed {
            offset: start,
            message: format!("{what} {v} does not fit in 32 bits"),
        })
    }

    fn bad_tag(&self, offset: u64, tag: u8, what: &'static str) -> TraceError {
        let _ = self;
        TraceError::BadTag { offset, tag, what }
    }
}

/// Cursors over a block's streams. In versions 1–3 every event's warp went to one stream and
/// its fields to another: `V4` false sends each version-4 stream to the cursor that holds it
/// (a constant, so version 4 pays no look-up per field).
struct Inputs<'a, const V4: bool> {
    cursors: [Cursor<'a>; STREAMS],
}

/// Where versions 1–3 kept what version 4 splits: tags 0, warps 1, fields 2.
const V3_STREAMS: [usize; STREAMS] = [0, 1, 1, 1, 2, 2, 2, 2];

impl<'a, const V4: bool> Inputs<'a, V4> {
    #[inline]
    fn at(&mut self, stream: usize) -> &mut Cursor<'a> {
        &mut self.cursors[if V4 { stream } else { V3_STREAMS[stream] }]
    }
}

/// By event code: whether the event names a warp, and the streams of its warp reference and
/// of its fields (one look-up per tag).
const CODES: [(bool, usize, usize); 32] = {
    let mut t = [(false, S_WARPS, S_ARGS); 32];
    let mut c = 0;
    while c < 32 {
        let code = c as u8;
        let state = code >= T_STATE && code < T_STATE + STATES;
        let has_warp = state
            || matches!(
                code,
                T_WARP_LAUNCH
                    | T_WARP_EXIT
                    | T_ISSUE
                    | T_COMPLETE
                    | T_BARRIER_ARRIVE
                    | T_MEMORY
                    | T_HAZARD
                    | T_STATE_GROUP
                    | T_STATE_PREDICTED
            );
        t[c] = if code == T_ISSUE {
            (true, S_ISSUE_WARPS, S_ISSUE_ARGS)
        } else if state || code == T_STATE_GROUP || code == T_STATE_PREDICTED {
            (true, S_STATE_WARPS, S_STATE_ARGS)
        } else {
            (has_warp, S_WARPS, S_ARGS)
        };
        c += 1;
    }
    t
};

/// Where the decoder puts events: a `Vec<Event>`, or a consumer's own compact form of them
/// (the analyzer's, which keeps only what it reads: an `Event` is 56 bytes, and the analysis
/// threads hand every one over through memory).
pub(crate) trait EventSink {
    /// Whether the sink reads which warp and pc a completion names. A sink that only counts
    /// completions (the analyzer's) spares the decoder the model of expected completions: a
    /// predicted completion is then taken as it comes, with its cycle and no name, and is not
    /// checked against what was expected. A reader decodes into one kind of sink throughout.
    const COMPLETION_NAMES: bool = true;
    /// What [`rewind`](Self::rewind) goes back to.
    type Mark: Copy;
    fn push(&mut self, event: Event);
    /// Events pushed so far.
    fn count(&self) -> usize;
    fn mark(&self) -> Self::Mark;
    /// Forgets the events pushed since `mark`.
    fn rewind(&mut self, mark: Self::Mark);
}

impl EventSink for Vec<Event> {
    type Mark = usize;
    #[inline(always)]
    fn push(&mut self, event: Event) {
        Vec::push(self, event);
    }
    fn count(&self) -> usize {
        self.len()
    }
    fn mark(&self) -> usize {
        self.len()
    }
    fn rewind(&mut self, mark: usize) {
        self.truncate(mark);
    }
}

/// Version 6: one tag's events, decoded as for sink `S` (which reads completions' names or
/// not, and the decoder's model must be the same throughout a trace).
struct TagEvents<S>(Vec<Event>, std::marker::PhantomData<S>);

impl<S> TagEvents<S> {
    fn new(mut v: Vec<Event>) -> Self {
        v.clear();
        TagEvents(v, std::marker::PhantomData)
    }
}

impl<S: EventSink> EventSink for TagEvents<S> {
    const COMPLETION_NAMES: bool = S::COMPLETION_NAMES;
    type Mark = usize;
    #[inline(always)]
    fn push(&mut self, event: Event) {
        self.0.push(event);
    }
    fn count(&self) -> usize {
        self.0.len()
    }
    fn mark(&self) -> usize {
        self.0.len()
    }
    fn rewind(&mut self, mark: usize) {
        self.0.truncate(mark);
    }
}

struct Decoder {
    cx: Context,
    /// The file's event encoding (codes of later encodings are bad tags).
    encoding: u16,
    /// A predicted run (see [`Groups::predicted_run`]).
    predicted: Vec<(u32, WarpState)>,
    /// Version 6: one tag's events while group members' changes are held.
    tag_events: Vec<Event>,
    /// Version 6: the pipe group's change the last tag held, (sm, scheduler, pipe code,
    /// state).
    group_change: Option<(u32, u32, u8, WarpState)>,
    /// Version 6: the changes a group's change made to its members, not yet handed on:
    /// (position among the scheduler's warps, slot, state), in position order. They are
    /// placed among the state changes the same pass reports after the group's change.
    held: Vec<(u32, u32, WarpState)>,
    /// The pass they belong to: cycle, SM, scheduler (index in `Groups::schedulers`).
    held_at: (u64, u32, u32),
    /// Events as stored (a group change is one), what the trailer counts.
    stored: u64,
}

fn pipe_of(cur: &Cursor, offset: u64, c: u8) -> Result<Pipe, TraceError> {
    Pipe::ALL
        .get(c as usize)
        .copied()
        .ok_or_else(|| cur.bad_tag(offset, c, "pipe (0..=5)"))
}

fn path_of(cur: &mut Cursor) -> Result<DepPath, TraceError> {
    let off = cur.offset();
    match cur.byte("dependency path")? {
        0 => Ok(DepPath::Fixed),
        1 => Ok(DepPath::Short),
        2 => Ok(DepPath::Long),
        c => Err(cur.bad_tag(off, c, "dependency path (0..=2)")),
    }
}

fn reg_of(cur: &mut Cursor) -> Result<RegRef, TraceError> {
    let off = cur.offset();
    match cur.varint("register")? {
        r @ 0..=255 => Ok(RegRef::Reg(r as u8)),
        p @ 256..=511 => Ok(RegRef::Pred((p - 256) as u8)),
        512 => Ok(RegRef::Nzp),
        _ => Err(TraceError::Malformed {
            offset: off,
            message: "register code above 512".into(),
        }),
    }
}

/// A pc written relative to `predicted`.
fn pc_of(cur: &mut Cursor, predicted: u32) -> Result<u32, TraceError> {
    let off = cur.offset();
    let d = unzigzag(cur.varint("pc")?);
    let d = i32::try_from(d).map_err(|_| TraceError::Malformed {
        offset: off,
        message: "pc delta out of range".into(),
    })?;
    Ok(predicted.wrapping_add(d as u32))
}

fn no_prediction(w: WarpRef, cycle: u64, offset: u64) -> TraceError {
    TraceError::Malformed {
        offset,
        message: format!(
            "predicted state for warp {}:{} at cycle {cycle}, which has no prediction",
            w.sm, w.slot
        ),
    }
}

/// A warp state from its number (0..=14) and the fields after it.
fn state_of(cur: &mut Cursor, n: u8, last_pc: u32) -> Result<WarpState, TraceError> {
    Ok(match n {
        0 => WarpState::Selected,
        1 => WarpState::NotSelected,
        2 => WarpState::Scoreboard {
            reg: reg_of(cur)?,
            producer_pc: pc_of(cur, last_pc)?,
            path: path_of(cur)?,
        },
        3 => WarpState::DependencyBarrier {
            barrier: cur.byte("dependency barrier")?,
            producer_pc: pc_of(cur, last_pc)?,
            path: path_of(cur)?,
        },
        4 => WarpState::StallCount,
        5 => WarpState::CtaBarrier,
        6 => WarpState::Membar,
        7 => {
            let off = cur.offset();
            let p = cur.byte("pipe")?;
            WarpState::PipeBusy {
                pipe: pipe_of(cur, off, p)?,
            }
        }
        8 => WarpState::MioThrottle,
        9 => WarpState::LgThrottle,
        10 => WarpState::TableFull,
        11 => WarpState::BranchResolving,
        12 => WarpState::NoInstruction,
        13 => WarpState::Drain,
        14 => WarpState::Sleeping,
        c => return Err(cur.bad_tag(cur.offset(), c, "warp state number (0..=14)")),
    })
}

/// Runs `f`, which pushes a state group's or run's events: on an error, none of them stay
/// (other events are pushed only once nothing can fail).
#[inline(always)]
fn all_or_nothing<S: EventSink>(
    out: &mut S,
    f: impl FnOnce(&mut S) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let before = out.mark();
    let result = f(out);
    if result.is_err() {
        out.rewind(before);
    }
    result
}

/// A decoding error, boxed: the block loop's results are then one pointer, where a
/// `TraceError` made every event's result a copy of its fields.
type Failure = Box<TraceError>;

impl Decoder {
    #[inline(always)]
    fn warp(&mut self, cur: &mut Cursor, same: bool) -> Result<WarpRef, TraceError> {
        if same {
            return Ok(self.cx.prev_warp);
        }
        let off = cur.offset();
        let v = cur.varint("warp")?;
        let w = if v & 1 == 0 {
            let slot = self.cx.prev_warp.slot as i64 + unzigzag(v >> 1);
            let slot = u32::try_from(slot).map_err(|_| TraceError::Malformed {
                offset: off,
                message: format!("warp slot {slot} out of range"),
            })?;
            WarpRef {
                sm: self.cx.prev_warp.sm,
                slot,
            }
        } else {
            let sm = u32::try_from(v >> 1).map_err(|_| TraceError::Malformed {
                offset: off,
                message: "warp sm out of range".into(),
            })?;
            WarpRef {
                sm,
                slot: cur.u32("warp slot")?,
            }
        };
        self.cx.prev_warp = w;
        Ok(w)
    }

    /// Warp `w` changes to its predicted state.
    fn predicted(&mut self, w: WarpRef, cycle: u64, offset: u64) -> Result<WarpState, TraceError> {
        self.cx
            .groups
            .change(w, cycle, None)
            .ok_or_else(|| no_prediction(w, cycle, offset))
    }

    /// Decodes a state group into its `warp_state` events, appended to `out` in group order.
    /// Its members share an SM and a scheduler, so the scheduler is looked up once and each
    /// member's change is made here (what [`Groups::change`] does, in the same order).
    fn state_group<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        cycle: u64,
        first: WarpRef,
        offset: u64,
        out: &mut S,
    ) -> Result<(), Failure> {
        let malformed = |message: String| Box::new(TraceError::Malformed { offset, message });
        let (sched, first_i) = self.cx.groups.position(first).ok_or_else(|| {
            malformed(format!(
                "state group starts at warp {}:{}, which is not resident",
                first.sm, first.slot
            ))
        })?;
        let masks = ins.at(S_GROUPS);
        let mask = masks.varint("state group members")?;
        if mask >> GROUP_SPAN != 0 {
            return Err(malformed(format!(
                "state group member mask {mask:#x} too wide"
            )));
        }
        let grouped = self.encoding == GROUPS;
        let Groups {
            warps,
            schedulers,
            by_pc,
            ..
        } = &mut self.cx.groups;
        let GroupScheduler {
            members,
            next,
            groups,
            ..
        } = &mut schedulers[sched as usize];
        // Members follow the first one: bits from `room` up name positions past the last.
        let room = members.len() - first_i - 1;
        let beyond = if room >= 64 { 0 } else { mask >> room << room };
        if beyond != 0 {
            let bit = beyond.trailing_zeros() as usize;
            return Err(malformed(format!(
                "state group names member {} of a scheduler with {}",
                first_i + 1 + bit,
                members.len()
            )));
        }
        let n = 1 + mask.count_ones() as usize;
        if n < 2 {
            return Err(malformed("state group of one warp".into()));
        }
        let misses = masks.varint("state group predictions")?;
        if n < 64 && misses >> n != 0 {
            return Err(malformed(format!(
                "state group prediction mask {misses:#x} for {n} warps"
            )));
        }
        let mut rest = mask;
        let mut position = first_i;
        for k in 0..n {
            if k > 0 {
                position = first_i + 1 + rest.trailing_zeros() as usize;
                rest &= rest - 1;
            }
            let slot = members[position];
            let w = WarpRef { sm: first.sm, slot };
            let g = warps
                .get_mut(first.sm, slot)
                .expect("a scheduler's members are launched warps");
            settle(g, groups);
            let from = g.state.map(|s| state_code(&s) as usize);
            // Whether the state is the one the pc table has (then it need not be learnt).
            let mut at_pc = false;
            let state = if misses >> k & 1 != 0 {
                let last_pc = g.pc;
                let cur = ins.at(S_STATE_ARGS);
                let code = cur.byte("state number")?;
                state_of(cur, code, last_pc)?
            } else if g.issued == Some(cycle) {
                WarpState::Selected
            } else {
                from.and_then(|from| {
                    let learnt = by_pc.get(g.pc as usize).and_then(|t| t[from]);
                    at_pc = learnt.is_some();
                    learnt.or(next[from])
                })
                .ok_or_else(|| no_prediction(w, cycle, offset))?
            };
            if let Some(from) = from {
                next[from] = Some(state);
                if !at_pc {
                    learn_by_pc(by_pc, g.pc, from, state);
                }
            }
            g.state = Some(state);
            if grouped && groupable(&state) {
                join(g, groups, group_of(ins.at(S_STATE_ARGS))?);
            }
            out.push(Event::WarpState {
                cycle,
                warp: w,
                state,
            });
        }
        Ok(())
    }

    /// Version 5: decodes a run into its `warp_state` events, in member order.
    // Out of line: inlined, it made the compiler stop inlining version 4's state groups.
    #[inline(never)]
    fn run<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        cycle: u64,
        exact: bool,
        offset: u64,
        out: &mut S,
    ) -> Result<(), Failure> {
        let mut predicted = std::mem::take(&mut self.predicted);
        let result = self.run_with(ins, cycle, exact, offset, out, &mut predicted);
        self.predicted = predicted;
        Ok(result?)
    }

    fn run_with<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        cycle: u64,
        exact: bool,
        offset: u64,
        out: &mut S,
        predicted: &mut Vec<(u32, WarpState)>,
    ) -> Result<(), TraceError> {
        let malformed = |message: String| TraceError::Malformed { offset, message };
        let groups = &self.cx.groups;
        let cur = ins.at(S_STATE_WARPS);
        let k = cur.varint("run scheduler")?;
        let sched = if k == 0 {
            let sm = cur.u32("run sm")?;
            let id = cur.u32("run scheduler")?;
            let i = *groups.scheduler_index.get(sm, id).ok_or_else(|| {
                malformed(format!(
                    "run of scheduler {id} of SM {sm}, which has had no warps"
                ))
            })?;
            groups.predicted_run(i, cycle, predicted);
            i
        } else {
            groups
                .pick(cycle, Pick::Nth(k), predicted)
                .ok_or_else(|| {
                    malformed(format!(
                        "run of predicted scheduler {k} at cycle {cycle}, where there are fewer"
                    ))
                })?
                .0
        };
        let pmask = run_mask(predicted);
        let s = &groups.schedulers[sched as usize];
        let (sm, id) = (s.sm, s.id);
        let (members, misses) = if exact {
            if pmask == 0 {
                return Err(malformed(format!(
                    "predicted run of scheduler {id} of SM {sm} at cycle {cycle}, where none \
                     is predicted"
                )));
            }
            (pmask, 0)
        } else {
            let masks = ins.at(S_GROUPS);
            let members = pmask ^ masks.varint("run members")?;
            let room = s.members.len().min(RUN_SPAN);
            if members == 0 || (room < 64 && members >> room != 0) {
                return Err(malformed(format!(
                    "run members {members:#x} of a scheduler with {} warps",
                    s.members.len()
                )));
            }
            let n = members.count_ones();
            let misses = masks.varint("run states")?;
            if n < 64 && misses >> n != 0 {
                return Err(malformed(format!(
                    "run state mask {misses:#x} for {n} warps"
                )));
            }
            (members, misses)
        };
        let mut rest = members;
        let mut at = 0;
        let mut k = 0;
        while rest != 0 {
            let position = rest.trailing_zeros();
            rest &= rest - 1;
            let guess = predicted_at(predicted, &mut at, position);
            let Some(&slot) = self.cx.groups.schedulers[sched as usize]
                .members
                .get(position as usize)
            else {
                return Err(malformed(format!(
                    "run member at position {position} of a scheduler with fewer warps"
                )));
            };
            let w = WarpRef { sm, slot };
            let state = match guess {
                Some(state) if misses >> k & 1 == 0 => state,
                _ if misses >> k & 1 == 0 => {
                    return Err(malformed(format!(
                        "run member {k} (warp {sm}:{slot}) has no predicted state and none \
                         written"
                    )))
                }
                _ => {
                    let last_pc = self.cx.groups.last_pc(w);
                    let cur = ins.at(S_STATE_ARGS);
                    let code = cur.byte("state number")?;
                    state_of(cur, code, last_pc)?
                }
            };
            self.cx.groups.set_state(w, state);
            out.push(Event::WarpState {
                cycle,
                warp: w,
                state,
            });
            k += 1;
        }
        self.cx.groups.last_run = (cycle, (sm as u64) << 32 | id as u64);
        Ok(())
    }

    /// Decodes one tag's events (one, an issue and its elided `Selected`, or a state group's)
    /// and appends them to `out`; version 6 through [`Decoder::decode_grouped`].
    #[inline(always)]
    fn decode<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        out: &mut S,
    ) -> Result<(), Failure> {
        if self.encoding == GROUPS {
            return self.decode_grouped(ins, out);
        }
        self.decode_tag(ins, out)
    }

    /// Version 6: decodes one tag's events into `out` — through a buffer only while a group's
    /// change holds member changes back, which are placed among them — and takes in a group's
    /// change.
    #[inline(never)]
    fn decode_grouped<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        out: &mut S,
    ) -> Result<(), Failure> {
        if self.held.is_empty() {
            let before = out.count();
            self.decode_tag(ins, out)?;
            self.stored += (out.count() - before) as u64;
        } else {
            let mut events = TagEvents::<S>::new(std::mem::take(&mut self.tag_events));
            let result = self.decode_tag(ins, &mut events);
            let mut events = events.0;
            if result.is_ok() {
                self.stored += events.len() as u64;
                for e in events.drain(..) {
                    self.place(e, out);
                }
            }
            self.tag_events = events;
            result?;
        }
        if let Some((sm, scheduler, pipe, state)) = self.group_change.take() {
            self.stored += 1;
            // The group change's cycle: its tag's, the last one read.
            let cycle = self.cx.last_cycle;
            self.hold(cycle, sm, scheduler, pipe, state, out);
        }
        Ok(())
    }

    /// Hands `e` on, after the held changes it follows: those of warps before it in the
    /// same pass, or all of them if it is not a state change of that pass.
    fn place<S: EventSink>(&mut self, e: Event, out: &mut S) {
        let (cycle, sm, sched) = self.held_at;
        let position = match e {
            Event::WarpState { cycle: c, warp, .. } if c == cycle && warp.sm == sm => self
                .cx
                .groups
                .launched(warp)
                .filter(|g| g.sched == sched)
                .map(|g| (g.position, warp.slot)),
            _ => None,
        };
        match position {
            Some((position, slot)) => {
                self.release(self.held.partition_point(|h| h.0 < position), out);
                // Reported by name in this pass: that report is its change.
                self.held.retain(|h| h.1 != slot);
            }
            None => self.release(self.held.len(), out),
        }
        out.push(e);
    }

    /// Hands on the first `n` held changes (all of them once their pass is over).
    fn release<S: EventSink>(&mut self, n: usize, out: &mut S) {
        let (cycle, sm, _) = self.held_at;
        for (_, slot, state) in self.held.drain(..n) {
            let warp = WarpRef { sm, slot };
            out.push(Event::WarpState { cycle, warp, state });
        }
    }

    /// A group's change at `cycle`: its members not already in `state` change to it, held
    /// until the pass's later state changes place them; then the model takes the change.
    fn hold<S: EventSink>(
        &mut self,
        cycle: u64,
        sm: u32,
        scheduler: u32,
        pipe: u8,
        state: WarpState,
        out: &mut S,
    ) {
        let Some(&sched) = self.cx.groups.scheduler_index.get(sm, scheduler) else {
            return;
        };
        if !self.held.is_empty() && self.held_at != (cycle, sm, sched) {
            self.release(self.held.len(), out);
        }
        let merge = !self.held.is_empty();
        self.held_at = (cycle, sm, sched);
        let Groups {
            warps, schedulers, ..
        } = &mut self.cx.groups;
        let s = &schedulers[sched as usize];
        let (row, sparse) = warps.row_mut(sm);
        for (position, &slot) in s.members.iter().enumerate() {
            let g = match row.get_mut(slot as usize) {
                Some(g) => g.as_mut(),
                None => Table::get_mut_outside(sparse, sm, slot),
            };
            let Some(g) = g else { continue };
            settle(g, &s.groups);
            if g.group == pipe && g.state != Some(state) {
                self.held.push((position as u32, slot, state));
            }
        }
        if merge {
            self.held.sort_by_key(|h| h.0);
        }
        self.cx.groups.change_group(sched, pipe, state);
    }

    /// Version 6: a pipe group's change; taken in by [`Decoder::hold`] after the tag.
    fn pipe_state(&mut self, cur: &mut Cursor) -> Result<(), Failure> {
        let sm = cur.u32("sm")?;
        let scheduler = cur.u32("scheduler")?;
        let off = cur.offset();
        let code = cur.byte("pipe")?;
        pipe_of(cur, off, code)?;
        let off = cur.offset();
        let n = cur.byte("state number")?;
        let state = state_of(cur, n, 0)?;
        if !groupable(&state) {
            return Err(Box::new(TraceError::Malformed {
                offset: off,
                message: format!("pipe group changes to {state:?}, which no ready warp is in"),
            }));
        }
        self.group_change = Some((sm, scheduler, code, state));
        Ok(())
    }

    /// Version 6: the group byte after a [`groupable`] state of warp `w`, taken into the
    /// model.
    #[inline(always)]
    fn read_group(
        &mut self,
        cur: &mut Cursor,
        w: WarpRef,
        state: &WarpState,
    ) -> Result<(), TraceError> {
        if self.encoding == GROUPS && groupable(state) {
            let group = group_of(cur)?;
            self.cx.groups.set_group(w, group);
        }
        Ok(())
    }

    /// One tag's events, appended to `out`.
    // Inlined into the block loop (one call per tag was ~10 % of its instructions).
    #[inline(always)]
    fn decode_tag<const V4: bool, S: EventSink>(
        &mut self,
        ins: &mut Inputs<V4>,
        out: &mut S,
    ) -> Result<(), Failure> {
        let tags = ins.at(S_TAGS);
        let tag_off = tags.offset();
        let tag = tags.byte("event tag")?;
        let code = tag & 0x1F;
        let same = tag & SAME_WARP != 0;
        let mut delta = ((tag >> DELTA_SHIFT) & 3) as u64;
        if delta == DELTA_ESCAPE as u64 {
            delta = tags
                .varint("cycle delta")?
                .checked_add(DELTA_ESCAPE as u64)
                .ok_or_else(|| TraceError::Malformed {
                    offset: tag_off,
                    message: "cycle delta overflows".into(),
                })?;
        }
        let cycle = self
            .cx
            .last_cycle
            .checked_add(delta)
            .ok_or_else(|| TraceError::Malformed {
                offset: tag_off,
                message: "cycle overflows 64 bits".into(),
            })?;
        self.cx.last_cycle = cycle;
        if writes_runs(self.encoding) && (code == T_RUN || code == T_RUN_EXACT) {
            if same {
                return Err(Box::new(TraceError::BadTag {
                    offset: tag_off,
                    tag,
                    what: "same-warp bit on a run",
                }));
            }
            return all_or_nothing(out, |out| {
                self.run(ins, cycle, code == T_RUN_EXACT, tag_off, out)
            });
        }
        if self.encoding == GROUPS && tag & !(3 << DELTA_SHIFT) == T_PIPE_STATE {
            return self.pipe_state(ins.at(S_ARGS));
        }
        let (has_warp, warp_stream, field_stream) = CODES[code as usize];
        if same && !has_warp {
            return Err(Box::new(TraceError::BadTag {
                offset: tag_off,
                tag,
                what: "same-warp bit on an event without a warp",
            }));
        }
        let warp = if has_warp {
            Some(self.warp(ins.at(warp_stream), same)?)
        } else {
            None
        };
        let cur = ins.at(field_stream);
        let w = warp.unwrap_or(WarpRef { sm: 0, slot: 0 });
        let ev = match code {
            T_KERNEL_LAUNCH => Event::KernelLaunch {
                cycle,
                launch: cur.u32("launch")?,
            },
            T_KERNEL_COMPLETE => Event::KernelComplete {
                cycle,
                launch: cur.u32("launch")?,
            },
            T_BLOCK_ASSIGN => Event::BlockAssign {
                cycle,
                launch: cur.u32("launch")?,
                block: cur.u32("block")?,
                sm: cur.u32("sm")?,
            },
            T_BLOCK_COMPLETE => Event::BlockComplete {
                cycle,
                launch: cur.u32("launch")?,
                block: cur.u32("block")?,
                sm: cur.u32("sm")?,
            },
            T_WARP_LAUNCH => {
                let launch = cur.u32("launch")?;
                let block = cur.u32("block")?;
                let ctaid = Dim3::new(
                    cur.u32("ctaid.x")?,
                    cur.u32("ctaid.y")?,
                    cur.u32("ctaid.z")?,
                );
                let warp_in_block = cur.u32("warp_in_block")?;
                let scheduler = cur.u32("scheduler")?;
                let lanes = !cur.u32("lanes")?;
                self.cx.groups.launch(w, scheduler, lanes);
                Event::WarpLaunch {
                    cycle,
                    warp: w,
                    info: WarpInfo {
                        launch,
                        block,
                        ctaid,
                        warp_in_block,
                        scheduler,
                        lanes,
                    },
                }
            }
            T_WARP_EXIT => {
                self.cx.groups.exit(w);
                Event::WarpExit { cycle, warp: w }
            }
            T_ISSUE => {
                let off = cur.offset();
                let flags = cur.byte("issue flags")?;
                if flags & 0x80 != 0 {
                    return Err(cur.bad_tag(off, flags, "issue flags (bit 7 clear)").into());
                }
                let pipe = pipe_of(cur, off, flags & F_PIPE)?;
                let g = self.cx.groups.record(w);
                let predicted = g.pc.wrapping_add(1);
                let lanes = g.lanes;
                let pc = if flags & F_PC != 0 {
                    pc_of(cur, predicted)?
                } else {
                    predicted
                };
                let active = if flags & F_ACTIVE != 0 {
                    cur.u32("active mask")?
                } else {
                    lanes
                };
                let slot = if flags & F_SLOT != 0 {
                    cur.u32("issue slot")?
                } else {
                    0
                };
                let selected = flags & F_SELECTED != 0;
                self.cx.groups.issue(w, cycle, pc, pipe, selected);
                if S::COMPLETION_NAMES || writes_runs(self.encoding) {
                    self.cx.completions.issue(w, cycle, pc);
                }
                out.push(Event::Issue {
                    cycle,
                    warp: w,
                    pc,
                    active,
                    pipe,
                    slot,
                });
                if selected {
                    out.push(Event::WarpState {
                        cycle,
                        warp: w,
                        state: WarpState::Selected,
                    });
                }
                return Ok(());
            }
            T_COMPLETE => {
                let pc = pc_of(cur, self.cx.last_pc(w))?;
                if S::COMPLETION_NAMES || writes_runs(self.encoding) {
                    // Expectations are dropped alike on both sides.
                    self.cx.completions.expected(cycle);
                    self.cx.completions.complete(w, pc, cycle, false);
                }
                self.cx.groups.complete(w, pc, cycle);
                Event::Complete { cycle, warp: w, pc }
            }
            // Version 5's runs need to know which warp completed what.
            T_COMPLETE_PREDICTED
                if self.encoding >= 3 && !writes_runs(self.encoding) && !S::COMPLETION_NAMES =>
            {
                Event::Complete {
                    cycle,
                    warp: self.cx.prev_warp,
                    pc: 0,
                }
            }
            T_COMPLETE_PREDICTED if self.encoding >= 3 => {
                let (warp, pc) =
                    self.cx
                        .completions
                        .expected(cycle)
                        .ok_or_else(|| TraceError::Malformed {
                            offset: tag_off,
                            message: format!(
                                "predicted completion at cycle {cycle}, where none is expected"
                            ),
                        })?;
                self.cx.completions.complete(warp, pc, cycle, true);
                self.cx.groups.complete(warp, pc, cycle);
                Event::Complete { cycle, warp, pc }
            }
            T_REFILL => Event::Refill {
                cycle,
                sm: cur.u32("sm")?,
                scheduler: cur.u32("scheduler")?,
                slots: cur.u32("slots")?,
            },
            T_BARRIER_ARRIVE => Event::BarrierArrive { cycle, warp: w },
            T_BARRIER_RELEASE => Event::BarrierRelease {
                cycle,
                sm: cur.u32("sm")?,
                launch: cur.u32("launch")?,
                block: cur.u32("block")?,
            },
            T_MEMORY => {
                let pc = pc_of(cur, self.cx.last_pc(w))?;
                let off = cur.offset();
                let b = cur.byte("memory kind")?;
                let space = if b & 1 == 0 {
                    MemSpace::Global
                } else {
                    MemSpace::Shared
                };
                let kind = match (b >> 1) & 3 {
                    0 => MemKind::Load,
                    1 => MemKind::Store,
                    2 => MemKind::Atomic,
                    _ => {
                        return Err(cur
                            .bad_tag(off, b, "memory kind (load, store, atomic)")
                            .into())
                    }
                };
                let level = match b >> 3 {
                    0 => HitLevel::Ideal,
                    1 => HitLevel::L1,
                    2 => HitLevel::L2,
                    3 => HitLevel::Dram,
                    _ => return Err(cur.bad_tag(off, b, "hit level (0..=3)").into()),
                };
                let sectors = cur.u32("sectors")?;
                let replays = cur.u32("replays")?;
                let complete_at = cycle.wrapping_add(unzigzag(cur.varint("complete_at")?) as u64);
                Event::Memory {
                    cycle,
                    warp: w,
                    pc,
                    mem: MemEvent {
                        space,
                        kind,
                        sectors,
                        level,
                        replays,
                        complete_at,
                    },
                }
            }
            T_HAZARD => {
                let off = cur.offset();
                let kind = match cur.byte("hazard kind")? {
                    0 => HazardKind::Raw,
                    1 => HazardKind::War,
                    2 => HazardKind::Waw,
                    c => return Err(cur.bad_tag(off, c, "hazard kind (0..=2)").into()),
                };
                Event::Hazard {
                    cycle,
                    warp: w,
                    hazard: Hazard {
                        kind,
                        reg: reg_of(cur)?,
                        producer_pc: cur.u32("producer pc")?,
                        consumer_pc: cur.u32("consumer pc")?,
                    },
                }
            }
            T_FAULT => {
                let off = cur.offset();
                let len = cur.varint("fault length")?;
                let remaining = (cur.data.len() - cur.pos) as u64;
                if len > remaining {
                    return Err(Box::new(TraceError::Malformed {
                        offset: off,
                        message: format!("fault of {len} bytes but the block has {remaining} left"),
                    }));
                }
                let bytes = &cur.data[cur.pos..cur.pos + len as usize];
                cur.pos += len as usize;
                let fault: Fault =
                    serde_json::from_slice(bytes).map_err(|e| TraceError::Malformed {
                        offset: off,
                        message: format!("fault JSON: {e}"),
                    })?;
                Event::Fault {
                    cycle,
                    fault: Box::new(fault),
                }
            }
            c if (T_STATE..T_STATE + STATES).contains(&c) => {
                let state = state_of(cur, c - T_STATE, self.cx.last_pc(w))?;
                self.cx.groups.set_state(w, state);
                self.read_group(cur, w, &state)?;
                Event::WarpState {
                    cycle,
                    warp: w,
                    state,
                }
            }
            T_STATE_PREDICTED => {
                let state = self.predicted(w, cycle, tag_off)?;
                self.read_group(cur, w, &state)?;
                Event::WarpState {
                    cycle,
                    warp: w,
                    state,
                }
            }
            T_STATE_GROUP => {
                return all_or_nothing(out, |out| self.state_group(ins, cycle, w, tag_off, out))
            }
            _ => return Err(cur.bad_tag(tag_off, tag, "event code (0..=31)").into()),
        };
        out.push(ev);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Reader.

/// Inflates an events block's DEFLATE stream, which must give exactly `raw_len` bytes; errors
/// name `base`, the block payload's offset.
fn inflate_block(
    deflated: &[u8],
    raw_len: u64,
    base: u64,
    encoding: u16,
) -> Result<Vec<u8>, TraceError> {
    if encoding >= 4 {
        return inflate_streams(deflated, raw_len, base);
    }
    let malformed = |message: String| TraceError::Malformed {
        offset: base,
        message,
    };
    let mut raw = vec![0; raw_len as usize];
    inflate_into(deflated, &mut raw).map_err(|e| malformed(format!("block {e}")))?;
    Ok(raw)
}

/// Version 4: inflates each stream on its own and lays them out as earlier versions' decoded
/// block (stream lengths, then the streams), which [`BinaryReader::set_raw`] reads.
fn inflate_streams(payload: &[u8], raw_len: u64, base: u64) -> Result<Vec<u8>, TraceError> {
    let malformed = |message: String| TraceError::Malformed {
        offset: base,
        message,
    };
    let mut cur = Cursor {
        data: payload,
        pos: 0,
        base,
    };
    let mut lens = [(0u64, 0u64); STREAMS];
    for l in &mut lens {
        *l = (cur.varint("stream length")?, cur.varint("deflated length")?);
    }
    let total = lens.iter().fold(0u64, |a, l| a.saturating_add(l.0));
    let deflated = lens.iter().fold(0u64, |a, l| a.saturating_add(l.1));
    if total != raw_len || deflated != (payload.len() - cur.pos) as u64 {
        return Err(malformed(format!(
            "stream lengths add up to {total} decoded and {deflated} deflated bytes, the block \
             has {raw_len} and {}",
            payload.len() - cur.pos
        )));
    }
    let mut raw = Vec::with_capacity(raw_len as usize + 4 * STREAMS);
    for &(len, _) in &lens[..STREAMS - 1] {
        put_varint(&mut raw, len);
    }
    let mut at = cur.pos;
    for (i, &(len, zlen)) in lens.iter().enumerate() {
        let z = &payload[at..at + zlen as usize];
        at += zlen as usize;
        if len == 0 {
            if zlen != 0 {
                return Err(malformed(format!("empty stream {i} with deflated bytes")));
            }
            continue;
        }
        let start = raw.len();
        raw.resize(start + len as usize, 0);
        inflate_into(z, &mut raw[start..]).map_err(|e| malformed(format!("stream {i} {e}")))?;
    }
    Ok(raw)
}

/// A block to inflate: payload, start of its DEFLATE stream, decoded length, payload offset,
/// format version.
type InflateJob = (Vec<u8>, usize, u64, u64, u16);

/// An inflated block: its payload (for reuse) and the decoded bytes.
type Inflated = (Vec<u8>, Result<Vec<u8>, TraceError>);

/// The thread that inflates blocks read ahead; results come back in order.
struct Inflater {
    jobs: mpsc::Sender<InflateJob>,
    results: mpsc::Receiver<Inflated>,
}

/// Events [`BinaryReader::take_into`] decodes at a time: a block holds some 30 000, and
/// handed over whole, the analyzer's batches (1 MB of steps each) left the cores' caches
/// between decoder and accumulator; at 4096 (128 KB) the threads handed over so often that
/// waking each other took a tenth of a large trace's analysis (`perf stat`, 11 M events:
/// 0.185 s and 1,309 context switches at 4096, 0.166 s and 736 at 16384).
const TAKE_EVENTS: usize = 16384;

/// Blocks read ahead of the decoder, at most.
const BLOCKS_AHEAD: usize = 2;

/// A block read ahead of the decoder.
enum Ahead {
    /// An events block with the inflater.
    Inflating { base: u64 },
    /// A block to act on when reached (the trailer, a bad kind, or an events block the
    /// inflater could not take).
    Read { base: u64, block: Vec<u8> },
    /// Reading it failed; reported when reached.
    Failed(TraceError),
}

/// Reads `buf.len()` bytes unless the input ends first; returns how many were read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What the trailer block says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    pub complete: bool,
    pub events: u64,
    pub last_cycle: u64,
}

/// A streaming reader of a binary trace: the header is parsed at open; iterating yields the
/// events, holding one block in memory. After the last event the trailer is available.
pub struct BinaryReader<R: Read> {
    input: R,
    header: TraceHeader,
    header_json: String,
    offset: u64,
    /// The current block's payload as read (compressed).
    block: Vec<u8>,
    /// The current block's decoded streams and read positions in them.
    raw: Vec<u8>,
    /// (position, end) of each stream in `raw` (versions 1–3 use the first three).
    streams: [(usize, usize); STREAMS],
    block_base: u64,
    dec: Decoder,
    /// The current block's events and how many of them have been returned.
    batch: Vec<Event>,
    batch_pos: usize,
    /// An error met while decoding the current block, returned after its good events.
    error: Option<TraceError>,
    /// Events decoded so far.
    events: u64,
    trailer: Option<Trailer>,
    /// Set by [`BinaryReader::inflate_ahead`].
    inflater: Option<Inflater>,
    ahead: std::collections::VecDeque<Ahead>,
    /// Reading ahead stopped at the trailer, a block that is not events, or an error.
    ahead_stopped: bool,
    done: bool,
    /// The current block has events left to decode (`take_into` hands a block over in parts).
    in_block: bool,
}

impl<R: Read> BinaryReader<R> {
    pub fn new(mut input: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 8];
        let n = read_full(&mut input, &mut magic).map_err(TraceError::io("reading the magic"))?;
        if n < 8 {
            return Err(TraceError::Truncated {
                offset: n as u64,
                expected: "the 8-byte magic WSTRACE\\0",
            });
        }
        Self::after_magic(input, magic)
    }

    /// Continues after the caller has already read the eight magic bytes.
    pub(crate) fn after_magic(mut input: R, magic: [u8; 8]) -> Result<Self, TraceError> {
        if magic != MAGIC {
            return Err(TraceError::BadMagic {
                offset: 0,
                found: magic,
            });
        }
        let mut fixed = [0u8; 6];
        let n = read_full(&mut input, &mut fixed).map_err(TraceError::io("reading the header"))?;
        if n < 2 {
            return Err(TraceError::Truncated {
                offset: 8 + n as u64,
                expected: "the u16 format version",
            });
        }
        let version = u16::from_le_bytes([fixed[0], fixed[1]]);
        if version == 0 || version > FORMAT_VERSION {
            return Err(TraceError::UnsupportedVersion {
                offset: 8,
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if n < 6 {
            return Err(TraceError::Truncated {
                offset: 8 + n as u64,
                expected: "the u32 header length",
            });
        }
        let len = u32::from_le_bytes([fixed[2], fixed[3], fixed[4], fixed[5]]) as u64;
        if len > MAX_LEN {
            return Err(TraceError::Oversized {
                offset: 10,
                what: "header",
                len,
                limit: MAX_LEN,
            });
        }
        let mut stored_crc = None;
        if version >= HEADER_CRC_VERSION {
            let mut crc = [0u8; 4];
            let n =
                read_full(&mut input, &mut crc).map_err(TraceError::io("reading the header"))?;
            if n < 4 {
                return Err(TraceError::Truncated {
                    offset: 14 + n as u64,
                    expected: "the u32 header CRC",
                });
            }
            stored_crc = Some(u32::from_le_bytes(crc));
        }
        let json_at = json_offset(version);
        let mut json = vec![0u8; len as usize];
        let n = read_full(&mut input, &mut json).map_err(TraceError::io("reading the header"))?;
        if n < json.len() {
            return Err(TraceError::Truncated {
                offset: json_at + n as u64,
                expected: "the rest of the JSON header",
            });
        }
        // Checked before the JSON is looked at: a damaged header is a damaged header, not a
        // syntax error somewhere in it (or, worse, a plausible number).
        if let Some(expected) = stored_crc {
            let actual = header_crc(&fixed, &json);
            if actual != expected {
                return Err(TraceError::HeaderCrc {
                    first: 8,
                    last: json_at + len - 1,
                    expected,
                    actual,
                });
            }
        }
        let header_json = String::from_utf8(json).map_err(|e| TraceError::Malformed {
            offset: json_at + e.utf8_error().valid_up_to() as u64,
            message: "header is not UTF-8".into(),
        })?;
        let header: TraceHeader =
            serde_json::from_str(&header_json).map_err(|e| TraceError::Header {
                offset: json_at,
                message: e.to_string(),
            })?;
        // Before version 7 the header is not under a CRC, and an edited header has a good
        // one: a config no GPU could have would give nonsense figures instead of an error.
        header.config.validate().map_err(|e| TraceError::Header {
            offset: json_at,
            message: e.to_string(),
        })?;
        let limits = IssueLimits::of(&header);
        Ok(BinaryReader {
            input,
            header,
            header_json,
            offset: json_at + len,
            block: Vec::new(),
            raw: Vec::new(),
            streams: [(0, 0); STREAMS],
            block_base: 0,
            dec: Decoder {
                cx: Context::new(encoding(version), limits),
                encoding: encoding(version),
                predicted: Vec::new(),
                tag_events: Vec::new(),
                group_change: None,
                held: Vec::new(),
                held_at: (0, 0, 0),
                stored: 0,
            },
            batch: Vec::new(),
            batch_pos: 0,
            error: None,
            inflater: None,
            ahead: Default::default(),
            ahead_stopped: false,
            events: 0,
            trailer: None,
            done: false,
            in_block: false,
        })
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The header exactly as stored.
    pub fn header_json(&self) -> &str {
        &self.header_json
    }

    /// The trailer, once the iterator has returned `None` after reading it.
    pub fn trailer(&self) -> Option<Trailer> {
        self.trailer
    }

    /// Reads the next block into `self.block`; `Ok(false)` when the trailer was read.
    fn next_block(&mut self) -> Result<bool, TraceError> {
        if self.inflater.is_some() {
            return self.next_block_ahead();
        }
        self.read_frame()?;
        self.interpret_block()
    }

    /// Reads the next block's frame and payload into `self.block`, checking its CRC.
    fn read_frame(&mut self) -> Result<(), TraceError> {
        let start = self.offset;
        let mut frame = [0u8; 8];
        let n =
            read_full(&mut self.input, &mut frame).map_err(TraceError::io("reading a block"))?;
        if n < 8 {
            return Err(TraceError::Truncated {
                offset: start + n as u64,
                expected: if n == 0 {
                    "another block or the trailer (the trace ends without a trailer)"
                } else {
                    "an 8-byte block frame (length, CRC)"
                },
            });
        }
        let len = u32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]) as u64;
        let crc = u32::from_le_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if len > MAX_LEN {
            return Err(TraceError::Oversized {
                offset: start,
                what: "block",
                len,
                limit: MAX_LEN,
            });
        }
        if len == 0 {
            return Err(TraceError::Malformed {
                offset: start,
                message: "empty block".into(),
            });
        }
        self.block.resize(len as usize, 0);
        let n = read_full(&mut self.input, &mut self.block)
            .map_err(TraceError::io("reading a block"))?;
        if n < len as usize {
            return Err(TraceError::Truncated {
                offset: start + 8 + n as u64,
                expected: "the rest of the block payload",
            });
        }
        let actual = crc32(&self.block);
        if actual != crc {
            return Err(TraceError::Crc {
                offset: start,
                expected: crc,
                actual,
            });
        }
        self.offset = start + 8 + len;
        self.block_base = start + 8;
        Ok(())
    }

    /// Acts on the block in `self.block`: decodes events, or reads the trailer (`Ok(false)`).
    fn interpret_block(&mut self) -> Result<bool, TraceError> {
        match self.block[0] {
            BLOCK_EVENTS => {
                self.decode_block()?;
                Ok(true)
            }
            BLOCK_TRAILER => {
                let mut cur = Cursor {
                    data: &self.block,
                    pos: 1,
                    base: self.block_base,
                };
                let complete = match cur.byte("complete flag")? {
                    0 => false,
                    1 => true,
                    c => return Err(cur.bad_tag(self.block_base + 1, c, "complete flag (0 or 1)")),
                };
                let events = cur.varint("event count")?;
                let last_cycle = cur.varint("last cycle")?;
                if cur.pos != self.block.len() {
                    return Err(TraceError::Malformed {
                        offset: cur.offset(),
                        message: "trailer longer than its fields".into(),
                    });
                }
                if !self.dec.held.is_empty() {
                    return Err(TraceError::Malformed {
                        offset: self.block_base,
                        message: "the events end with a pipe group's change that no other \
                                  event closes"
                            .into(),
                    });
                }
                if events != self.events {
                    return Err(TraceError::Malformed {
                        offset: self.block_base,
                        message: format!(
                            "trailer counts {events} events but the blocks hold {}",
                            self.events
                        ),
                    });
                }
                let mut extra = [0u8; 1];
                if read_full(&mut self.input, &mut extra).map_err(TraceError::io("reading"))? != 0 {
                    return Err(TraceError::TrailingData {
                        offset: self.offset,
                    });
                }
                self.trailer = Some(Trailer {
                    complete,
                    events,
                    last_cycle,
                });
                Ok(false)
            }
            k => Err(TraceError::BadTag {
                offset: self.block_base,
                tag: k,
                what: "block kind (0x01 events, 0xFF trailer)",
            }),
        }
    }

    /// Inflates the event block in `self.block` into `self.raw` and locates its streams.
    fn decode_block(&mut self) -> Result<(), TraceError> {
        let (start, raw_len) = self.events_header()?;
        let raw = inflate_block(
            &self.block[start..],
            raw_len,
            self.block_base,
            self.dec.encoding,
        )?;
        self.set_raw(raw)
    }

    /// Where the DEFLATE stream of the events block in `self.block` starts, and the length
    /// it must inflate to.
    fn events_header(&self) -> Result<(usize, u64), TraceError> {
        let base = self.block_base;
        let mut cur = Cursor {
            data: &self.block,
            pos: 1,
            base,
        };
        let raw_len = cur.varint("decoded block length")?;
        if raw_len > MAX_LEN {
            return Err(TraceError::Oversized {
                offset: base + 1,
                what: "decoded block",
                len: raw_len,
                limit: MAX_LEN,
            });
        }
        Ok((cur.pos, raw_len))
    }

    /// Takes an inflated block and locates its streams.
    fn set_raw(&mut self, raw: Vec<u8>) -> Result<(), TraceError> {
        let base = self.block_base;
        let mut cur = Cursor {
            data: &raw,
            pos: 0,
            base,
        };
        let n = if self.dec.encoding >= 4 { STREAMS } else { 3 };
        let mut lens = [0u64; STREAMS];
        for len in &mut lens[..n - 1] {
            *len = cur.varint("stream length")?;
        }
        let rest = (raw.len() - cur.pos) as u64;
        let listed = lens.iter().fold(0u64, |a, &l| a.saturating_add(l));
        if lens[0] == 0 || listed > rest {
            return Err(TraceError::Malformed {
                offset: base,
                message: format!(
                    "stream lengths {:?} do not fit the {rest} decoded bytes (or no tags)",
                    &lens[..n - 1]
                ),
            });
        }
        lens[n - 1] = rest - listed;
        let mut at = cur.pos;
        self.streams = [(0, 0); STREAMS];
        for (s, &len) in self.streams.iter_mut().zip(&lens[..n]) {
            *s = (at, at + len as usize);
            at += len as usize;
        }
        self.raw = raw;
        Ok(())
    }

    /// Inflates blocks on a second thread from now on, reading up to `BLOCKS_AHEAD` blocks
    /// ahead of the decoder (frames and CRCs are still checked here). Events, errors and their
    /// order are those of reading in line (tested); if no thread can be started or no core
    /// would run it, nothing changes.
    pub fn inflate_ahead(&mut self) {
        if self.inflater.is_some() || !crate::threads::helpers_pay() {
            return;
        }
        let (jobs, inbox) = mpsc::channel::<InflateJob>();
        let (outbox, results) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("trace-inflate".into())
            .spawn(move || {
                for (block, start, raw_len, base, encoding) in inbox {
                    let raw = inflate_block(&block[start..], raw_len, base, encoding);
                    if outbox.send((block, raw)).is_err() {
                        break;
                    }
                }
            });
        if spawned.is_ok() {
            self.inflater = Some(Inflater { jobs, results });
        }
    }

    /// [`next_block`](Self::next_block) with blocks read ahead and inflated on the inflater.
    fn next_block_ahead(&mut self) -> Result<bool, TraceError> {
        while !self.ahead_stopped && self.ahead.len() < BLOCKS_AHEAD {
            let item = match self.read_frame() {
                Err(e) => Ahead::Failed(e),
                Ok(()) if self.block[0] == BLOCK_EVENTS => match self.events_header() {
                    Err(e) => Ahead::Failed(e),
                    Ok((start, raw_len)) => {
                        let block = std::mem::take(&mut self.block);
                        let encoding = self.dec.encoding;
                        let inflater = self.inflater.as_ref().expect("reading ahead");
                        match inflater
                            .jobs
                            .send((block, start, raw_len, self.block_base, encoding))
                        {
                            Ok(()) => Ahead::Inflating {
                                base: self.block_base,
                            },
                            Err(mpsc::SendError((block, ..))) => Ahead::Read {
                                base: self.block_base,
                                block,
                            },
                        }
                    }
                },
                // The trailer or a bad block kind: nothing is read after it.
                Ok(()) => Ahead::Read {
                    base: self.block_base,
                    block: std::mem::take(&mut self.block),
                },
            };
            self.ahead_stopped = !matches!(item, Ahead::Inflating { .. });
            self.ahead.push_back(item);
        }
        match self.ahead.pop_front() {
            // Not reached: iteration ends at the trailer or the first error.
            None => Ok(false),
            Some(Ahead::Failed(e)) => Err(e),
            Some(Ahead::Read { base, block }) => {
                self.block = block;
                self.block_base = base;
                self.interpret_block()
            }
            Some(Ahead::Inflating { base }) => {
                let inflater = self.inflater.as_ref().expect("reading ahead");
                let (block, raw) = inflater.results.recv().map_err(|_| {
                    TraceError::io("inflating a block")(std::io::Error::other(
                        "the inflate thread stopped",
                    ))
                })?;
                self.block = block;
                self.block_base = base;
                self.set_raw(raw?).map(|()| true)
            }
        }
    }

    /// Reads the next block (unless `take_into` left part of one) and decodes the rest of it
    /// into `self.batch`. `Ok(false)` once the trailer has been read. An error inside a block
    /// keeps the events decoded before the failing one in the batch and is returned (by the
    /// caller) after them.
    fn fill_batch(&mut self) -> Result<bool, TraceError> {
        self.batch.clear();
        self.batch_pos = 0;
        if !self.in_block && !self.next_block()? {
            return Ok(false);
        }
        let mut batch = std::mem::take(&mut self.batch);
        let result = self.decode_block_into(&mut batch, usize::MAX);
        self.batch = batch;
        self.error = result.err();
        Ok(true)
    }

    /// Decodes the current block's events into `out`, counting them, until the block ends or
    /// `limit` events were decoded (then `in_block` says the block goes on).
    fn decode_block_into<S: EventSink>(
        &mut self,
        out: &mut S,
        limit: usize,
    ) -> Result<(), TraceError> {
        let before = out.count();
        let stored = self.dec.stored;
        let result = if self.dec.encoding >= 4 {
            self.decode_batch::<true, S>(out, limit)
        } else {
            self.decode_batch::<false, S>(out, limit)
        };
        // The trailer counts events as stored: in version 6 a group's change is one.
        self.events += match self.dec.encoding == GROUPS {
            true => self.dec.stored - stored,
            false => (out.count() - before) as u64,
        };
        self.in_block = matches!(result, Ok(false));
        result.map(|_| ())
    }

    /// Decodes the current block's events into `out` from where the last call stopped:
    /// `Ok(true)` at the block's end, `Ok(false)` after `limit` events.
    fn decode_batch<const V4: bool, S: EventSink>(
        &mut self,
        out: &mut S,
        limit: usize,
    ) -> Result<bool, TraceError> {
        let base = self.block_base;
        let raw = &self.raw;
        let mut ins = Inputs::<V4> {
            cursors: self.streams.map(|(pos, end)| Cursor {
                data: &raw[..end],
                pos,
                base,
            }),
        };
        let tags_end = self.streams[S_TAGS].1;
        let start = out.count();
        let mut result = Ok(true);
        while ins.cursors[S_TAGS].pos < tags_end {
            if out.count() - start >= limit {
                result = Ok(false);
                break;
            }
            if let Err(e) = self.dec.decode(&mut ins, out) {
                result = Err(*e);
                break;
            }
        }
        let left = ins.cursors.iter().any(|c| c.pos < c.data.len());
        if matches!(result, Ok(true)) && left {
            result = Err(TraceError::Malformed {
                offset: base,
                message: "block has warp or field bytes left after its last event".into(),
            });
        }
        let positions = ins.cursors.map(|c| c.pos);
        for (s, pos) in self.streams.iter_mut().zip(positions) {
            s.0 = pos;
        }
        result
    }

    /// The next events in trace order, a block's worth at a time (never empty); `None` after
    /// the last. Mixing this with the iterator is allowed: each event is returned once.
    pub fn next_batch(&mut self) -> Option<Result<&[Event], TraceError>> {
        loop {
            if self.done {
                return None;
            }
            if self.batch_pos < self.batch.len() {
                let start = self.batch_pos;
                self.batch_pos = self.batch.len();
                return Some(Ok(&self.batch[start..]));
            }
            if let Some(e) = self.error.take() {
                self.done = true;
                return Some(Err(e));
            }
            match self.fill_batch() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl<R: Read> BinaryReader<R> {
    /// Like [`next_batch`](Self::next_batch), but hands the events over in `buf` (its old
    /// contents are dropped; its allocation is reused for a later block), for a consumer on
    /// another thread.
    pub fn take_batch(&mut self, buf: &mut Vec<Event>) -> Option<Result<(), TraceError>> {
        if self.batch_pos > 0 && self.batch_pos < self.batch.len() {
            // The iterator took some of this block's events: hand over the rest.
            buf.clear();
            buf.extend(self.batch.drain(self.batch_pos..));
            return Some(Ok(()));
        }
        if let Err(e) = self.next_batch()? {
            return Some(Err(e));
        }
        // `next_batch` returned the whole of a new block's batch.
        std::mem::swap(&mut self.batch, buf);
        self.batch.clear();
        self.batch_pos = 0;
        Some(Ok(()))
    }
}

impl<R: Read> BinaryReader<R> {
    /// Like [`take_batch`](Self::take_batch), but decodes straight into `out` (appended), in
    /// parts of about [`TAKE_EVENTS`] events: the same events, errors and order, in the
    /// consumer's own form.
    pub(crate) fn take_into<S: EventSink>(
        &mut self,
        out: &mut S,
    ) -> Option<Result<(), TraceError>> {
        self.take_at_most(out, TAKE_EVENTS)
    }

    fn take_at_most<S: EventSink>(
        &mut self,
        out: &mut S,
        limit: usize,
    ) -> Option<Result<(), TraceError>> {
        if self.batch_pos < self.batch.len() {
            // The iterator took some of this block's events: hand over the rest.
            for e in self.batch.drain(self.batch_pos..) {
                out.push(e);
            }
            return Some(Ok(()));
        }
        loop {
            if self.done {
                return None;
            }
            if let Some(e) = self.error.take() {
                self.done = true;
                return Some(Err(e));
            }
            self.batch.clear();
            self.batch_pos = 0;
            if !self.in_block {
                match self.next_block() {
                    Ok(true) => {}
                    Ok(false) => {
                        self.done = true;
                        continue;
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
            let before = out.count();
            self.error = self.decode_block_into(out, limit).err();
            if out.count() > before {
                return Some(Ok(()));
            }
        }
    }
}

impl<R: Read> Iterator for BinaryReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.batch_pos < self.batch.len() {
            let placeholder = Event::KernelLaunch {
                cycle: 0,
                launch: 0,
            };
            let e = std::mem::replace(&mut self.batch[self.batch_pos], placeholder);
            self.batch_pos += 1;
            return Some(Ok(e));
        }
        match self.next_batch()? {
            Ok(_) => {
                // Rewind: the batch is returned event by event.
                self.batch_pos = 0;
                self.next()
            }
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The CRC keeps corrupt blocks away from the event decoder, so these tests corrupt the
    //! *decoded* bytes of a block and frame them again: the decoder itself must never panic.
    use super::*;
    use crate::sim::config::GpuConfig;

    fn header() -> TraceHeader {
        let cfg = GpuConfig::preset("small").unwrap();
        let launch = crate::bench::vecadd_launch(1024);
        TraceHeader::new(
            &cfg,
            &crate::sim::gpu::prepare(&cfg, &[launch]).unwrap(),
            0,
            1,
        )
    }

    fn events() -> Vec<Event> {
        let mut v = Vec::new();
        for slot in 0..8 {
            v.push(Event::WarpLaunch {
                cycle: 0,
                warp: WarpRef { sm: 0, slot },
                info: WarpInfo {
                    launch: 0,
                    block: 0,
                    ctaid: Dim3::new(0, 0, 0),
                    warp_in_block: slot,
                    scheduler: slot % 2,
                    lanes: u32::MAX,
                },
            });
        }
        let states = [
            WarpState::NotSelected,
            WarpState::PipeBusy { pipe: Pipe::Global },
            WarpState::LgThrottle,
        ];
        // Warp cycle % 8 issues pc cycle / 8 each cycle; it completes 4 cycles later.
        let issuer = |cycle: u64| {
            (
                WarpRef {
                    sm: 0,
                    slot: cycle as u32 % 8,
                },
                cycle as u32 / 8,
            )
        };
        for cycle in 1..40u64 {
            if cycle > 4 {
                let (warp, pc) = issuer(cycle - 4);
                v.push(Event::Complete { cycle, warp, pc });
            }
            for slot in (0..8).filter(|s| (s + cycle as u32) % 3 != 0) {
                v.push(Event::WarpState {
                    cycle,
                    warp: WarpRef { sm: 0, slot },
                    state: states[(cycle as usize + slot as usize / 3) % 3],
                });
            }
            let (warp, pc) = issuer(cycle);
            v.push(Event::Issue {
                cycle,
                warp,
                pc,
                active: u32::MAX,
                pipe: Pipe::Fma,
                slot: 0,
            });
        }
        v
    }

    /// Where the blocks of `bytes` start, after the header.
    fn blocks_start(bytes: &[u8]) -> usize {
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        json_offset(version) as usize
            + u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize
    }

    /// The decoded streams of the single event block of `bytes`.
    fn raw_block(bytes: &[u8]) -> (usize, Vec<Vec<u8>>) {
        let header_end = blocks_start(bytes);
        let len = u32::from_le_bytes(bytes[header_end..header_end + 4].try_into().unwrap());
        let payload = &bytes[header_end + 8..header_end + 8 + len as usize];
        let mut cur = Cursor {
            data: payload,
            pos: 1,
            base: 0,
        };
        let total = cur.varint("len").unwrap();
        let raw = inflate_streams(&payload[cur.pos..], total, 0).unwrap();
        let mut cur = Cursor {
            data: &raw,
            pos: 0,
            base: 0,
        };
        let mut lens: Vec<usize> = (1..STREAMS)
            .map(|_| cur.varint("len").unwrap() as usize)
            .collect();
        lens.push(raw.len() - cur.pos - lens.iter().sum::<usize>());
        let mut at = cur.pos;
        let streams = lens
            .iter()
            .map(|&l| {
                at += l;
                raw[at - l..at].to_vec()
            })
            .collect();
        (header_end, streams)
    }

    #[test]
    fn version_4_re_encodes_to_the_streams_it_wrote() {
        // Written by version 4 with events deflated at level 6; the level has changed since,
        // and the header moved (version 7 put a CRC before it), the encoder must not have.
        let old: &[u8] = include_bytes!("../../tests/data/old-formats/matmul.volta.gto.v4.wstrace");
        let mut reader = BinaryReader::new(std::io::Cursor::new(old)).unwrap();
        let header_json = reader.header_json().to_string();
        let events: Vec<Event> = reader.by_ref().collect::<Result<_, _>>().unwrap();
        let mut writer =
            BinaryWriter::with_raw_header(Vec::new(), &header_json, DEFAULT_VERSION).unwrap();
        for e in &events {
            writer.write(e).unwrap();
        }
        let now = writer.finish(true).unwrap();
        assert_ne!(
            now, old,
            "deflated at the same level: this test checks nothing new"
        );
        let (old_end, old_streams) = raw_block(old);
        let (now_end, now_streams) = raw_block(&now);
        assert_eq!(now[18..now_end], old[14..old_end]);
        assert_eq!(now_streams, old_streams);
        // One block, then the same trailer.
        let trailer = |b: &[u8], end: usize| {
            let len = u32::from_le_bytes(b[end..end + 4].try_into().unwrap()) as usize;
            b[end + 8 + len..].to_vec()
        };
        assert_eq!(trailer(&now, now_end), trailer(old, old_end));
    }

    #[test]
    fn a_version_the_writer_does_not_write_is_an_error_and_writes_nothing() {
        let json = serde_json::to_string(&header()).unwrap();
        for version in [0, 3, 4, 5, 6, FORMAT_VERSION + 1, u16::MAX] {
            let mut out = Vec::new();
            let e = BinaryWriter::with_raw_header(&mut out, &json, version)
                .err()
                .unwrap_or_else(|| panic!("version {version} was written"));
            assert!(
                matches!(e, TraceError::UnwritableVersion { version: v } if v == version),
                "{e:?}"
            );
            assert_eq!(
                e.to_string(),
                format!(
                    "cannot write trace format version {version}: \
                     the writer writes versions 7, 8 and 9"
                )
            );
            assert!(out.is_empty(), "version {version}: {} bytes", out.len());
        }
        for version in [DEFAULT_VERSION, COMPACT_VERSION, GROUPED_VERSION] {
            assert!(BinaryWriter::with_raw_header(Vec::new(), &json, version).is_ok());
        }
    }

    /// Every (stream, byte) of `streams`.
    fn positions(streams: &[Vec<u8>]) -> Vec<(usize, usize)> {
        (0..streams.len())
            .flat_map(|s| (0..streams[s].len()).map(move |i| (s, i)))
            .collect()
    }

    fn reframe(bytes: &[u8], header_end: usize, streams: &[Vec<u8>]) -> Vec<u8> {
        let payload = events_payload(streams, deflate_level(encoding(DEFAULT_VERSION)));
        let len = u32::from_le_bytes(bytes[header_end..header_end + 4].try_into().unwrap());
        let mut out = bytes[..header_end].to_vec();
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(&bytes[header_end + 8 + len as usize..]);
        out
    }

    /// `events` written with this module's writer.
    fn encoded(events: &[Event]) -> Vec<u8> {
        encoded_as(events, DEFAULT_VERSION)
    }

    fn encoded_as(events: &[Event], version: u16) -> Vec<u8> {
        encoded_with(events, &header(), version)
    }

    fn encoded_with(events: &[Event], header: &TraceHeader, version: u16) -> Vec<u8> {
        let json = serde_json::to_string(header).unwrap();
        let mut w = BinaryWriter::with_raw_header(Vec::new(), &json, version).unwrap();
        for e in events {
            w.write(e).unwrap();
        }
        w.finish(true).unwrap()
    }

    /// A simulated run's events and header: `vecadd` over `n` elements on `preset`.
    fn simulated(preset: &str, n: u32) -> (Vec<Event>, TraceHeader) {
        let cfg = GpuConfig::preset(preset).unwrap();
        let launch = crate::bench::vecadd_launch(n);
        let prepared = crate::sim::gpu::prepare(&cfg, std::slice::from_ref(&launch)).unwrap();
        let header = TraceHeader::new(&cfg, &prepared, 0, 1);
        let mut rec =
            crate::trace::Recorder::new(Vec::new(), crate::trace::TraceFormat::Binary, &header)
                .unwrap();
        let mut memory = crate::sim::memory::GlobalMemory::new(16 << 20);
        crate::sim::gpu::simulate(
            &cfg,
            &[launch],
            &mut memory,
            crate::sim::gpu::SimOptions::default(),
            &mut rec,
        )
        .unwrap();
        (read(rec.finish(true).unwrap()).unwrap(), header)
    }

    fn read(bytes: Vec<u8>) -> Result<Vec<Event>, TraceError> {
        BinaryReader::new(std::io::Cursor::new(bytes))?.collect()
    }

    /// The run of [`simulated`] recorded as version 6, with the simulator's pipe groups, and
    /// the events it stores.
    fn simulated_grouped(preset: &str, n: u32) -> (Vec<u8>, u64) {
        let cfg = GpuConfig::preset(preset).unwrap();
        let launch = crate::bench::vecadd_launch(n);
        let prepared = crate::sim::gpu::prepare(&cfg, std::slice::from_ref(&launch)).unwrap();
        let header = TraceHeader::new(&cfg, &prepared, 0, 1);
        let mut rec =
            crate::trace::Recorder::new(Vec::new(), crate::trace::TraceFormat::Grouped, &header)
                .unwrap();
        let mut memory = crate::sim::memory::GlobalMemory::new(16 << 20);
        let options = crate::sim::gpu::SimOptions::default();
        crate::sim::gpu::simulate(&cfg, &[launch], &mut memory, options, &mut rec).unwrap();
        let stored = rec.events();
        (rec.finish(true).unwrap(), stored)
    }

    #[test]
    fn version_6_stores_pipe_groups_and_reads_back_the_per_warp_events() {
        for (preset, n) in [("small", 256), ("volta", 20_000)] {
            let (per_warp, _) = simulated(preset, n);
            let (bytes, stored) = simulated_grouped(preset, n);
            assert_eq!(&bytes[8..10], &GROUPED_VERSION.to_le_bytes());
            let reader = BinaryReader::new(std::io::Cursor::new(bytes.clone())).unwrap();
            let events: Vec<Event> = reader.collect::<Result<_, _>>().unwrap();
            assert_eq!(events, per_warp, "{preset}");
            if preset == "volta" {
                // The groups were used: fewer events stored than the reader hands out.
                assert!(
                    stored * 10 < per_warp.len() as u64 * 9,
                    "{stored} of {}",
                    per_warp.len()
                );
            }
        }
    }

    #[test]
    fn corrupt_version_6_groups_give_errors_not_panics() {
        let (bytes, _) = simulated_grouped("volta", 4096);
        // The tags (where a group's change is marked), the state fields with their group
        // bytes, and the other fields, which hold a group change's fields.
        most_corruptions_noticed(&bytes, &[S_TAGS, S_STATE_ARGS, S_ARGS]);
    }

    #[test]
    fn a_stream_inflates_only_to_exactly_its_length() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 27) as u8 ^ (i % 7) as u8)
            .collect();
        let z = deflate(&data, deflate_level(encoding(DEFAULT_VERSION)));
        let inflated = |input: &[u8], len: usize| {
            let mut out = vec![0u8; len];
            inflate_into(input, &mut out).map(|()| out)
        };
        assert_eq!(inflated(&z, data.len()).unwrap(), data);
        let short = inflated(&z, data.len() - 1).unwrap_err();
        assert!(short.contains("more than"), "{short}");
        let long = inflated(&z, data.len() + 1).unwrap_err();
        assert!(long.contains("its header says"), "{long}");
        assert!(inflated(&z[..z.len() / 2], data.len()).is_err());
        assert!(inflated(&[], 10).is_err());
        // Flipped bytes: an error, or (rarely) other bytes of the same length; never a panic.
        for i in (0..z.len()).step_by(7) {
            let mut bad = z.clone();
            bad[i] ^= 0x5A;
            if let Ok(out) = inflated(&bad, data.len()) {
                assert_eq!(out.len(), data.len());
            }
        }
    }

    #[test]
    fn crc32_is_the_zlib_one() {
        // Bit by bit, as the format's definition says: frames written before crc32fast must
        // still check.
        fn reference(data: &[u8]) -> u32 {
            let mut c = !0u32;
            for &b in data {
                c ^= b as u32;
                for _ in 0..8 {
                    c = if c & 1 != 0 {
                        0xEDB8_8320 ^ (c >> 1)
                    } else {
                        c >> 1
                    };
                }
            }
            !c
        }
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let data: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 63, 64, 65, 127, 128, 1000, 4999, 5000] {
            assert_eq!(crc32(&data[..len]), reference(&data[..len]), "{len} bytes");
        }
    }

    #[test]
    fn groups_and_predictions_are_used_and_round_trip() {
        let evs = events();
        let bytes = encoded(&evs);
        let (_, streams) = raw_block(&bytes);
        let tags = &streams[S_TAGS];
        let code = |c: u8| tags.iter().filter(|&&t| t & 0x1F == c).count();
        assert!(code(T_STATE_GROUP) > 20, "{} groups", code(T_STATE_GROUP));
        // A pc's first completion teaches its latency; issues after that are predicted.
        assert!(
            code(T_COMPLETE_PREDICTED) > 10,
            "{} predicted completions",
            code(T_COMPLETE_PREDICTED)
        );
        assert_eq!(read(bytes).unwrap(), evs);
    }

    #[test]
    fn corrupt_stream_lengths_give_errors_not_panics() {
        let bytes = encoded(&events());
        let header_end = blocks_start(&bytes);
        let len = u32::from_le_bytes(bytes[header_end..header_end + 4].try_into().unwrap());
        let payload = &bytes[header_end + 8..header_end + 8 + len as usize];
        // Kind, decoded length and the 2 × 8 stream lengths: every flip there breaks the sums
        // the reader checks. Past them, in the first stream's DEFLATE data, a flip may still
        // inflate (to other events, as any corruption behind a recomputed CRC may): no panic.
        let mut lengths_end = 1;
        for _ in 0..1 + 2 * STREAMS {
            while payload[lengths_end] & 0x80 != 0 {
                lengths_end += 1;
            }
            lengths_end += 1;
        }
        for i in 1..(lengths_end + 16).min(payload.len()) {
            for flip in [0x01u8, 0x40, 0x80] {
                let mut bad = payload.to_vec();
                bad[i] ^= flip;
                let mut out = bytes[..header_end].to_vec();
                out.extend_from_slice(&(bad.len() as u32).to_le_bytes());
                out.extend_from_slice(&crc32(&bad).to_le_bytes());
                out.extend_from_slice(&bad);
                out.extend_from_slice(&bytes[header_end + 8 + len as usize..]);
                let result = read(out);
                if i < lengths_end {
                    assert!(result.is_err(), "byte {i} ^ {flip:#x} went unnoticed");
                }
            }
        }
    }

    #[test]
    fn corrupt_decoded_bytes_give_errors_not_panics() {
        for version in [DEFAULT_VERSION, COMPACT_VERSION] {
            let bytes = encoded_as(&events(), version);
            let (header_end, streams) = raw_block(&bytes);
            let mut errors = 0;
            let at = positions(&streams);
            for &(s, i) in &at {
                for flip in [0x01u8, 0x80, 0xFF] {
                    let mut bad = streams.clone();
                    bad[s][i] ^= flip;
                    errors += read(reframe(&bytes, header_end, &bad)).is_err() as u32;
                }
            }
            assert!(
                errors > at.len() as u32,
                "version {version}: only {errors} of the corruptions were noticed"
            );
        }
    }

    #[test]
    fn version_5_runs_are_mostly_exact_and_round_trip() {
        let (evs, header) = simulated("volta", 1 << 12);
        let v4 = encoded_with(&evs, &header, DEFAULT_VERSION);
        let v5 = encoded_with(&evs, &header, COMPACT_VERSION);
        assert_eq!(&v5[8..10], &COMPACT_VERSION.to_le_bytes());
        assert_eq!(read(v5.clone()).unwrap(), evs);
        let (_, streams) = raw_block(&v5);
        let tags = &streams[S_TAGS];
        let code = |c: u8| tags.iter().filter(|&&t| t & 0x1F == c).count();
        let (exact, differing) = (code(T_RUN_EXACT), code(T_RUN));
        assert!(
            exact > 4 * differing,
            "{exact} exact runs, {differing} that differ"
        );
        // Events only: the header is the same. (On this small grid; `bench --trace --compact`
        // measures 40 % on a million elements.)
        let head = serde_json::to_string(&header).unwrap().len();
        assert!(
            (v5.len() - head) * 4 < (v4.len() - head) * 3,
            "version 5: {} bytes, version 4: {} (header {head})",
            v5.len(),
            v4.len()
        );
    }

    /// Random multi-byte corruptions (a fixed generator: the same every run) of every stream
    /// of simulated compact traces: an error or other events, never a panic.
    #[test]
    fn random_corruptions_of_versions_5_and_6_never_panic() {
        let rounds: usize = std::env::var("WARPSCOPE_CORRUPTION_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400);
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Version 5's runs, and version 6's pipe groups as the simulator reports them.
        let traces = [("small", 256), ("volta", 1024), ("hopper", 512)]
            .into_iter()
            .flat_map(|(preset, n)| {
                let (evs, header) = simulated(preset, n);
                [
                    encoded_with(&evs, &header, COMPACT_VERSION),
                    simulated_grouped(preset, n).0,
                ]
            });
        for bytes in traces {
            let (header_end, streams) = raw_block(&bytes);
            let at = positions(&streams);
            for _ in 0..rounds {
                let mut bad = streams.clone();
                for _ in 0..1 + next() % 4 {
                    let (s, i) = at[(next() % at.len() as u64) as usize];
                    bad[s][i] ^= (next() % 255 + 1) as u8;
                }
                let _ = read(reframe(&bytes, header_end, &bad));
            }
        }
    }

    #[test]
    fn corrupt_version_5_runs_give_errors_not_panics() {
        let (evs, header) = simulated("small", 256);
        let bytes = encoded_with(&evs, &header, COMPACT_VERSION);
        // The run streams: schedulers, masks, written states, and the tags that say which
        // records are runs.
        most_corruptions_noticed(&bytes, &[S_TAGS, S_STATE_WARPS, S_GROUPS, S_STATE_ARGS]);
    }

    /// Flips bits across `streams_to_flip` of the first block of `bytes` (re-framed with a
    /// good CRC) and asserts that most damaged traces fail to read — and that none panics.
    fn most_corruptions_noticed(bytes: &[u8], streams_to_flip: &[usize]) {
        let (header_end, streams) = raw_block(bytes);
        let mut errors = 0;
        let mut tried = 0;
        for &s in streams_to_flip {
            let step = (streams[s].len() / 300).max(1);
            for i in (0..streams[s].len()).step_by(step) {
                for flip in [0x01u8, 0x02, 0x80] {
                    let mut bad = streams.clone();
                    bad[s][i] ^= flip;
                    tried += 1;
                    errors += read(reframe(bytes, header_end, &bad)).is_err() as u32;
                }
            }
        }
        assert!(
            errors * 2 > tried,
            "only {errors} of {tried} corruptions were noticed"
        );
    }

    /// The rule of [`Completions`] written plainly: every live expectation in one list, the
    /// earliest found by a search.
    #[derive(Default)]
    struct PlainCompletions {
        due: Vec<(u64, u32, u64, u32, u32)>,
        issued: u64,
        latency: HashMap<u32, u64>,
        recent: HashMap<(u32, u32), Vec<(u32, u64)>>,
    }

    impl PlainCompletions {
        fn issue(&mut self, w: WarpRef, cycle: u64, pc: u32) {
            self.due.retain(|e| e.0 >= cycle);
            let r = self.recent.entry((w.sm, w.slot)).or_default();
            r.insert(0, (pc, cycle));
            r.truncate(RECENT);
            if let Some(&l) = self.latency.get(&pc).filter(|&&l| l < WHEEL) {
                self.due.push((cycle + l, w.sm, self.issued, w.slot, pc));
            }
            self.issued += 1;
        }
        fn expected(&mut self, cycle: u64) -> Option<(WarpRef, u32)> {
            self.due.retain(|e| e.0 >= cycle);
            let e = self.due.iter().min()?;
            (e.0 == cycle).then_some((WarpRef { sm: e.1, slot: e.3 }, e.4))
        }
        fn complete(&mut self, w: WarpRef, pc: u32, cycle: u64, expected: bool) {
            if expected {
                let i = (0..self.due.len()).min_by_key(|&i| self.due[i]).unwrap();
                self.due.remove(i);
                return;
            }
            let issued = self
                .recent
                .get(&(w.sm, w.slot))
                .and_then(|r| r.iter().find(|&&(p, _)| p == pc).map(|&(_, c)| c));
            if let Some(c) = issued.filter(|&c| c <= cycle) {
                self.latency.insert(pc, cycle - c);
            }
        }
    }

    #[test]
    fn completion_wheel_follows_the_plain_rule() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut hits = 0;
        for _ in 0..20 {
            let (mut wheel, mut plain) = (Completions::default(), PlainCompletions::default());
            let mut cycle = 0u64;
            for _ in 0..3000 {
                cycle += [0, 0, 0, 1, 1, 1, 2, 5, 700, 1500][rng.gen_range(0..10)];
                let w = WarpRef {
                    sm: rng.gen_range(0..3),
                    slot: rng.gen_range(0..6),
                };
                let pc = rng.gen_range(0..2);
                if rng.gen_bool(0.5) {
                    wheel.issue(w, cycle, pc);
                    plain.issue(w, cycle, pc);
                } else {
                    let e = wheel.expected(cycle);
                    assert_eq!(e, plain.expected(cycle), "cycle {cycle}");
                    // Take the expectation when there is one, half the time.
                    let (w, pc, hit) = match e {
                        Some((ew, epc)) if rng.gen_bool(0.5) => (ew, epc, true),
                        _ => (w, pc, false),
                    };
                    hits += hit as u32;
                    wheel.complete(w, pc, cycle, hit);
                    plain.complete(w, pc, cycle, hit);
                }
            }
        }
        assert!(hits > 100, "{hits} expected completions taken");
    }

    /// What a reader yields, event by event, up to and including the first error.
    fn yielded(items: impl Iterator<Item = Result<Event, TraceError>>) -> Vec<String> {
        let mut out = Vec::new();
        for item in items {
            let stop = item.is_err();
            out.push(format!("{item:?}"));
            if stop {
                break;
            }
        }
        out
    }

    #[test]
    fn batches_yield_what_the_iterator_yields_even_on_corrupt_blocks() {
        let bytes = encoded(&events());
        let (header_end, streams) = raw_block(&bytes);
        let mut partial = 0;
        for &(s, i) in positions(&streams).iter().step_by(3) {
            let mut bad = streams.clone();
            bad[s][i] ^= 0x5A;
            let bad = reframe(&bytes, header_end, &bad);
            let one_by_one = yielded(BinaryReader::new(std::io::Cursor::new(&bad)).unwrap());
            let mut reader = BinaryReader::new(std::io::Cursor::new(&bad)).unwrap();
            let mut batched = Vec::new();
            // The first event through the iterator, the rest in batches.
            batched.extend(yielded(reader.by_ref().take(1)));
            while let Some(batch) = reader.next_batch() {
                match batch {
                    Ok(events) => {
                        assert!(!events.is_empty());
                        batched.extend(events.iter().map(|e| format!("{:?}", Ok::<_, ()>(e))));
                    }
                    Err(e) => {
                        batched.push(format!("{:?}", Err::<(), _>(e)));
                        break;
                    }
                }
            }
            assert_eq!(batched, one_by_one, "corruption at decoded byte {i}");
            // Batches handed over, after the first event through the iterator.
            let mut reader = BinaryReader::new(std::io::Cursor::new(&bad)).unwrap();
            let mut taken = yielded(reader.by_ref().take(1));
            let mut buf = vec![Event::KernelLaunch {
                cycle: 7,
                launch: 7,
            }];
            while let Some(r) = reader.take_batch(&mut buf) {
                match r {
                    Ok(()) => taken.extend(buf.iter().map(|e| format!("{:?}", Ok::<_, ()>(e)))),
                    Err(e) => {
                        taken.push(format!("{:?}", Err::<(), _>(e)));
                        break;
                    }
                }
            }
            assert_eq!(
                taken, one_by_one,
                "take_batch, corruption at decoded byte {i}"
            );
            // Decoded straight into a sink, a few events at a time, mixed with the iterator.
            for limit in [1, 3, 1000] {
                let mut reader = BinaryReader::new(std::io::Cursor::new(&bad)).unwrap();
                let mut parts = yielded(reader.by_ref().take(1));
                let mut n = 0;
                loop {
                    if n % 5 == 4 {
                        match reader.next() {
                            Some(e) => parts.extend(yielded(std::iter::once(e))),
                            None => break,
                        }
                        n += 1;
                        continue;
                    }
                    let mut buf = Vec::new();
                    match reader.take_at_most(&mut buf, limit) {
                        None => break,
                        Some(Ok(())) => {
                            assert!(!buf.is_empty());
                            parts.extend(buf.iter().map(|e| format!("{:?}", Ok::<_, ()>(e))));
                        }
                        Some(Err(e)) => {
                            parts.push(format!("{:?}", Err::<(), _>(e)));
                            break;
                        }
                    }
                    n += 1;
                }
                assert_eq!(
                    parts, one_by_one,
                    "take_at_most({limit}), corruption at decoded byte {i}"
                );
            }
            // Blocks inflated ahead on another thread.
            let mut reader = BinaryReader::new(std::io::Cursor::new(&bad)).unwrap();
            reader.inflate_ahead();
            assert!(reader.inflater.is_some());
            assert_eq!(
                yielded(reader),
                one_by_one,
                "inflated ahead, corruption at {i}"
            );
            let last_is_error = one_by_one.last().is_some_and(|l| l.starts_with("Err"));
            partial += (last_is_error && one_by_one.len() > 1) as u32;
        }
        assert!(
            partial > 10,
            "only {partial} corruptions gave events before the error"
        );
    }
}
