//! [`Recorder`]: the observer that writes a trace, and [`record`], which runs a simulation
//! into a trace file (written to `PATH.tmp`, then renamed).

use super::event::{Event, EventKind};
use super::{BinaryWriter, JsonlWriter, TraceError, TraceFormat, TraceHeader, TraceWriter};
use crate::isa::Pipe;
use crate::sim::config::GpuConfig;
use crate::sim::gpu::{prepare, simulate_with_source, SimError, SimOptions, SimReport};
use crate::sim::memory::GlobalMemory;
use crate::sim::observer::{MemEvent, Observer, WarpInfo, WarpRef, WarpState};
use crate::sim::scoreboard::Hazard;
use crate::sim::stream::{InstructionSource, NoReplay};
use crate::sim::{Fault, KernelLaunch, LaneMask};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// An [`Observer`] that encodes every event (up to its verbosity) into a trace writer. The
/// events are collected in batches and encoded on a second thread (encoding and compression
/// are as much work as a third of the simulation), in order, so the bytes are those of
/// encoding in line — which is what happens, a batch at a time, if no thread can be started.
/// Observer methods cannot fail, so the first write error is kept and later events are
/// dropped; [`Recorder::finish`] returns it.
pub struct Recorder<W: Write + Send + 'static> {
    /// Events not yet handed on. Every event passes through here, whatever the sink: pushing
    /// is all an event costs the simulation until the batch is full.
    batch: Vec<Batched>,
    sink: Sink<W>,
    verbosity: u8,
    /// Events in the batches handed on so far.
    handed: u64,
    /// The writer stores pipe groups: the simulator is asked for them.
    groups: bool,
}

/// An event as batched: without drop glue, so that a batch is emptied without looking at
/// each event (dropping 4096 events one by one was 1 % of the simulation thread). Only a
/// fault owns memory, and a fault never goes into a batch (see [`Recorder::fault`]), so
/// nothing leaks. Pipe groups' reports travel as themselves.
enum Batched {
    Event(ManuallyDrop<Event>),
    /// [`Observer::ready_state`].
    Ready {
        cycle: u64,
        warp: WarpRef,
        state: WarpState,
        pipe: Pipe,
    },
    /// [`Observer::pipe_state`].
    Group {
        cycle: u64,
        sm: u32,
        scheduler: u32,
        pipe: Pipe,
        state: WarpState,
    },
}

/// What goes to the encoder thread, in event order.
enum Parcel {
    Events(Vec<Batched>),
    Fault(Event),
}

enum Sink<W: Write + Send + 'static> {
    Inline {
        // Boxed: the fallback, and much larger than the channel ends.
        writer: Box<TraceWriter<W>>,
        error: Option<TraceError>,
    },
    Thread {
        /// `None` once the encoder has stopped (it failed; `finish` reports why).
        parcels: Option<mpsc::SyncSender<Parcel>>,
        empties: mpsc::Receiver<Vec<Batched>>,
        encoder: std::thread::JoinHandle<Result<TraceWriter<W>, TraceError>>,
    },
}

impl<W: Write + Send + 'static> Sink<W> {
    /// Encoding on the simulation's thread.
    fn inline(writer: TraceWriter<W>) -> Sink<W> {
        Sink::Inline {
            writer: Box::new(writer),
            error: None,
        }
    }
}

/// Events per batch sent to the encoder thread.
const BATCH: usize = 4096;
/// Batches on their way to the encoder, at most (bounds the memory held).
const AHEAD: usize = 4;

/// Writes a batch's events in order.
// Inlined, as `write_events` is, so that the encoder thread's loop holds the writer.
#[inline(always)]
fn write_batch<W: Write>(writer: &mut TraceWriter<W>, batch: &[Batched]) -> Result<(), TraceError> {
    // The writer's kind is matched once per batch, not per event.
    match writer {
        TraceWriter::Binary(w) => write_batched(w, batch),
        TraceWriter::Jsonl(w) => write_batched(w, batch),
    }
}

/// What a batch is written to: either kind of writer.
trait BatchWriter {
    fn event(&mut self, e: &Event) -> Result<(), TraceError>;
    fn ready(&mut self, cycle: u64, w: WarpRef, s: WarpState, p: Pipe) -> Result<(), TraceError>;
    fn group(
        &mut self,
        c: u64,
        sm: u32,
        sched: u32,
        p: Pipe,
        s: WarpState,
    ) -> Result<(), TraceError>;
}

