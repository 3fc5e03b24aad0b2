//! Event traces: the contract between the simulator and the analyzer.
//!
//! A trace is a [`TraceHeader`] (tool version, the full GPU config, every launch with the
//! listing of the program actually run, seed, verbosity) followed by [`Event`]s in
//! non-decreasing cycle order and a trailer that says whether the run completed. Two
//! encodings hold the same content: a compact, CRC-framed binary one ([`binary`]) and JSON
//! Lines ([`jsonl`]); [`convert`] turns one into the other losslessly. The byte layout is in
//! `docs/trace-format.md`.
//!
//! [`Recorder`] is the [`Observer`](crate::sim::observer::Observer) that writes a trace;
//! [`record`] runs a simulation into a trace file. [`TraceReader`] streams events back out,
//! holding one block in memory; [`info`] summarizes a trace.

pub mod binary;
pub mod event;
pub mod groups;
pub mod jsonl;
pub mod recorder;

pub use binary::{BinaryReader, BinaryWriter, Trailer, FORMAT_VERSION, MAGIC};
pub use event::{Event, EventKind};
pub use jsonl::{JsonlReader, JsonlWriter};
pub use recorder::{record, RecordOutcome, Recorder};

use crate::sim::config::GpuConfig;
use crate::sim::sm::PreparedLaunch;
use crate::sim::{Dim3, LaunchError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Largest header, block or line accepted (checked before allocating).
pub const MAX_LEN: u64 = 16 << 20;

/// Default recording verbosity: everything except memory events.
pub const DEFAULT_VERBOSITY: u8 = 1;

/// Why a trace could not be written or read. Offsets are byte offsets in the file (for JSON
/// Lines, `line` is 1-based).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{context}: {source}")]
    Io {
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "offset {offset}: not a warpscope trace: expected magic \"WSTRACE\\0\", found {}",
        crate::trace::hex_bytes(found)
    )]
    BadMagic { offset: u64, found: [u8; 8] },
    #[error("offset {offset}: trace format version {found} is newer than this build supports ({supported}); upgrade warpscope")]
    UnsupportedVersion {
        offset: u64,
        found: u16,
        supported: u16,
    },
    #[error("offset {offset}: file truncated: expected {expected}")]
    Truncated { offset: u64, expected: &'static str },
    /// Nothing at all: a trace always starts with its magic or its header line.
    #[error("the file is empty (0 bytes), not a trace")]
    Empty,
    #[error("offset {offset}: block CRC mismatch (stored {expected:#010x}, computed {actual:#010x}): the file is corrupt")]
    Crc {
        offset: u64,
        expected: u32,
        actual: u32,
    },
    /// The header (versions 7 on) does not match its CRC; `first..=last` is the header's
    /// byte range, CRC included.
    #[error("bytes {first}–{last}: trace header CRC mismatch (stored {expected:#010x}, computed {actual:#010x}): the header (GPU config, launches, listings) is corrupt")]
    HeaderCrc {
        first: u64,
        last: u64,
        expected: u32,
        actual: u32,
    },
    #[error("offset {offset}: {what} length {len} exceeds the limit of {limit} bytes")]
    Oversized {
        offset: u64,
        what: &'static str,
        len: u64,
        limit: u64,
    },
    #[error("offset {offset}: event at cycle {cycle} after an event at cycle {previous}: events must be in cycle order")]
    OutOfOrder {
        offset: u64,
        previous: u64,
        cycle: u64,
    },
    #[error("offset {offset}: bad tag {tag:#04x}, expected {what}")]
    BadTag {
        offset: u64,
        tag: u8,
        what: &'static str,
    },
    #[error("offset {offset}: {message}")]
    Malformed { offset: u64, message: String },
    #[error("offset {offset}: bad trace header: {message}")]
    Header { offset: u64, message: String },
    #[error("offset {offset}: data after the trailer block")]
    TrailingData { offset: u64 },
    #[error("line {line}: {message}")]
    Json { line: u64, message: String },
    /// A line that is not the JSON it should be, where serde_json stopped in it (the column
    /// counts from 1 within that line: each line is parsed on its own).
    #[error("line {line}, column {column}: {message}")]
    JsonAt {
        line: u64,
        column: u64,
        message: String,
    },
    #[error("line {line}: event at cycle {cycle} after an event at cycle {previous}: events must be in cycle order")]
    JsonOutOfOrder {
        line: u64,
        previous: u64,
        cycle: u64,
    },
    #[error("line {line}: {what}")]
    JsonStructure { line: u64, what: &'static str },
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// A binary format version the writer was asked for but does not write.
    #[error(
        "cannot write trace format version {version}: the writer writes versions {}, {} and {}",
        binary::DEFAULT_VERSION,
        binary::COMPACT_VERSION,
        binary::GROUPED_VERSION
    )]
    UnwritableVersion { version: u16 },
    /// An event this format cannot store (a pipe group's change outside version 6).
    #[error("the trace format cannot store {0}")]
    Unsupported(String),
}

