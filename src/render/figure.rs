//! A chart as a figure file for papers and slides: the SVG as drawn, a vector PDF, or a PNG.
//!
//! The charts name generic font families only (`sans-serif`, `monospace`), which a browser
//! resolves to the fonts of the machine it runs on. A PDF or PNG has its glyphs fixed when it
//! is written, so warpscope carries its own: DejaVu Sans and DejaVu Sans Mono
//! (`assets/fonts`, with their licence) stand for the two families. The same chart gives the
//! same bytes on any machine. The PDF's text is drawn as glyph outlines, so it shows the same
//! in every viewer and needs no font (it cannot be selected as text). One SVG pixel is one PDF
//! point (1/72 in); a PNG is drawn at `scale` device pixels per SVG pixel on white.

use resvg::usvg;
use std::sync::{Arc, OnceLock};

/// The file formats a chart can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureFormat {
    Svg,
    Pdf,
    Png,
}

impl FigureFormat {
    pub const ALL: [FigureFormat; 3] = [FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Png];

    /// The format a file name's extension names (`.svg`, `.pdf`, `.png`, in any case).
    pub fn from_extension(path: &std::path::Path) -> Option<FigureFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        FigureFormat::ALL.into_iter().find(|f| f.extension() == ext)
    }

    pub fn extension(self) -> &'static str {
        match self {
            FigureFormat::Svg => "svg",
            FigureFormat::Pdf => "pdf",
            FigureFormat::Png => "png",
        }
    }
}

/// The most device pixels per SVG pixel a PNG takes (a 1,200-pixel-wide chart at 8 is 9,600
/// pixels wide: poster size).
pub const MAX_PNG_SCALE: u32 = 8;

#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    #[error("the chart's SVG could not be read back for conversion: {0}")]
    Parse(String),
    #[error("PDF conversion failed: {0}")]
    Pdf(String),
    #[error(
        "a PNG of {width}x{height} pixels is too large (scale {scale}); use a smaller --scale"
    )]
    TooLarge { width: u32, height: u32, scale: u32 },
    #[error("PNG encoding failed: {0}")]
    Png(String),
}

/// The bundled fonts, as the conversions' font database (built once: parsing the font files'
/// tables is most of a small chart's conversion time).
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSans.ttf").to_vec());
            db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSansMono.ttf").to_vec());
            db.set_sans_serif_family("DejaVu Sans");
            db.set_monospace_family("DejaVu Sans Mono");
            // A chart names no other family, but an SVG edited by hand might.
            db.set_serif_family("DejaVu Sans");
            Arc::new(db)
        })
        .clone()
}

fn parse(svg: &str) -> Result<usvg::Tree, FigureError> {
    let options = usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).map_err(|e| FigureError::Parse(e.to_string()))
}

/// `svg` (a chart as [`super::chart`] or the study draws it) in `format`; `scale` is the PNG's
/// device pixels per SVG pixel (1 to [`MAX_PNG_SCALE`]; ignored by the other formats).
pub fn encode(svg: &str, format: FigureFormat, scale: u32) -> Result<Vec<u8>, FigureError> {
    match format {
        FigureFormat::Svg => Ok(svg.as_bytes().to_vec()),
        FigureFormat::Pdf => {
            let tree = parse(svg)?;
            svg2pdf::to_pdf(
                &tree,
                // Text as outlines: svg2pdf writes two embedded fonts in the order of a hash
                // map's walk, which changes from run to run, and outlines are what journals'
                // PDF checks ask for anyway (no font to embed or substitute).
                svg2pdf::ConversionOptions {
                    embed_text: false,
                    ..svg2pdf::ConversionOptions::default()
                },
                svg2pdf::PageOptions::default(),
            )
            .map(canonical_reference_order)
            .map_err(|e| FigureError::Pdf(e.to_string()))
        }
        FigureFormat::Png => {
            let tree = parse(svg)?;
            let scale = scale.clamp(1, MAX_PNG_SCALE);
            let size = tree.size().to_int_size();
            let (width, height) = (size.width(), size.height());
            let too_large = FigureError::TooLarge {
                width: width.saturating_mul(scale),
                height: height.saturating_mul(scale),
                scale,
            };
            // (tiny-skia refuses a pixmap past its own limits; this says why in our terms.)
            let mut pixmap = match (width.checked_mul(scale), height.checked_mul(scale)) {
                (Some(w), Some(h)) => resvg::tiny_skia::Pixmap::new(w, h).ok_or(too_large)?,
                _ => return Err(too_large),
            };
            // Slides and papers are white: a transparent background shows a viewer's dark
            // theme through the gaps between bars.
            pixmap.fill(resvg::tiny_skia::Color::WHITE);
            let transform = resvg::tiny_skia::Transform::from_scale(scale as f32, scale as f32);
            resvg::render(&tree, transform, &mut pixmap.as_mut());
            pixmap
                .encode_png()
                .map(|png| with_density(png, scale))
                .map_err(|e| FigureError::Png(e.to_string()))
        }
    }
}

