//! The `stalls` chart: warp-cycles per issued instruction by Nsight state, as horizontal bars
//! (the analyzer's `warp_states_per_issue`, summed over the trace's launches: a state's
//! warp-cycles over all warp instructions issued). With several traces the bars are grouped:
//! one group per trace, labelled by its name ([`crate::trace_label`]) and what tells its run from
//! the others' ([`crate::analyze::caption`]: the GPU, policy, scoreboard, warp slots...), under
//! a title that names what they share and lists what differs; one colour per state; states
//! that are zero in every trace are left out. A trace recorded without warp states
//! (`--verbosity 0`) has a note in place of its bars, saying so.

use super::palette::{self, state_colour};
use super::{
    text_width, tick_step, width_of, wrap, x_ticks, Align, Canvas, Chart, ChartKind, Header,
    Loaded, Note, PlotArea, Region, RenderError, RenderOptions, Row, AXIS_H, STATE_NAME_CHARS,
    TEXT_HEADING, TEXT_LABEL,
};
use crate::analyze::caption::captions;
use crate::analyze::NsightState;

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1000;
/// The state names beside the bars.
const LEFT: i32 = 16 + text_width(STATE_NAME_CHARS, TEXT_LABEL) + 8;
/// The value beside the longest bar, as long as `123.45`.
const RIGHT_MARGIN: i32 = 8 + text_width(6, TEXT_LABEL) + 12;
const BAR: i32 = TEXT_LABEL as i32 + 5;
const GROUP_HEADER: i32 = TEXT_HEADING as i32 + 12;
/// A group heading's second line, where it wraps.
const HEADING_LINE: i32 = TEXT_HEADING as i32 + 4;
const GROUP_GAP: i32 = 10;

struct Group {
    label: String,
    /// Whether the trace has warp states; without, the group is a note, not bars.
    recorded: bool,
    instructions: u64,
    /// Warp-cycles by state, in `NsightState::ALL` order.
    cycles: Vec<u64>,
}

