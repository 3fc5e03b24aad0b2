//! The `stalls` chart: warp-cycles per issued instruction by Nsight state (the analyzer's
//! `warp_states_per_issue`: a state's warp-cycles over the warp instructions issued), in one of
//! two layouts.
//!
//! One run — a trace of one launch, or of more than [`MAX_LAUNCH_ROWS`] launches (summed, as
//! the subtitle says) — is drawn state by state: a horizontal bar per state, its value beside
//! it, under a heading naming the trace and its warp instructions.
//!
//! Several runs are drawn as a compact comparison, one row per run: its label on the left, a
//! horizontal bar of its warp-cycles per issued instruction stacked by state (in
//! `NsightState::ALL` order, one colour per state), its total at the bar's end, one x axis and
//! one legend (under the axis) for every row, so that a sweep of eight policies fits a
//! column-wide figure. The runs are the traces (each labelled by its name,
//! [`crate::trace_label`], and what tells its run from the others',
//! [`crate::analyze::caption`]: the GPU, policy, scoreboard, warp slots...), except that a
//! trace's launches get a row each where summing them would mix what should be compared: a
//! study trace's launches are its schemes, always one row each; a trace drawn alone with 2 to
//! [`MAX_LAUNCH_ROWS`] launches has one row per launch (labelled `launch N: kernel`). Traces
//! drawn beside other traces sum their launches, one row each (`--kernel` picks one kernel's).
//! The subtitle says which rule made the rows. The title names what ran
//! ([`crate::analyze::caption`]), except that a study trace drawn alone is titled by the
//! study (its subtitle counting the schemes), not by its launches' kernels.
//!
//! States that are zero in every run are left out. A trace recorded without warp states
//! (`--verbosity 0`) has a note in place of its bars, saying so.

use super::palette::{self, state_colour};
use super::{
    ellipsize, legend_below_height, text_width, tick_step, width_of, wrap, x_ticks, Align, Canvas,
    Chart, ChartKind, Header, Loaded, Note, PlotArea, Region, RenderError, RenderOptions, Row,
    AXIS_H, LEGEND_BELOW_X, STATE_NAME_CHARS, TEXT_HEADING, TEXT_LABEL,
};
use crate::analyze::caption::{self, captions, Distinction};
use crate::analyze::{LaunchAnalysis, NsightState};
use crate::kernel_name;
use crate::study::trace::{schemes_of, STUDY_NAME};
use crate::words::count;

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

/// A trace of more launches than this, drawn alone, is summed into one run (drawn state by
/// state) rather than drawn a row per launch.
pub const MAX_LAUNCH_ROWS: usize = 16;

pub fn render(traces: &[Loaded], options: &RenderOptions) -> Result<Chart, RenderError> {
    let headers: Vec<_> = traces.iter().map(|t| &t.model.header).collect();
    let captions = captions(&headers);
    let mut runs = Vec::new();
    let (mut split_study, mut split_other, mut summed) = (false, false, false);
    for ((t, distinction), parts) in traces
        .iter()
        .zip(&captions.distinctions)
        .zip(&captions.parts)
    {
        let a = t.analysis()?;
        let trace_label = format!("{} ({distinction})", t.label);
        let row_label = short_label(&t.label, parts);
        let schemes = schemes_of(&t.model.header).filter(|s| s.len() == a.launches.len());
        let alone = traces.len() == 1;
        let per_launch = a.launches.len() > 1
            && (schemes.is_some() || (alone && a.launches.len() <= MAX_LAUNCH_ROWS));
        if !per_launch {
            summed |= a.launches.len() > 1;
            let mut run = Run::of(trace_label, t, &a.launches);
            run.short = row_label;
            runs.push(run);
            continue;
        }
        for (i, l) in a.launches.iter().enumerate() {
            let launch = match &schemes {
                Some(s) => s[i].name().to_string(),
                None => format!(
                    "launch {}: {}",
                    l.index,
                    kernel_name::function_within(&l.name, LAUNCH_KERNEL_CHARS)
                ),
            };
            let (label, short) = match alone {
                true => (launch.clone(), launch),
                false => (
                    format!("{trace_label}: {launch}"),
                    format!("{row_label}: {launch}"),
                ),
            };
            let mut run = Run::of(label, t, std::slice::from_ref(l));
            run.short = short;
            runs.push(run);
        }
        split_study |= schemes.is_some();
        split_other |= schemes.is_none();
    }
    // A lone study trace's subject would list every scheme's kernel (four lines at 400 px):
    // the title names the study, the subtitle counts its schemes and the rows name them.
    let subject = match traces {
        [t] if schemes_of(&t.model.header).is_some() => STUDY_NAME,
        _ => &captions.subject,
    };
    let title = format!("Warp-cycles per issued instruction: {subject}");
    if runs.len() == 1 {
        let subtitle = summed.then(|| {
            let n = traces[0].analysis().map_or(0, |a| a.launches.len());
            format!(
                "{} launches summed (a row each up to {MAX_LAUNCH_ROWS}; --kernel picks one kernel's)",
                n
            )
        });
        return by_state(&runs[0], &title, subtitle.as_deref(), options);
    }
    let subtitle = match traces {
        [t] if split_study => format!(
            "{}: {}, one row per scheme (one launch each)",
            t.label,
            count(runs.len() as u64, "scheme", "schemes")
        ),
        [t] => format!("{}: one row per launch", t.label),
        _ => {
            let mut s = String::from("one row per trace");
            if summed {
                s.push_str(", its launches summed");
            }
            if split_study {
                s.push_str("; a study trace's schemes a row each");
            }
            if split_other {
                s.push_str("; a trace's launches a row each");
            }
            s
        }
    };
    compact(&runs, &title, &subtitle, options)
}

