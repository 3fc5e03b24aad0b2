//! The report: one or more traces analyzed, their charts rendered, and — with several traces —
//! the comparison, as one self-contained `index.html` ([`html::page`]), a plain-text
//! `report.txt` and a `report.json`. Built from traces alone, in memory; the caller writes the
//! files.

pub mod html;

use crate::analyze::compare::{self, Compared, Comparison};
use crate::analyze::{render_text, Analysis, NsightState, Taxonomy};
use crate::trace::{TraceError, TraceHeader};
use serde_json::json;
use std::path::PathBuf;

/// A rendered chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub caption: String,
    pub svg: String,
}

/// One trace of the report.
#[derive(Debug, Clone)]
pub struct TraceReport {
    pub label: String,
    pub path: PathBuf,
    pub header: TraceHeader,
    pub analysis: Analysis,
    /// Charts per launch, in launch order.
    pub charts: Vec<Vec<Chart>>,
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
}

/// The colour of a warp state in every chart and table.
pub fn state_colour(s: NsightState) -> &'static str {
    // Replaced by the chart palette once it lands.
    match s {
        NsightState::Selected => "#009E73",
        NsightState::NotSelected => "#56B4E9",
        NsightState::LongScoreboard => "#D55E00",
        NsightState::ShortScoreboard => "#E69F00",
        NsightState::Wait => "#F0E442",
        NsightState::Barrier => "#CC79A7",
        _ => "#999999",
    }
}

/// Reads and analyzes `paths` and renders their charts.
pub fn build(paths: &[PathBuf]) -> Result<Report, ReportError> {
    if paths.is_empty() {
        return Err(ReportError::NoTraces);
    }
    let mut traces = Vec::new();
    for path in paths {
        let c = Compared::load(path, Taxonomy::Nsight).map_err(|source| ReportError::Trace {
            path: path.clone(),
            source,
        })?;
        let charts = charts::for_trace(path, &c.analysis)?;
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
        (
            Some(compare::compare(&compared, 1)),
            charts::for_comparison(paths)?,
        )
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

mod charts {
    //! Which charts the report shows, from `crate::render`.
    use super::{Chart, ReportError};
    use crate::analyze::Analysis;
    use std::path::{Path, PathBuf};

    pub fn for_trace(_path: &Path, analysis: &Analysis) -> Result<Vec<Vec<Chart>>, ReportError> {
        Ok(analysis.launches.iter().map(|_| Vec::new()).collect())
    }

    pub fn for_comparison(_paths: &[PathBuf]) -> Result<Vec<Chart>, ReportError> {
        Ok(Vec::new())
    }
}
