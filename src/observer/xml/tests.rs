use super::*;
use std::time::{Duration, Instant};

const CODE_TYPES: &[&str] = &[
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
    "security_alert",
    "security_note",
    "sensitive",
];

const P1: &str = "<observation><type>discovery</type><title>Found a bug in auth module</title><narrative>The token refresh logic skips expired tokens.</narrative></observation>";

fn parse(reply: &str) -> ParsedReply {
    parse_reply(reply, CODE_TYPES)
}

fn observations(reply: &str) -> Vec<ParsedObservation> {
    match parse(reply) {
        ParsedReply::Observations(list) => list,
        other => panic!("expected observations for {reply:?}, got {other:?}"),
    }
}

fn one(reply: &str) -> ParsedObservation {
    let mut list = observations(reply);
    assert_eq!(list.len(), 1, "{list:?}");
    list.remove(0)
}

fn titles(reply: &str) -> Vec<String> {
    observations(reply).into_iter().filter_map(|o| o.title).collect()
}

fn p1_expected() -> ParsedObservation {
    ParsedObservation {
        obs_type: "discovery".into(),
        title: Some("Found a bug in auth module".into()),
        subtitle: None,
        facts: vec![],
        narrative: Some("The token refresh logic skips expired tokens.".into()),
        concepts: vec![],
        files_read: vec![],
        files_modified: vec![],
        relations: vec![],
    }
}

#[test]
fn relations_are_read_as_lines_of_their_list() {
    let o = one(
        "<observation><type>bugfix</type><title>t</title><relations><relation>src/a.rs fixes cargo test</relation>\n<relation>src/a.rs depends_on serde</relation></relations></observation>",
    );
    assert_eq!(o.relations, ["src/a.rs fixes cargo test", "src/a.rs depends_on serde"]);
}

#[test]
fn p1_plain_observation() {
    assert_eq!(one(P1), p1_expected());
}

#[test]
fn p2_whole_reply_fence_is_unwrapped() {
    let fenced = format!("```xml\n{P1}\n```");
    assert_eq!(strip_whole_fence(&fenced), P1);
    assert_eq!(one(&fenced), p1_expected());
    assert_eq!(one(&format!("  ```\r\n{P1}\r\n```\n")), p1_expected());
}

#[test]
fn p3_fence_after_prose_is_not_unwrapped_but_root_found() {
    let reply = format!("Here you go:\n```xml\n{P1}\n```");
    assert_eq!(strip_whole_fence(&reply), reply);
    assert_eq!(one(&reply), p1_expected());
}

#[test]
fn p4_missing_type_defaults_to_first_mode_type() {
    assert_eq!(one("<observation><title>T</title></observation>").obs_type, "bugfix");
    let other = parse_reply("<observation><title>T</title></observation>", &["note", "x"]);
    assert!(matches!(other, ParsedReply::Observations(o) if o[0].obs_type == "note"));
}

#[test]
fn p5_type_normalised_and_unknown_kept() {
    let a = one("<observation><type>Security-Alert</type><title>T</title></observation>");
    assert_eq!(a.obs_type, "security_alert");
    let b = one("<observation><type>code</type><title>T</title></observation>");
    assert_eq!(b.obs_type, "code");
    let c = one("<observation><type> Security Note </type><title>T</title></observation>");
    assert_eq!(c.obs_type, "security_note");
}

#[test]
fn p6_concepts_normalised() {
    let o = one("<observation><type>discovery</type><title>T</title><concepts>\
         <concept>gotcha: a long note</concept><concept>discovery</concept>\
         <concept>pattern</concept><concept>: desc</concept><concept>Pattern</concept>\
         </concepts></observation>");
    assert_eq!(o.concepts, ["gotcha", "pattern"]);
}

#[test]
fn p7_subtitle_only_is_empty_xml() {
    let p7 = "<observation><type>bugfix</type><subtitle>only</subtitle></observation>";
    assert_eq!(parse(p7), ParsedReply::EmptyXml);
    let files_only = "<observation><files_read><file>a.rs</file></files_read></observation>";
    assert_eq!(parse(files_only), ParsedReply::EmptyXml);
}

#[test]
fn p8_ghost_dropped_real_kept() {
    let reply = "<observation><type>bugfix</type><subtitle>only</subtitle></observation>\
                 <observation><title>Real</title></observation>";
    assert_eq!(titles(reply), ["Real"]);
}