/// Room in a launch's row label for its kernel's name.
const LAUNCH_KERNEL_CHARS: usize = 32;

/// A trace's name as a row says it: its label without the trace file's extension, and the
/// parts of its run's distinction that the file name does not already say (a sweep's
/// `gto.bitmap` says `gto`, `gto.ranges.w16` says `ranges scoreboard, 16 warp slots per SM`:
/// [`Distinction::said_by`]): `a/t (gto)`, or `a/t` alone when it says them all. Only the file
/// name counts, not the directories before it: a label has them only where another trace's
/// file has the same name ([`crate::trace_label`]), so counting them would leave a part out
/// of some rows and not others (`sw-reduce/small.gto.bitmap` beside `small.lrr.bitmap
/// (reduce)`).
fn short_label(label: &str, parts: &[Distinction]) -> String {
    let stem = [".wstrace.jsonl", ".wstrace", ".jsonl"]
        .iter()
        .find_map(|ext| label.strip_suffix(ext))
        .filter(|s| !s.is_empty())
        .unwrap_or(label);
    let file = stem.rsplit(['/', '\\']).next().unwrap_or(stem);
    let unsaid: Vec<Distinction> = parts.iter().filter(|d| !d.said_by(file)).cloned().collect();
    match unsaid.is_empty() {
        true => stem.to_string(),
        false => format!("{stem} ({})", caption::join(&unsaid)),
    }
}

/// What a row (or the single-run chart) draws: one trace's launches, summed.
struct Run {
    /// The run's whole name: the single-run chart's heading, a row's hover text.
    label: String,
    /// The name a row's label column says ([`short_label`]).
    short: String,
    /// Whether the trace has warp states; without, the run is a note, not bars.
    recorded: bool,
    instructions: u64,
    /// The cycles the run took: its launches' span (launches on streams overlap, so it is not
    /// their sum), as `sweep` counts a run.
    span: u64,
    /// Warp-cycles by state, in `NsightState::ALL` order.
    cycles: Vec<u64>,
}

impl Run {
    fn of(label: String, t: &Loaded, launches: &[LaunchAnalysis]) -> Run {
        Run {
            short: label.clone(),
            label,
            recorded: t.states_recorded(),
            instructions: launches.iter().map(|l| l.warp_instructions).sum(),
            span: launches.iter().map(|l| l.end_cycle).max().unwrap_or(0)
                - launches.iter().map(|l| l.start_cycle).min().unwrap_or(0),
            cycles: NsightState::ALL
                .iter()
                .map(|s| {
                    launches
                        .iter()
                        .map(|l| l.warp_states.get(s.name()).copied().unwrap_or(0))
                        .sum()
                })
                .collect(),
        }
    }

    /// State `i`'s warp-cycles per issued instruction.
    fn per_issue(&self, i: usize) -> f64 {
        match self.instructions {
            0 => 0.0,
            n => self.cycles[i] as f64 / n as f64,
        }
    }

    /// Warp instructions per cycle, GPU-wide, over the run's span.
    fn ipc(&self) -> f64 {
        match self.span {
            0 => 0.0,
            n => self.instructions as f64 / n as f64,
        }
    }

    /// Every state's warp-cycles per issued instruction, summed.
    fn total(&self) -> f64 {
        match self.instructions {
            0 => 0.0,
            n => self.cycles.iter().sum::<u64>() as f64 / n as f64,
        }
    }
}

/// The states drawn: those with warp-cycles in some run, as indices into `NsightState::ALL`.
fn shown(runs: &[Run]) -> Vec<usize> {
    (0..NsightState::ALL.len())
        .filter(|&i| runs.iter().any(|g| g.cycles[i] > 0))
        .collect()
}

