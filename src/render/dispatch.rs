//! The `dispatch` chart: blocks on SMs over time, like seed 000's picture of six blocks dealt
//! onto two cores. One row per SM (split into lanes when several blocks are resident at once),
//! one bar per block from its grant to its completion, its number written in the bar (as
//! `launch.block` when the trace has several launches). Block colours cycle through the
//! identity palette; they tell neighbours apart and mean nothing else.
//!
//! A bar per block only works for a few thousand blocks: a grid of half a million made a 52.7 MB
//! SVG. So the chart keeps at most [`MAX_BARS`] block spans while it streams the trace, and
//! beside them, per SM and pixel column (for every binning `within_size` may try), the
//! block-cycles resident and the blocks started and finished there. When the window holds more
//! blocks than that, or the bars' SVG is over [`MAX_SVG_BYTES`], it draws one row per SM with a
//! band whose height is the average number of blocks resident in each column (full height: the
//! most in any column, rounded up), and hover regions per run of equal band height giving the
//! cycles, the average resident and the blocks started and finished. Which block ran when is
//! lost in that mode (the subtitle names what the band shows); memory is the capped spans plus
//! SMs × columns, whatever the number of blocks.

use super::model::{BlockSpan, Sink};
use super::palette::{self, identity_colour, text_on};
use super::{
    bin_cycles, bin_levels, step_outline, text_width, width_of, window, within_size, Align, Canvas,
    Chart, ChartKind, Header, LabelColumn, Loaded, PlotArea, Region, RenderError, RenderOptions,
    Row, AXIS_H, MAX_SVG_BYTES, TEXT_CELL, TEXT_LABEL,
};
use crate::kernel_name;

/// The most blocks the chart draws a bar each for; past it, bands per SM.
pub const MAX_BARS: usize = 4096;

/// What one SM's pixel column holds.
#[derive(Debug, Clone, Copy, Default)]
struct Column {
    /// Block-cycles in the column of the blocks that start or end inside it.
    partial: u64,
    /// Difference array of the blocks covering the whole column (+1 at the first such column,
    /// -1 after the last), so a long block costs two updates, not one per column.
    covering: i64,
    started: u64,
    finished: u64,
}

/// One binning's columns, per shown SM.
struct Level {
    bin: u64,
    rows: Vec<Vec<Column>>,
}

/// Everything the chart keeps of the trace: bounded by [`MAX_BARS`] and SMs × columns.
struct Acc {
    /// The chart's width.
    width: u32,
    from: u64,
    to: u64,
    /// The one SM shown (`--sm`), else all `num_sms`.
    sm: Option<u32>,
    num_sms: u32,
    /// Every block of the trace, in the window or not (the subtitle's count).
    total: usize,
    /// The blocks in the window on shown SMs.
    shown: usize,
    /// Their spans, while there are at most [`MAX_BARS`] of them.
    spans: Vec<BlockSpan>,
    /// The most spans held at once.
    peak: usize,
    levels: Vec<Level>,
}

impl Acc {
    fn row(&self, sm: u32) -> Option<usize> {
        match self.sm {
            Some(s) => (s == sm).then_some(0),
            None => (sm < self.num_sms).then_some(sm as usize),
        }
    }

    fn too_many(&self) -> bool {
        self.shown > MAX_BARS
    }

    /// How many numbers the chart held: the spans at their most and the columns.
    fn retained(&self) -> usize {
        5 * self.peak
            + 4 * self
                .levels
                .iter()
                .flat_map(|l| &l.rows)
                .map(Vec::len)
                .sum::<usize>()
    }
}

