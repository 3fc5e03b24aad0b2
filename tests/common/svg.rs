//! Reading figures back: what several chart and report tests ask of an SVG's text.

// Each test file that says `mod common;` uses only part of the shared code.
#![allow(dead_code)]

/// The `width` attribute of an SVG's root element.
pub fn root_width(svg: &str) -> u32 {
    let root = &svg[svg.find("<svg").unwrap()..];
    let root = &root[..root.find('>').unwrap()];
    let from = root.find(" width=\"").unwrap() + " width=\"".len();
    root[from..from + root[from..].find('"').unwrap()]
        .parse()
        .unwrap()
}
