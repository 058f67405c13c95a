//! `memd hook <platform> <handler>`: the Claude Code hook process (see [`crate::hook`]).
//! A panic message never reaches stderr: it goes to `<data>/logs/hook.log`.

use std::collections::HashMap;
use std::process::ExitCode;

pub fn run(args: &[String], env: &HashMap<String, String>) -> anyhow::Result<ExitCode> {
    // The handler catches panics itself; the default hook would print them to stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let code = crate::hook::main(args.first().map(String::as_str), args.get(1).map(String::as_str), env);
    Ok(ExitCode::from(code))
}
