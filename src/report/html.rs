//! The report as one self-contained HTML page: no network access, no external fonts, styles
//! or scripts. The analyzer's sections become tables, charts are inlined SVG, and a few lines
//! of script add a hover/tap tooltip (from each SVG element's `<title>`) and a light/dark
//! switch (the default follows the system's `prefers-color-scheme`).
//!
//! Layout: one column that narrows to a phone's width; wide tables and charts scroll inside
//! their own box, so the page itself never scrolls sideways.

use super::{Report, TraceReport};
use crate::analyze::compare::Comparison;
use crate::analyze::flat::{
    label, section_title, SM_BLOCKS, SM_BUSY, SM_COLUMN, STATE_CYCLES, STATE_PER_ISSUE,
};
use crate::analyze::{LaunchAnalysis, NsightState, Severity};
use crate::kernel_name;
use crate::words::count;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The `quoted` instructions of a hint's (escaped) text as `<code>`: the text form quotes
/// them in backticks, which a page would show as they are.
fn code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut parts = text.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let rest: Vec<&str> = parts.collect();
    // An unpaired backtick stays one.
    let pairs = rest.len() / 2 * 2;
    for (k, part) in rest.iter().enumerate() {
        match (k % 2, k < pairs) {
            (0, true) => {
                out.push_str("<code>");
                out.push_str(part);
                out.push_str("</code>");
            }
            (0, false) => {
                out.push('`');
                out.push_str(part);
            }
            _ => out.push_str(part),
        }
    }
    out
}

const STYLE: &str = r#"
:root { --bg:#ffffff; --fg:#1b1f24; --muted:#5b6470; --card:#f5f7fa; --line:#d9dee5;
  --accent:#0b5cad; --opt:#a3480b; --wrn:#b3261e; --inf:#2f6f3e; --bar:#0b5cad; color-scheme: light; }
:root[data-theme="dark"] { --bg:#14171b; --fg:#e6e9ee; --muted:#9aa4b1; --card:#1e232a;
  --line:#323a44; --accent:#6cb2ff; --opt:#ffb27a; --wrn:#ff8a80; --inf:#8fd19e; --bar:#6cb2ff; color-scheme: dark; }
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) { --bg:#14171b; --fg:#e6e9ee; --muted:#9aa4b1; --card:#1e232a;
    --line:#323a44; --accent:#6cb2ff; --opt:#ffb27a; --wrn:#ff8a80; --inf:#8fd19e; --bar:#6cb2ff; color-scheme: dark; }
}
* { box-sizing: border-box; }
html, body { margin:0; padding:0; background:var(--bg); color:var(--fg); }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  max-width: 1200px; margin: 0 auto; padding: 12px 16px 48px; overflow-wrap: anywhere; }
header { display:flex; flex-wrap:wrap; gap:8px 16px; align-items:baseline; justify-content:space-between;
  border-bottom:1px solid var(--line); padding-bottom:8px; margin-bottom:12px; }
