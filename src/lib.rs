//! warpscope: a cycle-level GPU simulator with an Nsight-style profiler on top.

pub mod analyze;
pub mod asm;
pub mod bench;
pub mod export;
pub mod isa;
pub mod kernel_name;
pub mod launchfile;
pub mod pending;
pub mod render;
pub mod replay;
pub mod report;
pub mod sim;
pub mod study;
pub mod sweep;
pub mod threads;
pub mod trace;
pub mod trace_label;
pub mod words;
pub mod workload;
