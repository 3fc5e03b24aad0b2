//! Progress bars for long commands, drawn on stderr from a second thread while the work runs
//! on this one: simulations (`run`, `record`, `replay`) count thread blocks finished out of the
//! launches' total and show the cycle reached; trace readers (`analyze`, `trace info`,
//! `export`) count bytes read out of the file's size; the scan of an Accel-Sim trace gets a
//! spinner. Drawn only when stderr is a terminal and
//! the work takes longer than a moment; outputs and traces are the same either way.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::io::{BufReader, IsTerminal, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpscope::sim::progress::{self, SimProgress};
use warpscope::trace::{Peeked, TraceReader};

/// Runs `simulate` (which simulates on this thread) with a bar over `total_blocks` blocks,
/// labelled `what` (e.g. "replaying vecadd on volta").
pub fn simulating<T>(total_blocks: u64, what: &str, simulate: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return simulate();
    }
    let counters = SimProgress::new();
    let _reporting = progress::report_to(counters.clone());
    let style = "{msg} [{bar:24}] {pos}/{len} blocks, cycle {prefix}, {eta} left";
    with_bar(total_blocks, what, style, simulate, move || {
        (counters.blocks_done(), counters.cycle().to_string())
    })
}

/// Runs `work` (which reports no progress of its own) with a spinner labelled `what`.
pub fn waiting<T>(what: &str, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let style = "{spinner} {msg} ({elapsed})";
    with_bar(0, what, style, work, || (0, String::new()))
}

/// A trace file's reader that counts the bytes it reads.
pub type CountingReader = TraceReader<Peeked<BufReader<Counted<File>>>>;

/// A trace file opened for reading, with the count of bytes read so far.
pub struct CountedTrace {
    pub reader: CountingReader,
    bytes_read: Arc<AtomicU64>,
    size: u64,
}

/// Opens a trace like `TraceReader::open`, counting the bytes read (errors name the path).
pub fn open_trace(path: &Path) -> Result<CountedTrace> {
    super::expect_warpscope_trace(path)?;
    let file = File::open(path)
        .context("opening the trace")
        .with_context(|| path.display().to_string())?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let bytes_read = Arc::new(AtomicU64::new(0));
    let counted = Counted {
        inner: file,
        bytes: bytes_read.clone(),
    };
    let reader = TraceReader::new(BufReader::with_capacity(1 << 16, counted))
        .with_context(|| path.display().to_string())?;
    Ok(CountedTrace {
        reader,
        bytes_read,
        size,
    })
}

impl CountedTrace {
    /// Runs `read` (which reads this trace on this thread, or on threads it waits for) with a
    /// bar over the file's bytes, labelled `what`.
    pub fn reading<T>(self, what: &str, read: impl FnOnce(CountingReader) -> T) -> T {
        if !std::io::stderr().is_terminal() {
            return read(self.reader);
        }
        let bytes_read = self.bytes_read;
        let style = "{msg} [{bar:24}] {bytes}/{total_bytes}, {eta} left";
        with_bar(
            self.size,
            what,
            style,
            || read(self.reader),
            move || (bytes_read.load(Ordering::Relaxed), String::new()),
        )
    }
}

/// A reader that counts the bytes it hands out.
pub struct Counted<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Runs `work` while a second thread draws a bar of `total` with `style`, its position and
/// prefix from `poll`.
fn with_bar<T>(
    total: u64,
    what: &str,
    style: &'static str,
    work: impl FnOnce() -> T,
    poll: impl Fn() -> (u64, String) + Send + 'static,
) -> T {
    let done = Arc::new(AtomicBool::new(false));
    let drawer = {
        let (done, what) = (done.clone(), what.to_string());
        std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || draw(&done, total, &what, style, poll))
    };
    let result = work();
    done.store(true, Ordering::Relaxed);
    if let Ok(drawer) = drawer {
        let _ = drawer.join();
    }
    result
}

fn draw(done: &AtomicBool, total: u64, what: &str, style: &str, poll: impl Fn() -> (u64, String)) {
    // Short runs show nothing.
    const QUIET_FOR: Duration = Duration::from_millis(700);
    const TICK: Duration = Duration::from_millis(100);
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        if started.elapsed() < QUIET_FOR {
            continue;
        }
        let (position, prefix) = poll();
        let position = position.min(total);
        match &bar {
            Some(bar) => {
                bar.set_prefix(prefix);
                bar.set_position(position);
                // A spinner turns even when nothing moved.
                bar.tick();
            }
            None => {
                // Hidden until filled in, so the first frame is complete.
                let b = ProgressBar::hidden();
                b.set_length(total);
                b.set_style(
                    ProgressStyle::with_template(style)
                        .expect("a valid template")
                        .progress_chars("=> "),
                );
                b.set_message(what.to_string());
                b.set_prefix(prefix);
                b.set_position(position);
                b.set_draw_target(ProgressDrawTarget::stderr());
                bar = Some(b);
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
