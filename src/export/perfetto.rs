//! Perfetto / chrome://tracing export: the trace as Chrome Trace Event JSON, which
//! ui.perfetto.dev opens directly.
//!
//! - one process per SM (`pid` = SM id + 1), one thread per warp slot (`tid` = slot + 1), named;
//! - one complete slice (`"ph":"X"`) per warp-state interval, named by its Nsight state, with
//!   `args` holding the PC and instruction it is charged to (the one the warp waited to issue,
//!   or issued, exactly as the analyzer charges it), the raw reason and the warp's block;
//! - counter tracks per scheduler: eligible warps and warp instructions issued per cycle.
//!
//! Time: **one cycle is one microsecond** (`ts` and `dur` are cycles), so the UI's "µs" read
//! as cycles. Slices on one thread are emitted in time order and never overlap: a warp slot's
//! intervals are consecutive and a new warp starts in a slot only after the last one exited.
//!
//! A [`Selection`] exports part of the trace: a window of cycles `[from, to)` (a slice that
//! crosses its edges is cut to it; each counter starts at `from` with the value it has then),
//! one SM's tracks, the launches of one kernel (whose warps alone then make the counters).
//! What it writes is the whole export cut to the selection, and reading stops once nothing
//! in the window waits for a later event (the PC a stall is charged to is that of the warp's
//! next issue).
//!
//! Streaming: memory is proportional to resident warps; output goes straight to the writer.

use crate::analyze::{detailed_name, NsightState};
use crate::kernel_name;
use crate::sim::observer::{WarpRef, WarpState};
use crate::trace::{Event, TraceError, TraceHeader, TraceReader};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::json;
use std::io::{Read, Write};

/// What part of a trace to export; the default is all of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The first cycle exported (default: the trace's first).
    pub from: Option<u64>,
    /// Cycles before this one are exported (default, and at most: the trace's end).
    pub to: Option<u64>,
    /// Only this SM's tracks.
    pub sm: Option<u32>,
    /// Only the launches of this kernel, picked as `analyze --kernel` picks them
    /// ([`kernel_name::select`]).
    pub kernel: Option<String>,
}

impl Selection {
    /// Whether this selects the whole trace.
    pub fn is_whole(&self) -> bool {
        *self == Selection::default()
    }
}

/// What the export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportStats {
    pub slices: u64,
    pub counters: u64,
    /// The cycles exported, `[from, to)`: the selection's window, ending at the trace's end
    /// if it asks for more.
    pub from: u64,
    pub to: u64,
}

/// Why an export failed: the trace, or a selection the trace cannot satisfy.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("--from {from} must be less than --to {to}")]
    BadRange { from: u64, to: u64 },
    #[error("no SM {sm}: the GPU `{gpu}` has {num_sms} SMs (0 to {})", num_sms.saturating_sub(1))]
    NoSuchSm { sm: u32, gpu: String, num_sms: u32 },
    /// No kernel of the trace answers to `--kernel` (the message lists them).
    #[error("{0}")]
    NoSuchKernel(String),
    #[error("--from {from} is past the trace's last cycle (it covers cycles {start}..{end})")]
    FromPastEnd { from: u64, start: u64, end: u64 },
    #[error("--to {to} is not after the trace's first cycle {start}")]
    ToBeforeStart { to: u64, start: u64 },
}

struct Interval {
    state: WarpState,
    from: u64,
    to: u64,
}

struct WarpTrack {
    launch: u32,
    block: u32,
    warp_in_block: u32,
    scheduler: u32,
    state: Option<WarpState>,
    since: u64,
    last_pc: Option<u32>,
    /// Intervals since the last issue, charged to the next issued PC.
    pending: Vec<Interval>,
}

/// A counter track's values before the window, while its first value in it is not written.
#[derive(Default, Clone, Copy)]
struct CounterTrack {
    before: Option<i64>,
    started: bool,
}

#[derive(Default, Clone, Copy)]
struct SchedulerTrack {
    eligible: i64,
    /// The cycle whose final eligible count is not written yet: several warps change in one
    /// cycle, and the counter takes one value per cycle.
    eligible_cycle: Option<u64>,
    issued_cycle: Option<u64>,
    issued: u64,
}

