//! Fuzzes the native assembler: any UTF-8 input must assemble or fail with diagnostics,
//! never panic; a program that assembles must survive a disassembly round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpscope::asm::native;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        match native::assemble(text) {
            Ok(program) => {
                let again = native::assemble(&program.to_string())
                    .expect("the disassembly of an assembled program assembles");
                assert_eq!(again, program, "assemble(disassemble(p)) != p");
            }
            Err(errors) => {
                let _ = errors.render("fuzz.sasm");
            }
        }
    }
});
