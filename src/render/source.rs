//! The `source` chart: each launch's program listing (from the trace header, PC → text) with a
//! stall heat bar per instruction — the warp-cycles its warps spent waiting to issue it, stacked
//! by Nsight state (`selected` left out: that is issuing, not stalling), all bars on one scale —
//! and its execution count (the analyzer's `source` lines). A trace recorded without warp
//! states (`--verbosity 0`) has its listing and execution counts, and a note in place of the
//! legend saying why there are no bars.
//!
//! The instruction column shows the listing's lines whole where they fit. Where they do not (a
//! narrow `--width`, long replayed SASS), what a reader of a figure needs to tell the rows
//! apart comes first: every line loses its replayed SASS offset and its control code, and a
//! line still too long keeps its guard and opcode with modifiers whole and as many whole
//! operands as fit, then `…` (`ISETP.GE P0, R0, …`); the row's hover region has it whole. On a
//! narrow chart the column takes three fifths of the room it shares with the bars.

use super::palette::{self, state_colour};
use super::{
    ellipsize, legend_across_height, text_width, tick_step, width_of, Align, Canvas, Chart,
    ChartKind, Header, Loaded, Note, PlotArea, Region, RenderError, RenderOptions, Row, AXIS_H,
    TEXT_HEADING, TEXT_LABEL,
};
use crate::analyze::NsightState;
use crate::isa::listing_instruction;

/// The chart's width unless `--width` says otherwise.
const WIDTH: u32 = 1200;
const LINE: i32 = TEXT_LABEL as i32 + 5;
/// A launch's heading above its listing.
const HEADER: i32 = TEXT_HEADING as i32 + 10;
/// The margin right of the plot: room for the stall total beside the longest bar, `digits`
/// long (the last tick label, centred on the plot's end, needs less).
const fn right_margin(digits: usize) -> i32 {
    8 + text_width(digits, TEXT_LABEL) + 12
}
/// The gap between the listing's columns.
const COLUMN_GAP: i32 = 12;
/// The widest the instruction column grows, so that the bars keep half the chart: longer
/// instructions (replayed SASS with long operand lists) are shortened ([`shortened`]). On a
/// narrow chart it leaves the bars [`BARS_MIN_W`] pixels, or two fifths of the room if that
/// is less (a reader of a narrow figure needs to know which instruction a bar is before how
/// long it is to the pixel), and more where the widest opcode with its modifiers and guard
/// needs it; the bars always keep [`BARS_FLOOR_W`] where the chart has the room. It is never
/// narrower than [`TEXT_MIN_W`] where the room allows.
const TEXT_MAX_W: i32 = 600;
const BARS_MIN_W: i32 = 160;
const BARS_FLOOR_W: i32 = 80;
const TEXT_MIN_W: i32 = 120;

/// The ellipsis that ends a shortened instruction.
const MORE: &str = "…";

/// A listing line's guard and opcode with its modifiers (`@!P0 LDG.E.64`), and its operands
/// (`R4, [R2]`), past a replay's SASS offset and a control code.
fn opcode_and_operands(line: &str) -> (&str, &str) {
    let instruction = listing_instruction(line).trim();
    // The opcode is the first token that is not a guard predicate.
    let mut end = 0;
    for token in instruction.split_inclusive(char::is_whitespace) {
        end += token.len();
        if !token.trim().is_empty() && !token.starts_with('@') {
            break;
        }
    }
    let (head, operands) = instruction.split_at(end);
    (head.trim_end(), operands.trim())
}

