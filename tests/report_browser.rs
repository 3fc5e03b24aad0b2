//! The HTML report in a real headless Chromium, at desktop and phone sizes, light and dark:
//! no console errors, nothing wider than the viewport, tooltips and the theme switch work,
//! screenshots taken (under the cargo target dir).

mod common;

use common::chromium;
use std::path::{Path, PathBuf};
use std::process::Command;

fn report(name: &str, traces: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report_browser")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let mut args = vec!["report".to_string()];
    args.extend(traces.iter().map(|t| format!("traces/{t}.wstrace")));
    args.extend(["-o".into(), dir.display().to_string()]);
    let o = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join("index.html")
}

fn check(page: &Path, width: u32, height: u32, dark: bool) {
    let what = format!(
        "{} at {width}x{height}{}",
        page.display(),
        if dark { " dark" } else { "" }
    );
    let load = chromium::selftest(page, width, height, dark);
    assert!(
        load.console.is_empty(),
        "{what}: console: {:#?}",
        load.console
    );
    let r = load.selftest();
    assert_eq!(r["width"], width, "{what}: {r}");
    assert!(
        r["scroll_width"].as_u64().unwrap() <= width as u64,
        "{what}: page scrolls sideways: {r}"
    );
    assert_eq!(r["overflowing"].as_array().unwrap().len(), 0, "{what}: {r}");
    assert_eq!(r["dark"], dark, "{what}: {r}");
    let (bg, toggled) = (
        r["background"].as_str().unwrap(),
        r["toggled_background"].as_str().unwrap(),
    );
    assert_eq!(bg == "rgb(255, 255, 255)", !dark, "{what}: {r}");
    assert_ne!(
        bg, toggled,
        "{what}: the theme switch changes the colours: {r}"
    );
    assert_eq!(r["toggled_dark"], !dark, "{what}: {r}");
    let tip = r["tooltip"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no tooltip: {r}"));
    assert!(tip.contains("warp-cycles"), "{what}: {tip}");

    let shot = page.with_file_name(format!(
        "shot-{width}x{height}{}.png",
        if dark { "-dark" } else { "" }
    ));
    let load = chromium::screenshot(page, width, height, dark, &shot);
    assert!(
        load.console.is_empty(),
        "{what}: console: {:#?}",
        load.console
    );
    let (w, _) = chromium::png_size(&shot);
    assert_eq!(w, width.max(500), "{what}");
}

#[test]
fn single_trace_report_fits_desktop_and_phone_light_and_dark() {
    let page = report("reduce", &["reduce.small.gto"]);
    for (w, h, dark) in [
        (1280, 800, false),
        (1280, 800, true),
        (390, 844, false),
        (390, 844, true),
    ] {
        check(&page, w, h, dark);
    }
}

#[test]
fn comparison_report_fits_a_phone() {
    let page = report("compare", &["matmul.volta.gto", "matmul.volta.barrel"]);
    check(&page, 1920, 1080, false);
    check(&page, 390, 844, true);
}
