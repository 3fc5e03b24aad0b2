//! Fuzzes the tiny-gpu front ends (text and hex): any UTF-8 input must assemble or fail with
//! diagnostics, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpscope::asm::tinygpu;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(errors) = tinygpu::assemble_text(text) {
            let _ = errors.render("fuzz.tgpu");
        }
        if let Err(errors) = tinygpu::assemble_hex(text) {
            let _ = errors.render("fuzz.hex");
        }
    }
});
