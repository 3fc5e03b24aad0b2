//! The memory system. `global` holds the functional contents of device memory; the timing
//! models (caches, DRAM, shared-memory banks) live beside it.

pub mod global;

pub use global::{GlobalMemory, MemFault};
