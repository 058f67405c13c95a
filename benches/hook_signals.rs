//! The hook's signal window (issue 19): observation hooks run as Claude Code runs them — own
//! process group, event on stdin, exec form and `/bin/sh -c "exec …"` — against a worker that never
//! answers, each SIGTERMed to its group a fixed number of ms after spawn. Prints, per delay, how
//! many events were lost (killed before memd blocked the signals) out of `RUNS`. Asserts nothing.
//! Run: `cargo bench --bench hook_signals`
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout, clippy::print_stderr, clippy::exit)] // a test or a bench: a failed assumption fails it, and it reports by printing

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

const RUNS: usize = 200;

fn main() {
    println!("SIGTERM to the hook's group N ms after spawn, {RUNS} runs each, 4 at a time: events lost");
    println!("| delay | memd-hook, exec form | memd-hook, sh -c \"exec …\" | memd hook, exec form | memd hook, sh -c \"exec …\" |");
    println!("|---:|---:|---:|---:|---:|");
    let memd = env!("CARGO_BIN_EXE_memd");
    let hook = support::hook::HOOK_BIN;
    for d in [0u64, 1, 2, 3, 4, 5, 10, 20] {
        let lost = |bin: &str, shell: bool| support::hook::signal_storm(bin, RUNS, d..d + 1, shell, 4, false).lost;
        println!(
            "| {d} ms | {} | {} | {} | {} |",
            lost(hook, false),
            lost(hook, true),
            lost(memd, false),
            lost(memd, true)
        );
    }
    for (range, label) in [(0..5, "0–4"), (5..51, "5–50")] {
        for shell in [false, true] {
            let s = support::hook::signal_storm(hook, 500, range.clone(), shell, 4, false);
            println!("memd-hook, {label} ms spread, 500 runs, shell form {shell}: {s:?}");
        }
    }
}
