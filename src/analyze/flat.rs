//! The analysis as a flat list of metrics — (section, name, unit, value) rows like `ncu --csv
//! --page details` — which the CSV output and `compare` share, so both list the same metrics
//! under the same names.

use super::{Analysis, LaunchAnalysis};
use std::fmt::Write;

/// A metric's value: a number, or a word (the occupancy limiter).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Text(String),
}

impl Value {
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            Value::Text(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => write!(f, "{}", *n as i64),
            Value::Number(n) => write!(f, "{n:.4}"),
            Value::Text(s) => f.write_str(s),
        }
    }
}

/// One row.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub section: &'static str,
    /// snake_case, the JSON key it comes from (`warp_states.long_scoreboard` for map entries).
    pub name: String,
    pub unit: &'static str,
    pub value: Value,
}

fn push(out: &mut Vec<Metric>, section: &'static str, name: &str, unit: &'static str, v: f64) {
    out.push(Metric {
        section,
        name: name.to_string(),
        unit,
        value: Value::Number(v),
    });
}

/// Every number of one launch's JSON, in report order (source lines are not included: they
/// are per-PC tables, not metrics; nor are the first hazards, which are examples, nor the
/// launch's index, which is the CSV's first column). A test walks the JSON and fails on any
/// number missing here.
pub fn metrics(l: &LaunchAnalysis) -> Vec<Metric> {
    let mut m = Vec::new();
    let ls = "launch_statistics";
    let dims = [("grid", l.launch.grid), ("block", l.launch.block)];
    for (name, d) in dims {
        for (axis, n) in [("x", d.x), ("y", d.y), ("z", d.z)] {
            let unit = match name {
                "grid" => "block",
                _ => "thread",
            };
            push(&mut m, ls, &format!("{name}.{axis}"), unit, n as f64);
        }
    }
    push(&mut m, ls, "blocks", "block", l.launch.blocks as f64);
    push(&mut m, ls, "threads", "thread", l.launch.threads as f64);
    push(
        &mut m,
        ls,
        "warps_per_block",
        "warp",
        l.launch.warps_per_block as f64,
    );
    push(
        &mut m,
        ls,
        "registers_per_thread",
        "register",
        l.launch.registers_per_thread as f64,
    );
    push(
        &mut m,
        ls,
        "shared_per_block",
        "byte",
        l.launch.shared_per_block as f64,
    );
    push(&mut m, ls, "stream", "", l.launch.stream as f64);
    push(&mut m, ls, "waves_per_sm", "", l.launch.waves_per_sm);
    push(&mut m, ls, "start_cycle", "cycle", l.start_cycle as f64);
    push(&mut m, ls, "end_cycle", "cycle", l.end_cycle as f64);
    push(&mut m, ls, "cycles", "cycle", l.cycles as f64);
    push(
        &mut m,
        ls,
        "warp_instructions",
        "inst",
        l.warp_instructions as f64,
    );
    push(
        &mut m,
        ls,
        "thread_instructions",
        "inst",
        l.thread_instructions as f64,
    );
    push(&mut m, ls, "ipc", "inst/cycle", l.ipc);
    push(&mut m, ls, "hazards", "dependency", l.hazards as f64);

    let oc = "occupancy";
    let o = &l.occupancy;
    push(
        &mut m,
        oc,
        "max_warps_per_sm",
        "warp",
        o.max_warps_per_sm as f64,
    );
    push(
        &mut m,
        oc,
        "block_limit_registers",
        "block",
        o.block_limit_registers as f64,
    );
    if let Some(n) = o.block_limit_shared_memory {
        push(&mut m, oc, "block_limit_shared_memory", "block", n as f64);
    }
    push(
        &mut m,
        oc,
        "block_limit_warps",
        "block",
        o.block_limit_warps as f64,
    );
    push(
        &mut m,
        oc,
        "block_limit_blocks",
        "block",
        o.block_limit_blocks as f64,
    );
    m.push(Metric {
        section: oc,
        name: "limiter".into(),
        unit: "",
        value: Value::Text(o.limiter.clone()),
    });
    push(
        &mut m,
        oc,
        "theoretical_blocks_per_sm",
        "block",
        o.theoretical_blocks_per_sm as f64,
    );
    push(
        &mut m,
        oc,
        "theoretical_active_warps_per_sm",
        "warp",
        o.theoretical_active_warps_per_sm,
    );
    push(&mut m, oc, "theoretical_pct", "%", o.theoretical_pct);
    push(
        &mut m,
        oc,
        "achieved_active_warps_per_sm",
        "warp",
        o.achieved_active_warps_per_sm,
    );
    push(&mut m, oc, "achieved_pct", "%", o.achieved_pct);

    let sc = "scheduler";
    let s = &l.scheduler;
    push(&mut m, sc, "schedulers", "", s.schedulers as f64);
    push(
        &mut m,
        sc,
        "active_warps_per_scheduler",
        "warp",
        s.active_warps_per_scheduler,
    );
    // Eligibility is unknown without warp-state events, as memory figures are without
    // memory events: left out rather than given as 0 (the state maps are empty then).
    let states = l.warp_states_recorded;
    if states {
        push(
            &mut m,
            sc,
            "eligible_warps_per_scheduler",
            "warp",
            s.eligible_warps_per_scheduler,
        );
    }
    push(
        &mut m,
        sc,
        "issued_warp_per_scheduler",
        "warp",
        s.issued_warp_per_scheduler,
    );
    if states {
        push(&mut m, sc, "no_eligible_pct", "%", s.no_eligible_pct);
        push(
            &mut m,
            sc,
            "one_or_more_eligible_pct",
            "%",
            s.one_or_more_eligible_pct,
        );
        push(
            &mut m,
            sc,
            "idle_with_eligible_pct",
            "%",
            s.idle_with_eligible_pct,
        );
    }

    let ws = "warp_state";
    push(
        &mut m,
        ws,
        "resident_warp_cycles",
        "cycle",
        l.resident_warp_cycles as f64,
    );
    push(
        &mut m,
        ws,
        "warp_cycles_per_issued_instruction",
        "cycle",
        l.warp_cycles_per_issued_instruction,
    );
    for (state, &n) in &l.warp_states {
        push(
            &mut m,
            ws,
            &format!("warp_states.{state}"),
            "cycle",
            n as f64,
        );
    }
    for (state, &r) in &l.warp_states_per_issue {
        push(
            &mut m,
            ws,
            &format!("warp_states_per_issue.{state}"),
            "cycle",
            r,
        );
    }

    let is = "issue_slots";
    let i = &l.issue_slots;
    push(&mut m, is, "width", "slot", i.width as f64);
    push(&mut m, is, "total", "slot", i.total as f64);
    push(&mut m, is, "issued", "slot", i.issued as f64);
    push(&mut m, is, "refill", "slot", i.refill as f64);
    push(
        &mut m,
        is,
        "vertical_waste",
        "slot",
        i.vertical_waste as f64,
    );
    push(
        &mut m,
        is,
        "horizontal_waste",
        "slot",
        i.horizontal_waste as f64,
    );

    let me = &l.memory;
    if me.recorded {
        let mm = "memory";
        push(
            &mut m,
            mm,
            "global_requests",
            "request",
            me.global_requests as f64,
        );
        push(
            &mut m,
            mm,
            "global_sectors",
            "sector",
            me.global_sectors as f64,
        );
        push(
            &mut m,
            mm,
            "sectors_per_request",
            "sector",
            me.sectors_per_request,
        );
        push(
            &mut m,
            mm,
            "ideal_sectors_per_request",
            "sector",
            me.ideal_sectors_per_request,
        );
        push(
            &mut m,
            mm,
            "min_access_bytes",
            "byte",
            me.min_access_bytes as f64,
        );
        push(
            &mut m,
            mm,
            "max_access_bytes",
            "byte",
            me.max_access_bytes as f64,
        );
        push(
            &mut m,
            mm,
            "lanes_per_request",
            "lane",
            me.lanes_per_request,
        );
        push(&mut m, mm, "sector_bytes", "byte", me.sector_bytes as f64);
        push(&mut m, mm, "l1_hits", "request", me.l1_hits as f64);
        push(&mut m, mm, "l1_hit_rate_pct", "%", me.l1_hit_rate_pct);
        push(&mut m, mm, "l2_hits", "request", me.l2_hits as f64);
        push(&mut m, mm, "l2_hit_rate_pct", "%", me.l2_hit_rate_pct);
        push(
            &mut m,
            mm,
            "dram_requests",
            "request",
            me.dram_requests as f64,
        );
        push(
            &mut m,
            mm,
            "shared_requests",
            "request",
            me.shared_requests as f64,
        );
        push(
            &mut m,
            mm,
            "shared_bank_conflicts",
            "pass",
            me.shared_bank_conflicts as f64,
        );
    }

    let di = "dispatch";
    let d = &l.dispatch;
    // A launch no block of which was granted has no grant cycles (JSON `null`).
    if let Some(c) = d.first_grant_cycle {
        push(&mut m, di, "first_grant_cycle", "cycle", c as f64);
    }
    if let Some(c) = d.last_grant_cycle {
        push(&mut m, di, "last_grant_cycle", "cycle", c as f64);
    }
    push(&mut m, di, "tail_cycles", "cycle", d.tail_cycles as f64);
    push(&mut m, di, "idle_sm_pct", "%", d.idle_sm_pct);
    for (sm, (&b, &busy)) in d
        .blocks_per_sm
        .iter()
        .zip(&d.busy_cycles_per_sm)
        .enumerate()
    {
        push(
            &mut m,
            di,
            &format!("blocks_per_sm.{sm}"),
            "block",
            b as f64,
        );
        push(
            &mut m,
            di,
            &format!("busy_cycles_per_sm.{sm}"),
            "cycle",
            busy as f64,
        );
    }
    m
}

/// Quotes a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The analysis as CSV in `ncu --csv` shape: one row per launch and metric.
pub fn to_csv(analysis: &Analysis) -> String {
    let mut out = String::from("launch,kernel,section,metric,unit,value\n");
    for l in &analysis.launches {
        for metric in metrics(l) {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{}",
                l.index,
                csv_field(&l.name),
                metric.section,
                csv_field(&metric.name),
                metric.unit,
                csv_field(&metric.value.to_string())
            );
        }
    }
    out
}