impl TraceError {
    pub(crate) fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> TraceError {
        move |source| TraceError::Io { context, source }
    }
}

/// One launch as the header records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchHeader {
    pub kernel: String,
    pub grid: Dim3,
    pub block: Dim3,
    pub regs_per_thread: u32,
    pub shared_bytes: u32,
    pub stream: u32,
    pub params: Vec<u32>,
    /// The kernel's parameter names (`.param`), one per entry of `params`, so that a
    /// comparison can say `stride` where it would say `params.2`; empty for a replay, whose
    /// traces name none (and then not written).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub param_names: Vec<String>,
    /// Instruction text by PC, of the program actually run (after the auto-control pass).
    pub listing: Vec<String>,
    /// CUDA source line by PC, for a replay of an Accel-Sim trace recorded with lineinfo;
    /// empty otherwise (and then not written).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_lines: Vec<u32>,
    /// The assembly file the kernel was assembled from, as the launch file or command line
    /// named it (`kernels/vecadd.sasm`); empty when none was given (a replay, a tiny-gpu hex
    /// kernel, a program recorded through the library), and then not written.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub asm_file: String,
    /// The line of the assembly text each PC was assembled from ([`Program::lines`]); empty
    /// for a program without text lines (and then not written).
    ///
    /// [`Program::lines`]: crate::isa::Program::lines
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asm_lines: Vec<u32>,
}

/// Everything the analyzer needs besides the events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceHeader {
    /// Always `"warpscope-trace"`.
    pub format: String,
    /// The format version the trace was recorded in (a conversion copies the header as it
    /// is): [`binary::DEFAULT_VERSION`], or [`binary::COMPACT_VERSION`] for the compact one.
    pub version: u16,
    /// The warpscope version that wrote the trace.
    pub tool_version: String,
    pub config: GpuConfig,
    pub launches: Vec<LaunchHeader>,
    /// Seed of any randomness in the run (0 when none was given).
    pub seed: u64,
    /// 0: lifecycle, issue, refill, hazard, fault; 1 (default): + warp states, completions,
    /// barriers; 2: + memory events.
    pub verbosity: u8,
}

impl TraceHeader {
    pub fn new(config: &GpuConfig, prepared: &[PreparedLaunch], seed: u64, verbosity: u8) -> Self {
        TraceHeader {
            format: "warpscope-trace".into(),
            version: binary::DEFAULT_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            config: config.clone(),
            launches: prepared
                .iter()
                .map(|p| LaunchHeader {
                    kernel: p.program.name.clone(),
                    grid: p.launch.grid,
                    block: p.launch.block,
                    regs_per_thread: p.program.regs as u32,
                    shared_bytes: p.program.shared_bytes,
                    stream: p.launch.stream,
                    params: p.launch.params.clone(),
                    param_names: p.program.params.clone(),
                    listing: p.program.listing(),
                    source_lines: Vec::new(),
                    asm_file: String::new(),
                    // (Lines that do not match the instructions one for one would name
                    // the wrong line; a program built in code might hold such.)
                    asm_lines: match p.program.lines.len() == p.program.instructions.len() {
                        true => p.program.lines.clone(),
                        false => Vec::new(),
                    },
                })
                .collect(),
            seed,
            verbosity,
        }
    }

