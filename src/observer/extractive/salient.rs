//! The line of a command's output worth a title: what failed, not the first thing printed.
//!
//! In order: a failed test's name (`FAILED tests/x.py::test_y`, `--- FAIL: TestY`, `test y ...
//! FAILED`, jest's `● suite › test`), a compiler or linter error (`error[E0308]: …`, `error TS2304:
//! …`, `file.py:3: error: …`), an exception's last line (after a traceback), any line naming an
//! error, then a test run's totals (pytest, cargo test, jest/vitest, go test); failing those, the
//! first line that is not noise (banners, rules, progress bars, warnings, pre-release notices).
//! Pure; every regex is compiled once.

use std::sync::LazyLock;

use regex::Regex;

/// A pattern of this file (checked by the unit tests); one that failed to compile matches nothing.
struct Pattern(Option<Regex>);

impl Pattern {
    fn is_match(&self, line: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(line))
    }
}

fn re(pattern: &str) -> Pattern {
    Pattern(Regex::new(pattern).ok())
}

static FAILED_TEST: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(FAILED \S+|--- FAIL: \S+|test \S+ \.\.\. FAILED|● .+ › .+|FAIL\s+\S+\.(test|spec)\.\S+)"));
static COMPILER: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^(error(\[E\d+\])?: .+|.+\(\d+,\d+\): error TS\d+: .+|.+: error TS\d+: .+|\S+:\d+(:\d+)?: (error|E\d+)\b.+)"));
static EXCEPTION: LazyLock<Pattern> =
    LazyLock::new(|| re(r"^([A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)|AssertionError|panicked at|thread '.+' panicked)\b.*"));
static NAMES_ERROR: LazyLock<Pattern> = LazyLock::new(|| {
    re(r"(?i)(\berror\b|\bfailed\b|\bfatal\b|exception|not found|no such file|permission denied|cannot |could not |undefined|traceback)")
});
static TOTALS: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"(^=+ .*\b(passed|failed|error|errors|skipped)\b.* in [\d.]+s.* =+$|^test result: .+|^Tests?:\s+.*\b(passed|failed|total)\b.*|^Test Files\s+.*\b(passed|failed)\b.*|^(ok|FAIL)\s+\S+\s+[\d.]+s$|^\d+ (passing|failing)\b.*)",
    )
});
static NOISE: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"(?i)(^[=\-_*#~.]{3,}|[=\-]{5,}$|\d+%\|| \d+%\s*$|^\[[#=>\- ]+\]|^warn(ing)?\b|^\s*warning[:\[]|pre-release|^(info|debug)\b|^note:|^hint:|^npm (warn|notice)|^\$ |^> |^exit code \d+$|^command exited)",
    )
});