h1 { font-size:1.35rem; margin:0; } h2 { font-size:1.15rem; margin:28px 0 8px; }
h3 { font-size:1rem; margin:20px 0 6px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
.meta { color:var(--muted); font-size:.9rem; }
pre.fault { font-size:.8rem; white-space:pre-wrap; border-left:3px solid #c0392b; padding:4px 10px; margin:4px 0 12px; }
button.theme { font:inherit; background:var(--card); color:var(--fg); border:1px solid var(--line);
  border-radius:6px; padding:4px 10px; cursor:pointer; }
.panels { display:grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap:0 24px; }
.panels section { min-width:0; }
.cards { display:grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap:8px; margin:8px 0 4px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:8px 10px; min-width:0; }
.card .v { font-size:1.3rem; font-weight:600; overflow-wrap:normal; } .card .k { color:var(--muted); font-size:.8rem; }
.scroll { overflow-x:auto; max-width:100%; -webkit-overflow-scrolling: touch; }
table { border-collapse:collapse; font-size:.88rem; margin:4px 0; }
th, td { padding:3px 10px 3px 0; text-align:left; border-bottom:1px solid var(--line); vertical-align:top; }
td.n, th.n { text-align:right; font-variant-numeric: tabular-nums; white-space:nowrap; }
code, td.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:.85rem; }
td.code { white-space:pre; }
.hint { margin:4px 0; padding:6px 10px; border-left:4px solid var(--inf); background:var(--card); border-radius:4px; }
.hint.opt { border-left-color:var(--opt); } .hint.wrn { border-left-color:var(--wrn); } .hint b { font-family: ui-monospace, monospace; }
.bar { display:inline-block; height:.7em; background:var(--bar); vertical-align:middle; border-radius:2px; }
figure { margin:8px 0 16px; } figcaption { color:var(--muted); font-size:.85rem; }
figure .scroll svg { display:block; max-width:100%; height:auto; background:#fff; border-radius:4px; }
@media (max-width: 760px) { figure .scroll svg { max-width:none; } }
.swatch { display:inline-block; width:.8em; height:.8em; border-radius:2px; vertical-align:middle; margin-right:4px; }
#tip { position:fixed; pointer-events:none; z-index:10; max-width:min(420px, 90vw); display:none;
  background:var(--fg); color:var(--bg); padding:6px 8px; border-radius:6px; font-size:.8rem; white-space:pre-wrap; }
footer { margin-top:32px; color:var(--muted); font-size:.8rem; }
"#;

const SCRIPT: &str = r#"
(function () {
  var root = document.documentElement;
  var saved = null;
  try { saved = localStorage.getItem('warpscope-theme'); } catch (e) {}
  if (saved) root.setAttribute('data-theme', saved);
  var btn = document.getElementById('theme');
  function dark() {
    var t = root.getAttribute('data-theme');
    return t ? t === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches;
  }
  function label() { btn.textContent = dark() ? 'Light' : 'Dark'; }
  label();
  btn.addEventListener('click', function () {
    var t = dark() ? 'light' : 'dark';
    root.setAttribute('data-theme', t);
    try { localStorage.setItem('warpscope-theme', t); } catch (e) {}
    label();
  });
  var tip = document.getElementById('tip');
  function titleOf(el) {
    for (; el && el !== document; el = el.parentNode) {
      if (el.querySelector) {
        var t = el.querySelector(':scope > title');
        if (t) return t.textContent;
      }
      if (el.tagName && el.tagName.toLowerCase() === 'svg') return null;
    }
    return null;
  }
  function show(ev) {
    var text = titleOf(ev.target);
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.display = 'block';
    var x = ev.clientX + 12, y = ev.clientY + 12;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth) x = Math.max(4, ev.clientX - w - 12);
    if (y + h > window.innerHeight) y = Math.max(4, ev.clientY - h - 12);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }
  document.querySelectorAll('figure svg').forEach(function (svg) {
    svg.addEventListener('mousemove', show);
    svg.addEventListener('click', show);
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
  // `index.html#selftest`: the page checks its own layout and controls (used by the browser
  // tests) and writes the result as JSON into a <pre id="selftest">.
  if (location.hash === '#selftest') {
    var r = { width: window.innerWidth, scroll_width: document.documentElement.scrollWidth,
      overflowing: [], dark: dark(), background: getComputedStyle(document.body).backgroundColor };
    document.querySelectorAll('body *').forEach(function (el) {
      if (el.closest('.scroll') && !el.classList.contains('scroll')) return;
      if (el.id === 'tip') return;
      var b = el.getBoundingClientRect();
      if (b.width > 0 && b.right > window.innerWidth + 1)
        r.overflowing.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''));
    });
    var rect = document.querySelector('g.tips rect');
    if (rect) {
      var b = rect.getBoundingClientRect();
      rect.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: b.left + b.width / 2, clientY: b.top + b.height / 2 }));
      r.tooltip = tip.style.display === 'block' ? tip.textContent : null;
    }
    btn.click();
    r.toggled_dark = dark();
    r.toggled_background = getComputedStyle(document.body).backgroundColor;
    btn.click();
    var pre = document.createElement('pre');
    pre.id = 'selftest';
    pre.textContent = JSON.stringify(r);
    document.body.appendChild(pre);
    // In a frame (the phone-width harness), hand the result to the page around it.
    if (window.parent !== window) window.parent.postMessage(pre.textContent, '*');
  }
})();
"#;

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.2}")
    }
}

