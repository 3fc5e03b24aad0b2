//! The study's HTML page in headless Chromium (Debian's `/usr/bin/chromium`): transport
//! controls, the narration, layout at desktop, 1080p, phone and dark settings, and no console
//! errors. The page measures itself in its `#selftest` mode; screenshots go under the cargo
//! target dir.

mod common;

use common::chromium::{png_size, screenshot, selftest, Load};
use std::path::{Path, PathBuf};
use warpscope::study::{html, run, StudyConfig};

fn page() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("study-page");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("study.html");
    let cfg = StudyConfig::default();
    std::fs::write(&path, html::render(&cfg, &run(&cfg))).unwrap();
    path
}

fn no_console_errors(load: &Load, what: &str) {
    let errors: Vec<_> = load
        .console
        .iter()
        .filter(|l| l.contains("ERROR") || l.contains("Uncaught") || l.contains("error"))
        .collect();
    assert!(errors.is_empty(), "{what}: console errors: {errors:#?}");
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number `{key}` in {v}"))
}

/// The checks every size shares: transport, narration, cursor, no sideways scroll of the page,
/// sticky header, and text no smaller than 9 px in any grid (12 px in the legend).
fn common_checks(r: &serde_json::Value, what: &str) {
    assert_eq!(num(r, "max"), 84.0, "{what}");
    assert_eq!(num(r, "start"), 0.0, "{what}");
    assert_eq!(num(r, "after_two_steps"), 2.0, "{what}: step forward");
    assert_eq!(num(r, "after_step_back"), 1.0, "{what}: step back");
    assert_eq!(num(r, "after_back_past_start"), 0.0, "{what}: clamps at 0");
    assert_eq!(num(r, "after_scrub"), 10.0, "{what}: scrub");
    let narration = r["narration_at_scrub"].as_str().unwrap();
    assert!(narration.starts_with("cycle 10: "), "{what}: {narration}");
    assert!(
        narration.contains("issues") || narration.contains("waste"),
        "{what}: {narration}"
    );
    assert_eq!(
        num(r, "cursor_x"),
        num(r, "cursor_expected_x"),
        "{what}: cursor"
    );
    assert_eq!(r["cursor_inside_grid"], true, "{what}");
    assert!(
        num(r, "after_play") > 10.0,
        "{what}: play did not advance: {r}"
    );
    assert_eq!(
        num(r, "after_pause_wait"),
        num(r, "paused_at"),
        "{what}: pause"
    );
    assert!(
        num(r, "scroll_width") <= num(r, "width"),
        "{what}: page scrolls sideways: {r}"
    );
    assert_eq!(
        num(r, "header_top_after_scroll"),
        0.0,
        "{what}: header not sticky"
    );
    assert_eq!(r["controls_visible_after_scroll"], true, "{what}");
    let cards = r["cards"].as_array().unwrap();
    let names: Vec<_> = cards
        .iter()
        .map(|c| c["scheme"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["none", "coarse", "barrel", "fine", "smt"], "{what}");
    for c in cards {
        // Each grid's box is inside the window (a grid wider than it scrolls inside it).
        assert!(num(c, "box_left") >= 0.0, "{what}: {c}");
        assert!(num(c, "box_right") <= num(r, "width") + 0.5, "{what}: {c}");
        assert!(num(c, "grid_height") > 20.0, "{what}: grid collapsed: {c}");
        assert!(
            num(c, "min_text_px") >= 9.0 - 1e-6,
            "{what}: grid text drawn at {} px: {c}",
            num(c, "min_text_px")
        );
        assert_eq!(
            c["cursor_in_view"], true,
            "{what}: cursor scrolled out: {c}"
        );
    }
    for at in ["cursor_in_view_at_end", "cursor_in_view_at_start"] {
        assert!(
            r[at].as_array().unwrap().iter().all(|v| v == true),
            "{what}: {at}: {r}"
        );
    }
    assert!(num(r, "legend_text_px") >= 12.0, "{what}: {r}");
    assert!(
        num(r, "legend_right") <= num(r, "width") + 0.5,
        "{what}: {r}"
    );
}

/// Whether every card shows its whole grid without scrolling.
fn grids_fit(r: &serde_json::Value) -> bool {
    r["cards"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| num(c, "box_scroll_width") <= num(c, "box_width"))
}

#[test]
fn desktop_transport_and_layout() {
    let p = page();
    let load = selftest(&p, 1280, 800, false);
    no_console_errors(&load, "desktop");
    let r = load.selftest();
    common_checks(&r, "desktop");
    assert!(grids_fit(&r), "desktop: a grid scrolls: {r}");
    assert_eq!(r["dark"], false);
    assert_eq!(r["background"], "rgb(246, 247, 249)");
}

#[test]
fn the_five_cards_fit_a_1080p_screen() {
    let p = page();
    let load = selftest(&p, 1920, 1080, false);
    no_console_errors(&load, "1080p");
    let r = load.selftest();
    common_checks(&r, "1080p");
    assert!(grids_fit(&r), "1080p: a grid scrolls: {r}");
    for c in r["cards"].as_array().unwrap() {
        assert!(
            num(c, "bottom") <= num(&r, "height") + 0.5,
            "card {} ends at {} below the {} px window",
            c["scheme"],
            num(c, "bottom"),
            num(&r, "height")
        );
        assert!(num(c, "top") >= num(&r, "header_bottom"), "{c}");
    }
}

/// Fitted to a phone's width the grids' text was 2–4 px: there they keep it legible and
/// scroll sideways inside their cards instead.
#[test]
fn grids_stay_legible_and_scroll_in_their_cards_on_a_phone_and_at_860_px() {
    let p = page();
    for width in [390, 860] {
        let load = selftest(&p, width, 844, false);
        no_console_errors(&load, "phone");
        let r = load.selftest();
        let what = format!("{width} px");
        assert_eq!(num(&r, "width"), width as f64, "{what}");
        common_checks(&r, &what);
        assert!(!grids_fit(&r), "{what}: the default study's grids fit: {r}");
    }
}

#[test]
fn dark_scheme_follows_the_system() {
    let p = page();
    let load = selftest(&p, 1280, 800, true);
    no_console_errors(&load, "dark");
    let r = load.selftest();
    assert_eq!(r["dark"], true, "{r}");
    assert_eq!(r["background"], "rgb(20, 23, 27)", "{r}");
}

#[test]
fn screenshots_at_every_setting() {
    let p = page();
    let dir = p.parent().unwrap().to_path_buf();
    for (name, w, h, dark) in [
        ("desktop", 1280, 800, false),
        ("1080p", 1920, 1080, false),
        ("phone", 390, 844, false),
        ("dark", 1280, 800, true),
    ] {
        let out = dir.join(format!("study-{name}.png"));
        let _ = std::fs::remove_file(&out);
        let load = screenshot(&p, w, h, dark, &out);
        no_console_errors(&load, name);
        let (pw, ph) = png_size(&out);
        assert_eq!((pw, ph), (w.max(500), h), "{name}");
    }
}
