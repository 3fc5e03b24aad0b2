//! The study's grids as SVG, written by hand: the five schemes stacked on one shared time axis;
//! per scheme one row per issue slot and one column per cycle, cells coloured by thread, refill
//! cells naming the thread switched to, vertical waste (a crossed cell) and horizontal waste (a
//! dotted outline) told apart, badges on the missing load (`M`) and on the instruction behind a
//! dependency stall (`D`), and a thread-state strip per thread under each grid.
//!
//! Hand-written rather than through plotters: the grid is thousands of labelled cells with
//! `<title>` tooltips and `data-` hooks that the HTML page animates, none of which plotters'
//! backend can emit. Colours are the Okabe–Ito colour-blind-safe set. Text takes the charts'
//! named sizes (`render::TEXT_TITLE` …, none under `TEXT_MIN`) and the layout is sized from
//! them with `render::text_width`: the cells hold their labels at `TEXT_CELL`, the label
//! column its longest label, the legend wraps as the charts' legends do.

use super::{Cause, SchemeResult, SlotUse, StudyConfig, ThreadState};
use crate::render::{
    flow, text_width, width_of, wrap, LEGEND_ROW, SWATCH, SWATCH_GAP, TEXT_CELL, TEXT_HEADING,
    TEXT_LABEL, TEXT_SUBTITLE, TEXT_TITLE,
};
use std::fmt::Write as _;

/// Side of one cell in SVG units: room for a refill cell's `T1` at the cell text size.
pub const CELL: usize = TEXT_CELL as usize + 6;
/// The room kept free at the left and right edges.
const PAD: usize = 8;
/// Room left of the grid for the row labels (`T1 state`; the scheme names in the heading
/// size, `coarse`, are shorter).
pub const LABEL_W: usize = PAD + text_width(8, TEXT_LABEL) as usize + 8;
/// Fill of each thread's instructions.
pub const THREAD_COLOURS: [&str; 2] = ["#0072B2", "#E69F00"];
const MISS_COLOUR: &str = "#CC79A7";
const DEP_COLOUR: &str = "#F0E442";
const WAIT_COLOUR: &str = "#BBBBBB";
const REFILL_COLOUR: &str = "#777777";
const VERTICAL_COLOUR: &str = "#F2D0D0";
/// Where a scheme's slot rows start, under its heading line.
pub const GRID_TOP: usize = TEXT_HEADING as usize + 8;
/// The narrowest standalone SVG: a short schedule still gets a legend of a few rows.
const MIN_WIDTH: usize = 760;

/// Height of one scheme's block: heading, slot rows, a gap, two state strips, a gap.
pub fn scheme_height(width: usize) -> usize {
    GRID_TOP + width * CELL + 4 + 2 * CELL + 8
}

/// Width of a grid of `cols` cycles, labels included.
pub fn grid_width(cols: usize) -> usize {
    LABEL_W + cols * CELL + PAD
}

/// A `<text>` of `size` pixels centred on `y`, written as the charts' SVG backend writes it
/// (`dy="0.5ex"`, an explicit anchor), so the study's text reads, and is checked, like theirs.
fn text(o: &mut String, s: &str, (x, y): (usize, usize), size: u32, anchor: &str, attrs: &str) {
    let _ = write!(
        o,
        "<text x=\"{x}\" y=\"{y}\" dy=\"0.5ex\" text-anchor=\"{anchor}\" font-size=\"{size}\"{attrs}>{s}</text>"
    );
}

/// Shared `<defs>`: the hatch of refill cells.
pub fn defs() -> String {
    format!(
        "<defs><pattern id=\"refill-hatch\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"{REFILL_COLOUR}\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"4\" stroke=\"#555\" stroke-width=\"2\"/></pattern></defs>"
    )
}

fn state_name(s: ThreadState) -> &'static str {
    match s {
        ThreadState::Run => "run",
        ThreadState::Miss => "miss",
        ThreadState::Dep => "dep",
        ThreadState::Wait => "wait",
        ThreadState::Done => "done",
    }
}

