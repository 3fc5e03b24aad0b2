//! The trace's event schema: one [`Event`] variant per [`Observer`](crate::sim::observer::Observer) method, each with its cycle.
//!
//! JSON form (JSON Lines traces): `{"event":"issue","cycle":12,"warp":{"sm":0,"slot":3},...}`.

use crate::isa::Pipe;
use crate::sim::observer::{MemEvent, Observer, WarpInfo, WarpRef, WarpState};
use crate::sim::scoreboard::Hazard;
use crate::sim::{Fault, LaneMask};
use crate::words::count;
use serde::{Deserialize, Serialize};

/// One thing the simulator reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event", deny_unknown_fields)]
pub enum Event {
    KernelLaunch {
        cycle: u64,
        launch: u32,
    },
    KernelComplete {
        cycle: u64,
        launch: u32,
    },
    BlockAssign {
        cycle: u64,
        launch: u32,
        block: u32,
        sm: u32,
    },
    BlockComplete {
        cycle: u64,
        launch: u32,
        block: u32,
        sm: u32,
    },
    WarpLaunch {
        cycle: u64,
        warp: WarpRef,
        info: WarpInfo,
    },
    WarpExit {
        cycle: u64,
        warp: WarpRef,
    },
    WarpState {
        cycle: u64,
        warp: WarpRef,
        state: WarpState,
    },
    Issue {
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        active: LaneMask,
        pipe: Pipe,
        slot: u32,
    },
    Complete {
        cycle: u64,
        warp: WarpRef,
        pc: u32,
    },
    Refill {
        cycle: u64,
        sm: u32,
        scheduler: u32,
        slots: u32,
    },
    BarrierArrive {
        cycle: u64,
        warp: WarpRef,
    },
    BarrierRelease {
        cycle: u64,
        sm: u32,
        launch: u32,
        block: u32,
    },
    Memory {
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        mem: MemEvent,
    },
    Hazard {
        cycle: u64,
        warp: WarpRef,
        hazard: Hazard,
    },
    Fault {
        cycle: u64,
        fault: Box<Fault>,
    },
}

/// The kinds of [`Event`], in tag order (used for per-kind counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    KernelLaunch,
    KernelComplete,
    BlockAssign,
    BlockComplete,
    WarpLaunch,
    WarpExit,
    WarpState,
    Issue,
    Complete,
    Refill,
    BarrierArrive,
    BarrierRelease,
    Memory,
    Hazard,
    Fault,
}

impl EventKind {
    pub const ALL: [EventKind; 15] = [
        EventKind::KernelLaunch,
        EventKind::KernelComplete,
        EventKind::BlockAssign,
        EventKind::BlockComplete,
        EventKind::WarpLaunch,
        EventKind::WarpExit,
        EventKind::WarpState,
        EventKind::Issue,
        EventKind::Complete,
        EventKind::Refill,
        EventKind::BarrierArrive,
        EventKind::BarrierRelease,
        EventKind::Memory,
        EventKind::Hazard,
        EventKind::Fault,
    ];

    /// The snake_case name used in JSON (`"event": NAME`).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::KernelLaunch => "kernel_launch",
            EventKind::KernelComplete => "kernel_complete",
            EventKind::BlockAssign => "block_assign",
            EventKind::BlockComplete => "block_complete",
            EventKind::WarpLaunch => "warp_launch",
            EventKind::WarpExit => "warp_exit",
            EventKind::WarpState => "warp_state",
            EventKind::Issue => "issue",
            EventKind::Complete => "complete",
            EventKind::Refill => "refill",
            EventKind::BarrierArrive => "barrier_arrive",
            EventKind::BarrierRelease => "barrier_release",
            EventKind::Memory => "memory",
            EventKind::Hazard => "hazard",
            EventKind::Fault => "fault",
        }
    }

    /// The lowest recording verbosity at which events of this kind are recorded. Refills are
    /// recorded at every verbosity: they are the only record of the issue slots a `coarse`
    /// switch costs (few events, one per switch), and without them a trace's refill slots
    /// would be counted as vertical waste.
    pub fn min_verbosity(self) -> u8 {
        match self {
            EventKind::Memory => 2,
            EventKind::WarpState
            | EventKind::Complete
            | EventKind::BarrierArrive
            | EventKind::BarrierRelease => 1,
            _ => 0,
        }
    }
}

