//! `warpscope report TRACE [MORE...] -o DIR`: index.html (self-contained), report.txt and
//! report.json for one trace, or a comparison of several (the first is the baseline).

use super::{emit, write_file_atomically};
use anyhow::Result;
use clap::Args;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warpscope::report::{self, Report};

pub const EXAMPLES: &str = "\
Examples:
  warpscope report traces/reduce.small.gto.wstrace -o report-reduce
  warpscope report traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace -o gto-vs-lrr

Writes DIR/index.html (one file: tables, inline SVG charts with tooltips, light and dark
scheme, no network access), the charts as DIR/CHART.svg (for several traces only the stall comparison, DIR/stalls.svg; the page has every chart), DIR/report.txt (as `analyze` prints it) and DIR/report.json:
{\"traces\": [{\"trace\", \"analysis\"}], \"comparison\"}, each analysis as `analyze --format json`
prints it and the comparison (null for one trace) as `compare --format json`. With several traces
the first is the baseline of the comparison.";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Traces written by `warpscope record`; the first is the baseline when there are several.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Directory for index.html, report.txt and report.json (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
}

/// Writes the report's three files into `dir`; returns the path of index.html.
pub(super) fn write_report(dir: &Path, report: &Report) -> Result<PathBuf> {
    super::create_output_dir(dir)?;
    let files = [
        ("index.html", report::html::page(report)),
        ("report.txt", report::text(report)),
        ("report.json", report::json(report)),
    ];
    for (name, content) in &files {
        write_file_atomically(&dir.join(name), |w| Ok(w.write_all(content.as_bytes())?))?;
    }
    // The charts also as files, for papers and slides (one trace: its charts; several: the
    // comparison's).
    let charts = match report.traces.as_slice() {
        [t] => &t.charts,
        _ => &report.comparison_charts,
    };
    for c in charts {
        let path = dir.join(format!("{}.svg", c.name));
        write_file_atomically(&path, |w| Ok(w.write_all(c.svg.as_bytes())?))?;
    }
    Ok(dir.join("index.html"))
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    for t in &args.traces {
        super::expect_warpscope_trace(t)?;
    }
    let report = report::build(&args.traces)?;
    let index = write_report(&args.output, &report)?;
    emit(&format!(
        "wrote {} (and report.txt, report.json, the charts as SVG) for {} trace{}\n",
        index.display(),
        args.traces.len(),
        if args.traces.len() == 1 { "" } else { "s" }
    ))?;
    Ok(ExitCode::SUCCESS)
}