fn table(out: &mut String, head: &[&str], rows: &[Vec<String>], numeric_from: usize) {
    out.push_str("<div class=\"scroll\"><table><thead><tr>");
    for (i, h) in head.iter().enumerate() {
        let class = if i >= numeric_from {
            " class=\"n\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i >= numeric_from {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{c}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

/// A metric table: each row is a metric's name (a [`crate::analyze::flat`] key, shown by
/// the label the `analyze` text gives it) and its value.
fn kv(out: &mut String, rows: &[(&str, String)]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, v)| vec![esc(&label(k)), esc(v)])
        .collect();
    table(out, &["metric", "value"], &rows, 1);
}

/// A section's heading, titled as the `analyze` text titles it.
fn section_heading(out: &mut String, key: &str) {
    let _ = write!(out, "<h3>{}</h3>", esc(section_title(key)));
}

fn card(out: &mut String, key: &str, value: &str) {
    let _ = write!(
        out,
        "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>",
        esc(value),
        esc(key)
    );
}

/// The stall (non-`selected`) state with the most warp-cycles.
pub fn top_stall(l: &LaunchAnalysis) -> Option<(&str, u64)> {
    l.warp_states
        .iter()
        .filter(|(k, &v)| k.as_str() != "selected" && v > 0)
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(k, &v)| (k.as_str(), v))
}

/// What a trace without warp-state events cannot show, and how to get it.
const STATES_NOT_RECORDED: &str = "<p class=\"meta\">Not recorded: record with <code>--verbosity 1</code> (the default) or <code>2</code> to see where warps wait.</p>";

/// The warp-state table: states by warp-cycles, with their cycles per issue and share.
fn warp_states(out: &mut String, l: &LaunchAnalysis) {
    let total: u64 = l.warp_states.values().sum();
    let mut states: Vec<_> = l.warp_states.iter().filter(|(_, &n)| n > 0).collect();
    states.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let max = states.first().map_or(1, |s| *s.1).max(1);
    let rows: Vec<Vec<String>> = states
        .iter()
        .map(|(name, &n)| {
            let colour = NsightState::from_name(name)
                .map(super::state_colour)
                .unwrap_or_else(|| "#888888".into());
            vec![
                format!(
                    "<span class=\"swatch\" style=\"background:{colour}\"></span>{}",
                    esc(name)
                ),
                n.to_string(),
                format!(
                    "{:.2}",
                    l.warp_states_per_issue.get(*name).copied().unwrap_or(0.0)
                ),
                format!("{:.1}%", n as f64 * 100.0 / total.max(1) as f64),
                format!(
                    "<span class=\"bar\" style=\"width:{}px\"></span>",
                    (n * 120 / max).max(1)
                ),
            ]
        })
        .collect();
    table(
        out,
        &["state", STATE_CYCLES, STATE_PER_ISSUE, "share", ""],
        &rows,
        1,
    );
    let _ = write!(
        out,
        "<p class=\"meta\">Warp cycles per issued instruction: {:.2} ({} resident warp-cycles, every one attributed).</p>",
        l.warp_cycles_per_issued_instruction, l.resident_warp_cycles
    );
}

