//! Driving Debian's headless Chromium from tests: load a page, let its scripts run, and read
//! back the DOM, a screenshot and the console. No WebDriver: pages under test expose a
//! `#selftest` mode that measures themselves and writes the result as JSON into
//! `<pre id="selftest">`, which `--dump-dom` returns.
//!
//! Headless Chromium will not lay a window out narrower than 500 px, so narrower (phone)
//! widths load the page in an `<iframe>` of that width inside a harness page; the framed page
//! posts its result to the harness.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Chromium binary, or a failure that says how to install it.
pub fn chromium() -> PathBuf {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return PathBuf::from(c);
        }
    }
    panic!("headless Chromium is needed for this test: install it with `apt-get install chromium` (.ci/run does)");
}

/// What one page load gave back.
pub struct Load {
    pub dom: String,
    /// Console messages (errors included), one per line, as Chromium logged them.
    pub console: Vec<String>,
}

impl Load {
    /// The page's self-test result.
    pub fn selftest(&self) -> serde_json::Value {
        let start = self.dom.rfind("<pre id=\"selftest\">").unwrap_or_else(|| {
            panic!(
                "no self-test result in the page:\n{}",
                &self.dom[..self.dom.len().min(2000)]
            )
        }) + "<pre id=\"selftest\">".len();
        let end = start + self.dom[start..].find("</pre>").expect("closed <pre>");
        let text = self.dom[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "self-test JSON: {e}: {text}\n--- page end:\n{}",
                &self.dom[self.dom.len().saturating_sub(1500)..]
            )
        })
    }
}

fn run(url: &str, width: u32, height: u32, dark: bool, screenshot: Option<&Path>) -> Load {
    let profile = tempdir("profile");
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--allow-file-access-from-files",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={width},{height}"));
    if dark {
        cmd.arg("--blink-settings=preferredColorScheme=0");
    }
    match screenshot {
        Some(p) => cmd.arg(format!("--screenshot={}", p.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(url).output().expect("start chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    Load {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
    }
}

fn tempdir(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "chromium-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn file_url(page: &Path) -> String {
    format!("file://{}", page.canonicalize().unwrap().display())
}

/// Where a narrow page is framed: a harness next to the page, framing it at `width`.
fn harness(page: &Path, width: u32, height: u32, hash: &str) -> PathBuf {
    let name = page.file_name().unwrap().to_string_lossy();
    let harness = page.with_file_name(format!("harness-{width}.html"));
    std::fs::write(
        &harness,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\">\
             <iframe src=\"{name}{hash}\" width=\"{width}\" height=\"{height}\" style=\"border:0;display:block\"></iframe>\
             <script>window.addEventListener('message', function (e) {{\
               var p = document.createElement('pre'); p.id = 'selftest'; p.textContent = e.data;\
               document.body.appendChild(p); }});</script></body></html>"
        ),
    )
    .unwrap();
    harness
}

/// Loads `page#selftest` at `width`×`height` (dark: the system prefers a dark scheme).
pub fn selftest(page: &Path, width: u32, height: u32, dark: bool) -> Load {
    if width >= 500 {
        run(
            &format!("{}#selftest", file_url(page)),
            width,
            height,
            dark,
            None,
        )
    } else {
        let h = harness(page, width, height, "#selftest");
        run(&file_url(&h), 500, height, dark, None)
    }
}

/// Screenshots `page` at `width`×`height` into `out` (a PNG).
pub fn screenshot(page: &Path, width: u32, height: u32, dark: bool, out: &Path) -> Load {
    let load = if width >= 500 {
        run(&file_url(page), width, height, dark, Some(out))
    } else {
        let h = harness(page, width, height, "");
        run(&file_url(&h), width.max(500), height, dark, Some(out))
    };
    assert!(
        std::fs::metadata(out).is_ok_and(|m| m.len() > 1000),
        "no screenshot at {}",
        out.display()
    );
    load
}

/// The PNG's width and height.
pub fn png_size(path: &Path) -> (u32, u32) {
    let d = std::fs::read(path).unwrap();
    assert_eq!(&d[1..4], b"PNG", "{} is not a PNG", path.display());
    let be = |i: usize| u32::from_be_bytes([d[i], d[i + 1], d[i + 2], d[i + 3]]);
    (be(16), be(20))
}
