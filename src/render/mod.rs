//! Charts: a trace (or, for `stalls`, several) drawn as an SVG with plotters' SVG backend.
//!
//! [`chart`] is the one entry point: it reads the traces and returns a [`Chart`] — the SVG text
//! plus the layout (plot area, rows) and a parallel list of hover [`Region`]s. Plotters cannot
//! give SVG elements `<title>` children, so tooltips are that parallel data: each region is a
//! pixel rectangle with the text to show (cycle range, warp, state, PC, instruction), which the
//! HTML report overlays on the inline SVG.
//!
//! Every chart takes its colours from [`palette`]. Long traces are binned into pixel columns:
//! a bin covers `ceil(cycles / plot width)` cycles and shows one of the entries — warp states
//! (timeline) or slot uses (slots) — that hold its cycles, chosen along the row so that each
//! entry gets columns in proportion to its cycles ([`row_winners`]; a bin's majority would hide
//! an entry that is second in every bin), and its tooltip gives the shares. So a file's size
//! depends on the plot's width, not on the trace's length. Runs of equal neighbouring bins are drawn as one rectangle. A chart with
//! many busy rows (hundreds of warp slots) uses fewer, wider columns until the SVG is under
//! [`MAX_SVG_BYTES`], and the timeline shows at most [`timeline::MAX_ROWS`] rows (the first
//! SMs; `--sm` picks another). The dispatch chart draws a bar per block for up to
//! [`dispatch::MAX_BARS`] blocks; past that, or when the bars are over the bound, it draws per
//! SM a band of the blocks resident in each column, binned and halved like the others.
//!
//! The traces are streamed, never held: [`load`] reads a trace once for its header, cycle range
//! and busy warp slots, and each time chart streams it again into per-row, per-column counts
//! (see [`model`]) for every binning `within_size` may try, so memory follows rows × columns ×
//! states, not the trace's length, and traces of any size are drawn. The price is time: a
//! chart reads its trace twice, the report once per time chart more.
//!
//! Text is drawn with generic font families (`sans-serif`, `monospace`) and no font files:
//! plotters' SVG backend writes `<text>` elements and the viewer picks the font. Every text is
//! one of the sizes [`TEXT_TITLE`] to [`TEXT_CELL`] (pixels at the SVG's natural size; the
//! report scales a chart down to its column, so none is under [`TEXT_MIN`]), and the margins,
//! label columns and legends are sized from them with [`text_width`], so they grow with the
//! text. A title or subtitle too long for the canvas (a long kernel name or trace path, many
//! traces compared) wraps onto up to three lines (six under 900 pixels), the chart growing to make room, and is cut with
//! an ellipsis past them (`Header`); text in a column of fixed width (the source listing's launch
//! headings) is cut with an ellipsis (`ellipsize`), and the source listing's instructions
//! are shortened to their opcode and first operands (`source`), each whole in the row's hover
//! region. The study's grids (`crate::study::svg`) use the same sizes.
//!
//! A chart's width is its own (1000 to 1200 pixels) unless [`RenderOptions::width`] asks for
//! another, from [`MIN_WIDTH`] to [`MAX_WIDTH`]: text keeps its pixel sizes (a paper scales a
//! figure to its column, so a narrower chart has larger text there), the label columns and
//! margins keep their widths and the plot takes the rest. A legend beside the plot moves under
//! the x axis where the plot would keep less than three fifths of the width
//! (`legend_beside`), headers may wrap onto more lines, an axis name longer than its plot is
//! centred as near the plot as the canvas allows, and the time charts bin into the plot's
//! pixel columns, fewer on a narrower chart.
//!
//! Output is deterministic: the same trace and options give the same bytes.

pub mod dispatch;
pub mod figure;
pub mod model;
pub mod occupancy;
pub mod palette;
pub mod slots;
pub mod source;
pub mod stalls;
pub mod timeline;

use crate::analyze::{analyze_file, Analysis, Taxonomy};
use crate::trace::TraceError;
use model::TraceModel;
use palette::Rgb;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// Which chart to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChartKind {
    Timeline,
    Dispatch,
    Stalls,
    Occupancy,
    Slots,
    Source,
}

impl ChartKind {
    pub const ALL: [ChartKind; 6] = [
        ChartKind::Timeline,
        ChartKind::Dispatch,
        ChartKind::Stalls,
        ChartKind::Occupancy,
        ChartKind::Slots,
        ChartKind::Source,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Timeline => "timeline",
            ChartKind::Dispatch => "dispatch",
            ChartKind::Stalls => "stalls",
            ChartKind::Occupancy => "occupancy",
            ChartKind::Slots => "slots",
            ChartKind::Source => "source",
        }
    }

    pub fn from_name(name: &str) -> Result<ChartKind, RenderError> {
        ChartKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| RenderError::UnknownChart(name.to_string()))
    }

    /// Whether the chart takes several traces (the others take exactly one).
    pub fn takes_several(self) -> bool {
        self == ChartKind::Stalls
    }

    /// Whether the chart sums a trace's whole run (every launch, cycle and SM) rather than
    /// showing time: stalls and source, which `--kernel` narrows and `--from`/`--to`/`--sm` do
    /// not apply to.
    pub fn sums_launches(self) -> bool {
        matches!(self, ChartKind::Stalls | ChartKind::Source)
    }

    /// What of the chart is drawn from warp-state events (`None`: nothing): what a trace
    /// recorded at `--verbosity 0` cannot show. Dispatch draws block events; occupancy's
    /// active warps and IPC come from warp lifetimes and issues, the slots grid from issues
    /// and refills, the source listing's execution counts from issues.
    pub fn drawn_from_warp_states(self) -> Option<&'static str> {
        match self {
            ChartKind::Timeline => Some("warp-state timeline"),
            ChartKind::Stalls | ChartKind::Source => Some("stall bars"),
            ChartKind::Occupancy => Some("eligible-warps line"),
            ChartKind::Slots => Some("warp-state strips"),
            ChartKind::Dispatch => None,
        }
    }

    /// What the chart says in place of what it draws from warp states, for a trace without
    /// them (`None` for a chart that draws none): `No stall bars: warp states were not
    /// recorded (...)`.
    pub fn states_not_recorded(self) -> Option<String> {
        self.drawn_from_warp_states()
            .map(|part| format!("No {part}: {STATES_NOT_RECORDED}."))
    }
}

/// Why a chart drawn from warp states is empty for a trace recorded at `--verbosity 0`, and
/// how to get them; the charts and the report's captions say it in these words.
pub const STATES_NOT_RECORDED: &str = "warp states were not recorded (the trace was recorded with --verbosity 0); record with --verbosity 1 (the default) or 2 to see them";

/// What to show. `None` means "all of it".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// First cycle shown (time charts).
    pub from: Option<u64>,
    /// One past the last cycle shown (time charts).
    pub to: Option<u64>,
    /// Only this SM (timeline, dispatch, occupancy, slots).
    pub sm: Option<u32>,
    /// The chart's width in pixels, [`MIN_WIDTH`] to [`MAX_WIDTH`] (`None`: the chart's own,
    /// 1000 to 1200). Text keeps its pixel sizes, so a narrower chart has larger text relative
    /// to its width: what a figure scaled to a paper's column needs.
    pub width: Option<u32>,
    /// Only the launches of this kernel, picked as `analyze --kernel` picks them
    /// ([`crate::kernel_name::select`]): the stalls and source charts, which sum a trace's
    /// launches. [`chart`] applies it as it loads the traces.
    pub kernel: Option<String>,
}

