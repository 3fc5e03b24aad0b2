//! The `occupancy` chart: active warps (filled), eligible warps and issued warp instructions
//! (lines) over time, one panel per scheduler. Warps are read on the left axis and instructions
//! issued per cycle (IPC) on the right one: IPC is at most the issue width, a few, while a
//! scheduler holds up to dozens of warps, so on one scale its line would lie on the floor. Each
//! axis has one scale for all panels, and their ticks are at the same heights. Values are
//! averages per cycle over each pixel column's cycles. With more than 16 schedulers holding warps the
//! panels are per SM (sums over its schedulers), and with more than 16 such SMs there is one
//! panel for the whole GPU; `--sm` zooms back to one SM's schedulers. Eligibility is a warp
//! state: a trace recorded without warp states (`--verbosity 0`) has no eligible-warps line,
//! and a note under the legend says why (active warps come from warp launches and exits, IPC
//! from issues: both are drawn).

use super::model::{Interval, IssueRec, Sink, WarpLife};
use super::palette::{self, ACTIVE, ELIGIBLE, ISSUED};
use super::{
    bin_cycles, legend_across_height, legend_entry_width, step_outline, text_width, tick_label,
    tick_step, width_of, window, Align, Canvas, Chart, ChartKind, Header, Loaded, Note, PlotArea,
    Region, RenderError, RenderOptions, Row, AXIS_H, LEGEND_BELOW_X, TEXT_HEADING, TEXT_LABEL,
};
use std::collections::BTreeMap;

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1100;
/// Panel labels as long as `SM131 S3`, then the warp axis' tick labels.
const LEFT: i32 = 16 + text_width(8, TEXT_LABEL) + TICKS_GAP + text_width(4, TEXT_LABEL) + 6;
/// The IPC axis' tick labels.
const RIGHT_MARGIN: i32 = 6 + text_width(5, TEXT_LABEL) + 10;
const PANEL: i32 = 90;
/// Between panels: room for the tick labels at the bottom of one and the top of the next.
const GAP: i32 = TEXT_LABEL as i32 + 7;
/// Between a panel's label and its warp tick labels.
const TICKS_GAP: i32 = 12;
const MAX_PANELS: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Scheduler(u32, u32),
    Sm(u32),
    Gpu,
}

impl Key {
    fn label(self) -> String {
        match self {
            Key::Scheduler(sm, s) => format!("SM{sm} S{s}"),
            Key::Sm(sm) => format!("SM{sm}"),
            Key::Gpu => "GPU".to_string(),
        }
    }
}

/// What a panel sums over.
#[derive(Clone, Copy)]
enum Panels {
    Schedulers,
    Sms,
    Gpu,
}

/// Per panel, the per-column sums: all the chart keeps of the trace.
struct Acc {
    sm: Option<u32>,
    panels: Panels,
    from: u64,
    to: u64,
    bin: u64,
    bins: usize,
    series: BTreeMap<Key, Series>,
}

impl Acc {
    fn entry(&mut self, sm: u32, s: u32) -> &mut Series {
        let key = match self.panels {
            Panels::Schedulers => Key::Scheduler(sm, s),
            Panels::Sms => Key::Sm(sm),
            Panels::Gpu => Key::Gpu,
        };
        let bins = self.bins;
        self.series.entry(key).or_insert_with(|| Series {
            active: vec![0; bins],
            eligible: vec![0; bins],
            issued: vec![0; bins],
        })
    }

    fn wanted(&self, sm: u32) -> bool {
        self.sm.map_or(true, |s| s == sm)
    }
}

impl Sink for Acc {
    fn life(&mut self, w: &WarpLife) {
        if self.wanted(w.sm) {
            let (from, to, bin) = (self.from, self.to, self.bin);
            let s = self.entry(w.sm, w.scheduler);
            spread(&mut s.active, from, bin, w.from.max(from), w.to.min(to));
        }
    }

    fn interval(&mut self, w: &WarpLife, iv: &Interval) {
        if self.wanted(w.sm) && iv.state.is_eligible() {
            let (from, to, bin) = (self.from, self.to, self.bin);
            let s = self.entry(w.sm, w.scheduler);
            spread(&mut s.eligible, from, bin, iv.from.max(from), iv.to.min(to));
        }
    }

    fn issue(&mut self, i: &IssueRec) {
        if self.wanted(i.sm) && i.cycle >= self.from && i.cycle < self.to {
            let k = ((i.cycle - self.from) / self.bin) as usize;
            self.entry(i.sm, i.scheduler).issued[k] += 1;
        }
    }
}

struct Series {
    active: Vec<u64>,
    eligible: Vec<u64>,
    issued: Vec<u64>,
}

/// Adds `[a, b)` to per-bin cycle sums.
fn spread(sums: &mut [u64], from: u64, bin: u64, a: u64, b: u64) {
    let mut a = a;
    while a < b {
        let k = ((a - from) / bin) as usize;
        let end = (from + (k as u64 + 1) * bin).min(b);
        sums[k] += end - a;
        a = end;
    }
}

