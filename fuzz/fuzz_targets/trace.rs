//! Fuzzes the trace reader: any bytes (binary or JSON Lines, detected from the first bytes)
//! must open or fail with a `TraceError`, and every event must decode or fail, never panic —
//! also when the iterator is asked for more after an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warpscope::trace::TraceReader;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = TraceReader::new(std::io::Cursor::new(data)) {
        let _ = reader.header();
        let mut errors = 0;
        for event in reader.by_ref() {
            if event.is_err() {
                errors += 1;
                if errors == 3 {
                    break;
                }
            }
        }
        let _ = reader.complete();
    }
});
