//! The `timeline` chart: one row per warp slot, grouped by SM and scheduler, x = cycle, each
//! cycle coloured by the Nsight state of the warp resident in the slot (white: no warp).
//!
//! Unbinned (the window fits in the plot's pixel columns) every state interval is drawn as it
//! is, with its PC and instruction in the tooltip. Binned, each pixel column shows its dominant
//! state (see the module doc of `render`): the state holding most of the column's cycles, "no
//! warp" included, so short states inside a long one disappear at that zoom — zoom with
//! `--from/--to` or `--sm` to see them.

use super::model::WarpLife;
use super::palette::{self, state_colour};
use super::{
    bin_cycles, dominant, window, within_size, Align, Canvas, Chart, ChartKind, Loaded, PlotArea,
    Region, RenderError, RenderOptions, Row,
};
use crate::analyze::NsightState;
use std::collections::BTreeMap;

const WIDTH: u32 = 1200;
const LEFT: i32 = 120;
const RIGHT_MARGIN: i32 = 190;
const TOP: i32 = 50;
const BOTTOM_MARGIN: i32 = 50;
/// Index of "no warp resident" after the Nsight states in a bin's counts.
const EMPTY: usize = NsightState::ALL.len();

fn state_index(s: NsightState) -> usize {
    NsightState::ALL.iter().position(|&x| x == s).unwrap_or(0)
}

/// Rows drawn at most; beyond, only the first SMs whose warp slots fit are shown.
pub const MAX_ROWS: usize = 512;

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    within_size(|columns| render_columns(t, options, columns))
}

