//! What the charts draw, streamed from a trace: every warp's residency with its state
//! intervals, every block's residency on its SM, every issue and every refill — handed to a
//! [`Sink`] as they are known, never all held at once.
//!
//! A warp's state intervals are exactly its `WarpState` events: a state holds from its event's
//! cycle until the warp's next `WarpState` or its `WarpExit` (a warp still resident when the
//! trace ends is closed at its launch's end, or the last cycle). Each interval is charged to a PC
//! the way the analyzer charges it: the instruction the warp was waiting to issue (or issued),
//! i.e. the next issue's PC, or the last issued PC for the intervals after the last issue. So an
//! interval reaches the sink once its PC is known (at the warp's next issue or its end); per
//! warp slot, intervals arrive in time order.
//!
//! [`load`] reads a trace once for what every chart needs first — the header, the cycle range
//! and which warp slots held a warp — and each chart then streams the trace again into its own
//! per-row, per-pixel-column accumulators. Memory is bounded by the warps resident at once
//! (their open intervals), the GPU's warp slots and what the charts draw, not by the trace's
//! length; the dispatch chart keeps a span per block only while there are at most
//! [`MAX_BARS`](super::dispatch::MAX_BARS) of them (it draws a bar each), and counts per SM
//! and column past that.

use crate::sim::observer::{WarpRef, WarpState};
use crate::trace::{Event, TraceError, TraceHeader, TraceReader};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One state interval of a warp, `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub state: WarpState,
    pub from: u64,
    pub to: u64,
    /// The instruction the cycles are charged to.
    pub pc: Option<u32>,
}

/// One warp's stay in a warp slot, `[from, to)` (`to` is final only when the sink's
/// [`Sink::life`] sees it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpLife {
    pub sm: u32,
    pub slot: u32,
    pub scheduler: u32,
    pub launch: u32,
    pub block: u32,
    pub warp_in_block: u32,
    pub from: u64,
    pub to: u64,
}

/// One block's stay on an SM, `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSpan {
    pub launch: u32,
    pub block: u32,
    pub sm: u32,
    pub from: u64,
    pub to: u64,
}

/// One issued warp instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IssueRec {
    pub cycle: u64,
    pub sm: u32,
    pub scheduler: u32,
    /// Issue slot within the scheduler's cycle (0 .. issue_width).
    pub issue_slot: u32,
    pub warp_slot: u32,
    pub launch: u32,
    pub pc: u32,
}

/// A cycle whose issue slots went to a `coarse` refill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefillRec {
    pub cycle: u64,
    pub sm: u32,
    pub scheduler: u32,
}

/// Where [`stream`] hands what it reconstructs. Every method defaults to ignoring it.
pub trait Sink {
    /// A state interval of `life`, with its PC settled.
    fn interval(&mut self, _life: &WarpLife, _iv: &Interval) {}
    /// A warp's residency, once it ended (all its intervals came before).
    fn life(&mut self, _life: &WarpLife) {}
    /// An issue by a resident warp.
    fn issue(&mut self, _issue: &IssueRec) {}
    fn refill(&mut self, _refill: &RefillRec) {}
    /// A block's residency: completed blocks as they complete, then the ones still resident at
    /// the end by launch and block.
    fn block(&mut self, _block: &BlockSpan) {}
}

/// The cycle range of a streamed trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First and one-past-last cycle of the trace's events (0, 0 without events).
    pub start: u64,
    pub end: u64,
}

struct Open {
    life: WarpLife,
    state: Option<(WarpState, u64)>,
    /// Intervals still waiting for their PC (those of the stretch since the last issue).
    unpriced: Vec<Interval>,
    last_pc: Option<u32>,
}

impl Open {
    fn close(&mut self, cycle: u64) {
        if let Some((state, since)) = self.state {
            if cycle > since {
                // `selected` cycles belong to the issue that started them.
                let pc = match state {
                    WarpState::Selected => self.last_pc,
                    _ => None,
                };
                self.unpriced.push(Interval {
                    state,
                    from: since,
                    to: cycle,
                    pc,
                });
            }
        }
    }

    fn price(&mut self, pc: Option<u32>, sink: &mut impl Sink) {
        for mut iv in self.unpriced.drain(..) {
            if iv.pc.is_none() {
                iv.pc = pc;
            }
            sink.interval(&self.life, &iv);
        }
    }

    fn finish(mut self, cycle: u64, sink: &mut impl Sink) {
        self.close(cycle);
        self.price(self.last_pc, sink);
        self.life.to = cycle.max(self.life.from);
        sink.life(&self.life);
    }
}

/// The reconstruction's state between events: only what is resident.
struct Tracker {
    open: HashMap<WarpRef, Open>,
    open_blocks: HashMap<(u32, u32), (u32, u64)>,
    launch_end: HashMap<u32, u64>,
    start: u64,
    end: u64,
}