/// `png` with a `pHYs` chunk saying `scale` device pixels per CSS pixel (96 per inch): without
/// one, a word processor or slide editor places a scale-2 PNG at twice the chart's size; with
/// it, at the size the SVG would have. The chunk goes right after `IHDR`, as PNG requires
/// (before `IDAT`); a stream that does not start with an `IHDR` is returned unchanged.
fn with_density(mut png: Vec<u8>, scale: u32) -> Vec<u8> {
    // Signature (8 bytes), then IHDR: length, type, 13 bytes of data, CRC.
    const IHDR_END: usize = 8 + 4 + 4 + 13 + 4;
    if png.len() < IHDR_END || &png[12..16] != b"IHDR" {
        return png;
    }
    let per_metre = (f64::from(96 * scale) / 0.0254).round() as u32;
    let mut chunk = Vec::with_capacity(21);
    chunk.extend_from_slice(&9u32.to_be_bytes());
    chunk.extend_from_slice(b"pHYs");
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.extend_from_slice(&per_metre.to_be_bytes());
    chunk.push(1); // the unit is the metre
    let crc = crc32fast::hash(&chunk[4..]);
    chunk.extend_from_slice(&crc.to_be_bytes());
    png.splice(IHDR_END..IHDR_END, chunk);
    png
}

/// `pdf` with each run of dictionary entries that name an object (`/po12 18 0 R`, one per
/// line as svg2pdf writes them) in sorted order. svg2pdf writes a page's resources (patterns,
/// graphics states) in the order of a hash map's walk, which changes from run to run; a
/// dictionary's order means nothing in PDF, and sorting whole lines keeps every byte offset
/// (the cross-reference table stays valid). Stream data is passed over.
fn canonical_reference_order(mut pdf: Vec<u8>) -> Vec<u8> {
    fn is_reference_entry(line: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(line) else {
            return false;
        };
        let mut parts = text.split_ascii_whitespace();
        matches!(
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next()),
            (Some(key), Some(object), Some("0"), Some("R"), None)
                if key.len() > 1 && key.starts_with('/')
                    && object.bytes().all(|b| b.is_ascii_digit())
        )
    }
    let sort_run = |pdf: &mut Vec<u8>, run: &[(usize, usize)]| {
        if run.len() < 2 {
            return;
        }
        let mut lines: Vec<Vec<u8>> = run.iter().map(|&(a, b)| pdf[a..b].to_vec()).collect();
        lines.sort();
        let sorted = lines.join(&b'\n');
        let (from, to) = (run[0].0, run[run.len() - 1].1);
        pdf[from..to].copy_from_slice(&sorted);
    };
    let mut run: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < pdf.len() {
        let end = memchr::memchr(b'\n', &pdf[start..]).map_or(pdf.len(), |i| start + i);
        let line = &pdf[start..end];
        if is_reference_entry(line) {
            run.push((start, end));
            start = end + 1;
            continue;
        }
        let stream = line == b"stream";
        sort_run(&mut pdf, &run);
        run.clear();
        if stream {
            match memchr::memmem::find(&pdf[end..], b"\nendstream") {
                Some(i) => start = end + i + 1,
                None => break,
            }
        } else {
            start = end + 1;
        }
    }
    sort_run(&mut pdf, &run);
    pdf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_formats_in_any_case() {
        let of = |p: &str| FigureFormat::from_extension(std::path::Path::new(p));
        assert_eq!(of("a/timeline.svg"), Some(FigureFormat::Svg));
        assert_eq!(of("fig.PDF"), Some(FigureFormat::Pdf));
        assert_eq!(of("slide.Png"), Some(FigureFormat::Png));
        assert_eq!(of("chart.jpg"), None);
        assert_eq!(of("chart"), None);
    }

    #[test]
    fn reference_entries_are_sorted_in_place_and_streams_left_alone() {
        let pdf = b"3 0 obj\n<<\n  /Pattern <<\n    /po9 15 0 R\n    /po10 16 0 R\n    /po1 7 0 R\n  >>\n  /Parent 2 0 R\n>>\nstream\n/b 2 0 R\n/a 1 0 R\nendstream\n";
        let sorted = canonical_reference_order(pdf.to_vec());
        assert_eq!(sorted.len(), pdf.len());
        assert_eq!(
            String::from_utf8(sorted).unwrap(),
            "3 0 obj\n<<\n  /Pattern <<\n    /po1 7 0 R\n    /po10 16 0 R\n    /po9 15 0 R\n  >>\n  /Parent 2 0 R\n>>\nstream\n/b 2 0 R\n/a 1 0 R\nendstream\n"
        );
    }
}
