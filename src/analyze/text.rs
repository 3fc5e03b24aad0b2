//! Plain-text report in the shape of Nsight Compute's details page: per launch, Launch
//! Statistics, Occupancy, Scheduler Statistics, Warp State Statistics (sorted, with each
//! state's share), Issue Slots, Memory, Dispatch, the source hotspots (waiting instruction —
//! with its line, for a kernel assembled from text —, producer and, for replays recorded with
//! lineinfo, CUDA source line) and the rule hints.
//! Section titles and row labels come from [`super::flat`]'s table, which `compare` reads too.

use super::flat::{
    global_table, label, section_title, GLOBAL_COLUMN, SM_BLOCKS, SM_BUSY, SM_COLUMN, STATE_CYCLES,
    STATE_PER_ISSUE, STORES_HAVE_NO_HITS,
};
use super::{Analysis, LaunchAnalysis, SourceLine};
use crate::isa::without_control_code;
use crate::isa::{is_replayed, REPLAYED_OPERANDS};
use std::fmt::Write;

/// How many source lines the hotspot table shows.
pub const HOTSPOTS: usize = 10;

/// A figure the trace lacks the events for.
const NOT_RECORDED: &str = "not recorded";

/// What a trace without warp-state events (`--verbosity 0`) cannot say, and how to get it.
pub const STATES_NOT_RECORDED: &str =
    "warp states not recorded: record with --verbosity 1 (the default) or 2 to see where warps wait";

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 * 100.0 / b as f64
    }
}

fn row(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "    {label:<40} {value:>14}");
}

fn section(out: &mut String, title: &str) {
    let _ = writeln!(out, "  Section: {title}");
    let _ = writeln!(out, "  {}", "-".repeat(58));
}

fn dim(d: crate::sim::Dim3) -> String {
    format!("({}, {}, {})", d.x, d.y, d.z)
}

