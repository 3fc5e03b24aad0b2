//! `warpscope render TRACE [MORE...] --chart NAME -o OUT.svg|.pdf|.png`: one chart of a trace
//! as SVG, or as a PDF or PNG figure.

use super::analyze::KernelArgs;
use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::render::figure::{self, FigureFormat, MAX_PNG_SCALE};
use warpscope::render::{self, ChartKind, RenderOptions, MAX_WIDTH, MIN_WIDTH};

pub const EXAMPLES: &str = "\
Examples:
  warpscope render traces/vecadd_tiny.tiny.wstrace --chart dispatch -o dispatch.svg
  warpscope render traces/reduce.small.gto.wstrace --chart timeline -o timeline.svg
  warpscope render traces/reduce.small.gto.wstrace --chart timeline --from 450 --to 650 --sm 0 -o zoom.svg
  warpscope render traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace --chart stalls -o stalls.svg
  warpscope render traces/reduce.small.gto.wstrace --chart stalls -o stalls.pdf    # vector, for LaTeX
  warpscope render traces/reduce.small.gto.wstrace --chart timeline -o timeline.png --scale 3
  warpscope render traces/reduce.small.gto.wstrace --chart stalls --width 600 -o stalls.pdf   # a two-column figure
  warpscope render two-kernels.wstrace --chart source --kernel again -o again.svg

Colours are the same in every chart: one colour-blind-safe colour per Nsight warp state,
named in the legend. A trace longer than the plot is wide is binned into pixel columns, and
each column shows one of the states (or slot uses) of its cycles, chosen so that along a row
each gets columns in proportion to its cycles; a column's tooltip in the report gives the
shares. Zoom with --from/--to (cycles) and --sm to see each cycle; a --to past the trace's end
stops at its end. Only `stalls` takes several
traces (a stacked bar per trace).

--kernel narrows stalls and source, which sum a trace's launches, to one kernel's (picked as
`analyze --kernel` picks them; its caption names only that kernel). The time charts show every
warp resident in their window: for one kernel's launches, zoom to their cycles with --from/--to
(render --kernel on a time chart says which).

The output's extension picks the format (--format overrides it): SVG as the report shows it,
a vector PDF (one SVG pixel is one point; text drawn as outlines) for papers, or a PNG on white at
--scale pixels per SVG pixel for slides. PDF and PNG use the fonts bundled with warpscope
(DejaVu Sans and Sans Mono), so a figure is the same on every machine.

--width lays the chart out that many pixels wide (PDF: points) instead of its own 1000 to 1200,
its text staying 12 to 18 px: scaled to a paper's column, a narrower chart has larger text. A
label is 14 px, so at \\includegraphics[width=\\linewidth] it comes out 14 x column / width pt:
--width 600 in a figure* spanning both columns (504 pt) gives 12 pt, --width 400 in one
column (252 pt) 9 pt; the default 1200 in one column, 3 pt. A chart too narrow for its legend
beside the plot has it under the x axis; time charts bin into fewer columns.";

/// `--format` values, mirroring [`FigureFormat`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// The chart as drawn (what the HTML report shows); text in the viewer's fonts.
    Svg,
    /// A vector PDF, text drawn as outlines, for papers (`\includegraphics`).
    Pdf,
    /// A bitmap on white, --scale device pixels per SVG pixel, for slides.
    Png,
}

impl From<FormatArg> for FigureFormat {
    fn from(f: FormatArg) -> FigureFormat {
        match f {
            FormatArg::Svg => FigureFormat::Svg,
            FormatArg::Pdf => FigureFormat::Pdf,
            FormatArg::Png => FigureFormat::Png,
        }
    }
}

/// `--chart` values, mirroring [`ChartKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartArg {
    /// One row per warp slot, grouped by SM and scheduler, coloured by warp state over time.
    Timeline,
    /// Blocks on SMs over time, with block numbers (past 4,096 blocks, a band per SM of the
    /// blocks resident).
    Dispatch,
    /// Warp-cycles per issued instruction by state; a panel per trace for several traces.
    Stalls,
    /// Active and eligible warps (left axis) and instructions issued per cycle (IPC, right
    /// axis) per scheduler over time.
    Occupancy,
    /// The issue-slot grid: one row per issue slot, coloured by warp; refill and waste marked.
    Slots,
    /// The program listing with a stall heat bar per instruction.
    Source,
}