struct Exporter<'h, W: Write> {
    out: W,
    header: &'h TraceHeader,
    first: bool,
    stats: ExportStats,
    warps: FxHashMap<WarpRef, WarpTrack>,
    schedulers: FxHashMap<(u32, u32), SchedulerTrack>,
    /// The window `[from, to)` (0 and `u64::MAX` when the selection leaves it open).
    from: u64,
    to: u64,
    sm: Option<u32>,
    /// Which launches are exported (`None`: all).
    launches: Option<Vec<bool>>,
    counter_tracks: FxHashMap<(u32, u32, &'static str), CounterTrack>,
    /// Whether the trace has reached `to`: from then on, warps only close what they hold.
    past_window: bool,
    /// Past the window, the warps whose stalls in it wait for the PC of their next issue.
    waiting: FxHashSet<WarpRef>,
}

fn io(e: std::io::Error) -> TraceError {
    TraceError::io("writing the Perfetto export")(e)
}

impl<W: Write> Exporter<'_, W> {
    fn emit(&mut self, value: serde_json::Value) -> Result<(), TraceError> {
        let sep = if self.first { "\n" } else { ",\n" };
        self.first = false;
        self.out.write_all(sep.as_bytes()).map_err(io)?;
        serde_json::to_writer(&mut self.out, &value).map_err(|e| io(e.into()))
    }

    fn instruction(&self, launch: u32, pc: u32) -> &str {
        self.header
            .launches
            .get(launch as usize)
            .and_then(|l| l.listing.get(pc as usize))
            .map_or("", String::as_str)
    }

    fn slice(
        &mut self,
        warp: WarpRef,
        t: &WarpTrack,
        i: &Interval,
        pc: Option<u32>,
    ) -> Result<(), TraceError> {
        // Cut to the window.
        let (from, to) = (i.from.max(self.from), i.to.min(self.to));
        if to <= from {
            return Ok(());
        }
        let mut args = json!({
            "reason": detailed_name(i.state),
            "block": t.block,
            "warp_in_block": t.warp_in_block,
            "launch": t.launch,
        });
        if let Some(pc) = pc {
            args["pc"] = json!(pc);
            args["instruction"] = json!(self.instruction(t.launch, pc));
        }
        self.stats.slices += 1;
        self.emit(json!({
            "ph": "X",
            "name": NsightState::of(i.state).name(),
            "cat": "warp_state",
            "ts": from,
            "dur": to - from,
            "pid": warp.sm + 1,
            "tid": warp.slot + 1,
            "args": args,
        }))
    }

    /// Closes warp `w`'s current interval at `cycle`: `selected` cycles belong to the last
    /// issue, anything else waits for the next one.
    fn close(&mut self, w: WarpRef, cycle: u64) -> Result<(), TraceError> {
        let Some(mut t) = self.warps.remove(&w) else {
            return Ok(());
        };
        let result = match t.state {
            Some(state) if cycle > t.since => {
                let i = Interval {
                    state,
                    from: t.since,
                    to: cycle,
                };
                t.since = cycle;
                if state == WarpState::Selected {
                    let pc = t.last_pc;
                    self.slice(w, &t, &i, pc)
                } else {
                    t.pending.push(i);
                    Ok(())
                }
            }
            _ => Ok(()),
        };
        self.warps.insert(w, t);
        result
    }

    fn flush(&mut self, w: WarpRef, pc: Option<u32>) -> Result<(), TraceError> {
        let Some(mut t) = self.warps.remove(&w) else {
            return Ok(());
        };
        let mut result = Ok(());
        for i in &t.pending {
            result = result.and_then(|()| self.slice(w, &t, i, pc));
        }
        t.pending.clear();
        self.warps.insert(w, t);
        self.waiting.remove(&w);
        result
    }

    /// Writes a counter's value from `cycle` on, if in the window; a counter's first value in
    /// it is preceded by the value it had at the window's start, if it had one.
    fn counter(
        &mut self,
        sm: u32,
        scheduler: u32,
        name: &'static str,
        cycle: u64,
        value: i64,
    ) -> Result<(), TraceError> {
        if cycle >= self.to {
            return Ok(());
        }
        let track = self
            .counter_tracks
            .entry((sm, scheduler, name))
            .or_default();
        if cycle < self.from {
            track.before = Some(value);
            return Ok(());
        }
        let before = if track.started {
            None
        } else {
            track.before.filter(|_| cycle > self.from)
        };
        track.started = true;
        if let Some(v) = before {
            self.write_counter(sm, scheduler, name, self.from, v)?;
        }
        self.write_counter(sm, scheduler, name, cycle, value)
    }

    /// The value at the window's start of each counter that had one and has no value in the
    /// window.
    fn counters_before_window(&mut self) -> Result<(), TraceError> {
        let mut unstarted: Vec<_> = self
            .counter_tracks
            .iter()
            .filter_map(|(&k, t)| Some((k, t.before.filter(|_| !t.started)?)))
            .collect();
        unstarted.sort();
        for ((sm, scheduler, name), value) in unstarted {
            self.write_counter(sm, scheduler, name, self.from, value)?;
        }
        Ok(())
    }

    fn write_counter(
        &mut self,
        sm: u32,
        scheduler: u32,
        name: &str,
        cycle: u64,
        value: i64,
    ) -> Result<(), TraceError> {
        self.stats.counters += 1;
        self.emit(json!({
            "ph": "C",
            "name": format!("scheduler {scheduler} {name}"),
            "ts": cycle,
            "pid": sm + 1,
            "args": { name: value },
        }))
    }

    fn set_eligible(
        &mut self,
        w: WarpRef,
        cycle: u64,
        was: bool,
        now: bool,
    ) -> Result<(), TraceError> {
        if was == now {
            return Ok(());
        }
        let Some(scheduler) = self.warps.get(&w).map(|t| t.scheduler) else {
            return Ok(());
        };
        let key = (w.sm, scheduler);
        let s = *self.schedulers.entry(key).or_default();
        if s.eligible_cycle != Some(cycle) {
            self.end_eligible(key)?;
        }
        let s = self.schedulers.get_mut(&key).expect("just inserted");
        s.eligible += if now { 1 } else { -1 };
        s.eligible_cycle = Some(cycle);
        Ok(())
    }

    /// Writes the eligible count the scheduler's last changing cycle ended with.
    fn end_eligible(&mut self, key: (u32, u32)) -> Result<(), TraceError> {
        let s = self.schedulers.get(&key).copied().unwrap_or_default();
        match s.eligible_cycle {
            Some(c) => self.counter(key.0, key.1, "eligible", c, s.eligible),
            None => Ok(()),
        }
    }

    fn issued(&mut self, w: WarpRef, cycle: u64) -> Result<(), TraceError> {
        let Some(scheduler) = self.warps.get(&w).map(|t| t.scheduler) else {
            return Ok(());
        };
        let key = (w.sm, scheduler);
        let s = *self.schedulers.entry(key).or_default();
        if s.issued_cycle == Some(cycle) {
            let s = self.schedulers.get_mut(&key).expect("just inserted");
            s.issued += 1;
            return Ok(());
        }
        self.end_issue_burst(key, Some(cycle))?;
        let s = self.schedulers.get_mut(&key).expect("just inserted");
        s.issued_cycle = Some(cycle);
        s.issued = 1;
        Ok(())
    }

    /// Writes the issue count of the scheduler's last issuing cycle, and its fall to 0 unless
    /// the scheduler issues again in the very next cycle (`next`).
    fn end_issue_burst(&mut self, key: (u32, u32), next: Option<u64>) -> Result<(), TraceError> {
        let s = self.schedulers.get(&key).copied().unwrap_or_default();
        if let Some(c) = s.issued_cycle {
            self.counter(key.0, key.1, "issued", c, s.issued as i64)?;
            if next != Some(c + 1) {
                self.counter(key.0, key.1, "issued", c + 1, 0)?;
            }
        }
        Ok(())
    }

    /// Whether the warps of `launch` on `sm` are exported.
    fn selects(&self, sm: u32, launch: u32) -> bool {
        self.sm.map_or(true, |s| s == sm)
            && self
                .launches
                .as_ref()
                .map_or(true, |l| l.get(launch as usize).copied().unwrap_or(false))
    }

    /// The trace has reached the window's end: every warp's interval is cut there, and the
    /// warps with stalls in the window still to charge are waited for.
    fn end_window(&mut self) -> Result<(), TraceError> {
        self.past_window = true;
        let mut open: Vec<WarpRef> = self.warps.keys().copied().collect();
        open.sort();
        for w in open {
            self.close(w, self.to)?;
            let from = self.from;
            if self.warps[&w].pending.iter().any(|i| i.to > from) {
                self.waiting.insert(w);
            }
        }
        Ok(())
    }

    fn event(&mut self, e: &Event) -> Result<(), TraceError> {
        match *e {
            Event::WarpLaunch { cycle, warp, info } => {
                if self.past_window || !self.selects(warp.sm, info.launch) {
                    return Ok(());
                }
                self.warps.insert(
                    warp,
                    WarpTrack {
                        launch: info.launch,
                        block: info.block,
                        warp_in_block: info.warp_in_block,
                        scheduler: info.scheduler,
                        state: None,
                        since: cycle,
                        last_pc: None,
                        pending: Vec::new(),
                    },
                );
            }
            Event::WarpState { cycle, warp, state } => {
                self.close(warp, cycle)?;
                let was = self
                    .warps
                    .get(&warp)
                    .and_then(|t| t.state)
                    .is_some_and(|s| s.is_eligible());
                self.set_eligible(warp, cycle, was, state.is_eligible())?;
                if let Some(t) = self.warps.get_mut(&warp) {
                    t.state = Some(state);
                    t.since = cycle;
                }
            }
            Event::Issue {
                cycle, warp, pc, ..
            } => {
                self.close(warp, cycle)?;
                self.flush(warp, Some(pc))?;
                if let Some(t) = self.warps.get_mut(&warp) {
                    t.last_pc = Some(pc);
                }
                self.issued(warp, cycle)?;
            }
            Event::WarpExit { cycle, warp } => {
                self.close(warp, cycle)?;
                let pc = self.warps.get(&warp).and_then(|t| t.last_pc);
                self.flush(warp, pc)?;
                let was = self
                    .warps
                    .get(&warp)
                    .and_then(|t| t.state)
                    .is_some_and(|s| s.is_eligible());
                self.set_eligible(warp, cycle, was, false)?;
                self.warps.remove(&warp);
            }
            _ => {}
        }
        Ok(())
    }

    fn metadata(&mut self) -> Result<(), TraceError> {
        let c = &self.header.config;
        let kernels: Vec<_> = self
            .header
            .launches
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.launches.as_ref().map_or(true, |l| l[i]))
            .map(|(_, l)| kernel_name::function(&l.kernel))
            .collect();
        let only = self.sm;
        for sm in (0..c.num_sms).filter(|&sm| only.map_or(true, |s| s == sm)) {
            self.emit(json!({"ph": "M", "name": "process_name", "pid": sm + 1,
                "args": {"name": format!("SM {sm} ({}: {})", c.name, kernels.join(", "))}}))?;
            self.emit(
                json!({"ph": "M", "name": "process_sort_index", "pid": sm + 1,
                "args": {"sort_index": sm}}),
            )?;
            for slot in 0..c.sm.max_warps {
                self.emit(
                    json!({"ph": "M", "name": "thread_name", "pid": sm + 1, "tid": slot + 1,
                    "args": {"name": format!("warp slot {slot}")}}),
                )?;
                self.emit(
                    json!({"ph": "M", "name": "thread_sort_index", "pid": sm + 1,
                    "tid": slot + 1, "args": {"sort_index": slot}}),
                )?;
            }
        }
        Ok(())
    }
}