/// The operands of an instruction, split at its commas outside brackets (`[R2+0x10]`,
/// `c[0x0][0x28]`, `{R4, R5}` stay whole).
fn operand_list(operands: &str) -> Vec<&str> {
    let mut list = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in operands.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                list.push(operands[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    list.push(operands[start..].trim());
    list.retain(|o| !o.is_empty());
    list
}

/// A listing line as the instruction column shows it: whole where every line fits the column
/// (`whole`), else past its SASS offset and control code — one form down the column, so that
/// the instructions line up — and then [`shortened`] where it is still too long.
fn column_form(line: &str, whole: bool) -> &str {
    match whole {
        true => line,
        false => listing_instruction(line).trim(),
    }
}

/// An instruction (past its SASS offset and control code) as it fits in `room` pixels of the
/// listing: whole if it fits, else the guard and opcode with its modifiers whole, with as many
/// whole operands as fit, ended by `…` (`ISETP.GE P0, R0, …`): which instruction a bar is
/// matters more to a reader than its last operands; an opcode too long itself is cut with `…`.
fn shortened(instruction: &str, room: i32) -> std::borrow::Cow<'_, str> {
    if width_of(instruction, TEXT_LABEL) <= room {
        return instruction.into();
    }
    let (head, operands) = opcode_and_operands(instruction);
    let mut shown = head.to_string();
    for (i, operand) in operand_list(operands).into_iter().enumerate() {
        let longer = format!("{shown}{}{operand}", if i == 0 { " " } else { ", " });
        if width_of(&format!("{longer}, {MORE}"), TEXT_LABEL) > room {
            break;
        }
        shown = longer;
    }
    let shown = match shown.len() > head.len() {
        true => format!("{shown}, {MORE}"),
        false => format!("{head} {MORE}"),
    };
    match width_of(&shown, TEXT_LABEL) <= room {
        true => shown.into(),
        false => ellipsize(instruction, TEXT_LABEL, room).into_owned().into(),
    }
}

pub fn render(t: &Loaded, options: &RenderOptions) -> Result<Chart, RenderError> {
    let width = options.width_or(WIDTH);
    let a = t.analysis()?;
    let stalls = |w: &std::collections::BTreeMap<String, u64>| -> Vec<(NsightState, u64)> {
        NsightState::ALL
            .iter()
            .filter(|&&s| s != NsightState::Selected)
            .filter_map(|&s| w.get(s.name()).filter(|&&n| n > 0).map(|&n| (s, n)))
            .collect()
    };
    let max_stall = a
        .launches
        .iter()
        .flat_map(|l| &l.source)
        .map(|s| stalls(&s.warp_cycles).iter().map(|x| x.1).sum::<u64>())
        .max()
        .unwrap_or(0);
    let right = width as i32 - right_margin(max_stall.to_string().len());
    // The columns: PC, instruction, executions, then the bars.
    let widest = |header: &str, of: &dyn Fn(&crate::analyze::SourceLine) -> u64| {
        let digits = a
            .launches
            .iter()
            .flat_map(|l| &l.source)
            .map(|s| of(s).to_string().len())
            .max()
            .unwrap_or(1);
        text_width(digits, TEXT_LABEL).max(width_of(header, TEXT_LABEL))
    };
    let pc_x = 16;
    let text_x = pc_x + widest("PC", &|s| s.pc as u64) + COLUMN_GAP;
    let executed_w = widest("executed", &|s| s.executions);
    // What the instruction column and the bars share.
    let room = right - text_x - 2 * COLUMN_GAP - executed_w;
    let opcodes = a
        .launches
        .iter()
        .flat_map(|l| &l.source)
        .map(|s| width_of(opcode_and_operands(&s.text).0, TEXT_LABEL))
        .max()
        .unwrap_or(0);
    let text_max = TEXT_MAX_W
        .min((room - BARS_MIN_W).max(room * 3 / 5))
        .max(opcodes)
        .min(room - BARS_FLOOR_W)
        .max(0);
    let instructions_w = |whole: bool| {
        a.launches
            .iter()
            .flat_map(|l| &l.source)
            .map(|s| width_of(column_form(&s.text, whole), TEXT_LABEL))
            .max()
            .unwrap_or(text_width(10, TEXT_LABEL))
    };
    let whole = instructions_w(true) <= text_max;
    let text_w = instructions_w(whole)
        .max(TEXT_MIN_W.min(text_max))
        .min(text_max);
    let executed_x = text_x + text_w + COLUMN_GAP + executed_w;
    let left = executed_x + COLUMN_GAP;
    let lines: i32 = a.launches.iter().map(|l| l.source.len() as i32).sum();
    let plot_h = lines * LINE + HEADER * a.launches.len() as i32;
    // The legend runs along the top, left to right: the states that stalled any instruction.
    let entries: Vec<_> = NsightState::ALL
        .iter()
        .filter(|&&state| {
            a.launches
                .iter()
                .flat_map(|l| &l.source)
                .any(|s| stalls(&s.warp_cycles).iter().any(|&(x, _)| x == state))
        })
        .map(|&s| (state_colour(s), s.name().to_string()))
        .collect();
    let legend_right = width as i32 - 16;
    let recorded = t.states_recorded();
    let note = (!recorded).then(|| {
        let text = ChartKind::Source.states_not_recorded().unwrap_or_default();
        Note::new(&text, legend_right - pc_x)
    });
    let note_h = note.as_ref().map_or(0, |n| n.height() + 4);
    let header = Header::new(
        &format!("Stalls by instruction: {}", t.subject()),
        Some(&format!(
            "{}: warp-cycles waiting to issue each instruction, by state; the cycles that issue it (selected) are not counted",
            t.label
        )),
        width,
    );
    let columns_y = header.height()
        + legend_across_height(pc_x, legend_right, &entries)
        + note_h
        + 8
        + TEXT_LABEL as i32 / 2;
    let top = columns_y + TEXT_LABEL as i32 / 2 + 8;
    // Without bars there is no axis to read them on.
    let height = (top + plot_h + if recorded { AXIS_H } else { 8 }) as u32;
    let step = tick_step((max_stall as f64).max(1.0), 6);
    let x_to = ((max_stall as f64 / step).ceil() * step).max(step);
    let plot = PlotArea {
        left,
        top,
        right,
        bottom: top + plot_h,
        x_from: 0.0,
        x_to,
    };
    let mut svg = String::new();
    let mut rows = Vec::new();
    let mut regions = Vec::new();
    {
        let canvas = Canvas::new(&mut svg, width, height)?;
        canvas.header(&header)?;
        canvas.legend_across((pc_x, header.height()), legend_right, &entries)?;
        if let Some(note) = &note {
            canvas.note(note, (pc_x, header.height()), Align::Left)?;
        }
        canvas.label("PC", (pc_x, columns_y), Align::Left)?;
        canvas.label("instruction", (text_x, columns_y), Align::Left)?;
        canvas.label("executed", (executed_x, columns_y), Align::Right)?;
        let mut top = top;
        // The axis line runs beside each launch's rows, not through its heading.
        let mut axis_spans = Vec::new();
        for l in &a.launches {
            // Demangled, as the report's launch headings name the kernel (a replayed kernel's
            // trace keeps the mangled symbol).
            let heading = format!("launch {}: {} ({} cycles)", l.index, l.signature, l.cycles);
            canvas.heading(
                &ellipsize(&heading, TEXT_HEADING, legend_right - pc_x),
                (pc_x, top + HEADER / 2),
                Align::Left,
            )?;
            top += HEADER;
            let rows_top = top;
            for s in &l.source {
                let y = top + LINE / 2;
                if s.pc % 2 == 1 {
                    canvas.rect(
                        8,
                        top,
                        plot.right,
                        top + LINE,
                        palette::Rgb(0xF6, 0xF6, 0xF6),
                    )?;
                }
                // A longer instruction is shortened to the column; its row's hover region
                // has it whole.
                for (text, x, align) in [
                    (&s.pc.to_string(), pc_x, Align::Left),
                    (
                        &shortened(column_form(&s.text, whole), text_w).into_owned(),
                        text_x,
                        Align::Left,
                    ),
                    (&s.executions.to_string(), executed_x, Align::Right),
                ] {
                    canvas.text(text, (x, y), TEXT_LABEL, palette::INK, align, "monospace")?;
                }
                let parts = stalls(&s.warp_cycles);
                let mut acc = 0u64;
                for &(state, n) in &parts {
                    let x0 = plot.x(acc as f64);
                    acc += n;
                    canvas.rect(
                        x0,
                        top + 2,
                        plot.x(acc as f64),
                        top + LINE - 2,
                        state_colour(state),
                    )?;
                }
                if acc > 0 {
                    canvas.label(&acc.to_string(), (plot.x(acc as f64) + 4, y), Align::Left)?;
                }
                let detail: Vec<String> = parts
                    .iter()
                    .map(|(state, n)| format!("{} {n}", state.name()))
                    .collect();
                let stalls = match recorded {
                    true => format!("{acc} stall warp-cycles"),
                    false => "stall warp-cycles not recorded".to_string(),
                };
                regions.push(Region {
                    x: 8,
                    y: top,
                    width: plot.right - 8,
                    height: LINE,
                    text: format!(
                        "PC {}: {}{}; executed {} times; {stalls}{}{}",
                        s.pc,
                        s.text,
                        l.written_at(s)
                            .map_or(String::new(), |at| format!(" ({at})")),
                        s.executions,
                        if detail.is_empty() { "" } else { ": " },
                        detail.join(", ")
                    ),
                });
                rows.push(Row {
                    label: format!("{} PC {}", l.signature, s.pc),
                    top,
                    bottom: top + LINE,
                });
                top += LINE;
            }
            axis_spans.push((rows_top, top));
        }
        if recorded {
            for (from, to) in axis_spans {
                canvas.line(vec![(plot.left, from), (plot.left, to)], palette::INK, 1)?;
            }
            canvas.x_axis(&plot, "stall warp-cycles", true)?;
        }
        canvas.finish()?;
    }
    Ok(Chart {
        kind: ChartKind::Source,
        svg,
        width,
        height,
        plot,
        rows,
        regions,
        bin_cycles: 1,
    })
}