/// Launch `li` of trace `t`; `id` is its heading's element id (unique on the page).
fn launch_section(out: &mut String, t: &TraceReport, li: usize, id: &str) {
    let l = &t.analysis.launches[li];
    let _ = write!(
        out,
        "<h2 id=\"{id}\">{} <span class=\"meta\">launch {} · cycles {}..{}{}</span></h2>",
        esc(&l.signature),
        l.index,
        l.start_cycle,
        l.end_cycle,
        if l.completed { "" } else { " · incomplete" }
    );
    if l.signature != l.name {
        // The spelling `--kernel-name` and other tools' listings use.
        let _ = write!(
            out,
            "<p class=\"meta\">mangled name <code>{}</code></p>",
            esc(&l.name)
        );
    }
    out.push_str("<div class=\"cards\">");
    card(out, "cycles", &l.cycles.to_string());
    card(out, "warp instructions", &l.warp_instructions.to_string());
    card(
        out,
        "IPC, all SMs (warp inst/cycle)",
        &format!("{:.3}", l.ipc),
    );
    card(
        out,
        "warp cycles per issued instruction",
        &format!("{:.2}", l.warp_cycles_per_issued_instruction),
    );
    card(
        out,
        "achieved / theoretical occupancy",
        // One decimal, as `analyze` prints them: whole percents showed 12.0 of 12.5 as
        // "12% / 12%", a kernel at its limit.
        &format!(
            "{:.1}% / {:.1}%",
            l.occupancy.achieved_pct, l.occupancy.theoretical_pct
        ),
    );
    if let Some((s, n)) = top_stall(l) {
        let total: u64 = l.warp_states.values().sum();
        // The share of warp-cycles as the figure, the state under it: a state name in the
        // figures' size would not fit a card.
        card(
            out,
            &format!("top stall: {s}"),
            &format!("{:.0}%", n as f64 * 100.0 / total.max(1) as f64),
        );
    }
    out.push_str("</div>");
    for h in &l.hints {
        let class = match h.severity {
            Severity::Wrn => "hint wrn",
            Severity::Opt => "hint opt",
            Severity::Inf => "hint",
        };
        let _ = write!(
            out,
            "<div class=\"{class}\"><b>{} {}</b> {}</div>",
            h.severity.label(),
            esc(h.rule),
            code_spans(&esc(&h.message))
        );
    }

    if t.analysis.launches.len() == 1 {
        figures(out, &t.charts);
    }

    out.push_str("<div class=\"panels\"><section>");
    section_heading(out, "launch_statistics");
    let ls = &l.launch;
    let dim = |d: crate::sim::Dim3| format!("({}, {}, {})", d.x, d.y, d.z);
    let mut rows = vec![
        ("grid", dim(ls.grid)),
        ("block", dim(ls.block)),
        ("threads", ls.threads.to_string()),
        ("warps_per_block", ls.warps_per_block.to_string()),
        ("registers_per_thread", ls.registers_per_thread.to_string()),
        ("shared_per_block", ls.shared_per_block.to_string()),
        ("waves_per_sm", format!("{:.2}", ls.waves_per_sm)),
        ("thread_instructions", l.thread_instructions.to_string()),
    ];
    if l.hazards > 0 {
        rows.push(("hazards", l.hazards.to_string()));
    }
    kv(out, &rows);

    out.push_str("</section><section>");
    section_heading(out, "occupancy");
    let o = &l.occupancy;
    kv(
        out,
        &[
            ("block_limit_registers", o.block_limit_registers.to_string()),
            (
                "block_limit_shared_memory",
                o.block_limit_shared_memory
                    .map_or("-".into(), |n| n.to_string()),
            ),
            ("block_limit_warps", o.block_limit_warps.to_string()),
            ("block_limit_blocks", o.block_limit_blocks.to_string()),
            ("limiter", o.limiter.name().to_string()),
            (
                "theoretical_active_warps_per_sm",
                format!("{:.2}", o.theoretical_active_warps_per_sm),
            ),
            ("theoretical_pct", format!("{:.2}", o.theoretical_pct)),
            (
                "achieved_active_warps_per_sm",
                format!("{:.2}", o.achieved_active_warps_per_sm),
            ),
            ("achieved_pct", format!("{:.2}", o.achieved_pct)),
        ],
    );

    out.push_str("</section><section>");
    section_heading(out, "scheduler");
    let s = &l.scheduler;
    // Eligibility is a warp state: without state events it is unknown, not 0.
    let states = |figure: String| match l.warp_states_recorded {
        true => figure,
        false => "not recorded".to_string(),
    };
    kv(
        out,
        &[
            ("schedulers", s.schedulers.to_string()),
            ("active_cycles_pct", format!("{:.2}", s.active_cycles_pct)),
            (
                "active_warps_per_scheduler",
                format!("{:.2}", s.active_warps_per_scheduler),
            ),
            (
                "eligible_warps_per_scheduler",
                states(format!("{:.2}", s.eligible_warps_per_scheduler)),
            ),
            (
                "issued_warp_per_scheduler",
                format!("{:.3}", s.issued_warp_per_scheduler),
            ),
            (
                "no_eligible_pct",
                states(format!("{:.2}", s.no_eligible_pct)),
            ),
            (
                "one_or_more_eligible_pct",
                states(format!("{:.2}", s.one_or_more_eligible_pct)),
            ),
            (
                "idle_with_eligible_pct",
                states(format!("{:.2}", s.idle_with_eligible_pct)),
            ),
        ],
    );

    out.push_str("</section></div>");
    section_heading(out, "warp_state");
    if l.warp_states_recorded {
        warp_states(out, l);
    } else {
        out.push_str(STATES_NOT_RECORDED);
    }
    let _ = write!(
        out,
        "<p class=\"meta\">Avg. not predicated off threads per warp: {:.2} of {:.2} launched.</p>",
        l.not_predicated_off_threads_per_warp, l.launched_threads_per_warp
    );

    out.push_str("<div class=\"panels\"><section>");
    section_heading(out, "issue_slots");
    let i = &l.issue_slots;
    let pct = |n: u64| format!("{:.1}%", n as f64 * 100.0 / i.total.max(1) as f64);
    let rows: Vec<Vec<String>> = [
        ("issued", i.issued),
        ("refill", i.refill),
        ("vertical_waste", i.vertical_waste),
        ("horizontal_waste", i.horizontal_waste),
        ("total", i.total),
    ]
    .iter()
    .map(|(k, n)| vec![esc(&label(k)), n.to_string(), pct(*n)])
    .collect();
    table(out, &["slots", "count", "share"], &rows, 1);
    let _ = write!(
        out,
        "<p class=\"meta\">{} per scheduler per cycle × {} × {}.</p>",
        count(i.width as u64, "issue slot", "issue slots"),
        count(l.cycles, "cycle", "cycles"),
        count(l.scheduler.schedulers as u64, "scheduler", "schedulers")
    );

    out.push_str("</section><section>");
    section_heading(out, "memory");
    let m = &l.memory;
    if m.recorded {
        // Loads, stores and atomics apart, as in the `analyze` text (one table for both).
        let (columns, rows) = crate::analyze::flat::global_table(m);
        let head: Vec<&str> = [crate::analyze::flat::GLOBAL_COLUMN]
            .into_iter()
            .chain(columns)
            .collect();
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(name, values)| {
                let values = values.iter().map(|v| esc(v));
                std::iter::once(esc(&name)).chain(values).collect()
            })
            .collect();
        table(out, &head, &rows, 1);
        if m.global_loads.l2_hits.is_some() {
            let _ = write!(
                out,
                "<p class=\"meta\">Note: {}.</p>",
                esc(crate::analyze::flat::STORES_HAVE_NO_HITS)
            );
        }
        kv(
            out,
            &[
                ("global_requests", m.global_requests.to_string()),
                ("global_sectors", m.global_sectors.to_string()),
                ("shared_requests", m.shared_requests.to_string()),
                ("shared_bank_conflicts", m.shared_bank_conflicts.to_string()),
            ],
        );
    } else {
        out.push_str("<p class=\"meta\">Not recorded: the trace has no memory events. <code>record</code> and <code>replay</code> write them with <code>--verbosity 2</code> (<code>profile</code> always does; <code>study</code> traces have none).</p>");
    }

    out.push_str("</section><section>");
    section_heading(out, "dispatch");
    let d = &l.dispatch;
    let opt = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
    kv(
        out,
        &[
            ("first_grant_cycle", opt(d.first_grant_cycle)),
            ("last_grant_cycle", opt(d.last_grant_cycle)),
            ("tail_cycles", d.tail_cycles.to_string()),
            ("idle_sm_pct", format!("{:.2}", d.idle_sm_pct)),
        ],
    );
    let rows: Vec<Vec<String>> = d
        .blocks_per_sm
        .iter()
        .zip(&d.busy_cycles_per_sm)
        .enumerate()
        .map(|(sm, (b, busy))| vec![sm.to_string(), b.to_string(), busy.to_string()])
        .collect();
    table(out, &[SM_COLUMN, SM_BLOCKS, SM_BUSY], &rows, 1);

    out.push_str("</section></div><h3>Source Counters</h3>");
    if !l.warp_states_recorded {
        out.push_str("<p class=\"meta\">Executions only: warp-cycles were not recorded (<code>--verbosity 0</code>).</p>");
    }
    let max = bar_scale(
        l.source
            .iter()
            .map(|s| (s.total_warp_cycles, s.total_attributed_warp_cycles)),
    );
    // A kernel assembled from text gets a column with each instruction's line (one
    // instruction per line: the table by line would say the same again).
    let asm_lines = l.source.iter().any(|s| s.asm_line.is_some());
    let rows: Vec<Vec<String>> = l
        .source
        .iter()
        .map(|s| {
            let line = asm_lines.then(|| s.asm_line.map_or("-".to_string(), |n| n.to_string()));
            let what = std::iter::once(s.pc.to_string())
                .chain(line)
                .chain([format!("<span class=\"code\">{}</span>", esc(&s.text))])
                .collect();
            counter_row(
                what,
                s.executions,
                s.total_warp_cycles,
                &s.top_state,
                s.total_attributed_warp_cycles,
                max,
            )
        })
        .collect();
    let what: &[&str] = match asm_lines {
        true => &["pc", "line", "instruction"],
        false => &["pc", "instruction"],
    };
    table(out, &counter_head(what), &rows, what.len());
    out.push_str("<p class=\"meta\">");
    // (The analysis gives lines only with their file.)
    if let (true, Some(file)) = (asm_lines, &l.asm_file) {
        let _ = write!(
            out,
            "line: the line of <code>{}</code> the instruction was assembled from; ",
            esc(file)
        );
    }
    out.push_str("warp-cycles: cycles warps spent waiting to issue (or issuing) the instruction; attributed: cycles other instructions waited for its result (<code>wait</code> after a fixed-latency one, <code>short_scoreboard</code> or <code>long_scoreboard</code> after a variable-latency one, or its dependency barrier).</p>");
    if l.cuda_source.is_empty() {
        return;
    }
    out.push_str("<h3>CUDA Source Lines</h3>");
    let max = bar_scale(
        l.cuda_source
            .iter()
            .map(|c| (c.total_warp_cycles, c.total_attributed_warp_cycles)),
    );
    let rows: Vec<Vec<String>> = l
        .cuda_source
        .iter()
        .map(|c| {
            let pcs: Vec<String> = c.pcs.iter().map(u32::to_string).collect();
            let what = vec![c.line.to_string(), pcs.join(" ")];
            counter_row(
                what,
                c.executions,
                c.total_warp_cycles,
                &c.top_state,
                c.total_attributed_warp_cycles,
                max,
            )
        })
        .collect();
    table(out, &counter_head(&["line", "pcs"]), &rows, 2);
    out.push_str("<p class=\"meta\">The instructions above summed by the CUDA source line each was compiled from (the Accel-Sim trace was recorded with lineinfo).</p>");
}

