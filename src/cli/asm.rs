//! `warpscope asm`: assemble a kernel file and print the disassembly or the JSON `Program`.

use super::config::load_gpu;
use super::{emit, DialectArg};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::asm::control_pass::auto_control;
use warpscope::launchfile::{assemble_file, DEFAULT_GPU};

pub const EXAMPLES: &str = "\
Examples:
  warpscope asm kernels/vecadd.sasm                 # disassembly; assembles back as native
  warpscope asm kernels/vecadd_tiny.hex --pcs       # tiny-gpu hex as native, PCs in comments
  warpscope asm kernels/matmul.sasm --emit json     # the Program as JSON
  warpscope asm kernels/reduce.sasm --auto-control --gpu volta   # control codes filled in";

#[derive(Debug, Args)]
pub struct AsmArgs {
    /// Kernel file: .sasm (native), .tgpu (tiny-gpu text) or .hex (tiny-gpu hex).
    pub file: PathBuf,
    /// Source dialect; by default taken from the file extension.
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// What to print: the native listing (re-assembles to the same program) or JSON.
    #[arg(long, value_enum, default_value_t = Emit::Listing)]
    pub emit: Emit,
    /// Append `// pc N` to every instruction of the listing.
    #[arg(long)]
    pub pcs: bool,
    /// Fill in every instruction's control code (stall count, dependency barriers) with the
    /// auto-control pass, for the latencies of --gpu; the listing still re-assembles.
    #[arg(long)]
    pub auto_control: bool,
    /// GPU whose latencies --auto-control uses: preset name or FILE.json (default small).
    #[arg(long, value_name = "NAME|FILE.json", requires = "auto_control")]
    pub gpu: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// Native assembly text.
    Listing,
    /// serde JSON of the assembled program.
    Json,
}

pub fn run(args: AsmArgs) -> Result<ExitCode> {
    let (mut program, _) = assemble_file(&args.file, args.dialect.map(Into::into))?;
    if args.auto_control {
        let config = load_gpu(args.gpu.as_deref().unwrap_or(DEFAULT_GPU))?;
        program = auto_control(&program, &config);
    }
    let text = match args.emit {
        Emit::Json => serde_json::to_string_pretty(&program)? + "\n",
        Emit::Listing if args.pcs => {
            let listing = program.to_string();
            let width = listing.lines().map(str::len).max().unwrap_or(0);
            let mut pc = 0;
            let mut out = String::new();
            for line in listing.lines() {
                if line.starts_with("    ") {
                    out.push_str(&format!("{line:width$}  // pc {pc}\n"));
                    pc += 1;
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out
        }
        Emit::Listing => program.to_string(),
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}