fn launch(out: &mut String, l: &LaunchAnalysis) {
    let _ = writeln!(
        out,
        "{} (launch {}): cycles {}..{} ({} cycles){}",
        l.signature,
        l.index,
        l.start_cycle,
        l.end_cycle,
        l.cycles,
        if l.completed { "" } else { " [incomplete]" }
    );
    if l.signature != l.name {
        let _ = writeln!(out, "  mangled name: {}", l.name);
    }
    let _ = writeln!(out);

    section(out, section_title("launch_statistics"));
    row(out, &label("grid"), dim(l.launch.grid));
    row(out, &label("block"), dim(l.launch.block));
    row(out, &label("threads"), l.launch.threads);
    row(out, &label("warps_per_block"), l.launch.warps_per_block);
    row(
        out,
        &label("registers_per_thread"),
        l.launch.registers_per_thread,
    );
    row(out, &label("shared_per_block"), l.launch.shared_per_block);
    row(out, &label("warp_instructions"), l.warp_instructions);
    row(out, &label("thread_instructions"), l.thread_instructions);
    row(out, &label("ipc"), format!("{:.3}", l.ipc));
    row(
        out,
        &label("waves_per_sm"),
        format!("{:.2}", l.launch.waves_per_sm),
    );
    // Only when there are any: a clean run's report stays as it was.
    if l.hazards > 0 {
        row(out, &label("hazards"), l.hazards);
    }
    let _ = writeln!(out);

    let o = &l.occupancy;
    section(out, section_title("occupancy"));
    row(
        out,
        &label("block_limit_registers"),
        o.block_limit_registers,
    );
    row(
        out,
        &label("block_limit_shared_memory"),
        o.block_limit_shared_memory
            .map_or("-".to_string(), |n| n.to_string()),
    );
    row(out, &label("block_limit_warps"), o.block_limit_warps);
    row(out, &label("block_limit_blocks"), o.block_limit_blocks);
    row(out, &label("limiter"), o.limiter.name());
    row(
        out,
        &label("theoretical_active_warps_per_sm"),
        format!("{:.2}", o.theoretical_active_warps_per_sm),
    );
    row(
        out,
        &label("theoretical_pct"),
        format!("{:.2}", o.theoretical_pct),
    );
    row(
        out,
        &label("achieved_active_warps_per_sm"),
        format!("{:.2}", o.achieved_active_warps_per_sm),
    );
    row(
        out,
        &label("achieved_pct"),
        format!("{:.2}", o.achieved_pct),
    );
    let _ = writeln!(out);

    let s = &l.scheduler;
    section(out, section_title("scheduler"));
    row(out, &label("schedulers"), s.schedulers);
    row(
        out,
        &label("active_cycles_pct"),
        format!("{:.2}", s.active_cycles_pct),
    );
    row(
        out,
        &label("active_warps_per_scheduler"),
        format!("{:.2}", s.active_warps_per_scheduler),
    );
    // Eligibility is a warp state: without state events it is unknown, not 0.
    let states = |figure: String| match l.warp_states_recorded {
        true => figure,
        false => NOT_RECORDED.to_string(),
    };
    row(
        out,
        &label("eligible_warps_per_scheduler"),
        states(format!("{:.2}", s.eligible_warps_per_scheduler)),
    );
    row(
        out,
        &label("issued_warp_per_scheduler"),
        format!("{:.3}", s.issued_warp_per_scheduler),
    );
    row(
        out,
        &label("no_eligible_pct"),
        states(format!("{:.2}", s.no_eligible_pct)),
    );
    row(
        out,
        &label("one_or_more_eligible_pct"),
        states(format!("{:.2}", s.one_or_more_eligible_pct)),
    );
    row(
        out,
        &label("idle_with_eligible_pct"),
        states(format!("{:.2}", s.idle_with_eligible_pct)),
    );
    let _ = writeln!(out);

    section(out, section_title("warp_state"));
    row(
        out,
        &label("warp_cycles_per_issued_instruction"),
        format!("{:.2}", l.warp_cycles_per_issued_instruction),
    );
    row(
        out,
        &label("not_predicated_off_threads_per_warp"),
        format!("{:.2}", l.not_predicated_off_threads_per_warp),
    );
    row(
        out,
        &label("launched_threads_per_warp"),
        format!("{:.2}", l.launched_threads_per_warp),
    );
    let total: u64 = l.warp_states.values().sum();
    if l.warp_states_recorded {
        warp_states(out, l, total);
    } else {
        let _ = writeln!(out, "    {STATES_NOT_RECORDED}");
    }
    let _ = writeln!(out);

    let i = &l.issue_slots;
    section(out, section_title("issue_slots"));
    row(out, &label("width"), i.width);
    let _ = writeln!(out, "    {:<28} {:>14} {:>10}", "slots", "count", "share");
    for (key, n) in [
        ("issued", i.issued),
        ("refill", i.refill),
        ("vertical_waste", i.vertical_waste),
        ("horizontal_waste", i.horizontal_waste),
        ("total", i.total),
    ] {
        let name = label(key);
        let _ = writeln!(out, "    {name:<28} {n:>14} {:>9.1}%", pct(n, i.total));
    }
    let _ = writeln!(out);

    memory(out, l);
    dispatch(out, l);

    section(out, "Source Hotspots");
    // The file the instruction tables' `line` column points into.
    if let Some(file) = l.asm_file.as_deref().filter(|_| LineColumn::of(l).0) {
        let _ = writeln!(out, "    file: {file}");
    }
    if l.warp_states_recorded {
        hotspots(out, l, total);
    } else {
        let _ = writeln!(out, "    {STATES_NOT_RECORDED}");
        most_executed(out, l);
    }
    attributed(out, l, total);
    cuda_lines(out, l, total);
    if !l.hints.is_empty() {
        let _ = writeln!(out);
        for h in &l.hints {
            let _ = writeln!(out, "  {} {}: {}", h.severity.label(), h.rule, h.message);
        }
    }
}

/// The assembly-line column of the instruction tables: a `line` column where the kernel was
/// assembled from text (one instruction per line, so a line is an instruction: no table by
/// line), nothing otherwise.
struct LineColumn(bool);

impl LineColumn {
    fn of(l: &LaunchAnalysis) -> LineColumn {
        LineColumn(l.source.iter().any(|s| s.asm_line.is_some()))
    }

    fn head(&self) -> &'static str {
        match self.0 {
            true => "  line",
            false => "",
        }
    }

    fn cell(&self, s: &SourceLine) -> String {
        match (self.0, s.asm_line) {
            (false, _) => String::new(),
            (true, Some(n)) => format!(" {n:>5}"),
            (true, None) => format!(" {:>5}", "-"),
        }
    }
}