impl Sink for Acc {
    fn block(&mut self, b: &BlockSpan) {
        self.total += 1;
        let Some(row) = self.row(b.sm) else {
            return;
        };
        let (from, to) = (self.from, self.to);
        if b.to > from && b.from < to {
            self.shown += 1;
            if self.too_many() {
                if !self.spans.is_empty() {
                    self.spans = Vec::new();
                }
            } else {
                self.spans.push(*b);
                self.peak = self.peak.max(self.spans.len());
            }
        }
        for level in &mut self.levels {
            let bin = level.bin;
            let cols = &mut level.rows[row];
            let k = |c: u64| ((c - from) / bin) as usize;
            if (from..to).contains(&b.from) {
                cols[k(b.from)].started += 1;
            }
            if (from..to).contains(&b.to) {
                cols[k(b.to)].finished += 1;
            }
            let (a, z) = (b.from.max(from), b.to.min(to));
            if a >= z {
                continue;
            }
            let (ka, kz) = (k(a), k(z - 1));
            if ka == kz {
                cols[ka].partial += z - a;
            } else {
                cols[ka].partial += from + (ka as u64 + 1) * bin - a;
                cols[kz].partial += z - (from + kz as u64 * bin);
                cols[ka + 1].covering += 1;
                cols[kz].covering -= 1;
            }
        }
    }
}

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1000;
/// SM labels as long as `SM131`.
const LEFT: i32 = 16 + text_width(5, TEXT_LABEL) + 24;
/// Half the widest tick label at the right end of the axis.
const RIGHT_MARGIN: i32 = 8 + text_width(4, TEXT_LABEL);
/// Lanes high enough for a block number written in the bar.
const LANE_H: i32 = 24;

/// The SMs shown and, streamed from the trace, the spans or columns to draw them from.
fn collect(t: &Loaded, options: &RenderOptions) -> Result<(Vec<u32>, Acc), RenderError> {
    let (from, to) = window(t, options)?;
    let num_sms = t.model.header.config.num_sms;
    let sms: Vec<u32> = match options.sm {
        Some(sm) => vec![sm],
        None => (0..num_sms).collect(),
    };
    let width = options.width_or(WIDTH);
    let levels = bin_levels(to - from, width as i32 - RIGHT_MARGIN - LEFT)
        .into_iter()
        .map(|bin| {
            let bins = (to - from).div_ceil(bin) as usize;
            Level {
                bin,
                rows: vec![vec![Column::default(); bins]; sms.len()],
            }
        })
        .collect();
    let mut acc = Acc {
        width,
        from,
        to,
        sm: options.sm,
        num_sms,
        total: 0,
        shown: 0,
        spans: Vec::new(),
        peak: 0,
        levels,
    };
    t.stream(&mut acc)?;
    Ok((sms, acc))
}

/// How many numbers the chart keeps of the trace.
pub(crate) fn retained(t: &Loaded, options: &RenderOptions) -> Result<usize, RenderError> {
    Ok(collect(t, options)?.1.retained())
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let (sms, acc) = collect(t, options)?;
    if !acc.too_many() {
        let c = bars(t, &sms, &acc)?;
        if c.svg.len() <= MAX_SVG_BYTES {
            return Ok(c);
        }
    }
    within_size(|columns| bands(t, &sms, &acc, columns))
}