impl Event {
    /// What in this event the trace's header contradicts (an SM, warp slot, scheduler, launch
    /// or PC the recorded GPU and launches do not have), for readers of hand-edited traces.
    pub fn out_of_range(&self, header: &super::TraceHeader) -> Option<String> {
        let c = &header.config;
        let sm = |sm: u32| {
            (sm >= c.num_sms).then(|| {
                format!(
                    "SM {sm}, but the GPU has {}",
                    count(c.num_sms as u64, "SM", "SMs")
                )
            })
        };
        let warp = |w: &WarpRef| {
            sm(w.sm).or_else(|| {
                (w.slot >= c.sm.max_warps).then(|| {
                    format!(
                        "warp slot {}, but an SM has {}",
                        w.slot,
                        count(c.sm.max_warps as u64, "slot", "slots")
                    )
                })
            })
        };
        let launch = |l: u32| {
            (l as usize >= header.launches.len()).then(|| {
                format!(
                    "launch {l}, but the trace has {}",
                    count(header.launches.len() as u64, "launch", "launches")
                )
            })
        };
        let scheduler = |s: u32| {
            (s >= c.sm.schedulers).then(|| {
                format!(
                    "scheduler {s}, but an SM has {}",
                    count(c.sm.schedulers as u64, "scheduler", "schedulers")
                )
            })
        };
        let pc = |pc: u32| {
            let longest = header.launches.iter().map(|l| l.listing.len()).max();
            (pc as usize >= longest.unwrap_or(0))
                .then(|| format!("pc {pc}, past every launch's listing"))
        };
        match self {
            Event::KernelLaunch { launch: l, .. } | Event::KernelComplete { launch: l, .. } => {
                launch(*l)
            }
            Event::BlockAssign {
                launch: l, sm: s, ..
            }
            | Event::BlockComplete {
                launch: l, sm: s, ..
            }
            | Event::BarrierRelease {
                launch: l, sm: s, ..
            } => launch(*l).or_else(|| sm(*s)),
            Event::WarpLaunch { warp: w, info, .. } => warp(w)
                .or_else(|| launch(info.launch))
                .or_else(|| scheduler(info.scheduler)),
            Event::WarpExit { warp: w, .. }
            | Event::WarpState { warp: w, .. }
            | Event::BarrierArrive { warp: w, .. }
            | Event::Hazard { warp: w, .. } => warp(w),
            Event::Issue { warp: w, pc: p, .. }
            | Event::Complete { warp: w, pc: p, .. }
            | Event::Memory { warp: w, pc: p, .. } => warp(w).or_else(|| pc(*p)),
            Event::Refill {
                sm: s,
                scheduler: k,
                ..
            } => sm(*s).or_else(|| scheduler(*k)),
            Event::Fault { .. } => None,
        }
    }

    pub fn cycle(&self) -> u64 {
        match *self {
            Event::KernelLaunch { cycle, .. }
            | Event::KernelComplete { cycle, .. }
            | Event::BlockAssign { cycle, .. }
            | Event::BlockComplete { cycle, .. }
            | Event::WarpLaunch { cycle, .. }
            | Event::WarpExit { cycle, .. }
            | Event::WarpState { cycle, .. }
            | Event::Issue { cycle, .. }
            | Event::Complete { cycle, .. }
            | Event::Refill { cycle, .. }
            | Event::BarrierArrive { cycle, .. }
            | Event::BarrierRelease { cycle, .. }
            | Event::Memory { cycle, .. }
            | Event::Hazard { cycle, .. }
            | Event::Fault { cycle, .. } => cycle,
        }
    }

