//! The `memd` binary: parse the command line, read the environment once, dispatch.

use std::collections::HashMap;
use std::process::ExitCode;

/// A hook must not die of the host's SIGTERM before its event is delivered or spooled: for
/// `memd hook` the stop signals are blocked before anything else happens in the process — in an
/// ELF constructor, which glibc runs with `argc`/`argv` right after loading, before Rust's own
/// start-up and `main` (docs/decisions.md).
extern "C" fn block_stop_signals_for_hooks(argc: libc::c_int, argv: *const *const libc::c_char, _env: *const *const libc::c_char) {
    if argc < 2 || argv.is_null() {
        return;
    }
    // SAFETY: glibc passes the process's argv (argc entries, each a NUL-terminated string) to
    // `.init_array` functions; only argv[1] is read.
    let first = unsafe { std::ffi::CStr::from_ptr(*argv.add(1)) };
    if first.to_bytes() == b"hook" {
        memd::hook::signals::block_termination();
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static BLOCK_STOP_SIGNALS: extern "C" fn(libc::c_int, *const *const libc::c_char, *const *const libc::c_char) =
    block_stop_signals_for_hooks;

#[allow(clippy::print_stderr, reason = "the command's error, made terminal-safe, is main's to print")]
fn main() -> ExitCode {
    // Where no constructor ran (another libc), the same block, a little later.
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") {
        memd::hook::signals::block_termination();
    }
    memd::cli::quiet_on_closed_stdout();
    let env: HashMap<String, String> = std::env::vars().collect();
    let cli = memd::cli::help::parse();
    match memd::cli::run(cli, &env) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("memd: {}", memd::text::terminal::safe(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}
