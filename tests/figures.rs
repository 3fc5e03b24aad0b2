//! Charts as figure files (`render -o X.pdf|X.png`, `report --figures`): the PNG is the chart
//! at its scale with its text drawn in the bundled fonts, the PDF is one page of the chart's
//! size with those fonts embedded, both are the same bytes every time, and a format the output
//! cannot take is a usage error.

mod common;

use common::svg::root_width;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpscope::render::figure::{encode, FigureFormat};
use warpscope::render::{chart, Chart, ChartKind, RenderOptions};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figures");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn reduce_chart(kind: ChartKind) -> Chart {
    chart(
        kind,
        &[sample("reduce.small.gto.wstrace")],
        &RenderOptions::default(),
    )
    .unwrap()
}

fn warpscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .output()
        .unwrap()
}

fn dark(p: &resvg::tiny_skia::PremultipliedColorU8) -> bool {
    (p.red() as u32 + p.green() as u32 + p.blue() as u32) < 3 * 100
}

/// The chart rasterised straight from its SVG with no fonts at all (so without its text), at
/// one pixel per SVG pixel.
fn fontless(c: &Chart) -> resvg::tiny_skia::Pixmap {
    let options = resvg::usvg::Options {
        fontdb: std::sync::Arc::new(resvg::usvg::fontdb::Database::new()),
        ..resvg::usvg::Options::default()
    };
    let tree = resvg::usvg::Tree::from_str(&c.svg, &options).unwrap();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(c.width, c.height).unwrap();
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
}

/// The PNG chunks of `png`, in order: (type, data), each CRC checked.
fn png_chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let mut chunks = Vec::new();
    let mut at = 8;
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&png[at + 4..at + 8 + len]), "CRC");
        chunks.push((String::from_utf8_lossy(kind).into_owned(), data.to_vec()));
        at += 12 + len;
    }
    chunks
}

#[test]
fn a_png_says_its_density_so_that_documents_place_it_at_the_chart_s_size() {
    let c = reduce_chart(ChartKind::Stalls);
    for scale in [1, 2, 3] {
        let png = encode(&c.svg, FigureFormat::Png, scale).unwrap();
        let chunks = png_chunks(&png);
        let kinds: Vec<&str> = chunks.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds[..2], ["IHDR", "pHYs"], "{kinds:?}");
        assert!(kinds.contains(&"IDAT") && kinds.last() == Some(&"IEND"));
        let data = &chunks[1].1;
        let per_metre = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().unwrap());
        // 96 CSS pixels per inch, `scale` device pixels each.
        let dpi = f64::from(per_metre(0)) * 0.0254;
        assert!((dpi - 96.0 * f64::from(scale)).abs() < 0.05, "{dpi}");
        assert_eq!(per_metre(0), per_metre(4));
        assert_eq!(data[8], 1, "unit: the metre");
        resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    }
}

#[test]
fn png_is_the_chart_at_its_scale_with_its_text_drawn() {
    let c = reduce_chart(ChartKind::Timeline);
    let png = encode(&c.svg, FigureFormat::Png, 2).unwrap();
    assert_eq!(png, encode(&c.svg, FigureFormat::Png, 2).unwrap());
    let image = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
    assert_eq!((image.width(), image.height()), (2 * c.width, 2 * c.height));
    let plain = fontless(&c);

    // The plot's bars are the SVG's: the centre of every row at a tenth of the plot's width
    // steps has the colour the fontless rendering has there.
    let mut compared = 0;
    for row in &c.rows {
        let y = (row.top + row.bottom) / 2;
        for k in 1..10 {
            let x = c.plot.left + (c.plot.right - c.plot.left) * k / 10;
            let want = plain.pixel(x as u32, y as u32).unwrap();
            // The 2x pixel at the same spot (its top-left of four).
            let got = image.pixel(2 * x as u32 + 1, 2 * y as u32 + 1).unwrap();
            assert_eq!(
                (got.red(), got.green(), got.blue(), got.alpha()),
                (want.red(), want.green(), want.blue(), want.alpha()),
                "row {} at x {x}",
                row.label
            );
            compared += 1;
        }
    }
    assert!(compared >= 100, "{compared} pixels compared");

    // The title band (above the plot) is text only: blank without fonts, ink with the bundled
    // ones. The same for the row labels left of the plot.
    let ink =
        |pixmap: &resvg::tiny_skia::Pixmap, scale: u32, x0: i32, x1: i32, y0: i32, y1: i32| {
            let mut n = 0;
            for y in (y0 as u32 * scale)..(y1 as u32 * scale) {
                for x in (x0 as u32 * scale)..(x1 as u32 * scale) {
                    n += dark(&pixmap.pixel(x, y).unwrap()) as u32;
                }
            }
            n
        };
    let title = (0, c.width as i32, 0, c.plot.top - 2);
    let labels = (0, c.plot.left - 4, c.plot.top, c.plot.bottom);
    for (x0, x1, y0, y1) in [title, labels] {
        assert_eq!(ink(&plain, 1, x0, x1, y0, y1), 0, "no text without fonts");
        let drawn = ink(&image, 2, x0, x1, y0, y1);
        assert!(drawn > 500, "{drawn} dark pixels where text should be");
    }
}