    /// Names the assembly file of each launch that has source lines: `files[i]` is launch
    /// `i`'s, as its caller named it (the simulator, which builds the rest of the header,
    /// knows no files). An empty name, or one past the launches, changes nothing.
    pub fn name_asm_files(&mut self, files: &[String]) {
        for (launch, file) in self.launches.iter_mut().zip(files) {
            if !launch.asm_lines.is_empty() {
                launch.asm_file = file.clone();
            }
        }
    }

    /// Whether the trace has warp-state events (recorded at `verbosity` 1 or more): what the
    /// analyzer's state figures and the charts drawn from warp states need.
    pub fn warp_states_recorded(&self) -> bool {
        self.verbosity >= EventKind::WarpState.min_verbosity()
    }
}

/// Which encoding a trace file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// The CRC-framed binary format, version 7 (fast to analyse; version 4 before the header
    /// had a CRC).
    Binary,
    /// The binary format, version 8: about 40 % smaller, about half as fast to analyse
    /// (version 5 before the header had a CRC).
    Compact,
    /// The binary format, version 9: version 7 with pipe groups — a change shared by the
    /// warps ready but for one pipe is stored once (faster to record; version 6 before the
    /// header had a CRC).
    Grouped,
    Jsonl,
}

impl TraceFormat {
    /// `.jsonl` / `.json` → JSON Lines, anything else → binary.
    pub fn from_path(path: &Path) -> TraceFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("json") => {
                TraceFormat::Jsonl
            }
            _ => TraceFormat::Binary,
        }
    }

    /// The binary format whose version is `version`, or whose encoding it is (version 5
    /// is compact too); the default one for any other.
    pub fn binary_of_version(version: u16) -> TraceFormat {
        match binary::encoding(version) {
            5 => TraceFormat::Compact,
            6 => TraceFormat::Grouped,
            _ => TraceFormat::Binary,
        }
    }

    /// Its name on the command line (`--format`).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Binary => "binary",
            TraceFormat::Compact => "compact",
            TraceFormat::Grouped => "grouped",
            TraceFormat::Jsonl => "jsonl",
        }
    }

    /// The version a binary writer of this format writes (`None` for JSON Lines).
    fn binary_version(self) -> Option<u16> {
        match self {
            TraceFormat::Binary => Some(binary::DEFAULT_VERSION),
            TraceFormat::Compact => Some(binary::COMPACT_VERSION),
            TraceFormat::Grouped => Some(binary::GROUPED_VERSION),
            TraceFormat::Jsonl => None,
        }
    }
}

/// A trace writer of either format.
#[allow(clippy::large_enum_variant)]
pub enum TraceWriter<W: Write> {
    Binary(BinaryWriter<W>),
    Jsonl(JsonlWriter<W>),
}

impl<W: Write> TraceWriter<W> {
    pub fn new(out: W, format: TraceFormat, header: &TraceHeader) -> Result<Self, TraceError> {
        let version = match format {
            TraceFormat::Compact => Some(binary::COMPACT_VERSION),
            TraceFormat::Grouped => Some(binary::GROUPED_VERSION),
            TraceFormat::Binary | TraceFormat::Jsonl => None,
        };
        let json = match version {
            Some(version) => serde_json::to_string(&TraceHeader {
                version,
                ..header.clone()
            }),
            None => serde_json::to_string(header),
        }
        .expect("a trace header serializes");
        Self::with_raw_header(out, format, &json)
    }

    pub fn with_raw_header(
        out: W,
        format: TraceFormat,
        header_json: &str,
    ) -> Result<Self, TraceError> {
        Ok(match format {
            TraceFormat::Binary => TraceWriter::Binary(BinaryWriter::with_raw_header(
                out,
                header_json,
                binary::DEFAULT_VERSION,
            )?),
            TraceFormat::Compact => TraceWriter::Binary(BinaryWriter::with_raw_header(
                out,
                header_json,
                binary::COMPACT_VERSION,
            )?),
            TraceFormat::Grouped => TraceWriter::Binary(BinaryWriter::with_raw_header(
                out,
                header_json,
                binary::GROUPED_VERSION,
            )?),
            TraceFormat::Jsonl => {
                TraceWriter::Jsonl(JsonlWriter::with_raw_header(out, header_json)?)
            }
        })
    }

