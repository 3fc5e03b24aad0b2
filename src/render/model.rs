//! What the charts draw, read from a trace in one pass: every warp's residency with its state
//! intervals, every block's residency on its SM, every issue and every refill.
//!
//! A warp's state intervals are exactly its `WarpState` events: a state holds from its event's
//! cycle until the warp's next `WarpState` or its `WarpExit` (a warp still resident when the
//! trace ends is closed at its launch's end, or the last cycle). Each interval is charged to a PC
//! the way the analyzer charges it: the instruction the warp was waiting to issue (or issued),
//! i.e. the next issue's PC, or the last issued PC for the intervals after the last issue.
//!
//! Memory is proportional to the number of state intervals, issues and blocks in the trace.

use crate::sim::observer::{WarpRef, WarpState};
use crate::trace::{Event, TraceError, TraceHeader, TraceReader};
use std::collections::HashMap;
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

/// One warp's stay in a warp slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpLife {
    pub sm: u32,
    pub slot: u32,
    pub scheduler: u32,
    pub launch: u32,
    pub block: u32,
    pub warp_in_block: u32,
    pub from: u64,
    pub to: u64,
    pub intervals: Vec<Interval>,
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

/// A trace as the charts see it.
#[derive(Debug, Clone)]
pub struct TraceModel {
    pub header: TraceHeader,
    /// First and one-past-last cycle of the trace's events.
    pub start: u64,
    pub end: u64,
    /// In order of the warps' exits (then, for warps alive at the end, by SM and slot).
    pub warps: Vec<WarpLife>,
    pub blocks: Vec<BlockSpan>,
    pub issues: Vec<IssueRec>,
    pub refills: Vec<RefillRec>,
}

struct Open {
    life: WarpLife,
    state: Option<(WarpState, u64)>,
    /// Index in `life.intervals` of the first interval still waiting for its PC.
    unpriced: usize,
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
                self.life.intervals.push(Interval {
                    state,
                    from: since,
                    to: cycle,
                    pc,
                });
            }
        }
    }

    fn price(&mut self, pc: Option<u32>) {
        for i in &mut self.life.intervals[self.unpriced..] {
            if i.pc.is_none() {
                i.pc = pc;
            }
        }
        self.unpriced = self.life.intervals.len();
    }

    fn finish(mut self, cycle: u64) -> WarpLife {
        self.close(cycle);
        self.price(self.last_pc);
        self.life.to = cycle.max(self.life.from);
        self.life
    }
}

/// Reads the trace at `path`.
pub fn load(path: &Path) -> Result<TraceModel, TraceError> {
    let mut reader = TraceReader::open(path)?;
    let header = reader.header().clone();
    let mut open: HashMap<WarpRef, Open> = HashMap::new();
    let mut open_blocks: HashMap<(u32, u32), (u32, u64)> = HashMap::new();
    let mut launch_end: HashMap<u32, u64> = HashMap::new();
    let mut m = TraceModel {
        header,
        start: u64::MAX,
        end: 0,
        warps: Vec::new(),
        blocks: Vec::new(),
        issues: Vec::new(),
        refills: Vec::new(),
    };
    for event in reader.by_ref() {
        let event = event?;
        let cycle = event.cycle();
        m.start = m.start.min(cycle);
        m.end = m.end.max(cycle + 1);
        match event {
            Event::KernelComplete { launch, .. } => {
                launch_end.insert(launch, cycle);
            }
            Event::BlockAssign {
                launch, block, sm, ..
            } => {
                open_blocks.insert((launch, block), (sm, cycle));
            }
            Event::BlockComplete {
                launch, block, sm, ..
            } => {
                let from = open_blocks.remove(&(launch, block)).map_or(cycle, |b| b.1);
                m.blocks.push(BlockSpan {
                    launch,
                    block,
                    sm,
                    from,
                    to: cycle,
                });
            }
            Event::WarpLaunch { warp, info, .. } => {
                if let Some(previous) = open.remove(&warp) {
                    m.warps.push(previous.finish(cycle));
                }
                open.insert(
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
                            intervals: Vec::new(),
                        },
                        state: None,
                        unpriced: 0,
                        last_pc: None,
                    },
                );
            }
            Event::WarpState { warp, state, .. } => {
                if let Some(o) = open.get_mut(&warp) {
                    o.close(cycle);
                    o.state = Some((state, cycle));
                }
            }
            Event::Issue { warp, pc, slot, .. } => {
                if let Some(o) = open.get_mut(&warp) {
                    // The interval running now (normally `selected`) belongs to this issue too.
                    o.close(cycle);
                    if let Some((_, since)) = o.state.as_mut() {
                        *since = cycle;
                    }
                    o.price(Some(pc));
                    o.last_pc = Some(pc);
                    m.issues.push(IssueRec {
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
                if let Some(o) = open.remove(&warp) {
                    m.warps.push(o.finish(cycle));
                }
            }
            Event::Refill { sm, scheduler, .. } => m.refills.push(RefillRec {
                cycle,
                sm,
                scheduler,
            }),
            _ => {}
        }
    }
    if m.start == u64::MAX {
        m.start = 0;
    }
    let mut rest: Vec<_> = open.into_iter().collect();
    rest.sort_by_key(|(w, _)| (w.sm, w.slot));
    for (_, o) in rest {
        let end = launch_end
            .get(&o.life.launch)
            .copied()
            .unwrap_or(m.end.saturating_sub(1));
        m.warps.push(o.finish(end));
    }
    let mut rest: Vec<_> = open_blocks.into_iter().collect();
    rest.sort();
    for ((launch, block), (sm, from)) in rest {
        let to = launch_end
            .get(&launch)
            .copied()
            .unwrap_or(m.end.saturating_sub(1));
        m.blocks.push(BlockSpan {
            launch,
            block,
            sm,
            from,
            to: to.max(from),
        });
    }
    Ok(m)
}