/// The narrowest chart: room for the row labels, a plot and a legend across beneath it.
pub const MIN_WIDTH: u32 = 400;
/// The widest chart.
pub const MAX_WIDTH: u32 = 10_000;

impl RenderOptions {
    /// The chart's width: the one asked for, else the chart's own `default`.
    pub(crate) fn width_or(&self, default: u32) -> u32 {
        self.width.unwrap_or(default)
    }
}

/// The plot area in pixels and the cycles (or values) its x axis spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlotArea {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
    pub x_from: f64,
    pub x_to: f64,
}

impl PlotArea {
    /// A plot `height` pixels high right under `header`, from pixel column `left` to `right`,
    /// its x axis spanning `x_from..x_to`.
    pub(crate) fn under(
        header: &Header,
        (left, right): (i32, i32),
        height: i32,
        (x_from, x_to): (f64, f64),
    ) -> PlotArea {
        let top = header.height();
        PlotArea {
            left,
            top,
            right,
            bottom: top + height,
            x_from,
            x_to,
        }
    }

    /// The pixel column of x value `v` (clamped to the plot area).
    pub fn x(&self, v: f64) -> i32 {
        let span = (self.x_to - self.x_from).max(f64::MIN_POSITIVE);
        let t = ((v - self.x_from) / span).clamp(0.0, 1.0);
        self.left + (t * (self.right - self.left) as f64).round() as i32
    }
}

/// One labelled row of a chart (a warp slot, an SM lane, an issue slot, an instruction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub label: String,
    pub top: i32,
    pub bottom: i32,
}

/// A hover target: a pixel rectangle and its tooltip text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
    pub text: String,
}

/// A rendered chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub kind: ChartKind,
    pub svg: String,
    pub width: u32,
    pub height: u32,
    pub plot: PlotArea,
    pub rows: Vec<Row>,
    pub regions: Vec<Region>,
    /// Cycles per pixel column (1 when the trace is not binned).
    pub bin_cycles: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{path}: {source}")]
    Trace {
        path: PathBuf,
        #[source]
        source: TraceError,
    },
    #[error("unknown chart `{0}` (charts: timeline, dispatch, stalls, occupancy, slots, source)")]
    UnknownChart(String),
    #[error("--from {from} must be less than --to {to}")]
    BadRange { from: u64, to: u64 },
    #[error("a chart's width must be {MIN_WIDTH} to {MAX_WIDTH} pixels, not {width}")]
    BadWidth { width: u32 },
    #[error("{path}: the trace has no kernel launch")]
    NoLaunches { path: PathBuf },
    #[error("{path}: no SM {sm}: the GPU `{gpu}` has {num_sms} SMs (0 to {})", num_sms.saturating_sub(1))]
    NoSuchSm {
        path: PathBuf,
        sm: u32,
        gpu: String,
        num_sms: u32,
    },
    #[error("chart {chart} takes one trace, got {count} (only `stalls` compares several)")]
    OneTrace { chart: &'static str, count: usize },
    #[error("no trace given")]
    NoTraces,
    #[error("{path}: {message}")]
    Empty { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    NoSuchKernel { path: PathBuf, message: String },
    #[error(
        "--kernel applies to the stalls and source charts, which sum a trace's launches; to \
         see kernel `{kernel}` on the {chart} chart, zoom to its launches' cycles: --from {from} \
         --to {to}"
    )]
    KernelOnTimeChart {
        chart: &'static str,
        kernel: String,
        from: u64,
        to: u64,
    },
    #[error("drawing the chart: {0}")]
    Draw(String),
}

/// A trace loaded for drawing.
pub struct Loaded {
    pub path: PathBuf,
    /// How captions and group headings name the trace: its file name, or, drawn beside
    /// traces of the same file name, as much of its path as tells it apart
    /// ([`crate::trace_label::labels`], which the caller that loads several applies).
    pub label: String,
    pub model: TraceModel,
    /// The trace's analysis (Nsight taxonomy), which the stalls and source charts draw: made
    /// on first use, or handed in by a caller that has it (the report) so that the trace is
    /// not read again for it.
    pub analysis: std::sync::OnceLock<Analysis>,
}

impl Loaded {
    /// The trace's analysis in the Nsight taxonomy (see `analysis`).
    pub fn analysis(&self) -> Result<&Analysis, RenderError> {
        if let Some(a) = self.analysis.get() {
            return Ok(a);
        }
        let a =
            analyze_file(&self.path, Taxonomy::Nsight).map_err(|source| RenderError::Trace {
                path: self.path.clone(),
                source,
            })?;
        Ok(self.analysis.get_or_init(|| a))
    }

    /// Whether the trace has warp-state events (see [`ChartKind::drawn_from_warp_states`]).
    pub fn states_recorded(&self) -> bool {
        self.model.header.warp_states_recorded()
    }

    /// "vecadd_tiny on tiny (lrr)", the kernels by their short demangled names; a study
    /// trace's subject is the study, whose five `study_*` kernels would fill the title.
    pub fn subject(&self) -> String {
        match crate::study::trace::schemes_of(&self.model.header) {
            Some(_) => crate::study::trace::STUDY_NAME.to_string(),
            None => crate::analyze::caption::captions(&[&self.model.header]).subject,
        }
    }
}

/// Reads the trace at `path` for drawing; a trace with no launch is an error.
pub fn load(path: &Path) -> Result<Loaded, RenderError> {
    load_before(path, None)
}

/// [`load`] for windows ending at `before` (`--to`; `None`: the trace's end).
fn load_before(path: &Path, before: Option<u64>) -> Result<Loaded, RenderError> {
    let model = model::load_before(path, before).map_err(|source| RenderError::Trace {
        path: path.to_path_buf(),
        source,
    })?;
    if model.header.launches.is_empty() {
        return Err(RenderError::NoLaunches {
            path: path.to_path_buf(),
        });
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        label: crate::trace_label::labels(&[path]).remove(0),
        model,
        analysis: std::sync::OnceLock::new(),
    })
}

impl Loaded {
    /// The warp slots that held a warp in the window `[from, options.to)`; reads the trace
    /// again if it was loaded for another window end.
    pub(crate) fn resident(
        &self,
        options: &RenderOptions,
        from: u64,
    ) -> Result<Vec<model::SlotKey>, RenderError> {
        if options.to == self.model.before {
            return Ok(self.model.resident_in(from).collect());
        }
        let again = load_before(&self.path, options.to)?;
        Ok(again.model.resident_in(from).collect())
    }

    /// Keeps only the launches of kernel `pattern` (as `analyze --kernel` picks them) in the
    /// trace's analysis and header, so that the charts drawn from the analysis, and their
    /// captions, cover those launches alone.
    fn keep_kernel(&mut self, pattern: &str) -> Result<(), RenderError> {
        self.analysis()?;
        let mut a = self.analysis.take().expect("the analysis was just made");
        a.retain_kernel(pattern)
            .map_err(|message| RenderError::NoSuchKernel {
                path: self.path.clone(),
                message,
            })?;
        let kept: Vec<u32> = a.launches.iter().map(|l| l.index).collect();
        let mut index = 0..;
        self.model
            .header
            .launches
            .retain(|_| index.next().is_some_and(|i| kept.contains(&i)));
        self.analysis = std::sync::OnceLock::from(a);
        Ok(())
    }

