//! The study's grids as SVG, written by hand: the five schemes stacked on one shared time axis;
//! per scheme one row per issue slot and one column per cycle, cells coloured by thread, refill
//! cells naming the thread switched to, vertical waste (a crossed cell) and horizontal waste (a
//! dotted outline) told apart, badges on the missing load (`M`) and on the instruction behind a
//! dependency stall (`D`), and a thread-state strip per thread under each grid.
//!
//! Hand-written rather than through plotters: the grid is thousands of labelled cells with
//! `<title>` tooltips and `data-` hooks that the HTML page animates, none of which plotters'
//! backend can emit. Colours are the Okabe–Ito colour-blind-safe set.

use super::{Cause, SchemeResult, SlotUse, StudyConfig, ThreadState};
use std::fmt::Write as _;

/// Side of one cell in SVG units.
pub const CELL: usize = 14;
/// Room left of the grid for the row labels.
pub const LABEL_W: usize = 64;
/// Fill of each thread's instructions.
pub const THREAD_COLOURS: [&str; 2] = ["#0072B2", "#E69F00"];
const MISS_COLOUR: &str = "#CC79A7";
const DEP_COLOUR: &str = "#F0E442";
const WAIT_COLOUR: &str = "#BBBBBB";
const REFILL_COLOUR: &str = "#777777";
const VERTICAL_COLOUR: &str = "#F2D0D0";

/// Height of one scheme's block: title, slot rows, a gap, two state strips.
pub fn scheme_height(width: usize) -> usize {
    18 + width * CELL + 4 + 2 * CELL + 6
}

/// Width of a grid of `cols` cycles, labels included.
pub fn grid_width(cols: usize) -> usize {
    LABEL_W + cols * CELL + 8
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
    let _ = write!(
        o,
        "<text x=\"0\" y=\"12\" class=\"title\" font-size=\"12\" font-weight=\"bold\">{name}</text><text x=\"{LABEL_W}\" y=\"12\" class=\"title\" font-size=\"11\">{} cycles, IPC {:.2}, {} issued, {} refill, {} vertical, {} horizontal waste</text>",
        r.cycles,
        r.ipc(),
        r.slots.instruction,
        r.slots.refill,
        r.slots.vertical_waste,
        r.slots.horizontal_waste
    );
    let width = r.grid.first().map_or(0, |c| c.slots.len());
    let top = 18;
    for s in 0..width {
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">slot {s}</text>",
            LABEL_W - 4,
            top + s * CELL + 11
        );
    }
    let strip_top = top + width * CELL + 4;
    for t in 0..2 {
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">T{t} state</text>",
            LABEL_W - 4,
            strip_top + t * CELL + 11
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
                let _ = write!(
                    o,
                    "<circle class=\"badge badge-{}\" cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"0.8\"/><text x=\"{}\" y=\"{}\" font-size=\"7\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#000\">{letter}</text>",
                    letter.to_lowercase(),
                    x + CELL / 2,
                    y + CELL / 2,
                    x + CELL / 2,
                    y + CELL / 2 + 3
                );
            }
        }
        SlotUse::Refill { from, to } => {
            let _ = write!(
                o,
                "<rect class=\"slot refill\" x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"url(#refill-hatch)\" stroke=\"#fff\" stroke-width=\"0.5\"><title>cycle {cycle} slot {s}: refill, switching from thread {from} to thread {to}</title></rect><text x=\"{}\" y=\"{}\" font-size=\"8\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#fff\">T{to}</text>",
                x + CELL / 2,
                y + CELL - 4
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

/// The legend, one line at vertical offset `y0`.
pub fn legend(y0: usize) -> String {
    let items: [(&str, &str); 8] = [
        (THREAD_COLOURS[0], "thread 0"),
        (THREAD_COLOURS[1], "thread 1"),
        ("url(#refill-hatch)", "refill (→ thread)"),
        (VERTICAL_COLOUR, "vertical waste ×"),
        ("none", "horizontal waste"),
        (MISS_COLOUR, "miss"),
        (DEP_COLOUR, "dep"),
        (WAIT_COLOUR, "ready, not picked"),
    ];
    let mut o = format!("<g class=\"legend\" transform=\"translate({LABEL_W},{y0})\">");
    let mut x = 0;
    for (fill, label) in items {
        let dash = if fill == "none" {
            " stroke-dasharray=\"2 2\""
        } else {
            ""
        };
        let _ = write!(
            o,
            "<rect x=\"{x}\" y=\"0\" width=\"10\" height=\"10\" fill=\"{fill}\" stroke=\"#999\"{dash}/><text x=\"{}\" y=\"9\" font-size=\"10\">{label}</text>",
            x + 13
        );
        x += 16 + label.chars().count() * 6;
    }
    let _ = write!(
        o,
        "<text x=\"{x}\" y=\"9\" font-size=\"10\">M: missing load · D: instruction behind a dependency stall</text></g>"
    );
    o
}

/// The cycle axis under the grids, ticks every 10 cycles.
fn axis(cols: usize, y0: usize) -> String {
    let mut o = format!("<g class=\"axis\" transform=\"translate(0,{y0})\">");
    let _ = write!(
        o,
        "<line x1=\"{LABEL_W}\" y1=\"0\" x2=\"{}\" y2=\"0\" stroke=\"#666\"/>",
        LABEL_W + cols * CELL
    );
    for c in (0..=cols).step_by(10) {
        let x = LABEL_W + c * CELL;
        let _ = write!(
            o,
            "<line x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"4\" stroke=\"#666\"/><text x=\"{x}\" y=\"14\" font-size=\"10\" text-anchor=\"middle\">{c}</text>"
        );
    }
    let _ = write!(
        o,
        "<text x=\"{}\" y=\"14\" font-size=\"10\">cycle</text></g>",
        LABEL_W - 40
    );
    o
}

/// All schemes stacked on one shared time axis, as a standalone SVG document.
pub fn render(cfg: &StudyConfig, results: &[SchemeResult]) -> String {
    let cols = results.iter().map(|r| r.cycles).max().unwrap_or(0);
    let block = scheme_height(cfg.width.max(1));
    let heading = 34;
    let height = heading + block * results.len() + 24;
    let width = grid_width(cols).max(760);
    let mut o = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\">"
    );
    o.push_str(&defs());
    let _ = write!(
        o,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/><text x=\"0\" y=\"12\" font-size=\"12\">Multithreading study: width {}, ilp {}, stalls {}, lat {}, switch cost {}, {} groups, seed {}</text>",
        cfg.width,
        cfg.ilp,
        cfg.stalls.name(),
        cfg.lat,
        cfg.switch_cost,
        cfg.groups,
        cfg.seed
    );
    o.push_str(&legend(18));
    for (i, r) in results.iter().enumerate() {
        o.push_str(&scheme_group(r, heading + i * block));
    }
    o.push_str(&axis(cols, heading + block * results.len() + 2));
    o.push_str("</svg>\n");
    o
}
