//! Control codes in the maxas/CuAssembler notation `[B------:R-:W-:Y:S01]`.
//!
//! Maxwell–Volta encode per instruction: a wait mask over six dependency barriers, an optional
//! read barrier (released when the sources have been read) and write barrier (released when the
//! result is written), a yield hint and a stall count of 0–15 cycles (seeds/002). The reuse flags
//! of real SASS are not modelled.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Number of dependency barriers per warp.
pub const DEPENDENCY_BARRIERS: u8 = 6;
/// Largest encodable stall count.
pub const MAX_STALL: u8 = 15;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ControlCode {
    /// Bit `i` set: wait until dependency barrier `i` is free before issuing.
    pub wait_mask: u8,
    /// Barrier set at issue and released once the sources are read.
    pub read_barrier: Option<u8>,
    /// Barrier set at issue and released once the result is written.
    pub write_barrier: Option<u8>,
    /// Yield hint: prefer another warp next cycle.
    pub yield_hint: bool,
    /// Cycles to wait before this warp may issue its next instruction.
    pub stall: u8,
}

/// Why a control-code string did not parse; the `usize` is the byte offset inside the brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlCodeError {
    pub offset: usize,
    pub message: String,
}

impl ControlCode {
    /// Parses the text between the brackets: `B------:R-:W-:Y:S01`.
    pub fn parse(text: &str) -> Result<ControlCode, ControlCodeError> {
        let err = |offset: usize, message: &str| ControlCodeError {
            offset,
            message: message.to_string(),
        };
        let fields: Vec<&str> = text.split(':').collect();
        if fields.len() != 5 {
            return Err(err(
                0,
                "a control code has five fields: [B------:R-:W-:Y:S01]",
            ));
        }
        let mut offsets = Vec::with_capacity(5);
        let mut at = 0;
        for f in &fields {
            offsets.push(at);
            at += f.len() + 1;
        }
        let mut code = ControlCode::default();

        let wait = fields[0];
        let digits = wait
            .strip_prefix('B')
            .ok_or_else(|| err(offsets[0], "wait mask must start with 'B'"))?;
        if digits.chars().count() != DEPENDENCY_BARRIERS as usize {
            return Err(err(
                offsets[0],
                "wait mask has six positions, '-' or the barrier number: B0-2---",
            ));
        }
        for (i, c) in digits.chars().enumerate() {
            match c {
                '-' => {}
                c if c.to_digit(10) == Some(i as u32) => code.wait_mask |= 1 << i,
                _ => {
                    return Err(err(
                        offsets[0] + 1 + i,
                        &format!("wait-mask position {i} must be '-' or '{i}'"),
                    ))
                }
            }
        }
        let barrier = |field: &str, letter: char, offset: usize| -> Result<Option<u8>, _> {
            let rest = field.strip_prefix(letter).ok_or_else(|| {
                err(
                    offset,
                    &format!("expected '{letter}' followed by '-' or 0-5"),
                )
            })?;
            match rest {
                "-" => Ok(None),
                d if d.len() == 1 => match d.parse::<u8>() {
                    Ok(b) if b < DEPENDENCY_BARRIERS => Ok(Some(b)),
                    _ => Err(err(offset + 1, "barrier index must be 0-5")),
                },
                _ => Err(err(
                    offset + 1,
                    "barrier index must be '-' or one digit 0-5",
                )),
            }
        };
        code.read_barrier = barrier(fields[1], 'R', offsets[1])?;
        code.write_barrier = barrier(fields[2], 'W', offsets[2])?;
        code.yield_hint = match fields[3] {
            "Y" => true,
            "-" => false,
            _ => return Err(err(offsets[3], "yield field must be 'Y' or '-'")),
        };
        let stall = fields[4]
            .strip_prefix('S')
            .ok_or_else(|| err(offsets[4], "stall field must be 'S' and two digits: S04"))?;
        code.stall = match stall.parse::<u8>() {
            Ok(s) if s <= MAX_STALL && stall.len() == 2 => s,
            _ => return Err(err(offsets[4] + 1, "stall count must be two digits 00-15")),
        };
        Ok(code)
    }

    pub fn waits_on(&self, barrier: u8) -> bool {
        self.wait_mask & (1 << barrier) != 0
    }
}

impl fmt::Display for ControlCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[B")?;
        for i in 0..DEPENDENCY_BARRIERS {
            if self.waits_on(i) {
                write!(f, "{i}")?;
            } else {
                write!(f, "-")?;
            }
        }
        let b = |x: Option<u8>| x.map_or("-".to_string(), |b| b.to_string());
        write!(
            f,
            ":R{}:W{}:{}:S{:02}]",
            b(self.read_barrier),
            b(self.write_barrier),
            if self.yield_hint { "Y" } else { "-" },
            self.stall
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_back() {
        for text in [
            "B------:R-:W-:Y:S01",
            "B0-2--5:R3:W1:-:S15",
            "B------:R-:W5:-:S00",
        ] {
            let code = ControlCode::parse(text).unwrap();
            assert_eq!(code.to_string(), format!("[{text}]"));
        }
        let c = ControlCode::parse("B0-2--5:R3:W1:-:S15").unwrap();
        assert_eq!(c.wait_mask, 0b100101);
        assert_eq!(c.read_barrier, Some(3));
        assert_eq!(c.write_barrier, Some(1));
        assert!(!c.yield_hint);
        assert_eq!(c.stall, 15);
    }

    #[test]
    fn rejects_bad_fields_with_offsets() {
        assert_eq!(
            ControlCode::parse("B------:R-:W-:Y:S16")
                .unwrap_err()
                .offset,
            17
        );
        assert_eq!(
            ControlCode::parse("B1-----:R-:W-:Y:S01")
                .unwrap_err()
                .offset,
            1
        );
        assert_eq!(
            ControlCode::parse("B------:R6:W-:Y:S01")
                .unwrap_err()
                .offset,
            9
        );
        assert!(ControlCode::parse("B------:R-:W-:Y").is_err());
        assert!(ControlCode::parse("").is_err());
    }
}
