//! The one palette every chart uses: a fixed colour per Nsight warp state, plus colours for
//! warps/blocks and for issue-slot refill and waste.
//!
//! Colours come from Okabe & Ito's colour-blind-safe set (the eight states a kernel spends most
//! of its time in) and Paul Tol's "muted" and "bright" schemes (the rarer states). Sixteen states
//! cannot all be mutually distinguishable for every colour-vision deficiency; the frequent ones
//! are, and every chart also names states in its legend and tooltips.

use crate::analyze::NsightState;

/// A colour as 8-bit sRGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`, as HTML and SVG write it.
    pub fn hex(self) -> String {
        format!("#{:02X}{:02X}{:02X}", self.0, self.1, self.2)
    }

    pub(crate) fn plotters(self) -> plotters::style::RGBColor {
        plotters::style::RGBColor(self.0, self.1, self.2)
    }
}

/// The colour of a warp state, the same in every chart and in the HTML report.
pub fn state_colour(state: NsightState) -> Rgb {
    match state {
        NsightState::Selected => Rgb(0x00, 0x9E, 0x73),
        NsightState::NotSelected => Rgb(0x56, 0xB4, 0xE9),
        NsightState::LongScoreboard => Rgb(0xD5, 0x5E, 0x00),
        NsightState::ShortScoreboard => Rgb(0xE6, 0x9F, 0x00),
        NsightState::Wait => Rgb(0xF0, 0xE4, 0x42),
        NsightState::Barrier => Rgb(0xCC, 0x79, 0xA7),
        NsightState::Membar => Rgb(0x88, 0x22, 0x55),
        NsightState::MathPipeThrottle => Rgb(0x00, 0x72, 0xB2),
        NsightState::MioThrottle => Rgb(0x44, 0xAA, 0x99),
        NsightState::LgThrottle => Rgb(0x99, 0x99, 0x33),
        NsightState::DispatchStall => Rgb(0x33, 0x22, 0x88),
        NsightState::BranchResolving => Rgb(0xAA, 0x44, 0x99),
        NsightState::NoInstruction => Rgb(0xBB, 0xBB, 0xBB),
        NsightState::Drain => Rgb(0x00, 0x00, 0x00),
        NsightState::Sleeping => Rgb(0xDD, 0xCC, 0x77),
        NsightState::Misc => Rgb(0x77, 0x77, 0x77),
    }
}

/// Colours for things identified by number (warps in the slot grid, blocks in the dispatch
/// chart): Paul Tol's "muted" scheme, cycled. None of them is a grey, so they never read as
/// waste or refill.
const IDENTITY: [Rgb; 9] = [
    Rgb(0xCC, 0x66, 0x77),
    Rgb(0x33, 0x22, 0x88),
    Rgb(0xDD, 0xCC, 0x77),
    Rgb(0x11, 0x77, 0x33),
    Rgb(0x88, 0xCC, 0xEE),
    Rgb(0x88, 0x22, 0x55),
    Rgb(0x44, 0xAA, 0x99),
    Rgb(0x99, 0x99, 0x33),
    Rgb(0xAA, 0x44, 0x99),
];

/// The colour of warp, block or thread number `n`.
pub fn identity_colour(n: u32) -> Rgb {
    IDENTITY[n as usize % IDENTITY.len()]
}

/// Whether black text is readable on `c` (else use white).
pub fn text_on(c: Rgb) -> Rgb {
    let luma = 299 * c.0 as u32 + 587 * c.1 as u32 + 114 * c.2 as u32;
    if luma >= 140_000 {
        Rgb(0, 0, 0)
    } else {
        Rgb(0xFF, 0xFF, 0xFF)
    }
}

/// An issue slot lost to a `coarse` context switch.
pub const REFILL: Rgb = Rgb(0x33, 0x33, 0x33);
/// An issue slot of a cycle in which the scheduler issued nothing.
pub const VERTICAL_WASTE: Rgb = Rgb(0xC8, 0xC8, 0xC8);
/// An unused issue slot of a cycle in which the scheduler issued something.
pub const HORIZONTAL_WASTE: Rgb = Rgb(0xEC, 0xEC, 0xEC);
/// Occupancy series: active warps (filled), eligible warps and issued instructions (lines).
pub const ACTIVE: Rgb = Rgb(0x88, 0xCC, 0xEE);
pub const ELIGIBLE: Rgb = Rgb(0x11, 0x77, 0x33);
pub const ISSUED: Rgb = Rgb(0xCC, 0x33, 0x11);
/// The page background and "nothing here" (no warp resident).
pub const BACKGROUND: Rgb = Rgb(0xFF, 0xFF, 0xFF);
/// Axis lines, ticks and text.
pub const INK: Rgb = Rgb(0x22, 0x22, 0x22);
/// Grid lines and group separators.
pub const GRID: Rgb = Rgb(0xDD, 0xDD, 0xDD);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_state_has_its_own_colour_distinct_from_the_slot_marks() {
        let colours: HashSet<Rgb> = NsightState::ALL.iter().map(|&s| state_colour(s)).collect();
        assert_eq!(colours.len(), NsightState::ALL.len());
        for c in [REFILL, VERTICAL_WASTE, HORIZONTAL_WASTE, BACKGROUND] {
            assert!(!IDENTITY.contains(&c));
        }
        assert_eq!(state_colour(NsightState::Selected).hex(), "#009E73");
    }

    #[test]
    fn text_contrast_picks_white_on_dark_and_black_on_light() {
        assert_eq!(text_on(Rgb(0x33, 0x22, 0x88)), Rgb(255, 255, 255));
        assert_eq!(text_on(Rgb(0xDD, 0xCC, 0x77)), Rgb(0, 0, 0));
    }
}