#[test]
fn p9_tag_names_case_insensitive() {
    assert_eq!(titles("<OBSERVATION><TITLE>Upper</TITLE></OBSERVATION>"), ["Upper"]);
    assert_eq!(titles("<Observation id=\"1\"><Title>Mixed</tItle></Observation >"), ["Mixed"]);
}

#[test]
fn p10_wrapper_ignored() {
    let reply = "<observations><observation><title>A</title></observation>\
                 <observation><title>B</title></observation></observations>";
    assert_eq!(titles(reply), ["A", "B"]);
}

#[test]
fn p11_entities_and_cdata() {
    let o = one("<observation><title>a &lt; b &amp;&amp; c</title>\
         <narrative><![CDATA[x <y> z]]></narrative></observation>");
    assert_eq!(o.title.as_deref(), Some("a < b && c"));
    assert_eq!(o.narrative.as_deref(), Some("x <y> z"));
    let o = one("<observation><title>&#60;&#x3E;&quot;&apos; &bogus; & &#0; <b>kept</b></title></observation>");
    assert_eq!(o.title.as_deref(), Some("<>\"' &bogus; & &#0; <b>kept</b>"));
}

#[test]
fn p12_wrapper_text_lines() {
    let o = one("<observation><title>T</title><facts>- one\n- two</facts></observation>");
    assert_eq!(o.facts, ["one", "two"]);
    let o = one("<observation><title>T</title><facts>\n* a\n\n• b\n  c  \n- a\n</facts></observation>");
    assert_eq!(o.facts, ["a", "b", "c"]);
}

#[test]
fn p13_cut_off_reply_salvaged() {
    let reply = "<observation><title>A</title></observation><observation><title>B</title>";
    assert_eq!(titles(reply), ["A", "B"]);
    // A field cut off before its close tag is ignored.
    let cut = "<observation><title>A</title><narrative>half a sente";
    let o = one(cut);
    assert_eq!((o.title.as_deref(), o.narrative), (Some("A"), None));
    // An unclosed element ends at the next root opening.
    let o = observations("<observation><title>A</title><observation><title>B</title></observation>");
    assert_eq!(o.len(), 2);
}

#[test]
fn p14_first_root_observation_ignores_summary() {
    let reply = "<observation><title>O</title></observation><summary><request>R</request></summary>";
    assert_eq!(titles(reply), ["O"]);
}

#[test]
fn p15_summary_validity() {
    let ok = parse("<summary><request>Fix the bug</request></summary>");
    assert_eq!(
        ok,
        ParsedReply::Summary(ParsedSummary {
            request: Some("Fix the bug".into()),
            ..ParsedSummary::default()
        })
    );
    assert_eq!(parse("<summary><notes>only notes</notes></summary>"), ParsedReply::EmptyXml);
    // The first summary only; observations after a summary root are ignored.
    let first = parse(
        "<summary><learned>L</learned></summary><summary><request>2</request></summary>\
         <observation><title>x</title></observation>",
    );
    assert!(matches!(first, ParsedReply::Summary(s) if s.learned.as_deref() == Some("L") && s.request.is_none()));
}

#[test]
fn p17_skip_summary() {
    let skip = |r: &str| parse(r);
    assert_eq!(
        skip("<skip_summary reason=\"no work done\"/>"),
        ParsedReply::Skip {
            reason: Some("no work done".into())
        }
    );
    assert_eq!(skip("<skip_summary/>"), ParsedReply::Skip { reason: None });
    assert_eq!(
        skip("<SKIP_SUMMARY REASON='a &amp; b > c'></SKIP_SUMMARY>"),
        ParsedReply::Skip {
            reason: Some("a & b > c".into())
        }
    );
    assert_eq!(skip("<skip_summary reason=\"  \" />"), ParsedReply::Skip { reason: None });
    // The first root decides: a later observation does not matter.
    assert_eq!(
        skip("<skip_summary reason=\"r\"/><observation><title>T</title></observation>"),
        ParsedReply::Skip { reason: Some("r".into()) }
    );
}

#[test]
fn lists_from_wrappers_bare_items_and_file_attribution() {
    let o = one(
        "<observation><title>T</title><fact>bare one</fact><fact> </fact><fact>bare one</fact>\
         <concepts><concept>how-it-works</concept></concepts>\
         <files_modified><file>src/m.rs</file></files_modified><file>src/r.rs</file>\
         </observation>",
    );
    assert_eq!(o.facts, ["bare one"]);
    assert_eq!(o.concepts, ["how-it-works"]);
    assert_eq!(o.files_modified, ["src/m.rs"]);
    assert_eq!(o.files_read, ["src/r.rs"]);
    let both_missing = one("<observation><title>T</title><file>a</file><file>b</file></observation>");
    assert_eq!(
        (both_missing.files_read, both_missing.files_modified),
        (vec!["a".into(), "b".into()], vec![])
    );
    let unclosed_wrapper = one("<observation><title>T</title><facts><fact>a</fact><fact>b</fact>");
    assert_eq!(unclosed_wrapper.facts, ["a", "b"]);
}

