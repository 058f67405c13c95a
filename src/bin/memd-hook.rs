//! `memd-hook <platform> <handler>`: the hook process on its own — the same code as
//! `memd hook <platform> <handler>` ([`memd::hook`]), linked without the worker (no SQLite, no
//! embedder, no async runtime), so the process reaches its signal block and its first byte of
//! work in a fraction of `memd`'s start-up. `memd install` registers it when it sits beside `memd`.

use std::collections::HashMap;
use std::process::ExitCode;

/// The stop signals are blocked before Rust's start-up and `main` run (see `memd`'s own `main`).
extern "C" fn block_stop_signals(_argc: libc::c_int, _argv: *const *const libc::c_char, _env: *const *const libc::c_char) {
    memd::hook::signals::block_termination();
}

#[used]
#[unsafe(link_section = ".init_array")]
static BLOCK_STOP_SIGNALS: extern "C" fn(libc::c_int, *const *const libc::c_char, *const *const libc::c_char) = block_stop_signals;

fn main() -> ExitCode {
    memd::hook::signals::block_termination();
    let env: HashMap<String, String> = std::env::vars().collect();
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::panic::set_hook(Box::new(|_| {}));
    let code = memd::hook::main(args.first().map(String::as_str), args.get(1).map(String::as_str), &env);
    ExitCode::from(code)
}