/// The full-width value of a source counters table's bars: its largest warp-cycles or
/// attributed figure (at least 1).
fn bar_scale(rows: impl Iterator<Item = (u64, u64)>) -> u64 {
    rows.map(|(cycles, attributed)| cycles.max(attributed))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// The source counters' columns: those that say what is counted, then the figures'.
fn counter_head<'a>(what: &[&'a str]) -> Vec<&'a str> {
    let figures = ["executed", "warp-cycles", "", "top state", "attributed"];
    what.iter().copied().chain(figures).collect()
}

/// A row of the source counters: what is counted, then its figures, with a bar scaled to `max`.
fn counter_row(
    mut what: Vec<String>,
    executions: u64,
    warp_cycles: u64,
    top_state: &Option<String>,
    attributed: u64,
    max: u64,
) -> Vec<String> {
    what.extend([
        executions.to_string(),
        warp_cycles.to_string(),
        format!(
            "<span class=\"bar\" style=\"width:{}px\"></span>",
            warp_cycles * 100 / max
        ),
        esc(top_state.as_deref().unwrap_or("-")),
        attributed.to_string(),
    ]);
    what
}

/// The comparison of the report's traces, each with what tells its run from the others'
/// (`Comparison::runs`, as the stalls chart's rows and `compare`'s text say it).
fn comparison_section(out: &mut String, c: &Comparison) {
    out.push_str("<h2 id=\"comparison\">Comparison</h2>");
    let rows: Vec<Vec<String>> = c
        .traces
        .iter()
        .zip(&c.runs)
        .enumerate()
        .map(|(i, (t, run))| {
            vec![
                format!("[{i}]"),
                esc(t),
                esc(run),
                if i < c.baselines { "baseline" } else { "" }.to_string(),
            ]
        })
        .collect();
    table(out, &["", "trace", "run", ""], &rows, 4);
    if !c.header_differences.is_empty() {
        out.push_str("<h3>Header differences</h3>");
        let rows: Vec<Vec<String>> = c
            .header_differences
            .iter()
            .map(|d| {
                let mut r = vec![format!("<code>{}</code>", esc(&d.field))];
                r.extend(d.values.iter().map(|v| esc(&v.to_string())));
                r
            })
            .collect();
        let mut head = vec!["field".to_string()];
        head.extend((0..c.traces.len()).map(|i| format!("[{i}]")));
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        table(out, &head, &rows, 1);
    }
    for l in &c.launches {
        let _ = write!(out, "<h3>Launch {}</h3>", l.index);
        let mut head = vec!["metric".to_string()];
        for i in 0..c.traces.len() {
            head.push(format!("[{i}]"));
            if i >= c.baselines {
                head.push("diff".into());
            }
        }
        let rows: Vec<Vec<String>> = l
            .metrics
            .iter()
            .filter(|r| {
                // Zero everywhere teaches nothing.
                r.values
                    .iter()
                    .any(|v| v.as_ref().is_some_and(|v| v.as_f64() != Some(0.0)))
            })
            .map(|r| {
                let section = crate::analyze::flat::section_title(r.section);
                let mut row = vec![esc(&format!("{section} · {}", r.label))];
                for (i, v) in r.values.iter().enumerate() {
                    row.push(match v {
                        Some(serde_json::Value::Number(n)) => num(n.as_f64().unwrap_or(0.0)),
                        Some(serde_json::Value::String(s)) => esc(s),
                        _ => "-".into(),
                    });
                    if i >= c.baselines {
                        row.push(r.diff_pct[i].map_or("-".into(), |d| format!("{d:+.1}%")));
                    }
                }
                row
            })
            .collect();
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        table(out, &head, &rows, 1);
    }
}

