//! The `timeline` chart: one row per warp slot, grouped by SM and scheduler, x = cycle, each
//! cycle coloured by the Nsight state of the warp resident in the slot (white: no warp).
//!
//! Unbinned (the window fits in the plot's pixel columns) every state interval is drawn as it
//! is, with its PC and instruction in the tooltip. Binned, each pixel column shows one of the
//! states of its cycles, "no warp" included, chosen so that along a row each state gets
//! columns in proportion to its cycles (see the module doc of `render`), and its tooltip gives
//! the shares; where a warp's states alternate faster than the columns, the row alternates
//! too — zoom with `--from/--to` or `--sm` to see each cycle. A trace recorded without warp
//! states (`--verbosity 0`) gets a note saying so in place of the rows.

use super::model::{Interval, Sink, SlotKey, WarpLife};
use super::palette::{self, state_colour};
use super::{
    bin_cycles, bin_levels, legend_entry_width, row_winners, shares, text_width, window,
    within_size, Align, Canvas, Chart, ChartKind, Header, LabelColumn, Layout, Loaded, Note,
    PlotArea, Region, RenderError, RenderOptions, Row, LABELLED_ROW_H, STATE_NAME_CHARS,
    TEXT_LABEL,
};
use crate::analyze::NsightState;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1200;
/// Row labels as long as `SM131 S3 w63`.
const LEFT: i32 = 16 + text_width(12, TEXT_LABEL) + 8;
/// The legend of state names, beside the plot.
const RIGHT_MARGIN: i32 = 20 + legend_entry_width(STATE_NAME_CHARS) + 12;

/// Where the plot ends and the legend goes at the width `options` asks for.
fn layout(options: &RenderOptions) -> Layout {
    Layout::of(options.width_or(WIDTH), LEFT, RIGHT_MARGIN)
}

/// Index of "no warp resident" after the Nsight states in a bin's counts.
const EMPTY: usize = NsightState::ALL.len();

fn state_index(s: NsightState) -> usize {
    NsightState::ALL.iter().position(|&x| x == s).unwrap_or(0)
}

/// Rows drawn at most; beyond, only the first SMs whose warp slots fit are shown.
pub const MAX_ROWS: usize = 512;

/// A state interval clipped to the window, as a one-cycle-per-column timeline draws it.
struct Cell {
    from: u64,
    to: u64,
    state: NsightState,
    pc: Option<u32>,
    launch: u32,
    block: u32,
    warp_in_block: u32,
}

/// One candidate binning of every row: the intervals themselves at one cycle per column, else
/// per column the cycles of each Nsight state ("no warp" is what is left of the column).
enum Level {
    Cells(Vec<Vec<Cell>>),
    Counts(Vec<Vec<[u64; EMPTY]>>),
}

/// What the timeline keeps of the trace: per row and candidate binning, only what its pixel
/// columns need.
struct Acc {
    rows: HashMap<SlotKey, usize>,
    from: u64,
    to: u64,
    levels: Vec<(u64, Level)>,
    /// Per row, the states with cycles in the window (bit per `NsightState::ALL` index).
    occurring: Vec<u32>,
}

impl Sink for Acc {
    fn interval(&mut self, w: &WarpLife, iv: &Interval) {
        let Some(&row) = self.rows.get(&(w.sm, w.scheduler, w.slot)) else {
            return;
        };
        let (a, b) = (iv.from.max(self.from), iv.to.min(self.to));
        if a >= b {
            return;
        }
        let state = NsightState::of(iv.state);
        let s = state_index(state);
        self.occurring[row] |= 1 << s;
        for (bin, level) in &mut self.levels {
            match level {
                Level::Cells(cells) => cells[row].push(Cell {
                    from: a,
                    to: b,
                    state,
                    pc: iv.pc,
                    launch: w.launch,
                    block: w.block,
                    warp_in_block: w.warp_in_block,
                }),
                Level::Counts(counts) => {
                    let mut c = a;
                    while c < b {
                        let k = ((c - self.from) / *bin) as usize;
                        let end = (self.from + (k as u64 + 1) * *bin).min(b);
                        counts[row][k][s] += end - c;
                        c = end;
                    }
                }
            }
        }
    }
}

impl Acc {
    /// The numbers kept (the test of the bound reads it).
    fn retained(&self) -> usize {
        let kept: usize = self
            .levels
            .iter()
            .map(|(_, l)| match l {
                Level::Cells(rows) => rows.iter().map(Vec::len).sum::<usize>(),
                Level::Counts(rows) => rows.iter().map(|r| r.len() * EMPTY).sum(),
            })
            .sum();
        kept + self.occurring.len()
    }
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    if !t.states_recorded() {
        return not_recorded(t, options);
    }
    let (from, to, slots, sms_total, acc) = collect(t, options)?;
    let shown = Shown {
        from,
        to,
        slots: &slots,
        sms_total,
        acc: &acc,
        layout: layout(options),
    };
    within_size(|columns| render_columns(t, &shown, columns))
}