#[test]
fn pdf_is_one_page_of_the_charts_size_with_its_text_as_outlines() {
    let c = reduce_chart(ChartKind::Source);
    let pdf = encode(&c.svg, FigureFormat::Pdf, 2).unwrap();
    // (Twice in one process: a hash map's walk order would differ between the two.)
    assert!(
        pdf == encode(&c.svg, FigureFormat::Pdf, 2).unwrap(),
        "same bytes"
    );
    assert!(pdf.starts_with(b"%PDF-"));
    let text = String::from_utf8_lossy(&pdf);
    let pages = text.matches("/Type /Page").count() - text.matches("/Type /Pages").count();
    assert_eq!(pages, 1);
    // One SVG pixel is one point.
    let media_box = format!("/MediaBox [0 0 {} {}]", c.width, c.height);
    assert_eq!(text.matches(&media_box).count(), 1, "{media_box}");
    // No font to embed or substitute: the text is drawn.
    assert!(!text.contains("/Font"), "no font resources");
    let textless = {
        let mut svg = String::new();
        let mut rest = c.svg.as_str();
        while let Some(at) = rest.find("<text") {
            svg.push_str(&rest[..at]);
            let end = rest[at..].find("</text>").unwrap() + at + "</text>".len();
            rest = &rest[end..];
        }
        svg.push_str(rest);
        svg
    };
    assert!(
        textless.len() < c.svg.len() / 2,
        "the listing is mostly text"
    );
    let without = encode(&textless, FigureFormat::Pdf, 2).unwrap();
    assert!(
        pdf.len() > 2 * without.len(),
        "outlines of the text: {} bytes with, {} without",
        pdf.len(),
        without.len()
    );
}

