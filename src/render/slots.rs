//! The `slots` chart: seed 004's issue-slot grid for a GPU trace. One row per issue slot
//! (scheduler × issue width), one column per cycle; a cell is coloured by the warp slot whose
//! instruction it issued, dark brown for a `coarse` refill, pale blue-grey for a cycle in which
//! the scheduler issued nothing (vertical waste) and near white for an unused slot of a cycle
//! that issued something (horizontal waste). These colours and the warps' are chosen apart from
//! every state colour the strips below may draw (`palette::APART`), so no two meanings in the
//! chart look alike. Binned, a column shows one of the uses of its cycles,
//! each use getting columns in proportion to its cycles along the row (see `render`).
//! Warp colours repeat every nine warp slots; the tooltip names the warp.
//!
//! Under the grid, thread-state strips (seed 004's run/miss/dep/wait rows, for warps): one thin
//! strip per warp slot of the schedulers shown, coloured by its Nsight state (binned like the
//! grid), so a waste column lines up with why every warp could not issue. With
//! more than [`MAX_STRIPS`] warp slots the strips are left out (the timeline shows them). A
//! trace recorded without warp states (`--verbosity 0`) has a note in their place saying so;
//! the grid itself is drawn from issues and refills, which every trace has.

use super::model::{Interval, IssueRec, RefillRec, Sink, SlotKey, WarpLife};
use super::palette::{self, identity_colour, text_on, HORIZONTAL_WASTE, REFILL, VERTICAL_WASTE};
use super::{
    bin_cycles, bin_levels, row_winners, shares, text_width, width_of, window, within_size, Align,
    Canvas, Chart, ChartKind, Header, LabelColumn, Layout, Loaded, Note, PlotArea, Region,
    RenderError, RenderOptions, Row, LABELLED_ROW_H, TEXT_CELL, TEXT_LABEL,
};
use crate::analyze::NsightState;
use std::collections::{BTreeSet, HashMap};

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1200;
/// Row labels as long as `SM131 S3 slot 1`.
const LEFT: i32 = 16 + text_width(15, TEXT_LABEL) + 8;
/// Where the plot ends at the width `options` asks for: the legend goes under the x axis at
/// every width, as its up to two dozen entries beside a grid of a few rows would set the
/// chart's height and leave most of the plot's side blank.
fn layout(options: &RenderOptions) -> Layout {
    Layout::below(options.width_or(WIDTH))
}

/// Warp-slot strips drawn at most under the grid.
pub const MAX_STRIPS: usize = 64;
const STRIP_H: i32 = 6;
const STRIP_GAP: i32 = 14;
/// A note's distance from the plot's frame.
const NOTE_INSET: i32 = 6;

const STATES: usize = NsightState::ALL.len();

/// One candidate binning (cycles per column `bin`) of every row.
struct Level {
    bin: u64,
    /// Per scheduler and column: cycles in which it issued, and refill events.
    issue_cycles: Vec<Vec<u64>>,
    refills: Vec<Vec<u64>>,
    /// Per issue-slot row and column: the (warp slot, clamped, issues) that filled the slot.
    hits: Vec<Vec<Vec<(usize, u64)>>>,
    /// At one cycle per column: per row and column the (PC, launch) issued, for its tooltip.
    single: Vec<Vec<Option<(u32, u32)>>>,
    /// Per strip and column: cycles per Nsight state.
    strips: Vec<Vec<[u64; STATES]>>,
}

/// What the slots chart keeps of the trace: per row, column and candidate binning only what
/// the columns' uses need.
struct Acc {
    sm: Option<u32>,
    from: u64,
    to: u64,
    width: u32,
    warps: usize,
    schedulers: HashMap<(u32, u32), usize>,
    strips: HashMap<SlotKey, usize>,
    levels: Vec<Level>,
    /// Per scheduler, the cycle of its last issue; per row, the cycle its slot was last filled.
    current: Vec<Option<u64>>,
    filled: Vec<Option<u64>>,
}

impl Acc {
    fn wanted(&self, sm: u32) -> bool {
        self.sm.map_or(true, |s| s == sm)
    }
}