    /// Streams the trace into `sink`.
    pub(crate) fn stream(&self, sink: &mut impl model::Sink) -> Result<(), RenderError> {
        model::stream(&self.path, sink).map_err(|source| RenderError::Trace {
            path: self.path.clone(),
            source,
        })?;
        Ok(())
    }
}

/// Renders chart `kind` of `traces`.
pub fn chart(
    kind: ChartKind,
    traces: &[PathBuf],
    options: &RenderOptions,
) -> Result<Chart, RenderError> {
    if let (Some(from), Some(to)) = (options.from, options.to) {
        if from >= to {
            return Err(RenderError::BadRange { from, to });
        }
    }
    check_width(options)?;
    if traces.is_empty() {
        return Err(RenderError::NoTraces);
    }
    if traces.len() > 1 && !kind.takes_several() {
        return Err(RenderError::OneTrace {
            chart: kind.name(),
            count: traces.len(),
        });
    }
    let mut loaded = traces
        .iter()
        .map(|p| load_before(p, options.to))
        .collect::<Result<Vec<_>, _>>()?;
    for (t, label) in loaded.iter_mut().zip(crate::trace_label::labels(traces)) {
        t.label = label;
    }
    if let Some(pattern) = &options.kernel {
        if !kind.sums_launches() {
            let t = &mut loaded[0];
            t.keep_kernel(pattern)?;
            let a = t.analysis()?;
            let from = a.launches.iter().map(|l| l.start_cycle).min().unwrap_or(0);
            let to = a.launches.iter().map(|l| l.end_cycle).max().unwrap_or(0);
            return Err(RenderError::KernelOnTimeChart {
                chart: kind.name(),
                kernel: pattern.clone(),
                from,
                to,
            });
        }
        for t in &mut loaded {
            t.keep_kernel(pattern)?;
        }
    }
    chart_of(kind, &loaded, options)
}

/// A width outside [`MIN_WIDTH`]..=[`MAX_WIDTH`] is an error.
fn check_width(options: &RenderOptions) -> Result<(), RenderError> {
    match options.width {
        Some(width) if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) => {
            Err(RenderError::BadWidth { width })
        }
        _ => Ok(()),
    }
}

/// Renders chart `kind` of traces already loaded (the report loads each trace once).
pub fn chart_of(
    kind: ChartKind,
    traces: &[Loaded],
    options: &RenderOptions,
) -> Result<Chart, RenderError> {
    let first = traces.first().ok_or(RenderError::NoTraces)?;
    check_width(options)?;
    if let Some(sm) = options.sm {
        for t in traces {
            let c = &t.model.header.config;
            if sm >= c.num_sms {
                return Err(RenderError::NoSuchSm {
                    path: t.path.clone(),
                    sm,
                    gpu: c.name.clone(),
                    num_sms: c.num_sms,
                });
            }
        }
    }
    match kind {
        ChartKind::Timeline => timeline::render(first, options),
        ChartKind::Dispatch => dispatch::render(first, options),
        ChartKind::Stalls => stalls::render(traces, options),
        ChartKind::Occupancy => occupancy::render(first, options),
        ChartKind::Slots => slots::render(first, options),
        ChartKind::Source => source::render(first, options),
    }
}

/// How many numbers chart `kind` of the trace at `path` keeps while it draws (the time charts;
/// 0 for the others): what the bound on the charts' memory is about — per row and pixel column,
/// not per event.
pub fn retained(
    kind: ChartKind,
    path: &Path,
    options: &RenderOptions,
) -> Result<usize, RenderError> {
    let t = load_before(path, options.to)?;
    match kind {
        ChartKind::Timeline => timeline::retained(&t, options),
        ChartKind::Slots => slots::retained(&t, options),
        ChartKind::Occupancy => occupancy::retained(&t, options),
        ChartKind::Dispatch => dispatch::retained(&t, options),
        _ => Ok(0),
    }
}

/// The cycle window `[from, to)` a time chart shows: `options`' window, ending at the trace's
/// end if it asks for more — a zoom that overshoots the end wants the end, not an axis the
/// trace fills 2 % of (the plot's `x_to` says where it stopped, and `render` says so).
pub(crate) fn window(t: &Loaded, options: &RenderOptions) -> Result<(u64, u64), RenderError> {
    let end = t.model.end.max(t.model.start + 1);
    let from = options.from.unwrap_or(t.model.start);
    if options.from.is_some() && from >= end {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!(
                "--from {from} is past the trace's last cycle (it covers cycles {}..{})",
                t.model.start, t.model.end
            ),
        });
    }
    let to = options.to.map_or(end, |to| to.min(end));
    if from >= to && options.from.is_none() {
        return Err(RenderError::Empty {
            path: t.path.clone(),
            message: format!("--to {to} is not after the trace's first cycle {from}"),
        });
    }
    if from >= to {
        return Err(RenderError::BadRange { from, to });
    }
    Ok((from, to))
}

/// The largest SVG a chart aims for; time charts with many rows halve their columns until
/// they fit (the benchmark bound is 2 MB).
pub const MAX_SVG_BYTES: usize = 1_800_000;

/// Renders with at most `columns` pixel columns, halving them while the SVG is over
/// [`MAX_SVG_BYTES`] (many rows of busy warps), down to 32 columns.
pub(crate) fn within_size(
    mut draw: impl FnMut(i32) -> Result<Chart, RenderError>,
) -> Result<Chart, RenderError> {
    let mut columns = i32::MAX;
    loop {
        let c = draw(columns)?;
        let wide = ((c.plot.x_to - c.plot.x_from) / c.bin_cycles as f64).ceil() as i32;
        if c.svg.len() <= MAX_SVG_BYTES || wide <= 32 {
            return Ok(c);
        }
        columns = (wide / 2).max(32);
    }
}

/// The cycles per column [`within_size`] can ask a chart of `cycles` cycles over `pixels`
/// columns for, in the order it asks: known before drawing, so one pass over the trace can
/// fill every candidate binning.
pub(crate) fn bin_levels(cycles: u64, pixels: i32) -> Vec<u64> {
    let mut levels = Vec::new();
    let mut columns = i32::MAX;
    loop {
        let bin = bin_cycles(cycles, pixels.min(columns));
        if !levels.contains(&bin) {
            levels.push(bin);
        }
        // As `within_size` computes it.
        let wide = (cycles as f64 / bin as f64).ceil() as i32;
        let next = (wide / 2).max(32);
        if wide <= 32 || next >= columns {
            return levels;
        }
        columns = next;
    }
}

/// Cycles per pixel column so that `cycles` fit in `pixels`.
pub(crate) fn bin_cycles(cycles: u64, pixels: i32) -> u64 {
    cycles.div_ceil(pixels.max(1) as u64).max(1)
}

