//! The report: one or more traces analyzed, their charts rendered, and — with several traces —
//! the comparison, as one self-contained `index.html` ([`html::page`]), a plain-text
//! `report.txt` and a `report.json`. Built from traces alone, in memory; the caller writes the
//! files.

pub mod html;

use crate::analyze::compare::{self, Compared, Comparison};
use crate::analyze::{render_text, Analysis, NsightState, Taxonomy};
use crate::render::{self, ChartKind, RenderOptions};
use crate::trace::{TraceError, TraceHeader};
use serde_json::json;
use std::path::PathBuf;

/// A rendered chart as the page shows it: the SVG with its tooltip regions overlaid.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The chart's name (`timeline`, ...): the report also writes it as `NAME.svg`.
    pub name: &'static str,
    pub caption: String,
    /// What the chart cannot show of these traces, said beside it on the page: the parts
    /// drawn from warp states, for a trace recorded without them (`--verbosity 0`).
    pub note: Option<String>,
    /// The SVG as `render` drew it.
    pub svg: String,
    /// The SVG with its tooltip regions overlaid, as the page inlines it.
    pub page_svg: String,
}

/// The charts of one trace, in page order, with what each shows.
const TRACE_CHARTS: [(ChartKind, &str); 6] = [
    (ChartKind::Stalls, "Warp-cycles per issued instruction by state."),
    (ChartKind::Timeline, "Every warp slot's state over time, grouped by SM and scheduler (where a column spans several cycles, each row shows its states in proportion to their cycles; hover for the shares)."),
    (ChartKind::Dispatch, "Blocks on SMs over time: a bar per block with its number, or past 4,096 blocks a band per SM of the blocks resident."),
    (ChartKind::Occupancy, "Active and eligible warps per scheduler (left axis) and warp instructions issued per cycle (IPC, right axis), over time."),
    (ChartKind::Slots, "Issue slots over time, coloured by warp; refill and waste marked."),
    (ChartKind::Source, "The listing with each instruction's warp-cycles by state."),
];

/// Adds the chart's hover regions to its SVG as invisible rectangles with `<title>`s, which
/// browsers show as tooltips and the page's script shows on tap.
fn with_tooltips(chart: &render::Chart) -> String {
    let mut overlay = String::from("<g class=\"tips\" fill=\"transparent\">");
    for r in &chart.regions {
        overlay.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
            r.x,
            r.y,
            r.width.max(1),
            r.height.max(1),
            html::esc(&r.text)
        ));
    }
    overlay.push_str("</g></svg>");
    match chart.svg.rfind("</svg>") {
        Some(i) => format!("{}{}{}", &chart.svg[..i], overlay, &chart.svg[i + 6..]),
        None => chart.svg.clone(),
    }
}

/// A chart with nothing to draw: its name and why, in a box of the width the charts are
/// laid out at (640 pixels unless the report was asked for a width), the text cut with an
/// ellipsis where it would run past the box.
fn empty_chart(kind: ChartKind, why: &str, width: Option<u32>) -> String {
    let width = width.unwrap_or(640);
    let text = format!("{}: {}", kind.name(), why);
    let text = render::ellipsize(&text, render::TEXT_LABEL, width as i32 - 24);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"60\" viewBox=\"0 0 {width} 60\">\
         <rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"59\" fill=\"none\" stroke=\"#999\"/>\
         <text x=\"12\" y=\"35\" font-family=\"sans-serif\" font-size=\"14\" fill=\"#666\">{}</text></svg>",
        width - 1,
        html::esc(&text)
    )
}

/// What chart `kind` of `traces` cannot show ([`Chart::note`]): for one trace, the chart's
/// own note; for several, which of them it says it for.
fn states_note(kind: ChartKind, traces: &[render::Loaded]) -> Option<String> {
    let missing: Vec<&str> = traces
        .iter()
        .filter(|t| !t.states_recorded())
        .map(|t| t.label.as_str())
        .collect();
    let part = kind.drawn_from_warp_states()?;
    match (missing.as_slice(), traces.len()) {
        ([], _) => None,
        (_, 1) => kind.states_not_recorded(),
        (some, _) => Some(format!(
            "No {part} for {}: {}.",
            some.join(", "),
            render::STATES_NOT_RECORDED
        )),
    }
}

/// Chart `kind` of `traces`, laid out `width` pixels wide (`None`: the chart's own width).
fn render_chart(
    kind: ChartKind,
    traces: &[render::Loaded],
    caption: &str,
    width: Option<u32>,
) -> Result<Chart, ReportError> {
    let note = states_note(kind, traces);
    let options = RenderOptions {
        width,
        ..RenderOptions::default()
    };
    let chart = match render::chart_of(kind, traces, &options) {
        Ok(chart) => chart,
        // A run stopped before any warp ran still gets its report (a fault is what it is
        // for): the chart says why it is empty.
        Err(render::RenderError::Empty { message, .. }) => {
            let svg = empty_chart(kind, &message, width);
            return Ok(Chart {
                name: kind.name(),
                caption: caption.to_string(),
                note,
                page_svg: svg.clone(),
                svg,
            });
        }
        Err(e) => {
            return Err(ReportError::Chart {
                path: traces.first().map(|t| t.path.clone()).unwrap_or_default(),
                chart: kind.name(),
                message: e.to_string(),
            })
        }
    };
    Ok(Chart {
        name: kind.name(),
        caption: caption.to_string(),
        note,
        page_svg: with_tooltips(&chart),
        svg: chart.svg,
    })
}

