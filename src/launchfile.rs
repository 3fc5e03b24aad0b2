//! Launch files: the JSON that says which kernel to run, how, on what data, and what the result
//! must be. The simulator knows nothing about files; this module turns a launch file into
//! [`KernelLaunch`]es, an initialised [`GlobalMemory`] and a list of expectations, and when it
//! records them names each kernel's file in the trace header (the simulator records the lines).
//!
//! # Format
//!
//! ```json
//! {
//!   "description": "free text, ignored",
//!   "kernel": "vecadd_tiny.tgpu",
//!   "dialect": "tinygpu",
//!   "grid": 6,
//!   "block": [4],
//!   "params": {"n": 24},
//!   "gpu": "tiny",
//!   "memory": [
//!     {"address": 0,   "fill": "linear", "start": 10, "step": 10, "count": 24},
//!     {"address": 96,  "words": [1, 2, 3]},
//!     {"address": 200, "f32": [1.5, 2.0]},
//!     {"address": 512, "fill": "constant", "value": 7, "count": 4},
//!     {"address": 1024, "fill": "random", "seed": 1, "min": 0, "max": 100, "count": 64},
//!     {"address": 4096, "file": "data.bin"}
//!   ],
//!   "expect": [
//!     {"address": 192, "words": [11, 22, 33]},
//!     {"address": 300, "f32": [0.5, 0.25], "tolerance": 1e-6}
//!   ],
//!   "memory_limit": 268435456
//! }
//! ```
//!
//! - `kernel`: path of the kernel, relative to the launch file. `dialect` (`native`, `tinygpu`,
//!   `tinygpu-hex`) defaults from the extension: `.sasm`, `.tgpu`, `.hex`.
//! - `grid`, `block`: a positive integer, `[x]`, `[x, y]` or `[x, y, z]`.
//! - `params`: an object by `.param` name, or a list in `.param` order. Every parameter must be
//!   given. Values — here and in `words`, `value` — are integers (negative ones are stored as
//!   two's complement), floats (any JSON number with a fraction or exponent: stored as f32 bits),
//!   or strings: `"0x1f"`, `"0b101"`, decimal, float, `"nan"`, `"inf"`.
//! - Instead of `kernel`/`dialect`/`grid`/`block`/`params`, a list
//!   `"launches": [{"kernel", "dialect", "grid", "block", "params", "stream"}, ...]`; launches
//!   run in order, `stream` defaults to 0.
//! - `gpu`: the GPU of the timing simulator: a preset name (`tiny`, `small`, `volta`, `hopper`;
//!   default `small`) or a JSON config file (`.json`, relative to the launch file). The
//!   functional runner uses it only for the warp size: 4 for `"tiny"`, 32 otherwise.
//! - `memory`: initialisers, applied in order (later ones overwrite earlier ones). Each has a
//!   byte `address` (a multiple of 4; integer or `"0x.."`) and exactly one of: `words` (list of
//!   values), `f32` (list of numbers, or `"nan"`/`"inf"`/`"-inf"`/`"0x.."` bit patterns),
//!   `file` (little-endian 32-bit words of a binary file, path relative to the launch file) or
//!   `fill` with `count` words:
//!   `"linear"` (`start` + i·`step`, defaults 0 and 1; a float start or step gives f32 values),
//!   `"constant"` (`value`), `"random"` (integers uniform in `min..=max`, defaults 0 and
//!   2³²−1, from `rand`'s `StdRng::seed_from_u64(seed)`, `seed` defaulting to 0: deterministic).
//! - `expect`: the same forms as `memory`, compared with memory after the last launch. Values
//!   from `f32` (or a float `linear` fill) compare as floats within the absolute `tolerance`
//!   (default 0; NaN matches NaN); everything else compares as exact 32-bit words. Each expected
//!   word is one check.
//! - `memory_limit`: bytes of addressable global memory, default 256 MiB, at most 4 GiB.
//!
//! Addresses in the launch file are always **byte** addresses. tiny-gpu kernels address words,
//! so their word address `a` is byte `4a` here: tiny-gpu's `c` at word 48 is `"address": 192`.
//!
//! Every error names the file and the field (`kernels/x.json: launches[0].grid: ...`); syntax
//! errors add serde's line and column; a kernel that does not assemble carries its rendered
//! diagnostics.

use crate::asm::{self, AsmErrors, Dialect};
use crate::isa::Program;
use crate::sim::config::GpuConfig;
use crate::sim::functional::{self, FunctionalOptions, FunctionalStats, RunError};
use crate::sim::gpu::{self, SimError, SimOptions, SimReport};
use crate::sim::memory::global::DEFAULT_LIMIT_BYTES;
use crate::sim::memory::GlobalMemory;
use crate::sim::observer::Observer;
use crate::sim::stream::NoReplay;
use crate::sim::{Dim3, KernelLaunch};
use crate::trace::{self, RecordOutcome, TraceError, TraceFormat, TraceHeader};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The warp size the functional runner uses when nothing else says.
pub const DEFAULT_WARP_SIZE: u32 = 32;
/// The warp size of the `"tiny"` GPU preset (tiny-gpu runs four threads per core).
pub const TINY_WARP_SIZE: u32 = 4;
/// The GPU preset the timing simulator uses when neither the launch file nor the user names one.
pub const DEFAULT_GPU: &str = "small";
/// Largest `memory_limit`: the simulator's addresses are 32-bit.
pub const MAX_MEMORY_LIMIT: u64 = 1 << 32;

// ---------------------------------------------------------------------------------------------
// Errors

/// Why a kernel file could not be turned into a [`Program`].
#[derive(Debug, thiserror::Error)]
pub enum KernelFileError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{at}: not UTF-8 text")]
    NotUtf8 { file: String, at: String },
    #[error(
        "{file}: cannot tell the dialect from the file name; use the extension .sasm, .tgpu or \
         .hex, or {named}"
    )]
    UnknownDialect { file: String, named: DialectNamed },
    /// The rendered diagnostics, `FILE:LINE:COL: error: ...` with carets.
    #[error("{}", .errors.render(.file).trim_end())]
    Assemble { file: String, errors: AsmErrors },
}

/// Where the dialect of a kernel file can be named when its extension does not say: the
/// advice of [`KernelFileError::UnknownDialect`], in the words of where the file was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialectNamed {
    /// On the command line: `--dialect`.
    Flag,
    /// In a launch file: the launch's `"dialect"`.
    LaunchFile,
}

