//! The analysis as a flat list of metrics — (section, name, unit, value) rows like `ncu --csv
//! --page details` — which the CSV output and `compare` share, so both list the same metrics
//! under the same names.
//!
//! It is also the one table of how people read those names: [`section_title`] and [`label`]
//! give the section titles and row labels the `analyze` text prints (`Scheduler Statistics`,
//! `Idle With Eligible Warps [%]`, a warp state by its name), which `analyze`'s text and
//! `compare`'s both take from here, so the two cannot drift apart. Machine-readable outputs
//! keep the snake_case keys.

use super::metrics::{GlobalAccessStats, MemoryStats};
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
    /// How the `analyze` text names it ([`label`]).
    pub label: String,
    pub unit: &'static str,
    pub value: Value,
}

fn push(out: &mut Vec<Metric>, section: &'static str, name: &str, unit: &'static str, v: f64) {
    out.push(Metric {
        section,
        name: name.to_string(),
        label: label(name),
        unit,
        value: Value::Number(v),
    });
}

/// The sections, by key, with the title the `analyze` text heads them with, in report order.
pub const SECTIONS: [(&str, &str); 7] = [
    ("launch_statistics", "Launch Statistics"),
    ("occupancy", "Occupancy"),
    ("scheduler", "Scheduler Statistics"),
    ("warp_state", "Warp State Statistics"),
    ("issue_slots", "Issue Slots"),
    ("memory", "Memory Workload Analysis"),
    ("dispatch", "Dispatch"),
];

/// The title of the section `key` (`scheduler` → `Scheduler Statistics`); an unknown key is
/// its own title.
pub fn section_title(key: &str) -> &str {
    SECTIONS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, title)| title)
}

