//! `warpscope report TRACE [MORE...] -o DIR`: index.html (self-contained), report.txt and
//! report.json for one trace, or a comparison of several (the first is the baseline).

use super::render::{FormatArg, WidthArg};
use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use warpscope::render::figure::{self, FigureFormat, MAX_PNG_SCALE};
use warpscope::report::{self, Report};

pub const EXAMPLES: &str = "\
Examples:
  warpscope report traces/reduce.small.gto.wstrace -o report-reduce
  warpscope report traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace -o gto-vs-lrr
  warpscope report traces/reduce.small.gto.wstrace -o report-reduce --figures svg,pdf   # + PDFs for a paper
  warpscope report traces/reduce.small.gto.wstrace -o fig-reduce --figures pdf --width 600   # two-column figures

Writes DIR/index.html (one file: tables, inline SVG charts with tooltips, light and dark
scheme, no network access), the charts as DIR/CHART.svg (for several traces only the stall comparison, DIR/stalls.svg; the page has every chart), DIR/report.txt (as `analyze` prints it) and DIR/report.json:
{\"traces\": [{\"trace\", \"analysis\"}], \"comparison\"}, each analysis as `analyze --format json`
prints it and the comparison (null for one trace) as `compare --format json`. With several traces
the first is the baseline of the comparison. --figures adds each chart as a vector PDF (text as
outlines) or a PNG (--scale pixels per SVG pixel), as `render` writes them. --width lays every
chart out that wide, as `render --width` does, on the page as in the files: the page previews
the figures (see `render --help` for the text size a width gives in a paper's column).";

/// Which files the charts are written as, besides the page (shared by `report` and `profile`).
#[derive(Debug, Args)]
pub struct FigureArgs {
    /// The charts' files: any of svg, pdf (vector, text as outlines: for papers), png (for
    /// slides), comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "svg",
        value_name = "FORMATS"
    )]
    pub figures: Vec<FormatArg>,
    /// PNG figures: device pixels per SVG pixel [default: 2] (only with --figures png).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_PNG_SCALE as i64))]
    pub scale: Option<u32>,
    /// The charts' width: render's option, in the words of [`WIDTH_HELP`].
    #[command(flatten)]
    pub layout: WidthArg,
}

/// `--width` in the words of `report` and `profile`: it applies to every chart, the files and
/// the page alike.
pub const WIDTH_HELP: &str = "Lay every chart out this many pixels wide (PDF: points), 400 to \
     10000 [default: each chart's own, 1000 to 1200], as render --width does: text keeps its \
     size, so a narrower chart scaled to a paper's column has larger text. The page shows \
     these same charts, a preview of the figures as written (each chart drawn once; a time \
     chart bins into fewer columns)";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Traces written by `warpscope record`; the first is the baseline when there are several.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Directory for index.html, report.txt and report.json (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    #[command(flatten)]
    pub figures: FigureArgs,
}

/// Writes the report's three files and its charts into `dir`; returns the path of index.html.
pub(super) fn write_report(dir: &Path, report: &Report, figures: &FigureArgs) -> Result<PathBuf> {
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
        for format in figures.formats() {
            let path = dir.join(format!("{}.{}", c.name, format.extension()));
            let bytes = figure::encode(&c.svg, format, figures.scale.unwrap_or(2))
                .with_context(|| format!("writing {}", path.display()))?;
            write_file_atomically(&path, |w| Ok(w.write_all(&bytes)?))?;
        }
    }
    Ok(dir.join("index.html"))
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    for t in &args.traces {
        super::expect_warpscope_trace(t)?;
    }
    args.figures.check()?;
    let report = report::build(&args.traces, args.figures.layout.width)?;
    let index = write_report(&args.output, &report, &args.figures)?;
    let wide = match args.figures.layout.width {
        Some(width) => format!(", {width} px wide"),
        None => String::new(),
    };
    emit(&format!(
        "wrote {} (and report.txt, report.json, the charts as {}{wide}) for {} trace{}\n",
        index.display(),
        figure_formats(&args.figures),
        args.traces.len(),
        if args.traces.len() == 1 { "" } else { "s" }
    ))?;
    Ok(ExitCode::SUCCESS)
}

impl FigureArgs {
    /// A --scale without PNG figures would be ignored: said before anything is written, as
    /// `render` says it.
    pub(super) fn check(&self) -> Result<()> {
        match self.scale {
            Some(_) if !self.formats().contains(&FigureFormat::Png) => Err(super::usage(
                "--scale applies to PNG figures only: add png to --figures (e.g. --figures svg,png)",
            )),
            _ => Ok(()),
        }
    }

    /// The formats `--figures` names, each once, in the order given.
    fn formats(&self) -> Vec<FigureFormat> {
        let mut formats: Vec<FigureFormat> = Vec::new();
        for &f in &self.figures {
            if !formats.contains(&f.into()) {
                formats.push(f.into());
            }
        }
        formats
    }
}

/// "SVG", "SVG and PDF", ...: the formats `--figures` names, for a summary line.
fn figure_formats(figures: &FigureArgs) -> String {
    let names: Vec<String> = figures
        .formats()
        .iter()
        .map(|f| f.extension().to_ascii_uppercase())
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "SVG".into(),
    }
}