/// The chart of a trace without warp states: rows of white would look like slots that never
/// held a warp, so a framed note says why there are none, where the rows would be.
fn not_recorded(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let (from, to) = window(t, options)?;
    let Layout { width, right, .. } = layout(options);
    let header = Header::new(
        &format!("Warp states over time: {}", t.subject()),
        Some(&format!("{}, cycles {from}..{to}", t.label)),
        width,
    );
    let pad = TEXT_LABEL as i32;
    let text = ChartKind::Timeline
        .states_not_recorded()
        .unwrap_or_default();
    let note = Note::new(&text, right - LEFT - 2 * pad);
    let plot = PlotArea::under(
        &header,
        (LEFT, right),
        note.height() + 2 * pad,
        (from as f64, to as f64),
    );
    let height = (plot.bottom + pad) as u32;
    let mut svg = String::new();
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.note(
            &note,
            ((plot.left + plot.right) / 2, plot.top + pad),
            Align::Centre,
        )?;
        canvas.finish()?;
    }
    let region = Region {
        x: plot.left,
        y: plot.top,
        width: plot.right - plot.left,
        height: plot.bottom - plot.top,
        text: note.text().to_string(),
    };
    Ok(chart(svg, width, height, plot, Vec::new(), vec![region], 1))
}

/// The timeline chart of `svg`, `width` by `height` pixels, at `bin_cycles` cycles per column:
/// the one place the timeline's kind is given, for both the note and the rows.
fn chart(
    svg: String,
    width: u32,
    height: u32,
    plot: PlotArea,
    rows: Vec<Row>,
    regions: Vec<Region>,
    bin_cycles: u64,
) -> Chart {
    Chart {
        kind: ChartKind::Timeline,
        svg,
        width,
        height,
        plot,
        rows,
        regions,
        bin_cycles,
    }
}

/// How many numbers the chart keeps of the trace.
pub(crate) fn retained(t: &Loaded, options: &RenderOptions) -> Result<usize, RenderError> {
    Ok(collect(t, options)?.4.retained())
}

type Collected = (u64, u64, Vec<SlotKey>, usize, Acc);

/// The rows shown and, streamed from the trace, their data at every candidate binning.
fn collect(t: &Loaded, options: &RenderOptions) -> Result<Collected, RenderError> {
    let (from, to) = window(t, options)?;
    // Slots that held a warp during the window, keyed (sm, scheduler, slot).
    let mut slots: Vec<SlotKey> = t
        .resident(options, from)?
        .into_iter()
        .filter(|k| options.sm.map_or(true, |sm| sm == k.0))
        .collect();
    if slots.is_empty() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("no warp was resident in cycles {from}..{to}"),
        });
    }
    let sms_total = slots.iter().map(|k| k.0).collect::<BTreeSet<_>>();
    if slots.len() > MAX_ROWS {
        let mut per_sm: BTreeMap<u32, usize> = BTreeMap::new();
        for k in &slots {
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
        slots.retain(|k| k.0 <= last);
    }
    let rows: HashMap<SlotKey, usize> = slots.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let levels = bin_levels(to - from, layout(options).right - LEFT)
        .into_iter()
        .map(|bin| {
            let level = if bin == 1 {
                Level::Cells(slots.iter().map(|_| Vec::new()).collect())
            } else {
                let bins = (to - from).div_ceil(bin) as usize;
                Level::Counts(vec![vec![[0; EMPTY]; bins]; slots.len()])
            };
            (bin, level)
        })
        .collect();
    let mut acc = Acc {
        rows,
        from,
        to,
        levels,
        occurring: vec![0; slots.len()],
    };
    t.stream(&mut acc)?;
    Ok((from, to, slots, sms_total.len(), acc))
}

/// The rows chosen and their data, for every attempt at a width.
struct Shown<'a> {
    from: u64,
    to: u64,
    slots: &'a [SlotKey],
    sms_total: usize,
    acc: &'a Acc,
    layout: Layout,
}