/// How many numbers the chart keeps of the trace.
pub(crate) fn retained(t: &Loaded, options: &RenderOptions) -> Result<usize, RenderError> {
    let (_, _, _, _, acc) = collect(t, options)?;
    Ok(acc.values().map(|s| 3 * s.active.len()).sum())
}

type Collected = (u64, u64, u64, usize, BTreeMap<Key, Series>);

/// The panels and, streamed from the trace, their per-column sums.
fn collect(t: &Loaded, options: &RenderOptions) -> Result<Collected, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
    let wanted = |sm: u32| options.sm.map_or(true, |s| s == sm);
    let mut schedulers: Vec<(u32, u32)> = t
        .resident(options, from)?
        .into_iter()
        .filter(|k| wanted(k.0))
        .map(|k| (k.0, k.1))
        .collect();
    schedulers.sort();
    schedulers.dedup();
    if schedulers.is_empty() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("no warp was resident in cycles {from}..{to}"),
        });
    }
    let mut sms: Vec<u32> = schedulers.iter().map(|s| s.0).collect();
    sms.dedup();
    let panels = if schedulers.len() <= MAX_PANELS {
        Panels::Schedulers
    } else if sms.len() <= MAX_PANELS {
        Panels::Sms
    } else {
        Panels::Gpu
    };
    let plot_w = options.width_or(WIDTH) as i32 - RIGHT_MARGIN - LEFT;
    let bin = bin_cycles(to - from, plot_w);
    let bins = (to - from).div_ceil(bin) as usize;
    let mut acc = Acc {
        sm: options.sm,
        panels,
        from,
        to,
        bin,
        bins,
        series: BTreeMap::new(),
    };
    // Every scheduler that ever held a warp has its panel, even if idle in the window.
    for &(sm, s, _) in m.slots.keys() {
        if wanted(sm) {
            acc.entry(sm, s);
        }
    }
    t.stream(&mut acc)?;
    Ok((from, to, bin, bins, acc.series))
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let width = options.width_or(WIDTH);
    let (from, to, bin, bins, acc) = collect(t, options)?;
    let bin_len =
        |k: usize| ((from + (k as u64 + 1) * bin).min(to) - (from + k as u64 * bin)) as f64;
    let avg = |v: &[u64], k: usize| v[k] as f64 / bin_len(k);
    let most = |of: &dyn Fn(&Series) -> &[u64]| {
        acc.values()
            .flat_map(|s| (0..bins).map(move |k| (s, k)))
            .map(|(s, k)| avg(of(s), k))
            .fold(0.0f64, f64::max)
    };
    // Eligible warps are active ones: the active warps set the warp scale.
    let warps = Scale::new(most(&|s| &s.active).max(1.0), None);
    let ipc = Scale::new(most(&|s| &s.issued), Some(warps.intervals));
    let recorded = t.states_recorded();
    // The legend runs along the top from the plot's left edge (and may run on over the IPC
    // axis's column); on a chart too narrow for its longest entry, from the chart's left edge,
    // and narrower still, the IPC entry in short.
    let legend_right = width as i32 - 16;
    let ipc_long = "warp instructions issued per cycle (IPC, right axis)";
    let ipc_fits = |x: i32| legend_entry_width(ipc_long.chars().count()) <= legend_right - x;
    let legend_x = if ipc_fits(LEFT) { LEFT } else { LEGEND_BELOW_X };
    let ipc_name = match ipc_fits(legend_x) {
        true => ipc_long,
        false => "issued per cycle (IPC, right axis)",
    };
    let legend: Vec<_> = [
        (ACTIVE, "active warps (left axis)".to_string()),
        (ELIGIBLE, "eligible warps (left axis)".to_string()),
        (ISSUED, ipc_name.to_string()),
    ]
    .into_iter()
    .filter(|&(c, _)| recorded || c != ELIGIBLE)
    .collect();
    let header = Header::new(
        &format!("Occupancy and issue: {}", t.subject()),
        Some(&format!(
            "{}, cycles {from}..{to}, {}",
            t.label,
            if bin == 1 {
                "per cycle".to_string()
            } else {
                format!("averages over {bin}-cycle columns")
            }
        )),
        width,
    );
    let legend_top = header.height();
    let legend_h = legend_across_height(legend_x, legend_right, &legend);
    let note = (!recorded).then(|| {
        let text = ChartKind::Occupancy
            .states_not_recorded()
            .unwrap_or_default();
        Note::new(&text, legend_right - legend_x)
    });
    let note_h = note.as_ref().map_or(0, |n| n.height() + 4);
    let axis_names_y = legend_top + legend_h + note_h + 6 + TEXT_HEADING as i32 / 2;
    let top_of_panels = axis_names_y + TEXT_HEADING as i32 / 2 + TEXT_LABEL as i32 / 2 + 6;
    let panels = acc.len() as i32;
    let height = (top_of_panels + panels * (PANEL + GAP) - GAP + AXIS_H) as u32;
    let plot = PlotArea {
        left: LEFT,
        top: top_of_panels,
        right: width as i32 - RIGHT_MARGIN,
        bottom: top_of_panels + panels * (PANEL + GAP) - GAP,
        x_from: from as f64,
        x_to: to as f64,
    };
    let warp_ticks_w = warps
        .ticks()
        .map(|v| width_of(&tick_label(v), TEXT_LABEL))
        .max()
        .unwrap_or(0);
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        canvas.legend_across((legend_x, legend_top), legend_right, &legend)?;
        if let Some(note) = &note {
            canvas.note(note, (legend_x, legend_top + legend_h + 2), Align::Left)?;
        }
        canvas.heading("warps", (plot.left - 6, axis_names_y), Align::Right)?;
        canvas.heading("IPC", (plot.right + 6, axis_names_y), Align::Left)?;
        for (p, (k, s)) in acc.iter().enumerate() {
            let top = plot.top + p as i32 * (PANEL + GAP);
            let bottom = top + PANEL;
            let y =
                |scale: &Scale, v: f64| bottom - ((v / scale.top) * PANEL as f64).round() as i32;
            canvas.frame(plot.left, top, plot.right, bottom, palette::GRID)?;
            canvas.label(
                &k.label(),
                (plot.left - 6 - warp_ticks_w - TICKS_GAP, (top + bottom) / 2),
                Align::Right,
            )?;
            for (v, w) in warps.ticks().zip(ipc.ticks()) {
                canvas.label(&tick_label(v), (plot.left - 6, y(&warps, v)), Align::Right)?;
                canvas.label(&tick_label(w), (plot.right + 6, y(&ipc, w)), Align::Left)?;
            }
            let x_of = |k: usize| plot.x((from + k as u64 * bin).min(to) as f64);
            // The active-warp area as one polygon under its step outline.
            let mut outline = step_outline(bins, &x_of, |kk| y(&warps, avg(&s.active, kk)));
            outline.insert(0, (x_of(0), bottom));
            outline.push((x_of(bins), bottom));
            canvas.polygon(outline, ACTIVE)?;
            let eligible = step_outline(bins, &x_of, |kk| y(&warps, avg(&s.eligible, kk)));
            let issued = step_outline(bins, &x_of, |kk| y(&ipc, avg(&s.issued, kk)));
            if recorded {
                // The two lines often run on each other (a scheduler with one eligible warp
                // at issue width 1 issues exactly when it has one, and the axes put one warp
                // on one instruction per cycle): the eligible line is drawn wider, under
                // IPC's, so that it shows as a green edge on each side of the red wherever
                // they meet — widest where they are one throughout. (Drawn as wide as IPC's
                // where they merely ran close, it vanished under the red.)
                let width = if eligible == issued { 5 } else { 3 };
                canvas.line(eligible, ELIGIBLE, width)?;
            }
            canvas.line(issued, ISSUED, 2)?;
            for kk in 0..bins {
                let (x0, x1) = (x_of(kk), x_of(kk + 1));
                let a = from + kk as u64 * bin;
                let eligible = match recorded {
                    true => format!("{:.2} eligible", avg(&s.eligible, kk)),
                    false => "eligible not recorded".to_string(),
                };
                regions.push(Region {
                    x: x0,
                    y: top,
                    width: (x1 - x0).max(1),
                    height: PANEL,
                    text: format!(
                        "{} cycles {a}..{}: {:.2} active, {eligible} warps, {:.2} issued per cycle",
                        k.label(),
                        (a + bin).min(to),
                        avg(&s.active, kk),
                        avg(&s.issued, kk)
                    ),
                });
            }
            rows.push(Row {
                label: k.label(),
                top,
                bottom,
            });
        }
        canvas.x_axis(&plot, "cycle", true)?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Occupancy,
        svg,
        width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}

/// A y axis: from 0 to `top` in `intervals` steps of `step`.
struct Scale {
    step: f64,
    intervals: u32,
    top: f64,
}

impl Scale {
    /// The scale for values up to `most`: about three round steps, or exactly `intervals` (the
    /// other axis' count, so that the two axes' ticks are at the same heights).
    fn new(most: f64, intervals: Option<u32>) -> Scale {
        // No issue at all still gets an axis, 0 to 1.
        let most = if most > 0.0 { most } else { 1.0 };
        let step = tick_step(most, intervals.unwrap_or(3));
        let intervals = intervals.unwrap_or(((most / step).ceil() as u32).max(1));
        Scale {
            step,
            intervals,
            top: step * intervals as f64,
        }
    }

    fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        (0..=self.intervals).map(|i| i as f64 * self.step)
    }
}
