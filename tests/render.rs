//! The charts: SVGs are parsed and rasterised with resvg, and pixel colours at positions
//! computed from the trace's own events are checked — seed 000's dispatch picture (which block
//! is on which core when), timeline states, issue slots, occupancy, stall bars. Every chart of
//! every sample trace renders, within the size bound and deterministically; bad input is a
//! clear error, never a panic.

mod common;

use common::record::record_vecadd_launch;
use common::svg::root_width;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpscope::analyze::{analyze_file, NsightState, Taxonomy};
use warpscope::launchfile::LaunchFile;
use warpscope::render::palette::{self, identity_colour, state_colour, Rgb};
use warpscope::render::{chart, model, Chart, ChartKind, RenderError, RenderOptions};
use warpscope::sim::gpu::SimOptions;
use warpscope::sim::observer::WarpRef;
use warpscope::trace::{record, Event, TraceFormat, TraceReader, TraceWriter, DEFAULT_VERBOSITY};

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "wstrace"))
            .collect();
    v.sort();
    v
}

/// Records seed 000's vector add (six blocks of four threads on the two-core `tiny` GPU), once
/// for all the tests that read it (they run in parallel).
fn tiny_trace() -> PathBuf {
    static TRACE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TRACE.get_or_init(record_tiny_trace).clone()
}

fn record_tiny_trace() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let file = LaunchFile::load(&dir.join("vecadd_tiny.json")).unwrap();
    let config = file.gpu_config().unwrap();
    assert_eq!(config.name, "tiny");
    let mut memory = file.initial_memory();
    let path = tmp("vecadd_tiny.wstrace");
    let out = record(
        &config,
        &file.kernel_launches(),
        &mut memory,
        SimOptions::default(),
        &path,
        TraceFormat::Binary,
        DEFAULT_VERBOSITY,
    )
    .unwrap();
    assert!(out.fault.is_none());
    path
}

fn events(path: &Path) -> Vec<Event> {
    TraceReader::open(path)
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
}

struct Raster {
    pixmap: resvg::tiny_skia::Pixmap,
}

impl Raster {
    fn of(c: &Chart) -> Raster {
        let tree = resvg::usvg::Tree::from_str(&c.svg, &resvg::usvg::Options::default())
            .expect("the SVG parses");
        assert_eq!(tree.size().width() as u32, c.width);
        assert_eq!(tree.size().height() as u32, c.height);
        let mut pixmap = resvg::tiny_skia::Pixmap::new(c.width, c.height).unwrap();
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::default(),
            &mut pixmap.as_mut(),
        );
        Raster { pixmap }
    }

    fn at(&self, x: i32, y: i32) -> Rgb {
        let p = self
            .pixmap
            .pixel(x as u32, y as u32)
            .unwrap_or_else(|| panic!("({x}, {y}) is outside the chart"));
        assert_eq!(p.alpha(), 255, "pixel ({x}, {y}) is not opaque");
        Rgb(p.red(), p.green(), p.blue())
    }
}

fn row_centre(c: &Chart, label: &str) -> i32 {
    let r = c
        .rows
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no row {label}: {:?}", c.rows));
    (r.top + r.bottom) / 2
}

/// A `<text>` of a chart's SVG: where plotters anchored it, its size and its characters.
struct Text {
    x: f64,
    y: f64,
    anchor: String,
    size: f64,
    text: String,
}

/// Every `<text>` of `svg`, placed where it is drawn: inside the `translate` of the groups
/// around it (the study's grids are such groups).
fn texts(svg: &str) -> Vec<Text> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let from = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[from..from + tag[from..].find('"').unwrap()].to_string())
    };
    let need = |tag: &str, name: &str| -> String {
        attr(tag, name).unwrap_or_else(|| panic!("no {name} in {tag}"))
    };
    let mut offsets = vec![(0.0, 0.0)];
    let mut all = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let (tag, after) = rest[i..].split_once('>').unwrap();
        rest = after;
        if tag == "</g" {
            offsets.pop();
        } else if tag == "<g" || tag.starts_with("<g ") {
            let (dx, dy) = attr(tag, "transform").map_or((0.0, 0.0), |t| {
                let inner = t
                    .strip_prefix("translate(")
                    .and_then(|t| t.strip_suffix(')'))
                    .unwrap_or_else(|| panic!("not a translation: {t}"));
                let (x, y) = inner.split_once(',').unwrap();
                (x.trim().parse().unwrap(), y.trim().parse().unwrap())
            });
            let (x, y) = *offsets.last().unwrap();
            offsets.push((x + dx, y + dy));
        } else if tag.starts_with("<text") {
            let text = after.split("</text>").next().unwrap().trim();
            let (x, y) = *offsets.last().unwrap();
            all.push(Text {
                x: x + need(tag, "x").parse::<f64>().unwrap(),
                y: y + need(tag, "y").parse::<f64>().unwrap(),
                // SVG's default, which hand-written text may leave out.
                anchor: attr(tag, "text-anchor").unwrap_or_else(|| "start".into()),
                size: need(tag, "font-size").parse().unwrap(),
                text: text
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&#39;", "'"),
            });
        }
    }
    all
}

/// Chart text is readable where the report shows it scaled down: no text is under
/// `TEXT_MIN` pixels, every size is one of the named ones, and no text (its box estimated as
/// the charts lay them out) runs off the canvas or over another text.
fn check_text(c: &Chart, what: &str) {
    check_svg_text(&c.svg, c.width, c.height, what);
}

/// [`check_text`] of an SVG `width` × `height` pixels.
fn check_svg_text(svg: &str, width: u32, height: u32, what: &str) {
    use warpscope::render::{
        text_width, TEXT_CELL, TEXT_HEADING, TEXT_LABEL, TEXT_MIN, TEXT_SUBTITLE, TEXT_TITLE,
    };
    let sizes = [
        TEXT_TITLE,
        TEXT_SUBTITLE,
        TEXT_HEADING,
        TEXT_LABEL,
        TEXT_CELL,
    ];
    let all = texts(svg);
    assert!(!all.is_empty(), "{what}: no text");
    assert!(
        all.iter().any(|t| t.size == TEXT_TITLE as f64),
        "{what}: no title"
    );
    let boxes: Vec<(f64, f64, f64, f64)> = all
        .iter()
        .map(|t| {
            assert!(
                t.size >= TEXT_MIN as f64,
                "{what}: `{}` is {} px, under {TEXT_MIN}",
                t.text,
                t.size
            );
            assert!(
                sizes.iter().any(|&s| s as f64 == t.size),
                "{what}: `{}` is {} px, not one of the sizes {sizes:?}",
                t.text,
                t.size
            );
            let w = text_width(t.text.chars().count(), t.size as u32) as f64;
            let x0 = match t.anchor.as_str() {
                "start" => t.x,
                "middle" => t.x - w / 2.0,
                _ => t.x - w,
            };
            let (y0, y1) = (t.y - t.size / 2.0, t.y + t.size / 2.0);
            assert!(
                x0 >= 0.0 && x0 + w <= width as f64 && y0 >= 0.0 && y1 <= height as f64,
                "{what}: `{}` at ({}, {}) runs off the {}x{} canvas",
                t.text,
                t.x,
                t.y,
                width,
                height
            );
            (x0, y0, x0 + w, y1)
        })
        .collect();
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
            assert!(
                apart,
                "{what}: `{}` and `{}` overlap",
                all[i].text, all[j].text
            );
        }
    }
}

fn render(kind: ChartKind, path: &Path, options: &RenderOptions) -> Chart {
    chart(kind, &[path.to_path_buf()], options).unwrap_or_else(|e| panic!("{kind:?}: {e}"))
}

#[test]
fn dispatch_chart_is_seed_000s_picture() {
    let path = tiny_trace();
    let c = render(ChartKind::Dispatch, &path, &RenderOptions::default());
    let r = Raster::of(&c);
    // Seed 000: blocks granted at 0/1, 79/80, 158/159, one cycle apart, done by 238.
    let schedule = [
        ("SM0", 0, 0, 79),
        ("SM1", 1, 1, 80),
        ("SM0", 2, 79, 158),
        ("SM1", 3, 80, 159),
        ("SM0", 4, 158, 237),
        ("SM1", 5, 159, 238),
    ];
    for (sm, block, from, to) in schedule {
        let y = row_centre(&c, sm);
        for cycle in [from as f64 + 5.0, (from + to) as f64 / 2.0, to as f64 - 5.0] {
            assert_eq!(
                r.at(c.plot.x(cycle), y),
                identity_colour(block),
                "block {block} on {sm} at cycle {cycle}"
            );
        }
    }
    // Both cores are idle once the last block is done.
    assert_eq!(c.plot.x_to, 239.0);
    assert_eq!(
        r.at(c.plot.x(238.5), row_centre(&c, "SM0")),
        palette::BACKGROUND
    );
    assert!(c
        .regions
        .iter()
        .any(|g| g.text.contains("block 3 on SM1: cycles 80..159")));
}

/// The state intervals of every warp, straight from the events: a state holds from its event
/// until the warp's next state event or its exit.
fn intervals(path: &Path) -> Vec<(WarpRef, NsightState, u64, u64)> {
    let mut open: HashMap<WarpRef, (NsightState, u64)> = HashMap::new();
    let mut out = Vec::new();
    for e in events(path) {
        match e {
            Event::WarpState { cycle, warp, state } => {
                if let Some((s, from)) = open.insert(warp, (NsightState::of(state), cycle)) {
                    out.push((warp, s, from, cycle));
                }
            }
            Event::WarpExit { cycle, warp } => {
                if let Some((s, from)) = open.remove(&warp) {
                    out.push((warp, s, from, cycle));
                }
            }
            _ => {}
        }
    }
    out
}

fn check_timeline(path: &Path, options: &RenderOptions, min_len: u64) -> usize {
    let c = render(ChartKind::Timeline, path, options);
    let r = Raster::of(&c);
    let scheduler: HashMap<WarpRef, u32> = events(path)
        .into_iter()
        .filter_map(|e| match e {
            Event::WarpLaunch { warp, info, .. } => Some((warp, info.scheduler)),
            _ => None,
        })
        .collect();
    let (from, to) = (c.plot.x_from as u64, c.plot.x_to as u64);
    let mut checked = 0;
    for (w, state, a, b) in intervals(path) {
        let (a, b) = (a.max(from), b.min(to));
        if b < a + min_len * c.bin_cycles || options.sm.is_some_and(|sm| sm != w.sm) {
            continue;
        }
        let label = format!("SM{} S{} w{}", w.sm, scheduler[&w], w.slot);
        let x = c.plot.x((a + b) as f64 / 2.0);
        assert_eq!(
            r.at(x, row_centre(&c, &label)),
            state_colour(state),
            "{label} in {state:?} over cycles {a}..{b} (x = {x})"
        );
        checked += 1;
    }
    checked
}