fn render_columns(t: &Loaded, options: &RenderOptions, columns: i32) -> Result<Chart, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
    // Slots that held a warp during the window, keyed (sm, scheduler, slot).
    let mut slots: BTreeMap<(u32, u32, u32), Vec<&WarpLife>> = BTreeMap::new();
    for w in &m.warps {
        if options.sm.is_some_and(|sm| sm != w.sm) || w.to <= from || w.from >= to {
            continue;
        }
        slots
            .entry((w.sm, w.scheduler, w.slot))
            .or_default()
            .push(w);
    }
    if slots.is_empty() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("no warp was resident in cycles {from}..{to}"),
        });
    }
    let sms_total = slots
        .keys()
        .map(|k| k.0)
        .collect::<std::collections::BTreeSet<_>>();
    if slots.len() > MAX_ROWS {
        let mut per_sm: BTreeMap<u32, usize> = BTreeMap::new();
        for k in slots.keys() {
            *per_sm.entry(k.0).or_default() += 1;
        }
        let mut kept = 0;
        let mut last = 0;
        for (&sm, &n) in &per_sm {
            if kept + n > MAX_ROWS && kept > 0 {
                break;
            }
            kept += n;
            last = sm;
        }
        slots.retain(|k, _| k.0 <= last);
    }
    let sms_shown = slots
        .keys()
        .map(|k| k.0)
        .collect::<std::collections::BTreeSet<_>>();
    let n = slots.len() as i32;
    let row_h = if n <= 40 { 14 } else { (900 / n).clamp(2, 14) };
    let plot_h = row_h * n;
    // The legend lists the states that occur in the window (an upper bound when binned).
    let mut occurring = std::collections::BTreeSet::new();
    for iv in slots.values().flatten().flat_map(|w| &w.intervals) {
        if iv.to > from && iv.from < to {
            occurring.insert(NsightState::of(iv.state));
        }
    }
    let legend_h = 18 * occurring.len() as i32 + 30;
    let height = (TOP + plot_h.max(legend_h) + BOTTOM_MARGIN) as u32;
    let plot = PlotArea {
        left: LEFT,
        top: TOP,
        right: WIDTH as i32 - RIGHT_MARGIN,
        bottom: TOP + plot_h,
        x_from: from as f64,
        x_to: to as f64,
    };
    let bin = bin_cycles(to - from, (plot.right - plot.left).min(columns));
    let listing = |launch: u32, pc: u32| {
        m.header
            .launches
            .get(launch as usize)
            .and_then(|l| l.listing.get(pc as usize))
            .map_or("", String::as_str)
    };

    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    let mut present = [false; EMPTY];
    {
        let canvas = Canvas::new(&mut svg, WIDTH, height)?;
        canvas.title(&format!("Warp states over time: {}", t.subject()), WIDTH)?;
        canvas.subtitle(
            &format!(
                "{}, cycles {from}..{to}, {}{}",
                t.file_name(),
                if sms_shown.len() < sms_total.len() {
                    format!(
                        "SMs {}..={} of {} with warps (use --sm), ",
                        sms_shown.first().copied().unwrap_or(0),
                        sms_shown.last().copied().unwrap_or(0),
                        sms_total.len()
                    )
                } else {
                    String::new()
                },
                if bin == 1 {
                    "one column per cycle".to_string()
                } else {
                    format!("{bin} cycles per column, dominant state shown")
                }
            ),
            WIDTH,
        )?;
        let mut previous: Option<(u32, u32)> = None;
        for (i, (&(sm, sched, slot), lives)) in slots.iter().enumerate() {
            let top = TOP + i as i32 * row_h;
            let bottom = top + row_h;
            let label = format!("SM{sm} S{sched} w{slot}");
            if previous != Some((sm, sched)) {
                if i > 0 {
                    let c = if previous.map(|p| p.0) != Some(sm) {
                        palette::INK
                    } else {
                        palette::GRID
                    };
                    canvas.line(vec![(plot.left - 60, top), (plot.right, top)], c, 1)?;
                }
                if row_h < 9 {
                    canvas.text(
                        &format!("SM{sm} S{sched}"),
                        (plot.left - 6, top + 5),
                        10,
                        palette::INK,
                        Align::Right,
                        "sans-serif",
                    )?;
                }
                previous = Some((sm, sched));
            }
            if row_h >= 9 {
                canvas.text(
                    &label,
                    (plot.left - 6, (top + bottom) / 2),
                    10,
                    palette::INK,
                    Align::Right,
                    "sans-serif",
                )?;
            }
            let y0 = top + 1.min(row_h / 4);
            let y1 = bottom - 1.min(row_h / 4);
            if bin == 1 {
                for w in lives {
                    for iv in &w.intervals {
                        let (a, b) = (iv.from.max(from), iv.to.min(to));
                        if a >= b {
                            continue;
                        }
                        let s = NsightState::of(iv.state);
                        present[state_index(s)] = true;
                        let (x0, x1) = (plot.x(a as f64), plot.x(b as f64));
                        canvas.rect(x0, y0, x1, y1, state_colour(s))?;
                        let mut text = format!(
                            "SM{sm} warp slot {slot} (block {} warp {}): {}, cycles {a}..{b}",
                            w.block,
                            w.warp_in_block,
                            s.name()
                        );
                        if let Some(pc) = iv.pc {
                            text.push_str(&format!(", PC {pc}: {}", listing(w.launch, pc)));
                        }
                        regions.push(Region {
                            x: x0,
                            y: top,
                            width: x1 - x0,
                            height: row_h,
                            text,
                        });
                    }
                }
            } else {
                let bins = (to - from).div_ceil(bin) as usize;
                let mut counts = vec![[0u64; EMPTY + 1]; bins];
                for (b, c) in counts.iter_mut().enumerate() {
                    let start = from + b as u64 * bin;
                    c[EMPTY] = (start + bin).min(to) - start;
                }
                for w in lives {
                    for iv in &w.intervals {
                        let (mut a, b) = (iv.from.max(from), iv.to.min(to));
                        let s = state_index(NsightState::of(iv.state));
                        while a < b {
                            let k = ((a - from) / bin) as usize;
                            let end = (from + (k as u64 + 1) * bin).min(b);
                            counts[k][s] += end - a;
                            counts[k][EMPTY] = counts[k][EMPTY].saturating_sub(end - a);
                            a = end;
                        }
                    }
                }
                let winners: Vec<Option<usize>> = counts.iter().map(|c| dominant(c)).collect();
                let mut k = 0;
                while k < bins {
                    let which = winners[k];
                    let mut j = k + 1;
                    while j < bins && winners[j] == which {
                        j += 1;
                    }
                    if let Some(s) = which.filter(|&s| s < EMPTY) {
                        let state = NsightState::ALL[s];
                        present[s] = true;
                        let a = from + k as u64 * bin;
                        let b = (from + j as u64 * bin).min(to);
                        let (x0, x1) = (plot.x(a as f64), plot.x(b as f64));
                        canvas.rect(x0, y0, x1, y1, state_colour(state))?;
                        regions.push(Region {
                            x: x0,
                            y: top,
                            width: x1 - x0,
                            height: row_h,
                            text: format!(
                                "SM{sm} warp slot {slot}: mostly {}, cycles {a}..{b}",
                                state.name()
                            ),
                        });
                    }
                    k = j;
                }
            }
            rows.push(Row { label, top, bottom });
        }
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.x_axis(&plot, "cycle")?;
        canvas.text(
            "warp state",
            (plot.right + 20, TOP + 4),
            12,
            palette::INK,
            Align::Left,
            "sans-serif",
        )?;
        let entries: Vec<_> = NsightState::ALL
            .iter()
            .filter(|&&s| present[state_index(s)])
            .map(|&s| (state_colour(s), s.name().to_string()))
            .collect();
        canvas.legend((plot.right + 20, TOP + 18), &entries)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Timeline,
        svg,
        width: WIDTH,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}