/// The charts, each with its caption under it and, above it, what it cannot show of the
/// trace (see [`super::Chart::note`]).
fn figures(out: &mut String, charts: &[super::Chart]) {
    for chart in charts {
        out.push_str("<figure>");
        if let Some(note) = &chart.note {
            let _ = write!(out, "<div class=\"hint wrn\">{}</div>", esc(note));
        }
        let _ = write!(
            out,
            "<div class=\"scroll\">{}</div><figcaption>{}</figcaption></figure>",
            chart.page_svg,
            esc(&chart.caption)
        );
    }
}

/// Longest list of kernels a page title spells out; past it the title names the trace.
const TITLE_KERNELS_CHARS: usize = 60;

/// The page's title: `warpscope report — ` and what it is about (see [`trace_title`]), or
/// how many traces it compares.
pub fn page_title(report: &Report) -> String {
    let subject = match report.traces.as_slice() {
        [t] => trace_title(t),
        ts => format!("{} traces", ts.len()),
    };
    format!("warpscope report — {subject}")
}

/// What one trace ran: a lone launch's kernel; for several launches, their kernels when they
/// fit a title (`vecadd, reduce (3 launches)`), else the trace's label and the counts; for a
/// study trace, its label and the schemes its launches are. Naming only the first launch
/// would title a page of five schemes `study_none`.
fn trace_title(t: &TraceReport) -> String {
    if let Some(schemes) = crate::study::trace::schemes_of(&t.header) {
        let names: Vec<&str> = schemes.iter().map(|s| s.name()).collect();
        let study = crate::study::trace::STUDY_NAME;
        return format!("{}: {study} ({})", t.label, names.join(", "));
    }
    match t.analysis.launches.as_slice() {
        [] => t.label.clone(),
        [l] => kernel_name::function(&l.name).into_owned(),
        launches => {
            let mut kernels: Vec<String> = Vec::new();
            for l in launches {
                let k = kernel_name::function(&l.name).into_owned();
                if !kernels.contains(&k) {
                    kernels.push(k);
                }
            }
            let listed = kernels.join(", ");
            if listed.chars().count() <= TITLE_KERNELS_CHARS {
                format!("{listed} ({} launches)", launches.len())
            } else {
                format!(
                    "{} ({} launches of {} kernels)",
                    t.label,
                    launches.len(),
                    kernels.len()
                )
            }
        }
    }
}