/// Row labels by metric name, as the `analyze` text prints them (with the unit in brackets
/// where it does), and in the same style for the metrics it shows only in a heading or not
/// at all. `grid`, `block` and `access_bytes` are the text's rows that show several metrics
/// at once (`(256, 1, 1)`, `4-16`).
const LABELS: &[(&str, &str)] = &[
    // Launch Statistics
    ("grid", "Grid Size"),
    ("block", "Block Size"),
    ("blocks", "Blocks"),
    ("threads", "Threads"),
    ("warps_per_block", "Warps Per Block"),
    ("registers_per_thread", "Registers Per Thread"),
    ("shared_per_block", "Shared Memory Per Block [byte]"),
    ("stream", "Stream"),
    ("waves_per_sm", "Waves Per SM"),
    ("start_cycle", "Start Cycle"),
    ("end_cycle", "End Cycle"),
    ("cycles", "Elapsed Cycles [cycle]"),
    ("warp_instructions", "Warp Instructions"),
    ("thread_instructions", "Thread Instructions"),
    ("ipc", "IPC, all SMs [warp inst/cycle]"),
    ("hazards", "Dependency Hazards"),
    // Occupancy
    ("max_warps_per_sm", "Max Warps Per SM [warp]"),
    ("block_limit_registers", "Block Limit Registers [block]"),
    (
        "block_limit_shared_memory",
        "Block Limit Shared Mem [block]",
    ),
    ("block_limit_warps", "Block Limit Warps [block]"),
    ("block_limit_blocks", "Block Limit SM [block]"),
    ("limiter", "Occupancy Limiter"),
    (
        "theoretical_blocks_per_sm",
        "Theoretical Blocks Per SM [block]",
    ),
    (
        "theoretical_active_warps_per_sm",
        "Theoretical Active Warps per SM [warp]",
    ),
    ("theoretical_pct", "Theoretical Occupancy [%]"),
    (
        "achieved_active_warps_per_sm",
        "Achieved Active Warps Per SM [warp]",
    ),
    ("achieved_pct", "Achieved Occupancy [%]"),
    // Scheduler Statistics
    ("schedulers", "Schedulers"),
    ("active_cycles_pct", "Active Scheduler Cycles [%]"),
    ("active_warps_per_scheduler", "Active Warps Per Scheduler"),
    (
        "eligible_warps_per_scheduler",
        "Eligible Warps Per Scheduler",
    ),
    ("issued_warp_per_scheduler", "Issued Warp Per Scheduler"),
    ("no_eligible_pct", "No Eligible [%]"),
    ("one_or_more_eligible_pct", "One or More Eligible [%]"),
    ("idle_with_eligible_pct", "Idle With Eligible Warps [%]"),
    // Warp State Statistics (the states themselves: `warp_states.*`, see `label`)
    ("resident_warp_cycles", "Resident Warp Cycles"),
    (
        "warp_cycles_per_issued_instruction",
        "Warp Cycles Per Issued Instruction",
    ),
    (
        "not_predicated_off_threads_per_warp",
        "Avg. Not Predicated Off Threads Per Warp",
    ),
    (
        "launched_threads_per_warp",
        "Avg. Launched Threads Per Warp",
    ),
    // Issue Slots: the width, then the rows of the text's slot table
    ("width", "Issue Width"),
    ("issued", "issued"),
    ("refill", "refill"),
    ("vertical_waste", "vertical waste"),
    ("horizontal_waste", "horizontal waste"),
    ("total", "total"),
    // Memory Workload Analysis: the figures of all global requests together (loads, stores
    // and atomics apart: `global_loads.*`, see `label` and `GLOBAL_FIELDS`)
    ("global_requests", "Global Requests"),
    ("global_sectors", "Global Sectors"),
    ("sectors_per_request", "Sectors Per Request (all global)"),
    (
        "ideal_sectors_per_request",
        "Ideal Sectors Per Request (all global)",
    ),
    ("access_bytes", "Access Size (all global) [byte]"),
    ("min_access_bytes", "Min Access Size (all global) [byte]"),
    ("max_access_bytes", "Max Access Size (all global) [byte]"),
    ("lanes_per_request", "Active Lanes Per Request (all global)"),
    ("sector_bytes", "Sector Size [byte]"),
    ("l1_hits", "L1 Hits (loads, atomics) [request]"),
    ("l1_hit_rate_pct", "L1 Hit Rate (loads, atomics) [%]"),
    ("l2_hits", "L2 Hits (loads, atomics) [request]"),
    ("l2_hit_rate_pct", "L2 Hit Rate (loads, atomics) [%]"),
    ("dram_requests", "DRAM Requests (loads, atomics)"),
    ("shared_requests", "Shared Requests"),
    ("shared_bank_conflicts", "Shared Bank Conflicts [pass]"),
    // Dispatch (the per-SM rows: `blocks_per_sm.*`, see `label`)
    ("first_grant_cycle", "First Grant [cycle]"),
    ("last_grant_cycle", "Last Grant [cycle]"),
    ("tail_cycles", "Tail [cycle]"),
    ("idle_sm_pct", "Idle SM Time [%]"),
];

/// The global-memory directions: key in `memory`, how a row label names it, and the heading
/// of its column in the text's and the report's global-memory table.
pub const GLOBAL_DIRECTIONS: [(&str, &str, &str); 3] = [
    ("global_loads", "Global Load", "loads"),
    ("global_stores", "Global Store", "stores"),
    ("global_atomics", "Global Atomic", "atomics"),
];

/// The figures of one direction (`global_loads.sectors_per_request`), as the rows of the
/// global-memory table name them; `access_bytes` is the row that shows both widths.
const GLOBAL_FIELDS: &[(&str, &str)] = &[
    ("requests", "Requests"),
    ("sectors", "Sectors"),
    ("sectors_per_request", "Sectors Per Request"),
    ("ideal_sectors_per_request", "Ideal Sectors Per Request"),
    ("access_bytes", "Access Size [byte]"),
    ("min_access_bytes", "Min Access Size [byte]"),
    ("max_access_bytes", "Max Access Size [byte]"),
    ("lanes_per_request", "Active Lanes Per Request"),
    ("l1_hits", "L1 Hits [request]"),
    ("l1_hit_rate_pct", "L1 Hit Rate [%]"),
    ("l2_hits", "L2 Hits [request]"),
    ("l2_hit_rate_pct", "L2 Hit Rate [%]"),
    ("dram_requests", "DRAM Requests"),
];