/// The corners of a step function over `bins` columns: a point only where the value changes.
pub(crate) fn step_outline(
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

/// The entry each bin of a row shows: one of the entries with cycles in the bin, chosen so that
/// along the row every entry gets columns in proportion to its cycles (error diffusion: an
/// entry's cycles are credited to it, and the column shown is paid for from the winner's
/// credit). Each bin's majority would hide an entry that is every bin's runner-up: a warp
/// that issues one cycle and waits the next would show as issuing all the time. A column
/// keeps its left neighbour's entry while that entry has cycles in it and is owed less than a
/// column's worth below the most owed, so a mixture is drawn as short runs rather than single
/// columns (each a rectangle and a tooltip in the report). A bin with one entry shows it;
/// ties go to the lower index.
pub(crate) fn row_winners<C: AsRef<[u64]>>(bins: &[C]) -> Vec<Option<usize>> {
    let mut credit: Vec<i64> = Vec::new();
    let mut previous: Option<usize> = None;
    bins.iter()
        .map(|bin| {
            let counts = bin.as_ref();
            if credit.len() < counts.len() {
                credit.resize(counts.len(), 0);
            }
            let mut best: Option<usize> = None;
            for (i, &n) in counts.iter().enumerate() {
                credit[i] += n as i64;
                if n > 0 && best.map_or(true, |b| credit[i] > credit[b]) {
                    best = Some(i);
                }
            }
            let total = counts.iter().sum::<u64>() as i64;
            let kept = previous.filter(|&p| {
                counts.get(p).is_some_and(|&n| n > 0)
                    && best.is_some_and(|b| credit[b] - credit[p] < total)
            });
            let winner = kept.or(best);
            if let Some(w) = winner {
                credit[w] -= total;
            }
            previous = winner;
            winner
        })
        .collect()
}

/// What a run of columns holds, for its tooltip: each entry's share of the cycles, largest
/// first (at most four), e.g. `selected 50%, branch_resolving 50%`.
pub(crate) fn shares<C: AsRef<[u64]>>(bins: &[C], name: impl Fn(usize) -> String) -> String {
    let mut total: Vec<u64> = Vec::new();
    for bin in bins {
        let counts = bin.as_ref();
        if total.len() < counts.len() {
            total.resize(counts.len(), 0);
        }
        for (t, &n) in total.iter_mut().zip(counts) {
            *t += n;
        }
    }
    let all: u64 = total.iter().sum();
    let mut order: Vec<usize> = (0..total.len()).filter(|&i| total[i] > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(total[i]));
    order
        .iter()
        .take(4)
        .map(|&i| {
            format!(
                "{} {:.0}%",
                name(i),
                100.0 * total[i] as f64 / all.max(1) as f64
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving at most `max_ticks` ticks over `span`.
pub(crate) fn tick_step(span: f64, max_ticks: u32) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / max_ticks.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

/// The most ticks an x axis `px` pixels long has: one per 90 pixels, at least two.
pub(crate) fn x_ticks(px: i32) -> u32 {
    (px.max(1) as f64 / 90.0).max(2.0) as u32
}

/// The values an x axis under `plot` labels: round steps, at most [`x_ticks`] of them, fewer
/// while the widest label is wider than the distance between two ticks (a narrow plot of a
/// long run: `200000` and `400000` 40 pixels apart). An axis of `whole` units has no ticks
/// between two of them.
fn x_axis_ticks(plot: &PlotArea, whole: bool) -> Vec<f64> {
    let px = plot.right - plot.left;
    let span = (plot.x_to - plot.x_from).max(f64::MIN_POSITIVE);
    let mut budget = x_ticks(px);
    loop {
        let mut step = tick_step(plot.x_to - plot.x_from, budget);
        if whole {
            step = step.max(1.0);
        }
        let mut ticks = Vec::new();
        let mut v = (plot.x_from / step).ceil() * step;
        while v <= plot.x_to + 1e-9 {
            ticks.push(v);
            v += step;
        }
        let widest = ticks
            .iter()
            .map(|&v| width_of(&tick_label(v), TEXT_LABEL))
            .max()
            .unwrap_or(0);
        let pitch = step / span * px as f64;
        if budget <= 1 || ticks.len() < 2 || pitch >= widest as f64 {
            return ticks;
        }
        budget -= 1;
    }
}

/// Formats a tick value without trailing zeros.
pub(crate) fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Chart titles.
pub const TEXT_TITLE: u32 = 18;
/// The line under the title.
pub const TEXT_SUBTITLE: u32 = 14;
/// Axis names, legend headings and group headings.
pub const TEXT_HEADING: u32 = 16;
/// Tick labels, row labels, legend entries, values beside bars, the source listing.
pub const TEXT_LABEL: u32 = 14;
/// Numbers written inside bars and cells, where the row height is the limit.
pub const TEXT_CELL: u32 = 12;
/// The smallest text any chart may draw: 12 px, 9 px in a report column of 900 px.
pub const TEXT_MIN: u32 = 12;

/// The width `chars` characters take at `size` pixels, a little over: 0.62 em each, above the
/// average glyph of the common sans-serif fonts and of monospace ones (0.6 em), so a column
/// sized by it holds its text whichever font the viewer picks.
pub const fn text_width(chars: usize, size: u32) -> i32 {
    (chars as u32 * size * 62).div_ceil(100) as i32
}

/// [`text_width`] of `s`.
pub(crate) fn width_of(s: &str, size: u32) -> i32 {
    text_width(s.chars().count(), size)
}

/// The height of a row with a label of its own (timeline, slots): room for the label and for
/// the group lines between rows.
pub(crate) const LABELLED_ROW_H: i32 = TEXT_LABEL as i32 + 5;

/// The longest Nsight state name (`math_pipe_throttle`), for the columns that list states.
pub(crate) const STATE_NAME_CHARS: usize = 18;

/// Where the title and subtitle sit (their centres), and the height they take.
const TITLE_Y: i32 = 8 + TEXT_TITLE as i32 / 2;
const SUBTITLE_Y: i32 = TITLE_Y + (TEXT_TITLE + TEXT_SUBTITLE) as i32 / 2 + 6;
/// The height of the title and subtitle on one line each.
const HEADER_H: i32 = SUBTITLE_Y + TEXT_SUBTITLE as i32 / 2 + 12;
/// The height of a title on one line with no subtitle.
const TITLE_H: i32 = TITLE_Y + TEXT_TITLE as i32 / 2 + 12;
/// The pitch of a wrapped title's or subtitle's lines.
const TITLE_PITCH: i32 = TEXT_TITLE as i32 + 4;
const SUBTITLE_PITCH: i32 = TEXT_SUBTITLE as i32 + 4;
/// The room kept free either side of a title or subtitle.
const HEADER_SIDE: i32 = 8;
/// Lines a title or subtitle may take; past them the last line ends in an ellipsis. A chart
/// narrower than [`HEADER_NARROW`] pixels allows [`HEADER_LINES_NARROW`], so that it says
/// about as much.
const HEADER_LINES: usize = 3;
const HEADER_NARROW: u32 = 900;
const HEADER_LINES_NARROW: usize = 6;

/// The most characters of text at `size` pixels that fit in `room` pixels.
fn chars_within(room: i32, size: u32) -> usize {
    let mut n = (room.max(0) as u32 * 100 / (size * 62)) as usize;
    while n > 0 && text_width(n, size) > room {
        n -= 1;
    }
    n
}

/// `s` as it fits in `room` pixels at `size`: whole if it fits, else cut and ended with `…`.
pub(crate) fn ellipsize(s: &str, size: u32, room: i32) -> std::borrow::Cow<'_, str> {
    if width_of(s, size) <= room {
        return s.into();
    }
    let keep = chars_within(room, size).saturating_sub(1);
    let cut: String = s.chars().take(keep).collect();
    format!("{}…", cut.trim_end()).into()
}

/// A break at byte `at` of `line` (a space), moved back to before the `(` of a parenthesised
/// group it would split, when that leaves the line at least half as long: `(full height: 8)`
/// goes to the next line whole rather than as `(full` and `height: 8)`.
fn unparenthesised(line: &str, at: usize) -> usize {
    match line[..at].rfind('(') {
        Some(open) if !line[open..at].contains(')') && open * 2 >= at => {
            line[..open].trim_end().len().max(1)
        }
        _ => at,
    }
}

/// `s` broken into lines of at most `room` pixels at `size`, at spaces where it can be (inside
/// a word too long for a line, after its last `/` that fits, so that paths break between
/// directories, else after a `-`, `_` or `.` between the parts of a name), at most
/// `max_lines` of them, the last cut with an ellipsis if text remains; a parenthesised group
/// moves to the next line whole ([`unparenthesised`]).
pub(crate) fn wrap(s: &str, size: u32, room: i32, max_lines: usize) -> Vec<String> {
    let fits = chars_within(room, size).max(1);
    let mut lines = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if lines.len() + 1 == max_lines || rest.chars().count() <= fits {
            lines.push(ellipsize(rest, size, room).into_owned());
            break;
        }
        // The byte index after the `fits` characters that fit.
        let end = rest.char_indices().nth(fits).map_or(rest.len(), |(i, _)| i);
        let head = &rest[..end];
        let at = if rest[end..].starts_with(' ') {
            unparenthesised(rest, end)
        } else if let Some(i) = head.rfind(' ').filter(|&i| i > 0) {
            unparenthesised(rest, i)
        } else if let Some(i) = head
            .rfind('/')
            .or_else(|| head.rfind(['-', '_', '.']))
            .filter(|&i| i > 0)
        {
            i + 1
        } else {
            end
        };
        lines.push(rest[..at].trim_end().to_string());
        rest = rest[at..].trim_start();
    }
    lines
}

/// A chart's title and optional subtitle, each wrapped to the canvas's width (a long kernel
/// name, trace path or list of compared traces would otherwise run off its sides): the chart
/// lays its content out under [`Header::height`] and draws the header with [`Canvas::header`].
pub(crate) struct Header {
    title: Vec<String>,
    subtitle: Vec<String>,
    width: u32,
}

impl Header {
    pub fn new(title: &str, subtitle: Option<&str>, width: u32) -> Header {
        let room = width as i32 - 2 * HEADER_SIDE;
        let lines = match width < HEADER_NARROW {
            true => HEADER_LINES_NARROW,
            false => HEADER_LINES,
        };
        Header {
            title: wrap(title, TEXT_TITLE, room, lines),
            subtitle: subtitle.map_or_else(Vec::new, |s| wrap(s, TEXT_SUBTITLE, room, lines)),
            width,
        }
    }

    /// The height the header takes: a chart's content starts under it.
    pub fn height(&self) -> i32 {
        let extra_title = (self.title.len().max(1) - 1) as i32 * TITLE_PITCH;
        match self.subtitle.len() {
            0 => TITLE_H + extra_title,
            n => HEADER_H + extra_title + (n - 1) as i32 * SUBTITLE_PITCH,
        }
    }

    /// Where each line goes: its text, centre height and size.
    fn lines(&self) -> impl Iterator<Item = (&str, i32, u32)> {
        let below = (self.title.len().max(1) - 1) as i32 * TITLE_PITCH;
        let title = self
            .title
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), TITLE_Y + i as i32 * TITLE_PITCH, TEXT_TITLE));
        let subtitle = self.subtitle.iter().enumerate().map(move |(i, s)| {
            let y = SUBTITLE_Y + below + i as i32 * SUBTITLE_PITCH;
            (s.as_str(), y, TEXT_SUBTITLE)
        });
        title.chain(subtitle)
    }
}