#[test]
fn timeline_colour_is_the_state_the_trace_says() {
    let path = tiny_trace();
    // 3.7 px per cycle: every interval of 2+ cycles has a pixel of its own.
    let n = check_timeline(&path, &RenderOptions::default(), 2);
    assert!(n >= 12, "{n} intervals checked");
    // Binned (3 cycles per column): an interval of 3+ columns shows its state in its middle.
    let n = check_timeline(
        &sample("reduce.small.lrr.wstrace"),
        &RenderOptions::default(),
        3,
    );
    assert!(n >= 16, "{n} intervals checked");
    let zoom = RenderOptions {
        from: Some(200),
        to: Some(400),
        sm: Some(1),
        ..RenderOptions::default()
    };
    let c = render(
        ChartKind::Timeline,
        &sample("reduce.small.lrr.wstrace"),
        &zoom,
    );
    assert_eq!(c.bin_cycles, 1);
    assert!(c.rows.iter().all(|r| r.label.starts_with("SM1 ")));
    assert!(check_timeline(&sample("reduce.small.lrr.wstrace"), &zoom, 1) > 0);
    // Unbinned tooltips name the instruction.
    assert!(c.regions.iter().any(|g| g.text.contains(", PC ")));
}

#[test]
fn slot_grid_shows_each_issue_in_its_warps_colour_and_waste_elsewhere() {
    let path = tiny_trace();
    let c = render(ChartKind::Slots, &path, &RenderOptions::default());
    let r = Raster::of(&c);
    let mut issued: HashMap<(u32, u64), u32> = HashMap::new();
    for e in events(&path) {
        if let Event::Issue {
            cycle, warp, slot, ..
        } = e
        {
            assert_eq!(slot, 0, "tiny issues one per cycle");
            issued.insert((warp.sm, cycle), warp.slot);
        }
    }
    assert_eq!(issued.len(), 6 * 13);
    for sm in 0..2u32 {
        let y = row_centre(&c, &format!("SM{sm} S0 slot 0"));
        for cycle in 0..239u64 {
            let expected = match issued.get(&(sm, cycle)) {
                Some(&w) => identity_colour(w),
                None => palette::VERTICAL_WASTE,
            };
            assert_eq!(
                r.at(c.plot.x(cycle as f64 + 0.5), y),
                expected,
                "SM{sm} cycle {cycle}"
            );
        }
    }
}

#[test]
fn slots_legend_lists_only_what_is_drawn_under_the_plot() {
    // reduce on small under gto at issue width 1: no refill (only `coarse` refills), no
    // unused slot of an issuing cycle (one slot per cycle).
    let path = sample("reduce.small.gto.wstrace");
    for width in [None, Some(400)] {
        let options = RenderOptions {
            width,
            ..RenderOptions::default()
        };
        let c = render(ChartKind::Slots, &path, &options);
        let t = texts(&c.svg);
        let said = |s: &str| t.iter().any(|x| x.text == s);
        assert!(!said("refill (coarse switch)"), "{width:?}");
        assert!(!said("unused slot (horizontal)"), "{width:?}");
        assert!(said("no issue (vertical waste)"), "{width:?}");
        assert!(said("warp slot 0"), "{width:?}");
        // The legend is under the plot, not beside it: the plot takes the chart's width and
        // the chart ends soon after the legend's last row (beside, its 20 entries made the
        // chart 538 pixels high, the plot filling its top 40 %).
        for x in t.iter().filter(|x| x.text.starts_with("warp slot ")) {
            assert!(x.y > f64::from(c.plot.bottom), "{} at {}", x.text, x.y);
        }
        assert!(c.plot.right > c.width as i32 - 100, "{width:?}");
        if width.is_none() {
            assert!(c.height < 450, "{}", c.height);
        }
        // The strips are labelled per scheduler.
        assert!(said("SM0 S0 warps") && said("SM1 S0 warps"), "{width:?}");
    }
}

#[test]
fn slot_grid_has_thread_state_strips_in_state_colours() {
    let path = tiny_trace();
    let c = render(ChartKind::Slots, &path, &RenderOptions::default());
    assert_eq!(c.bin_cycles, 1);
    let r = Raster::of(&c);
    let mut checked = 0;
    for (w, state, a, b) in intervals(&path) {
        if b < a + 2 {
            continue;
        }
        let y = row_centre(&c, &format!("SM{} S0 w{} state", w.sm, w.slot));
        let x = c.plot.x((a + b) as f64 / 2.0);
        assert_eq!(
            r.at(x, y),
            state_colour(state),
            "SM{} w{} {state:?} over {a}..{b}",
            w.sm,
            w.slot
        );
        checked += 1;
    }
    assert!(checked >= 12, "{checked} intervals checked");
}

/// The widths of the lines drawn in `colour` in `svg`, in order.
fn line_widths(svg: &str, colour: Rgb) -> Vec<String> {
    let stroke = format!("stroke=\"{}\"", colour.hex());
    svg.split("<polyline")
        .skip(1)
        .filter(|l| l.contains(&stroke))
        .filter_map(|l| l.split("stroke-width=\"").nth(1))
        .map(|w| w.split('"').next().unwrap_or_default().to_string())
        .collect()
}

/// With one warp per scheduler at issue width 1 the eligible and IPC lines are one line; the
/// eligible one is then drawn wider, under IPC's, so that it still shows.
#[test]
fn occupancy_shows_an_eligible_line_that_coincides_with_ipc() {
    let one = render(
        ChartKind::Occupancy,
        &sample("vecadd_tiny.tiny.wstrace"),
        &RenderOptions::default(),
    );
    assert_eq!(line_widths(&one.svg, palette::ELIGIBLE), ["5", "5"]);
    assert_eq!(line_widths(&one.svg, palette::ISSUED), ["2", "2"]);
    let many = render(
        ChartKind::Occupancy,
        &sample("reduce.small.gto.wstrace"),
        &RenderOptions::default(),
    );
    // Not one line, but close in places: still wider than IPC's, so it shows beside it.
    assert_eq!(line_widths(&many.svg, palette::ELIGIBLE), ["3", "3"]);
    assert_eq!(line_widths(&many.svg, palette::ISSUED), ["2", "2"]);
    // The eligible line comes first: under IPC's.
    let first = |c: &Chart, colour: Rgb| c.svg.find(&format!("stroke=\"{}\"", colour.hex()));
    assert!(first(&one, palette::ELIGIBLE) < first(&one, palette::ISSUED));
}

#[test]
fn occupancy_fills_active_warps_while_a_block_is_resident() {
    let path = tiny_trace();
    let c = render(ChartKind::Occupancy, &path, &RenderOptions::default());
    let r = Raster::of(&c);
    for sm in 0..2 {
        let row = c
            .rows
            .iter()
            .find(|r| r.label == format!("SM{sm} S0"))
            .unwrap();
        // One warp resident from the grant on: the fill reaches the one-warp line (above the
        // eligible and IPC lines at 0, drawn 5 px wide here where they coincide).
        let x = c.plot.x(40.0);
        assert_eq!(r.at(x, row.bottom - 8), palette::ACTIVE);
        // SM0's last warp exits at 237.
        if sm == 0 {
            assert_eq!(r.at(c.plot.x(238.2), row.bottom - 20), palette::BACKGROUND);
        }
    }
}

/// The total and hover text of the compact stalls chart's row `label`, after checking that
/// its stacked bar has each state's segment in the state's colour, as long as the analyzer
/// says, and ends at the run's total.
fn check_stacked_row(c: &Chart, r: &Raster, label: &str, per_issue: &[(NsightState, f64)]) {
    let row = c
        .rows
        .iter()
        .find(|row| row.label == label)
        .unwrap_or_else(|| panic!("no row {label}: {:?}", c.rows));
    let y = (row.top + row.bottom) / 2;
    let mut sum = 0.0;
    let mut last = None;
    for &(s, v) in per_issue.iter().filter(|(_, v)| *v > 0.0) {
        let (x0, x1) = (c.plot.x(sum), c.plot.x(sum + v));
        sum += v;
        if x1 - x0 >= 4 {
            assert_eq!(r.at((x0 + x1) / 2, y), state_colour(s), "{label} {s:?}");
        }
        last = Some((s, x1 - x0));
    }
    let end = c.plot.x(sum);
    if let Some((s, w)) = last.filter(|&(_, w)| w >= 3) {
        assert_eq!(
            r.at(end - 2, y),
            state_colour(s),
            "{label} ends in {s:?} ({w} px)"
        );
    }
    assert!(
        NsightState::ALL
            .iter()
            .all(|&s| r.at(end + 1, y) != state_colour(s)),
        "{label} ends at {end}"
    );
    // The row's hover region says the total.
    let total = format!("{label}: {sum:.3} warp-cycles per issued instruction");
    assert!(
        c.regions.iter().any(|g| g.text.starts_with(&total)),
        "{total}: {:?}",
        c.regions.iter().map(|g| &g.text).collect::<Vec<_>>()
    );
}

/// The analyzer's warp-cycles per issued instruction of `launch`, state by state in
/// `NsightState::ALL` order.
fn per_issue(launch: &warpscope::analyze::LaunchAnalysis) -> Vec<(NsightState, f64)> {
    NsightState::ALL
        .iter()
        .map(|&s| {
            let v = launch.warp_states_per_issue.get(s.name()).copied();
            (s, v.unwrap_or(0.0))
        })
        .collect()
}

#[test]
fn stall_bars_end_at_the_analyzers_values() {
    // One trace: a bar per state.
    let p = sample("reduce.small.gto.wstrace");
    let c = render(ChartKind::Stalls, &p, &RenderOptions::default());
    let r = Raster::of(&c);
    let a = analyze_file(&p, Taxonomy::Nsight).unwrap();
    for (state, &v) in &a.launches[0].warp_states_per_issue {
        let s = NsightState::from_name(state).unwrap();
        let label = format!("reduce.small.gto.wstrace (gto) / {state}");
        let Some(row) = c.rows.iter().find(|r| r.label == label) else {
            assert_eq!(v, 0.0, "{label} has no bar");
            continue;
        };
        let y = (row.top + row.bottom) / 2;
        let end = c.plot.x(v);
        if end - c.plot.left >= 4 {
            assert_eq!(r.at(end - 2, y), state_colour(s), "{label} = {v}");
        }
        assert_ne!(
            r.at(end + 1, y),
            state_colour(s),
            "{label} = {v} ends there"
        );
    }
    // Two: a row each, its bar stacked by state.
    let paths = [
        sample("reduce.small.gto.wstrace"),
        sample("reduce.small.lrr.wstrace"),
    ];
    let c = chart(ChartKind::Stalls, &paths, &RenderOptions::default()).unwrap();
    let r = Raster::of(&c);
    assert_eq!(c.rows.len(), 2);
    for p in &paths {
        let a = analyze_file(p, Taxonomy::Nsight).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let policy = TraceReader::open(p)
            .unwrap()
            .header()
            .config
            .scheduler
            .policy;
        let label = format!("{name} ({})", policy.name());
        check_stacked_row(&c, &r, &label, &per_issue(&a.launches[0]));
    }
}

/// The text drawn in a compact stalls chart's label column for its row `label`, its lines
/// joined.
fn row_label_text(c: &Chart, label: &str) -> String {
    let row = c.rows.iter().find(|r| r.label == label).unwrap();
    texts(&c.svg)
        .into_iter()
        .filter(|t| {
            t.x == f64::from(c.plot.left - 6) && t.y >= row.top as f64 && t.y <= row.bottom as f64
        })
        .map(|t| t.text)
        .collect::<Vec<_>>()
        .join("")
}

