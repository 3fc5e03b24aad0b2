//! Assembly front ends. Each turns kernel text into the one [`crate::isa::Program`] type and
//! reports every error it finds as a located [`Diagnostic`].

pub mod control_pass;
pub mod diag;
pub mod native;
pub mod tinygpu;

pub use diag::{AsmErrors, Diagnostic};

use crate::isa::Program;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The source languages a kernel can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// Native SASS-like assembly (`.sasm`).
    Native,
    /// tiny-gpu assembly text (`.tgpu`).
    Tinygpu,
    /// tiny-gpu program as 16-bit hex words (`.hex`).
    TinygpuHex,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::Native, Dialect::Tinygpu, Dialect::TinygpuHex];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Native => "native",
            Dialect::Tinygpu => "tinygpu",
            Dialect::TinygpuHex => "tinygpu-hex",
        }
    }

    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The dialect a file extension implies: `.sasm`, `.tgpu`, `.hex`.
    pub fn from_path(path: &Path) -> Option<Dialect> {
        match path.extension()?.to_str()? {
            "sasm" => Some(Dialect::Native),
            "tgpu" => Some(Dialect::Tinygpu),
            "hex" => Some(Dialect::TinygpuHex),
            _ => None,
        }
    }
}

/// Assembles `source` in `dialect`. `default_name` names the kernel when the source does not.
pub fn assemble(dialect: Dialect, source: &str, default_name: &str) -> Result<Program, AsmErrors> {
    // A byte-order mark (Windows editors write one) is invisible, so columns count without it.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let mut program = match dialect {
        Dialect::Native => native::assemble(source)?,
        Dialect::Tinygpu => tinygpu::assemble_text(source)?,
        Dialect::TinygpuHex => tinygpu::assemble_hex(source)?,
    };
    if program.name.is_empty() {
        program.name = default_name.to_string();
    }
    Ok(program)
}
