//! A progress bar for long simulations (`run`, `record`, `replay`): thread blocks finished out
//! of the launches' total and the cycle reached, drawn on stderr from a second thread while
//! the simulation runs on this one. Drawn only when stderr is a terminal and the run takes
//! longer than a moment; outputs and traces are the same either way.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warpscope::sim::progress::{self, SimProgress};

/// Runs `simulate` (which simulates on this thread) with a bar over `total_blocks` blocks,
/// labelled `what` (e.g. "replaying vecadd on volta").
pub fn with_bar<T>(total_blocks: u64, what: &str, simulate: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return simulate();
    }
    let counters = SimProgress::new();
    let _reporting = progress::report_to(counters.clone());
    let done = Arc::new(AtomicBool::new(false));
    let drawer = {
        let (counters, done, what) = (counters.clone(), done.clone(), what.to_string());
        std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || draw(&counters, &done, total_blocks, &what))
    };
    let result = simulate();
    done.store(true, Ordering::Relaxed);
    if let Ok(drawer) = drawer {
        let _ = drawer.join();
    }
    result
}

fn draw(counters: &SimProgress, done: &AtomicBool, total_blocks: u64, what: &str) {
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
        let (blocks, cycle) = (counters.blocks_done().min(total_blocks), counters.cycle());
        match &bar {
            Some(bar) => {
                bar.set_prefix(cycle.to_string());
                bar.set_position(blocks);
            }
            None => {
                // Hidden until filled in, so the first frame is complete.
                let b = ProgressBar::hidden();
                b.set_length(total_blocks);
                b.set_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:24}] {pos}/{len} blocks, cycle {prefix}, {eta} left",
                    )
                    .expect("a valid template")
                    .progress_chars("=> "),
                );
                b.set_message(what.to_string());
                b.set_prefix(cycle.to_string());
                b.set_position(blocks);
                b.set_draw_target(ProgressDrawTarget::stderr());
                bar = Some(b);
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