/// A note said in a chart's plot (why something is not drawn): label-sized lines wrapped to
/// the room it has, at most [`NOTE_LINES`] of them.
pub(crate) struct Note {
    whole: String,
    lines: Vec<String>,
}

/// Lines a note may take; past them the last ends with an ellipsis (the notes the charts say
/// take two lines at their own widths, eight in the room of the narrowest chart).
const NOTE_LINES: usize = 10;
/// The pitch of a note's lines.
const NOTE_PITCH: i32 = TEXT_LABEL as i32 + 6;

impl Note {
    /// `text` wrapped to `room` pixels.
    pub fn new(text: &str, room: i32) -> Note {
        Note {
            whole: text.to_string(),
            lines: wrap(text, TEXT_LABEL, room, NOTE_LINES),
        }
    }

    /// The height its lines take.
    pub fn height(&self) -> i32 {
        self.lines.len() as i32 * NOTE_PITCH
    }

    /// The text, whole (for the hover region over it).
    pub fn text(&self) -> &str {
        &self.whole
    }
}

/// The x axis under a plot: tick length, the centres of the tick labels and of the axis name
/// below the plot, and the height it takes.
const TICK: i32 = 5;
const TICK_LABEL_DY: i32 = TICK + 4 + TEXT_LABEL as i32 / 2;
const AXIS_NAME_DY: i32 = TICK_LABEL_DY + (TEXT_LABEL + TEXT_HEADING) as i32 / 2 + 5;
/// The space an x axis takes under the plot: a chart's bottom margin.
pub(crate) const AXIS_H: i32 = AXIS_NAME_DY + TEXT_HEADING as i32 / 2 + 10;

/// A legend's rows: the swatch and the gap after it, and the pitch of the rows.
pub(crate) const SWATCH: i32 = TEXT_LABEL as i32 - 1;
pub(crate) const SWATCH_GAP: i32 = 6;
pub(crate) const LEGEND_ROW: i32 = TEXT_LABEL as i32 + 7;

/// The width of a legend entry whose name has `chars` characters.
pub(crate) const fn legend_entry_width(chars: usize) -> i32 {
    SWATCH + SWATCH_GAP + text_width(chars, TEXT_LABEL)
}

/// A legend: sections of a heading (may be empty) and its entries, a swatch and a name each.
pub(crate) type Legend<'a> = [(&'a str, Vec<(Rgb, String)>)];

/// The height of a vertical legend ([`Canvas::legend`]; sections without entries are left out).
pub(crate) fn legend_height(legend: &Legend) -> i32 {
    legend
        .iter()
        .filter(|(_, entries)| !entries.is_empty())
        .map(|(heading, entries)| {
            LEGEND_ROW * (entries.len() as i32 + i32::from(!heading.is_empty()))
        })
        .sum()
}