/// One run drawn state by state.
fn by_state(
    run: &Run,
    title: &str,
    subtitle: Option<&str>,
    options: &RenderOptions,
) -> Result<Chart, RenderError> {
    let width = options.width_or(WIDTH);
    let groups = std::slice::from_ref(run);
    let per_issue = |g: &Run, i: usize| g.per_issue(i);
    let shown = shown(groups);
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
    let body_h = |g: &Run| match g.recorded {
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
    let header = Header::new(title, subtitle, width);
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
            canvas.x_axis(&plot, AXIS_NAME, false)?;
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

/// The x axis's name: Nsight's term, the same at every width, so that two figures of one
/// paper agree.
const AXIS_NAME: &str = "warp-cycles per issued instruction";

/// A row's bar, as thick as a legend swatch and a little more.
const ROW_BAR: i32 = TEXT_LABEL as i32 + 2;
/// The room above and below a row's bar or label.
const ROW_PAD: i32 = 3;
/// The pitch of a row label's lines.
const LABEL_LINE: i32 = TEXT_LABEL as i32 + 4;
/// Lines a row label may take; past them it ends with an ellipsis (whole in its hover region).
const LABEL_LINES: usize = 2;

/// The band over the first row that holds [`Columns`]' headings.
const COLUMN_HEAD: i32 = LABEL_LINE;
/// Between the total beside the longest bar and the first column, and between columns.
const COLUMN_GAP: i32 = 12;
/// Right of the last column.
const COLUMN_PAD: i32 = 12;

/// The figures right of a compact chart's bars, a right-aligned column each under a heading:
/// each run's cycles and, where the plot keeps a third of the chart's width beside them, its
/// IPC. A bar is warp-cycles per issued instruction, which grows with the warps a scheduler
/// holds even as the run gets faster (Little's law: more warps waiting, each issuing as
/// often): its cycles say which run is faster.
struct Columns {
    /// Per column its heading, the pixel column its text ends at, and each run's value.
    columns: Vec<(&'static str, i32, Vec<String>)>,
    /// The plot's right edge: the columns, and room for the total beside the longest bar.
    plot_right: i32,
}

impl Columns {
    fn of(runs: &[Run], left: i32, width: i32) -> Columns {
        let total_w = runs
            .iter()
            .filter(|r| r.recorded)
            .map(|r| width_of(&format!("{:.2}", r.total()), TEXT_LABEL))
            .max()
            .unwrap_or(0);
        let cycles: Vec<String> = runs.iter().map(|r| r.span.to_string()).collect();
        let ipc: Vec<String> = runs.iter().map(|r| format!("{:.2}", r.ipc())).collect();
        let column_w = |heading: &str, values: &[String]| {
            values
                .iter()
                .map(|v| width_of(v, TEXT_LABEL))
                .fold(width_of(heading, TEXT_LABEL), i32::max)
        };
        let (cycles_w, ipc_w) = (column_w("cycles", &cycles), column_w("IPC", &ipc));
        let edge = width - COLUMN_PAD;
        // The bar's total is written 4 pixels past its end.
        let plot_right = |columns_w: i32| edge - columns_w - COLUMN_GAP - total_w - 4;
        let both = plot_right(cycles_w + COLUMN_GAP + ipc_w);
        if both - left >= width / 3 {
            return Columns {
                columns: vec![
                    ("cycles", edge - ipc_w - COLUMN_GAP, cycles),
                    ("IPC", edge, ipc),
                ],
                plot_right: both,
            };
        }
        Columns {
            columns: vec![("cycles", edge, cycles)],
            plot_right: plot_right(cycles_w),
        }
    }
}

/// Several runs, a row each: a bar stacked by state, one axis, one legend under it, and
/// [`Columns`] of their cycles and IPC right of the bars.
fn compact(
    runs: &[Run],
    title: &str,
    subtitle: &str,
    options: &RenderOptions,
) -> Result<Chart, RenderError> {
    let width = options.width_or(WIDTH);
    let shown = shown(runs);
    // The label column: as wide as the longest label, at most two fifths of the chart (a
    // longer label wraps onto a second line).
    let widest = runs.iter().map(|r| width_of(&r.short, TEXT_LABEL)).max();
    let label_w = widest.unwrap_or(0).min(width as i32 * 2 / 5 - 24);
    let left = 16 + label_w + 8;
    let columns = Columns::of(runs, left, width as i32);
    let right = columns.plot_right;
    let labels: Vec<Vec<String>> = runs
        .iter()
        .map(|r| wrap(&r.short, TEXT_LABEL, label_w, LABEL_LINES))
        .collect();
    let row_h = |k: usize| (LABEL_LINE * labels[k].len() as i32).max(ROW_BAR) + 2 * ROW_PAD;
    let max = runs.iter().map(Run::total).fold(0.0f64, f64::max);
    let step = tick_step(max.max(1e-9), x_ticks(right - left));
    let x_to = ((max / step).ceil() * step).max(step);
    let plot_h = (0..runs.len()).map(row_h).sum();
    let header = Header::new(title, Some(subtitle), width);
    let mut plot = PlotArea::under(&header, (left, right), plot_h, (0.0, x_to));
    // The columns' headings, over the first row.
    plot.top += COLUMN_HEAD;
    plot.bottom += COLUMN_HEAD;
    let legend = [(
        "",
        shown
            .iter()
            .map(|&i| {
                let s = NsightState::ALL[i];
                (state_colour(s), s.name().to_string())
            })
            .collect::<Vec<_>>(),
    )];
    let legend_right = width as i32 - LEGEND_BELOW_X;
    let height =
        (plot.bottom + AXIS_H + legend_below_height(LEGEND_BELOW_X, legend_right, &legend)) as u32;
    let not_recorded = ChartKind::Stalls.states_not_recorded().unwrap_or_default();
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        // Vertical grid lines at the ticks, behind the bars.
        let mut v = step;
        while v <= x_to + 1e-9 {
            let x = plot.x(v);
            canvas.line(vec![(x, plot.top), (x, plot.bottom)], palette::GRID, 1)?;
            v += step;
        }
        for (heading, x, _) in &columns.columns {
            canvas.label(heading, (*x, plot.top - COLUMN_HEAD / 2), Align::Right)?;
        }
        let mut top = plot.top;
        for (k, run) in runs.iter().enumerate() {
            let (row_top, row_bottom) = (top, top + row_h(k));
            top = row_bottom;
            let centre = (row_top + row_bottom) / 2;
            for (_, x, values) in &columns.columns {
                canvas.label(&values[k], (*x, centre), Align::Right)?;
            }
            let figures = format!("{} cycles, IPC {:.3}", run.span, run.ipc());
            let lines = &labels[k];
            let first = centre - LABEL_LINE * (lines.len() as i32 - 1) / 2;
            for (n, line) in lines.iter().enumerate() {
                canvas.label(
                    line,
                    (left - 6, first + LABEL_LINE * n as i32),
                    Align::Right,
                )?;
            }
            rows.push(Row {
                label: run.label.clone(),
                top: row_top,
                bottom: row_bottom,
            });
            if !run.recorded {
                let text = ellipsize(&not_recorded, TEXT_LABEL, right - left - 4);
                canvas.label(&text, (left + 4, centre), Align::Left)?;
                regions.push(Region {
                    x: left,
                    y: row_top,
                    width: right - left,
                    height: row_bottom - row_top,
                    text: format!("{}: {not_recorded} ({figures})", run.label),
                });
                continue;
            }
            let (y0, y1) = (centre - ROW_BAR / 2, centre - ROW_BAR / 2 + ROW_BAR);
            let mut sum = 0.0;
            for &i in &shown {
                let value = run.per_issue(i);
                if run.cycles[i] == 0 {
                    continue;
                }
                let state = NsightState::ALL[i];
                let x0 = plot.x(sum);
                sum += value;
                let x1 = plot.x(sum);
                canvas.rect(x0, y0, x1, y1, state_colour(state))?;
                regions.push(Region {
                    x: x0,
                    y: y0,
                    width: (x1 - x0).max(1),
                    height: ROW_BAR,
                    text: format!(
                        "{}: {} {value:.3} warp-cycles per issued instruction ({} warp-cycles)",
                        run.label,
                        state.name(),
                        run.cycles[i]
                    ),
                });
            }
            let end = plot.x(run.total());
            canvas.label(
                &format!("{:.2}", run.total()),
                (end + 4, centre),
                Align::Left,
            )?;
            regions.push(Region {
                x: 8,
                y: row_top,
                width: left - 8,
                height: row_bottom - row_top,
                text: format!(
                    "{}: {:.3} warp-cycles per issued instruction, {} warp instructions in {figures}",
                    run.label,
                    run.total(),
                    run.instructions
                ),
            });
        }
        canvas.line(
            vec![(plot.left, plot.top), (plot.left, plot.bottom)],
            palette::INK,
            1,
        )?;
        canvas.x_axis(&plot, AXIS_NAME, false)?;
        canvas.legend_below(
            (LEGEND_BELOW_X, plot.bottom + AXIS_H),
            legend_right,
            &legend,
        )?;
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