impl From<ChartArg> for ChartKind {
    fn from(c: ChartArg) -> ChartKind {
        match c {
            ChartArg::Timeline => ChartKind::Timeline,
            ChartArg::Dispatch => ChartKind::Dispatch,
            ChartArg::Stalls => ChartKind::Stalls,
            ChartArg::Occupancy => ChartKind::Occupancy,
            ChartArg::Slots => ChartKind::Slots,
            ChartArg::Source => ChartKind::Source,
        }
    }
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Traces written by `warpscope record` (binary or JSON Lines); several only for `stalls`.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Which chart to draw.
    #[arg(long, value_enum)]
    pub chart: ChartArg,
    /// Write the chart to this file: `.svg`, `.pdf` or `.png` (see --format).
    #[arg(short, long, value_name = "OUT.svg|.pdf|.png")]
    pub output: PathBuf,
    /// The file format, when the output's extension does not say it.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// PNG only: device pixels per SVG pixel [default: 2] (2 suits slides and screens of high
    /// density).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_PNG_SCALE as i64))]
    pub scale: Option<u32>,
    #[command(flatten)]
    pub layout: WidthArg,
    #[command(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
}

/// Render's words for the [`WindowArgs`]: which charts they zoom.
pub const FROM_HELP: &str = "First cycle to show (time charts; default: the trace's first)";
pub const TO_HELP: &str =
    "Show cycles before this one (time charts; default, and at most: the trace's end)";
pub const SM_HELP: &str = "Only this SM (timeline, dispatch, occupancy, slots)";
/// Render's words for `--kernel`: which charts it narrows.
pub const KERNEL_HELP: &str = "Only the launches of this kernel (stalls, source; default: all), \
     picked as analyze --kernel picks them: its exact name (mangled, signature or function \
     name), else any kernel whose name contains NAME";

/// `--from`, `--to` and `--sm`: the part of a trace that `render` draws and `export` writes.
#[derive(Debug, Args, Default)]
pub struct WindowArgs {
    /// First cycle (default: the trace's first).
    #[arg(long, value_name = "CYCLE")]
    pub from: Option<u64>,
    /// Cycles before this one (default, and at most: the trace's end).
    #[arg(long, value_name = "CYCLE")]
    pub to: Option<u64>,
    /// Only this SM.
    #[arg(long, value_name = "N")]
    pub sm: Option<u32>,
}

/// `--width`: the width charts are laid out at, for `render` and for the charts `report` and
/// `profile` draw (whose help says what it applies to there: [`super::report::WIDTH_HELP`]).
/// One definition, so that every command takes and refuses the same widths in the same words.
#[derive(Debug, Args, Default)]
pub struct WidthArg {
    /// The chart's width in pixels (PDF: points), 400 to 10000 [default: the chart's own, 1000
    /// to 1200]; text keeps its size, so a narrower chart scaled to a column has larger text.
    #[arg(long, value_name = "PX", value_parser = parse_width)]
    pub width: Option<u32>,
}

/// `--width`: a whole number of pixels within the range every chart lays out in.
fn parse_width(s: &str) -> Result<u32, String> {
    let width: u32 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of pixels"))?;
    if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) {
        return Err(format!(
            "a chart's width must be {MIN_WIDTH} to {MAX_WIDTH} pixels (narrower, a chart's \
             labels, plot and legend do not fit)"
        ));
    }
    Ok(width)
}

impl WindowArgs {
    /// An error if the window holds no cycle (`--from` not before `--to`): an impossible
    /// command line, like those clap refuses (exit 2).
    pub fn check(&self) -> Result<()> {
        match (self.from, self.to) {
            (Some(from), Some(to)) if from >= to => Err(super::usage(format!(
                "--from {from} must be less than --to {to}"
            ))),
            _ => Ok(()),
        }
    }
}