/// Where the entries of a legend laid out across, from `x` to at most `right`, go: their
/// offsets from the legend's top left corner, a new row when the next entry would not fit.
fn across(x: i32, right: i32, entries: &[(Rgb, String)]) -> Vec<(i32, i32)> {
    flow(
        x,
        right,
        entries
            .iter()
            .map(|(_, name)| legend_entry_width(name.chars().count())),
    )
}

/// [`across`] for entries `widths` pixels wide.
pub(crate) fn flow(x: i32, right: i32, widths: impl IntoIterator<Item = i32>) -> Vec<(i32, i32)> {
    let (mut dx, mut dy) = (0, 0);
    let mut at = Vec::new();
    for w in widths {
        if dx > 0 && x + dx + w > right {
            dx = 0;
            dy += LEGEND_ROW;
        }
        at.push((dx, dy));
        dx += w + 2 * TEXT_LABEL as i32;
    }
    at
}

/// The height of a legend laid out across ([`Canvas::legend_across`]).
pub(crate) fn legend_across_height(x: i32, right: i32, entries: &[(Rgb, String)]) -> i32 {
    across(x, right, entries)
        .last()
        .map_or(0, |&(_, dy)| dy + LEGEND_ROW)
}

/// Whether a chart `width` pixels wide, its plot starting at `left`, draws its legend beside
/// the plot, in a right margin of `margin` pixels: when the plot keeps at least three fifths of
/// the width that way; else the legend goes under the x axis ([`Canvas::legend_below`]).
pub(crate) fn legend_beside(width: u32, left: i32, margin: i32) -> bool {
    (width as i32 - left - margin) * 5 >= width as i32 * 3
}

/// A chart whose legend goes beside its plot where it fits ([`legend_beside`]), else under
/// its x axis: its width and where its plot ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub width: u32,
    pub right: i32,
    pub beside: bool,
}

impl Layout {
    /// A chart `width` pixels wide, its plot from `left`, a legend beside it taking `margin`.
    pub fn of(width: u32, left: i32, margin: i32) -> Layout {
        let beside = legend_beside(width, left, margin);
        let margin = if beside { margin } else { BARE_RIGHT_MARGIN };
        Layout {
            width,
            right: width as i32 - margin,
            beside,
        }
    }

    /// A chart `width` pixels wide whose legend goes under its x axis at every width.
    pub fn below(width: u32) -> Layout {
        Layout {
            width,
            right: width as i32 - BARE_RIGHT_MARGIN,
            beside: false,
        }
    }

    /// The right edge of a legend under the plot.
    fn legend_right(&self) -> i32 {
        self.width as i32 - LEGEND_BELOW_X
    }

    /// The chart's height: the plot and its x axis, and the legend beside it (with `pad`
    /// pixels under it) or under the axis. A legend beside a plot of few rows reaches below
    /// the axis, and ends the chart [`LEGEND_BOTTOM_MARGIN`] under its last entry.
    pub fn height(&self, plot: &PlotArea, legend: &Legend, pad: i32) -> u32 {
        let h = match self.beside {
            true => (plot.bottom + AXIS_H)
                .max(plot.top + legend_height(legend) + pad + LEGEND_BOTTOM_MARGIN),
            false => {
                plot.bottom
                    + AXIS_H
                    + legend_below_height(LEGEND_BELOW_X, self.legend_right(), legend)
            }
        };
        h as u32
    }
}

/// The right margin of a plot with no legend beside it: half the widest tick label at the
/// axis's right end (as long as `12345678`).
pub(crate) const BARE_RIGHT_MARGIN: i32 = 8 + text_width(4, TEXT_LABEL);

/// The left edge of a legend under the x axis.
pub(crate) const LEGEND_BELOW_X: i32 = 16;

/// The room under a legend that reaches below its plot's x axis.
const LEGEND_BOTTOM_MARGIN: i32 = 8;

/// The height of a legend under a plot's x axis ([`Canvas::legend_below`]), from `x` to at most
/// `right`, with the gap above it.
pub(crate) fn legend_below_height(x: i32, right: i32, legend: &Legend) -> i32 {
    let sections: i32 = legend
        .iter()
        .filter(|(_, entries)| !entries.is_empty())
        .map(|(heading, entries)| {
            LEGEND_ROW * i32::from(!heading.is_empty()) + legend_across_height(x, right, entries)
        })
        .sum();
    match sections {
        0 => 0,
        h => h + LEGEND_BELOW_GAP,
    }
}

/// Between the x axis's name and a legend under it.
const LEGEND_BELOW_GAP: i32 = 4;

/// Which labels of a column of rows are drawn: a label only where it clears the last one drawn,
/// so that rows thinner than the text are labelled every few rows instead of overprinted.
pub(crate) struct LabelColumn {
    free_from: i32,
}

impl LabelColumn {
    pub fn new() -> LabelColumn {
        LabelColumn {
            free_from: i32::MIN,
        }
    }

    /// Whether a label of `size` centred at `y` fits; if so, it takes its place.
    pub fn fits(&mut self, y: i32, size: u32) -> bool {
        let half = size as i32 / 2 + 1;
        if y - half < self.free_from {
            return false;
        }
        self.free_from = y + half;
        true
    }
}

/// The font size to give plotters for text `px` pixels high: its SVG backend writes
/// `size / 1.24` (a points-to-pixels factor). For the sizes above the quotient is exactly `px`;
/// for some (13, 15) no float is, and the SVG would say `13.000000000000002`.
fn plotters_size(px: u32) -> f64 {
    px as f64 * 1.24
}

fn draw_err<E: std::fmt::Debug>(e: E) -> RenderError {
    RenderError::Draw(format!("{e:?}"))
}

/// Text alignment for [`Canvas::text`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Align {
    Left,
    Centre,
    Right,
}

/// A thin layer over plotters' SVG drawing area in pixel coordinates.
pub(crate) struct Canvas<'a> {
    area: DrawingArea<SVGBackend<'a>, Shift>,
    width: u32,
}

impl<'a> Canvas<'a> {
    pub fn new(svg: &'a mut String, width: u32, height: u32) -> Result<Self, RenderError> {
        let area = SVGBackend::with_string(svg, (width, height)).into_drawing_area();
        area.fill(&palette::BACKGROUND.plotters())
            .map_err(draw_err)?;
        Ok(Canvas { area, width })
    }

    /// A filled rectangle covering pixels `[x0, x1) × [y0, y1)`.
    pub fn rect(&self, x0: i32, y0: i32, x1: i32, y1: i32, c: Rgb) -> Result<(), RenderError> {
        if x1 <= x0 || y1 <= y0 {
            return Ok(());
        }
        // The SVG backend writes `width = x1 - x0`: the far corner is exclusive.
        self.area
            .draw(&Rectangle::new([(x0, y0), (x1, y1)], c.plotters().filled()))
            .map_err(draw_err)
    }

