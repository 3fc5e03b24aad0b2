//! Whether work is worth handing to a helper thread. The pipelines around the simulator —
//! replay's read-ahead, the recorder's encoder and compressor, the reader's inflater — overlap
//! with it only when a second core can run them; on one core (a one-CPU container, or
//! `taskset -c 0`) a helper thread adds context switches and channel traffic and nothing
//! else, so each of them then works in line. The bytes written and the events read are the
//! same either way.

use std::sync::OnceLock;

/// Set to `1` to keep every pipeline in line whatever the host has, or to a larger number to
/// use helper threads even on one core (for comparing the two).
pub const THREADS_VAR: &str = "WARPSCOPE_THREADS";

/// Whether helper threads can run beside this one: the cores this process may use (its CPU
/// affinity and quota) number more than one, unless [`THREADS_VAR`] says otherwise. Asked
/// once per process.
pub fn helpers_pay() -> bool {
    static PAY: OnceLock<bool> = OnceLock::new();
    *PAY.get_or_init(|| {
        let cores = std::env::var(THREADS_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        cores > 1
    })
}