    pub fn write(&mut self, event: &Event) -> Result<(), TraceError> {
        match self {
            TraceWriter::Binary(w) => w.write(event),
            TraceWriter::Jsonl(w) => w.write(event),
        }
    }

    /// Whether this writer stores pipe groups (see [`groups`]): then a recorder asks the
    /// simulator for them.
    pub fn stores_groups(&self) -> bool {
        matches!(self, TraceWriter::Binary(w) if w.version() == binary::GROUPED_VERSION)
    }

    /// Writes `events` in order, as [`write`](Self::write) would one by one, up to the first
    /// error. One call per batch: the binary writer's per-event work is inlined into the loop.
    // Inlined in turn into the encoder thread's loop, whose writer then lives in its frame.
    #[inline(always)]
    pub fn write_events<'a>(
        &mut self,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<(), TraceError> {
        // A loop, not `try_for_each`: the latter's `try_fold` stayed a call, and the writer's
        // fields were reached through a pointer (2 % more of the encoder thread).
        match self {
            TraceWriter::Binary(w) => {
                for e in events {
                    w.write(e)?;
                }
            }
            TraceWriter::Jsonl(w) => {
                for e in events {
                    w.write(e)?;
                }
            }
        }
        Ok(())
    }

    pub fn events(&self) -> u64 {
        match self {
            TraceWriter::Binary(w) => w.events(),
            TraceWriter::Jsonl(w) => w.events(),
        }
    }

    pub fn finish(self, complete: bool) -> Result<W, TraceError> {
        match self {
            TraceWriter::Binary(w) => w.finish(complete),
            TraceWriter::Jsonl(w) => w.finish(complete),
        }
    }
}

/// A streaming reader of either format (detected from the first bytes).
#[allow(clippy::large_enum_variant)]
pub enum TraceReader<R: Read> {
    Binary(BinaryReader<R>),
    Jsonl(JsonlReader<R>),
}

/// Chains already-read bytes in front of a reader.
pub type Peeked<R> = std::io::Chain<std::io::Cursor<Vec<u8>>, R>;

impl<R: Read> TraceReader<Peeked<R>> {
    /// Detects the format: the binary magic, or else JSON Lines.
    pub fn new(mut input: R) -> Result<Self, TraceError> {
        let mut magic = [0u8; 8];
        let mut n = 0;
        while n < 8 {
            match input.read(&mut magic[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io("reading the trace")(e)),
            }
        }
        let peeked = std::io::Cursor::new(magic[..n].to_vec()).chain(input);
        if n == 8 && magic == MAGIC {
            Ok(TraceReader::Binary(BinaryReader::new(peeked)?))
        } else if n > 0 && (magic[0] == b'{' || magic[0].is_ascii_whitespace()) {
            Ok(TraceReader::Jsonl(JsonlReader::new(peeked)?))
        } else if n == 0 {
            Err(TraceError::Empty)
        } else if n < 8 {
            Err(TraceError::Truncated {
                offset: n as u64,
                expected: "the 8-byte magic WSTRACE\\0",
            })
        } else {
            Err(TraceError::BadMagic {
                offset: 0,
                found: magic,
            })
        }
    }
}

impl TraceReader<Peeked<BufReader<File>>> {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let f = File::open(path).map_err(TraceError::io("opening the trace"))?;
        TraceReader::new(BufReader::with_capacity(1 << 16, f))
    }
}

impl<R: Read> TraceReader<R> {
    pub fn format(&self) -> TraceFormat {
        match self {
            TraceReader::Binary(_) => TraceFormat::Binary,
            TraceReader::Jsonl(_) => TraceFormat::Jsonl,
        }
    }

    pub fn header(&self) -> &TraceHeader {
        match self {
            TraceReader::Binary(r) => r.header(),
            TraceReader::Jsonl(r) => r.header(),
        }
    }

    pub fn header_json(&self) -> &str {
        match self {
            TraceReader::Binary(r) => r.header_json(),
            TraceReader::Jsonl(r) => r.header_json(),
        }
    }

    /// The trailer, available once iteration has ended without error.
    pub fn trailer(&self) -> Option<Trailer> {
        match self {
            TraceReader::Binary(r) => r.trailer(),
            TraceReader::Jsonl(r) => r.trailer(),
        }
    }

