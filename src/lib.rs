//! warpscope: a cycle-level GPU simulator with an Nsight-style profiler on top.

pub mod asm;
pub mod isa;
pub mod sim;