/// One scheme's grid as an SVG group at vertical offset `y0`.
pub fn scheme_group(r: &SchemeResult, y0: usize) -> String {
    let mut o = String::new();
    let name = r.scheme.name();
    let _ = write!(
        o,
        "<g class=\"scheme\" data-scheme=\"{name}\" transform=\"translate(0,{y0})\">"
    );
    let heading_y = GRID_TOP / 2 - 2;
    text(
        &mut o,
        name,
        (PAD, heading_y),
        TEXT_HEADING,
        "start",
        " class=\"title\" font-weight=\"bold\"",
    );
    text(
        &mut o,
        &r.describe(", "),
        (LABEL_W, heading_y),
        TEXT_LABEL,
        "start",
        " class=\"title\"",
    );
    let width = r.grid.first().map_or(0, |c| c.slots.len());
    let top = GRID_TOP;
    for s in 0..width {
        let y = top + s * CELL + CELL / 2;
        text(
            &mut o,
            &format!("slot {s}"),
            (LABEL_W - 6, y),
            TEXT_LABEL,
            "end",
            "",
        );
    }
    let strip_top = top + width * CELL + 4;
    for t in 0..2 {
        let y = strip_top + t * CELL + CELL / 2;
        text(
            &mut o,
            &format!("T{t} state"),
            (LABEL_W - 6, y),
            TEXT_LABEL,
            "end",
            "",
        );
    }
    for rec in &r.grid {
        let x = LABEL_W + rec.cycle * CELL;
        let _ = write!(o, "<g data-cycle=\"{}\">", rec.cycle);
        for (s, slot) in rec.slots.iter().enumerate() {
            let y = top + s * CELL;
            cell(&mut o, *slot, x, y, rec.cycle, s);
        }
        for (t, st) in rec.threads.iter().enumerate() {
            let y = strip_top + t * CELL;
            let fill = match st {
                ThreadState::Run => THREAD_COLOURS[t],
                ThreadState::Miss => MISS_COLOUR,
                ThreadState::Dep => DEP_COLOUR,
                ThreadState::Wait => WAIT_COLOUR,
                ThreadState::Done => "none",
            };
            let _ = write!(
                o,
                "<rect class=\"state state-{}\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\" stroke=\"#888\" stroke-width=\"0.3\"><title>cycle {}: thread {t} {}</title></rect>",
                state_name(*st),
                rec.cycle,
                state_name(*st)
            );
        }
        o.push_str("</g>");
    }
    o.push_str("</g>");
    o
}