impl<W: Write> BatchWriter for BinaryWriter<W> {
    #[inline(always)]
    fn event(&mut self, e: &Event) -> Result<(), TraceError> {
        self.write(e)
    }
    fn ready(&mut self, cycle: u64, w: WarpRef, s: WarpState, p: Pipe) -> Result<(), TraceError> {
        self.write_ready_state(cycle, w, s, p)
    }
    fn group(
        &mut self,
        c: u64,
        sm: u32,
        sched: u32,
        p: Pipe,
        s: WarpState,
    ) -> Result<(), TraceError> {
        self.write_pipe_state(c, sm, sched, p, s)
    }
}

/// JSON Lines stores no groups: a recorder writing it never asks for them (see
/// [`TraceWriter::stores_groups`]), and a ready state is a warp_state.
impl<W: Write> BatchWriter for JsonlWriter<W> {
    fn event(&mut self, e: &Event) -> Result<(), TraceError> {
        self.write(e)
    }
    fn ready(&mut self, cycle: u64, w: WarpRef, s: WarpState, _: Pipe) -> Result<(), TraceError> {
        self.write(&Event::WarpState {
            cycle,
            warp: w,
            state: s,
        })
    }
    fn group(&mut self, _: u64, _: u32, _: u32, _: Pipe, _: WarpState) -> Result<(), TraceError> {
        Err(TraceError::Unsupported(
            "a pipe group's change in JSON Lines".into(),
        ))
    }
}

#[inline(always)]
fn write_batched(w: &mut impl BatchWriter, batch: &[Batched]) -> Result<(), TraceError> {
    for b in batch {
        match *b {
            Batched::Event(ref e) => w.event(e)?,
            Batched::Ready {
                cycle,
                warp,
                state,
                pipe,
            } => w.ready(cycle, warp, state, pipe)?,
            Batched::Group {
                cycle,
                sm,
                scheduler,
                pipe,
                state,
            } => w.group(cycle, sm, scheduler, pipe, state)?,
        }
    }
    Ok(())
}

impl<W: Write + Send + 'static> Recorder<W> {
    pub fn new(out: W, format: TraceFormat, header: &TraceHeader) -> Result<Self, TraceError> {
        let writer = TraceWriter::new(out, format, header)?;
        let groups = writer.stores_groups();
        let sink = match crate::threads::helpers_pay() {
            true => Self::start_encoder(writer),
            false => Sink::inline(writer),
        };
        Ok(Recorder {
            batch: Vec::with_capacity(BATCH),
            sink,
            verbosity: header.verbosity,
            handed: 0,
            groups,
        })
    }

    /// Moves `writer` to an encoder thread; keeps it here if no thread can be started.
    fn start_encoder(writer: TraceWriter<W>) -> Sink<W> {
        let (parcels, inbox) = mpsc::sync_channel::<Parcel>(AHEAD);
        let (outbox, empties) = mpsc::channel();
        // The writer moves to the thread once it runs; if it cannot start, it stays here.
        let (give, take) = mpsc::channel::<TraceWriter<W>>();
        let spawned = std::thread::Builder::new()
            .name("trace-encode".into())
            .spawn(move || {
                let mut writer = take.recv().map_err(|_| {
                    TraceError::io("starting the trace encoder")(std::io::Error::other(
                        "the writer never arrived",
                    ))
                })?;
                for parcel in inbox {
                    match parcel {
                        Parcel::Events(batch) => {
                            write_batch(&mut writer, &batch)?;
                            let _ = outbox.send(batch);
                        }
                        Parcel::Fault(event) => writer.write(&event)?,
                    }
                }
                Ok(writer)
            });
        match spawned {
            Ok(encoder) => match give.send(writer) {
                Ok(()) => Sink::Thread {
                    parcels: Some(parcels),
                    empties,
                    encoder,
                },
                Err(mpsc::SendError(writer)) => Sink::inline(writer),
            },
            Err(_) => Sink::inline(writer),
        }
    }

    /// Events recorded so far.
    pub fn events(&self) -> u64 {
        self.handed + self.batch.len() as u64
    }

    // Inlined into every observer method: the common case, an event pushed onto the batch,
    // is a few instructions once handing the batch on is a call.
    #[inline(always)]
    fn emit(&mut self, kind: EventKind, make: impl FnOnce() -> Event) {
        if kind.min_verbosity() > self.verbosity {
            return;
        }
        self.push(Batched::Event(ManuallyDrop::new(make())));
    }

    #[inline(always)]
    fn push(&mut self, b: Batched) {
        self.batch.push(b);
        if self.batch.len() >= BATCH {
            self.hand_on();
        }
    }

    /// Hands the batch to the encoder thread (and starts the next in a returned one), or
    /// writes it in line; once the encoder has failed, drops it.
    #[cold]
    #[inline(never)]
    fn hand_on(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        self.handed += self.batch.len() as u64;
        match &mut self.sink {
            Sink::Inline { writer, error } => {
                if error.is_none() {
                    if let Err(e) = write_batch(writer, &self.batch) {
                        *error = Some(e);
                    }
                }
            }
            Sink::Thread {
                parcels, empties, ..
            } => {
                if let Some(to) = parcels.as_ref() {
                    let next = empties
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    let full = std::mem::replace(&mut self.batch, next);
                    if to.send(Parcel::Events(full)).is_err() {
                        *parcels = None;
                    }
                }
            }
        }
        self.batch.clear();
    }

    /// Writes the trailer and returns the underlying writer, or the first error.
    pub fn finish(mut self, complete: bool) -> Result<W, TraceError> {
        self.hand_on();
        let writer = match self.sink {
            Sink::Inline { writer, error } => match error {
                Some(e) => return Err(e),
                None => *writer,
            },
            Sink::Thread {
                parcels, encoder, ..
            } => {
                // Closing the channel ends the encoder's loop; its error is joined here.
                drop(parcels);
                encoder
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?
            }
        };
        writer.finish(complete)
    }
}

