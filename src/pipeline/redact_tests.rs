//! Tests of the redactor (docs/spec/privacy.md §5.5 cases R1–R21) and its properties.

use super::*;

#[test]
fn debug_never_shows_the_token_or_custom_patterns() {
    let token = "a".repeat(64);
    let config = RedactConfig {
        custom_patterns_json: r#"[{"name":"mine","regex":"hunter2"}]"#,
        memd_token: Some(&token),
        ..RedactConfig::default()
    };
    let (r, _) = Redactor::new(&config);
    let shown = format!("{r:?} {config:?}");
    assert!(!shown.contains(&token) && !shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("memd_token"));
}

const JWT: &str = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

/// R1–R16 with default settings: (input, expected).
#[rustfmt::skip]
const DEFAULT_CASES: [(&str, &str); 20] = [
    ("key=AKIAIOSFODNN7EXAMPLE end", "key=<redacted type='aws_access_key'/> end"),
    ("xAKIAIOSFODNN7EXAMPLE", "xAKIAIOSFODNN7EXAMPLE"),
    ("AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL"),
    ("密钥AKIAIOSFODNN7EXAMPLE", "密钥<redacted type='aws_access_key'/>"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = <redacted type='aws_secret_key'/>"),
    (r#""SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY","#, r#""SecretAccessKey": "<redacted type='aws_secret_key'/>","#),
    ("token ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "token <redacted type='github_pat'/>"),
    ("A=sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "A=<redacted type='anthropic_key'/>"),
    ("O=sk-proj-abcDEF123ghiJKL456mno", "O=<redacted type='openai_key'/>"),
    ("use sk-learn-pipeline-configuration here", "use sk-learn-pipeline-configuration here"),
    ("task-abcdefghijklmnop0123456789", "task-abcdefghijklmnop0123456789"),
    ("stripe sk_live_abcdefghijklmnopqrstuvwx", "stripe <redacted type='stripe_key'/>"),
    ("stripe sk_live_abcdefghijklmnopqrstuvw", "stripe sk_live_abcdefghijklmnopqrstuvw"),
    ("url https://hooks.slack.com/services/T000/B000/XXXX done", "url <redacted type='slack_token'/> done"),
    ("SLACK=xoxb-123456789012-abcdef", "SLACK=<redacted type='slack_token'/>"),
    (JWT, "Bearer <redacted type='jwt'/>"),
    ("k=AIzaSyA-1234567890abcdefghijklmnopqrstu!", "k=<redacted type='google_api_key'/>!"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----\nafter", "<redacted type='private_key_pem'/>\nafter"),
    ("head -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz", "head <redacted type='private_key_pem'/>"),
    ("-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"),
];

fn redact_with(config: &RedactConfig<'_>, s: &str) -> String {
    Redactor::new(config).0.redact(s).0
}

fn config_with_custom(json: &str) -> RedactConfig<'_> {
    RedactConfig {
        custom_patterns_json: json,
        ..RedactConfig::default()
    }
}

#[test]
fn builtins_r1_to_r16() {
    let redactor = Redactor::default();
    for (input, expected) in DEFAULT_CASES {
        assert_eq!(redactor.redact(input).0, expected, "{input}");
    }
}

#[test]
fn memd_token_r17() {
    let token = "0123456789abcdef".repeat(4);
    let other = "fedcba9876543210".repeat(4);
    let config = RedactConfig {
        memd_token: Some(&token),
        ..RedactConfig::default()
    };
    let m = "<redacted type='memd_token'/>";
    assert_eq!(redact_with(&config, &format!("x {token} y")), format!("x {m} y"));
    let bearer = format!("Authorization: Bearer {other}");
    assert_eq!(redact_with(&config, &bearer), format!("Authorization: Bearer {m}"));
    let query = format!("/stream?token={other}");
    assert_eq!(redact_with(&config, &query), format!("/stream?token={m}"));
    let sha = format!("sha256 {other}");
    assert_eq!(redact_with(&config, &sha), sha);
}

#[test]
fn oversize_r18() {
    let (text, counts) = Redactor::default().redact(&"a".repeat(OVERSIZE_CHARS + 1));
    assert_eq!((text.as_str(), counts.get("oversize")), (OVERSIZE_MARKER, 1));
    let exact = "a".repeat(OVERSIZE_CHARS);
    assert_eq!(Redactor::default().redact(&exact).0, exact);
    assert!(!Redactor::default().is_oversize(&"é".repeat(OVERSIZE_CHARS)));
    let off = RedactConfig {
        redact: false,
        ..RedactConfig::default()
    };
    let huge = "a".repeat(OVERSIZE_CHARS + 1);
    assert_eq!(redact_with(&off, &huge), huge);
    assert_eq!(redact_with(&off, DEFAULT_CASES[0].0), DEFAULT_CASES[0].0);
}

#[test]
fn custom_patterns_r19_r20() {
    let (redactor, warnings) = Redactor::new(&config_with_custom(r#"[{"name":"ticket","regex":"ACME-[0-9]{4}"}]"#));
    assert!(warnings.is_empty());
    let (text, counts) = redactor.redact("see ACME-1234");
    assert_eq!((text.as_str(), counts.get("ticket")), ("see <redacted type='ticket'/>", 1));

    let (redactor, warnings) = Redactor::new(&config_with_custom(r#"[{"name":"bad","regex":"(unclosed"}]"#));
    assert_eq!(warnings.len(), 1);
    assert_eq!(redactor.redact(DEFAULT_CASES[0].0).0, DEFAULT_CASES[0].1);
}

#[test]
fn invalid_custom_entries_are_skipped_with_warnings() {
    let json = r#"[{"name":"Bad Name","regex":"x"},{"name":"oversize","regex":"x"},
        {"name":"empty","regex":"a*"},{"name":"huge","regex":"\\w{1000}\\w{1000}"},
        {"regex":"x"},{"name":"ok","regex":"zz[0-9]"}]"#;
    let (redactor, warnings) = Redactor::new(&config_with_custom(json));
    assert_eq!(warnings.len(), 5, "{warnings:?}");
    assert_eq!(redactor.redact("zz1").0, "<redacted type='ok'/>");
    for bad_json in ["{", r#"{"name":"x"}"#, "null"] {
        assert_eq!(Redactor::new(&config_with_custom(bad_json)).1.len(), 1, "{bad_json}");
    }
}

#[test]
fn disabled_builtins_r21() {
    let config = RedactConfig {
        disabled_builtins: " jwt , ,nope,keyword_entropy",
        ..RedactConfig::default()
    };
    let (redactor, warnings) = Redactor::new(&config);
    assert_eq!((redactor.redact(JWT).0.as_str(), warnings.len()), (JWT, 1));
    let config = RedactConfig {
        disabled_builtins: "anthropic_key",
        ..RedactConfig::default()
    };
    let anthropic = DEFAULT_CASES[7].0;
    assert_eq!(redact_with(&config, anthropic), "A=<redacted type='openai_key'/>");
}

#[test]
fn counts_per_detector() {
    let input = "AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLE sk-proj-abcDEF123ghiJKL456mno";
    let (_, counts) = Redactor::default().redact(input);
    assert_eq!((counts.get("aws_access_key"), counts.get("openai_key")), (2, 1));
    let mut merged = counts.clone();
    merged.merge(&counts);
    assert_eq!(merged.total(), 6);
    let json = serde_json::to_string(&counts).unwrap_or_default();
    assert_eq!(json, r#"{"aws_access_key":2,"openai_key":1}"#);
}

#[test]
fn prefix_keys_are_found_inside_identifiers() {
    let r = Redactor::default();
    for s in [
        "mcp__db__AKIAQ7Z3K9LMNP2RSTUV",
        "mcp__db__AKIAQ7Z3K9LMNP2RSTUV__query",
        "x-AKIAQ7Z3K9LMNP2RSTUV",
        "dir/AKIAQ7Z3K9LMNP2RSTUV.json",
        "key.ghp_0123456789abcdefghij0123456789abcdef",
    ] {
        let (out, counts) = r.redact(s);
        assert!(!out.contains("AKIAQ7Z3") && !out.contains("ghp_0123"), "{s} → {out}");
        assert_eq!(counts.total(), 1, "{s}");
    }
    let (out, _) = r.redact("WAKIAQ7Z3K9LMNP2RSTUV and AKIAQ7Z3K9LMNP2RSTUVW");
    assert!(!out.contains("redacted"), "inside a longer word it is not a key: {out}");
}

#[test]
fn overlapping_finds_merge_into_one_redaction() {
    let r = Redactor::default();
    let (out, counts) = r.redact("DATABASE_URL=postgres://admin:Sup3rS3cretPass@db/app");
    assert!(!out.contains("Sup3rS3cret"), "{out}");
    assert_eq!(out.matches("<redacted").count(), 1, "one marker: {out}");
    assert!(!out.contains("'/> type="), "no marker spliced into another: {out}");
    assert_eq!(counts.total(), 1);
}

/// Every `<redacted` begins a whole marker, and nothing of a marker stands outside one.
fn markers_are_whole(out: &str) -> bool {
    let whole = regex::Regex::new(r"<redacted type='[a-z_0-9]+'/>").unwrap();
    let rest = whole.replace_all(out, "");
    !rest.contains("<redacted") && !rest.contains("type='") && whole.find_iter(out).count() == out.matches("<redacted").count()
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "AKIAQ7Z3K9LMNP2RSTUV",
        "ghp_0123456789abcdefghij0123456789abcdef",
        "sk-ant-api03-abcdefghijklmnopqrstuvwx",
        "postgres://admin:Sup3rS3cretPass@db/app",
        "DATABASE_URL=",
        "password=",
        "api_key: ",
        "Bearer ",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
        "xoxb-1234567890-abcdef",
        "mcp__db__",
        "_",
        "-",
        ".",
        "/",
        " ",
        "=",
        ":",
        "\"",
        "'",
        "@",
        "\n",
        "token",
        "secret",
        "ok",
        "42",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn redacting_twice_equals_redacting_once_and_markers_stay_whole(parts in proptest::collection::vec(0..PIECES.len(), 1..12)) {
            let s: String = parts.iter().map(|&i| PIECES[i]).collect();
            let r = Redactor::default();
            let (once, _) = r.redact(&s);
            let (twice, counts) = r.redact(&once);
            prop_assert_eq!(&twice, &once, "input {:?}", s);
            prop_assert!(counts.is_empty(), "nothing left to find in {:?}", once);
            prop_assert!(markers_are_whole(&once), "{:?} → {:?}", s, once);
        }
    }
}