    /// A rectangle outline.
    pub fn frame(&self, x0: i32, y0: i32, x1: i32, y1: i32, c: Rgb) -> Result<(), RenderError> {
        self.area
            .draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                c.plotters().stroke_width(1),
            ))
            .map_err(draw_err)
    }

    /// A filled polygon.
    pub fn polygon(&self, points: Vec<(i32, i32)>, c: Rgb) -> Result<(), RenderError> {
        self.area
            .draw(&Polygon::new(points, c.plotters().filled()))
            .map_err(draw_err)
    }

    pub fn line(&self, points: Vec<(i32, i32)>, c: Rgb, width: u32) -> Result<(), RenderError> {
        self.area
            .draw(&PathElement::new(points, c.plotters().stroke_width(width)))
            .map_err(draw_err)
    }

    /// The rule at `top` between two groups of a chart's rows, inside the plot (under a row's
    /// label a rule reads as an underline): between SMs a dark line two pixels thick, so that
    /// SMs read as blocks; between the schedulers of one SM a light hairline. The slots and
    /// timeline charts draw both.
    pub fn row_rule(&self, plot: &PlotArea, top: i32, new_sm: bool) -> Result<(), RenderError> {
        let ends = vec![(plot.left, top), (plot.right, top)];
        match new_sm {
            true => self.line(ends, palette::INK, 2),
            false => self.line(ends, palette::GRID, 1),
        }
    }

    pub fn text(
        &self,
        s: &str,
        (x, y): (i32, i32),
        size: u32,
        c: Rgb,
        align: Align,
        family: &str,
    ) -> Result<(), RenderError> {
        let h = match align {
            Align::Left => HPos::Left,
            Align::Centre => HPos::Center,
            Align::Right => HPos::Right,
        };
        let colour = c.plotters();
        let style = TextStyle::from((family, plotters_size(size)).into_font())
            .color(&colour)
            .pos(Pos::new(h, VPos::Center));
        self.area
            .draw(&Text::new(s.to_string(), (x, y), style))
            .map_err(draw_err)
    }

    /// The title and subtitle ([`Header`]).
    pub fn header(&self, header: &Header) -> Result<(), RenderError> {
        for (s, y, size) in header.lines() {
            self.text(
                s,
                (header.width as i32 / 2, y),
                size,
                palette::INK,
                Align::Centre,
                "sans-serif",
            )?;
        }
        Ok(())
    }

    /// A [`Note`] from `(x, y)` downwards ([`Note::height`] high), each line aligned at `x`.
    pub fn note(&self, note: &Note, (x, y): (i32, i32), align: Align) -> Result<(), RenderError> {
        for (i, line) in note.lines.iter().enumerate() {
            let centre = y + i as i32 * NOTE_PITCH + NOTE_PITCH / 2;
            self.text(
                line,
                (x, centre),
                TEXT_LABEL,
                palette::INK,
                align,
                "sans-serif",
            )?;
        }
        Ok(())
    }

    /// Text in one of the label roles: a tick, row or legend label ([`TEXT_LABEL`]).
    pub fn label(&self, s: &str, at: (i32, i32), align: Align) -> Result<(), RenderError> {
        self.text(s, at, TEXT_LABEL, palette::INK, align, "sans-serif")
    }

    /// A heading: an axis name, legend heading or group heading ([`TEXT_HEADING`]).
    pub fn heading(&self, s: &str, at: (i32, i32), align: Align) -> Result<(), RenderError> {
        self.text(s, at, TEXT_HEADING, palette::INK, align, "sans-serif")
    }

    /// The x axis under `plot`: ticks, labels and the axis name (it takes [`AXIS_H`] pixels).
    /// An axis of `whole` units (cycles, counts) has no ticks between two of them, however far
    /// it is zoomed.
    pub fn x_axis(&self, plot: &PlotArea, name: &str, whole: bool) -> Result<(), RenderError> {
        self.line(
            vec![(plot.left, plot.bottom), (plot.right, plot.bottom)],
            palette::INK,
            1,
        )?;
        for v in x_axis_ticks(plot, whole) {
            let x = plot.x(v);
            self.line(
                vec![(x, plot.bottom), (x, plot.bottom + TICK)],
                palette::INK,
                1,
            )?;
            self.label(
                &tick_label(v),
                (x, plot.bottom + TICK_LABEL_DY),
                Align::Centre,
            )?;
        }
        // Centred under the plot, or as near as the canvas lets it be (a narrow chart's plot
        // is narrower than a long axis name).
        let room = self.width as i32 - 2 * HEADER_SIDE;
        let name = ellipsize(name, TEXT_HEADING, room);
        let half = (width_of(&name, TEXT_HEADING) + 1) / 2;
        let centre = ((plot.left + plot.right) / 2)
            .min(self.width as i32 - HEADER_SIDE - half)
            .max(HEADER_SIDE + half);
        self.heading(&name, (centre, plot.bottom + AXIS_NAME_DY), Align::Centre)
    }

    /// One legend entry: a swatch and its name, `(x, y)` the swatch's top left corner.
    fn legend_entry(&self, (x, y): (i32, i32), c: Rgb, name: &str) -> Result<(), RenderError> {
        self.rect(x, y, x + SWATCH, y + SWATCH, c)?;
        self.frame(x, y, x + SWATCH, y + SWATCH, palette::INK)?;
        self.label(name, (x + SWATCH + SWATCH_GAP, y + SWATCH / 2), Align::Left)
    }

    /// A vertical legend from `(x, y)` downwards, [`legend_height`] high: per section its
    /// heading, then a row per entry.
    pub fn legend(&self, (x, y): (i32, i32), legend: &Legend) -> Result<(), RenderError> {
        let mut top = y;
        for (heading, entries) in legend.iter().filter(|(_, e)| !e.is_empty()) {
            if !heading.is_empty() {
                self.heading(heading, (x, top + SWATCH / 2), Align::Left)?;
                top += LEGEND_ROW;
            }
            for (c, name) in entries {
                self.legend_entry((x, top), *c, name)?;
                top += LEGEND_ROW;
            }
        }
        Ok(())
    }

    /// A legend laid out across from `(x, y)`, rows wrapping before `right`;
    /// [`legend_across_height`] high.
    pub fn legend_across(
        &self,
        (x, y): (i32, i32),
        right: i32,
        entries: &[(Rgb, String)],
    ) -> Result<(), RenderError> {
        for ((c, name), (dx, dy)) in entries.iter().zip(across(x, right, entries)) {
            self.legend_entry((x + dx, y + dy), *c, name)?;
        }
        Ok(())
    }

    /// A legend under a plot's x axis, from `(x, y)` ([`legend_below_height`] high): per
    /// section its heading, then its entries across, rows wrapping before `right`.
    pub fn legend_below(
        &self,
        (x, y): (i32, i32),
        right: i32,
        legend: &Legend,
    ) -> Result<(), RenderError> {
        let mut top = y + LEGEND_BELOW_GAP;
        for (heading, entries) in legend.iter().filter(|(_, e)| !e.is_empty()) {
            if !heading.is_empty() {
                self.heading(heading, (x, top + SWATCH / 2), Align::Left)?;
                top += LEGEND_ROW;
            }
            self.legend_across((x, top), right, entries)?;
            top += legend_across_height(x, right, entries);
        }
        Ok(())
    }

    /// The legend where `layout` puts it: beside `plot` or under its x axis.
    pub fn legend_placed(
        &self,
        layout: &Layout,
        plot: &PlotArea,
        legend: &Legend,
    ) -> Result<(), RenderError> {
        match layout.beside {
            true => self.legend((plot.right + 20, plot.top + 4), legend),
            false => self.legend_below(
                (LEGEND_BELOW_X, plot.bottom + AXIS_H),
                layout.legend_right(),
                legend,
            ),
        }
    }

    pub fn finish(self) -> Result<(), RenderError> {
        self.area.present().map_err(draw_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::NsightState;

    #[test]
    fn ticks_are_round_numbers_within_the_budget() {
        assert_eq!(tick_step(239.0, 10), 50.0);
        assert_eq!(tick_step(10_000.0, 10), 1000.0);
        assert_eq!(tick_step(3.0, 10), 0.5);
        assert_eq!(tick_label(0.5), "0.5");
        assert_eq!(tick_label(200.0), "200");
    }

    #[test]
    fn a_row_shows_its_entries_in_proportion_to_their_cycles() {
        // One entry alone, or none, whatever the credit.
        assert_eq!(
            row_winners(&[[0, 6], [0, 0], [6, 0]]),
            vec![Some(1), None, Some(0)]
        );
        // Half and half in every bin: runs of two columns alternate (each bin's majority
        // would be entry 0 throughout).
        assert_eq!(
            row_winners(&[[3, 3]; 6]),
            vec![Some(0), Some(1), Some(1), Some(0), Some(0), Some(1)]
        );
        // A runner-up with a sixth of every bin gets about a sixth of the columns.
        let w = row_winners(&[[5u64, 1]; 60]);
        assert_eq!(w.iter().filter(|&&c| c == Some(1)).count(), 10);
        // An entry absent from a bin is never drawn there, whatever it is owed.
        let w = row_winners(&[[1u64, 5], [0, 6], [0, 6]]);
        assert_eq!(w, vec![Some(1), Some(1), Some(1)]);
        assert_eq!(
            shares(&[[3u64, 1, 0], [3, 1, 0]], |i| format!("s{i}")),
            "s0 75%, s1 25%"
        );
        assert_eq!(bin_cycles(10_000, 1000), 10);
        assert_eq!(bin_cycles(239, 1000), 1);
    }

    #[test]
    fn oversized_charts_halve_their_columns_until_they_fit() {
        let cycles = 100_000u64;
        let mut asked = Vec::new();
        let c = within_size(|columns| {
            asked.push(columns);
            let bin = bin_cycles(cycles, columns.min(880));
            let wide = cycles.div_ceil(bin) as usize;
            Ok(Chart {
                kind: ChartKind::Timeline,
                // 5 kB per column: 878 columns are far over the bound, 439 still over.
                svg: "x".repeat(wide * 5000),
                width: 1,
                height: 1,
                plot: PlotArea {
                    left: 0,
                    top: 0,
                    right: 880,
                    bottom: 1,
                    x_from: 0.0,
                    x_to: cycles as f64,
                },
                rows: Vec::new(),
                regions: Vec::new(),
                bin_cycles: bin,
            })
        })
        .unwrap();
        assert_eq!(asked, vec![i32::MAX, 439, 219]);
        // The one pass over the trace fills every binning the halving asks for.
        let levels = bin_levels(cycles, 880);
        for columns in asked {
            assert!(
                levels.contains(&bin_cycles(cycles, columns.min(880))),
                "{levels:?}"
            );
        }
        assert_eq!(bin_levels(500, 880), vec![1, 2, 4, 9, 16]);
        assert!(c.svg.len() <= MAX_SVG_BYTES);
        assert_eq!(c.bin_cycles, bin_cycles(cycles, 219));
    }

    #[test]
    fn svg_text_is_the_size_asked_for() {
        // Plotters divides by 1.24; the SVG must say the whole pixel size, not 13.000…002.
        for px in [
            TEXT_TITLE,
            TEXT_SUBTITLE,
            TEXT_HEADING,
            TEXT_LABEL,
            TEXT_CELL,
        ] {
            assert!(px >= TEXT_MIN, "{px}");
            assert_eq!(format!("{}", plotters_size(px) / 1.24), px.to_string());
        }
        for s in NsightState::ALL {
            assert!(s.name().chars().count() <= STATE_NAME_CHARS, "{}", s.name());
        }
    }

    #[test]
    fn headers_wrap_at_spaces_then_slashes_then_name_parts_and_cut_the_rest_with_an_ellipsis() {
        let room = text_width(20, TEXT_TITLE);
        assert_eq!(wrap("short", TEXT_TITLE, room, 2), ["short"]);
        assert_eq!(
            wrap("one two three four five six", TEXT_TITLE, room, 2),
            ["one two three four", "five six"]
        );
        let path = "/home/user/traces/run-1/reduce.small.gto.wstrace";
        assert_eq!(
            wrap(path, TEXT_TITLE, room, 3),
            ["/home/user/traces/", "run-1/", "reduce.small.gto.ws…"]
        );
        assert_eq!(
            wrap("sweep-of-policies-on-volta.gto", TEXT_TITLE, room, 2),
            ["sweep-of-policies-", "on-volta.gto"]
        );
        // A parenthesised group moves to the next line whole, unless that would leave the
        // line less than half full.
        assert_eq!(
            wrap("columns of 12 (full height: 8)", TEXT_TITLE, room, 2),
            ["columns of 12", "(full height: 8)"]
        );
        assert_eq!(
            wrap("a (one two three four five)", TEXT_TITLE, room, 2),
            ["a (one two three", "four five)"]
        );
        let lines = wrap(&"word ".repeat(30), TEXT_TITLE, room, 2);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'), "{lines:?}");
        assert!(lines.iter().all(|l| width_of(l, TEXT_TITLE) <= room));
        assert_eq!(
            ellipsize("abcdef", TEXT_LABEL, text_width(4, TEXT_LABEL)),
            "abc…"
        );
        assert_eq!(
            ellipsize("abcd", TEXT_LABEL, text_width(4, TEXT_LABEL)),
            "abcd"
        );
        // A header on one line each takes what it took before wrapping existed.
        assert_eq!(Header::new("t", Some("s"), 1000).height(), HEADER_H);
        assert_eq!(Header::new("t", None, 1000).height(), TITLE_H);
        let long = "x ".repeat(200);
        let three = Header::new(&long, Some(&long), 1000);
        assert_eq!(
            three.height(),
            HEADER_H + 2 * TITLE_PITCH + 2 * SUBTITLE_PITCH
        );
    }

    #[test]
    fn thin_rows_are_labelled_only_where_a_label_fits() {
        let mut labels = LabelColumn::new();
        let drawn: Vec<i32> = (0..10)
            .map(|row| row * 4)
            .filter(|&y| labels.fits(y, TEXT_LABEL))
            .collect();
        assert_eq!(drawn, vec![0, 16, 32]);
        let entries = vec![(palette::INK, "x".repeat(40)); 3];
        assert_eq!(legend_across_height(0, 2000, &entries), LEGEND_ROW);
        assert_eq!(legend_across_height(0, 500, &entries), 3 * LEGEND_ROW);
    }

    #[test]
    fn chart_names_round_trip_and_unknown_names_are_errors() {
        for k in ChartKind::ALL {
            assert_eq!(ChartKind::from_name(k.name()).unwrap(), k);
        }
        let e = ChartKind::from_name("pie").unwrap_err().to_string();
        assert!(e.contains("unknown chart `pie`"), "{e}");
    }
}