impl<W: Write + Send + 'static> Observer for Recorder<W> {
    fn kernel_launch(&mut self, cycle: u64, launch: u32) {
        self.emit(EventKind::KernelLaunch, || Event::KernelLaunch {
            cycle,
            launch,
        });
    }
    fn kernel_complete(&mut self, cycle: u64, launch: u32) {
        self.emit(EventKind::KernelComplete, || Event::KernelComplete {
            cycle,
            launch,
        });
    }
    fn block_assign(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.emit(EventKind::BlockAssign, || Event::BlockAssign {
            cycle,
            launch,
            block,
            sm,
        });
    }
    fn block_complete(&mut self, cycle: u64, launch: u32, block: u32, sm: u32) {
        self.emit(EventKind::BlockComplete, || Event::BlockComplete {
            cycle,
            launch,
            block,
            sm,
        });
    }
    fn warp_launch(&mut self, cycle: u64, warp: WarpRef, info: &WarpInfo) {
        self.emit(EventKind::WarpLaunch, || Event::WarpLaunch {
            cycle,
            warp,
            info: *info,
        });
    }
    fn warp_exit(&mut self, cycle: u64, warp: WarpRef) {
        self.emit(EventKind::WarpExit, || Event::WarpExit { cycle, warp });
    }
    fn warp_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState) {
        self.emit(EventKind::WarpState, || Event::WarpState {
            cycle,
            warp,
            state,
        });
    }
    fn pipe_groups(&self) -> bool {
        self.groups && EventKind::WarpState.min_verbosity() <= self.verbosity
    }
    fn ready_state(&mut self, cycle: u64, warp: WarpRef, state: WarpState, pipe: Pipe) {
        if !self.groups {
            return self.warp_state(cycle, warp, state);
        }
        self.push(Batched::Ready {
            cycle,
            warp,
            state,
            pipe,
        });
    }
    /// Asked for only when the writer stores groups (see [`Observer::pipe_groups`]).
    fn pipe_state(&mut self, cycle: u64, sm: u32, scheduler: u32, pipe: Pipe, state: WarpState) {
        self.push(Batched::Group {
            cycle,
            sm,
            scheduler,
            pipe,
            state,
        });
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
        self.emit(EventKind::Issue, || Event::Issue {
            cycle,
            warp,
            pc,
            active,
            pipe,
            slot,
        });
    }
    fn complete(&mut self, cycle: u64, warp: WarpRef, pc: u32) {
        self.emit(EventKind::Complete, || Event::Complete { cycle, warp, pc });
    }
    fn refill(&mut self, cycle: u64, sm: u32, scheduler: u32, slots: u32) {
        self.emit(EventKind::Refill, || Event::Refill {
            cycle,
            sm,
            scheduler,
            slots,
        });
    }
    fn barrier_arrive(&mut self, cycle: u64, warp: WarpRef) {
        self.emit(EventKind::BarrierArrive, || Event::BarrierArrive {
            cycle,
            warp,
        });
    }
    fn barrier_release(&mut self, cycle: u64, sm: u32, launch: u32, block: u32) {
        self.emit(EventKind::BarrierRelease, || Event::BarrierRelease {
            cycle,
            sm,
            launch,
            block,
        });
    }
    fn memory(&mut self, cycle: u64, warp: WarpRef, pc: u32, event: &MemEvent) {
        self.emit(EventKind::Memory, || Event::Memory {
            cycle,
            warp,
            pc,
            mem: *event,
        });
    }
    fn hazard(&mut self, cycle: u64, warp: WarpRef, hazard: &Hazard) {
        self.emit(EventKind::Hazard, || Event::Hazard {
            cycle,
            warp,
            hazard: *hazard,
        });
    }
    /// A fault goes on its own, after the batch before it: batches hold no event that owns
    /// memory.
    fn fault(&mut self, cycle: u64, fault: &Fault) {
        if EventKind::Fault.min_verbosity() > self.verbosity {
            return;
        }
        self.hand_on();
        self.handed += 1;
        let event = Event::Fault {
            cycle,
            fault: Box::new(fault.clone()),
        };
        match &mut self.sink {
            Sink::Inline { writer, error } => {
                if error.is_none() {
                    if let Err(e) = writer.write(&event) {
                        *error = Some(e);
                    }
                }
            }
            Sink::Thread { parcels, .. } => {
                if let Some(to) = parcels.as_ref() {
                    if to.send(Parcel::Fault(event)).is_err() {
                        *parcels = None;
                    }
                }
            }
        }
    }
}

