//! JSON Lines traces: line 1 is the header object, then one event object per line, then a
//! trailer line `{"trailer":{"complete":..,"events":..,"last_cycle":..}}`.

use super::binary::Trailer;
use super::event::Event;
use super::{TraceError, TraceHeader, MAX_LEN};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read, Write};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrailerJson {
    complete: bool,
    events: u64,
    last_cycle: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrailerLine {
    trailer: TrailerJson,
}

/// Writes a JSON Lines trace.
pub struct JsonlWriter<W: Write> {
    out: W,
    events: u64,
    last_cycle: u64,
    line: u64,
    buf: Vec<u8>,
}

impl<W: Write> JsonlWriter<W> {
    pub fn new(out: W, header: &TraceHeader) -> Result<Self, TraceError> {
        let json = serde_json::to_string(header).expect("a trace header serializes");
        Self::with_raw_header(out, &json)
    }

    /// `header_json` must be one line of JSON; it is written verbatim.
    pub fn with_raw_header(mut out: W, header_json: &str) -> Result<Self, TraceError> {
        if header_json.contains('\n') {
            return Err(TraceError::JsonStructure {
                line: 1,
                what: "the header must be a single line of JSON",
            });
        }
        out.write_all(header_json.as_bytes())
            .and_then(|_| out.write_all(b"\n"))
            .map_err(TraceError::io("writing the header"))?;
        Ok(JsonlWriter {
            out,
            events: 0,
            last_cycle: 0,
            line: 1,
            buf: Vec::with_capacity(256),
        })
    }

    pub fn write(&mut self, event: &Event) -> Result<(), TraceError> {
        let cycle = event.cycle();
        if cycle < self.last_cycle {
            return Err(TraceError::JsonOutOfOrder {
                line: self.line + 1,
                previous: self.last_cycle,
                cycle,
            });
        }
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, event).expect("an event serializes");
        self.buf.push(b'\n');
        self.out
            .write_all(&self.buf)
            .map_err(TraceError::io("writing an event"))?;
        self.last_cycle = cycle;
        self.events += 1;
        self.line += 1;
        Ok(())
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn finish(mut self, complete: bool) -> Result<W, TraceError> {
        let t = TrailerLine {
            trailer: TrailerJson {
                complete,
                events: self.events,
                last_cycle: self.last_cycle,
            },
        };
        let mut line = serde_json::to_vec(&t).expect("a trailer serializes");
        line.push(b'\n');
        self.out
            .write_all(&line)
            .and_then(|_| self.out.flush())
            .map_err(TraceError::io("writing the trailer"))?;
        Ok(self.out)
    }
}

/// Reads one line of at most [`MAX_LEN`] bytes (without its newline); `None` at end of input.
fn read_line<R: BufRead>(r: &mut R, line: u64, out: &mut Vec<u8>) -> Result<bool, TraceError> {
    out.clear();
    let mut any = false;
    loop {
        let buf = r.fill_buf().map_err(TraceError::io("reading a line"))?;
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if (out.len() + take) as u64 > MAX_LEN {
            return Err(TraceError::JsonStructure {
                line,
                what: "line longer than 16 MiB",
            });
        }
        out.extend_from_slice(&buf[..take]);
        r.consume(take + done as usize);
        if done {
            if out.last() == Some(&b'\r') {
                out.pop();
            }
            return Ok(true);
        }
    }
}

/// serde_json's reason for `e` without the position it appends: each line is parsed on its
/// own, so its "at line 1 column N" names the wrong line; [`at`] gives the file's.
fn reason(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&position).unwrap_or(&full).to_string()
}

/// The error at the file's `line`, and at the column where serde_json stopped in it when it
/// knows one (an error a `Deserialize` impl raises without reading on has none).
fn at(line: u64, e: &serde_json::Error, message: String) -> TraceError {
    match e.line() {
        0 => TraceError::Json { line, message },
        _ => TraceError::JsonAt {
            line,
            column: e.column() as u64,
            message,
        },
    }
}

/// The error for a line that is not the JSON of a `what` (`event`, ...). When the file ends
/// inside the line, serde_json's end-of-input error means that the trace was cut short, and
/// the message says so rather than what JSON was expected.
fn bad_line<R: BufRead>(input: &mut R, line: u64, what: &str, e: &serde_json::Error) -> TraceError {
    let message = match e.is_eof() && at_end(input) {
        true => format!(
            "the trace looks truncated: the file ends inside this {what} line ({})",
            reason(e)
        ),
        false => format!("bad {what}: {}", reason(e)),
    };
    at(line, e, message)
}