#[test]
fn stall_groups_of_traces_with_one_file_name_are_told_apart_by_their_directories() {
    let paths = ["a", "b"].map(|sub| tmp(&format!("same-name/{sub}/t.wstrace")));
    for (path, trace) in paths.iter().zip(["reduce.small.gto", "reduce.small.lrr"]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(sample(&format!("{trace}.wstrace")), path).unwrap();
    }
    let c = chart(ChartKind::Stalls, &paths, &RenderOptions::default()).unwrap();
    let rows: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(rows, ["a/t.wstrace (gto)", "b/t.wstrace (lrr)"]);
    // Drawn without the extension, with the policy the name does not say.
    assert_eq!(row_label_text(&c, rows[0]), "a/t (gto)");
    assert_eq!(row_label_text(&c, rows[1]), "b/t (lrr)");
}

/// The traces `warpscope sweep` writes of the shared Accel-Sim vector add into `dir` under
/// `flags`, sorted by name.
fn sweep_vecadd(dir: &str, flags: &[&str]) -> Vec<PathBuf> {
    sweep_input("tests/data/accelsim/vectoradd-100-32", dir, flags)
}

/// The stalls chart's title (its lines joined) and rows' labels.
fn stall_captions(c: &Chart) -> (String, Vec<String>) {
    let texts = texts(&c.svg);
    let title: Vec<String> = texts
        .iter()
        .filter(|t| t.size == f64::from(warpscope::render::TEXT_TITLE))
        .map(|t| t.text.clone())
        .collect();
    let groups = c.rows.iter().map(|r| r.label.clone()).collect();
    (title.join(" "), groups)
}

#[test]
fn stall_groups_and_title_name_what_differs_between_the_traces() {
    // Scoreboards differ, policy and GPU do not.
    let traces = sweep_vecadd(
        "sweep-scoreboards",
        &["--scoreboard", "bitmap,ranges,barriers"],
    );
    let c = chart(ChartKind::Stalls, &traces, &RenderOptions::default()).unwrap();
    check_text(&c, "scoreboards");
    let (title, groups) = stall_captions(&c);
    assert!(
        title.ends_with("vecAdd<float> on pascal (gto) with barriers, bitmap, ranges scoreboards"),
        "{title}"
    );
    for (group, scoreboard) in groups.iter().zip(["barriers", "bitmap", "ranges"]) {
        assert!(
            *group == format!("gto.{scoreboard}.wstrace ({scoreboard} scoreboard)"),
            "{groups:?}"
        );
    }
    // Policies and GPUs differ: each group names its own pair, the title both lists.
    let mut traces = sweep_vecadd("sweep-volta", &["--gpu", "volta", "--policy", "gto,lrr"]);
    traces.extend(sweep_vecadd(
        "sweep-hopper",
        &["--gpu", "hopper", "--policy", "gto,lrr"],
    ));
    let c = chart(ChartKind::Stalls, &traces, &RenderOptions::default()).unwrap();
    check_text(&c, "policies and GPUs");
    let (title, groups) = stall_captions(&c);
    assert!(
        title.ends_with("vecAdd<float> on volta, hopper (gto, lrr)"),
        "{title}"
    );
    let expected = [
        ("sweep-volta/gto", "volta, gto"),
        ("sweep-volta/lrr", "volta, lrr"),
        ("sweep-hopper/gto", "hopper, gto"),
        ("sweep-hopper/lrr", "hopper, lrr"),
    ];
    assert_eq!(groups.len(), expected.len(), "{groups:?}");
    for (group, (label, parts)) in groups.iter().zip(expected) {
        assert!(
            *group == format!("{label}.bitmap.wstrace ({parts})"),
            "{groups:?}"
        );
    }
}

#[test]
fn a_stall_row_leaves_out_what_its_file_name_says_in_sweep_spellings() {
    // `w64` and `mem-fixed200` say warp slots and memory model.
    let traces = sweep_vecadd(
        "sweep-spellings",
        &[
            "--scoreboard",
            "bitmap,barriers",
            "--warps",
            "64,32",
            "--memory",
            "ideal,fixed:200",
        ],
    );
    let c = chart(ChartKind::Stalls, &traces, &RenderOptions::default()).unwrap();
    let (title, _) = stall_captions(&c);
    assert!(
        title.ends_with(
            "with barriers, bitmap scoreboards; 32, 64 warp slots per SM; memory fixed:200, ideal"
        ),
        "{title}"
    );
    for row in &c.rows {
        let file = row.label.split(' ').next().unwrap();
        assert!(row.label.contains(" memory)"), "{}", row.label);
        let text = row_label_text(&c, &row.label);
        assert_eq!(
            text,
            file.strip_suffix(".wstrace").unwrap(),
            "{}",
            row.label
        );
    }
    // Mixed traces still say what their names do not.
    let c = chart(
        ChartKind::Stalls,
        &[sample("reduce.small.gto.wstrace"), traces[0].clone()],
        &RenderOptions::default(),
    )
    .unwrap();
    let labels: Vec<String> = c
        .rows
        .iter()
        .map(|r| row_label_text(&c, &r.label))
        .collect();
    assert!(labels[0].starts_with("reduce.small.gto ("), "{labels:?}");
    assert!(labels[1].contains("vecAdd"), "{labels:?}");
    assert_ne!(labels[0], labels[1]);
}

/// The traces `warpscope sweep` writes of the launch file `kernels/{kernel}.json` into `dir`
/// under `flags`, sorted by name.
fn sweep_kernel(kernel: &str, dir: &str, flags: &[&str]) -> Vec<PathBuf> {
    sweep_input(&format!("kernels/{kernel}.json"), dir, flags)
}