impl Tracker {
    fn event(&mut self, event: &Event, sink: &mut impl Sink) {
        let cycle = event.cycle();
        self.start = self.start.min(cycle);
        self.end = self.end.max(cycle + 1);
        match *event {
            Event::KernelComplete { launch, .. } => {
                self.launch_end.insert(launch, cycle);
            }
            Event::BlockAssign {
                launch, block, sm, ..
            } => {
                self.open_blocks.insert((launch, block), (sm, cycle));
            }
            Event::BlockComplete {
                launch, block, sm, ..
            } => {
                let from = self
                    .open_blocks
                    .remove(&(launch, block))
                    .map_or(cycle, |b| b.1);
                sink.block(&BlockSpan {
                    launch,
                    block,
                    sm,
                    from,
                    to: cycle,
                });
            }
            Event::WarpLaunch { warp, info, .. } => {
                if let Some(previous) = self.open.remove(&warp) {
                    previous.finish(cycle, sink);
                }
                self.open.insert(
                    warp,
                    Open {
                        life: WarpLife {
                            sm: warp.sm,
                            slot: warp.slot,
                            scheduler: info.scheduler,
                            launch: info.launch,
                            block: info.block,
                            warp_in_block: info.warp_in_block,
                            from: cycle,
                            to: cycle,
                        },
                        state: None,
                        unpriced: Vec::new(),
                        last_pc: None,
                    },
                );
            }
            Event::WarpState { warp, state, .. } => {
                if let Some(o) = self.open.get_mut(&warp) {
                    o.close(cycle);
                    o.state = Some((state, cycle));
                }
            }
            Event::Issue { warp, pc, slot, .. } => {
                if let Some(o) = self.open.get_mut(&warp) {
                    // The interval running now (normally `selected`) belongs to this issue too.
                    o.close(cycle);
                    if let Some((_, since)) = o.state.as_mut() {
                        *since = cycle;
                    }
                    o.price(Some(pc), sink);
                    o.last_pc = Some(pc);
                    sink.issue(&IssueRec {
                        cycle,
                        sm: warp.sm,
                        scheduler: o.life.scheduler,
                        issue_slot: slot,
                        warp_slot: warp.slot,
                        launch: o.life.launch,
                        pc,
                    });
                }
            }
            Event::WarpExit { warp, .. } => {
                if let Some(o) = self.open.remove(&warp) {
                    o.finish(cycle, sink);
                }
            }
            Event::Refill { sm, scheduler, .. } => sink.refill(&RefillRec {
                cycle,
                sm,
                scheduler,
            }),
            _ => {}
        }
    }

    /// Closes what is still resident at the end of the trace.
    fn finish(mut self, sink: &mut impl Sink) -> Span {
        if self.start == u64::MAX {
            self.start = 0;
        }
        let last = self.end.saturating_sub(1);
        let mut rest: Vec<_> = self.open.into_iter().collect();
        rest.sort_by_key(|(w, _)| (w.sm, w.slot));
        for (_, o) in rest {
            let end = self.launch_end.get(&o.life.launch).copied().unwrap_or(last);
            o.finish(end, sink);
        }
        let mut rest: Vec<_> = self.open_blocks.into_iter().collect();
        rest.sort();
        for ((launch, block), (sm, from)) in rest {
            let to = self.launch_end.get(&launch).copied().unwrap_or(last);
            sink.block(&BlockSpan {
                launch,
                block,
                sm,
                from,
                to: to.max(from),
            });
        }
        Span {
            start: self.start,
            end: self.end,
        }
    }
}

/// Reads the trace at `path` once, handing everything to `sink`; returns the header and the
/// cycle range.
pub fn stream(path: &Path, sink: &mut impl Sink) -> Result<(TraceHeader, Span), TraceError> {
    let mut reader = TraceReader::open(path)?;
    if let TraceReader::Binary(r) = &mut reader {
        // Inflating on a second thread; events and errors are those of reading in line.
        r.inflate_ahead();
    }
    let header = reader.header().clone();
    let mut tracker = Tracker {
        open: HashMap::new(),
        open_blocks: HashMap::new(),
        launch_end: HashMap::new(),
        start: u64::MAX,
        end: 0,
    };
    reader.for_each_event(|e| tracker.event(e, sink))?;
    Ok((header, tracker.finish(sink)))
}

/// A warp slot, as the time charts key their rows: (SM, scheduler, slot).
pub type SlotKey = (u32, u32, u32);

/// A trace as the charts see it before they draw: its header, cycle range and warp slots.
#[derive(Debug, Clone)]
pub struct TraceModel {
    pub header: TraceHeader,
    /// First and one-past-last cycle of the trace's events.
    pub start: u64,
    pub end: u64,
    /// Every warp slot that held a warp, with the latest end of its warps that arrived before
    /// `before` (`None`: none did) — a slot shows a row in the window `[from, before)` iff
    /// that end is after `from`.
    pub slots: BTreeMap<SlotKey, Option<u64>>,
    /// The window end `slots` was computed for (`None`: the trace's end).
    pub before: Option<u64>,
}

impl TraceModel {
    /// The warp slots that held a warp in cycles `[from, to)`, where `to` is the `before`
    /// this model was read for.
    pub fn resident_in(&self, from: u64) -> impl Iterator<Item = SlotKey> + '_ {
        self.slots
            .iter()
            .filter(move |(_, end)| end.is_some_and(|e| e > from))
            .map(|(&k, _)| k)
    }

    /// How many items the model holds (the test of its bound reads it).
    pub fn retained(&self) -> usize {
        self.slots.len()
    }
}

struct Slots {
    before: Option<u64>,
    slots: BTreeMap<SlotKey, Option<u64>>,
}

impl Sink for Slots {
    fn life(&mut self, w: &WarpLife) {
        let end = self.slots.entry((w.sm, w.scheduler, w.slot)).or_default();
        if self.before.map_or(true, |b| w.from < b) {
            *end = Some(end.map_or(w.to, |e| e.max(w.to)));
        }
    }
}

/// Reads the trace at `path` for a window ending at `before` (`None`: the trace's end).
pub fn load_before(path: &Path, before: Option<u64>) -> Result<TraceModel, TraceError> {
    let mut sink = Slots {
        before,
        slots: BTreeMap::new(),
    };
    let (header, span) = stream(path, &mut sink)?;
    Ok(TraceModel {
        header,
        start: span.start,
        end: span.end,
        slots: sink.slots,
        before,
    })
}

/// Reads the trace at `path` for windows ending at the trace's end.
pub fn load(path: &Path) -> Result<TraceModel, TraceError> {
    load_before(path, None)
}
