//! The `source` chart: each launch's program listing (from the trace header, PC → text) with a
//! stall heat bar per instruction — the warp-cycles its warps spent waiting to issue it, stacked
//! by Nsight state (`selected` left out: that is issuing, not stalling), all bars on one scale —
//! and its execution count (the analyzer's `source` lines).

use super::palette::{self, state_colour};
use super::{
    tick_step, Align, Canvas, Chart, ChartKind, Loaded, PlotArea, Region, RenderError, Row,
};
use crate::analyze::NsightState;

const WIDTH: u32 = 1200;
const TOP: i32 = 90;
const LINE: i32 = 16;
const HEADER: i32 = 22;
const RIGHT_MARGIN: i32 = 90;
const BOTTOM_MARGIN: i32 = 50;

pub fn render(t: &Loaded) -> Result<Chart, RenderError> {
    let a = t.analysis()?;
    let stalls = |w: &std::collections::BTreeMap<String, u64>| -> Vec<(NsightState, u64)> {
        NsightState::ALL
            .iter()
            .filter(|&&s| s != NsightState::Selected)
            .filter_map(|&s| w.get(s.name()).filter(|&&n| n > 0).map(|&n| (s, n)))
            .collect()
    };
    let max_stall = a
        .launches
        .iter()
        .flat_map(|l| &l.source)
        .map(|s| stalls(&s.warp_cycles).iter().map(|x| x.1).sum::<u64>())
        .max()
        .unwrap_or(0);
    let longest = a
        .launches
        .iter()
        .flat_map(|l| &l.source)
        .map(|s| s.text.chars().count())
        .max()
        .unwrap_or(10);
    // Monospace text at 11 px is about 6.6 px per character; PC and count columns come first.
    let text_w = (longest as i32 * 7).clamp(120, 560);
    let left = 16 + 40 + text_w + 70;
    let lines: i32 = a.launches.iter().map(|l| l.source.len() as i32).sum();
    let plot_h = lines * LINE + HEADER * a.launches.len() as i32;
    let height = (TOP + plot_h + BOTTOM_MARGIN) as u32;
    let step = tick_step((max_stall as f64).max(1.0), 6);
    let x_to = ((max_stall as f64 / step).ceil() * step).max(step);
    let plot = PlotArea {
        left,
        top: TOP,
        right: WIDTH as i32 - RIGHT_MARGIN,
        bottom: TOP + plot_h,
        x_from: 0.0,
        x_to,
    };
    let mut present = vec![false; NsightState::ALL.len()];
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, WIDTH, height)?;
        canvas.title(&format!("Stalls by instruction: {}", t.subject()), WIDTH)?;
        canvas.subtitle(
            &format!(
                "{}: warp-cycles waiting to issue each instruction, by state",
                t.file_name()
            ),
            WIDTH,
        )?;
        canvas.text(
            "PC",
            (16, TOP - 8),
            11,
            palette::INK,
            Align::Left,
            "sans-serif",
        )?;
        canvas.text(
            "instruction",
            (56, TOP - 8),
            11,
            palette::INK,
            Align::Left,
            "sans-serif",
        )?;
        canvas.text(
            "executed",
            (left - 8, TOP - 8),
            11,
            palette::INK,
            Align::Right,
            "sans-serif",
        )?;
        let mut top = TOP;
        for l in &a.launches {
            canvas.text(
                &format!("launch {}: {} ({} cycles)", l.index, l.name, l.cycles),
                (16, top + HEADER / 2),
                13,
                palette::INK,
                Align::Left,
                "sans-serif",
            )?;
            top += HEADER;
            for s in &l.source {
                let y = top + LINE / 2;
                if s.pc % 2 == 1 {
                    canvas.rect(
                        8,
                        top,
                        plot.right,
                        top + LINE,
                        palette::Rgb(0xF6, 0xF6, 0xF6),
                    )?;
                }
                canvas.text(
                    &s.pc.to_string(),
                    (16, y),
                    11,
                    palette::INK,
                    Align::Left,
                    "monospace",
                )?;
                canvas.text(&s.text, (56, y), 11, palette::INK, Align::Left, "monospace")?;
                canvas.text(
                    &s.executions.to_string(),
                    (left - 8, y),
                    11,
                    palette::INK,
                    Align::Right,
                    "monospace",
                )?;
                let parts = stalls(&s.warp_cycles);
                let mut acc = 0u64;
                for &(state, n) in &parts {
                    present[NsightState::ALL
                        .iter()
                        .position(|&x| x == state)
                        .unwrap_or(0)] = true;
                    let x0 = plot.x(acc as f64);
                    acc += n;
                    canvas.rect(
                        x0,
                        top + 2,
                        plot.x(acc as f64),
                        top + LINE - 2,
                        state_colour(state),
                    )?;
                }
                if acc > 0 {
                    canvas.text(
                        &acc.to_string(),
                        (plot.x(acc as f64) + 4, y),
                        10,
                        palette::INK,
                        Align::Left,
                        "sans-serif",
                    )?;
                }
                let detail: Vec<String> = parts
                    .iter()
                    .map(|(state, n)| format!("{} {n}", state.name()))
                    .collect();
                regions.push(Region {
                    x: 8,
                    y: top,
                    width: plot.right - 8,
                    height: LINE,
                    text: format!(
                        "PC {}: {}{}; executed {} times; {} stall warp-cycles{}{}",
                        s.pc,
                        s.text,
                        s.cuda_line
                            .map_or(String::new(), |l| format!(" (CUDA line {l})")),
                        s.executions,
                        acc,
                        if detail.is_empty() { "" } else { ": " },
                        detail.join(", ")
                    ),
                });
                rows.push(Row {
                    label: format!("{} PC {}", l.name, s.pc),
                    top,
                    bottom: top + LINE,
                });
                top += LINE;
            }
        }
        canvas.line(
            vec![(plot.left, plot.top), (plot.left, plot.bottom)],
            palette::INK,
            1,
        )?;
        canvas.x_axis(&plot, "stall warp-cycles", true)?;
        let entries: Vec<_> = NsightState::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| present[*i])
            .map(|(_, &s)| (state_colour(s), s.name().to_string()))
            .collect();
        // The legend runs along the top, left to right.
        let (mut x, mut y) = (16, 46);
        for (c, name) in &entries {
            // About 6 px per character at 11 px.
            let w = 30 + 6 * name.len() as i32;
            if x + w > WIDTH as i32 {
                x = 16;
                y += 14;
            }
            canvas.rect(x, y, x + 12, y + 12, *c)?;
            canvas.text(
                name,
                (x + 16, y + 6),
                11,
                palette::INK,
                Align::Left,
                "sans-serif",
            )?;
            x += w;
        }
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Source,
        svg,
        width: WIDTH,
        height,
        plot,
        rows,
        regions,
        bin_cycles: 1,
    })
}
