//! Accel-Sim's `kernelslist.g`: the commands of a traced application in order — host-to-device
//! copies (`MemcpyHtoD,0xADDRESS,BYTES`) and kernel launches (a `kernel-N.traceg` file name,
//! relative to the list's directory).
//!
//! Simplifications: replay is timing-only, so copies are listed and counted but move no data;
//! device-to-host copies, which the tracer may also write, are accepted and skipped the same way.

use super::ReplayError;
use std::path::{Path, PathBuf};

/// One command of a kernel list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Memcpy {
        /// `true` for `MemcpyHtoD`, `false` for `MemcpyDtoH`.
        to_device: bool,
        address: u64,
        bytes: u64,
    },
    /// A kernel trace file, resolved against the list's directory.
    Kernel { path: PathBuf, line: u64 },
}

/// Parses a kernel list. Every error names the file and line.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Command>, ReplayError> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut commands = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let err = |m: String| ReplayError::parse(path, line, m);
        if let Some(kind) = ["MemcpyHtoD", "MemcpyDtoH"]
            .iter()
            .find(|k| t.starts_with(*k))
        {
            let fields: Vec<&str> = t.split(',').map(str::trim).collect();
            if fields.len() != 3 {
                return Err(err(format!(
                    "wrong field count: `{kind},ADDRESS,BYTES` has 3 fields, this line {}",
                    fields.len()
                )));
            }
            let digits = fields[1]
                .strip_prefix("0x")
                .or_else(|| fields[1].strip_prefix("0X"))
                .unwrap_or(fields[1]);
            let address = u64::from_str_radix(digits, 16).map_err(|_| {
                err(format!(
                    "bad number `{}` for the address (expected hexadecimal)",
                    fields[1]
                ))
            })?;
            let bytes = fields[2].parse::<u64>().map_err(|_| {
                err(format!(
                    "bad number `{}` for the byte count (expected decimal)",
                    fields[2]
                ))
            })?;
            commands.push(Command::Memcpy {
                to_device: *kind == "MemcpyHtoD",
                address,
                bytes,
            });
        } else if t.starts_with("kernel") {
            commands.push(Command::Kernel {
                path: dir.join(t),
                line,
            });
        } else {
            return Err(err(format!(
                "`{t}` is neither a Memcpy line nor a kernel trace file name"
            )));
        }
    }
    Ok(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_copies_and_kernels_relative_to_the_list() {
        let text = "MemcpyHtoD,0x00007f2b2d500000,400\n\nkernel-1.traceg\nMemcpyDtoH,0x10,8\n";
        let cmds = parse(Path::new("/t/app/kernelslist.g"), text).unwrap();
        assert_eq!(
            cmds,
            [
                Command::Memcpy {
                    to_device: true,
                    address: 0x7f2b2d500000,
                    bytes: 400
                },
                Command::Kernel {
                    path: PathBuf::from("/t/app/kernel-1.traceg"),
                    line: 3
                },
                Command::Memcpy {
                    to_device: false,
                    address: 0x10,
                    bytes: 8
                },
            ]
        );
    }

    #[test]
    fn bad_lines_are_located() {
        let p = Path::new("k/kernelslist.g");
        let cases = [
            ("MemcpyHtoD,0x10\n", "k/kernelslist.g:1: wrong field count"),
            (
                "kernel-1.traceg\nMemcpyHtoD,zz,4\n",
                "k/kernelslist.g:2: bad number `zz`",
            ),
            ("MemcpyHtoD,0x10,-4\n", "bad number `-4` for the byte count"),
            ("launch foo\n", "k/kernelslist.g:1: `launch foo` is neither"),
        ];
        for (text, want) in cases {
            let e = parse(p, text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