fn render_columns(t: &Loaded, shown: &Shown, columns: i32) -> Result<Chart, RenderError> {
    let (from, to) = (shown.from, shown.to);
    let m = &t.model;
    let slots = shown.slots;
    let sms_shown = slots.iter().map(|k| k.0).collect::<BTreeSet<_>>();
    let n = slots.len() as i32;
    let row_h = if n <= 40 {
        LABELLED_ROW_H
    } else {
        (900 / n).clamp(2, LABELLED_ROW_H)
    };
    let plot_h = row_h * n;
    let Layout { width, right, .. } = shown.layout;
    let bin = bin_cycles(to - from, (right - LEFT).min(columns));
    let level = shown
        .acc
        .levels
        .iter()
        .find(|(b, _)| *b == bin)
        .map(|(_, l)| l)
        .ok_or_else(|| RenderError::Draw(format!("no binning of {bin} cycles was kept")))?;
    let header = Header::new(
        &format!("Warp states over time: {}", t.subject()),
        Some(&format!(
            "{}, cycles {from}..{to}, {}{}",
            t.label,
            if sms_shown.len() < shown.sms_total {
                format!(
                    "SMs {}..={} of {} with warps (use --sm), ",
                    sms_shown.first().copied().unwrap_or(0),
                    sms_shown.last().copied().unwrap_or(0),
                    shown.sms_total
                )
            } else {
                String::new()
            },
            if bin == 1 {
                "one column per cycle".to_string()
            } else {
                format!("{bin} cycles per column, states in proportion along each row")
            }
        )),
        width,
    );
    let plot = PlotArea::under(&header, (LEFT, right), plot_h, (from as f64, to as f64));
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
    // The legend lists the states that occur in the window (an upper bound when binned).
    let occurring = shown.acc.occurring.iter().fold(0u32, |a, &b| a | b);
    let legend_of = |present: &dyn Fn(usize) -> bool| {
        let entries: Vec<_> = NsightState::ALL
            .iter()
            .filter(|&&s| present(state_index(s)))
            .map(|&s| (state_colour(s), s.name().to_string()))
            .collect();
        [("warp state", entries)]
    };
    let legend = legend_of(&|s| occurring & 1 << s != 0);
    let height = shown.layout.height(&plot, &legend, 4);
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        let mut previous: Option<(u32, u32)> = None;
        let mut labels = LabelColumn::new();
        for (i, &(sm, sched, slot)) in slots.iter().enumerate() {
            let top = plot.top + i as i32 * row_h;
            let bottom = top + row_h;
            let label = format!("SM{sm} S{sched} w{slot}");
            if previous != Some((sm, sched)) {
                if i > 0 {
                    let new_sm = previous.map(|p| p.0) != Some(sm);
                    canvas.row_rule(&plot, top, new_sm)?;
                }
                // Rows thinner than their label: the group's label at its top, where it fits.
                let y = top + TEXT_LABEL as i32 / 2 + 1;
                if row_h < LABELLED_ROW_H && labels.fits(y, TEXT_LABEL) {
                    canvas.label(
                        &format!("SM{sm} S{sched}"),
                        (plot.left - 6, y),
                        Align::Right,
                    )?;
                }
                previous = Some((sm, sched));
            }
            if row_h >= LABELLED_ROW_H {
                canvas.label(&label, (plot.left - 6, (top + bottom) / 2), Align::Right)?;
            }
            let y0 = top + 1.min(row_h / 4);
            let y1 = bottom - 1.min(row_h / 4);
            match level {
                Level::Cells(cells) => {
                    for c in &cells[i] {
                        let (a, b) = (c.from, c.to);
                        let s = c.state;
                        present[state_index(s)] = true;
                        let (x0, x1) = (plot.x(a as f64), plot.x(b as f64));
                        canvas.rect(x0, y0, x1, y1, state_colour(s))?;
                        let mut text = format!(
                            "SM{sm} warp slot {slot} (block {} warp {}): {}, cycles {a}..{b}",
                            c.block,
                            c.warp_in_block,
                            s.name()
                        );
                        if let Some(pc) = c.pc {
                            text.push_str(&format!(", PC {pc}: {}", listing(c.launch, pc)));
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
                Level::Counts(counts) => {
                    let bins = counts[i].len();
                    let counts: Vec<[u64; EMPTY + 1]> = counts[i]
                        .iter()
                        .enumerate()
                        .map(|(k, c)| {
                            let start = from + k as u64 * bin;
                            let mut all = [0u64; EMPTY + 1];
                            all[..EMPTY].copy_from_slice(c);
                            all[EMPTY] = ((start + bin).min(to) - start)
                                .saturating_sub(c.iter().sum::<u64>());
                            all
                        })
                        .collect();
                    let winners = row_winners(&counts);
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
                                    "SM{sm} warp slot {slot}, cycles {a}..{b}: {}",
                                    shares(&counts[k..j], |s| match NsightState::ALL.get(s) {
                                        Some(state) => state.name().to_string(),
                                        None => "no warp".to_string(),
                                    })
                                ),
                            });
                        }
                        k = j;
                    }
                }
            }
            rows.push(Row { label, top, bottom });
        }
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.x_axis(&plot, "cycle", true)?;
        let legend = legend_of(&|s| present[s]);
        canvas.legend_placed(&shown.layout, &plot, &legend)?;
        canvas.finish()?;
    }
    Ok(chart(svg, width, height, plot, rows, regions, bin))
}