/// The heading of the global-memory table's row column.
pub const GLOBAL_COLUMN: &str = "global";

/// Said under the global-memory table when it has hit rows: why the stores' are `-`.
pub const STORES_HAVE_NO_HITS: &str = "stores write through to the L2 without allocating in the L1, and allocate in the L2 without reading DRAM; the trace does not say whether the L2 held their sectors, so they have no hit figures";

/// The global-memory table of the `analyze` text and the report: a row per figure (labelled
/// as in [`GLOBAL_FIELDS`]), a column per direction — loads and stores always, atomics when
/// there are any —, `-` where a direction has no such figure; rows no column has are left
/// out (the hit figures without a cache hierarchy).
pub fn global_table(m: &MemoryStats) -> (Vec<&'static str>, Vec<(String, Vec<String>)>) {
    let columns: Vec<(&str, &GlobalAccessStats)> = GLOBAL_DIRECTIONS
        .iter()
        .zip(m.directions())
        .filter(|((key, _, _), (_, g))| *key != "global_atomics" || g.requests > 0)
        .map(|((_, _, heading), (_, g))| (*heading, g))
        .collect();
    type Figure = fn(&GlobalAccessStats) -> Option<String>;
    let figures: [(&str, Figure); 11] = [
        ("requests", |g| Some(g.requests.to_string())),
        ("sectors", |g| Some(g.sectors.to_string())),
        ("sectors_per_request", |g| {
            Some(format!("{:.2}", g.sectors_per_request))
        }),
        ("ideal_sectors_per_request", |g| {
            Some(format!("{:.2}", g.ideal_sectors_per_request))
        }),
        ("access_bytes", |g| Some(g.access_bytes())),
        ("lanes_per_request", |g| {
            Some(format!("{:.2}", g.lanes_per_request))
        }),
        ("l1_hits", |g| g.l1_hits.map(|n| n.to_string())),
        ("l1_hit_rate_pct", |g| {
            g.l1_hit_rate_pct.map(|x| format!("{x:.2}"))
        }),
        ("l2_hits", |g| g.l2_hits.map(|n| n.to_string())),
        ("l2_hit_rate_pct", |g| {
            g.l2_hit_rate_pct.map(|x| format!("{x:.2}"))
        }),
        ("dram_requests", |g| g.dram_requests.map(|n| n.to_string())),
    ];
    let rows = figures
        .iter()
        .filter_map(|(key, figure)| {
            let values: Vec<Option<String>> = columns.iter().map(|(_, g)| figure(g)).collect();
            values.iter().any(Option::is_some).then(|| {
                let values = values
                    .into_iter()
                    .map(|v| v.unwrap_or_else(|| "-".to_string()))
                    .collect();
                (global_field_label(key).to_string(), values)
            })
        })
        .collect();
    (columns.iter().map(|(h, _)| *h).collect(), rows)
}

fn global_field_label(key: &str) -> &str {
    GLOBAL_FIELDS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(key, |(_, l)| l)
}

/// Column headings of the text's tables, which name the metrics of their rows.
pub const STATE_CYCLES: &str = "warp-cycles";
pub const STATE_PER_ISSUE: &str = "per issue";
pub const SM_COLUMN: &str = "sm";
pub const SM_BLOCKS: &str = "blocks";
pub const SM_BUSY: &str = "busy cycles";

