//! The native assembler (`.sasm`). STUB: to be written.

use super::AsmErrors;
use crate::isa::Program;

/// Assembles native text. The kernel name is empty when there is no `.kernel` directive.
pub fn assemble(source: &str) -> Result<Program, AsmErrors> {
    let _ = source;
    Err(AsmErrors(vec![]))
}