/// One trace of the report.
#[derive(Debug, Clone)]
pub struct TraceReport {
    pub label: String,
    pub path: PathBuf,
    pub header: TraceHeader,
    pub analysis: Analysis,
    /// The trace's charts (all its launches), in page order.
    pub charts: Vec<Chart>,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub traces: Vec<TraceReport>,
    /// With two or more traces: the first is the baseline.
    pub comparison: Option<Comparison>,
    pub comparison_charts: Vec<Chart>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Trace {
        path: PathBuf,
        #[source]
        source: TraceError,
    },
    #[error("{path}: chart {chart}: {message}")]
    Chart {
        path: PathBuf,
        chart: &'static str,
        message: String,
    },
    #[error("a report needs at least one trace")]
    NoTraces,
    /// The charts' width is outside what they can be laid out at, said as `render` says it.
    #[error("{}", render::RenderError::BadWidth { width: *width })]
    BadWidth { width: u32 },
}

/// The colour of a warp state in every chart and table.
pub fn state_colour(s: NsightState) -> String {
    render::palette::state_colour(s).hex()
}

/// Reads and analyzes `paths` and renders their charts, `width` pixels wide ([`MIN_WIDTH`] to
/// [`MAX_WIDTH`]; `None`: each chart's own width). The page inlines the same charts the
/// report writes as files, so they are drawn once, at that width.
///
/// [`MIN_WIDTH`]: render::MIN_WIDTH
/// [`MAX_WIDTH`]: render::MAX_WIDTH
pub fn build(paths: &[PathBuf], width: Option<u32>) -> Result<Report, ReportError> {
    if paths.is_empty() {
        return Err(ReportError::NoTraces);
    }
    if let Some(width) = width.filter(|w| !(render::MIN_WIDTH..=render::MAX_WIDTH).contains(w)) {
        return Err(ReportError::BadWidth { width });
    }
    let labels = crate::trace_label::labels(paths);
    let mut traces = Vec::new();
    for (path, label) in paths.iter().zip(labels) {
        // The analysis and the charts' first pass read the trace side by side (an error of
        // the analysis is the one reported, as when they ran one after the other).
        let (c, loaded) = std::thread::scope(|scope| {
            let first_pass = scope.spawn(|| render::load(path));
            let c = Compared::load(path, label.clone(), Taxonomy::Nsight);
            let loaded = first_pass
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (c, loaded)
        });
        let c = c.map_err(|source| ReportError::Trace {
            path: path.clone(),
            source,
        })?;
        let mut loaded = [loaded.map_err(|e| ReportError::Chart {
            path: path.clone(),
            chart: "model",
            message: e.to_string(),
        })?];
        loaded[0].label = label;
        // The stalls and source charts draw this same analysis: not read again for them.
        let _ = loaded[0].analysis.set(c.analysis.clone());
        // Each chart reads the trace on its own: drawn side by side, on every core. Results
        // are collected in page order, so the report does not depend on which ends first.
        let charts = std::thread::scope(|scope| {
            let loaded = &loaded;
            let drawing: Vec<_> = TRACE_CHARTS
                .iter()
                .map(|(kind, caption)| {
                    scope.spawn(move || render_chart(*kind, loaded, caption, width))
                })
                .collect();
            drawing
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect::<Result<Vec<_>, _>>()
        })?;
        traces.push(TraceReport {
            label: c.label,
            path: path.clone(),
            header: c.header,
            analysis: c.analysis,
            charts,
        });
    }
    let (comparison, comparison_charts) = if traces.len() > 1 {
        let compared: Vec<Compared> = traces
            .iter()
            .map(|t| Compared {
                label: t.label.clone(),
                header: t.header.clone(),
                analysis: t.analysis.clone(),
            })
            .collect();
        let loaded = paths
            .iter()
            .zip(&traces)
            .map(|(p, t)| {
                let mut l = render::load(p).map_err(|e| ReportError::Chart {
                    path: p.clone(),
                    chart: "model",
                    message: e.to_string(),
                })?;
                l.label = t.label.clone();
                let _ = l.analysis.set(t.analysis.clone());
                Ok(l)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let stalls = render_chart(
            ChartKind::Stalls,
            &loaded,
            "Warp-cycles per issued instruction by state, one row per trace (a study trace's schemes a row each).",
            width,
        )?;
        (Some(compare::compare(&compared, 1)), vec![stalls])
    } else {
        (None, Vec::new())
    };
    Ok(Report {
        traces,
        comparison,
        comparison_charts,
    })
}

/// `report.txt`: the analyzer's text of each trace, then the comparison.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    for t in &report.traces {
        out.push_str(&format!("== {}\n", t.label));
        out.push_str(&render_text(&t.analysis));
        out.push('\n');
    }
    if let Some(c) = &report.comparison {
        out.push_str(&compare::render_text(c));
    }
    out
}

/// `report.json`: `{"traces": [{"trace": LABEL, "analysis": ANALYSIS}], "comparison": ...}`
/// with the analysis and comparison objects as `analyze --format json` and `compare --format
/// json` print them.
pub fn json(report: &Report) -> String {
    let traces: Vec<_> = report
        .traces
        .iter()
        .map(|t| json!({"trace": t.label, "analysis": t.analysis}))
        .collect();
    let v = json!({"traces": traces, "comparison": report.comparison});
    serde_json::to_string_pretty(&v).expect("a report serializes") + "\n"
}