impl Sink for Acc {
    fn issue(&mut self, r: &IssueRec) {
        if r.cycle < self.from || r.cycle >= self.to || !self.wanted(r.sm) {
            return;
        }
        let Some(&s) = self.schedulers.get(&(r.sm, r.scheduler)) else {
            return;
        };
        let from = self.from;
        if self.current[s] != Some(r.cycle) {
            self.current[s] = Some(r.cycle);
            for l in &mut self.levels {
                l.issue_cycles[s][((r.cycle - from) / l.bin) as usize] += 1;
            }
        }
        // Only the first instruction a cycle put in a slot fills it.
        if r.issue_slot >= self.width {
            return;
        }
        let row = s * self.width as usize + r.issue_slot as usize;
        if self.filled[row] == Some(r.cycle) {
            return;
        }
        self.filled[row] = Some(r.cycle);
        let w = (r.warp_slot as usize).min(self.warps - 1);
        for l in &mut self.levels {
            let k = ((r.cycle - from) / l.bin) as usize;
            let cell = &mut l.hits[row][k];
            match cell.iter_mut().find(|(x, _)| *x == w) {
                Some((_, n)) => *n += 1,
                None => cell.push((w, 1)),
            }
            if l.bin == 1 {
                l.single[row][k] = Some((r.pc, r.launch));
            }
        }
    }

    fn refill(&mut self, r: &RefillRec) {
        if r.cycle < self.from || r.cycle >= self.to || !self.wanted(r.sm) {
            return;
        }
        if let Some(&s) = self.schedulers.get(&(r.sm, r.scheduler)) {
            for l in &mut self.levels {
                l.refills[s][((r.cycle - self.from) / l.bin) as usize] += 1;
            }
        }
    }

    fn interval(&mut self, w: &WarpLife, iv: &Interval) {
        let Some(&strip) = self.strips.get(&(w.sm, w.scheduler, w.slot)) else {
            return;
        };
        let (a, b) = (iv.from.max(self.from), iv.to.min(self.to));
        if a >= b {
            return;
        }
        let s = NsightState::ALL
            .iter()
            .position(|&x| x == NsightState::of(iv.state))
            .unwrap_or(0);
        for l in &mut self.levels {
            let mut c = a;
            while c < b {
                let k = ((c - self.from) / l.bin) as usize;
                let end = (self.from + (k as u64 + 1) * l.bin).min(b);
                l.strips[strip][k][s] += end - c;
                c = end;
            }
        }
    }
}

impl Acc {
    /// The numbers kept (the test of the bound reads it).
    fn retained(&self) -> usize {
        let per_row = |v: &Vec<Vec<u64>>| v.iter().map(Vec::len).sum::<usize>();
        self.levels
            .iter()
            .map(|l| {
                per_row(&l.issue_cycles)
                    + per_row(&l.refills)
                    + l.hits
                        .iter()
                        .flatten()
                        .map(|h| 1 + 2 * h.len())
                        .sum::<usize>()
                    + l.single.iter().map(Vec::len).sum::<usize>()
                    + l.strips.iter().map(|s| s.len() * STATES).sum::<usize>()
            })
            .sum()
    }
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let (from, to, schedulers, strips, acc) = collect(t, options)?;
    let layout = layout(options);
    within_size(|columns| {
        render_columns(t, (from, to), &schedulers, &strips, &acc, layout, columns)
    })
}

/// How many numbers the chart keeps of the trace.
pub(crate) fn retained(t: &Loaded, options: &RenderOptions) -> Result<usize, RenderError> {
    Ok(collect(t, options)?.4.retained())
}

type Collected = (u64, u64, Vec<(u32, u32)>, Vec<SlotKey>, Acc);