/// What [`record`] produced.
#[derive(Debug)]
pub struct RecordOutcome {
    /// The run's report (up to the fault, if it faulted).
    pub report: SimReport,
    /// The kernel fault that stopped the run; the trace is then marked incomplete and ends with
    /// this fault as its last event.
    pub fault: Option<Box<Fault>>,
    pub path: PathBuf,
    pub events: u64,
    pub bytes: u64,
}

/// Runs `launches` and records the trace to `path` (through `PATH.tmp` and a rename, so a
/// reader never sees a half-written file). A run stopped by a kernel fault still yields a
/// valid trace, marked incomplete, whose last event is the fault; the fault is returned in
/// [`RecordOutcome::fault`]. A launch the GPU rejects is an error and writes nothing.
pub fn record(
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
    options: SimOptions,
    path: &Path,
    format: TraceFormat,
    verbosity: u8,
) -> Result<RecordOutcome, TraceError> {
    let prepared = prepare(config, launches)?;
    let header = TraceHeader::new(config, &prepared, 0, verbosity);
    record_with_source(
        config,
        launches,
        memory,
        options,
        path,
        format,
        &header,
        &mut NoReplay,
    )
}

/// [`record`] with a given header and an instruction source (for replayed launches, whose
/// header listing shows the recorded instructions rather than the stand-in program's text).
#[allow(clippy::too_many_arguments)]
pub fn record_with_source(
    config: &GpuConfig,
    launches: &[KernelLaunch],
    memory: &mut GlobalMemory,
    options: SimOptions,
    path: &Path,
    format: TraceFormat,
    header: &TraceHeader,
    source: &mut dyn InstructionSource,
) -> Result<RecordOutcome, TraceError> {
    let path =
        &crate::pending::output_file(path).map_err(TraceError::io("opening the trace file"))?;
    let tmp = crate::pending::tmp_path(path);
    let _pending = crate::pending::register(&tmp);
    let result = (|| {
        let file = File::create(&tmp).map_err(TraceError::io("creating the trace file"))?;
        let mut rec = Recorder::new(BufWriter::with_capacity(1 << 16, file), format, header)?;
        let run = simulate_with_source(config, launches, memory, options, source, &mut rec);
        let (report, fault) = match run {
            Ok(r) => (r, None),
            Err(SimError::Fault { fault, partial }) => (*partial, Some(fault)),
            Err(SimError::Launch(e)) => return Err(TraceError::Launch(e)),
        };
        let events = rec.events();
        let out = rec.finish(fault.is_none())?;
        let file = out
            .into_inner()
            .map_err(|e| TraceError::io("flushing the trace")(e.into_error()))?;
        file.sync_all()
            .map_err(TraceError::io("syncing the trace"))?;
        let bytes = file
            .metadata()
            .map_err(TraceError::io("reading the trace size"))?
            .len();
        Ok((report, fault, events, bytes))
    })();
    match result {
        Ok((report, fault, events, bytes)) => {
            if let Err(e) = std::fs::rename(&tmp, path) {
                let _ = std::fs::remove_file(&tmp);
                return Err(TraceError::io("renaming the trace file")(e));
            }
            Ok(RecordOutcome {
                report,
                fault,
                path: path.to_path_buf(),
                events,
                bytes,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