    /// Calls `f` with every event in order (a block at a time for binary traces, which is
    /// faster than the iterator); returns the number of events.
    pub fn for_each_event(&mut self, mut f: impl FnMut(&Event)) -> Result<u64, TraceError> {
        let mut n = 0;
        match self {
            TraceReader::Binary(r) => {
                while let Some(batch) = r.next_batch() {
                    let batch = batch?;
                    n += batch.len() as u64;
                    batch.iter().for_each(&mut f);
                }
            }
            TraceReader::Jsonl(r) => {
                for e in r {
                    f(&e?);
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// Whether the run completed; `None` until the trailer has been read.
    pub fn complete(&self) -> Option<bool> {
        self.trailer().map(|t| t.complete)
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            TraceReader::Binary(r) => r.next(),
            TraceReader::Jsonl(r) => r.next(),
        }
    }
}

/// Re-encodes a trace in `format` (header copied verbatim, so binary → JSONL → binary gives
/// identical bytes). Returns the number of events.
pub fn convert<R: Read, W: Write>(
    reader: TraceReader<R>,
    out: W,
    format: TraceFormat,
) -> Result<(W, u64), TraceError> {
    let mut reader = reader;
    // The header is kept byte for byte (a round trip through JSON Lines gives back the same
    // file), unless its version would misstate the binary format written.
    let mut w = match format.binary_version() {
        Some(v) if v != reader.header().version => TraceWriter::new(
            out,
            format,
            &TraceHeader {
                version: v,
                ..reader.header().clone()
            },
        )?,
        _ => TraceWriter::with_raw_header(out, format, reader.header_json())?,
    };
    for e in reader.by_ref() {
        w.write(&e?)?;
    }
    let trailer = reader.trailer().ok_or(TraceError::Truncated {
        offset: 0,
        expected: "a trailer",
    })?;
    let n = w.events();
    Ok((w.finish(trailer.complete)?, n))
}

/// Converts the trace at `input` into `output` (format from `output`'s extension).
pub fn convert_file(input: &Path, output: &Path) -> Result<u64, TraceError> {
    let reader = TraceReader::open(input)?;
    let f = File::create(output).map_err(TraceError::io("creating the output"))?;
    let (w, n) = convert(reader, BufWriter::new(f), TraceFormat::from_path(output))?;
    drop(w);
    Ok(n)
}

/// A summary of a trace: header facts and event counts per kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceInfo {
    pub format: TraceFormat,
    pub version: u16,
    pub tool_version: String,
    pub gpu: String,
    pub kernels: Vec<String>,
    pub seed: u64,
    pub verbosity: u8,
    pub complete: bool,
    pub events: u64,
    pub last_cycle: u64,
    /// Events per kind name (every kind present, zero if none).
    pub counts: BTreeMap<String, u64>,
}

/// Reads a whole trace (streaming) and summarizes it.
pub fn info<R: Read>(mut reader: TraceReader<R>) -> Result<TraceInfo, TraceError> {
    let mut counts = [0u64; EventKind::ALL.len()];
    let mut last_cycle = 0;
    for e in reader.by_ref() {
        let e = e?;
        counts[e.kind() as usize] += 1;
        last_cycle = e.cycle();
    }
    let trailer = reader.trailer();
    let h = reader.header();
    Ok(TraceInfo {
        format: reader.format(),
        version: h.version,
        tool_version: h.tool_version.clone(),
        gpu: h.config.name.clone(),
        kernels: h.launches.iter().map(|l| l.kernel.clone()).collect(),
        seed: h.seed,
        verbosity: h.verbosity,
        complete: trailer.is_some_and(|t| t.complete),
        events: counts.iter().sum(),
        last_cycle,
        counts: EventKind::ALL
            .iter()
            .map(|k| (k.name().to_string(), counts[*k as usize]))
            .collect(),
    })
}

/// [`info`] of the trace file at `path`.
pub fn info_file(path: &Path) -> Result<TraceInfo, TraceError> {
    info(TraceReader::open(path)?)
}

/// Bytes as `0x57 0x53 ...`, for messages about a file's first bytes.
fn hex_bytes(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
    hex.join(" ")
}
