//! The `memd` binary: parse the command line, read the environment once, dispatch.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let env: HashMap<String, String> = std::env::vars().collect();
    let cli = memd::cli::Cli::parse();
    match memd::cli::run(cli, &env) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("memd: {e:#}");
            ExitCode::FAILURE
        }
    }
}
