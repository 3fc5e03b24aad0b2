//! `warpscope render TRACE [MORE...] --chart NAME -o OUT.svg`: one chart of a trace as SVG.

use super::{emit, write_file_atomically};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::render::{self, ChartKind, RenderOptions};

pub const EXAMPLES: &str = "\
Examples:
  warpscope render traces/vecadd_tiny.tiny.wstrace --chart dispatch -o dispatch.svg
  warpscope render traces/reduce.small.gto.wstrace --chart timeline -o timeline.svg
  warpscope render traces/reduce.small.gto.wstrace --chart timeline --from 200 --to 400 --sm 0 -o zoom.svg
  warpscope render traces/reduce.small.gto.wstrace traces/reduce.small.lrr.wstrace --chart stalls -o stalls.svg

Colours are the same in every chart: one colour-blind-safe colour per Nsight warp state,
named in the legend. A trace longer than the plot is wide is binned into pixel columns, and
each column shows its dominant state (or slot use): the one that holds most of its cycles.
Zoom with --from/--to (cycles) and --sm to see short states. Only `stalls` takes several
traces (one group of bars per trace).";

/// `--chart` values, mirroring [`ChartKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartArg {
    /// One row per warp slot, grouped by SM and scheduler, coloured by warp state over time.
    Timeline,
    /// Blocks on SMs over time, with block numbers (past 4,096 blocks, a band per SM of the
    /// blocks resident).
    Dispatch,
    /// Warp-cycles per issued instruction by state; grouped bars for several traces.
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
    /// Write the SVG to this file.
    #[arg(short, long, value_name = "OUT.svg")]
    pub output: PathBuf,
    /// First cycle to show (time charts; default: the trace's first).
    #[arg(long, value_name = "CYCLE")]
    pub from: Option<u64>,
    /// Show cycles before this one (time charts; default: the trace's end).
    #[arg(long, value_name = "CYCLE")]
    pub to: Option<u64>,
    /// Only this SM (timeline, dispatch, occupancy, slots).
    #[arg(long, value_name = "N")]
    pub sm: Option<u32>,
}

pub fn run(args: RenderArgs) -> Result<ExitCode> {
    let mut inputs = Vec::new();
    for t in &args.traces {
        super::expect_warpscope_trace(t)?;
        inputs.push(("trace", t.as_path()));
    }
    super::distinct_files(&[("chart", &args.output)], &inputs)?;
    let options = RenderOptions {
        from: args.from,
        to: args.to,
        sm: args.sm,
    };
    let kind = ChartKind::from(args.chart);
    // The stalls and source charts sum over the whole run and every SM: a zoom would be
    // silently ignored.
    if matches!(kind, ChartKind::Stalls | ChartKind::Source) {
        let given = [
            (args.from.is_some(), "--from"),
            (args.to.is_some(), "--to"),
            (args.sm.is_some(), "--sm"),
        ];
        if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
            return Err(super::usage(format!(
                "{flag} does not apply to the {} chart, which sums the whole run over every SM (it zooms timeline, dispatch, occupancy and slots)",
                kind.name()
            )));
        }
    }
    let chart = render::chart(kind, &args.traces, &options)?;
    write_file_atomically(&args.output, |w| {
        w.write_all(chart.svg.as_bytes())
            .with_context(|| format!("writing {}", args.output.display()))
    })?;
    emit(&format!(
        "wrote {}: {} chart, {}x{} px, {} bytes{}\n",
        args.output.display(),
        kind.name(),
        chart.width,
        chart.height,
        chart.svg.len(),
        if chart.bin_cycles > 1 {
            format!(", {} cycles per column", chart.bin_cycles)
        } else {
            String::new()
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}
