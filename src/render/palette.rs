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
/// chart), cycled. The slots chart draws them beside the state strips and the slot marks, so
/// each is at least [`APART`] from every state colour and every slot mark, and at least
/// [`APART_IDENTITY`] from the others (a warp's number and tooltip tell warps apart too; their
/// colours repeat anyway). None is a grey, so none reads as waste.
const IDENTITY: [Rgb; 9] = [
    Rgb(0xE7, 0x59, 0x6C),
    Rgb(0x6D, 0x6D, 0xD9),
    Rgb(0x74, 0xC0, 0x5E),
    Rgb(0xA3, 0x7B, 0x39),
    Rgb(0xDF, 0xB1, 0xF8),
    Rgb(0x12, 0x62, 0x24),
    Rgb(0xC9, 0x40, 0x3A),
    Rgb(0x1E, 0x4D, 0x5C),
    Rgb(0xA5, 0xE0, 0xB5),
];

/// The least CIEDE2000 distance ([`distance`]) between colours of different meanings that one
/// chart may draw together: a state and a slot mark or a warp's colour, two slot marks.
pub const APART: f64 = 14.0;
/// The least distance between two warps' (or blocks') colours.
pub const APART_IDENTITY: f64 = 10.0;

/// The CIEDE2000 colour difference of `a` and `b` (sRGB, D65): about 1 is just noticeable;
/// chart colours that must not be confused are [`APART`] or more apart.
pub fn distance(a: Rgb, b: Rgb) -> f64 {
    let (l1, a1, b1) = lab(a);
    let (l2, a2, b2) = lab(b);
    let c_bar = (a1.hypot(b1) + a2.hypot(b2)) / 2.0;
    let g = 0.5 * (1.0 - (c_bar.powi(7) / (c_bar.powi(7) + 25f64.powi(7))).sqrt());
    let (a1, a2) = ((1.0 + g) * a1, (1.0 + g) * a2);
    let (c1, c2) = (a1.hypot(b1), a2.hypot(b2));
    let hue = |b: f64, a: f64| b.atan2(a).to_degrees().rem_euclid(360.0);
    let (h1, h2) = (hue(b1, a1), hue(b2, a2));
    let dl = l2 - l1;
    let dc = c2 - c1;
    let dh = if c1 * c2 == 0.0 {
        0.0
    } else if (h2 - h1).abs() <= 180.0 {
        h2 - h1
    } else if h2 > h1 {
        h2 - h1 - 360.0
    } else {
        h2 - h1 + 360.0
    };
    let dh = 2.0 * (c1 * c2).sqrt() * (dh / 2.0).to_radians().sin();
    let l_bar = (l1 + l2) / 2.0;
    let c_bar = (c1 + c2) / 2.0;
    let h_bar = if c1 * c2 == 0.0 {
        h1 + h2
    } else if (h1 - h2).abs() <= 180.0 {
        (h1 + h2) / 2.0
    } else if h1 + h2 < 360.0 {
        (h1 + h2 + 360.0) / 2.0
    } else {
        (h1 + h2 - 360.0) / 2.0
    };
    let cos = |deg: f64| deg.to_radians().cos();
    let t =
        1.0 - 0.17 * cos(h_bar - 30.0) + 0.24 * cos(2.0 * h_bar) + 0.32 * cos(3.0 * h_bar + 6.0)
            - 0.20 * cos(4.0 * h_bar - 63.0);
    let d_theta = 30.0 * (-((h_bar - 275.0) / 25.0).powi(2)).exp();
    let rc = 2.0 * (c_bar.powi(7) / (c_bar.powi(7) + 25f64.powi(7))).sqrt();
    let sl = 1.0 + 0.015 * (l_bar - 50.0).powi(2) / (20.0 + (l_bar - 50.0).powi(2)).sqrt();
    let sc = 1.0 + 0.045 * c_bar;
    let sh = 1.0 + 0.015 * c_bar * t;
    let rt = -(2.0 * d_theta).to_radians().sin() * rc;
    let (l, c, h) = (dl / sl, dc / sc, dh / sh);
    (l * l + c * c + h * h + rt * c * h).sqrt()
}

/// CIE L*a*b* (D65) of an sRGB colour.
fn lab(c: Rgb) -> (f64, f64, f64) {
    let lin = |v: u8| {
        let v = v as f64 / 255.0;
        match v <= 0.04045 {
            true => v / 12.92,
            false => ((v + 0.055) / 1.055).powf(2.4),
        }
    };
    let (r, g, b) = (lin(c.0), lin(c.1), lin(c.2));
    let x = 0.4124564 * r + 0.3575761 * g + 0.1804375 * b;
    let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    let z = 0.0193339 * r + 0.1191920 * g + 0.9503041 * b;
    let f = |t: f64| match t > 216.0 / 24389.0 {
        true => t.cbrt(),
        false => (24389.0 / 27.0 * t + 16.0) / 116.0,
    };
    let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
    (116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz))
}