pub fn run(args: RenderArgs) -> Result<ExitCode> {
    let mut inputs = Vec::new();
    for t in &args.traces {
        super::expect_warpscope_trace(t)?;
        inputs.push(("trace", t.as_path()));
    }
    super::distinct_files(&[("chart", &args.output)], &inputs)?;
    let format = match (args.format, FigureFormat::from_extension(&args.output)) {
        (Some(f), Some(named)) if FigureFormat::from(f) != named => {
            // Documented, but a file whose name says another format is easy to write by
            // mistake and confusing to open later.
            let f = FigureFormat::from(f);
            stderr_line!(
                "note: {} will hold {} (--format overrides the extension, which says {})",
                args.output.display(),
                f.extension().to_ascii_uppercase(),
                named.extension().to_ascii_uppercase()
            );
            f
        }
        (Some(f), _) => FigureFormat::from(f),
        (None, Some(f)) => f,
        (None, None) => {
            let said = match args.output.extension() {
                Some(ext) => format!(
                    "a .{} file is not a format warpscope writes",
                    ext.to_string_lossy()
                ),
                None => "no extension".to_string(),
            };
            return Err(super::usage(format!(
                "{}: {said}; say the format with an extension (.svg, .pdf, .png) or --format",
                args.output.display()
            )));
        }
    };
    args.window.check()?;
    if args.scale.is_some() && format != FigureFormat::Png {
        return Err(super::usage(format!(
            "--scale applies to PNG output only ({} is {})",
            args.output.display(),
            format.extension().to_ascii_uppercase()
        )));
    }
    let options = RenderOptions {
        from: args.window.from,
        to: args.window.to,
        sm: args.window.sm,
        width: args.layout.width,
        kernel: args.kernel.kernel.clone(),
    };
    let kind = ChartKind::from(args.chart);
    // The stalls and source charts sum over the whole run and every SM: a zoom would be
    // silently ignored.
    if kind.sums_launches() {
        let given = [
            (args.window.from.is_some(), "--from"),
            (args.window.to.is_some(), "--to"),
            (args.window.sm.is_some(), "--sm"),
        ];
        if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
            return Err(super::usage(format!(
                "{flag} does not apply to the {} chart, which sums the whole run over every SM (it zooms timeline, dispatch, occupancy and slots)",
                kind.name()
            )));
        }
    }
    let chart = render::chart(kind, &args.traces, &options).map_err(|e| match e {
        // Like --from on the stalls chart: a flag the chart does not take; or traces it
        // does not take.
        render::RenderError::KernelOnTimeChart { .. }
        | render::RenderError::OneTrace { .. }
        | render::RenderError::BadWidth { .. } => super::usage(e.to_string()),
        e => e.into(),
    })?;
    if let Some(to) = args.window.to {
        // A time chart's axis stops at the trace's end (`render::chart`).
        if chart.plot.x_to < to as f64 {
            stderr_line!(
                "note: --to {to} is past the trace's end: the chart shows cycles {}..{}",
                chart.plot.x_from,
                chart.plot.x_to
            );
        }
    }
    let scale = args.scale.unwrap_or(2);
    let bytes = figure::encode(&chart.svg, format, scale)
        .with_context(|| format!("writing {}", args.output.display()))?;
    write_file_atomically(&args.output, |w| {
        w.write_all(&bytes)
            .with_context(|| format!("writing {}", args.output.display()))
    })?;
    let size = match format {
        FigureFormat::Svg => format!("{}x{} px", chart.width, chart.height),
        FigureFormat::Pdf => format!("PDF {}x{} pt", chart.width, chart.height),
        FigureFormat::Png => format!(
            "PNG {}x{} px (scale {scale})",
            chart.width * scale,
            chart.height * scale
        ),
    };
    emit(&format!(
        "wrote {}: {} chart, {size}, {} bytes{}\n",
        args.output.display(),
        kind.name(),
        bytes.len(),
        if chart.bin_cycles > 1 {
            format!(", {} cycles per column", chart.bin_cycles)
        } else {
            String::new()
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}
