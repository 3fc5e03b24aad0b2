//! The `occupancy` chart: active warps (filled), eligible warps and issued warp instructions
//! (lines) over time, one panel per scheduler, all panels on one y scale. Values are averages
//! per cycle over each pixel column's cycles. With more than 16 schedulers holding warps the
//! panels are per SM (sums over its schedulers), and with more than 16 such SMs there is one
//! panel for the whole GPU; `--sm` zooms back to one SM's schedulers.

use super::palette::{self, ACTIVE, ELIGIBLE, ISSUED};
use super::{
    bin_cycles, tick_label, tick_step, window, Align, Canvas, Chart, ChartKind, Loaded, PlotArea,
    Region, RenderError, RenderOptions, Row,
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

/// The corners of a step function over `bins` columns: a point only where the value changes.
fn step_outline(
    bins: usize,
    x_of: &dyn Fn(usize) -> i32,
    value: impl Fn(usize) -> i32,
) -> Vec<(i32, i32)> {
    let mut points = Vec::new();
    let mut previous = None;
    for k in 0..bins {
        let v = value(k);
        if previous != Some(v) {
            if let Some(p) = previous {
                points.push((x_of(k), p));
            }
            points.push((x_of(k), v));
            previous = Some(v);
        }
    }
    if let Some(p) = previous {
        points.push((x_of(bins), p));
    }
    points
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
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
    let mut sms: Vec<u32> = schedulers.iter().map(|s| s.0).collect();
    sms.dedup();
    let key = |sm: u32, s: u32| {
        if schedulers.len() <= MAX_PANELS {
            Key::Scheduler(sm, s)
        } else if sms.len() <= MAX_PANELS {
            Key::Sm(sm)
        } else {
            Key::Gpu
        }
    };
    let plot_w = WIDTH as i32 - RIGHT_MARGIN - LEFT;
    let bin = bin_cycles(to - from, plot_w);
    let bins = (to - from).div_ceil(bin) as usize;
    let mut acc: BTreeMap<Key, Series> = BTreeMap::new();
    let new = || Series {
        active: vec![0; bins],
        eligible: vec![0; bins],
        issued: vec![0; bins],
    };
    for w in &m.warps {
        if !wanted(w.sm) {
            continue;
        }
        let s = acc.entry(key(w.sm, w.scheduler)).or_insert_with(new);
        spread(&mut s.active, from, bin, w.from.max(from), w.to.min(to));
        for iv in &w.intervals {
            if iv.state.is_eligible() {
                spread(&mut s.eligible, from, bin, iv.from.max(from), iv.to.min(to));
            }
        }
    }
    for i in &m.issues {
        if wanted(i.sm) && i.cycle >= from && i.cycle < to {
            acc.entry(key(i.sm, i.scheduler)).or_insert_with(new).issued
                [((i.cycle - from) / bin) as usize] += 1;
        }
    }
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
        canvas.x_axis(&plot, "cycle")?;
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