/// How a trace's launches were scheduled, for its line under the title: the config's policy
/// and scoreboard, or, for a study trace (whose config has them only as placeholders), the
/// schemes its launches are.
fn scheduling(t: &TraceReport) -> String {
    let c = &t.header.config;
    match crate::study::trace::schemes_of(&t.header) {
        Some(schemes) => {
            let names: Vec<&str> = schemes.iter().map(|s| s.name()).collect();
            format!("schemes <b>{}</b>, one launch each", names.join(", "))
        }
        None => format!(
            "policy <b>{}</b> · scoreboard <b>{}</b>",
            c.scheduler.policy.name(),
            c.scheduler.scoreboard.name()
        ),
    }
}

/// The whole page.
pub fn page(report: &Report) -> String {
    let mut out = String::new();
    let title = page_title(report);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let _ = write!(
        out,
        "<header><h1>{}</h1><button id=\"theme\" class=\"theme\" type=\"button\">Dark</button></header>",
        esc(&title)
    );
    for t in &report.traces {
        let c = &t.header.config;
        let _ = write!(
            out,
            "<p class=\"meta\"><b>{}</b> · GPU <b>{}</b> ({} × {}, issue width {}) · {} · {}{}</p>",
            esc(&t.label),
            esc(&c.name),
            count(c.num_sms as u64, "SM", "SMs"),
            count(c.sm.schedulers as u64, "scheduler", "schedulers"),
            c.sm.issue_width,
            scheduling(t),
            if t.analysis.complete {
                "complete run"
            } else {
                "INCOMPLETE run (faulted or truncated)"
            },
            if t.header.verbosity >= 2 {
                ""
            } else {
                " · no memory events"
            }
        );
        if let Some(fault) = &t.analysis.fault {
            let _ = write!(out, "<pre class=\"fault\">{}</pre>", esc(fault));
        }
    }
    if let Some(c) = &report.comparison {
        figures(&mut out, &report.comparison_charts);
        comparison_section(&mut out, c);
    }
    for (ti, t) in report.traces.iter().enumerate() {
        if report.traces.len() > 1 {
            let _ = write!(out, "<h2>{}</h2>", esc(&t.label));
        }
        if t.analysis.launches.len() != 1 {
            out.push_str("<h2>Charts (all launches)</h2>");
            figures(&mut out, &t.charts);
        }
        for li in 0..t.analysis.launches.len() {
            let index = t.analysis.launches[li].index;
            let id = match report.traces.len() {
                1 => format!("launch-{index}"),
                _ => format!("trace-{ti}-launch-{index}"),
            };
            launch_section(&mut out, t, li, &id);
        }
    }
    let _ = write!(
        out,
        "<footer>Generated by warpscope {} from the trace alone; every warp-cycle of every resident warp is attributed to exactly one state. One self-contained file: no network access.</footer>",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        out,
        "<div id=\"tip\" role=\"tooltip\"></div><script>{SCRIPT}</script></body></html>"
    );
    out
}