fn cell(o: &mut String, slot: SlotUse, x: usize, y: usize, cycle: usize, s: usize) {
    match slot {
        SlotUse::Instruction {
            thread,
            group,
            index,
            cause,
        } => {
            let _ = write!(
                o,
                "<rect class=\"slot issue t{thread}\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>cycle {cycle} slot {s}: thread {thread} group {group} instruction {index}{}</title></rect>",
                THREAD_COLOURS[thread],
                match cause {
                    Some(Cause::Miss) => " (load that misses)",
                    Some(Cause::Dep) => " (next group depends on it)",
                    None => "",
                }
            );
            if let Some(c) = cause {
                let letter = if c == Cause::Miss { "M" } else { "D" };
                let (cx, cy) = (x + CELL / 2, y + CELL / 2);
                let _ = write!(
                    o,
                    "<circle class=\"badge badge-{}\" cx=\"{cx}\" cy=\"{cy}\" r=\"{}\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"0.8\"/>",
                    letter.to_lowercase(),
                    CELL / 2 - 1
                );
                text(
                    o,
                    letter,
                    (cx, cy),
                    TEXT_CELL,
                    "middle",
                    " font-weight=\"bold\" fill=\"#000\"",
                );
            }
        }
        SlotUse::Refill { from, to } => {
            let _ = write!(
                o,
                "<rect class=\"slot refill\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"url(#refill-hatch)\" stroke=\"#fff\" stroke-width=\"0.5\"><title>cycle {cycle} slot {s}: refill, switching from thread {from} to thread {to}</title></rect>"
            );
            text(
                o,
                &format!("T{to}"),
                (x + CELL / 2, y + CELL / 2),
                TEXT_CELL,
                "middle",
                " font-weight=\"bold\" fill=\"#fff\"",
            );
        }
        SlotUse::VerticalWaste => {
            let _ = write!(
                o,
                "<rect class=\"slot vertical\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{VERTICAL_COLOUR}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>cycle {cycle} slot {s}: vertical waste (nothing issued)</title></rect><path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#B03030\" stroke-width=\"1\"/>",
                x + 3,
                y + 3,
                x + CELL - 3,
                y + CELL - 3,
                x + CELL - 3,
                y + 3,
                x + 3,
                y + CELL - 3
            );
        }
        SlotUse::HorizontalWaste => {
            let _ = write!(
                o,
                "<rect class=\"slot horizontal\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\" stroke-width=\"1\" stroke-dasharray=\"2 2\"><title>cycle {cycle} slot {s}: horizontal waste (slot unused)</title></rect>",
                x + 1,
                y + 1,
                CELL - 2,
                CELL - 2
            );
        }
    }
}

/// The legend's entries: a fill and its name (the page lays them out as HTML text too).
pub(super) const LEGEND: [(&str, &str); 8] = [
    (THREAD_COLOURS[0], "thread 0"),
    (THREAD_COLOURS[1], "thread 1"),
    ("url(#refill-hatch)", "refill (→ thread)"),
    (VERTICAL_COLOUR, "vertical waste ×"),
    ("none", "horizontal waste"),
    (MISS_COLOUR, "miss"),
    (DEP_COLOUR, "dep"),
    (WAIT_COLOUR, "ready, not picked"),
];
/// The badges' key, after the entries.
pub(super) const BADGES: &str = "M: missing load · D: instruction behind a dependency stall";

/// Where the legend's entries and then the badges' key go, from `x` to at most `right`: their
/// offsets from the legend's top left corner, laid out as the charts' legends are.
fn legend_layout(x: usize, right: usize) -> Vec<(i32, i32)> {
    let entries = LEGEND
        .iter()
        .map(|(_, label)| SWATCH + SWATCH_GAP + width_of(label, TEXT_LABEL));
    let widths = entries.chain([width_of(BADGES, TEXT_LABEL)]);
    flow(x as i32, right as i32, widths)
}

/// The height of the legend laid out from `x` to `right`.
pub fn legend_height(x: usize, right: usize) -> usize {
    legend_layout(x, right)
        .last()
        .map_or(0, |&(_, dy)| (dy + LEGEND_ROW) as usize)
}

/// The legend from `(x, y0)`, its rows wrapping before `right`, [`legend_height`] high.
pub fn legend(x: usize, y0: usize, right: usize) -> String {
    let mut o = format!("<g class=\"legend\" transform=\"translate({x},{y0})\">");
    let at = legend_layout(x, right);
    let mid = SWATCH / 2;
    for ((fill, label), &(dx, dy)) in LEGEND.iter().zip(&at) {
        let dash = if *fill == "none" {
            " stroke-dasharray=\"2 2\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<rect x=\"{dx}\" y=\"{dy}\" width=\"{SWATCH}\" height=\"{SWATCH}\" fill=\"{fill}\" stroke=\"#999\"{dash}/>"
        );
        let at = ((dx + SWATCH + SWATCH_GAP) as usize, (dy + mid) as usize);
        text(&mut o, label, at, TEXT_LABEL, "start", "");
    }
    if let Some(&(dx, dy)) = at.last() {
        let at = (dx as usize, (dy + mid) as usize);
        text(&mut o, BADGES, at, TEXT_LABEL, "start", "");
    }
    o.push_str("</g>");
    o
}

/// The cycle axis's height: ticks and their labels.
const AXIS_H: usize = 6 + TEXT_LABEL as usize + 8;

/// The cycle axis under the grids, ticks every 10 cycles.
fn axis(cols: usize, y0: usize) -> String {
    let mut o = format!("<g class=\"axis\" transform=\"translate(0,{y0})\">");
    let _ = write!(
        o,
        "<line x1=\"{LABEL_W}\" y1=\"0\" x2=\"{}\" y2=\"0\" stroke=\"#666\"/>",
        LABEL_W + cols * CELL
    );
    let labels_y = 6 + TEXT_LABEL as usize / 2;
    for c in (0..=cols).step_by(10) {
        let x = LABEL_W + c * CELL;
        let _ = write!(
            o,
            "<line x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"4\" stroke=\"#666\"/>"
        );
        text(
            &mut o,
            &c.to_string(),
            (x, labels_y),
            TEXT_LABEL,
            "middle",
            "",
        );
    }
    // Right-aligned short of the tick label `0` centred on the grid's left edge.
    text(
        &mut o,
        "cycle",
        (LABEL_W - 12, labels_y),
        TEXT_LABEL,
        "end",
        "",
    );
    o.push_str("</g>");
    o
}

/// All schemes stacked on one shared time axis, as a standalone SVG document.
pub fn render(cfg: &StudyConfig, results: &[SchemeResult]) -> String {
    let cols = results.iter().map(|r| r.cycles).max().unwrap_or(0);
    let block = scheme_height(cfg.width.max(1));
    let widest_stats = results
        .iter()
        .map(|r| LABEL_W + width_of(&r.describe(", "), TEXT_LABEL) as usize + PAD)
        .max()
        .unwrap_or(0);
    let width = grid_width(cols).max(widest_stats).max(MIN_WIDTH);
    let room = (width - 2 * PAD) as i32;
    let title = wrap("Multithreading study", TEXT_TITLE, room, 2);
    let settings = wrap(&cfg.describe(", "), TEXT_SUBTITLE, room, 2);
    let mut lines = String::new();
    let mut y = 6;
    for (line, size) in title
        .iter()
        .map(|l| (l, TEXT_TITLE))
        .chain(settings.iter().map(|l| (l, TEXT_SUBTITLE)))
    {
        let pitch = size as usize + 6;
        text(&mut lines, line, (PAD, y + pitch / 2), size, "start", "");
        y += pitch;
    }
    let legend_top = y + 4;
    let heading = legend_top + legend_height(PAD, width - PAD) + 8;
    let axis_top = heading + block * results.len() + 2;
    let height = axis_top + AXIS_H;
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\">"
    );
    o.push_str(&defs());
    let _ = write!(
        o,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>"
    );
    o.push_str(&lines);
    o.push_str(&legend(PAD, legend_top, width - PAD));
    for (i, r) in results.iter().enumerate() {
        o.push_str(&scheme_group(r, heading + i * block));
    }
    o.push_str(&axis(cols, axis_top));
    o.push_str("</svg>\n");
    o
}