#[test]
fn render_picks_the_format_from_the_extension_and_refuses_what_it_cannot_write() {
    let trace = sample("reduce.small.gto.wstrace");
    let trace = trace.to_str().unwrap();
    let pdf = tmp("stalls.pdf");
    let out = warpscope(&[
        "render",
        trace,
        "--chart",
        "stalls",
        "-o",
        pdf.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("stalls chart, PDF 1000x"), "{stdout}");

    // --format names it where the extension does not; --scale sizes a PNG.
    let png = tmp("timeline-figure");
    let out = warpscope(&[
        "render",
        trace,
        "--chart",
        "timeline",
        "-o",
        png.to_str().unwrap(),
        "--format",
        "png",
        "--scale",
        "3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = reduce_chart(ChartKind::Timeline);
    let image = resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(&png).unwrap()).unwrap();
    assert_eq!((image.width(), image.height()), (3 * c.width, 3 * c.height));

    // A second trace for a chart of one is a command line that cannot work, too.
    let out = warpscope(&[
        "render", trace, trace, "--chart", "timeline", "-o", "two.svg",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chart timeline takes one trace, got 2"));

    for (args, message) in [
        (
            vec!["-o", "chart.jpg"],
            "chart.jpg: a .jpg file is not a format warpscope writes; say the format with an extension (.svg, .pdf, .png) or --format",
        ),
        (
            vec!["-o", "chart"],
            "chart: no extension; say the format",
        ),
        (
            vec!["-o", "chart.svg", "--scale", "2"],
            "--scale applies to PNG output only (chart.svg is SVG)",
        ),
        (vec!["-o", "chart.png", "--scale", "9"], "9 is not in 1..=8"),
    ] {
        let mut all = vec!["render", trace, "--chart", "timeline"];
        all.extend(args);
        let out = warpscope(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
}

#[test]
fn report_and_profile_refuse_a_scale_without_png_figures_before_writing_anything() {
    let dir = tmp("scale-without-png");
    let _ = std::fs::remove_dir_all(&dir);
    let trace = sample("reduce.small.gto.wstrace");
    for args in [
        vec!["report", trace.to_str().unwrap(), "--scale", "3"],
        vec![
            "report",
            trace.to_str().unwrap(),
            "--figures",
            "svg,pdf",
            "--scale",
            "3",
        ],
        vec!["profile", "kernels/reduce.json", "--scale", "3"],
    ] {
        let mut args = args.clone();
        args.extend(["-o", dir.to_str().unwrap()]);
        let out = warpscope(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--scale applies to PNG figures only: add png to --figures"),
            "{stderr}"
        );
        assert!(!dir.exists(), "{args:?} wrote {}", dir.display());
    }
}

#[test]
fn report_writes_each_chart_in_every_format_asked_for() {
    let dir = tmp("report");
    let _ = std::fs::remove_dir_all(&dir);
    let out = warpscope(&[
        "report",
        sample("reduce.small.gto.wstrace").to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--figures",
        "pdf,png,pdf",
        "--scale",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("the charts as PDF and PNG"), "{stdout}");
    for chart in [
        "timeline",
        "dispatch",
        "stalls",
        "occupancy",
        "slots",
        "source",
    ] {
        let c = reduce_chart(
            ChartKind::ALL
                .into_iter()
                .find(|k| k.name() == chart)
                .unwrap(),
        );
        let pdf = std::fs::read(dir.join(format!("{chart}.pdf"))).unwrap();
        assert_eq!(
            pdf,
            encode(&c.svg, FigureFormat::Pdf, 1).unwrap(),
            "{chart}.pdf"
        );
        let png = resvg::tiny_skia::Pixmap::decode_png(
            &std::fs::read(dir.join(format!("{chart}.png"))).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (png.width(), png.height()),
            (c.width, c.height),
            "{chart}.png"
        );
        // Only the formats asked for.
        assert!(!dir.join(format!("{chart}.svg")).exists(), "{chart}.svg");
    }
}

#[test]
fn the_study_grids_are_a_figure_too() {
    let dir = tmp("study");
    std::fs::create_dir_all(&dir).unwrap();
    let (svg, pdf, png) = (dir.join("g.svg"), dir.join("g.pdf"), dir.join("g.png"));
    for (flag, path) in [("--svg", &svg), ("--figure", &pdf), ("--figure", &png)] {
        let out = warpscope(&["study", flag, path.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(std::fs::read(&pdf).unwrap() == encode(&svg, FigureFormat::Pdf, 2).unwrap());
    let image = resvg::tiny_skia::Pixmap::decode_png(&std::fs::read(&png).unwrap()).unwrap();
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    assert_eq!(
        (image.width(), image.height()),
        (2 * size.width(), 2 * size.height())
    );
    let out = warpscope(&["study", "--figure", dir.join("g.gif").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with its extension (.svg, .pdf, .png)"));
}

#[test]
fn render_width_sets_the_pdf_page_width_in_points() {
    // `--width 600` for a two-column paper: 600 points wide, so at \linewidth of 504 pt a
    // 14 px label is 11.8 pt.
    let trace = sample("reduce.small.gto.wstrace");
    for (kind, width) in [
        (ChartKind::Timeline, 600),
        (ChartKind::Stalls, 500),
        (ChartKind::Source, 2000),
    ] {
        let pdf = tmp(&format!("{}-{width}.pdf", kind.name()));
        let out = warpscope(&[
            "render",
            trace.to_str().unwrap(),
            "--chart",
            kind.name(),
            "--width",
            &width.to_string(),
            "-o",
            pdf.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c = chart(
            kind,
            std::slice::from_ref(&trace),
            &RenderOptions {
                width: Some(width),
                ..RenderOptions::default()
            },
        )
        .unwrap();
        assert_eq!(c.width, width);
        let text = String::from_utf8_lossy(&std::fs::read(&pdf).unwrap()).into_owned();
        let media_box = format!("/MediaBox [0 0 {width} {}]", c.height);
        assert_eq!(text.matches(&media_box).count(), 1, "{media_box}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("PDF {width}x{} pt", c.height)),
            "{stdout}"
        );
    }
}

#[test]
fn report_width_lays_out_every_figure_and_the_pages_charts_at_that_width() {
    let trace = sample("reduce.small.gto.wstrace");
    let dir = tmp("report-narrow");
    let _ = std::fs::remove_dir_all(&dir);
    let out = warpscope(&[
        "report",
        trace.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--figures",
        "svg,pdf",
        "--width",
        "500",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("the charts as SVG and PDF, 500 px wide"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for kind in ChartKind::ALL {
        let name = kind.name();
        let narrow = chart(
            kind,
            std::slice::from_ref(&trace),
            &RenderOptions {
                width: Some(500),
                ..RenderOptions::default()
            },
        )
        .unwrap();
        let svg = std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap();
        assert_eq!(root_width(&svg), 500, "{name}.svg");
        // The chart `render --width 500` draws, not the default one cut or scaled.
        assert!(svg == narrow.svg, "{name}.svg is not render's chart at 500");
        assert!(
            svg != reduce_chart(kind).svg,
            "{name}.svg is the default chart"
        );
        let pdf = std::fs::read(dir.join(format!("{name}.pdf"))).unwrap();
        assert!(
            pdf == encode(&narrow.svg, FigureFormat::Pdf, 2).unwrap(),
            "{name}.pdf"
        );
        let media_box = format!("/MediaBox [0 0 500 {}]", narrow.height);
        assert!(
            String::from_utf8_lossy(&pdf).contains(&media_box),
            "{name}.pdf: no {media_box}"
        );
        // The page inlines the same chart (its tooltips added before its end).
        let body = &narrow.svg[..narrow.svg.rfind("</svg>").unwrap()];
        assert!(
            html.contains(body),
            "the page's {name} chart is not the figure"
        );
    }

    // Several traces: the comparison's stall chart is the one figure, at the width too.
    let lrr = sample("reduce.small.lrr.wstrace");
    let compared = tmp("report-narrow-compared");
    let _ = std::fs::remove_dir_all(&compared);
    let out = warpscope(&[
        "report",
        trace.to_str().unwrap(),
        lrr.to_str().unwrap(),
        "-o",
        compared.to_str().unwrap(),
        "--width",
        "400",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stalls = std::fs::read_to_string(compared.join("stalls.svg")).unwrap();
    let expected = chart(
        ChartKind::Stalls,
        &[trace.clone(), lrr.clone()],
        &RenderOptions {
            width: Some(400),
            ..RenderOptions::default()
        },
    )
    .unwrap();
    assert_eq!(root_width(&stalls), 400);
    assert!(stalls == expected.svg, "the compared stalls.svg at 400");

    // Without --width, the charts' own widths, as before.
    let own = tmp("report-own-width");
    let _ = std::fs::remove_dir_all(&own);
    let out = warpscope(&[
        "report",
        trace.to_str().unwrap(),
        "-o",
        own.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    for kind in ChartKind::ALL {
        let svg = std::fs::read_to_string(own.join(format!("{}.svg", kind.name()))).unwrap();
        assert!(svg == reduce_chart(kind).svg, "{}.svg", kind.name());
    }
}

#[test]
fn report_and_profile_refuse_a_bad_width_as_render_does() {
    let trace = sample("vecadd_tiny.tiny.wstrace");
    let trace = trace.to_str().unwrap();
    let dir = tmp("report-bad-width");
    let _ = std::fs::remove_dir_all(&dir);
    let dir = dir.to_str().unwrap();
    let svg = tmp("bad-width.svg");
    // clap's first line (`error: invalid value ... for '--width <PX>': ...`) is render's, word
    // for word.
    let first_line = |o: &std::process::Output| -> String {
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        stderr.lines().next().unwrap_or_default().to_string()
    };
    for width in ["399", "10001", "0", "wide"] {
        let render = first_line(&warpscope(&[
            "render",
            trace,
            "--chart",
            "dispatch",
            "--width",
            width,
            "-o",
            svg.to_str().unwrap(),
        ]));
        assert!(render.contains("--width <PX>"), "{render}");
        let report = first_line(&warpscope(&["report", trace, "-o", dir, "--width", width]));
        assert_eq!(report, render, "report --width {width}");
        let profile = first_line(&warpscope(&["profile", "-o", dir, "--width", width]));
        assert_eq!(profile, render, "profile --width {width}");
    }
    assert!(!Path::new(dir).exists(), "a refused command wrote {dir}");
    // The library refuses it too, before reading the traces, in render's words.
    let e =
        warpscope::report::build(&[sample("vecadd_tiny.tiny.wstrace")], Some(10_001)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "a chart's width must be 400 to 10000 pixels, not 10001"
    );
    // Both commands' help says what the width applies to there.
    for command in ["report", "profile"] {
        let help = warpscope(&[command, "--help"]);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("--width <PX>"), "{command}: {text}");
        assert!(text.contains("400 to 10000"), "{command}: {text}");
        assert!(
            text.contains("The page shows these same charts"),
            "{command}: {text}"
        );
    }
}
