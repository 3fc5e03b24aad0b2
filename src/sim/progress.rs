//! How far a running simulation has got, for a front end that wants to show it (a progress bar
//! on a terminal). The simulator only counts — finished thread blocks and the cycle reached —
//! into a [`SimProgress`] the caller installed for its thread; reading and drawing are the
//! caller's business, typically on another thread.
//!
//! Why a per-thread hook rather than a parameter: progress is not part of what a run computes
//! (results and traces are the same with or without it), and every entry point that simulates
//! (`simulate`, `record`, `replay`, launch files) reaches it without an argument of its own.
//! A thread that installed nothing pays one look-up per simulation.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counters a simulation updates as it goes: thread blocks finished (over all launches) and
/// the last cycle it reported.
#[derive(Debug, Default)]
pub struct SimProgress {
    blocks_done: AtomicU64,
    cycle: AtomicU64,
}

impl SimProgress {
    pub fn new() -> Arc<SimProgress> {
        Arc::new(SimProgress::default())
    }

    pub fn blocks_done(&self) -> u64 {
        self.blocks_done.load(Ordering::Relaxed)
    }

    pub fn cycle(&self) -> u64 {
        self.cycle.load(Ordering::Relaxed)
    }

    pub(crate) fn blocks_finished(&self, n: u64, cycle: u64) {
        self.blocks_done.fetch_add(n, Ordering::Relaxed);
        self.cycle.store(cycle, Ordering::Relaxed);
    }

    pub(crate) fn at_cycle(&self, cycle: u64) {
        self.cycle.store(cycle, Ordering::Relaxed);
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<SimProgress>>> = const { RefCell::new(None) };
}

/// Simulations run on this thread report to `progress` until the guard is dropped.
pub fn report_to(progress: Arc<SimProgress>) -> ReportGuard {
    let previous = CURRENT.with_borrow_mut(|c| c.replace(progress));
    ReportGuard { previous }
}

/// Restores what was installed before [`report_to`] when dropped.
#[must_use = "progress is reported only while the guard lives"]
pub struct ReportGuard {
    previous: Option<Arc<SimProgress>>,
}

impl Drop for ReportGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with_borrow_mut(|c| *c = previous);
    }
}

/// The counters installed for this thread, if any.
pub(crate) fn current() -> Option<Arc<SimProgress>> {
    CURRENT.with_borrow(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_installs_for_its_lifetime_and_restores_the_previous() {
        assert!(current().is_none());
        let outer = SimProgress::new();
        let g1 = report_to(outer.clone());
        {
            let inner = SimProgress::new();
            let _g2 = report_to(inner.clone());
            assert!(Arc::ptr_eq(&current().unwrap(), &inner));
        }
        assert!(Arc::ptr_eq(&current().unwrap(), &outer));
        drop(g1);
        assert!(current().is_none());
        // Another thread sees nothing of this one's.
        let _g = report_to(outer);
        std::thread::spawn(|| assert!(current().is_none()))
            .join()
            .unwrap();
    }
}