/// The instructions with the most warp-cycles.
fn hotspots(out: &mut String, l: &LaunchAnalysis, total: u64) {
    let mut lines: Vec<_> = l
        .source
        .iter()
        .filter(|s| s.total_warp_cycles > 0)
        .collect();
    lines.sort_by(|a, b| {
        b.total_warp_cycles
            .cmp(&a.total_warp_cycles)
            .then(a.pc.cmp(&b.pc))
    });
    let line = LineColumn::of(l);
    let _ = writeln!(
        out,
        "    {:>5}{} {:<32} {:>10} {:>12} {:>7}  top state",
        "pc",
        line.head(),
        "instruction",
        "executed",
        "warp-cycles",
        "share"
    );
    let replayed = lines.iter().any(|s| is_replayed(&s.text));
    for s in lines.into_iter().take(HOTSPOTS) {
        let text = clip(without_control_code(&s.text));
        let _ = writeln!(
            out,
            "    {:>5}{} {:<32} {:>10} {:>12} {:>6.1}%  {}",
            s.pc,
            line.cell(s),
            text,
            s.executions,
            s.total_warp_cycles,
            pct(s.total_warp_cycles, total),
            s.top_state.as_deref().unwrap_or("-")
        );
    }
    if replayed {
        let _ = writeln!(out, "    ({REPLAYED_OPERANDS})");
    }
}

/// Without warp states, the instructions executed most: what the issue events still tell.
fn most_executed(out: &mut String, l: &LaunchAnalysis) {
    let mut lines: Vec<_> = l.source.iter().filter(|s| s.executions > 0).collect();
    lines.sort_by(|a, b| b.executions.cmp(&a.executions).then(a.pc.cmp(&b.pc)));
    let line = LineColumn::of(l);
    let _ = writeln!(
        out,
        "    {:>5}{} {:<32} {:>10} {:>7}",
        "pc",
        line.head(),
        "instruction (most executed)",
        "executed",
        "share"
    );
    for s in lines.into_iter().take(HOTSPOTS) {
        let _ = writeln!(
            out,
            "    {:>5}{} {:<32} {:>10} {:>6.1}%",
            s.pc,
            line.cell(s),
            clip(without_control_code(&s.text)),
            s.executions,
            pct(s.executions, l.warp_instructions),
        );
    }
}

/// The states sorted by warp-cycles, with their cycles per issue and share of `total`.
fn warp_states(out: &mut String, l: &LaunchAnalysis, total: u64) {
    let mut states: Vec<_> = l.warp_states.iter().filter(|(_, &n)| n > 0).collect();
    states.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        out,
        "    {:<28} {:>14} {:>10} {:>10}",
        "state", STATE_CYCLES, STATE_PER_ISSUE, "share"
    );
    for (name, &n) in states {
        let per_issue = l.warp_states_per_issue.get(name).copied().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "    {name:<28} {n:>14} {per_issue:>10.2} {:>9.1}%",
            pct(n, total)
        );
    }
    let _ = writeln!(out, "    {:<28} {total:>14}", "total");
}

fn memory(out: &mut String, l: &LaunchAnalysis) {
    let m = &l.memory;
    section(out, section_title("memory"));
    if !m.recorded {
        // (Which command made the trace is not in it: the advice names the ones that can.)
        let _ = writeln!(
            out,
            "    not recorded: the trace has no memory events; `record` and `replay` write them with\n    --verbosity 2 (`profile` always does; `study` traces have none)"
        );
        let _ = writeln!(out);
        return;
    }
    row(out, &label("global_requests"), m.global_requests);
    row(out, &label("global_sectors"), m.global_sectors);
    // Loads, stores and atomics apart, as Nsight's memory tables: together they hide an
    // uncoalesced load among coalesced stores, and count stores as L2 hits.
    let (columns, rows) = global_table(m);
    let _ = write!(out, "    {GLOBAL_COLUMN:<28}");
    for c in &columns {
        let _ = write!(out, " {c:>12}");
    }
    let _ = writeln!(out);
    for (name, values) in &rows {
        let _ = write!(out, "    {name:<28}");
        for v in values {
            let _ = write!(out, " {v:>12}");
        }
        let _ = writeln!(out);
    }
    if m.global_loads.l2_hits.is_some() {
        // Wrapped, the lines after the first indented under its text.
        let mut line = String::from("note:");
        for word in STORES_HAVE_NO_HITS.split(' ') {
            if line.len() + 1 + word.len() > 82 {
                let _ = writeln!(out, "    {line}");
                line = String::from("     ");
            }
            line.push(' ');
            line.push_str(word);
        }
        let _ = writeln!(out, "    {line}.");
    }
    row(out, &label("shared_requests"), m.shared_requests);
    row(
        out,
        &label("shared_bank_conflicts"),
        m.shared_bank_conflicts,
    );
    let _ = writeln!(out);
}