/// The traces `warpscope sweep` writes of `input` (relative to the crate) into `dir` under
/// `flags`, sorted by name.
fn sweep_input(input: &str, dir: &str, flags: &[&str]) -> Vec<PathBuf> {
    let out = tmp(dir);
    let _ = std::fs::remove_dir_all(&out);
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join(input);
    let mut args = vec![
        "sweep",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(flags);
    let o = warpscope(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wstrace"))
        .collect();
    traces.sort();
    traces
}

#[test]
fn a_stall_row_says_its_runs_cycles_and_ipc_beside_its_bar() {
    // More warps per scheduler: more warp-cycles per issued instruction, yet fewer cycles.
    let traces = sweep_kernel(
        "reduce",
        "sweep-little",
        &["--policy", "smt", "--issue-width", "2", "--warps", "8,16"],
    );
    let [w16, w8] = [&traces[0], &traces[1]];
    assert!(w16.ends_with("smt.bitmap.w16.wstrace") && w8.ends_with("smt.bitmap.w8.wstrace"));
    let run = |p: &Path| analyze_file(p, Taxonomy::Nsight).unwrap().launches[0].clone();
    let (a16, a8) = (run(w16), run(w8));
    assert!(
        a16.warp_cycles_per_issued_instruction > a8.warp_cycles_per_issued_instruction
            && a16.cycles < a8.cycles,
        "w16: {} per issue, {} cycles; w8: {} per issue, {} cycles",
        a16.warp_cycles_per_issued_instruction,
        a16.cycles,
        a8.warp_cycles_per_issued_instruction,
        a8.cycles
    );
    for (width, ipc) in [(None, true), (Some(400), false)] {
        let options = RenderOptions {
            width,
            ..RenderOptions::default()
        };
        let c = chart(ChartKind::Stalls, &traces, &options).unwrap();
        let what = format!("cycles at width {width:?}");
        check_text(&c, &what);
        let all = texts(&c.svg);
        // Headed over the first row, right of the plot.
        let first = c.rows[0].top as f64;
        let heading = |name: &str| {
            all.iter()
                .find(|t| t.text == name && t.y < first && t.x > c.plot.right as f64)
                .is_some()
        };
        assert!(heading("cycles"), "{what}");
        assert_eq!(heading("IPC"), ipc, "{what}");
        for (row, a) in c.rows.iter().zip([&a16, &a8]) {
            let in_row: Vec<&str> = all
                .iter()
                .filter(|t| {
                    t.x > c.plot.right as f64 && t.y >= row.top as f64 && t.y <= row.bottom as f64
                })
                .map(|t| t.text.as_str())
                .collect();
            let mut want = vec![a.cycles.to_string()];
            if ipc {
                want.push(format!("{:.2}", a.ipc));
            }
            assert_eq!(in_row, want, "{what}: {}", row.label);
            let hover = format!("{} cycles, IPC {:.3}", a.cycles, a.ipc);
            assert!(
                c.regions
                    .iter()
                    .any(|g| g.text.starts_with(&row.label) && g.text.ends_with(&hover)),
                "{what}: {hover}"
            );
        }
    }
}

#[test]
fn a_stall_row_leaves_out_only_what_its_file_name_says_not_its_directory() {
    // Files of one name in two sweeps are told apart by their directories, whose names say
    // a kernel: whether a row names its kernel depends on its file name alone, so every row
    // does.
    let flags = ["--gpu", "small,volta", "--policy", "gto,lrr"];
    let reduce = sweep_kernel("reduce", "sw-reduce", &flags);
    let matmul = sweep_kernel("matmul", "sw-matmul", &flags);
    let pick = |traces: &[PathBuf], name: &str| {
        traces
            .iter()
            .find(|p| p.ends_with(name))
            .unwrap_or_else(|| panic!("no {name} in {traces:?}"))
            .clone()
    };
    let paths = [
        pick(&reduce, "small.gto.bitmap.wstrace"),
        pick(&reduce, "small.lrr.bitmap.wstrace"),
        pick(&matmul, "small.gto.bitmap.wstrace"),
    ];
    let c = chart(ChartKind::Stalls, &paths, &RenderOptions::default()).unwrap();
    let labels: Vec<String> = c
        .rows
        .iter()
        .map(|r| row_label_text(&c, &r.label))
        .collect();
    assert_eq!(
        labels,
        [
            "sw-reduce/small.gto.bitmap (reduce)",
            "small.lrr.bitmap (reduce)",
            "sw-matmul/small.gto.bitmap (matmul)"
        ]
    );
    let (title, _) = stall_captions(&c);
    assert!(
        title.ends_with("reduce vs matmul on small (gto, lrr)"),
        "{title}"
    );
}

/// The trace `warpscope replay` writes, as `out` in the tests' directory, of the Accel-Sim
/// test trace `tests/data/accelsim/{name}`.
fn replayed(name: &str, out: &str) -> PathBuf {
    let trace = tmp(out);
    let input = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/accelsim")
        .join(name);
    let o = warpscope(&[
        "replay",
        input.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    trace
}

#[test]
fn source_chart_heads_a_replayed_kernel_with_its_demangled_signature() {
    let trace = replayed("v5-ampere-reduce", "v5-ampere-reduce.wstrace");
    let c = render(ChartKind::Source, &trace, &RenderOptions::default());
    let headings: Vec<String> = texts(&c.svg)
        .into_iter()
        .filter(|t| t.text.starts_with("launch "))
        .map(|t| t.text)
        .collect();
    assert_eq!(headings.len(), 1, "{headings:?}");
    assert!(
        headings[0].starts_with("launch 0: reduce(float*, float*, int) ("),
        "{headings:?}"
    );
    assert!(!c.svg.contains("_Z6reduce"), "a mangled name is left");
}

#[test]
fn source_chart_tooltips_name_an_assembled_instructions_line() {
    // vecadd.sasm, as `record` is given it: each row's hover text says where it was written.
    let trace = tmp("vecadd-lines.wstrace");
    let launch = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/vecadd.json");
    let o = warpscope(&[
        "record",
        launch.to_str().unwrap(),
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = render(ChartKind::Source, &trace, &RenderOptions::default());
    let tips: Vec<&str> = c.regions.iter().map(|r| r.text.as_str()).collect();
    assert!(
        tips.iter()
            .any(|t| t.starts_with("PC 6: ") && t.contains("LDG R4, [R2] (vecadd.sasm:18)")),
        "{tips:?}"
    );
}

/// `--kernel` narrows the charts that sum a trace's launches to one kernel's, as `analyze
/// --kernel` picks them; a time chart refuses it and names the kernel's cycles instead.
#[test]
fn a_kernel_selection_narrows_stalls_and_source_and_time_charts_name_its_cycles() {
    let trace = replayed("v4-volta-2d", "v4-volta-2d-kernel.wstrace");
    let whole = analyze_file(&trace, Taxonomy::Nsight).unwrap();
    assert_eq!(whole.launches.len(), 2);
    let kernel = |k: &str| RenderOptions {
        kernel: Some(k.to_string()),
        ..RenderOptions::default()
    };
    let heading = |c: &Chart| -> Vec<String> {
        texts(&c.svg)
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.contains("warp instructions"))
            .collect()
    };
    // `loop` is the first kernel's function name: exactly that kernel, not the second, whose
    // name contains it.
    for (pattern, index) in [("loop", 0), ("again", 1)] {
        let l = &whole.launches[index];
        let c = render(ChartKind::Stalls, &trace, &kernel(pattern));
        assert_eq!(
            heading(&c),
            [format!(
                "v4-volta-2d-kernel.wstrace (gto): {} warp instructions",
                l.warp_instructions
            )],
            "{pattern}"
        );
        // The caption names that kernel alone (without --kernel: both).
        assert_eq!(
            texts(&c.svg)[0].text,
            format!(
                "Warp-cycles per issued instruction: {} on volta (gto)",
                warpscope::kernel_name::function(&l.name)
            )
        );
        let c = render(ChartKind::Source, &trace, &kernel(pattern));
        let launches: Vec<String> = texts(&c.svg)
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.starts_with("launch "))
            .collect();
        assert_eq!(launches.len(), 1, "{launches:?}");
        assert!(
            launches[0].starts_with(&format!("launch {index}: ")),
            "{launches:?}"
        );
    }
    // Both kernels: a row per launch, as the subtitle says.
    let both = render(ChartKind::Stalls, &trace, &RenderOptions::default());
    let rows: Vec<&str> = both.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (row, l) in rows.iter().zip(&whole.launches) {
        assert_eq!(
            *row,
            format!(
                "launch {}: {}",
                l.index,
                warpscope::kernel_name::function(&l.name)
            )
        );
    }
    assert!(
        texts(&both.svg)
            .iter()
            .any(|t| t.text == "v4-volta-2d-kernel.wstrace: one row per launch"),
        "{:?}",
        texts(&both.svg).iter().map(|t| &t.text).collect::<Vec<_>>()
    );
    let r = Raster::of(&both);
    for (row, l) in rows.iter().zip(&whole.launches) {
        check_stacked_row(&both, &r, row, &per_issue(l));
    }

    let again = &whole.launches[1];
    match chart(
        ChartKind::Timeline,
        std::slice::from_ref(&trace),
        &kernel("again"),
    ) {
        Err(RenderError::KernelOnTimeChart {
            chart, from, to, ..
        }) => {
            assert_eq!(chart, "timeline");
            assert_eq!((from, to), (again.start_cycle, again.end_cycle));
        }
        other => panic!("{:?}", other.map(|c| c.kind)),
    }
    let e = chart(
        ChartKind::Stalls,
        std::slice::from_ref(&trace),
        &kernel("nope"),
    )
    .unwrap_err();
    assert!(matches!(e, RenderError::NoSuchKernel { .. }), "{e}");
    assert!(e.to_string().contains("no launch of kernel `nope`"), "{e}");
}

#[test]
fn source_heat_bar_starts_with_the_instructions_first_stall_state() {
    let path = sample("reduce.small.gto.wstrace");
    let c = render(ChartKind::Source, &path, &RenderOptions::default());
    let r = Raster::of(&c);
    let a = analyze_file(&path, Taxonomy::Nsight).unwrap();
    let mut checked = 0;
    for line in &a.launches[0].source {
        let first = NsightState::ALL
            .iter()
            .copied()
            .filter(|&s| s != NsightState::Selected)
            .find(|s| line.warp_cycles.get(s.name()).is_some_and(|&n| n > 0));
        let Some(first) = first else { continue };
        let n = line.warp_cycles[first.name()];
        if c.plot.x(n as f64) - c.plot.left < 4 {
            continue;
        }
        let y = row_centre(&c, &format!("reduce PC {}", line.pc));
        assert_eq!(
            r.at(c.plot.left + 2, y),
            state_colour(first),
            "PC {}",
            line.pc
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked}");
}

#[test]
fn every_chart_of_every_sample_renders_small_and_deterministic() {
    let all = samples();
    assert!(all.len() >= 8);
    for p in &all {
        for kind in ChartKind::ALL {
            let a = render(kind, p, &RenderOptions::default());
            let b = render(kind, p, &RenderOptions::default());
            assert!(
                a.svg == b.svg,
                "{kind:?} of {} is not deterministic",
                p.display()
            );
            assert!(
                a.svg.len() < 2 << 20,
                "{kind:?} of {}: {} bytes",
                p.display(),
                a.svg.len()
            );
            Raster::of(&a);
            assert!(a.svg.contains("<text"), "{kind:?} has a title");
        }
    }
    let c = chart(ChartKind::Stalls, &all, &RenderOptions::default()).unwrap();
    assert_eq!(c.rows.len() % all.len(), 0);
}

#[test]
fn chart_text_is_readable_and_clear_of_other_text_in_every_chart() {
    let options = [
        RenderOptions::default(),
        // Zoomed in: one column per cycle, numbers in the slot cells.
        RenderOptions {
            from: Some(100),
            to: Some(160),
            sm: Some(0),
            ..RenderOptions::default()
        },
    ];
    let mut checked = 0;
    for p in samples() {
        for kind in ChartKind::ALL {
            for o in &options {
                // Not every sample has warps on SM0 in that window.
                let Ok(c) = chart(kind, std::slice::from_ref(&p), o) else {
                    continue;
                };
                check_text(&c, &format!("{kind:?} of {} {o:?}", p.display()));
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "{checked} charts checked");
    let compared = [
        sample("reduce.small.gto.wstrace"),
        sample("reduce.small.lrr.wstrace"),
    ];
    let c = chart(ChartKind::Stalls, &compared, &RenderOptions::default()).unwrap();
    check_text(&c, "stalls of gto vs lrr");
    let c = render(
        ChartKind::Dispatch,
        &tiny_trace(),
        &RenderOptions::default(),
    );
    check_text(&c, "dispatch of the tiny trace");
    // 96 SMs: rows thinner than their labels, labelled every few rows.
    let wide = record_vecadd_warps("text", 384, 96);
    for kind in ChartKind::ALL {
        let c = render(kind, &wide, &RenderOptions::default());
        check_text(&c, &format!("{kind:?} of 96 SMs"));
    }
}

/// The tiny trace again, as `name` (JSON Lines), its kernel called `kernel` and each
/// instruction of its listing written as `instruction(pc, text)`.
fn retitled_trace(
    name: &str,
    kernel: &str,
    instruction: &dyn Fn(usize, &str) -> String,
) -> PathBuf {
    let reader = TraceReader::open(&tiny_trace()).unwrap();
    let mut header = reader.header().clone();
    for l in &mut header.launches {
        l.kernel = kernel.to_string();
        for (pc, text) in l.listing.iter_mut().enumerate() {
            *text = instruction(pc, text);
        }
    }
    let path = tmp(name);
    let mut writer = TraceWriter::new(
        std::fs::File::create(&path).unwrap(),
        TraceFormat::Jsonl,
        &header,
    )
    .unwrap();
    for e in events(&tiny_trace()) {
        writer.write(&e).unwrap();
    }
    writer.finish(true).unwrap();
    path
}

#[test]
fn a_long_instruction_is_cut_short_of_the_next_column_and_whole_in_its_hover() {
    // Replayed SASS can be this long: 120 characters, twice the column's cap.
    let long = |pc: usize, _: &str| format!("FFMA.FTZ.RZ R{pc}, {}", "R2.reuse, ".repeat(11));
    let path = retitled_trace("long-instructions.wstrace.jsonl", "vecadd", &long);
    let c = render(ChartKind::Source, &path, &RenderOptions::default());
    check_text(&c, "source of long instructions");
    let shown: Vec<Text> = texts(&c.svg)
        .into_iter()
        .filter(|t| t.text.starts_with("FFMA"))
        .collect();
    assert_eq!(shown.len(), c.rows.len());
    for t in &shown {
        assert!(t.text.ends_with('…'), "`{}` is not cut", t.text);
    }
    for pc in 0..shown.len() {
        let whole = format!("PC {pc}: {}", long(pc, ""));
        assert!(
            c.regions.iter().any(|r| r.text.starts_with(&whole)),
            "no region says {whole}"
        );
    }
}

#[test]
fn long_titles_and_names_wrap_or_are_cut_inside_the_canvas() {
    // A file name of 200 characters in every subtitle (and the stalls chart's group heading),
    // a kernel name of 300 in the source listing's launch heading.
    let name = format!("{}.wstrace.jsonl", "a-long-trace-name-".repeat(11));
    let kernel = format!("kernel_{}", "with_a_long_name_".repeat(18));
    let path = retitled_trace(&name, &kernel, &|_, text| text.to_string());
    for kind in ChartKind::ALL {
        let c = render(kind, &path, &RenderOptions::default());
        check_text(&c, &format!("{kind:?} of a long file name"));
        // The subtitle wraps rather than runs off: its second (and third) line is drawn.
        let subtitle = texts(&c.svg)
            .into_iter()
            .filter(|t| {
                t.size == warpscope::render::TEXT_SUBTITLE as f64
                    && t.x == c.width as f64 / 2.0
                    && t.y < 100.0
            })
            .count();
        assert!(
            kind == ChartKind::Stalls || (2..=3).contains(&subtitle),
            "{kind:?}: {subtitle} lines"
        );
    }
    // Many traces compared: the stalls title lists every subject, on three lines (then cut).
    let mut all = samples();
    all.push(path);
    let c = chart(ChartKind::Stalls, &all, &RenderOptions::default()).unwrap();
    check_text(&c, "stalls of every sample");
    let title_lines = texts(&c.svg)
        .iter()
        .filter(|t| t.size == warpscope::render::TEXT_TITLE as f64)
        .count();
    assert_eq!(title_lines, 3);
}

#[test]
fn study_grid_text_is_readable_and_clear_of_other_text() {
    use warpscope::study::{self, StallPreset, StudyConfig};
    let configs = [
        StudyConfig::default(),
        // Eight slots, long groups and misses: a tall, wide grid.
        StudyConfig {
            width: 8,
            ilp: 16,
            stalls: StallPreset::Heavy,
            lat: 40,
            groups: 30,
            ..StudyConfig::default()
        },
        // One slot, one group: the narrowest canvas.
        StudyConfig {
            width: 1,
            groups: 1,
            ..StudyConfig::default()
        },
    ];
    for cfg in configs {
        let results = study::run(&cfg);
        for shown in [&results[..], &results[1..2]] {
            let svg = study::svg::render(&cfg, shown);
            let size = |name: &str| -> u32 {
                let root = svg.split_once('>').unwrap().0;
                let from = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                root[from..].split('"').next().unwrap().parse().unwrap()
            };
            let what = format!("study {cfg:?} of {} schemes", shown.len());
            check_svg_text(&svg, size("width"), size("height"), &what);
            // Every cell's text was drawn: refill targets and badges.
            let cells = texts(&svg)
                .iter()
                .filter(|t| t.size == warpscope::render::TEXT_CELL as f64)
                .count();
            let expected: usize = shown
                .iter()
                .flat_map(|r| &r.grid)
                .flat_map(|c| &c.slots)
                .filter(|s| {
                    matches!(
                        s,
                        study::SlotUse::Refill { .. }
                            | study::SlotUse::Instruction { cause: Some(_), .. }
                    )
                })
                .count();
            assert_eq!(cells, expected, "{what}");
        }
    }
}

#[test]
fn a_window_past_the_traces_end_stops_at_its_end_in_every_time_chart() {
    let path = sample("reduce.small.gto.wstrace");
    let end = model::load(&path).unwrap().end;
    for kind in [
        ChartKind::Timeline,
        ChartKind::Dispatch,
        ChartKind::Occupancy,
        ChartKind::Slots,
    ] {
        for from in [None, Some(end / 2)] {
            let whole = render(
                kind,
                &path,
                &RenderOptions {
                    from,
                    ..RenderOptions::default()
                },
            );
            let past = render(
                kind,
                &path,
                &RenderOptions {
                    from,
                    to: Some(end * 40),
                    ..RenderOptions::default()
                },
            );
            assert_eq!(past.plot.x_to, end as f64, "{kind:?} from {from:?}");
            assert!(
                past.svg == whole.svg,
                "{kind:?} from {from:?}: not the chart up to the end"
            );
        }
    }
    // The command says that it stopped at the end.
    let out = tmp("past-the-end.svg");
    let to = (end * 40).to_string();
    let o = warpscope(&[
        "render",
        path.to_str().unwrap(),
        "--chart",
        "dispatch",
        "--to",
        &to,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "note: --to {to} is past the trace's end: the chart shows cycles 0..{end}"
        )),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let path = sample("vecadd_tiny.tiny.wstrace");
    let missing = tmp("no-such.wstrace");
    let e = chart(
        ChartKind::Timeline,
        std::slice::from_ref(&missing),
        &RenderOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, RenderError::Trace { .. }));
    assert!(e.to_string().contains("no-such.wstrace"), "{e}");

    let backwards = RenderOptions {
        from: Some(100),
        to: Some(50),
        sm: None,
        ..RenderOptions::default()
    };
    let e = chart(ChartKind::Timeline, std::slice::from_ref(&path), &backwards).unwrap_err();
    assert_eq!(e.to_string(), "--from 100 must be less than --to 50");

    let e = chart(
        ChartKind::Dispatch,
        std::slice::from_ref(&path),
        &RenderOptions {
            sm: Some(7),
            ..RenderOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("no SM 7"), "{e}");

    let e = chart(
        ChartKind::Timeline,
        &[path.clone(), path.clone()],
        &RenderOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("takes one trace"), "{e}");

    let e = chart(
        ChartKind::Timeline,
        std::slice::from_ref(&path),
        &RenderOptions {
            from: Some(10_000),
            to: Some(20_000),
            sm: None,
            ..RenderOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("--from 10000 is past the trace's last cycle"),
        "{e}"
    );

    // A trace whose header has no launch.
    let reader = TraceReader::open(&path).unwrap();
    let mut header = reader.header().clone();
    header.launches.clear();
    let empty = tmp("no-launches.wstrace.jsonl");
    let writer = TraceWriter::new(
        std::fs::File::create(&empty).unwrap(),
        TraceFormat::Jsonl,
        &header,
    )
    .unwrap();
    writer.finish(true).unwrap();
    for kind in ChartKind::ALL {
        let e = chart(
            kind,
            std::slice::from_ref(&empty),
            &RenderOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("has no kernel launch"),
            "{kind:?}: {e}"
        );
    }
    assert!(ChartKind::from_name("pie").is_err());
}

fn warpscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_writes_the_chart_and_reports_errors_without_panicking() {
    let out = tmp("cli-dispatch.svg");
    let _ = std::fs::remove_file(&out);
    let trace = sample("vecadd_tiny.tiny.wstrace");
    let o = warpscope(&[
        "render",
        trace.to_str().unwrap(),
        "--chart",
        "dispatch",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    let lib = render(ChartKind::Dispatch, &trace, &RenderOptions::default());
    assert_eq!(svg, lib.svg);

    // Impossible command lines exit 2; what the trace rules out, 1.
    let cases: [(&[&str], &str, i32); 9] = [
        (&["--chart", "pie"], "invalid value 'pie'", 2),
        (
            &["--chart", "timeline", "--from", "9", "--to", "3"],
            "--from 9 must be less than --to 3",
            2,
        ),
        (
            &["--chart", "timeline", "--sm", "2"],
            "has 2 SMs (0 to 1)",
            1,
        ),
        (
            &["--chart", "dispatch", "--from", "1000000000"],
            "--from 1000000000 is past the trace's last cycle (it covers cycles 0..",
            1,
        ),
        (
            &["--chart", "source", "--to", "10"],
            "--to does not apply to the source chart",
            2,
        ),
        (
            &["--chart", "stalls", "--sm", "0"],
            "--sm does not apply to the stalls chart",
            2,
        ),
        (
            &["--chart", "slots", "--from", "0", "--to", "1", "--sm", "x"],
            "invalid value 'x'",
            2,
        ),
        (
            &["--chart", "occupancy", "--kernel", "vecadd"],
            "--kernel applies to the stalls and source charts, which sum a trace's launches; to \
             see kernel `vecadd` on the occupancy chart, zoom to its launches' cycles: --from 0 \
             --to ",
            2,
        ),
        (
            &["--chart", "stalls", "--kernel", "reduce"],
            "no launch of kernel `reduce` in the trace (its kernels: vecadd_tiny)",
            1,
        ),
    ];
    for (extra, message, code) in cases {
        let mut args = vec![
            "render",
            trace.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = warpscope(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let o = warpscope(&[
        "render",
        "missing.wstrace",
        "--chart",
        "stalls",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.starts_with("error: missing.wstrace"), "{stderr}");
    // The earlier chart is still there: failed renders write nothing.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), svg);

    let help = warpscope(&["render", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Examples:") && text.contains("in proportion to its cycles"),
        "{text}"
    );
}

#[test]
fn a_busy_trace_with_hundreds_of_warp_slots_stays_under_the_size_bound() {
    // 256 blocks of 256 threads on `volta`: every warp slot of every SM busy for 20k+ cycles.
    let config = warpscope::sim::config::GpuConfig::preset("volta").unwrap();
    let path = tmp("busy.wstrace");
    record_vecadd_launch(
        &config,
        1 << 16,
        &path,
        TraceFormat::Binary,
        DEFAULT_VERBOSITY,
    );
    for kind in ChartKind::ALL {
        let c = render(kind, &path, &RenderOptions::default());
        assert!(
            c.svg.len() <= warpscope::render::MAX_SVG_BYTES,
            "{kind:?}: {} bytes",
            c.svg.len()
        );
        Raster::of(&c);
        // Hundreds of thin rows: labelled every few rows, never overprinted.
        check_text(&c, &format!("{kind:?} of the busy trace"));
    }
    let c = render(ChartKind::Timeline, &path, &RenderOptions::default());
    assert_eq!(
        c.rows.len(),
        (config.num_sms * config.sm.max_warps) as usize
    );
    assert!(c.bin_cycles > 1);
    let n = check_timeline(&path, &RenderOptions::default(), 4);
    assert!(n > 100, "{n} intervals checked");
}

#[test]
fn a_json_lines_trace_draws_the_same_charts_as_its_binary_original() {
    let binary = sample("reduce.small.gto.wstrace");
    let jsonl = tmp("reduce.small.gto.jsonl");
    warpscope::trace::convert_file(&binary, &jsonl).unwrap();
    for kind in ChartKind::ALL {
        let a = render(kind, &binary, &RenderOptions::default());
        let b = render(kind, &jsonl, &RenderOptions::default());
        let rename = |s: String| s.replace("reduce.small.gto.jsonl", "reduce.small.gto.wstrace");
        assert_eq!(
            format!("{:?}{:?}", a.rows, a.regions),
            rename(format!("{:?}{:?}", b.rows, b.regions)),
            "{kind:?}"
        );
        let same_name = rename(b.svg);
        assert!(a.svg == same_name, "{kind:?} differs between the encodings");
    }
}

#[test]
fn state_intervals_are_charged_to_the_instruction_waited_for() {
    let path = tiny_trace();
    let m = Everything::read(&path);
    assert_eq!(m.warps.len(), 6);
    assert_eq!(m.blocks.len(), 6);
    assert_eq!(m.issues.len(), 6 * 13);
    for (w, intervals) in &m.warps {
        let issues: Vec<(u64, u32)> = m
            .issues
            .iter()
            .filter(|i| i.sm == w.sm && i.cycle >= w.from && i.cycle < w.to)
            .map(|i| (i.cycle, i.pc))
            .collect();
        assert_eq!(issues.len(), 13);
        // The intervals tile the warp's residency.
        assert_eq!(intervals.first().unwrap().from, w.from);
        assert_eq!(intervals.last().unwrap().to, w.to);
        for pair in intervals.windows(2) {
            assert_eq!(pair[0].to, pair[1].from);
        }
        for iv in intervals {
            let expected = match iv.state {
                // Issued at the interval's first cycle.
                warpscope::sim::observer::WarpState::Selected => {
                    issues.iter().find(|i| i.0 == iv.from).map(|i| i.1)
                }
                // Waiting for the next issue (or, after the last, charged to the last).
                _ => issues
                    .iter()
                    .find(|i| i.0 >= iv.to)
                    .or(issues.last())
                    .map(|i| i.1),
            };
            assert_eq!(iv.pc, expected, "{iv:?}");
        }
    }
}

/// Everything the model streams, kept (as the charts no longer do) for the tests to check.
#[derive(Default)]
struct Everything {
    /// Each warp's residency with its intervals, in the order the warps ended.
    warps: Vec<(model::WarpLife, Vec<model::Interval>)>,
    open: HashMap<(u32, u32), Vec<model::Interval>>,
    blocks: Vec<model::BlockSpan>,
    issues: Vec<model::IssueRec>,
}

impl model::Sink for Everything {
    fn interval(&mut self, w: &model::WarpLife, iv: &model::Interval) {
        self.open.entry((w.sm, w.slot)).or_default().push(*iv);
    }
    fn life(&mut self, w: &model::WarpLife) {
        let intervals = self.open.remove(&(w.sm, w.slot)).unwrap_or_default();
        self.warps.push((*w, intervals));
    }
    fn issue(&mut self, i: &model::IssueRec) {
        self.issues.push(*i);
    }
    fn block(&mut self, b: &model::BlockSpan) {
        self.blocks.push(*b);
    }
}

impl Everything {
    fn read(path: &Path) -> Everything {
        let mut e = Everything::default();
        model::stream(path, &mut e).unwrap();
        e
    }
}

/// Records `kernels/vecadd.sasm` over `blocks` blocks of 128 threads on `small`.
fn record_vecadd(blocks: u32) -> PathBuf {
    let path = tmp(&format!("vecadd.{blocks}.wstrace"));
    let status = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["record", "kernels/vecadd.sasm", "--gpu", "small"])
        .args(["--grid", &blocks.to_string(), "--block", "128"])
        .args([
            "--param",
            "a=0x100000",
            "--param",
            "b=0x200000",
            "--param",
            "c=0x300000",
        ])
        .args(["--param", &format!("n={}", blocks * 128)])
        .arg("-o")
        .arg(&path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    path
}

#[test]
fn what_the_charts_keep_does_not_grow_with_the_trace() {
    // Both traces bin their cycles into pixel columns; the longer one has 8x the blocks, warps,
    // intervals and issues.
    let short = record_vecadd(64);
    let long = record_vecadd(512);
    let (s, l) = (Everything::read(&short), Everything::read(&long));
    assert!(
        l.issues.len() >= 8 * s.issues.len(),
        "{} {}",
        l.issues.len(),
        s.issues.len()
    );
    assert!(l.warps.len() >= 8 * s.warps.len());
    let (ms, ml) = (model::load(&short).unwrap(), model::load(&long).unwrap());
    assert!(
        ml.end > 4 * ms.end && ms.end > 4 * 1000,
        "{} {}",
        ms.end,
        ml.end
    );
    // The model holds a fixed amount per warp slot, and every slot was used by both.
    assert_eq!(ms.retained(), ml.retained());
    assert!(ms.retained() <= (ms.header.config.num_sms * ms.header.config.sm.max_warps) as usize);
    // Each chart keeps per row and pixel column, whatever the trace's length. The counts are
    // not quite equal (rounding decides how many columns the candidate binnings have, and the
    // slots keep the warps that issued in each column), but far from the 8x a per-event model
    // would need.
    for kind in [ChartKind::Timeline, ChartKind::Slots, ChartKind::Occupancy] {
        let a = warpscope::render::retained(kind, &short, &RenderOptions::default()).unwrap();
        let b = warpscope::render::retained(kind, &long, &RenderOptions::default()).unwrap();
        assert!(a > 0, "{kind:?}");
        assert!(
            b * 4 < a * 5,
            "{kind:?} keeps {a} numbers for the short trace, {b} for the long"
        );
    }
}

/// Records `kernels/vecadd.sasm` over `blocks` one-warp blocks on `small` with `sms` SMs, into
/// a file of `test`'s own: tests run at once, and two writing one file collide.
fn record_vecadd_warps(test: &str, blocks: u32, sms: u32) -> PathBuf {
    let path = tmp(&format!("{test}.vecadd.{blocks}x32.{sms}sms.wstrace"));
    let status = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["record", "kernels/vecadd.sasm", "--gpu", "small"])
        .args(["--sms", &sms.to_string()])
        .args(["--grid", &blocks.to_string(), "--block", "32"])
        .args([
            "--param",
            "a=0x1000000",
            "--param",
            "b=0x2000000",
            "--param",
            "c=0x3000000",
        ])
        .args(["--param", &format!("n={}", blocks * 32)])
        .arg("-o")
        .arg(&path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    path
}

/// The numbers after `word ` in a tooltip like "…: 7.98 blocks resident on average, 12 started,
/// 11 finished".
fn tooltip_number(text: &str, word: &str) -> f64 {
    let before = text
        .split(&format!(" {word}"))
        .next()
        .unwrap_or_else(|| panic!("no `{word}` in {text}"));
    before
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before `{word}` in {text}"))
}

#[test]
fn a_dispatch_chart_of_many_blocks_draws_bands_within_the_size_bound() {
    // A bar per block made 1.1 MB of SVG for the 6,000 blocks and 3.5 MB for the 24,000, and
    // kept a span and a tooltip per block; bands per SM and column keep the same for both.
    let few = record_vecadd_warps("bins", 6000, 2);
    let many = record_vecadd_warps("bins", 24_000, 2);
    let options = RenderOptions::default();
    let mut kept = Vec::new();
    for (path, blocks) in [(&few, 6000u64), (&many, 24_000)] {
        let c = render(ChartKind::Dispatch, path, &options);
        assert!(
            c.svg.len() <= warpscope::render::MAX_SVG_BYTES,
            "{blocks} blocks: {} bytes",
            c.svg.len()
        );
        assert!(c == render(ChartKind::Dispatch, path, &options));
        let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["SM0", "SM1"]);
        assert!(c.bin_cycles > 1);
        let width = (c.plot.right - c.plot.left) as usize;
        assert!(
            c.regions.len() <= c.rows.len() * width,
            "{}",
            c.regions.len()
        );
        // The tooltips account for every block, and no SM holds more than its 8 warp slots.
        let started: f64 = c
            .regions
            .iter()
            .map(|g| tooltip_number(&g.text, "started"))
            .sum();
        let finished: f64 = c
            .regions
            .iter()
            .map(|g| tooltip_number(&g.text, "finished"))
            .sum();
        assert_eq!((started as u64, finished as u64), (blocks, blocks));
        for g in &c.regions {
            let resident = tooltip_number(&g.text, "blocks resident");
            assert!(resident > 0.0 && resident <= 8.0, "{}", g.text);
        }
        // Mid-run, both SMs are busy: the band's colour at the bottom of each row.
        let r = Raster::of(&c);
        let mid = c.plot.x((c.plot.x_from + c.plot.x_to) / 2.0);
        for row in &c.rows {
            assert_eq!(r.at(mid, row.bottom - 4), palette::ACTIVE, "{}", row.label);
        }
        kept.push(warpscope::render::retained(ChartKind::Dispatch, path, &options).unwrap());
    }
    // On a narrow chart the subtitle wraps, the band's scale staying with its words.
    let narrow = RenderOptions {
        width: Some(400),
        ..RenderOptions::default()
    };
    let c = render(ChartKind::Dispatch, &few, &narrow);
    let scale = texts(&c.svg)
        .into_iter()
        .map(|t| t.text)
        .find(|t| t.contains("full height"))
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                texts(&c.svg).iter().map(|t| &t.text).collect::<Vec<_>>()
            )
        });
    assert_eq!(scale, "(full height: 8)");
    let (a, b) = (kept[0], kept[1]);
    assert!(a > 0);
    assert!(
        b * 4 < a * 5,
        "the dispatch chart keeps {a} numbers for 6,000 blocks, {b} for 24,000"
    );
}

/// A chart ends under what it draws: a legend beside a plot of few rows, taller than the plot,
/// once left the x axis's height of blank below its last entry.
#[test]
fn a_chart_with_a_legend_beside_it_ends_under_its_last_drawing() {
    let tiny = sample("vecadd_tiny.tiny.wstrace");
    let reduce = sample("reduce.small.gto.wstrace");
    let sm0 = RenderOptions {
        sm: Some(0),
        ..RenderOptions::default()
    };
    for (kind, path, options) in [
        (ChartKind::Timeline, &tiny, RenderOptions::default()),
        (ChartKind::Slots, &tiny, RenderOptions::default()),
        (ChartKind::Timeline, &reduce, sm0.clone()),
        (ChartKind::Slots, &reduce, sm0),
    ] {
        let c = render(kind, path, &options);
        // Text is not rasterised here (no fonts loaded): the lowest drawing is a legend swatch.
        let r = Raster::of(&c);
        let white = Rgb(0xFF, 0xFF, 0xFF);
        let lowest = (0..c.height as i32)
            .rev()
            .find(|&y| (0..c.width as i32).any(|x| r.at(x, y) != white))
            .unwrap();
        let blank = c.height as i32 - 1 - lowest;
        assert!(
            (4..=24).contains(&blank),
            "{kind:?} of {}: {blank} blank pixel rows at the bottom of {}",
            path.display(),
            c.height
        );
    }
}

#[test]
fn a_zoomed_cycle_axis_labels_whole_cycles_only() {
    let trace = sample("reduce.small.gto.wstrace");
    for kind in [
        ChartKind::Timeline,
        ChartKind::Dispatch,
        ChartKind::Occupancy,
        ChartKind::Slots,
    ] {
        let options = RenderOptions {
            from: Some(10),
            to: Some(13),
            sm: None,
            ..RenderOptions::default()
        };
        let svg = render(kind, &trace, &options).svg;
        // The x axis labels: the centred texts that are numbers (the occupancy chart's y axes
        // are aligned to their side, and may well count halves).
        let labels: Vec<String> = texts(&svg)
            .into_iter()
            .filter(|t| t.anchor == "middle" && t.text.parse::<f64>().is_ok())
            .map(|t| t.text)
            .collect();
        for cycle in ["10", "11", "12", "13"] {
            assert!(labels.iter().any(|l| l == cycle), "{kind:?}: {labels:?}");
        }
        assert!(
            !labels.iter().any(|l| l.contains('.')),
            "{kind:?}: {labels:?}"
        );
    }
}

/// `kernels/reduce.json` on `small` under `coarse` (it switches: refills in the slots grid)
/// recorded at `verbosity` into `render/TEST.reduce-v{verbosity}/reduce.wstrace`: one file
/// name, so the charts of the two verbosities name the trace alike, in a directory of `test`'s
/// own, as tests run at once and two writing one file collide.
fn record_reduce_at(test: &str, verbosity: u8) -> PathBuf {
    let dir = tmp(&format!("{test}.reduce-v{verbosity}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("reduce.wstrace");
    let o = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["record", "kernels/reduce.json", "--gpu", "small"])
        .args(["--policy", "coarse", "--verbosity", &verbosity.to_string()])
        .arg("-o")
        .arg(&path)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    path
}

#[test]
fn charts_drawn_from_warp_states_say_a_verbosity_0_trace_has_none_and_the_others_are_unchanged() {
    let (quiet, full) = (record_reduce_at("states", 0), record_reduce_at("states", 1));
    let note = "warp states were not recorded (the trace was recorded with --verbosity 0); \
                record with --verbosity 1 (the default) or 2 to see them";
    let said = |c: &Chart| {
        texts(&c.svg)
            .iter()
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let state_fills = |c: &Chart| {
        NsightState::ALL
            .iter()
            .filter(|&&s| {
                c.svg
                    .contains(&format!("fill=\"{}\"", state_colour(s).hex()))
            })
            .count()
    };
    for kind in ChartKind::ALL {
        let c0 = render(kind, &quiet, &RenderOptions::default());
        let c1 = render(kind, &full, &RenderOptions::default());
        let what = format!("{kind:?}");
        Raster::of(&c0);
        check_text(&c0, &format!("{what} at verbosity 0"));
        assert!(!said(&c1).contains("not recorded"), "{what}: {}", said(&c1));
        match kind.drawn_from_warp_states() {
            Some(part) => {
                let text = said(&c0);
                assert!(
                    text.contains(&format!("No {part}: {note}")),
                    "{what}: {text}"
                );
            }
            None => assert!(!said(&c0).contains("not recorded"), "{what}"),
        }
        match kind {
            // Block events, which every trace has: the very same chart.
            ChartKind::Dispatch => assert_eq!(c0.svg, c1.svg),
            // Nothing in a state's colour: no empty rows or zero bars standing for states.
            ChartKind::Timeline | ChartKind::Stalls | ChartKind::Source => {
                assert_eq!(state_fills(&c0), 0, "{what}");
                assert!(state_fills(&c1) > 0, "{what}");
                if kind == ChartKind::Timeline {
                    assert!(c0.rows.is_empty());
                    assert_eq!(
                        (c0.plot.x_from, c0.plot.x_to),
                        (c1.plot.x_from, c1.plot.x_to)
                    );
                }
            }
            // Active warps and IPC come from lifetimes and issues; eligibility is a state.
            ChartKind::Occupancy => {
                let stroke =
                    |c: &Chart, rgb: Rgb| c.svg.contains(&format!("stroke=\"{}\"", rgb.hex()));
                assert!(stroke(&c1, palette::ELIGIBLE) && !stroke(&c0, palette::ELIGIBLE));
                assert!(stroke(&c0, palette::ISSUED));
                assert_eq!(c0.rows.len(), c1.rows.len());
            }
            // The grid (issues and refills) is the same; only the state strips give way.
            ChartKind::Slots => {
                let grid = |c: &Chart| {
                    let rows: Vec<_> = c
                        .rows
                        .iter()
                        .filter(|r| !r.label.ends_with(" state"))
                        .cloned()
                        .collect();
                    let bottom = rows.iter().map(|r| r.bottom).max().unwrap();
                    let cells: Vec<_> =
                        c.regions.iter().filter(|r| r.y < bottom).cloned().collect();
                    (rows, cells)
                };
                assert_eq!(grid(&c0), grid(&c1), "{what}");
                // Zoomed to one cycle per column around the first refill: the refills are
                // drawn from a verbosity-0 trace too.
                let first = events(&quiet)
                    .iter()
                    .find_map(|e| match e {
                        Event::Refill { cycle, .. } => Some(*cycle),
                        _ => None,
                    })
                    .expect("coarse switches");
                let zoom = RenderOptions {
                    from: Some(first.saturating_sub(100)),
                    to: Some(first + 300),
                    sm: None,
                    ..RenderOptions::default()
                };
                let z0 = render(kind, &quiet, &zoom);
                let z1 = render(kind, &full, &zoom);
                assert_eq!(z0.bin_cycles, 1);
                let (g0, g1) = (grid(&z0), grid(&z1));
                assert!(g0.1.iter().any(|r| r.text.contains("refill")), "{what}");
                assert_eq!(g0, g1, "{what}");
                assert!(c0.rows.iter().all(|r| !r.label.ends_with(" state")));
                assert!(c1.rows.iter().any(|r| r.label.ends_with(" state")));
            }
        }
    }
    // Beside a trace with states, the one without has its note in place of its bars.
    let both = [full.clone(), quiet.clone()];
    let c = chart(ChartKind::Stalls, &both, &RenderOptions::default()).unwrap();
    check_text(&c, "stalls of verbosity 1 and 0");
    let text = said(&c);
    assert_eq!(text.matches("No stall bars").count(), 1, "{text}");
    assert_eq!(c.rows.len(), 2);
    let said_of = |row: &str, what: &str| {
        c.regions
            .iter()
            .any(|g| g.text.starts_with(row) && g.text.contains(what))
    };
    assert!(said_of(&c.rows[1].label, "warp states were not recorded"));
    assert!(said_of(&c.rows[0].label, "selected"));
    assert!(!said_of(&c.rows[1].label, "selected"));
}

#[test]
fn every_chart_lays_out_at_the_width_asked_for_with_its_text_inside() {
    let gto = sample("reduce.small.gto.wstrace");
    let lrr = sample("reduce.small.lrr.wstrace");
    let quiet = record_reduce_at("width", 0);
    let wide = record_vecadd_warps("width", 384, 96);
    let zoom = RenderOptions {
        from: Some(100),
        to: Some(160),
        sm: Some(0),
        ..RenderOptions::default()
    };
    let mut checked = 0;
    for width in [400, 500, 600, 2000] {
        for kind in ChartKind::ALL {
            let mut cases: Vec<(Vec<PathBuf>, RenderOptions)> = vec![
                (vec![gto.clone()], RenderOptions::default()),
                (vec![quiet.clone()], RenderOptions::default()),
                (vec![wide.clone()], RenderOptions::default()),
                (
                    vec![sample("vecadd_tiny.tiny.wstrace")],
                    RenderOptions::default(),
                ),
            ];
            if kind == ChartKind::Stalls {
                cases.push((
                    vec![gto.clone(), lrr.clone(), quiet.clone()],
                    RenderOptions::default(),
                ));
            } else if kind != ChartKind::Source {
                cases.push((vec![gto.clone()], zoom.clone()));
            }
            for (traces, options) in cases {
                let options = RenderOptions {
                    width: Some(width),
                    ..options
                };
                let what = format!("{kind:?} of {traces:?} at width {width} {options:?}");
                let c = chart(kind, &traces, &options).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(c.width, width, "{what}");
                assert_eq!(root_width(&c.svg), width, "{what}");
                // Every text lies inside 0..width (and clear of the others).
                check_text(&c, &what);
                Raster::of(&c);
                assert!(
                    c.plot.left > 0 && c.plot.right < width as i32,
                    "{what}: plot {:?}",
                    c.plot
                );
                assert!(
                    c.plot.right - c.plot.left >= 80,
                    "{what}: a plot {} pixels wide",
                    c.plot.right - c.plot.left
                );
                // Time charts bin into the plot's pixel columns: a narrower chart has fewer
                // (the dispatch chart's bars are not binned, nor is a note).
                let binned = matches!(
                    kind,
                    ChartKind::Timeline | ChartKind::Slots | ChartKind::Occupancy
                ) && !c.rows.is_empty();
                if binned || c.bin_cycles > 1 {
                    let columns = ((c.plot.x_to - c.plot.x_from) / c.bin_cycles as f64).ceil();
                    assert!(
                        columns <= (c.plot.right - c.plot.left) as f64,
                        "{what}: {columns} columns"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 100, "{checked}");
    // A row's label too long for a narrow chart's label column wraps onto a second line
    // instead of being cut.
    let c = chart(
        ChartKind::Stalls,
        &[gto.clone(), lrr.clone()],
        &RenderOptions {
            width: Some(400),
            ..RenderOptions::default()
        },
    )
    .unwrap();
    for (row, name) in c.rows.iter().zip(["reduce.small.gto", "reduce.small.lrr"]) {
        assert_eq!(row_label_text(&c, &row.label), name);
    }
    // No width is the chart's own: asking for it is the same chart.
    for kind in ChartKind::ALL {
        let c = render(kind, &gto, &RenderOptions::default());
        let same = render(
            kind,
            &gto,
            &RenderOptions {
                width: Some(c.width),
                ..RenderOptions::default()
            },
        );
        assert!(c.svg == same.svg, "{kind:?} at its own width {}", c.width);
        // A narrower chart of a binned trace has fewer, wider columns.
        let narrow = render(
            kind,
            &gto,
            &RenderOptions {
                width: Some(500),
                ..RenderOptions::default()
            },
        );
        if c.bin_cycles > 1 {
            assert!(narrow.bin_cycles > c.bin_cycles, "{kind:?}");
        }
    }
}

#[test]
fn a_width_under_the_smallest_or_over_the_largest_is_refused() {
    use warpscope::render::{MAX_WIDTH, MIN_WIDTH};
    assert_eq!((MIN_WIDTH, MAX_WIDTH), (400, 10_000));
    let path = sample("vecadd_tiny.tiny.wstrace");
    for width in [0, 399, 10_001] {
        let e = chart(
            ChartKind::Dispatch,
            std::slice::from_ref(&path),
            &RenderOptions {
                width: Some(width),
                ..RenderOptions::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, RenderError::BadWidth { .. }), "{e}");
        assert!(e.to_string().contains("400 to 10000 pixels"), "{e}");
    }
    let out = tmp("bad-width.svg");
    for width in ["399", "10001", "wide"] {
        let o = warpscope(&[
            "render",
            path.to_str().unwrap(),
            "--chart",
            "dispatch",
            "--width",
            width,
            "-o",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--width {width}: {stderr}");
        assert!(stderr.contains("--width"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        if width != "wide" {
            assert!(stderr.contains("400 to 10000 pixels"), "{stderr}");
        }
    }
    let help = warpscope(&["render", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("--width <PX>"), "{text}");
    assert!(text.contains("--width 600"), "an example: {text}");
}

/// The instruction column's text of each row of a source chart, in row order.
fn source_instructions(c: &Chart) -> Vec<String> {
    let all = texts(&c.svg);
    c.rows
        .iter()
        .map(|r| {
            let y = (r.top + r.bottom) as f64 / 2.0;
            // Left of the row: its PC (at the margin), then the instruction; the stall total
            // is further right.
            all.iter()
                .filter(|t| t.anchor == "start" && t.x > 16.0 && (t.y - y).abs() < 1.0)
                .min_by(|a, b| a.x.total_cmp(&b.x))
                .unwrap_or_else(|| panic!("no instruction on row {}", r.label))
                .text
                .clone()
        })
        .collect()
}

#[test]
fn a_narrow_source_chart_keeps_each_instructions_opcode_and_drops_offsets_and_control_codes() {
    use warpscope::isa::{listing_instruction, listing_opcode};
    let narrow = RenderOptions {
        width: Some(400),
        ..RenderOptions::default()
    };
    let replayed = replayed("v5-ampere-reduce", "v5-ampere-reduce-narrow.wstrace");
    // (trace, a listing line, how it reads at 400 pixels)
    let known = [
        (
            sample("vecadd.small.barriers.wstrace"),
            "[B01----:R-:W-:-:S01] FADD R6, R4, R5",
            "FADD R6, …",
        ),
        (
            sample("vecadd.small.barriers.wstrace"),
            "[B------:R-:W-:-:S01] @P0 EXIT",
            "@P0 EXIT",
        ),
        (
            sample("matmul.volta.gto.wstrace"),
            "ISETP.GE P0, R0, %param.n",
            "ISETP.GE …",
        ),
        (
            replayed.clone(),
            "/*0060*/ LDG.E R4, [R2]",
            "LDG.E R4, [R2]",
        ),
        (
            replayed.clone(),
            "/*0040*/ ISETP.GE.AND P0, R3, UR4",
            "ISETP.GE.AND …",
        ),
    ];
    for (trace, line, reads) in &known {
        let c = render(ChartKind::Source, trace, &narrow);
        let a = analyze_file(trace, Taxonomy::Nsight).unwrap();
        let listing: Vec<&str> = a
            .launches
            .iter()
            .flat_map(|l| &l.source)
            .map(|s| s.text.as_str())
            .collect();
        let shown = source_instructions(&c);
        let at = listing
            .iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("no `{line}` in {listing:?}"));
        assert_eq!(shown[at], *reads, "`{line}` of {trace:?}: {shown:?}");
    }
    for trace in [
        sample("matmul.volta.gto.wstrace"),
        sample("vecadd.small.barriers.wstrace"),
        sample("reduce.small.gto.wstrace"),
        replayed,
    ] {
        let c = render(ChartKind::Source, &trace, &narrow);
        check_text(&c, &format!("source of {trace:?} at 400"));
        let a = analyze_file(&trace, Taxonomy::Nsight).unwrap();
        let lines: Vec<&warpscope::analyze::SourceLine> =
            a.launches.iter().flat_map(|l| &l.source).collect();
        let shown = source_instructions(&c);
        assert_eq!(shown.len(), lines.len());
        for (text, line) in shown.iter().zip(&lines) {
            let instruction = listing_instruction(&line.text);
            let opcode = listing_opcode(&line.text);
            let guard_and_opcode = &instruction[..instruction.find(opcode).unwrap() + opcode.len()];
            // Whole, or the guard and opcode whole, then whole operands and an ellipsis; an
            // opcode too long for the column is the one thing cut inside (BAR.SYNC.DEFER_…).
            let cut = text.strip_suffix('…');
            let ok = text == instruction
                || cut.is_some_and(|kept| {
                    kept.starts_with(&format!("{guard_and_opcode} "))
                        && instruction.starts_with(kept.trim_end_matches([' ', ',']))
                        || kept.len() >= 12 && guard_and_opcode.starts_with(kept)
                });
            assert!(ok, "`{}` shown as `{text}` in {trace:?}", line.text);
            assert!(!text.starts_with("/*") && !text.starts_with('['), "{text}");
            // The row's hover region keeps the line whole.
            assert!(
                c.regions.iter().any(|r| r
                    .text
                    .starts_with(&format!("PC {}: {}", line.pc, line.text))),
                "no region has `{}` whole",
                line.text
            );
        }
    }
}

/// The source chart's axis line runs beside each launch's rows and leaves the launch's
/// heading, which reaches across the plot, uncrossed.
#[test]
fn the_source_charts_axis_line_does_not_cross_a_launch_heading() {
    let c = render(
        ChartKind::Source,
        &replayed("vectoradd-100-32", "vectoradd-axis.wstrace"),
        &RenderOptions::default(),
    );
    let left = c.plot.left;
    let vertical: Vec<(i32, i32)> = c
        .svg
        .split("<polyline")
        .skip(1)
        .filter_map(|l| l.split("points=\"").nth(1)?.split('"').next())
        .filter_map(|points| {
            let p: Vec<(i32, i32)> = points
                .split_whitespace()
                .filter_map(|xy| {
                    let (x, y) = xy.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            match p[..] {
                [(x0, y0), (x1, y1)] if x0 == left && x1 == left && y1 - y0 > 10 => Some((y0, y1)),
                _ => None,
            }
        })
        .collect();
    let first_row = c.rows.first().unwrap().top;
    let last_row = c.rows.last().unwrap().bottom;
    // The heading sits between the top of the plot and the first row.
    assert!(first_row > c.plot.top, "{} {}", first_row, c.plot.top);
    assert_eq!(vertical, [(first_row, last_row)]);
}

/// `--format` wins over the output's extension, and says so when the two disagree.
#[test]
fn a_format_that_contradicts_the_extension_is_written_with_a_note() {
    let trace = sample("vecadd_tiny.tiny.wstrace");
    let out = tmp("contradicted.svg");
    let args = |format: &'static str| {
        vec![
            "render".to_string(),
            trace.display().to_string(),
            "--chart".into(),
            "stalls".into(),
            "-o".into(),
            out.display().to_string(),
            "--format".into(),
            format.into(),
        ]
    };
    let run = |format| {
        let args = args(format);
        warpscope(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("png");
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim_end(),
        format!(
            "note: {} will hold PNG (--format overrides the extension, which says SVG)",
            out.display()
        )
    );
    assert!(std::fs::read(&out).unwrap().starts_with(b"\x89PNG"));
    // Agreeing, nothing to say.
    let o = run("svg");
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
}

/// A sweep of eight policies over the reduction, as a paper compares them: at a column's
/// width (400 pixels) the stalls chart is a row per trace, not a panel each (the panels took
/// 1990 pixels), every trace named, every bar as long as its analysis says.
#[test]
fn eight_traces_fit_a_column_wide_stalls_chart_a_row_each() {
    let out = tmp("sweep-eight");
    let _ = std::fs::remove_dir_all(&out);
    let launch = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/reduce.json");
    let policies = "gto,lrr,barrel,two_level,coarse,sequential,smt,oldest";
    let o = warpscope(&[
        "sweep",
        launch.to_str().unwrap(),
        "--policy",
        policies,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let traces: Vec<PathBuf> = policies
        .split(',')
        .map(|p| out.join(format!("{p}.bitmap.wstrace")))
        .collect();
    let options = RenderOptions {
        width: Some(400),
        ..RenderOptions::default()
    };
    let c = chart(ChartKind::Stalls, &traces, &options).unwrap();
    check_text(&c, "eight policies at 400");
    assert!(c.height <= 600, "{} pixels tall", c.height);
    assert_eq!(c.rows.len(), 8);
    let r = Raster::of(&c);
    for (p, policy) in traces.iter().zip(policies.split(',')) {
        let label = format!("{policy}.bitmap.wstrace ({policy})");
        // The name as drawn: the sweep's file name, which says the policy.
        assert_eq!(row_label_text(&c, &label), format!("{policy}.bitmap"));
        let a = analyze_file(p, Taxonomy::Nsight).unwrap();
        let bars = per_issue(&a.launches[0]);
        let total: f64 = bars.iter().map(|b| b.1).sum();
        let said = a.launches[0].warp_cycles_per_issued_instruction;
        assert!((total - said).abs() < 1e-6, "{policy}: {total} vs {said}");
        check_stacked_row(&c, &r, &label, &bars);
    }
    // One legend for every row: each state drawn once in it.
    let legend = texts(&c.svg)
        .into_iter()
        .filter(|t| t.text == "long_scoreboard")
        .count();
    assert_eq!(legend, 1);
}

/// A study trace's launches are its schemes: a row each, not their sum.
#[test]
fn a_study_traces_stalls_chart_has_a_row_per_scheme() {
    let trace = tmp("study-stalls.wstrace");
    let o = warpscope(&["study", "--trace", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = analyze_file(&trace, Taxonomy::Nsight).unwrap();
    assert_eq!(a.launches.len(), 5);
    for width in [None, Some(400)] {
        let options = RenderOptions {
            width,
            ..RenderOptions::default()
        };
        let c = render(ChartKind::Stalls, &trace, &options);
        check_text(&c, &format!("study at {width:?}"));
        let rows: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(rows, ["none", "coarse", "barrel", "fine", "smt"]);
        let r = Raster::of(&c);
        for (row, l) in rows.iter().zip(&a.launches) {
            check_stacked_row(&c, &r, row, &per_issue(l));
        }
        let said = texts(&c.svg)
            .iter()
            .map(|t| t.text.clone())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(said.contains("5 schemes, one row per scheme"), "{said}");
        // The title names the study, not every launch's kernel (the rows name the
        // schemes): two lines at 400 px, where the kernels took four.
        let title: Vec<String> = texts(&c.svg)
            .into_iter()
            .filter(|t| t.size == warpscope::render::TEXT_TITLE as f64)
            .map(|t| t.text)
            .collect();
        assert_eq!(
            title.join(" "),
            "Warp-cycles per issued instruction: multithreading study",
            "{width:?}"
        );
        let lines = if width.is_some() { 2 } else { 1 };
        assert_eq!(title.len(), lines, "{width:?}: {title:?}");
    }
    // Beside another trace, the study still has its schemes' rows.
    let c = chart(
        ChartKind::Stalls,
        &[sample("reduce.small.gto.wstrace"), trace.clone()],
        &RenderOptions::default(),
    )
    .unwrap();
    assert_eq!(c.rows.len(), 6);
    assert!(c.rows[5].label.ends_with(": smt"), "{:?}", c.rows);
}

/// Every chart of a lone study trace is titled by the study, not by its five `study_*`
/// kernels (which took the title four lines at 400 px).
#[test]
fn every_chart_of_a_study_trace_names_the_study() {
    let trace = tmp("study-titles.wstrace");
    let o = warpscope(&["study", "--trace", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for kind in ChartKind::ALL {
        let c = render(kind, &trace, &RenderOptions::default());
        let title: Vec<String> = texts(&c.svg)
            .into_iter()
            .filter(|t| t.size == warpscope::render::TEXT_TITLE as f64)
            .map(|t| t.text)
            .collect();
        let title = title.join(" ");
        assert!(
            title.ends_with(": multithreading study"),
            "{kind:?}: {title}"
        );
        assert!(!title.contains("study_"), "{kind:?}: {title}");
    }
}

/// In the slots chart, no colour of one meaning (a slot mark, a warp, a state) is within
/// `palette::APART` of a colour of another that the chart draws.
#[test]
fn the_slots_charts_colours_of_different_meanings_are_far_apart() {
    let meanings = palette::slots_legend_colours();
    for p in samples() {
        let c = render(ChartKind::Slots, &p, &RenderOptions::default());
        let drawn: Vec<&(Rgb, String)> = meanings
            .iter()
            .filter(|(c2, _)| c.svg.contains(&format!("fill=\"{}\"", c2.hex())))
            .collect();
        assert!(drawn.len() >= 4, "{}", p.display());
        for (i, (a, ma)) in drawn.iter().enumerate() {
            for (b, mb) in &drawn[..i] {
                let state = |m: &str| NsightState::from_name(m).is_some();
                let warp = |m: &str| m.starts_with("warp ");
                let least = if state(ma) && state(mb) {
                    continue;
                } else if warp(ma) && warp(mb) {
                    palette::APART_IDENTITY
                } else {
                    palette::APART
                };
                let d = palette::distance(*a, *b);
                assert!(
                    d >= least,
                    "{}: {ma} {} and {mb} {} are {d:.1} apart",
                    p.display(),
                    a.hex(),
                    b.hex()
                );
            }
        }
    }
}
