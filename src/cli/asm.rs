//! `warpscope asm`: assemble a kernel file and print the disassembly or the JSON `Program`.

use super::config::load_gpu;
use super::{emit, DialectArg};
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use warpscope::asm::control_pass::auto_control;
use warpscope::isa::{BranchCond, CmpOp, MufuFn, Opcode, Pipe};
use warpscope::launchfile::{assemble_file, DEFAULT_GPU};
use warpscope::sim::config::GpuConfig;

pub const EXAMPLES: &str = "\
Examples:
  warpscope asm kernels/vecadd.sasm                 # disassembly; assembles back as native
  warpscope asm kernels/vecadd_tiny.hex --pcs       # tiny-gpu hex as native, PCs in comments
  warpscope asm kernels/matmul.sasm --emit json     # the Program as JSON
  warpscope asm kernels/reduce.sasm --auto-control --gpu volta   # control codes filled in
  warpscope asm --opcodes --gpu volta               # every opcode, its operands, pipe, latency";

#[derive(Debug, Args)]
pub struct AsmArgs {
    /// Kernel file: .sasm (native), .tgpu (tiny-gpu text) or .hex (tiny-gpu hex).
    #[arg(required_unless_present = "opcodes")]
    pub file: Option<PathBuf>,
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
    /// GPU whose latencies --auto-control uses, or --opcodes lists: preset name or FILE.json
    /// (default small).
    #[arg(long, value_name = "NAME|FILE.json")]
    pub gpu: Option<String>,
    /// Print the native assembly's opcodes instead: each one's operands, the pipe it issues
    /// to, and that pipe's latency and issue interval on --gpu.
    #[arg(long, conflicts_with_all = ["file", "dialect", "emit", "pcs", "auto_control"])]
    pub opcodes: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// Native assembly text.
    Listing,
    /// serde JSON of the assembled program.
    Json,
}

pub fn run(args: AsmArgs) -> Result<ExitCode> {
    let gpu = || load_gpu(args.gpu.as_deref().unwrap_or(DEFAULT_GPU));
    // (clap gives a file or --opcodes, never both.)
    let Some(file) = args.file.as_deref() else {
        emit(&opcode_table(&gpu()?))?;
        return Ok(ExitCode::SUCCESS);
    };
    if args.gpu.is_some() && !args.auto_control {
        return Err(super::usage(
            "--gpu applies to --auto-control or --opcodes: assembling needs no GPU",
        ));
    }
    let (mut program, _) = assemble_file(file, args.dialect.map(Into::into))?;
    if args.auto_control {
        program = auto_control(&program, &gpu()?);
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

/// An opcode's family as the table names it (the six `ISETP.cmp` are one row) and the
/// modifiers the family takes.
fn family(op: Opcode) -> (String, Option<String>) {
    let names = |all: &[&str]| all.join(" ");
    match op {
        Opcode::Isetp(_) | Opcode::Fsetp(_) => (
            format!("{}.cmp", op.base_name()),
            Some(format!("cmp: {}", names(&CmpOp::ALL.map(CmpOp::name)))),
        ),
        Opcode::Mufu(_) => (
            "MUFU.fn".into(),
            Some(format!("fn: {}", names(&MufuFn::ALL.map(MufuFn::name)))),
        ),
        Opcode::Bra(BranchCond::Nzp(_)) => (
            "BRA.nzp".into(),
            Some("nzp: N, Z, P or several, NZ...NZP: taken where CMP's flags match".into()),
        ),
        _ => (op.base_name().to_string(), None),
    }
}

/// `asm --opcodes`: every opcode family of the native assembly, its operands, and the pipe it
/// issues to with that pipe's latency and interval on `config`.
fn opcode_table(config: &GpuConfig) -> String {
    let mut rows: Vec<[String; 5]> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for op in Opcode::all() {
        let (name, modifiers) = family(op);
        if !seen.insert(name.clone()) {
            continue;
        }
        // The form names one modifier (`ISETP.LT Pd, ...`): the family's name replaces it.
        let form = op.form();
        let operands = form.split_once(' ').map_or("", |(_, ops)| ops);
        let pipe = op.pipe();
        let timing = config.pipes.get(pipe);
        let latency = match pipe {
            Pipe::Global => "memory".to_string(),
            _ => timing.latency.to_string(),
        };
        let mut operands = operands.to_string();
        if let Some(m) = modifiers {
            operands = match operands.is_empty() {
                true => format!("({m})"),
                false => format!("{operands}   ({m})"),
            };
        }
        rows.push([
            name,
            pipe.name().to_string(),
            latency,
            timing.interval.to_string(),
            operands,
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0).max(8))
        .collect();
    let mut out = format!(
        "Native assembly (.sasm) opcodes; latency and interval in cycles on {}\n\n",
        config.name
    );
    let header = ["opcode", "pipe", "latency", "interval", "operands"];
    for r in std::iter::once(header.map(str::to_string)).chain(rows) {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&wrapped(
        "Operands, destinations first: Rd a register R0-R254 (RZ reads 0, writes are \
         dropped); Pd a predicate P0-P6 (PT always true); Ra|imm (Rb|imm, ...) a register, an immediate \
         (decimal, 0x hex, a float literal for float opcodes), a special register such as \
         %tid.x or a parameter %param.NAME; [Ra+imm] an address with a signed byte offset; Pp \
         P0 or !P0; label a label. Any instruction takes a guard, @P0 or @!P0, and an optional \
         control code before it.\n\
         latency: cycles from issue until a dependent instruction may read the result; global \
         memory's comes from the memory model (`warpscope config show GPU`, memory), and shared \
         memory's grows by the interval for each bank-conflict pass. interval: cycles between \
         two issues to the pipe from one scheduler. Each opcode's semantics, the directives and \
         control codes: README, \"Native assembly\".",
    ));
    out
}

/// `text`'s paragraphs (one per line) wrapped at 96 columns, as the help text is.
fn wrapped(text: &str) -> String {
    let mut out = String::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > 96 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