impl fmt::Display for DialectNamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Dialect::ALL.map(Dialect::name);
        match self {
            DialectNamed::Flag => write!(f, "give --dialect {}", names.join("|")),
            DialectNamed::LaunchFile => write!(
                f,
                "set \"dialect\" beside \"kernel\" (\"{}\")",
                names.join("\", \"")
            ),
        }
    }
}

/// Why a launch file (or a command-line launch) was rejected.
#[derive(Debug, thiserror::Error)]
pub enum LaunchFileError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// JSON syntax or shape, as serde reports it (with line and column), prefixed by the path of
    /// the field when there is one.
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: String,
        field: String,
        message: String,
    },
    #[error("{file}: {field}: {}", kernel_context(.source))]
    Kernel {
        file: String,
        field: String,
        #[source]
        source: KernelFileError,
    },
    /// The kernel file of a command-line launch (its messages name the file already).
    #[error(transparent)]
    KernelFile(#[from] KernelFileError),
}

fn kernel_context(e: &KernelFileError) -> String {
    match e {
        KernelFileError::Assemble { file, .. } => {
            format!("{file} does not assemble:\n{e}")
        }
        other => other.to_string(),
    }
}

impl LaunchFileError {
    /// The assembler's diagnostics, when the error is a kernel that does not assemble.
    pub fn asm_errors(&self) -> Option<(&str, &AsmErrors)> {
        match self {
            LaunchFileError::Kernel {
                source: KernelFileError::Assemble { file, errors },
                ..
            }
            | LaunchFileError::KernelFile(KernelFileError::Assemble { file, errors }) => {
                Some((file, errors))
            }
            _ => None,
        }
    }
}