    pub fn kind(&self) -> EventKind {
        match self {
            Event::KernelLaunch { .. } => EventKind::KernelLaunch,
            Event::KernelComplete { .. } => EventKind::KernelComplete,
            Event::BlockAssign { .. } => EventKind::BlockAssign,
            Event::BlockComplete { .. } => EventKind::BlockComplete,
            Event::WarpLaunch { .. } => EventKind::WarpLaunch,
            Event::WarpExit { .. } => EventKind::WarpExit,
            Event::WarpState { .. } => EventKind::WarpState,
            Event::Issue { .. } => EventKind::Issue,
            Event::Complete { .. } => EventKind::Complete,
            Event::Refill { .. } => EventKind::Refill,
            Event::BarrierArrive { .. } => EventKind::BarrierArrive,
            Event::BarrierRelease { .. } => EventKind::BarrierRelease,
            Event::Memory { .. } => EventKind::Memory,
            Event::Hazard { .. } => EventKind::Hazard,
            Event::Fault { .. } => EventKind::Fault,
        }
    }

    /// The warp the event is about, if it names one.
    pub fn warp(&self) -> Option<WarpRef> {
        match *self {
            Event::WarpLaunch { warp, .. }
            | Event::WarpExit { warp, .. }
            | Event::WarpState { warp, .. }
            | Event::Issue { warp, .. }
            | Event::Complete { warp, .. }
            | Event::BarrierArrive { warp, .. }
            | Event::Memory { warp, .. }
            | Event::Hazard { warp, .. } => Some(warp),
            _ => None,
        }
    }
}

/// Keeps every event in memory, in order: the whole trace of a small run, for tests.
impl Observer for Vec<Event> {
    fn kernel_launch(&mut self, cycle: u64, launch: u32) {
        self.push(Event::KernelLaunch { cycle, launch });
    }
    fn kernel_complete(&mut self, cycle: u64, launch: u32) {
        self.push(Event::KernelComplete { cycle, launch });
    }
    fn block_assign(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.push(Event::BlockAssign {
            cycle,
            launch,
            block,
            sm,
        });
    }
    fn block_complete(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.push(Event::BlockComplete {
            cycle,
            launch,
            block,
            sm,
        });
    }
    fn warp_launch(&mut self, cycle: u64, warp: WarpRef, info: &WarpInfo) {
        let info = *info;
        self.push(Event::WarpLaunch { cycle, warp, info });
    }
    fn warp_exit(&mut self, cycle: u64, warp: WarpRef) {
        self.push(Event::WarpExit { cycle, warp });
    }
    fn warp_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState) {
        self.push(Event::WarpState { cycle, warp, state });
    }
    fn issue(
        &mut self,
        cycle: u64,
        warp: WarpRef,
        pc: u32,
        active: LaneMask,
        pipe: Pipe,
        slot: u32,
    ) {
        self.push(Event::Issue {
            cycle,
            warp,
            pc,
            active,
            pipe,
            slot,
        });
    }
    fn complete(&mut self, cycle: u64, warp: WarpRef, pc: u32) {
        self.push(Event::Complete { cycle, warp, pc });
    }
    fn refill(&mut self, cycle: u64, sm: u32, scheduler: u32, slots: u32) {
        self.push(Event::Refill {
            cycle,
            sm,
            scheduler,
            slots,
        });
    }
    fn barrier_arrive(&mut self, cycle: u64, warp: WarpRef) {
        self.push(Event::BarrierArrive { cycle, warp });
    }
    fn barrier_release(&mut self, cycle: u64, sm: u32, launch: u32, block: u32) {
        self.push(Event::BarrierRelease {
            cycle,
            sm,
            launch,
            block,
        });
    }
    fn memory(&mut self, cycle: u64, warp: WarpRef, pc: u32, event: &MemEvent) {
        let mem = *event;
        self.push(Event::Memory {
            cycle,
            warp,
            pc,
            mem,
        });
    }
    fn hazard(&mut self, cycle: u64, warp: WarpRef, hazard: &Hazard) {
        let hazard = *hazard;
        self.push(Event::Hazard {
            cycle,
            warp,
            hazard,
        });
    }
    fn fault(&mut self, cycle: u64, fault: &Fault) {
        let fault = Box::new(fault.clone());
        self.push(Event::Fault { cycle, fault });
    }
}