/// Whether `input` is at its end (an error reading it counts as not: the next read reports
/// it).
fn at_end<R: BufRead>(input: &mut R) -> bool {
    input.fill_buf().is_ok_and(|b| b.is_empty())
}

/// A streaming reader of a JSON Lines trace.
pub struct JsonlReader<R: Read> {
    input: BufReader<R>,
    header: TraceHeader,
    header_json: String,
    line: u64,
    buf: Vec<u8>,
    last_cycle: u64,
    events: u64,
    trailer: Option<Trailer>,
    done: bool,
}

impl<R: Read> JsonlReader<R> {
    pub fn new(input: R) -> Result<Self, TraceError> {
        let mut input = BufReader::new(input);
        let mut buf = Vec::new();
        if !read_line(&mut input, 1, &mut buf)? {
            return Err(TraceError::JsonStructure {
                line: 1,
                what: "empty file: expected the header line",
            });
        }
        let header_json = String::from_utf8(buf.clone()).map_err(|_| TraceError::Json {
            line: 1,
            message: "header is not UTF-8".into(),
        })?;
        let header: TraceHeader = serde_json::from_str(&header_json).map_err(|e| {
            // A JSON file that is not a trace is most often a launch file or a GPU config
            // given to the wrong command; pretty-printed, its first line is just `{` (an
            // end-of-input error, but with more lines after it: a header cut short ends the
            // file instead).
            let cut_short = e.is_eof() && at_end(&mut input);
            if !cut_short && (e.is_eof() || !header_json.contains("\"version\"")) {
                let message = format!(
                    "not a warpscope trace header ({}); a launch file or GPU config is the input of `record` or `profile`, not a trace",
                    reason(&e)
                );
                return at(1, &e, message);
            }
            bad_line(&mut input, 1, "trace header", &e)
        })?;
        header.config.validate().map_err(|e| TraceError::Json {
            line: 1,
            message: format!("bad trace header: {e}"),
        })?;
        if header.version > super::FORMAT_VERSION {
            return Err(TraceError::UnsupportedVersion {
                offset: 0,
                found: header.version,
                supported: super::FORMAT_VERSION,
            });
        }
        Ok(JsonlReader {
            input,
            header,
            header_json,
            line: 1,
            buf,
            last_cycle: 0,
            events: 0,
            trailer: None,
            done: false,
        })
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    pub fn header_json(&self) -> &str {
        &self.header_json
    }

    pub fn trailer(&self) -> Option<Trailer> {
        self.trailer
    }

    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        self.line += 1;
        let line = self.line;
        if !read_line(&mut self.input, line, &mut self.buf)? {
            return Err(TraceError::JsonStructure {
                line,
                what: "file truncated: expected an event or the trailer line",
            });
        }
        let text = &self.buf;
        let trimmed = text.trim_ascii_start();
        if trimmed.starts_with(b"{\"trailer\"") {
            let t: TrailerLine = serde_json::from_slice(text)
                .map_err(|e| bad_line(&mut self.input, line, "trailer", &e))?;
            if t.trailer.events != self.events {
                return Err(TraceError::Json {
                    line,
                    message: format!(
                        "trailer counts {} events but the file holds {}",
                        t.trailer.events, self.events
                    ),
                });
            }
            let mut rest = Vec::new();
            while read_line(&mut self.input, line + 1, &mut rest)? {
                if !rest.trim_ascii().is_empty() {
                    return Err(TraceError::JsonStructure {
                        line: line + 1,
                        what: "data after the trailer line",
                    });
                }
            }
            self.trailer = Some(Trailer {
                complete: t.trailer.complete,
                events: t.trailer.events,
                last_cycle: t.trailer.last_cycle,
            });
            return Ok(None);
        }
        let e: Event = serde_json::from_slice(text)
            .map_err(|e| bad_line(&mut self.input, line, "event", &e))?;
        if e.cycle() < self.last_cycle {
            return Err(TraceError::JsonOutOfOrder {
                line,
                previous: self.last_cycle,
                cycle: e.cycle(),
            });
        }
        if let Some(what) = e.out_of_range(&self.header) {
            return Err(TraceError::Json {
                line,
                message: format!("the {} event names {what}", e.kind().name()),
            });
        }
        self.last_cycle = e.cycle();
        self.events += 1;
        Ok(Some(e))
    }
}

impl<R: Read> Iterator for JsonlReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_event() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
