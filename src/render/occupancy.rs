//! The `occupancy` chart: active warps (filled), eligible warps and issued warp instructions
//! (lines) over time, one panel per scheduler, all panels on one y scale. Values are averages
//! per cycle over each pixel column's cycles. With more than 16 schedulers holding warps the
//! panels are per SM (sums over its schedulers), and with more than 16 such SMs there is one
//! panel for the whole GPU; `--sm` zooms back to one SM's schedulers.

use super::model::{Interval, IssueRec, Sink, WarpLife};
use super::palette::{self, ACTIVE, ELIGIBLE, ISSUED};
use super::{
    bin_cycles, step_outline, tick_label, tick_step, window, Align, Canvas, Chart, ChartKind,
    Loaded, PlotArea, Region, RenderError, RenderOptions, Row,
};
use std::collections::BTreeMap;

const WIDTH: u32 = 1100;
const LEFT: i32 = 120;
const RIGHT_MARGIN: i32 = 30;
const TOP: i32 = 70;
const PANEL: i32 = 90;
const GAP: i32 = 14;
const BOTTOM_MARGIN: i32 = 50;
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
    let plot_w = WIDTH as i32 - RIGHT_MARGIN - LEFT;
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
    let (from, to, bin, bins, acc) = collect(t, options)?;
    let bin_len =
        |k: usize| ((from + (k as u64 + 1) * bin).min(to) - (from + k as u64 * bin)) as f64;
    let avg = |v: &[u64], k: usize| v[k] as f64 / bin_len(k);
    let ymax = acc
        .values()
        .flat_map(|s| (0..bins).map(move |k| (s, k)))
        .map(|(s, k)| avg(&s.active, k).max(avg(&s.issued, k)))
        .fold(1.0f64, f64::max);
    let step = tick_step(ymax, 3);
    let ymax = (ymax / step).ceil() * step;
    let panels = acc.len() as i32;
    let height = (TOP + panels * (PANEL + GAP) + BOTTOM_MARGIN) as u32;
    let plot = PlotArea {
        left: LEFT,
        top: TOP,
        right: WIDTH as i32 - RIGHT_MARGIN,
        bottom: TOP + panels * (PANEL + GAP) - GAP,
        x_from: from as f64,
        x_to: to as f64,
    };
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, WIDTH, height)?;
        canvas.title(&format!("Occupancy and issue: {}", t.subject()), WIDTH)?;
        canvas.subtitle(
            &format!(
                "{}, cycles {from}..{to}, {}",
                t.file_name(),
                if bin == 1 {
                    "per cycle".to_string()
                } else {
                    format!("averages over {bin}-cycle columns")
                }
            ),
            WIDTH,
        )?;
        let legend = [
            (ACTIVE, "active warps"),
            (ELIGIBLE, "eligible warps"),
            (ISSUED, "warp instructions issued per cycle"),
        ];
        let mut x = LEFT;
        for (c, name) in legend {
            canvas.rect(x, 50, x + 14, 60, c)?;
            canvas.text(
                name,
                (x + 18, 55),
                12,
                palette::INK,
                Align::Left,
                "sans-serif",
            )?;
            x += 30 + 7 * name.len() as i32;
        }
        for (p, (k, s)) in acc.iter().enumerate() {
            let top = TOP + p as i32 * (PANEL + GAP);
            let bottom = top + PANEL;
            let y = |v: f64| bottom - ((v / ymax) * PANEL as f64).round() as i32;
            canvas.frame(plot.left, top, plot.right, bottom, palette::GRID)?;
            canvas.text(
                &k.label(),
                (plot.left - 46, (top + bottom) / 2),
                12,
                palette::INK,
                Align::Right,
                "sans-serif",
            )?;
            let mut v = 0.0;
            while v <= ymax + 1e-9 {
                canvas.text(
                    &tick_label(v),
                    (plot.left - 6, y(v)),
                    10,
                    palette::INK,
                    Align::Right,
                    "sans-serif",
                )?;
                v += step;
            }
            let x_of = |k: usize| plot.x((from + k as u64 * bin).min(to) as f64);
            // The active-warp area as one polygon under its step outline.
            let mut outline = step_outline(bins, &x_of, |kk| y(avg(&s.active, kk)));
            outline.insert(0, (x_of(0), bottom));
            outline.push((x_of(bins), bottom));
            canvas.polygon(outline, ACTIVE)?;
            for (series, c) in [(&s.eligible, ELIGIBLE), (&s.issued, ISSUED)] {
                canvas.line(step_outline(bins, &x_of, |kk| y(avg(series, kk))), c, 2)?;
            }
            for kk in 0..bins {
                let (x0, x1) = (x_of(kk), x_of(kk + 1));
                let a = from + kk as u64 * bin;
                regions.push(Region {
                    x: x0,
                    y: top,
                    width: (x1 - x0).max(1),
                    height: PANEL,
                    text: format!(
                        "{} cycles {a}..{}: {:.2} active, {:.2} eligible warps, {:.2} issued per cycle",
                        k.label(),
                        (a + bin).min(to),
                        avg(&s.active, kk),
                        avg(&s.eligible, kk),
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
        width: WIDTH,
        height,
        plot,
        rows,
        regions,
        bin_cycles: bin,
    })
}
