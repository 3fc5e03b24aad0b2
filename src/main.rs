//! The `warpscope` binary: parses the command line and calls the library. Every subcommand lives
//! in `cli/` as one small file; the simulator, assemblers and launch files are in `warpscope::*`.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main(cli::Cli::parse())
}