fn dispatch(out: &mut String, l: &LaunchAnalysis) {
    let d = &l.dispatch;
    section(out, section_title("dispatch"));
    let opt = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
    row(out, &label("first_grant_cycle"), opt(d.first_grant_cycle));
    row(out, &label("last_grant_cycle"), opt(d.last_grant_cycle));
    row(out, &label("tail_cycles"), d.tail_cycles);
    row(out, &label("idle_sm_pct"), format!("{:.2}", d.idle_sm_pct));
    let _ = writeln!(
        out,
        "    {:<8} {:>10} {:>14}",
        SM_COLUMN, SM_BLOCKS, SM_BUSY
    );
    for (sm, (b, busy)) in d
        .blocks_per_sm
        .iter()
        .zip(&d.busy_cycles_per_sm)
        .enumerate()
    {
        let _ = writeln!(out, "    {sm:<8} {b:>10} {busy:>14}");
    }
    let _ = writeln!(out);
}

/// Producers whose results others waited for (Nsight's attributed stalls).
fn attributed(out: &mut String, l: &LaunchAnalysis, total: u64) {
    let mut lines: Vec<_> = l
        .source
        .iter()
        .filter(|s| s.total_attributed_warp_cycles > 0)
        .collect();
    if lines.is_empty() {
        return;
    }
    lines.sort_by(|a, b| {
        b.total_attributed_warp_cycles
            .cmp(&a.total_attributed_warp_cycles)
            .then(a.pc.cmp(&b.pc))
    });
    let _ = writeln!(out);
    let _ = writeln!(out, "    stalls attributed to the producing instruction:");
    let line = LineColumn::of(l);
    let _ = writeln!(
        out,
        "    {:>5}{} {:<32} {:>10} {:>12} {:>7}  top state",
        "pc",
        line.head(),
        "instruction",
        "",
        "warp-cycles",
        "share"
    );
    for s in lines.into_iter().take(HOTSPOTS) {
        let top = s
            .attributed_warp_cycles
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map_or("-", |(k, _)| k.as_str());
        let _ = writeln!(
            out,
            "    {:>5}{} {:<32} {:>10} {:>12} {:>6.1}%  {top}",
            s.pc,
            line.cell(s),
            clip(without_control_code(&s.text)),
            "",
            s.total_attributed_warp_cycles,
            pct(s.total_attributed_warp_cycles, total),
        );
    }
}

/// The hotspots by CUDA source line, for a replay of a trace recorded with lineinfo.
fn cuda_lines(out: &mut String, l: &LaunchAnalysis, total: u64) {
    let mut lines: Vec<_> = l
        .cuda_source
        .iter()
        .filter(|c| c.total_warp_cycles > 0)
        .collect();
    if lines.is_empty() {
        return;
    }
    lines.sort_by(|a, b| {
        b.total_warp_cycles
            .cmp(&a.total_warp_cycles)
            .then(a.line.cmp(&b.line))
    });
    let _ = writeln!(out);
    let _ = writeln!(out, "    by CUDA source line (the trace's lineinfo):");
    let _ = writeln!(
        out,
        "    {:>5} {:<32} {:>10} {:>12} {:>7}  top state",
        "line", "instructions (pc)", "executed", "warp-cycles", "share"
    );
    for c in lines.into_iter().take(HOTSPOTS) {
        let pcs: Vec<String> = c.pcs.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "    {:>5} {:<32} {:>10} {:>12} {:>6.1}%  {}",
            c.line,
            clip(&pcs.join(" ")),
            c.executions,
            c.total_warp_cycles,
            pct(c.total_warp_cycles, total),
            c.top_state.as_deref().unwrap_or("-")
        );
    }
}

/// `text` cut to the 32-character instruction column (a listing line's control code is left
/// out before: it alone takes 21 of them).
fn clip(text: &str) -> String {
    if text.chars().count() > 32 {
        text.chars().take(31).collect::<String>() + "…"
    } else {
        text.to_string()
    }
}

/// The whole analysis as text, one block per launch.
pub fn render_text(analysis: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "warpscope analysis — gpu {}, taxonomy {}{}",
        analysis.gpu,
        analysis.taxonomy.name(),
        if analysis.complete {
            ""
        } else {
            " — run INCOMPLETE (faulted or truncated)"
        }
    );
    if let Some(fault) = &analysis.fault {
        for line in fault.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for l in &analysis.launches {
        let _ = writeln!(out);
        launch(&mut out, l);
    }
    out
}
