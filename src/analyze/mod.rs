//! The analyzer: reads a trace (only the trace — config, listing and launches come from its
//! header), reconstructs every resident warp's state in every cycle, classifies it by a
//! [`Taxonomy`] and aggregates Nsight-style metrics per launch into plain data
//! ([`Analysis`]), which the renderers turn into text ([`render_text`]) or JSON ([`to_json`]).
//!
//! Streaming: memory is proportional to warps, schedulers and PCs, never to trace length.
//!
//! Architecture Invariant: for every launch, the warp-state cycles add up to the resident
//! warp-cycles; `selected` equals the warp instructions when `issue_width` is 1; the issue-slot
//! parts add up to `width × cycles × schedulers`.

pub mod caption;
pub mod classify;
pub mod compare;
pub mod flat;
pub mod metrics;
pub mod rules;
pub mod text;

pub use classify::{detailed_name, NsightState, Taxonomy};
pub use flat::to_csv;
pub use metrics::{
    Accumulator, CudaSourceLine, DispatchStats, GlobalAccessStats, HazardSample, IssueSlots,
    LaunchAnalysis, LaunchStats, MemoryStats, Occupancy, PcMemory, SchedulerStats, SourceLine,
};
pub use rules::{Hint, Severity};
pub use text::render_text;

use crate::trace::{BinaryReader, TraceError, TraceReader};
use metrics::Steps;
use serde::Serialize;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;

/// The analysis of a whole trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// The GPU config's name.
    pub gpu: String,
    pub taxonomy: Taxonomy,
    /// Whether the run completed (from the trailer; a faulted run is incomplete).
    pub complete: bool,
    /// What stopped a faulted run (its fault event in words, with the cycle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    pub launches: Vec<LaunchAnalysis>,
}

impl Analysis {
    /// Keeps only the launches of kernel `name` — its mangled name, its signature or its
    /// function name as captions show it (`loop` for `_Z4loopPdi`, as Nsight's `-k` matches)
    /// — or, if no kernel has exactly that name, those whose name (either spelling) contains it:
    /// `vecAdd` finds `_Z6vecAddIfEvPT_S1_S1_i`, `vecAdd<float>(float*, float*, float*,
    /// int)` ([`crate::kernel_name::select`]). An error listing the kernels if none matches.
    pub fn retain_kernel(&mut self, name: &str) -> Result<(), String> {
        let names: Vec<&str> = self.launches.iter().map(|l| l.name.as_str()).collect();
        let mut keep = crate::kernel_name::select(&names, name)?.into_iter();
        self.launches.retain(|_| keep.next().unwrap_or(false));
        Ok(())
    }
}

/// Analyzes a trace, streaming its events once. A binary trace is decoded on this thread,
/// accumulated on a second one and inflated on a third (about half, a third and a sixth of
/// the work), in order — so the result is the same as on one thread.
pub fn analyze<R: Read>(
    mut reader: TraceReader<R>,
    taxonomy: Taxonomy,
) -> Result<Analysis, TraceError> {
    let mut acc = Accumulator::new(reader.header());
    match &mut reader {
        TraceReader::Binary(r) => acc = accumulate_beside(r, acc)?,
        TraceReader::Jsonl(_) => {
            reader.for_each_event(|e| acc.event(e))?;
        }
    }
    let complete = reader.complete().unwrap_or(false);
    let header = reader.header();
    Ok(Analysis {
        gpu: header.config.name.clone(),
        taxonomy,
        complete,
        fault: acc.fault().map(str::to_string),
        launches: acc.finish(header, taxonomy),
    })
}

/// Decodes `reader`'s blocks here and feeds their events to `acc` on a second thread, as
/// [`Steps`] (what the accumulator reads of them, 32 bytes an event instead of 56). Batches
/// go back and forth, so no step is copied.
fn accumulate_beside<R: Read>(
    reader: &mut BinaryReader<R>,
    mut acc: Accumulator,
) -> Result<Accumulator, TraceError> {
    // Blocks decoded ahead of the accumulator, at most (bounds the memory held).
    const AHEAD: usize = 2;
    // The decode thread is the bottleneck: inflating moves to a third.
    reader.inflate_ahead();
    std::thread::scope(|scope| {
        let (full, inbox) = mpsc::sync_channel::<Steps>(AHEAD);
        let (outbox, empty) = mpsc::channel::<Steps>();
        let worker = std::thread::Builder::new()
            .name("analyze".into())
            .spawn_scoped(scope, move || {
                for mut batch in inbox {
                    acc.steps(&batch);
                    batch.clear();
                    // The decoder may have finished; then the batch is simply dropped.
                    let _ = outbox.send(batch);
                }
                acc
            });
        let worker = worker.map_err(TraceError::io("starting the analysis thread"))?;
        let mut result = Ok(());
        // A new buffer starts at the size of the last batch, so that the decoder does not
        // grow it (copying) step by step.
        let mut size = 0;
        loop {
            let mut buf = empty
                .try_recv()
                .unwrap_or_else(|_| Steps::with_capacity(size));
            match reader.take_into(&mut buf) {
                None => break,
                Some(Err(e)) => {
                    result = Err(e);
                    break;
                }
                Some(Ok(())) => {
                    size = buf.len();
                    if full.send(buf).is_err() {
                        break;
                    }
                }
            }
        }
        drop(full);
        let acc = worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        result.map(|()| acc)
    })
}

/// Opens and analyzes the trace at `path` (binary or JSON Lines).
pub fn analyze_file(path: &Path, taxonomy: Taxonomy) -> Result<Analysis, TraceError> {
    analyze(TraceReader::open(path)?, taxonomy)
}

/// The analysis as pretty-printed JSON (snake_case keys).
pub fn to_json(analysis: &Analysis) -> String {
    serde_json::to_string_pretty(analysis).expect("an analysis serializes")
}