/// A bar per block.
fn bars(t: &Loaded, sms: &[u32], acc: &Acc) -> Result<Chart, RenderError> {
    let (from, to) = (acc.from, acc.to);
    let m = &t.model;
    let blocks = &acc.spans;
    let several = m.header.launches.len() > 1;
    // Lanes per SM: a block takes the first lane free at its grant.
    let mut lanes_of: Vec<Vec<Vec<usize>>> = Vec::new();
    for &sm in sms {
        let mut on_sm: Vec<usize> = (0..blocks.len())
            .filter(|&i| {
                let b = &blocks[i];
                b.sm == sm && b.to > from && b.from < to
            })
            .collect();
        on_sm.sort_by_key(|&i| (blocks[i].from, blocks[i].launch, blocks[i].block));
        let mut lanes: Vec<(u64, Vec<usize>)> = Vec::new();
        for i in on_sm {
            let b = &blocks[i];
            match lanes.iter_mut().find(|(free, _)| *free <= b.from) {
                Some((free, v)) => {
                    *free = b.to.max(b.from + 1);
                    v.push(i);
                }
                None => lanes.push((b.to.max(b.from + 1), vec![i])),
            }
        }
        if lanes.is_empty() {
            lanes.push((0, Vec::new()));
        }
        lanes_of.push(lanes.into_iter().map(|(_, v)| v).collect());
    }
    let lane_count: i32 = lanes_of.iter().map(|l| l.len() as i32).sum();
    let lane_h = if lane_count <= 24 {
        LANE_H
    } else {
        (900 / lane_count).clamp(3, LANE_H)
    };
    let plot_h = lane_h * lane_count;
    let header = Header::new(
        &format!("Blocks on SMs: {}", t.subject()),
        Some(&format!(
            "{}, cycles {from}..{to}, {}",
            t.label,
            crate::words::count(acc.total as u64, "block", "blocks")
        )),
        acc.width,
    );
    let right = acc.width as i32 - RIGHT_MARGIN;
    let plot = PlotArea::under(&header, (LEFT, right), plot_h, (from as f64, to as f64));
    let height = (plot.bottom + AXIS_H) as u32;
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, acc.width, height)?;
        canvas.header(&header)?;
        let mut top = plot.top;
        let mut labels = LabelColumn::new();
        for (&sm, lanes) in sms.iter().zip(&lanes_of) {
            if top > plot.top {
                canvas.line(
                    vec![(plot.left - 40, top), (plot.right, top)],
                    palette::GRID,
                    1,
                )?;
            }
            let group_h = lane_h * lanes.len() as i32;
            let y = top + group_h / 2;
            if labels.fits(y, TEXT_LABEL) {
                canvas.label(&format!("SM{sm}"), (plot.left - 8, y), Align::Right)?;
            }
            for (lane, in_lane) in lanes.iter().enumerate() {
                let bottom = top + lane_h;
                let pad = (lane_h / 8).min(3);
                for &i in in_lane {
                    let b = &blocks[i];
                    let (a, z) = (b.from.max(from), b.to.min(to).max(b.from.max(from) + 1));
                    let (x0, x1) = (plot.x(a as f64), plot.x(z as f64));
                    let c = identity_colour(b.block);
                    canvas.rect(x0, top + pad, x1, bottom - pad, c)?;
                    // A white edge keeps back-to-back blocks apart.
                    canvas.line(
                        vec![(x0, top + pad), (x0, bottom - pad)],
                        palette::BACKGROUND,
                        1,
                    )?;
                    let name = if several {
                        format!("{}.{}", b.launch, b.block)
                    } else {
                        b.block.to_string()
                    };
                    if x1 - x0 >= width_of(&name, TEXT_CELL) + 6
                        && lane_h - 2 * pad >= TEXT_CELL as i32 + 2
                    {
                        canvas.text(
                            &name,
                            ((x0 + x1) / 2, (top + bottom) / 2),
                            TEXT_CELL,
                            text_on(c),
                            Align::Centre,
                            "sans-serif",
                        )?;
                    }
                    let kernel = m
                        .header
                        .launches
                        .get(b.launch as usize)
                        .map_or("?".into(), |l| kernel_name::function(&l.kernel));
                    regions.push(Region {
                        x: x0,
                        y: top,
                        width: x1 - x0,
                        height: lane_h,
                        text: format!(
                            "{kernel} (launch {}) block {} on SM{sm}: cycles {}..{} ({} cycles)",
                            b.launch,
                            b.block,
                            b.from,
                            b.to,
                            b.to - b.from
                        ),
                    });
                }
                rows.push(Row {
                    label: if lane == 0 {
                        format!("SM{sm}")
                    } else {
                        format!("SM{sm} lane {lane}")
                    },
                    top,
                    bottom,
                });
                top = bottom;
            }
        }
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.x_axis(&plot, "cycle", true)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Dispatch,
        svg,
        width: acc.width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: 1,
    })
}

