//! The study as one self-contained HTML page: the settings and transport controls (play,
//! pause, step back and forward, a scrub slider) in a sticky header, and one card per scheme
//! with its grid (from `svg.rs`), a cursor over the current cycle and a narration line saying
//! who issues what in which slot and who is stalled on what. No network, fonts or scripts from
//! outside; light and dark follow `prefers-color-scheme`.
//!
//! Layout: every grid is an SVG scaled to its card's width, but never below [`MIN_SCALE`] of
//! its drawn size, so its smallest text stays 9 px: where the card is narrower (a phone) the
//! grid scrolls sideways inside it and follows the cursor, and the page itself never does. The
//! legend is HTML text, wrapping at any width. On a 1080p screen the grids' height is capped so
//! the five cards fit. `page.html#selftest` exercises the transport and measures the layout,
//! writing the result as JSON into `<pre id="selftest">` (the browser tests read it).

use super::svg::{self, BADGES, CELL, GRID_TOP, LABEL_W, LEGEND};
use super::{Cause, SchemeResult, SlotUse, StudyConfig, ThreadState};
use crate::render::SWATCH;
use std::fmt::Write as _;

/// The smallest scale a grid is drawn at, as a fraction: its cell text (`TEXT_CELL`, 12) at 9
/// CSS px, the smallest the report lets a chart's text shrink to (`TEXT_MIN` in a 900 px
/// column). Fitting every cycle of a study into a phone's width took it to 2–4 px.
pub const MIN_SCALE: (usize, usize) = (3, 4);

/// The narrowest a grid of `grid_w` SVG units is drawn, in CSS px.
pub fn min_grid_px(grid_w: usize) -> usize {
    (grid_w * MIN_SCALE.0).div_ceil(MIN_SCALE.1)
}