pub fn render(traces: &[Loaded], options: &RenderOptions) -> Result<Chart, RenderError> {
    let width = options.width_or(WIDTH);
    let headers: Vec<_> = traces.iter().map(|t| &t.model.header).collect();
    let captions = captions(&headers);
    let mut groups = Vec::new();
    for (t, distinction) in traces.iter().zip(&captions.distinctions) {
        let a = t.analysis()?;
        let instructions = a.launches.iter().map(|l| l.warp_instructions).sum();
        let cycles = NsightState::ALL
            .iter()
            .map(|s| {
                a.launches
                    .iter()
                    .map(|l| l.warp_states.get(s.name()).copied().unwrap_or(0))
                    .sum()
            })
            .collect();
        groups.push(Group {
            label: format!("{} ({distinction})", t.label),
            recorded: t.states_recorded(),
            instructions,
            cycles,
        });
    }
    let per_issue = |g: &Group, i: usize| {
        if g.instructions == 0 {
            0.0
        } else {
            g.cycles[i] as f64 / g.instructions as f64
        }
    };
    let shown: Vec<usize> = (0..NsightState::ALL.len())
        .filter(|&i| groups.iter().any(|g| g.cycles[i] > 0))
        .collect();
    let max = groups
        .iter()
        .flat_map(|g| shown.iter().map(move |&i| per_issue(g, i)))
        .fold(0.0f64, f64::max);
    let right = width as i32 - RIGHT_MARGIN;
    // The grid lines at the x axis's ticks.
    let step = tick_step(max.max(1e-9), x_ticks(right - LEFT));
    let x_to = ((max / step).ceil() * step).max(step);
    let not_recorded = ChartKind::Stalls.states_not_recorded().unwrap_or_default();
    let note = Note::new(&not_recorded, right - LEFT);
    // A group's bars, or the note that takes their place.
    let body_h = |g: &Group| match g.recorded {
        true => BAR * shown.len() as i32,
        false => note.height(),
    };
    // A group's heading, on two lines where one is too narrow for it.
    let headings: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let heading = format!("{}: {} warp instructions", g.label, g.instructions);
            wrap(&heading, TEXT_HEADING, width as i32 - 16, 2)
        })
        .collect();
    let header_h = |k: usize| GROUP_HEADER + HEADING_LINE * (headings[k].len() as i32 - 1);
    let group_h = |k: usize| header_h(k) + body_h(&groups[k]) + GROUP_GAP;
    let plot_h = (0..groups.len()).map(group_h).sum();
    let title = format!("Warp-cycles per issued instruction: {}", captions.subject);
    // No subtitle: the bars start under the title.
    let header = Header::new(&title, None, width);
    let plot = PlotArea::under(&header, (LEFT, right), plot_h, (0.0, x_to));
    // No trace with bars: no axis to read them on.
    let any_bars = groups.iter().any(|g| g.recorded);
    let height = (plot.bottom + if any_bars { AXIS_H } else { 0 }) as u32;
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        let mut top = plot.top;
        for (k, g) in groups.iter().enumerate() {
            let (group_top, group_bottom) = (top, top + group_h(k));
            top = group_bottom;
            let bars_top = group_top + header_h(k);
            if g.recorded {
                // Vertical grid lines at the ticks, behind the bars (not through the group's
                // heading).
                let mut v = step;
                while v <= x_to + 1e-9 {
                    let x = plot.x(v);
                    canvas.line(vec![(x, bars_top), (x, group_bottom)], palette::GRID, 1)?;
                    v += step;
                }
            }
            for (n, line) in headings[k].iter().enumerate() {
                canvas.heading(
                    line,
                    (
                        8,
                        group_top + GROUP_HEADER / 2 + 2 + HEADING_LINE * n as i32,
                    ),
                    Align::Left,
                )?;
            }
            if !g.recorded {
                canvas.note(&note, (plot.left, bars_top), Align::Left)?;
                rows.push(Row {
                    label: format!("{} / not recorded", g.label),
                    top: bars_top,
                    bottom: bars_top + note.height(),
                });
                regions.push(Region {
                    x: plot.left,
                    y: bars_top,
                    width: plot.right - plot.left,
                    height: note.height(),
                    text: format!("{}: {}", g.label, note.text()),
                });
                continue;
            }
            canvas.line(
                vec![
                    (plot.left, bars_top),
                    (plot.left, bars_top + BAR * shown.len() as i32),
                ],
                palette::INK,
                1,
            )?;
            for (k, &i) in shown.iter().enumerate() {
                let state = NsightState::ALL[i];
                let y0 = bars_top + k as i32 * BAR;
                let value = per_issue(g, i);
                let x1 = plot.x(value);
                canvas.label(state.name(), (plot.left - 6, y0 + BAR / 2), Align::Right)?;
                canvas.rect(plot.left, y0 + 2, x1, y0 + BAR - 2, state_colour(state))?;
                canvas.label(&format!("{value:.2}"), (x1 + 4, y0 + BAR / 2), Align::Left)?;
                rows.push(Row {
                    label: format!("{} / {}", g.label, state.name()),
                    top: y0,
                    bottom: y0 + BAR,
                });
                regions.push(Region {
                    x: plot.left,
                    y: y0,
                    width: (x1 - plot.left).max(1),
                    height: BAR,
                    text: format!(
                        "{}: {} {value:.3} warp-cycles per issued instruction ({} warp-cycles)",
                        g.label,
                        state.name(),
                        g.cycles[i]
                    ),
                });
            }
        }
        if any_bars {
            // In short where the canvas is too narrow for it (the title says it too).
            let name = "warp-cycles per issued warp instruction";
            let name = match width_of(name, TEXT_HEADING) <= width as i32 - 16 {
                true => name,
                false => "warp-cycles per issued instruction",
            };
            canvas.x_axis(&plot, name, false)?;
        }
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Stalls,
        svg,
        width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: 1,
    })
}