/// The rows shown and, streamed from the trace, their data at every candidate binning.
fn collect(t: &Loaded, options: &RenderOptions) -> Result<Collected, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
    let width = m.header.config.sm.issue_width.max(1);
    let warps = m.header.config.sm.max_warps.max(1) as usize;
    let wanted = |sm: u32| options.sm.map_or(true, |s| s == sm);
    let resident: Vec<SlotKey> = t
        .resident(options, from)?
        .into_iter()
        .filter(|k| wanted(k.0))
        .collect();
    let mut schedulers: Vec<(u32, u32)> = resident.iter().map(|k| (k.0, k.1)).collect();
    schedulers.sort();
    schedulers.dedup();
    if schedulers.is_empty() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("no warp was resident in cycles {from}..{to}"),
        });
    }
    // Thread-state strips: the warp slots of the schedulers shown, in (sm, scheduler, slot) order.
    let mut strips = resident;
    if strips.len() > MAX_STRIPS || !t.states_recorded() {
        strips.clear();
    }
    let rows = schedulers.len() * width as usize;
    let levels = bin_levels(to - from, layout(options).right - LEFT)
        .into_iter()
        .map(|bin| {
            let bins = (to - from).div_ceil(bin) as usize;
            Level {
                bin,
                issue_cycles: vec![vec![0; bins]; schedulers.len()],
                refills: vec![vec![0; bins]; schedulers.len()],
                hits: vec![vec![Vec::new(); bins]; rows],
                single: if bin == 1 {
                    vec![vec![None; bins]; rows]
                } else {
                    Vec::new()
                },
                strips: vec![vec![[0; STATES]; bins]; strips.len()],
            }
        })
        .collect();
    let mut acc = Acc {
        sm: options.sm,
        from,
        to,
        width,
        warps,
        schedulers: schedulers
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, i))
            .collect(),
        strips: strips.iter().enumerate().map(|(i, &k)| (k, i)).collect(),
        levels,
        current: vec![None; schedulers.len()],
        filled: vec![None; rows],
    };
    t.stream(&mut acc)?;
    Ok((from, to, schedulers, strips, acc))
}

