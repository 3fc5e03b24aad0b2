//! The `slots` chart: seed 004's issue-slot grid for a GPU trace. One row per issue slot
//! (scheduler × issue width), one column per cycle; a cell is coloured by the warp slot whose
//! instruction it issued, dark grey for a `coarse` refill, mid grey for a cycle in which the
//! scheduler issued nothing (vertical waste) and light grey for an unused slot of a cycle that
//! issued something (horizontal waste). Binned, a column shows the dominant use of its cycles.
//! Warp colours repeat every nine warp slots; the tooltip names the warp.
//!
//! Under the grid, thread-state strips (seed 004's run/miss/dep/wait rows, for warps): one thin
//! strip per warp slot of the schedulers shown, coloured by its Nsight state (binned like the
//! grid, dominant state), so a waste column lines up with why every warp could not issue. With
//! more than [`MAX_STRIPS`] warp slots the strips are left out (the timeline shows them).

use super::palette::{self, identity_colour, text_on, HORIZONTAL_WASTE, REFILL, VERTICAL_WASTE};
use super::{
    bin_cycles, dominant, window, within_size, Align, Canvas, Chart, ChartKind, Loaded, PlotArea,
    Region, RenderError, RenderOptions, Row,
};
use crate::analyze::NsightState;
use std::collections::BTreeMap;

/// Per cycle, the (issue slot, index in `issues`) of each instruction issued.
type IssuesByCycle = BTreeMap<u64, Vec<(u32, usize)>>;

const WIDTH: u32 = 1200;
const LEFT: i32 = 120;
const RIGHT_MARGIN: i32 = 230;
const TOP: i32 = 50;
const BOTTOM_MARGIN: i32 = 50;
/// Warp-slot strips drawn at most under the grid.
pub const MAX_STRIPS: usize = 64;
const STRIP_H: i32 = 6;
const STRIP_GAP: i32 = 14;

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    within_size(|columns| render_columns(t, options, columns))
}