#[test]
fn markup_inside_cdata_and_comments_is_text() {
    let o = one("<!-- <summary><request>no</request></summary> -->\
         <observation><title>T</title><narrative><![CDATA[see </narrative> and <observation>]]></narrative></observation>");
    assert_eq!(o.narrative.as_deref(), Some("see </narrative> and <observation>"));
    assert_eq!(parse("no roots <observations></observations>"), ParsedReply::EmptyXml);
    assert_eq!(parse(""), ParsedReply::EmptyXml);
}

fn assert_fast(label: &str, started: Instant) {
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "{label} took {elapsed:?}");
}

#[test]
fn hostile_inputs_finish_quickly_without_panicking() {
    let unclosed = "<observation>".repeat(10_000);
    let t = Instant::now();
    assert_eq!(parse(&unclosed), ParsedReply::EmptyXml);
    assert_eq!(classify_reply(&unclosed), ReplyClass::Xml);
    assert_fast("10,000 unclosed observations", t);

    let titled = "<observation><title>x".repeat(10_000) + "</title>";
    let t = Instant::now();
    let _ = parse(&titled);
    assert_fast("unclosed titles", t);

    // ~1 MB of deterministic garbage mixing markup fragments, entities and multi-byte text.
    let pieces = [
        "<",
        ">",
        "</",
        "/>",
        "&",
        "&#x",
        ";",
        "<![CDATA[",
        "]]>",
        "<!--",
        "\"",
        "'",
        "observation",
        "title",
        "<observation ",
        "<fact>",
        "</facts>",
        "é",
        "密",
        "\n",
        " ",
        "=",
        "<skip_summary",
        "reason=\"",
        "```",
        "&lt;",
        "<summary>",
        "?>",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut garbage = String::with_capacity(1 << 20);
    while garbage.len() < 1 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        garbage.push_str(pieces[(state % pieces.len() as u64) as usize]);
    }
    let t = Instant::now();
    let _ = parse(&garbage);
    let _ = classify_reply(&garbage);
    assert_fast("1 MB garbage", t);

    for nasty in [
        "<![CDATA[".repeat(50_000),
        "<!--".repeat(50_000),
        "<a \"".repeat(50_000),
        "&".repeat(200_000),
    ] {
        let t = Instant::now();
        let _ = parse(&format!("<observation><title>{nasty}</title>{nasty}"));
        assert_fast("repeated openers", t);
    }
}

/// What models write loosely, as the module documentation promises to read it.
#[test]
fn loose_model_writing_is_read() {
    // A stray `<` and `&` in text: the text keeps them and the element still closes.
    let o = one("<observation><title>x < 3 && y</title><narrative>if a<b then c</narrative></observation>");
    assert_eq!(o.title.as_deref(), Some("x < 3 && y"));
    assert_eq!(o.narrative.as_deref(), Some("if a<b then c"));
    // Inner markup that is not ours is kept verbatim as text.
    let o = one("<observation><title>use <code>Vec<u8></code> here</title></observation>");
    assert_eq!(o.title.as_deref(), Some("use <code>Vec<u8></code> here"));
    // A close tag that never matches, and an element cut off by the next root.
    let v = titles("<observation><title>one</title></obs><observation><title>two</title>");
    assert_eq!(v, ["one", "two"]);
    // A `<` at the very end and a broken tag before the real one.
    let o = one("<observation><title>arrow -> <- ok</title><narrative>n <</narrative></observation> <");
    assert_eq!(o.title.as_deref(), Some("arrow -> <- ok"));
    assert_eq!(o.narrative.as_deref(), Some("n <"));
    // Attributes with `>` inside quotes, and an unterminated quote.
    assert_eq!(
        parse("<skip_summary reason=\"a > b\"/>"),
        ParsedReply::Skip {
            reason: Some("a > b".into())
        }
    );
    let o = one("<observation><title>t</title><fact x=\"unterminated>f</fact></observation>");
    assert_eq!(o.title.as_deref(), Some("t"));
}