/// Every colour the slots chart may draw with a meaning of its own: the slot marks, then the
/// warps' colours, then the states'. Each with what it means, for the tests.
pub fn slots_legend_colours() -> Vec<(Rgb, String)> {
    let mut all = vec![
        (REFILL, "refill".to_string()),
        (VERTICAL_WASTE, "vertical waste".to_string()),
        (HORIZONTAL_WASTE, "horizontal waste".to_string()),
    ];
    all.extend(
        IDENTITY
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, format!("warp {i}"))),
    );
    all.extend(
        NsightState::ALL
            .iter()
            .map(|&s| (state_colour(s), s.name().to_string())),
    );
    all
}

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

/// An issue slot lost to a `coarse` context switch: dark brown, apart from `drain`'s black and
/// `misc`'s grey.
pub const REFILL: Rgb = Rgb(0x4A, 0x35, 0x20);
/// An issue slot of a cycle in which the scheduler issued nothing: a pale blue-grey, apart
/// from `no_instruction`'s grey and from the near-white of horizontal waste.
pub const VERTICAL_WASTE: Rgb = Rgb(0xB3, 0xDC, 0xE8);
/// An unused issue slot of a cycle in which the scheduler issued something: near white.
pub const HORIZONTAL_WASTE: Rgb = Rgb(0xF9, 0xF9, 0xF9);
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

    /// The old slot marks and warp colours (Tol's muted scheme, greys) against today's: the
    /// check below must tell them apart, or it checks nothing.
    fn confusable(colours: &[(Rgb, String)]) -> Vec<String> {
        let kind = |m: &str| match m {
            "refill" | "vertical waste" | "horizontal waste" => 'm',
            m if m.starts_with("warp ") => 'w',
            _ => 's',
        };
        let mut bad = Vec::new();
        for (i, (a, ma)) in colours.iter().enumerate() {
            for (b, mb) in &colours[..i] {
                let least = match (kind(ma), kind(mb)) {
                    // The state palette is every chart's; it is not the slots chart's to move.
                    ('s', 's') => continue,
                    ('w', 'w') => APART_IDENTITY,
                    _ => APART,
                };
                let d = distance(*a, *b);
                if d < least {
                    bad.push(format!("{ma} {} vs {mb} {}: {d:.1}", a.hex(), b.hex()));
                }
            }
        }
        bad
    }

    #[test]
    fn the_slots_charts_colours_of_different_meanings_are_apart() {
        assert!((distance(Rgb(0, 0, 0), Rgb(255, 255, 255)) - 100.0).abs() < 0.01);
        assert_eq!(distance(Rgb(0x12, 0x34, 0x56), Rgb(0x12, 0x34, 0x56)), 0.0);
        let (a, b) = (Rgb(0x56, 0xB4, 0xE9), Rgb(0x88, 0xCC, 0xEE));
        assert_eq!(distance(a, b), distance(b, a));
        let bad = confusable(&slots_legend_colours());
        assert!(bad.is_empty(), "{bad:#?}");
        let mut old = vec![
            (Rgb(0x33, 0x33, 0x33), "refill".to_string()),
            (Rgb(0xC8, 0xC8, 0xC8), "vertical waste".to_string()),
            (Rgb(0xEC, 0xEC, 0xEC), "horizontal waste".to_string()),
        ];
        for (i, c) in [
            0xCC6677, 0x332288, 0xDDCC77, 0x117733, 0x88CCEE, 0x882255, 0x44AA99,
        ]
        .iter()
        .enumerate()
        {
            let c = Rgb((c >> 16) as u8, (c >> 8) as u8, *c as u8);
            old.push((c, format!("warp {i}")));
        }
        old.extend(
            NsightState::ALL
                .iter()
                .map(|&s| (state_colour(s), s.name().to_string())),
        );
        let bad = confusable(&old).join("\n");
        // The pairs the audit found, each under the bound.
        for (x, y) in [
            ("#C8C8C8", "#BBBBBB"),
            ("#333333", "#000000"),
            ("#88CCEE", "#56B4E9"),
            ("#44AA99", "#009E73"),
        ] {
            assert!(
                bad.lines().any(|l| l.contains(x) && l.contains(y)),
                "{x} vs {y} not found in:\n{bad}"
            );
        }
    }

    #[test]
    fn text_contrast_picks_white_on_dark_and_black_on_light() {
        assert_eq!(text_on(Rgb(0x33, 0x22, 0x88)), Rgb(255, 255, 255));
        assert_eq!(text_on(Rgb(0xDD, 0xCC, 0x77)), Rgb(0, 0, 0));
    }
}
