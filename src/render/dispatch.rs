//! The `dispatch` chart: blocks on SMs over time, like seed 000's picture of six blocks dealt
//! onto two cores. One row per SM (split into lanes when several blocks are resident at once),
//! one bar per block from its grant to its completion, its number written in the bar (as
//! `launch.block` when the trace has several launches). Block colours cycle through the
//! identity palette; they tell neighbours apart and mean nothing else.

use super::model::{BlockSpan, Sink};
use super::palette::{self, identity_colour, text_on};
use super::{
    window, Align, Canvas, Chart, ChartKind, Loaded, PlotArea, Region, RenderError, RenderOptions,
    Row,
};

/// Every block's residency: the one chart that keeps an item per block, as it draws a bar per
/// block.
struct Blocks(Vec<BlockSpan>);

impl Sink for Blocks {
    fn block(&mut self, b: &BlockSpan) {
        self.0.push(*b);
    }
}

impl Blocks {
    fn read(t: &Loaded) -> Result<Vec<BlockSpan>, RenderError> {
        let mut sink = Blocks(Vec::new());
        t.stream(&mut sink)?;
        Ok(sink.0)
    }
}

const WIDTH: u32 = 1000;
const LEFT: i32 = 90;
const RIGHT_MARGIN: i32 = 30;
const TOP: i32 = 50;
const BOTTOM_MARGIN: i32 = 50;

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let (from, to) = window(t, options)?;
    let m = &t.model;
    let blocks = Blocks::read(t)?;
    let config = &m.header.config;
    let several = m.header.launches.len() > 1;
    let sms: Vec<u32> = match options.sm {
        Some(sm) => vec![sm],
        None => (0..config.num_sms).collect(),
    };
    // Lanes per SM: a block takes the first lane free at its grant.
    let mut lanes_of: Vec<Vec<Vec<usize>>> = Vec::new();
    for &sm in &sms {
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
        24
    } else {
        (900 / lane_count).clamp(3, 24)
    };
    let plot_h = lane_h * lane_count;
    let height = (TOP + plot_h + BOTTOM_MARGIN) as u32;
    let plot = PlotArea {
        left: LEFT,
        top: TOP,
        right: WIDTH as i32 - RIGHT_MARGIN,
        bottom: TOP + plot_h,
        x_from: from as f64,
        x_to: to as f64,
    };
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, WIDTH, height)?;
        canvas.title(&format!("Blocks on SMs: {}", t.subject()), WIDTH)?;
        canvas.subtitle(
            &format!(
                "{}, cycles {from}..{to}, {} blocks",
                t.file_name(),
                blocks.len()
            ),
            WIDTH,
        )?;
        let mut top = TOP;
        for (&sm, lanes) in sms.iter().zip(&lanes_of) {
            if top > TOP {
                canvas.line(
                    vec![(plot.left - 40, top), (plot.right, top)],
                    palette::GRID,
                    1,
                )?;
            }
            let group_h = lane_h * lanes.len() as i32;
            if lane_h >= 8 || sm % 8 == 0 {
                canvas.text(
                    &format!("SM{sm}"),
                    (plot.left - 8, top + group_h / 2),
                    12,
                    palette::INK,
                    Align::Right,
                    "sans-serif",
                )?;
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
                    if x1 - x0 >= 8 * name.len() as i32 + 4 && lane_h >= 12 {
                        canvas.text(
                            &name,
                            ((x0 + x1) / 2, (top + bottom) / 2),
                            12,
                            text_on(c),
                            Align::Centre,
                            "sans-serif",
                        )?;
                    }
                    let kernel = m
                        .header
                        .launches
                        .get(b.launch as usize)
                        .map_or("?", |l| l.kernel.as_str());
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
        canvas.x_axis(&plot, "cycle")?;
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Dispatch,
        svg,
        width: WIDTH,
        height,
        plot,
        rows,
        regions,
        bin_cycles: 1,
    })
}
