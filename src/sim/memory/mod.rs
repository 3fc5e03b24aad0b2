//! The memory system. `global` holds the functional contents of device memory; the timing
//! models live beside it: `coalesce` (lane addresses → sectors), `cache` (sectored
//! set-associative LRU tag arrays for the L1s and the L2), `dram` (the bandwidth-limited DRAM
//! queue), `banks` (shared-memory bank conflicts) and `timing`, which composes them into the
//! [`MemoryTiming`] the SM engine calls for every memory instruction.

pub mod banks;
pub mod cache;
pub mod coalesce;
pub mod dram;
pub mod global;
pub mod timing;

pub use coalesce::{coalesce, SectorList};
pub use global::{GlobalMemory, MemFault};
pub use timing::{GlobalTiming, HitLevel, MemoryStats, MemoryTiming, SharedTiming};
