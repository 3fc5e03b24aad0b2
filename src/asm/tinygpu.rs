//! The tiny-gpu front end (seed 000). STUB: to be written.

use super::AsmErrors;
use crate::isa::Program;

pub fn assemble_text(source: &str) -> Result<Program, AsmErrors> {
    let _ = source;
    Err(AsmErrors(vec![]))
}

pub fn assemble_hex(source: &str) -> Result<Program, AsmErrors> {
    let _ = source;
    Err(AsmErrors(vec![]))
}