/// Writes the Chrome Trace Event JSON of the part of `reader`'s trace that `selection` picks to
/// `out`.
pub fn export<R: Read, W: Write>(
    mut reader: TraceReader<R>,
    mut out: W,
    selection: &Selection,
) -> Result<ExportStats, ExportError> {
    let header = reader.header().clone();
    if let (Some(from), Some(to)) = (selection.from, selection.to) {
        if from >= to {
            return Err(ExportError::BadRange { from, to });
        }
    }
    if let Some(sm) = selection.sm {
        if sm >= header.config.num_sms {
            return Err(ExportError::NoSuchSm {
                sm,
                gpu: header.config.name.clone(),
                num_sms: header.config.num_sms,
            });
        }
    }
    let launches = match &selection.kernel {
        Some(pattern) => {
            let names: Vec<&str> = header.launches.iter().map(|l| l.kernel.as_str()).collect();
            Some(kernel_name::select(&names, pattern).map_err(ExportError::NoSuchKernel)?)
        }
        None => None,
    };
    out.write_all(b"{\"otherData\":").map_err(io)?;
    let mut other = json!({
        "tool": format!("warpscope {}", env!("CARGO_PKG_VERSION")),
        "gpu": header.config.name,
        "time_unit": "1 us = 1 cycle",
    });
    if !selection.is_whole() {
        let mut s = serde_json::Map::new();
        let given = [
            ("from", selection.from.map(|v| json!(v))),
            ("to", selection.to.map(|v| json!(v))),
            ("sm", selection.sm.map(|v| json!(v))),
            ("kernel", selection.kernel.as_ref().map(|v| json!(v))),
        ];
        for (key, value) in given {
            if let Some(v) = value {
                s.insert(key.into(), v);
            }
        }
        other["selection"] = serde_json::Value::Object(s);
    }
    serde_json::to_writer(&mut out, &other).map_err(|e| io(e.into()))?;
    out.write_all(b",\"traceEvents\":[").map_err(io)?;
    let mut ex = Exporter {
        out,
        header: &header,
        first: true,
        stats: ExportStats {
            slices: 0,
            counters: 0,
            from: 0,
            to: 0,
        },
        warps: FxHashMap::default(),
        schedulers: FxHashMap::default(),
        from: selection.from.unwrap_or(0),
        to: selection.to.unwrap_or(u64::MAX),
        sm: selection.sm,
        launches,
        counter_tracks: FxHashMap::default(),
        past_window: false,
        waiting: FxHashSet::default(),
    };
    ex.metadata()?;
    let (mut start, mut last) = (None, 0);
    for e in reader.by_ref() {
        let e = e?;
        let cycle = e.cycle();
        start.get_or_insert(cycle);
        last = last.max(cycle);
        if cycle >= ex.to && !ex.past_window {
            ex.end_window()?;
        }
        if ex.past_window && ex.waiting.is_empty() {
            // Nothing in the window is left to write.
            break;
        }
        ex.event(&e)?;
    }
    // Warps still resident when the trace ends (an incomplete run) close at its last cycle.
    let mut open: Vec<WarpRef> = ex.warps.keys().copied().collect();
    open.sort();
    for w in open {
        ex.event(&Event::WarpExit {
            cycle: last + 1,
            warp: w,
        })?;
    }
    let mut keys: Vec<(u32, u32)> = ex.schedulers.keys().copied().collect();
    keys.sort();
    for k in keys {
        ex.end_eligible(k)?;
        ex.end_issue_burst(k, None)?;
    }
    // The window as the trace covers it (as `render` zooms).
    let start = start.unwrap_or(0);
    let end = (last + 1).max(start + 1);
    let from = selection.from.unwrap_or(start);
    if selection.from.is_some() && from >= end {
        return Err(ExportError::FromPastEnd { from, start, end });
    }
    if let Some(to) = selection
        .to
        .filter(|&to| selection.from.is_none() && to <= start)
    {
        return Err(ExportError::ToBeforeStart { to, start });
    }
    ex.counters_before_window()?;
    let mut stats = ex.stats;
    stats.from = from;
    stats.to = selection.to.map_or(end, |to| to.min(end));
    ex.out.write_all(b"\n]}\n").map_err(io)?;
    ex.out.flush().map_err(io)?;
    Ok(stats)
}