fn invalid(file: &str, field: &str, message: impl Into<String>) -> LaunchFileError {
    LaunchFileError::Invalid {
        file: file.to_string(),
        field: field.to_string(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Scalars: words, f32 values, addresses, dimensions

/// Parses a 32-bit value as the launch file and `--param NAME=V` write it: a decimal integer
/// (negative ones as two's complement), `0x..` hex, `0b..` binary, or a float (stored as f32
/// bits; `nan`, `inf`, `-inf` too).
pub fn parse_word(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let radix = |prefix: [&str; 2], radix: u32| -> Option<Result<u64, String>> {
        let digits = body
            .strip_prefix(prefix[0])
            .or_else(|| body.strip_prefix(prefix[1]))?;
        Some(
            u64::from_str_radix(&digits.replace('_', ""), radix)
                .map_err(|_| format!("`{t}` is not a valid number")),
        )
    };
    let magnitude = radix(["0x", "0X"], 16)
        .or_else(|| radix(["0b", "0B"], 2))
        .or_else(|| {
            body.chars()
                .all(|c| c.is_ascii_digit())
                .then(|| {
                    body.parse::<u64>()
                        .map_err(|_| format!("`{t}` is not a valid number"))
                })
                .filter(|_| !body.is_empty())
        });
    match magnitude {
        Some(m) => {
            let m = m?;
            let v = if neg { -(m as i128) } else { m as i128 };
            word_from_i128(v)
        }
        None => match text_f32(t) {
            Some(f) => f.map(f32::to_bits),
            None => Err(format!(
                "`{t}` is not a number (integer, float, 0x.. hex or 0b.. binary)"
            )),
        },
    }
}

/// `v` as an f32; a finite number past f32's range is an error (it would become infinity
/// without a word), while `inf` written as such stays infinite.
fn to_f32(v: f64, shown: &dyn fmt::Display) -> Result<f32, String> {
    check_f32(v as f32, v.is_finite(), shown)
}

/// Text read as an f32 (rounded once, from the decimal), with [`to_f32`]'s range check.
fn text_f32(t: &str) -> Option<Result<f32, String>> {
    let lower = t.to_ascii_lowercase();
    let f = lower.parse::<f32>().ok()?;
    let finite = lower.parse::<f64>().is_ok_and(f64::is_finite);
    Some(check_f32(f, finite, &format_args!("`{t}`")))
}

fn check_f32(f: f32, written_finite: bool, shown: &dyn fmt::Display) -> Result<f32, String> {
    match f.is_infinite() && written_finite {
        true => Err(format!(
            "{shown} is out of f32 range (at most about ±3.4e38)"
        )),
        false => Ok(f),
    }
}

fn word_from_i128(v: i128) -> Result<u32, String> {
    if (i32::MIN as i128..=u32::MAX as i128).contains(&v) {
        Ok(v as u32)
    } else {
        Err(format!(
            "{v} does not fit in 32 bits (-2147483648..=4294967295)"
        ))
    }
}

/// Parses an address: decimal or `0x..` hex, a multiple of 4.
pub fn parse_address(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("`{t}` is not an address (a non-negative integer or 0x.. hex)"))?;
    check_address(v)
}

fn check_address(v: u64) -> Result<u64, String> {
    if v % 4 != 0 {
        return Err(format!("address {v} (0x{v:x}) is not a multiple of 4"));
    }
    if v >= MAX_MEMORY_LIMIT {
        return Err(format!("address 0x{v:x} is beyond the 4 GiB address space"));
    }
    Ok(v)
}

/// Parses `X`, `X,Y` or `X,Y,Z` (positive integers) as the command line writes a grid or block.
pub fn parse_dims(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let values: Option<Vec<u64>> = parts.iter().map(|p| p.parse::<u64>().ok()).collect();
    match values {
        Some(v) => dims_from(&v).ok_or(()),
        None => Err(()),
    }
    .map_err(|_| format!("expected 1 to 3 positive integers like 64 or 8,8 or 4,4,2, got `{text}`"))
}

fn dims_from(v: &[u64]) -> Option<Dim3> {
    if v.is_empty() || v.len() > 3 || v.iter().any(|&x| x == 0 || x > u32::MAX as u64) {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(1) as u32;
    Some(Dim3::new(at(0), at(1), at(2)))
}

/// A 32-bit value in a launch file (see [`parse_word`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Word(u32);

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Word;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer, a float (stored as f32 bits) or a string like \"0x1f\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Word, E> {
                word_from_i128(v as i128).map(Word).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Word, E> {
                word_from_i128(v as i128).map(Word).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Word, E> {
                to_f32(v, &format_args!("{v:e}"))
                    .map(|f| Word(f.to_bits()))
                    .map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Word, E> {
                parse_word(v).map(Word).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// An f32 value: any JSON number, or `"nan"`, `"inf"`, `"-inf"`, `"0x.."` (raw bits).
#[derive(Debug, Clone, Copy, PartialEq)]
struct F32(f32);

impl<'de> Deserialize<'de> for F32 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = F32;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or one of \"nan\", \"inf\", \"-inf\", \"0x..\" (f32 bits)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<F32, E> {
                Ok(F32(v as f32))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<F32, E> {
                Ok(F32(v as f32))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<F32, E> {
                to_f32(v, &format_args!("{v:e}"))
                    .map(F32)
                    .map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<F32, E> {
                let t = v.trim();
                if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    return u32::from_str_radix(hex, 16)
                        .map(|b| F32(f32::from_bits(b)))
                        .map_err(|_| E::custom(format!("`{t}` is not 32-bit hex")));
                }
                text_f32(t)
                    .ok_or_else(|| E::custom(format!("`{t}` is not a float")))?
                    .map(F32)
                    .map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A byte address: a non-negative integer or `"0x.."`, a multiple of 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Address(u64);

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Address;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a byte address: a non-negative integer or a string like \"0x100\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Address, E> {
                if v < 0 {
                    return Err(E::custom(format!("address {v} is negative")));
                }
                check_address(v as u64).map(Address).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Address, E> {
                check_address(v).map(Address).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Address, E> {
                parse_address(v).map(Address).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A grid or block shape: `n`, `[x]`, `[x, y]` or `[x, y, z]`, all positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dims(Dim3);

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let numbers: Option<Vec<u64>> = match &v {
            serde_json::Value::Number(n) => n.as_u64().map(|x| vec![x]),
            serde_json::Value::Array(items) => items.iter().map(|i| i.as_u64()).collect(),
            _ => None,
        };
        numbers
            .as_deref()
            .and_then(dims_from)
            .map(Dims)
            .ok_or_else(|| {
                de::Error::custom(format!(
                    "expected 1 to 3 positive integers (n, [x], [x, y] or [x, y, z]), got {v}"
                ))
            })
    }
}

/// Parameters by name (in the order written) or by position.
#[derive(Debug, Clone, PartialEq)]
enum ParamsSpec {
    Named(Vec<(String, u32)>),
    Positional(Vec<u32>),
}

impl<'de> Deserialize<'de> for ParamsSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ParamsSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object {\"name\": value} or a list of values in .param order")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamsSpec, A::Error> {
                let mut out: Vec<(String, u32)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Word>()? {
                    if out.iter().any(|(n, _)| *n == k) {
                        return Err(de::Error::custom(format!("parameter `{k}` given twice")));
                    }
                    out.push((k, v.0));
                }
                Ok(ParamsSpec::Named(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamsSpec, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Word>()? {
                    out.push(v.0);
                }
                Ok(ParamsSpec::Positional(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `start`/`step` of a linear fill: integer or float.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int(i64),
    Float(f64),
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                i64::try_from(v)
                    .map(Number::Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number::Float(v))
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// The raw file, as serde reads it

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a launch file: a JSON object with a `kernel` or `launches`"
)]
struct RawFile {
    description: Option<String>,
    kernel: Option<String>,
    dialect: Option<Dialect>,
    grid: Option<Dims>,
    block: Option<Dims>,
    params: Option<ParamsSpec>,
    launches: Option<Vec<RawLaunch>>,
    gpu: Option<String>,
    #[serde(default)]
    memory: Vec<RawRegion>,
    #[serde(default)]
    expect: Vec<RawRegion>,
    memory_limit: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a launch: {\"kernel\", \"grid\", \"block\", ...}"
)]
struct RawLaunch {
    kernel: Option<String>,
    dialect: Option<Dialect>,
    grid: Option<Dims>,
    block: Option<Dims>,
    params: Option<ParamsSpec>,
    #[serde(default)]
    stream: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FillKind {
    Linear,
    Constant,
    Random,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a memory region: {\"address\", and words, f32, fill or file}"
)]
struct RawRegion {
    address: Option<Address>,
    words: Option<Vec<Word>>,
    f32: Option<Vec<F32>>,
    file: Option<String>,
    fill: Option<FillKind>,
    count: Option<u64>,
    start: Option<Number>,
    step: Option<Number>,
    value: Option<Word>,
    seed: Option<u64>,
    min: Option<i64>,
    max: Option<i64>,
    tolerance: Option<f64>,
}

/// Reads JSON with serde, reporting the path of the offending field and serde's line:column.
/// `what` names the expected top-level shape; `open` is its first character (`{` or `[`).
fn from_json<T: de::DeserializeOwned>(
    file: &str,
    text: &str,
    what: &str,
    open: char,
) -> Result<T, LaunchFileError> {
    // Editors on Windows start a UTF-8 file with a byte-order mark; JSON has no place for it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // serde would read a struct from a JSON list, too; insist on the documented shape.
    if let Some(first) = text.trim_start().chars().next() {
        if first != open && matches!(first, '{' | '[') {
            return Err(LaunchFileError::Syntax {
                file: file.to_string(),
                message: format!("expected {what}"),
            });
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = result.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = json_message(&inner);
        let message = if path == "." || path.is_empty() || inner.is_syntax() || inner.is_eof() {
            message
        } else {
            format!("{path}: {message}")
        };
        LaunchFileError::Syntax {
            file: json_location(file, &inner),
            message,
        }
    })?;
    de.end().map_err(|e| LaunchFileError::Syntax {
        file: json_location(file, &e),
        message: json_message(&e),
    })?;
    Ok(value)
}

/// `FILE:LINE:COL` of a JSON error, as the assemblers place theirs (`FILE` alone when serde
/// knows no position).
fn json_location(file: &str, e: &serde_json::Error) -> String {
    match e.line() {
        0 => file.to_string(),
        line => format!("{file}:{line}:{}", e.column()),
    }
}

/// serde's message without the position [`json_location`] gives, and for a misspelt field or
/// value the names it may have meant.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let text = text.strip_suffix(&suffix).unwrap_or(&text);
    // "unknown field `blocks`, expected one of `grid`, `block`, ..." (or "unknown variant").
    let quoted = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let unknown = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| text.split_once(p).map(|(_, rest)| rest));
    if let Some(rest) = unknown {
        if let (Some((word, _)), Some((_, expected))) =
            (rest.split_once('`'), rest.split_once("expected"))
        {
            let names = quoted(expected);
            let near = asm::diag::nearest(word, names.iter().map(String::as_str));
            if let Some((first, _)) = text.split_once(", expected") {
                if !near.is_empty() {
                    let near: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
                    return format!(
                        "{first} (did you mean {}?); expected{}",
                        near.join(" or "),
                        &text[first.len() + ", expected".len()..]
                    );
                }
            }
        }
    }
    text.to_string()
}

// ---------------------------------------------------------------------------------------------
// The loaded launch file

/// The values of one memory region.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Words(Vec<u32>),
    F32(Vec<f32>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Words(w) => w.len(),
            Values::F32(f) => f.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The 32-bit words these values put in memory.
    pub fn to_words(&self) -> Vec<u32> {
        match self {
            Values::Words(w) => w.clone(),
            Values::F32(f) => f.iter().map(|x| x.to_bits()).collect(),
        }
    }
}

/// Consecutive words at a byte address.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub address: u64,
    pub values: Values,
    /// Where it was written, for messages: `memory[2]`, `expect[0]`.
    pub field: String,
}

/// A region memory must hold after the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    pub region: Region,
    /// Absolute tolerance for f32 values (0: exact, NaN matches NaN).
    pub tolerance: f64,
}

/// One launch of a launch file.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The kernel file, as the launch file's directory joined with its `kernel` field.
    pub kernel_path: PathBuf,
    pub dialect: Dialect,
    pub launch: KernelLaunch,
}

/// A launch file, validated: programs assembled, parameters resolved, memory initialised.
#[derive(Debug, Clone)]
pub struct LaunchFile {
    /// The file it came from (the kernel file for a command-line launch).
    pub path: PathBuf,
    pub description: Option<String>,
    /// The GPU preset named by `gpu`, stored for the timing simulator.
    pub gpu: Option<String>,
    pub launches: Vec<Launch>,
    pub memory: Vec<Region>,
    pub expect: Vec<Expectation>,
    pub memory_limit: u64,
    initial: GlobalMemory,
}

/// An expected word that memory does not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub address: u64,
    pub expected: Expected,
    pub got: u32,
    /// The `expect[i]` entry it belongs to.
    pub field: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expected {
    Word(u32),
    F32 { value: f32, tolerance: f64 },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: 0x{:08x} ({}): ",
            self.field, self.address, self.address
        )?;
        match self.expected {
            Expected::Word(w) => write!(
                f,
                "expected {} (0x{w:08x}), got {} (0x{:08x})",
                w as i32, self.got as i32, self.got
            ),
            Expected::F32 { value, tolerance } => {
                let got = f32::from_bits(self.got);
                write!(f, "expected {value:?}")?;
                if tolerance > 0.0 {
                    write!(f, " ± {tolerance:e}")?;
                }
                write!(f, ", got {got:?} (0x{:08x})", self.got)
            }
        }
    }
}

/// The result of comparing memory with a launch file's `expect`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckReport {
    /// Expected words that matched.
    pub passed: u64,
    /// Expected words that did not (or could not be read).
    pub failed: u64,
    /// The first [`CheckReport::KEPT`] mismatches, in `expect` order (`failed` counts all).
    pub mismatches: Vec<Mismatch>,
}

impl CheckReport {
    /// Mismatches kept for display: a failing check of a 256 MiB region would otherwise hold
    /// tens of millions of them.
    pub const KEPT: usize = 1000;

    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

/// What running every launch of a launch file produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub memory: GlobalMemory,
    /// Statistics of each launch, in launch order.
    pub launches: Vec<FunctionalStats>,
    pub total: FunctionalStats,
}

/// What running every launch of a launch file on the timing simulator produced.
#[derive(Debug, Clone)]
pub struct TimingOutcome {
    pub memory: GlobalMemory,
    pub report: SimReport,
}

/// Loads a GPU config from `spec`: a preset name, or a JSON config file (a path ending in
/// `.json`, or any existing file), relative to `base` when not absolute. The error lists the
/// presets.
pub fn load_gpu_config(spec: &str, base: &Path) -> Result<GpuConfig, String> {
    if GpuConfig::PRESETS.contains(&spec) {
        return GpuConfig::preset(spec).map_err(|e| e.to_string());
    }
    let path = base.join(spec);
    let is_file = spec.to_ascii_lowercase().ends_with(".json") || path.is_file();
    if !is_file {
        let near = asm::diag::nearest(spec, GpuConfig::PRESETS.iter().copied());
        let guess = match near.first() {
            Some(name) => format!(" (did you mean `{name}`?)"),
            None => String::new(),
        };
        return Err(format!(
            "unknown GPU `{spec}`{guess}: expected a preset ({}) or a JSON config file",
            GpuConfig::PRESETS.join(", ")
        ));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    GpuConfig::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `LINE:COL` (1-based, columns in bytes) of the first byte that is not UTF-8.
fn first_bad_byte(e: &std::string::FromUtf8Error) -> String {
    let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
    let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{col}")
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

fn base_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Reads and assembles a kernel file; `dialect` overrides the one the extension implies. A
/// file with neither is an error whose advice names `--dialect` (a launch file's caller says
/// `"dialect"` instead).
pub fn assemble_file(
    path: &Path,
    dialect: Option<Dialect>,
) -> Result<(Program, Dialect), KernelFileError> {
    let file = display(path);
    let dialect = dialect
        .or_else(|| Dialect::from_path(path))
        .ok_or_else(|| KernelFileError::UnknownDialect {
            file: file.clone(),
            named: DialectNamed::Flag,
        })?;
    let bytes = std::fs::read(path).map_err(|source| KernelFileError::Read {
        file: file.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| KernelFileError::NotUtf8 {
        file: file.clone(),
        at: first_bad_byte(&e),
    })?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("kernel");
    let program = asm::assemble(dialect, &text, stem)
        .map_err(|errors| KernelFileError::Assemble { file, errors })?;
    Ok((program, dialect))
}

/// Turns `params` into one word per `.param`, naming `field` in errors.
fn resolve_params(
    program: &Program,
    spec: Option<ParamsSpec>,
    file: &str,
    field: &str,
) -> Result<Vec<u32>, LaunchFileError> {
    let declared = || {
        if program.params.is_empty() {
            format!("kernel `{}` has no parameters", program.name)
        } else {
            format!(
                "kernel `{}` has .param {}",
                program.name,
                program.params.join(", ")
            )
        }
    };
    match spec {
        Some(ParamsSpec::Positional(values)) => {
            if values.len() != program.params.len() {
                return Err(invalid(
                    file,
                    field,
                    format!(
                        "{} given, but {}",
                        crate::words::count(values.len() as u64, "value", "values"),
                        declared()
                    ),
                ));
            }
            Ok(values)
        }
        named => {
            let given = match named {
                Some(ParamsSpec::Named(v)) => v,
                _ => Vec::new(),
            };
            for (name, _) in &given {
                if !program.params.contains(name) {
                    return Err(invalid(
                        file,
                        field,
                        format!("unknown parameter `{name}`; {}", declared()),
                    ));
                }
            }
            let missing: Vec<&str> = program
                .params
                .iter()
                .filter(|p| !given.iter().any(|(n, _)| n == *p))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(invalid(
                    file,
                    field,
                    format!(
                        "missing parameter{} {}; {}",
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        declared()
                    ),
                ));
            }
            Ok(program
                .params
                .iter()
                .map(|p| given.iter().find(|(n, _)| n == p).map_or(0, |(_, v)| *v))
                .collect())
        }
    }
}

/// Converts one raw memory/expect entry into a region, reading files relative to `dir`.
fn region(
    raw: RawRegion,
    file: &str,
    field: &str,
    dir: &Path,
    is_expect: bool,
    limit: u64,
) -> Result<(Region, f64), LaunchFileError> {
    let err = |sub: &str, message: String| {
        let f = if sub.is_empty() {
            field.to_string()
        } else {
            format!("{field}.{sub}")
        };
        invalid(file, &f, message)
    };
    let address = raw
        .address
        .ok_or_else(|| err("", "missing field `address`".into()))?
        .0;
    let sources: Vec<&str> = [
        ("words", raw.words.is_some()),
        ("f32", raw.f32.is_some()),
        ("file", raw.file.is_some()),
        ("fill", raw.fill.is_some()),
    ]
    .into_iter()
    .filter(|(_, present)| *present)
    .map(|(n, _)| n)
    .collect();
    match sources.len() {
        0 => {
            return Err(err(
                "",
                "expected one of `words`, `f32`, `fill` or `file`".into(),
            ))
        }
        1 => {}
        _ => {
            return Err(err(
                "",
                format!(
                    "`{}` and `{}` cannot be combined; use one per entry",
                    sources[0], sources[1]
                ),
            ))
        }
    }
    // Fields that only some forms take.
    let fill = raw.fill;
    let only = |name: &str, present: bool, allowed: &[FillKind], what: &str| {
        if present && !fill.is_some_and(|f| allowed.contains(&f)) {
            Err(err(name, format!("only used with {what}")))
        } else {
            Ok(())
        }
    };
    use FillKind::*;
    only(
        "count",
        raw.count.is_some(),
        &[Linear, Constant, Random],
        "`fill`",
    )?;
    only(
        "start",
        raw.start.is_some(),
        &[Linear],
        "\"fill\": \"linear\"",
    )?;
    only(
        "step",
        raw.step.is_some(),
        &[Linear],
        "\"fill\": \"linear\"",
    )?;
    only(
        "value",
        raw.value.is_some(),
        &[Constant],
        "\"fill\": \"constant\"",
    )?;
    only(
        "seed",
        raw.seed.is_some(),
        &[Random],
        "\"fill\": \"random\"",
    )?;
    only("min", raw.min.is_some(), &[Random], "\"fill\": \"random\"")?;
    only("max", raw.max.is_some(), &[Random], "\"fill\": \"random\"")?;

    let count = |raw_count: Option<u64>| -> Result<u64, LaunchFileError> {
        let c = raw_count.ok_or_else(|| err("", "a `fill` needs `count` (words)".into()))?;
        if address + c.saturating_mul(4) > limit {
            return Err(err(
                "count",
                format!(
                    "{} at 0x{address:x} would pass the memory limit of 0x{limit:x} bytes",
                    crate::words::count(c, "word", "words")
                ),
            ));
        }
        Ok(c)
    };
    let values = if let Some(words) = raw.words {
        Values::Words(words.into_iter().map(|w| w.0).collect())
    } else if let Some(floats) = raw.f32 {
        Values::F32(floats.into_iter().map(|f| f.0).collect())
    } else if let Some(path) = raw.file {
        let full = dir.join(&path);
        // At most the bytes the memory can hold past `address`, and one more to tell a file
        // that is too large (or endless, as /dev/zero) without reading all of it.
        let room = limit.saturating_sub(address);
        let mut bytes = Vec::new();
        std::fs::File::open(&full)
            .and_then(|f| f.take(room.saturating_add(1)).read_to_end(&mut bytes))
            .map_err(|e| err("file", format!("cannot read {}: {e}", display(&full))))?;
        if bytes.len() as u64 > room {
            return Err(err(
                "file",
                format!(
                    "{} at 0x{address:x} would pass the memory limit of 0x{limit:x} bytes",
                    display(&full)
                ),
            ));
        }
        if bytes.len() % 4 != 0 {
            return Err(err(
                "file",
                format!(
                    "{} has {} bytes, not a whole number of 32-bit words",
                    display(&full),
                    bytes.len()
                ),
            ));
        }
        Values::Words(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    } else {
        match fill {
            Some(Linear) => {
                let n = count(raw.count)?;
                let start = raw.start.unwrap_or(Number::Int(0));
                let step = raw.step.unwrap_or(Number::Int(1));
                match (start, step) {
                    (Number::Int(s), Number::Int(d)) => {
                        word_from_i128(s as i128).map_err(|m| err("start", m))?;
                        Values::Words(
                            (0..n)
                                .map(|i| s.wrapping_add(d.wrapping_mul(i as i64)) as u32)
                                .collect(),
                        )
                    }
                    _ => {
                        let as_f = |x: Number| match x {
                            Number::Int(i) => i as f64,
                            Number::Float(f) => f,
                        };
                        let (s, d) = (as_f(start), as_f(step));
                        Values::F32((0..n).map(|i| (s + d * i as f64) as f32).collect())
                    }
                }
            }
            Some(Constant) => {
                let n = count(raw.count)?;
                let v = raw
                    .value
                    .ok_or_else(|| err("", "a constant fill needs `value`".into()))?;
                Values::Words(vec![v.0; n as usize])
            }
            Some(Random) => {
                let n = count(raw.count)?;
                let min = raw.min.unwrap_or(0);
                let max = raw.max.unwrap_or(u32::MAX as i64);
                for (name, v) in [("min", min), ("max", max)] {
                    word_from_i128(v as i128).map_err(|m| err(name, m))?;
                }
                if min > max {
                    return Err(err("", format!("`min` {min} is greater than `max` {max}")));
                }
                let mut rng = StdRng::seed_from_u64(raw.seed.unwrap_or(0));
                Values::Words((0..n).map(|_| rng.gen_range(min..=max) as u32).collect())
            }
            None => Values::Words(Vec::new()),
        }
    };
    if address + 4 * values.len() as u64 > limit {
        return Err(err(
            "",
            format!(
                "{} at 0x{address:x} would pass the memory limit of 0x{limit:x} bytes",
                crate::words::count(values.len() as u64, "word", "words")
            ),
        ));
    }
    let tolerance = match raw.tolerance {
        None => 0.0,
        Some(_) if !is_expect => {
            return Err(err("tolerance", "only used in `expect`".into()));
        }
        Some(_) if !matches!(values, Values::F32(_)) => {
            return Err(err(
                "tolerance",
                "only applies to f32 values (`f32` or a float linear fill)".into(),
            ));
        }
        Some(t) if t.is_nan() || t < 0.0 => {
            return Err(err("tolerance", format!("must be >= 0, got {t}")));
        }
        Some(t) => t,
    };
    Ok((
        Region {
            address,
            values,
            field: field.to_string(),
        },
        tolerance,
    ))
}

fn regions(
    raw: Vec<RawRegion>,
    file: &str,
    name: &str,
    dir: &Path,
    is_expect: bool,
    limit: u64,
) -> Result<Vec<(Region, f64)>, LaunchFileError> {
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| region(r, file, &format!("{name}[{i}]"), dir, is_expect, limit))
        .collect()
}

/// Parses a `--mem` file: a JSON list of memory initialisers (paths relative to that file).
pub fn load_memory_file(path: &Path, limit: u64) -> Result<Vec<Region>, LaunchFileError> {
    let file = display(path);
    let text = std::fs::read_to_string(path).map_err(|source| LaunchFileError::Read {
        file: file.clone(),
        source,
    })?;
    let raw: Vec<RawRegion> = from_json(&file, &text, "a JSON list of memory initialisers", '[')?;
    Ok(
        regions(raw, &file, "memory", &base_dir(path), false, limit)?
            .into_iter()
            .map(|(r, _)| r)
            .collect(),
    )
}

fn initial_memory(
    regions: &[Region],
    limit: u64,
    file: &str,
) -> Result<GlobalMemory, LaunchFileError> {
    let mut memory = GlobalMemory::new(limit);
    for r in regions {
        memory
            .write_words(r.address, &r.values.to_words())
            .map_err(|e| invalid(file, &r.field, e.to_string()))?;
    }
    Ok(memory)
}

fn check_limit(limit: Option<u64>, file: &str) -> Result<u64, LaunchFileError> {
    match limit {
        None => Ok(DEFAULT_LIMIT_BYTES),
        Some(l) if l == 0 || l % 4 != 0 || l > MAX_MEMORY_LIMIT => Err(invalid(
            file,
            "memory_limit",
            format!(
                "must be a positive multiple of 4 of at most {MAX_MEMORY_LIMIT} bytes, got {l}"
            ),
        )),
        Some(l) => Ok(l),
    }
}

/// A launch as the command line writes it: `run KERNEL --grid ... --block ... --param N=V`.
#[derive(Debug, Clone)]
pub struct CommandLineLaunch {
    pub kernel: PathBuf,
    pub dialect: Option<Dialect>,
    /// Parsed as the command line is ([`parse_dims`]).
    pub grid: Dim3,
    pub block: Dim3,
    /// `NAME=VALUE` each.
    pub params: Vec<String>,
    /// A JSON list of memory initialisers.
    pub mem: Option<PathBuf>,
    pub gpu: Option<String>,
}

impl LaunchFile {
    /// Reads, parses and validates a launch file.
    pub fn load(path: &Path) -> Result<LaunchFile, LaunchFileError> {
        let file = display(path);
        let bytes = std::fs::read(path).map_err(|source| LaunchFileError::Read {
            file: file.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| LaunchFileError::Syntax {
            file: file.clone(),
            message: format!("{}: not UTF-8 text", first_bad_byte(&e)),
        })?;
        LaunchFile::parse(path, &text)
    }

    /// Parses launch-file text; `path` names it in errors and anchors relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<LaunchFile, LaunchFileError> {
        let file = display(path);
        let dir = base_dir(path);
        let raw: RawFile = from_json(
            &file,
            text,
            "a JSON object with `kernel` or `launches`",
            '{',
        )?;
        let limit = check_limit(raw.memory_limit, &file)?;

        let single = [
            ("kernel", raw.kernel.is_some()),
            ("dialect", raw.dialect.is_some()),
            ("grid", raw.grid.is_some()),
            ("block", raw.block.is_some()),
            ("params", raw.params.is_some()),
        ];
        let raw_launches: Vec<(String, RawLaunch)> = match raw.launches {
            Some(list) => {
                if let Some((name, _)) = single.iter().find(|(_, present)| *present) {
                    return Err(invalid(
                        &file,
                        name,
                        "cannot be combined with `launches`; put it in each launch",
                    ));
                }
                if list.is_empty() {
                    return Err(invalid(&file, "launches", "the list is empty"));
                }
                list.into_iter()
                    .enumerate()
                    .map(|(i, l)| (format!("launches[{i}]."), l))
                    .collect()
            }
            None => vec![(
                String::new(),
                RawLaunch {
                    kernel: raw.kernel,
                    dialect: raw.dialect,
                    grid: raw.grid,
                    block: raw.block,
                    params: raw.params,
                    stream: 0,
                },
            )],
        };

        let mut launches = Vec::with_capacity(raw_launches.len());
        for (prefix, l) in raw_launches {
            let field = |name: &str| format!("{prefix}{name}");
            let kernel = l.kernel.ok_or_else(|| {
                let hint = if prefix.is_empty() {
                    " (or a `launches` list)"
                } else {
                    ""
                };
                invalid(
                    &file,
                    &field("kernel"),
                    format!("missing: the path of the kernel file, relative to this file{hint}"),
                )
            })?;
            let kernel_path = dir.join(&kernel);
            let (program, dialect) = assemble_file(&kernel_path, l.dialect).map_err(|source| {
                let source = match source {
                    // (Here the dialect is named in this file, not by a flag.)
                    KernelFileError::UnknownDialect { file, .. } => {
                        KernelFileError::UnknownDialect {
                            file,
                            named: DialectNamed::LaunchFile,
                        }
                    }
                    other => other,
                };
                LaunchFileError::Kernel {
                    file: file.clone(),
                    field: field("kernel"),
                    source,
                }
            })?;
            let dims = |d: Option<Dims>, name: &str| {
                d.map(|d| d.0).ok_or_else(|| {
                    invalid(
                        &file,
                        &field(name),
                        "missing: 1 to 3 positive integers (n, [x], [x, y] or [x, y, z])",
                    )
                })
            };
            let grid = dims(l.grid, "grid")?;
            let block = dims(l.block, "block")?;
            let params = resolve_params(&program, l.params, &file, &field("params"))?;
            launches.push(Launch {
                kernel_path,
                dialect,
                launch: KernelLaunch {
                    program: Arc::new(program),
                    grid,
                    block,
                    params,
                    stream: l.stream,
                },
            });
        }

        let memory: Vec<Region> = regions(raw.memory, &file, "memory", &dir, false, limit)?
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        let expect = regions(raw.expect, &file, "expect", &dir, true, limit)?
            .into_iter()
            .map(|(region, tolerance)| Expectation { region, tolerance })
            .collect();
        let initial = initial_memory(&memory, limit, &file)?;
        Ok(LaunchFile {
            path: path.to_path_buf(),
            description: raw.description,
            gpu: raw.gpu,
            launches,
            memory,
            expect,
            memory_limit: limit,
            initial,
        })
    }

    /// A single launch from command-line arguments; errors name the flag (`--grid`, ...).
    pub fn from_command_line(cl: &CommandLineLaunch) -> Result<LaunchFile, LaunchFileError> {
        let file = display(&cl.kernel);
        let (program, dialect) = assemble_file(&cl.kernel, cl.dialect)?;
        let (grid, block) = (cl.grid, cl.block);
        let mut named = Vec::new();
        for p in &cl.params {
            let (name, value) = p.split_once('=').ok_or_else(|| {
                invalid(&file, "--param", format!("expected NAME=VALUE, got `{p}`"))
            })?;
            let name = name.trim();
            let value =
                parse_word(value).map_err(|m| invalid(&file, &format!("--param {name}"), m))?;
            if named.iter().any(|(n, _)| n == name) {
                return Err(invalid(
                    &file,
                    "--param",
                    format!("parameter `{name}` given twice"),
                ));
            }
            named.push((name.to_string(), value));
        }
        let params = resolve_params(&program, Some(ParamsSpec::Named(named)), &file, "--param")?;
        let limit = DEFAULT_LIMIT_BYTES;
        let memory = match &cl.mem {
            Some(mem) => load_memory_file(mem, limit)?,
            None => Vec::new(),
        };
        let initial = initial_memory(&memory, limit, &file)?;
        Ok(LaunchFile {
            path: cl.kernel.clone(),
            description: None,
            gpu: cl.gpu.clone(),
            launches: vec![Launch {
                kernel_path: cl.kernel.clone(),
                dialect,
                launch: KernelLaunch {
                    program: Arc::new(program),
                    grid,
                    block,
                    params,
                    stream: 0,
                },
            }],
            memory,
            expect: Vec::new(),
            memory_limit: limit,
            initial,
        })
    }

    /// Global memory as the `memory` initialisers leave it, before any launch.
    pub fn initial_memory(&self) -> GlobalMemory {
        self.initial.clone()
    }

    /// The warp size the functional runner should use: 4 for the `"tiny"` preset, else 32.
    pub fn warp_size(&self) -> u32 {
        match self.gpu.as_deref() {
            Some("tiny") => TINY_WARP_SIZE,
            _ => DEFAULT_WARP_SIZE,
        }
    }

    /// The GPU the launch file asks for (its `gpu` field, else [`DEFAULT_GPU`]); a config file
    /// is relative to the launch file. The error names the file and the `gpu` field.
    pub fn gpu_config(&self) -> Result<GpuConfig, LaunchFileError> {
        let spec = self.gpu.as_deref().unwrap_or(DEFAULT_GPU);
        load_gpu_config(spec, &base_dir(&self.path))
            .map_err(|message| invalid(&display(&self.path), "gpu", message))
    }

    /// The kernel launches, in launch order.
    pub fn kernel_launches(&self) -> Vec<KernelLaunch> {
        self.launches.iter().map(|l| l.launch.clone()).collect()
    }

    /// Each launch's kernel file as the header names it (`kernels/vecadd.sasm`: the launch
    /// file's directory joined with its `kernel`, or the path given on the command line),
    /// empty for tiny-gpu hex, which has no text lines to point into.
    pub fn asm_files(&self) -> Vec<String> {
        self.launches
            .iter()
            .map(|l| match l.dialect {
                Dialect::Native | Dialect::Tinygpu => display(&l.kernel_path),
                Dialect::TinygpuHex => String::new(),
            })
            .collect()
    }

    /// Records every launch on the timing simulator into a trace at `path`, as
    /// [`trace::record`] does, starting from [`initial_memory`](Self::initial_memory), with
    /// the header naming each kernel's assembly file beside its lines; returns the outcome
    /// and the memory the run left.
    pub fn record(
        &self,
        config: &GpuConfig,
        options: SimOptions,
        path: &Path,
        format: TraceFormat,
        verbosity: u8,
    ) -> Result<(RecordOutcome, GlobalMemory), TraceError> {
        let launches = self.kernel_launches();
        let prepared = gpu::prepare(config, &launches)?;
        let mut header = TraceHeader::new(config, &prepared, 0, verbosity);
        header.name_asm_files(&self.asm_files());
        let mut memory = self.initial_memory();
        let outcome = trace::recorder::record_with_source(
            config,
            &launches,
            &mut memory,
            options,
            path,
            format,
            &header,
            &mut NoReplay,
        )?;
        Ok((outcome, memory))
    }

    /// Runs every launch on the timing simulator (streams as the launches say), starting from
    /// [`initial_memory`](Self::initial_memory).
    pub fn run_timing<O: Observer>(
        &self,
        config: &GpuConfig,
        options: SimOptions,
        observer: &mut O,
    ) -> Result<TimingOutcome, SimError> {
        let mut memory = self.initial_memory();
        let report = gpu::simulate(
            config,
            &self.kernel_launches(),
            &mut memory,
            options,
            observer,
        )?;
        Ok(TimingOutcome { memory, report })
    }

    /// Runs every launch in order on the functional simulator, starting from
    /// [`initial_memory`](Self::initial_memory).
    pub fn run_functional(&self, options: FunctionalOptions) -> Result<RunOutcome, RunError> {
        let mut memory = self.initial_memory();
        let mut launches = Vec::with_capacity(self.launches.len());
        let mut total = FunctionalStats::default();
        for l in &self.launches {
            let stats = functional::run(&l.launch, &mut memory, options)?;
            total.warp_instructions += stats.warp_instructions;
            total.thread_instructions += stats.thread_instructions;
            total.blocks += stats.blocks;
            total.warps += stats.warps;
            launches.push(stats);
        }
        Ok(RunOutcome {
            memory,
            launches,
            total,
        })
    }

    /// Compares `memory` with every `expect` entry.
    pub fn check(&self, memory: &GlobalMemory) -> CheckReport {
        let mut report = CheckReport::default();
        for e in &self.expect {
            let r = &e.region;
            let n = r.values.len();
            for i in 0..n {
                let address = r.address + 4 * i as u64;
                let expected = match &r.values {
                    Values::Words(w) => Expected::Word(w[i]),
                    Values::F32(f) => Expected::F32 {
                        value: f[i],
                        tolerance: e.tolerance,
                    },
                };
                // Regions were checked against the limit, so reads succeed; a failed read still
                // counts as a mismatch rather than a panic.
                let got = memory.read(address).ok();
                let pass = match (expected, got) {
                    (_, None) => false,
                    (Expected::Word(w), Some(g)) => w == g,
                    (Expected::F32 { value, tolerance }, Some(g)) => {
                        let g = f32::from_bits(g);
                        (value.is_nan() && g.is_nan())
                            || ((g as f64) - (value as f64)).abs() <= tolerance
                    }
                };
                if pass {
                    report.passed += 1;
                } else {
                    report.failed += 1;
                    if report.mismatches.len() == CheckReport::KEPT {
                        continue;
                    }
                    report.mismatches.push(Mismatch {
                        address,
                        expected,
                        got: got.unwrap_or(0),
                        field: r.field.clone(),
                    });
                }
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_parse_every_spelling() {
        assert_eq!(parse_word("12"), Ok(12));
        assert_eq!(parse_word("-1"), Ok(u32::MAX));
        assert_eq!(parse_word("0x1F"), Ok(31));
        assert_eq!(parse_word("0b101"), Ok(5));
        assert_eq!(parse_word("1.5"), Ok(1.5f32.to_bits()));
        assert_eq!(parse_word("-2.0"), Ok((-2.0f32).to_bits()));
        assert!(parse_word("nan").is_ok());
        assert_eq!(parse_word("-inf"), Ok(f32::NEG_INFINITY.to_bits()));
        assert_eq!(
            parse_word("1e40"),
            Err("`1e40` is out of f32 range (at most about ±3.4e38)".into())
        );
        assert!(parse_word("4294967296").is_err());
        assert!(parse_word("-2147483649").is_err());
        assert!(parse_word("abc").is_err());
        assert!(parse_word("").is_err());
        assert!(parse_word("0x").is_err());
    }

    #[test]
    fn dims_and_addresses() {
        assert_eq!(parse_dims("8"), Ok(Dim3::new(8, 1, 1)));
        assert_eq!(parse_dims("8,4"), Ok(Dim3::new(8, 4, 1)));
        assert_eq!(parse_dims("2, 3, 4"), Ok(Dim3::new(2, 3, 4)));
        assert!(parse_dims("0").is_err());
        assert!(parse_dims("1,2,3,4").is_err());
        assert!(parse_dims("x").is_err());
        assert_eq!(parse_address("0x100"), Ok(256));
        assert_eq!(parse_address("96"), Ok(96));
        assert!(parse_address("3").is_err());
        assert!(parse_address("-4").is_err());
    }

    fn raw_regions(json: &str, is_expect: bool) -> Result<Vec<(Region, f64)>, LaunchFileError> {
        let raw: Vec<RawRegion> = from_json("t.json", json, "a list", '[')?;
        regions(raw, "t.json", "memory", Path::new("."), is_expect, 1 << 20)
    }

    #[test]
    fn fills() {
        let r = raw_regions(
            r#"[{"address": 0, "fill": "linear", "start": 10, "step": 10, "count": 3},
                {"address": 16, "fill": "linear", "start": 0.5, "count": 2},
                {"address": 32, "fill": "constant", "value": -1, "count": 2},
                {"address": 48, "words": [1, "0x10", 2.0]},
                {"address": "0x40", "f32": [1, "inf"]}]"#,
            false,
        )
        .unwrap();
        assert_eq!(r[0].0.values, Values::Words(vec![10, 20, 30]));
        assert_eq!(r[1].0.values, Values::F32(vec![0.5, 1.5]));
        assert_eq!(r[2].0.values, Values::Words(vec![u32::MAX; 2]));
        assert_eq!(r[3].0.values, Values::Words(vec![1, 16, 2.0f32.to_bits()]));
        assert_eq!(r[4].0.address, 64);
        assert_eq!(r[4].0.values, Values::F32(vec![1.0, f32::INFINITY]));
    }

    #[test]
    fn random_fill_is_deterministic_and_in_range() {
        let json =
            r#"[{"address": 0, "fill": "random", "seed": 7, "min": -5, "max": 5, "count": 100}]"#;
        let a = raw_regions(json, false).unwrap();
        let b = raw_regions(json, false).unwrap();
        assert_eq!(a, b);
        let Values::Words(w) = &a[0].0.values else {
            panic!("words expected")
        };
        assert!(w.iter().all(|&x| (-5..=5).contains(&(x as i32))));
    }

    #[test]
    fn region_errors_name_the_field() {
        let msg = |json: &str| raw_regions(json, false).unwrap_err().to_string();
        assert!(msg(r#"[{"address": 0}]"#).contains("memory[0]: expected one of"));
        assert!(msg(r#"[{"address": 0, "words": [1], "fill": "linear"}]"#)
            .contains("cannot be combined"));
        assert!(
            msg(r#"[{"address": 0, "fill": "linear", "seed": 1, "count": 1}]"#)
                .contains("memory[0].seed")
        );
        assert!(msg(r#"[{"address": 2, "words": [1]}]"#).contains("multiple of 4"));
        assert!(msg(r#"[{"address": 0, "wrods": [1]}]"#).contains("unknown field `wrods`"));
        assert!(
            msg(r#"[{"address": 0, "fill": "linear", "count": 1000000}]"#)
                .contains("memory[0].count")
        );
        assert!(msg(r#"[{"address": 0, "f32": [1.0], "tolerance": 0.1}]"#)
            .contains("memory[0].tolerance"));
        assert!(msg(r#"[{"address": 0, "words": [1, 99999999999]}]"#)
            .contains("[0].words[1]: 99999999999 does not fit in 32 bits"));
    }

    #[test]
    fn text_that_is_not_utf8_is_located() {
        let dir = std::env::temp_dir().join(format!("warpscope-utf8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kernel = dir.join("bad.sasm");
        std::fs::write(&kernel, b".kernel k\n  EXIT \xff\n").unwrap();
        let e = assemble_file(&kernel, None).unwrap_err().to_string();
        assert!(e.ends_with("bad.sasm:2:8: not UTF-8 text"), "{e}");
        let launch = dir.join("bad.json");
        std::fs::write(&launch, b"{\xfe}").unwrap();
        let e = LaunchFile::load(&launch).unwrap_err().to_string();
        assert!(e.contains("1:2: not UTF-8 text"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