fn render_columns(t: &Loaded, options: &RenderOptions, columns: i32) -> Result<Chart, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
    let width = m.header.config.sm.issue_width.max(1);
    let warps = m.header.config.sm.max_warps.max(1) as usize;
    let (refill, vertical, horizontal) = (warps, warps + 1, warps + 2);
    let wanted = |sm: u32| options.sm.map_or(true, |s| s == sm);
    let mut schedulers: Vec<(u32, u32)> = m
        .warps
        .iter()
        .filter(|w| wanted(w.sm) && w.to > from && w.from < to)
        .map(|w| (w.sm, w.scheduler))
        .collect();
    schedulers.sort();
    schedulers.dedup();
    if schedulers.is_empty() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("no warp was resident in cycles {from}..{to}"),
        });
    }
    // Per scheduler: cycle → (issue slot → issue index), and the refill cycles.
    let mut issued: BTreeMap<(u32, u32), IssuesByCycle> = BTreeMap::new();
    for (i, r) in m.issues.iter().enumerate() {
        if r.cycle >= from && r.cycle < to && wanted(r.sm) {
            issued
                .entry((r.sm, r.scheduler))
                .or_default()
                .entry(r.cycle)
                .or_default()
                .push((r.issue_slot, i));
        }
    }
    let mut refills: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    for r in &m.refills {
        if r.cycle >= from && r.cycle < to && wanted(r.sm) {
            refills
                .entry((r.sm, r.scheduler))
                .or_default()
                .push(r.cycle);
        }
    }
    let n = schedulers.len() as i32 * width as i32;
    let row_h = if n <= 40 { 16 } else { (900 / n).clamp(2, 16) };
    let grid_h = row_h * n;
    // Thread-state strips: the warp slots of the schedulers shown, in (sm, scheduler, slot) order.
    let mut strips: BTreeMap<(u32, u32, u32), Vec<&super::model::WarpLife>> = BTreeMap::new();
    for w in &m.warps {
        if schedulers.contains(&(w.sm, w.scheduler)) && w.to > from && w.from < to {
            strips
                .entry((w.sm, w.scheduler, w.slot))
                .or_default()
                .push(w);
        }
    }
    if strips.len() > MAX_STRIPS {
        strips.clear();
    }
    let strips_h = if strips.is_empty() {
        0
    } else {
        STRIP_GAP + STRIP_H * strips.len() as i32
    };
    let plot_h = grid_h + strips_h;
    let strip_states: std::collections::BTreeSet<usize> = strips
        .values()
        .flatten()
        .flat_map(|w| &w.intervals)
        .filter(|iv| iv.to.min(to) > iv.from.max(from))
        .filter_map(|iv| {
            NsightState::ALL
                .iter()
                .position(|&x| x == NsightState::of(iv.state))
        })
        .collect();
    let warps_seen = issued
        .values()
        .flat_map(|c| c.values().flatten())
        .map(|&(_, i)| m.issues[i].warp_slot)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let legend_entries = 3 + warps_seen.min(9) + usize::from(warps_seen > 9) + strip_states.len();
    let height = (TOP + plot_h.max(18 * legend_entries as i32 + 10) + BOTTOM_MARGIN) as u32;
    let plot = PlotArea {
        left: LEFT,
        top: TOP,
        right: WIDTH as i32 - RIGHT_MARGIN,
        bottom: TOP + plot_h,
        x_from: from as f64,
        x_to: to as f64,
    };
    let bin = bin_cycles(to - from, (plot.right - plot.left).min(columns));
    let bins = (to - from).div_ceil(bin) as usize;
    let listing = |launch: u32, pc: u32| {
        m.header
            .launches
            .get(launch as usize)
            .and_then(|l| l.listing.get(pc as usize))
            .map_or("", String::as_str)
    };
    let empty = BTreeMap::new();
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    let mut seen_warps = std::collections::BTreeSet::new();
    {
        let canvas = Canvas::new(&mut svg, WIDTH, height)?;
        canvas.title(&format!("Issue slots: {}", t.subject()), WIDTH)?;
        canvas.subtitle(
            &format!(
                "{}, cycles {from}..{to}, issue width {width}, {}",
                t.file_name(),
                if bin == 1 {
                    "one column per cycle".to_string()
                } else {
                    format!("{bin} cycles per column, dominant use shown")
                }
            ),
            WIDTH,
        )?;
        let mut row = 0;
        for &(sm, sched) in &schedulers {
            let by_cycle = issued.get(&(sm, sched)).unwrap_or(&empty);
            let refill_cycles = refills.get(&(sm, sched)).map_or(&[][..], |v| v.as_slice());
            if row > 0 {
                let top = TOP + row * row_h;
                canvas.line(
                    vec![(plot.left - 50, top), (plot.right, top)],
                    palette::INK,
                    1,
                )?;
            }
            for slot in 0..width {
                let top = TOP + row * row_h;
                let bottom = top + row_h;
                let label = format!("SM{sm} S{sched} slot {slot}");
                if row_h >= 9 || slot == 0 {
                    canvas.text(
                        &if width == 1 || row_h < 9 {
                            format!("SM{sm} S{sched}")
                        } else {
                            label.clone()
                        },
                        (plot.left - 6, (top + bottom) / 2),
                        10,
                        palette::INK,
                        Align::Right,
                        "sans-serif",
                    )?;
                }
                // Counts per bin: warp slots, then refill, vertical and horizontal waste.
                let mut counts = vec![vec![0u64; warps + 3]; bins];
                for (k, c) in counts.iter_mut().enumerate() {
                    let a = from + k as u64 * bin;
                    c[vertical] = (a + bin).min(to) - a;
                }
                // The issue that filled this slot in a one-cycle bin, for its tooltip.
                let mut single: BTreeMap<usize, usize> = BTreeMap::new();
                for (&cycle, list) in by_cycle {
                    let k = ((cycle - from) / bin) as usize;
                    counts[k][vertical] -= 1;
                    match list.iter().find(|(s, _)| *s == slot) {
                        Some(&(_, i)) => {
                            let w = (m.issues[i].warp_slot as usize).min(warps - 1);
                            counts[k][w] += 1;
                            seen_warps.insert(m.issues[i].warp_slot);
                            if bin == 1 {
                                single.insert(k, i);
                            }
                        }
                        None => counts[k][horizontal] += 1,
                    }
                }
                for &cycle in refill_cycles {
                    let k = ((cycle - from) / bin) as usize;
                    if counts[k][vertical] > 0 {
                        counts[k][vertical] -= 1;
                        counts[k][refill] += 1;
                    }
                }
                let winners: Vec<Option<usize>> = counts.iter().map(|c| dominant(c)).collect();
                let mut k = 0;
                while k < bins {
                    let which = winners[k];
                    let mut j = k + 1;
                    // One-cycle cells of issues stay separate so each names its instruction.
                    while j < bins && winners[j] == which && !(bin == 1 && which < Some(warps)) {
                        j += 1;
                    }
                    let a = from + k as u64 * bin;
                    let b = (from + j as u64 * bin).min(to);
                    let (x0, x1) = (plot.x(a as f64), plot.x(b as f64));
                    let Some(u) = which else {
                        k = j;
                        continue;
                    };
                    let (colour, what) = if u == refill {
                        (REFILL, "refill (coarse switch)".to_string())
                    } else if u == vertical {
                        (VERTICAL_WASTE, "no issue (vertical waste)".to_string())
                    } else if u == horizontal {
                        (
                            HORIZONTAL_WASTE,
                            "unused slot (horizontal waste)".to_string(),
                        )
                    } else {
                        let what = match single.get(&k) {
                            Some(&i) => {
                                let r = &m.issues[i];
                                format!(
                                    "warp slot {u} issued PC {}: {}",
                                    r.pc,
                                    listing(r.launch, r.pc)
                                )
                            }
                            None => format!("mostly warp slot {u}"),
                        };
                        (identity_colour(u as u32), what)
                    };
                    canvas.rect(x0, top + 1, x1, bottom - 1, colour)?;
                    if u < warps && x1 - x0 >= 12 && row_h >= 12 {
                        canvas.text(
                            &u.to_string(),
                            ((x0 + x1) / 2, (top + bottom) / 2),
                            9,
                            text_on(colour),
                            Align::Centre,
                            "sans-serif",
                        )?;
                    }
                    regions.push(Region {
                        x: x0,
                        y: top,
                        width: (x1 - x0).max(1),
                        height: row_h,
                        text: format!("{label}, cycles {a}..{b}: {what}"),
                    });
                    k = j;
                }
                rows.push(Row { label, top, bottom });
                row += 1;
            }
        }
        let strips_top = TOP + grid_h + STRIP_GAP;
        if !strips.is_empty() {
            canvas.text(
                "warp states",
                (plot.left - 6, strips_top - 7),
                9,
                palette::INK,
                Align::Right,
                "sans-serif",
            )?;
        }
        let states = NsightState::ALL.len();
        for (i, (&(sm, sched, slot), lives)) in strips.iter().enumerate() {
            let top = strips_top + i as i32 * STRIP_H;
            let bottom = top + STRIP_H;
            let mut counts = vec![vec![0u64; states]; bins];
            for w in lives {
                for iv in &w.intervals {
                    let (a, b) = (iv.from.max(from), iv.to.min(to));
                    if a >= b {
                        continue;
                    }
                    let s = NsightState::ALL
                        .iter()
                        .position(|&x| x == NsightState::of(iv.state))
                        .unwrap_or(0);
                    let mut c = a;
                    while c < b {
                        let k = ((c - from) / bin) as usize;
                        let end = (from + (k as u64 + 1) * bin).min(b);
                        counts[k][s] += end - c;
                        c = end;
                    }
                }
            }
            let winners: Vec<Option<usize>> = counts.iter().map(|c| dominant(c)).collect();
            let mut k = 0;
            while k < bins {
                let mut j = k + 1;
                while j < bins && winners[j] == winners[k] {
                    j += 1;
                }
                if let Some(u) = winners[k] {
                    let state = NsightState::ALL[u];
                    let a = from + k as u64 * bin;
                    let b = (from + j as u64 * bin).min(to);
                    let (x0, x1) = (plot.x(a as f64), plot.x(b as f64));
                    canvas.rect(x0, top, x1, bottom - 1, palette::state_colour(state))?;
                    regions.push(Region {
                        x: x0,
                        y: top,
                        width: (x1 - x0).max(1),
                        height: STRIP_H,
                        text: format!(
                            "SM{sm} S{sched} warp slot {slot}, cycles {a}..{b}: {}",
                            state.name()
                        ),
                    });
                }
                k = j;
            }
            rows.push(Row {
                label: format!("SM{sm} S{sched} w{slot} state"),
                top,
                bottom,
            });
        }
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.x_axis(&plot, "cycle")?;
        let mut entries = vec![
            (REFILL, "refill (coarse switch)".to_string()),
            (VERTICAL_WASTE, "no issue (vertical waste)".to_string()),
            (HORIZONTAL_WASTE, "unused slot (horizontal)".to_string()),
        ];
        for &w in seen_warps.iter().take(9) {
            entries.push((identity_colour(w), format!("warp slot {w}")));
        }
        if seen_warps.len() > 9 {
            entries.push((
                palette::BACKGROUND,
                "(warp colours repeat every 9 slots)".to_string(),
            ));
        }
        for &u in &strip_states {
            let state = NsightState::ALL[u];
            entries.push((
                palette::state_colour(state),
                format!("warp state: {}", state.name()),
            ));
        }
        canvas.legend((plot.right + 20, TOP + 4), &entries)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Slots,
        svg,
        width: WIDTH,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}