/// Per SM, a band of the blocks resident on average in each of at most `columns` columns.
fn bands(t: &Loaded, sms: &[u32], acc: &Acc, columns: i32) -> Result<Chart, RenderError> {
    let (from, to) = (acc.from, acc.to);
    let n = sms.len().max(1) as i32;
    let row_h = if n <= 24 {
        LANE_H
    } else {
        (900 / n).clamp(3, LANE_H)
    };
    let plot_h = row_h * n;
    let right = acc.width as i32 - RIGHT_MARGIN;
    let bin = bin_cycles(to - from, (right - LEFT).min(columns));
    let level = acc
        .levels
        .iter()
        .find(|l| l.bin == bin)
        .ok_or_else(|| RenderError::Draw(format!("no binning of {bin} cycles was kept")))?;
    let start = |k: usize| from + k as u64 * bin;
    let end = |k: usize| (start(k) + bin).min(to);
    // Block-cycles per column: the covering blocks' whole columns plus the partial ones.
    let resident: Vec<Vec<u64>> = level
        .rows
        .iter()
        .map(|cols| {
            let mut covering = 0i64;
            cols.iter()
                .enumerate()
                .map(|(k, c)| {
                    covering += c.covering;
                    covering.max(0) as u64 * (end(k) - start(k)) + c.partial
                })
                .collect()
        })
        .collect();
    let avg = |row: usize, k: usize| resident[row][k] as f64 / (end(k) - start(k)).max(1) as f64;
    let bins = (to - from).div_ceil(bin) as usize;
    let most = (0..resident.len())
        .flat_map(|r| (0..bins).map(move |k| (r, k)))
        .map(|(r, k)| avg(r, k))
        .fold(0.0f64, f64::max);
    let ymax = most.ceil().max(1.0);
    let pad = (row_h / 8).min(3);
    let band = (row_h - 2 * pad).max(1);
    // Band heights in pixels: what is drawn, and what a region stands for.
    let heights: Vec<Vec<i32>> = (0..resident.len())
        .map(|r| {
            (0..bins)
                .map(|k| (avg(r, k) / ymax * band as f64).round() as i32)
                .collect()
        })
        .collect();
    let header = Header::new(
        &format!("Blocks on SMs: {}", t.subject()),
        Some(&format!(
            "{}, cycles {from}..{to}, {} blocks: blocks resident per SM, averaged over \
             {bin}-cycle columns (full height: {ymax})",
            t.label, acc.total
        )),
        acc.width,
    );
    let plot = PlotArea::under(&header, (LEFT, right), plot_h, (from as f64, to as f64));
    let height = (plot.bottom + AXIS_H) as u32;
    let x_of = |k: usize| plot.x(start(k).min(to) as f64);

    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, acc.width, height)?;
        canvas.header(&header)?;
        let mut top = plot.top;
        let mut labels = LabelColumn::new();
        for (r, &sm) in sms.iter().enumerate() {
            let bottom = top + row_h;
            if top > plot.top {
                canvas.line(
                    vec![(plot.left - 40, top), (plot.right, top)],
                    palette::GRID,
                    1,
                )?;
            }
            let y = top + row_h / 2;
            if labels.fits(y, TEXT_LABEL) {
                canvas.label(&format!("SM{sm}"), (plot.left - 8, y), Align::Right)?;
            }
            let base = bottom - pad;
            let h = &heights[r];
            if h.iter().any(|&v| v > 0) {
                let mut outline = step_outline(bins, &x_of, |k| base - h[k]);
                outline.insert(0, (x_of(0), base));
                outline.push((x_of(bins), base));
                canvas.polygon(outline, palette::ACTIVE)?;
            }
            let cols = &level.rows[r];
            let mut k = 0;
            while k < bins {
                let mut j = k + 1;
                while j < bins && h[j] == h[k] {
                    j += 1;
                }
                let cycles: u64 = resident[r][k..j].iter().sum();
                let started: u64 = cols[k..j].iter().map(|c| c.started).sum();
                let finished: u64 = cols[k..j].iter().map(|c| c.finished).sum();
                if cycles > 0 || started > 0 || finished > 0 {
                    let (a, b) = (start(k), end(j - 1));
                    let (x0, x1) = (x_of(k), x_of(j));
                    regions.push(Region {
                        x: x0,
                        y: top,
                        width: (x1 - x0).max(1),
                        height: row_h,
                        text: format!(
                            "SM{sm} cycles {a}..{b}: {:.2} blocks resident on average, \
                             {started} started, {finished} finished",
                            cycles as f64 / (b - a).max(1) as f64
                        ),
                    });
                }
                k = j;
            }
            rows.push(Row {
                label: format!("SM{sm}"),
                top,
                bottom,
            });
            top = bottom;
        }
        canvas.frame(plot.left, plot.top, plot.right, plot.bottom, palette::GRID)?;
        canvas.x_axis(&plot, "cycle", true)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Dispatch,
        svg,
        width: acc.width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}