/// What happens in cycle `c` of a scheme, in words.
pub fn narrate(r: &SchemeResult, c: usize) -> String {
    let Some(rec) = r.grid.get(c) else {
        return format!("finished after {} cycles", r.cycles);
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(SlotUse::Refill { from, to }) = rec.slots.first() {
        parts.push(format!(
            "refill: switching from T{from} to T{to}, all {} slots lost",
            rec.slots.len()
        ));
    } else {
        let mut s = 0;
        while s < rec.slots.len() {
            let mut e = s;
            while e + 1 < rec.slots.len() && same_run(rec.slots[s], rec.slots[e + 1]) {
                e += 1;
            }
            let slots = if s == e {
                format!("slot {s}")
            } else {
                format!("slots {s}–{e}")
            };
            match rec.slots[s] {
                SlotUse::Instruction { thread, group, .. } => {
                    let idx: Vec<String> = rec.slots[s..=e]
                        .iter()
                        .map(|u| match u {
                            SlotUse::Instruction { index, cause, .. } => match cause {
                                Some(Cause::Miss) => format!("{index} (load that misses)"),
                                Some(Cause::Dep) => format!("{index} (next group depends on it)"),
                                None => index.to_string(),
                            },
                            _ => String::new(),
                        })
                        .collect();
                    let noun = if s == e {
                        "instruction"
                    } else {
                        "instructions"
                    };
                    parts.push(format!(
                        "T{thread} issues group {group} {noun} {} in {slots}",
                        idx.join(", ")
                    ));
                }
                SlotUse::VerticalWaste => {
                    parts.push(format!("{slots}: vertical waste (nothing issues)"))
                }
                SlotUse::HorizontalWaste => parts.push(format!("{slots}: horizontal waste")),
                SlotUse::Refill { .. } => {}
            }
            s = e + 1;
        }
    }
    for (t, st) in rec.threads.iter().enumerate() {
        let what = match st {
            ThreadState::Run => continue,
            ThreadState::Miss => "stalled on a miss",
            ThreadState::Dep => "stalled on a dependency",
            ThreadState::Wait => "ready, not picked",
            ThreadState::Done => "done",
        };
        parts.push(format!("T{t} {what}"));
    }
    format!("cycle {c}: {}", parts.join("; "))
}

fn same_run(a: SlotUse, b: SlotUse) -> bool {
    match (a, b) {
        (
            SlotUse::Instruction {
                thread: t1,
                group: g1,
                ..
            },
            SlotUse::Instruction {
                thread: t2,
                group: g2,
                ..
            },
        ) => t1 == t2 && g1 == g2,
        (SlotUse::VerticalWaste, SlotUse::VerticalWaste)
        | (SlotUse::HorizontalWaste, SlotUse::HorizontalWaste) => true,
        _ => false,
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text safe inside a `<script>` element.
fn script_safe(json: &str) -> String {
    json.replace("</", "<\\/")
}

const CSS: &str = r#"
:root { --bg:#f6f7f9; --fg:#1b1f24; --muted:#5b6470; --card:#ffffff; --line:#d5dae0;
  --accent:#0b63c5; --cursor:rgba(213,94,0,0.35); --head:120px; color-scheme: light; }
@media (prefers-color-scheme: dark) {
  :root { --bg:#14171b; --fg:#e6e9ee; --muted:#9aa4b1; --card:#1e232a; --line:#323a44;
    --accent:#6cb2ff; --cursor:rgba(255,176,90,0.45); color-scheme: dark; }
}
* { box-sizing: border-box; }
html, body { margin:0; background:var(--bg); color:var(--fg);
  font: 14px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { position: sticky; top:0; z-index:2; background:var(--bg); border-bottom:1px solid var(--line);
  padding:6px 12px; }
header h1 { font-size:16px; margin:0 0 2px; }
.settings { color:var(--muted); font-size:12px; margin:0 0 4px; }
.controls { display:flex; flex-wrap:wrap; gap:6px; align-items:center; }
.controls button { font:inherit; padding:2px 10px; border:1px solid var(--line); border-radius:4px;
  background:var(--card); color:var(--fg); cursor:pointer; }
.controls input[type=range] { flex:1 1 200px; min-width:120px; accent-color:var(--accent); }
#cycle-label { font-variant-numeric: tabular-nums; min-width:9em; }
main { padding:6px 12px; display:flex; flex-direction:column; gap:6px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:4px 8px; min-width:0; }
.card h2 { font-size:13px; margin:0; display:inline; }
.card .stats { color:var(--muted); font-size:12px; margin-left:8px; }
.narration { font-size:12px; margin:2px 0; min-height:1.35em; white-space:nowrap; overflow:hidden;
  text-overflow:ellipsis; }
.card .grid { overflow-x:auto; overflow-y:hidden; max-width:100%; -webkit-overflow-scrolling:touch; }
.card .grid svg { display:block; width:100%; height:auto; }
.card svg text:not([fill]) { fill:var(--fg); }
.card svg .title { display:none; }
.cursor { fill:var(--cursor); stroke:#D55E00; stroke-width:1; pointer-events:none; }
.legend { display:flex; flex-wrap:wrap; gap:2px 14px; list-style:none; margin:0; padding:0; font-size:13px; }
.legend li { display:flex; align-items:center; gap:5px; white-space:nowrap; }
.legend svg { flex:none; }
@media (min-width: 1600px) and (min-height: 900px) {
  .card .grid svg { height: calc((100vh - var(--head) - 5 * 60px) / 5); }
}
@media (max-width: 860px) {
  .narration { white-space:normal; }
  header { padding:4px 6px; }
  main { padding:4px 6px; }
}
"#;

const SCRIPT: &str = r#"
(function () {
  var data = JSON.parse(document.getElementById('study-data').textContent);
  var max = data.max, cur = 0, timer = null;
  var scrub = document.getElementById('scrub'), label = document.getElementById('cycle-label');
  function setHead() {
    // Everything above the first card: header, legend and padding.
    var h = document.querySelector('.card').getBoundingClientRect().top + window.scrollY;
    document.documentElement.style.setProperty('--head', h + 'px');
  }
  // A grid wider than its card scrolls: keep the cursor in view, centring it when it nears
  // an edge.
  function follow(box, cursor) {
    if (box.scrollWidth <= box.clientWidth) return;
    var cb = cursor.getBoundingClientRect(), bb = box.getBoundingClientRect();
    var left = cb.left - bb.left, margin = 2 * cb.width;
    if (left < margin || left + cb.width > box.clientWidth - margin) {
      box.scrollLeft += left - (box.clientWidth - cb.width) / 2;
    }
  }
  function show(c) {
    cur = Math.max(0, Math.min(max - 1, c));
    scrub.value = cur;
    label.textContent = 'cycle ' + cur + ' of ' + max;
    data.schemes.forEach(function (s) {
      var x = data.label_w + cur * data.cell;
      var cursor = document.querySelector('#card-' + s.name + ' .cursor');
      cursor.setAttribute('x', x);
      follow(document.querySelector('#card-' + s.name + ' .grid'), cursor);
      document.querySelector('#card-' + s.name + ' .narration').textContent = s.narration[Math.min(cur, s.narration.length - 1)];
    });
  }
  function pause() { if (timer !== null) { clearInterval(timer); timer = null; } }
  function play() {
    if (timer !== null) return;
    if (cur >= max - 1) show(0);
    timer = setInterval(function () { if (cur >= max - 1) { pause(); } else { show(cur + 1); } }, 250);
  }
  document.getElementById('play').addEventListener('click', play);
  document.getElementById('pause').addEventListener('click', pause);
  document.getElementById('back').addEventListener('click', function () { pause(); show(cur - 1); });
  document.getElementById('fwd').addEventListener('click', function () { pause(); show(cur + 1); });
  scrub.addEventListener('input', function () { pause(); show(parseInt(scrub.value, 10)); });
  document.addEventListener('keydown', function (e) {
    if (e.target && e.target.tagName === 'INPUT') return;
    if (e.key === 'ArrowRight') { pause(); show(cur + 1); }
    else if (e.key === 'ArrowLeft') { pause(); show(cur - 1); }
    else if (e.key === ' ') { e.preventDefault(); if (timer === null) play(); else pause(); }
  });
  window.addEventListener('resize', setHead);
  setHead();
  show(0);
  if (location.hash !== '#selftest') return;
  // Self-test: drive the transport, then measure the layout, and report as JSON.
  var r = { width: window.innerWidth, height: window.innerHeight,
    scroll_width: document.documentElement.scrollWidth,
    dark: window.matchMedia('(prefers-color-scheme: dark)').matches,
    background: getComputedStyle(document.body).backgroundColor, max: max };
  function click(id) { document.getElementById(id).click(); }
  r.start = cur;
  click('fwd'); click('fwd'); r.after_two_steps = cur;
  click('back'); r.after_step_back = cur;
  click('back'); click('back'); r.after_back_past_start = cur;
  scrub.value = 10; scrub.dispatchEvent(new Event('input')); r.after_scrub = cur;
  r.narration_at_scrub = document.querySelector('.card .narration').textContent;
  var cursor = document.querySelector('.card .cursor');
  r.cursor_x = parseFloat(cursor.getAttribute('x'));
  r.cursor_expected_x = data.label_w + 10 * data.cell;
  var cb = cursor.getBoundingClientRect(), sb = cursor.ownerSVGElement.getBoundingClientRect();
  r.cursor_inside_grid = cb.left >= sb.left - 1 && cb.right <= sb.right + 1;
  click('play');
  setTimeout(function () {
    r.after_play = cur;
    click('pause');
    var paused = cur;
    setTimeout(function () {
      r.paused_at = paused; r.after_pause_wait = cur;
      // The rendered size of a grid's text: its font size times the grid's scale.
      function textPx(svgEl) {
        var scale = svgEl.getBoundingClientRect().width / svgEl.viewBox.baseVal.width, least = Infinity;
        svgEl.querySelectorAll('text').forEach(function (t) {
          least = Math.min(least, parseFloat(t.getAttribute('font-size')) * scale);
        });
        return least;
      }
      function cursorInView(el) {
        var box = el.querySelector('.grid').getBoundingClientRect();
        var c = el.querySelector('.cursor').getBoundingClientRect();
        return c.left >= box.left - 0.5 && c.right <= box.right + 0.5;
      }
      r.cards = Array.prototype.map.call(document.querySelectorAll('.card'), function (el) {
        var b = el.getBoundingClientRect(), svgEl = el.querySelector('.grid svg');
        var g = svgEl.getBoundingClientRect(), box = el.querySelector('.grid');
        return { scheme: el.getAttribute('data-scheme'), top: b.top, bottom: b.bottom,
          left: b.left, right: b.right, grid_left: g.left, grid_right: g.right, grid_height: g.height,
          box_left: box.getBoundingClientRect().left, box_right: box.getBoundingClientRect().right,
          box_width: box.clientWidth, box_scroll_width: box.scrollWidth,
          min_text_px: textPx(svgEl), cursor_in_view: cursorInView(el) };
      });
      r.legend_text_px = parseFloat(getComputedStyle(document.querySelector('.legend')).fontSize);
      r.legend_right = document.querySelector('.legend').getBoundingClientRect().right;
      show(max - 1);
      r.cursor_in_view_at_end = Array.prototype.map.call(document.querySelectorAll('.card'), cursorInView);
      show(0);
      r.cursor_in_view_at_start = Array.prototype.map.call(document.querySelectorAll('.card'), cursorInView);
      r.header_bottom = document.querySelector('header').getBoundingClientRect().bottom;
      window.scrollTo(0, document.documentElement.scrollHeight);
      r.header_top_after_scroll = document.querySelector('header').getBoundingClientRect().top;
      r.controls_visible_after_scroll = document.getElementById('play').getBoundingClientRect().bottom > 0;
      window.scrollTo(0, 0);
      var pre = document.createElement('pre');
      pre.id = 'selftest';
      pre.textContent = JSON.stringify(r);
      document.body.appendChild(pre);
      if (window.parent !== window) window.parent.postMessage(pre.textContent, '*');
    }, 1000);
  }, 1100);
})();
"#;

/// The legend as HTML text in CSS px, each entry's swatch a small SVG of its own: it wraps to
/// any width at one text size, where an SVG legend shrank with the window.
fn legend(o: &mut String) {
    o.push_str("<ul class=\"legend\" aria-label=\"legend\">");
    for (fill, label) in LEGEND {
        let dash = if fill == "none" {
            " stroke-dasharray=\"2 2\""
        } else {
            ""
        };
        // The refill swatch's hatch is a pattern its own SVG must define.
        let (defs, fill) = if fill.starts_with("url(") {
            (
                svg::defs().replace("refill-hatch", "refill-hatch-legend"),
                "url(#refill-hatch-legend)",
            )
        } else {
            (String::new(), fill)
        };
        let _ = write!(
            o,
            "<li><svg width=\"{SWATCH}\" height=\"{SWATCH}\" viewBox=\"0 0 {SWATCH} {SWATCH}\" aria-hidden=\"true\">{defs}<rect x=\"0.5\" y=\"0.5\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"#999\"{dash}/></svg>{}</li>",
            SWATCH - 1,
            SWATCH - 1,
            esc(label)
        );
    }
    for key in BADGES.split(" · ") {
        let _ = write!(o, "<li>{}</li>", esc(key));
    }
    o.push_str("</ul>");
}

/// The page for `results` (in [`Scheme::ALL`](super::Scheme::ALL) order).
pub fn render(cfg: &StudyConfig, results: &[SchemeResult]) -> String {
    let max = results.iter().map(|r| r.cycles).max().unwrap_or(0).max(1);
    let grid_w = svg::grid_width(max);
    let block_h = svg::scheme_height(cfg.width.max(1));
    let settings = cfg.describe(" · ");
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(
        o,
        "<title>warpscope: multithreading study</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(
        o,
        "<header><h1>Hardware multithreading: issue slots under five schemes</h1><p class=\"settings\" id=\"settings\">{}</p>\
<div class=\"controls\"><button id=\"play\" type=\"button\" title=\"Play (space)\">▶ play</button>\
<button id=\"pause\" type=\"button\" title=\"Pause (space)\">❚❚ pause</button>\
<button id=\"back\" type=\"button\" title=\"Step back (←)\">◀ step</button>\
<button id=\"fwd\" type=\"button\" title=\"Step forward (→)\">step ▶</button>\
<input id=\"scrub\" type=\"range\" min=\"0\" max=\"{}\" value=\"0\" aria-label=\"cycle\">\
<span id=\"cycle-label\">cycle 0 of {max}</span></div></header><main>",
        esc(&settings),
        max - 1
    );
    legend(&mut o);
    let min_w = min_grid_px(grid_w);
    for r in results {
        let name = r.scheme.name();
        let _ = write!(
            o,
            "<section class=\"card\" id=\"card-{name}\" data-scheme=\"{name}\"><h2>{name}</h2><span class=\"stats\">{}</span>\
<p class=\"narration\"></p><div class=\"grid\"><svg viewBox=\"0 0 {grid_w} {block_h}\" style=\"min-width:{min_w}px\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"{name} issue slots\">{}{}<rect class=\"cursor\" x=\"{LABEL_W}\" y=\"{}\" width=\"{CELL}\" height=\"{}\"/></svg></div></section>",
            r.describe(" · "),
            svg::defs().replace("refill-hatch", &format!("refill-hatch-{name}")),
            svg::scheme_group(r, 0).replace("url(#refill-hatch)", &format!("url(#refill-hatch-{name})")),
            GRID_TOP - 2,
            block_h - GRID_TOP - 2
        );
    }
    o.push_str("</main>");
    let schemes: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let narration: Vec<String> = (0..=r.cycles).map(|c| narrate(r, c)).collect();
            serde_json::json!({"name": r.scheme.name(), "cycles": r.cycles, "narration": narration})
        })
        .collect();
    let data =
        serde_json::json!({"max": max, "cell": CELL, "label_w": LABEL_W, "schemes": schemes});
    let _ = writeln!(
        o,
        "<script type=\"application/json\" id=\"study-data\">{}</script><script>{SCRIPT}</script></body></html>",
        script_safe(&data.to_string())
    );
    o
}