fn render_columns(
    t: &Loaded,
    (from, to): (u64, u64),
    schedulers: &[(u32, u32)],
    strips: &[SlotKey],
    acc: &Acc,
    layout: Layout,
    columns: i32,
) -> Result<Chart, RenderError> {
    let m = &t.model;
    let width = acc.width;
    let warps = acc.warps;
    let (refill, vertical, horizontal) = (warps, warps + 1, warps + 2);
    let n = schedulers.len() as i32 * width as i32;
    let row_h = if n <= 40 {
        LABELLED_ROW_H
    } else {
        (900 / n).clamp(2, LABELLED_ROW_H)
    };
    let grid_h = row_h * n;
    let Layout {
        width: chart_width,
        right,
        ..
    } = layout;
    // In place of the strips of a trace without warp states, a note says why.
    let note = (!t.states_recorded()).then(|| {
        let text = ChartKind::Slots.states_not_recorded().unwrap_or_default();
        Note::new(&text, right - LEFT - 2 * NOTE_INSET)
    });
    let strips_h = match &note {
        Some(note) => STRIP_GAP + note.height() + NOTE_INSET,
        None if strips.is_empty() => 0,
        None => STRIP_GAP + STRIP_H * strips.len() as i32,
    };
    let plot_h = grid_h + strips_h;
    let bin = bin_cycles(to - from, (right - LEFT).min(columns));
    let bins = (to - from).div_ceil(bin) as usize;
    let level = acc
        .levels
        .iter()
        .find(|l| l.bin == bin)
        .ok_or_else(|| RenderError::Draw(format!("no binning of {bin} cycles was kept")))?;
    // Counts per bin of issue-slot row `r` of scheduler `si`: warp slots, then refill,
    // vertical and horizontal waste.
    let slot_counts = |r: usize, si: usize| -> Vec<Vec<u64>> {
        (0..bins)
            .map(|k| {
                let a = from + k as u64 * bin;
                let issued = level.issue_cycles[si][k];
                let mut c = vec![0u64; warps + 3];
                for &(w, n) in &level.hits[r][k] {
                    c[w] += n;
                    c[horizontal] += n;
                }
                // Cycles that issued but not into this slot.
                c[horizontal] = issued - c[horizontal];
                let idle = (a + bin).min(to) - a - issued;
                c[refill] = level.refills[si][k].min(idle);
                c[vertical] = idle - c[refill];
                c
            })
            .collect()
    };
    // The legend names what the columns drawn show, and nothing else: a first pass over the
    // rows finds each column's use (and each strip column's state) as the drawing will.
    let mut uses = BTreeSet::new();
    for si in 0..schedulers.len() {
        for slot in 0..width as usize {
            uses.extend(
                row_winners(&slot_counts(si * width as usize + slot, si))
                    .into_iter()
                    .flatten(),
            );
        }
    }
    let mut states = BTreeSet::new();
    for counts in &level.strips {
        states.extend(row_winners(counts).into_iter().flatten());
    }
    let legend = legend(&uses, warps, &states);
    let header = Header::new(
        &format!("Issue slots: {}", t.subject()),
        Some(&format!(
            "{}, cycles {from}..{to}, issue width {width}, {}",
            t.label,
            if bin == 1 {
                "one column per cycle".to_string()
            } else {
                format!("{bin} cycles per column, uses in proportion along each row")
            }
        )),
        chart_width,
    );
    let plot = PlotArea::under(&header, (LEFT, right), plot_h, (from as f64, to as f64));
    let height = layout.height(&plot, &legend, 10);
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
    {
        let canvas = Canvas::new(&mut svg, chart_width, height)?;
        canvas.header(&header)?;
        let mut row = 0;
        let mut labels = LabelColumn::new();
        for (si, &(sm, sched)) in schedulers.iter().enumerate() {
            if si > 0 {
                let top = plot.top + row * row_h;
                let new_sm = schedulers[si - 1].0 != sm;
                canvas.row_rule(&plot, top, new_sm)?;
            }
            for slot in 0..width {
                let top = plot.top + row * row_h;
                let bottom = top + row_h;
                let label = format!("SM{sm} S{sched} slot {slot}");
                // Rows thinner than their label: the scheduler's label at its first row, where
                // it fits.
                let thin = row_h < LABELLED_ROW_H;
                let y = if thin {
                    top + TEXT_LABEL as i32 / 2 + 1
                } else {
                    (top + bottom) / 2
                };
                if (!thin || slot == 0) && labels.fits(y, TEXT_LABEL) {
                    let text = if width == 1 || thin {
                        format!("SM{sm} S{sched}")
                    } else {
                        label.clone()
                    };
                    canvas.label(&text, (plot.left - 6, y), Align::Right)?;
                }
                let r = row as usize;
                let counts = slot_counts(r, si);
                let winners = row_winners(&counts);
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
                    let (colour, mut what) = if u == refill {
                        (REFILL, "refill (coarse switch)".to_string())
                    } else if u == vertical {
                        (VERTICAL_WASTE, "no issue (vertical waste)".to_string())
                    } else if u == horizontal {
                        (
                            HORIZONTAL_WASTE,
                            "unused slot (horizontal waste)".to_string(),
                        )
                    } else {
                        let what = match level.single.get(r).and_then(|v| v[k]) {
                            Some((pc, launch)) => {
                                format!("warp slot {u} issued PC {pc}: {}", listing(launch, pc))
                            }
                            None => format!("warp slot {u}"),
                        };
                        (identity_colour(u as u32), what)
                    };
                    if bin > 1 {
                        what = shares(&counts[k..j], |i| match i {
                            i if i == refill => "refill".to_string(),
                            i if i == vertical => "no issue".to_string(),
                            i if i == horizontal => "unused".to_string(),
                            i => format!("warp slot {i}"),
                        });
                    }
                    canvas.rect(x0, top + 1, x1, bottom - 1, colour)?;
                    let number = u.to_string();
                    if u < warps
                        && x1 - x0 >= width_of(&number, TEXT_CELL) + 4
                        && row_h >= TEXT_CELL as i32 + 2
                    {
                        canvas.text(
                            &number,
                            ((x0 + x1) / 2, (top + bottom) / 2),
                            TEXT_CELL,
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
        let strips_top = plot.top + grid_h + STRIP_GAP;
        if let Some(note) = &note {
            let x = plot.left + NOTE_INSET;
            canvas.note(note, (x, strips_top), Align::Left)?;
            regions.push(Region {
                x: plot.left,
                y: strips_top,
                width: plot.right - plot.left,
                height: note.height(),
                text: note.text().to_string(),
            });
        }
        // The strips of one scheduler are labelled together (`SM0 S1 warps`), at their middle,
        // and SMs' strips ruled apart as the grid's rows are, where every scheduler's strips
        // are as tall as a label; else the strips are labelled `warp states` as a whole.
        let mut groups: Vec<(u32, u32, usize, usize)> = Vec::new();
        for (i, &(sm, sched, _)) in strips.iter().enumerate() {
            match groups.last_mut() {
                Some(g) if (g.0, g.1) == (sm, sched) => g.3 = i + 1,
                _ => groups.push((sm, sched, i, i + 1)),
            }
        }
        let per_group = groups
            .iter()
            .all(|g| (g.3 - g.2) as i32 * STRIP_H >= TEXT_LABEL as i32 + 2);
        if per_group {
            for (k, &(sm, sched, a, b)) in groups.iter().enumerate() {
                let top = strips_top + a as i32 * STRIP_H;
                if k > 0 && groups[k - 1].0 != sm {
                    canvas.row_rule(&plot, top, true)?;
                }
                let y = top + STRIP_H * (b - a) as i32 / 2;
                if labels.fits(y, TEXT_LABEL) {
                    let text = format!("SM{sm} S{sched} warps");
                    canvas.label(&text, (plot.left - 6, y), Align::Right)?;
                }
            }
        } else if !strips.is_empty() {
            let y = strips_top + STRIP_H * strips.len() as i32 / 2;
            if labels.fits(y, TEXT_LABEL) {
                canvas.label("warp states", (plot.left - 6, y), Align::Right)?;
            }
        }
        for (i, &(sm, sched, slot)) in strips.iter().enumerate() {
            let top = strips_top + i as i32 * STRIP_H;
            let bottom = top + STRIP_H;
            let counts = &level.strips[i];
            let winners = row_winners(counts);
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
                            shares(&counts[k..j], |s| NsightState::ALL[s].name().to_string())
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
        canvas.x_axis(&plot, "cycle", true)?;
        canvas.legend_placed(&layout, &plot, &legend)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Slots,
        svg,
        width: chart_width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}

/// The legend: the slot uses the columns drawn show (`uses`: warp slots below `warps`, then
/// refill, vertical and horizontal waste; of the warps the first nine, as their colours
/// repeat), then the states the strips show, one strip per warp slot.
fn legend<'a>(
    uses: &BTreeSet<usize>,
    warps: usize,
    strip_states: &BTreeSet<usize>,
) -> [(&'a str, Vec<(palette::Rgb, String)>); 2] {
    let (refill, vertical, horizontal) = (warps, warps + 1, warps + 2);
    let mut entries = Vec::new();
    for (u, colour, name) in [
        (refill, REFILL, "refill (coarse switch)"),
        (vertical, VERTICAL_WASTE, "no issue (vertical waste)"),
        (horizontal, HORIZONTAL_WASTE, "unused slot (horizontal)"),
    ] {
        if uses.contains(&u) {
            entries.push((colour, name.to_string()));
        }
    }
    let seen_warps: Vec<usize> = uses.iter().copied().filter(|&u| u < warps).collect();
    for &w in seen_warps.iter().take(9) {
        entries.push((identity_colour(w as u32), format!("warp slot {w}")));
    }
    if seen_warps.len() > 9 {
        entries.push((palette::BACKGROUND, "(colours repeat every 9)".to_string()));
    }
    let states = strip_states
        .iter()
        .map(|&u| {
            let state = NsightState::ALL[u];
            (palette::state_colour(state), state.name().to_string())
        })
        .collect();
    [
        ("issue slot", entries),
        ("warp state of each warp slot", states),
    ]
}