/// Lines of `text`, trimmed, without blanks. A literal `\n` (an output recorded JSON-escaped)
/// separates lines too.
fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .flat_map(|l| l.split("\\n"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// The last totals line of `all`, banner rules stripped.
fn totals_in(all: &[&str]) -> Option<String> {
    all.iter()
        .rev()
        .find(|l| TOTALS.is_match(l))
        .map(|l| l.trim_matches(|c: char| c == '=' || c.is_whitespace()).to_owned())
}

/// A test run's totals line (`3 failed, 10 passed in 0.52s`), banner rules stripped.
pub fn totals_line(text: &str) -> Option<String> {
    totals_in(&lines(text))
}

static FAILED_TOTALS: LazyLock<Pattern> = LazyLock::new(|| {
    re(
        r"(?i)(\b[1-9]\d* (failed|failing|failures?|errors?)\b|^test result: FAILED|^FAIL\b|^Tests?:\s+[1-9]\d* failed|^npm ERR!|^ELIFECYCLE|^make: \*\*\*)",
    )
});

/// Whether `text` shows a failure of its own: a failed test, a compiler error, an exception, or
/// totals that count failures (the outcome of a check whose exit status was hidden by a pipe).
pub fn shows_failure(text: &str) -> bool {
    lines(text)
        .iter()
        .any(|l| FAILED_TEST.is_match(l) || COMPILER.is_match(l) || EXCEPTION.is_match(l) || FAILED_TOTALS.is_match(l))
}

/// The line of `text` that says what went wrong (see the module docs).
pub fn failure_line(text: &str) -> Option<String> {
    let all = lines(text);
    let first = |p: &Pattern| all.iter().find(|l| p.is_match(l));
    if let Some(l) = first(&FAILED_TEST).or_else(|| first(&COMPILER)) {
        return Some((*l).to_owned());
    }
    if let Some(l) = all.iter().rev().find(|l| EXCEPTION.is_match(l)) {
        return Some((*l).to_owned());
    }
    if let Some(i) = all
        .iter()
        .position(|l| NAMES_ERROR.is_match(l) && !NOISE.is_match(l) && !l.starts_with("Traceback"))
    {
        // `Pre-commit validation failed:` says that, not what: the next line says what.
        return Some(match (all[i].ends_with(':'), all[i + 1..].iter().find(|l| !NOISE.is_match(l))) {
            (true, Some(next)) => format!("{} {next}", all[i]),
            _ => all[i].to_owned(),
        });
    }
    totals_in(&all).or_else(|| all.iter().find(|l| !NOISE.is_match(l)).map(|l| (*l).to_owned()))
}

/// The output line a successful command is known by: its test totals when it ran tests, else
/// the last line that is not noise.
pub fn result_line(text: &str) -> Option<String> {
    let all = lines(text);
    totals_in(&all).or_else(|| all.iter().rev().find(|l| !NOISE.is_match(l)).map(|l| (*l).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_told_from_a_pass_by_its_output() {
        assert!(shows_failure(
            "running 3 tests\ntest parser::empty ... FAILED\ntest result: FAILED. 2 passed; 1 failed"
        ));
        assert!(shows_failure("src/a.ts(3,1): error TS2304: Cannot find name 'x'."));
        assert!(shows_failure("=== 1 failed, 3 passed in 0.2s ==="));
        assert!(!shows_failure("running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored"));
        assert!(!shows_failure("=== 3 passed in 0.2s ===\nno errors found"));
    }

    #[test]
    fn every_pattern_compiles() {
        for p in [&FAILED_TEST, &COMPILER, &EXCEPTION, &NAMES_ERROR, &TOTALS, &NOISE, &FAILED_TOTALS] {
            assert!(p.0.is_some());
        }
    }

    #[test]
    fn pytest_failures_are_named_by_the_failed_test_not_the_banner() {
        let out = "============================= test session starts ==============================\n\
                   platform linux -- Python 3.12.1, pytest-8.0.0\ncollected 12 items\n\n\
                   tests/test_app.py ..F.\n\n=================================== FAILURES ===================================\n\
                   E       assert 3 == 4\n=========================== short test summary info ============================\n\
                   FAILED tests/test_app.py::test_totals - assert 3 == 4\n\
                   ========================= 1 failed, 11 passed in 0.52s =========================";
        assert_eq!(failure_line(out).unwrap(), "FAILED tests/test_app.py::test_totals - assert 3 == 4");
        assert_eq!(totals_line(out).unwrap(), "1 failed, 11 passed in 0.52s");
    }

    #[test]
    fn a_traceback_is_named_by_its_last_line_and_warnings_are_skipped() {
        let out = "WARN ty is pre-release software and not ready for production use\n\
                   Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    import foo\n\
                   ModuleNotFoundError: No module named 'foo'";
        assert_eq!(failure_line(out).unwrap(), "ModuleNotFoundError: No module named 'foo'");
        assert!(NOISE.is_match("WARN ty is pre-release software and not ready for production use"));
    }

    #[test]
    fn compiler_errors_and_other_runners_totals() {
        let rust = "   Compiling memd v0.1.0\nwarning: unused import\nerror[E0308]: mismatched types\n  --> src/lib.rs:3:5";
        assert_eq!(failure_line(rust).unwrap(), "error[E0308]: mismatched types");
        let ts = "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.";
        assert!(failure_line(ts).unwrap().contains("TS2322"));
        let cargo = "running 3 tests\ntest a ... ok\ntest b ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored";
        assert_eq!(failure_line(cargo).unwrap(), "test b ... FAILED");
        assert_eq!(totals_line(cargo).unwrap(), "test result: FAILED. 2 passed; 1 failed; 0 ignored");
        let jest = "PASS src/a.test.ts\nTests:       1 failed, 4 passed, 5 total\nTime: 1.2 s";
        assert_eq!(totals_line(jest).unwrap(), "Tests:       1 failed, 4 passed, 5 total");
        let go = "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/p\t0.012s";
        assert_eq!(failure_line(go).unwrap(), "--- FAIL: TestParse (0.00s)");
        assert_eq!(result_line("ok  \texample.com/p\t0.012s").unwrap(), "ok  \texample.com/p\t0.012s");
    }

    #[test]
    fn escaped_newlines_separate_lines() {
        let out = "Pre-commit validation failed:\\n\\n[CREDO]\\nChecking 88 source files\\nlib/a.ex:3: error: undefined function foo/1";
        assert_eq!(failure_line(out).unwrap(), "lib/a.ex:3: error: undefined function foo/1");
        let out = "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.\\nRun 'mix format' to fix.";
        assert_eq!(
            failure_line(out).unwrap(),
            "Pre-commit validation failed: [FORMAT] Code is not formatted."
        );
    }

    #[test]
    fn progress_bars_and_banners_never_make_the_line() {
        let out = "Downloading  45%|████▌     | 45/100\n==========\nDone: 3 files written";
        assert_eq!(result_line(out).unwrap(), "Done: 3 files written");
        assert_eq!(
            failure_line(out).unwrap(),
            "Done: 3 files written",
            "a failure with no error line: its first line that is not noise"
        );
        assert_eq!(failure_line("exit code 1").as_deref(), None);
    }
}