/// How the `analyze` text names the metric `name` (a [`Metric::name`], or one of the text's
/// combined rows: `grid`, `block`, `access_bytes`): `issued_warp_per_scheduler` → `Issued Warp
/// Per Scheduler`, `idle_with_eligible_pct` → `Idle With Eligible Warps [%]`. A map entry is
/// named as the text's table has it — `warp_states.long_scoreboard` → `long_scoreboard
/// [warp-cycles]`, `blocks_per_sm.0` → `sm 0 blocks` — and a grid or block axis after its row,
/// `Grid Size X`. A name the table lacks is its own label.
pub fn label(name: &str) -> String {
    if let Some((_, l)) = LABELS.iter().find(|(k, _)| *k == name) {
        return (*l).to_string();
    }
    let Some((map, key)) = name.split_once('.') else {
        return name.to_string();
    };
    match map {
        "grid" | "block" => format!("{} {}", label(map), key.to_uppercase()),
        "warp_states" => format!("{key} [{STATE_CYCLES}]"),
        "warp_states_per_issue" => format!("{key} [{STATE_PER_ISSUE}]"),
        "blocks_per_sm" => format!("{SM_COLUMN} {key} {SM_BLOCKS}"),
        "busy_cycles_per_sm" => format!("{SM_COLUMN} {key} {SM_BUSY}"),
        _ => match GLOBAL_DIRECTIONS.iter().find(|(k, _, _)| *k == map) {
            Some((_, direction, _)) => format!("{direction} {}", global_field_label(key)),
            None => name.to_string(),
        },
    }
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
    push(&mut m, ls, "ipc", "warp inst/cycle", l.ipc);
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
        label: label("limiter"),
        unit: "",
        value: Value::Text(o.limiter.name().to_string()),
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
    push(&mut m, sc, "active_cycles_pct", "%", s.active_cycles_pct);
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
        "warp-cycle",
        l.resident_warp_cycles as f64,
    );
    push(
        &mut m,
        ws,
        "warp_cycles_per_issued_instruction",
        "warp-cycle",
        l.warp_cycles_per_issued_instruction,
    );
    push(
        &mut m,
        ws,
        "not_predicated_off_threads_per_warp",
        "thread",
        l.not_predicated_off_threads_per_warp,
    );
    push(
        &mut m,
        ws,
        "launched_threads_per_warp",
        "thread",
        l.launched_threads_per_warp,
    );
    for (state, &n) in &l.warp_states {
        push(
            &mut m,
            ws,
            &format!("warp_states.{state}"),
            "warp-cycle",
            n as f64,
        );
    }
    for (state, &r) in &l.warp_states_per_issue {
        push(
            &mut m,
            ws,
            &format!("warp_states_per_issue.{state}"),
            "warp-cycle",
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
        for (key, g) in me.directions() {
            let mut put = |field: &str, unit: &'static str, v: f64| {
                push(&mut m, mm, &format!("{key}.{field}"), unit, v);
            };
            put("requests", "request", g.requests as f64);
            put("sectors", "sector", g.sectors as f64);
            put("sectors_per_request", "sector", g.sectors_per_request);
            put(
                "ideal_sectors_per_request",
                "sector",
                g.ideal_sectors_per_request,
            );
            put("min_access_bytes", "byte", g.min_access_bytes as f64);
            put("max_access_bytes", "byte", g.max_access_bytes as f64);
            put("lanes_per_request", "lane", g.lanes_per_request);
            // Left out where the model has no such hit (JSON `null`).
            let hits = [
                ("l1_hits", "request", g.l1_hits.map(|n| n as f64)),
                ("l1_hit_rate_pct", "%", g.l1_hit_rate_pct),
                ("l2_hits", "request", g.l2_hits.map(|n| n as f64)),
                ("l2_hit_rate_pct", "%", g.l2_hit_rate_pct),
                (
                    "dram_requests",
                    "request",
                    g.dram_requests.map(|n| n as f64),
                ),
            ];
            for (field, unit, v) in hits {
                if let Some(v) = v {
                    put(field, unit, v);
                }
            }
        }
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
