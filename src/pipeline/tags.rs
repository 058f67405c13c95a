//! Tag stripping (`docs/spec/pipeline.md` §5.4) and the task-notification check (§4 rule 1).
//!
//! One left-to-right pass: a region opened by a stripped tag runs through its balanced closing
//! tag of the same name (or to the end of the string, fail-closed). The position of the next `>`
//! is cached, so attribute scans never rescan and hostile input stays linear.

/// Tag names whose regions are removed, matched ASCII case-insensitively.
pub const STRIPPED_TAGS: [&str; 7] = [
    "private",
    "claude-mem-context",
    "memd-context",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "system-reminder",
];

/// More regions than this in one string deserve a warning log.
pub const REGION_WARN_THRESHOLD: usize = 100;

/// Longest prompt that can still be an internal task notification (chars).
const TASK_NOTIFICATION_MAX_CHARS: usize = 262_144;

/// Result of [`strip_tags`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    pub text: String,
    /// Regions removed (self-closing tags included).
    pub regions: usize,
}

impl Stripped {
    pub fn should_warn(&self) -> bool {
        self.regions > REGION_WARN_THRESHOLD
    }
}

/// What starts at a `<`.
enum Tag {
    /// Opening tag of `STRIPPED_TAGS[name]`, ending just before byte `end`.
    Open {
        name: usize,
        end: usize,
    },
    SelfClosing {
        end: usize,
    },
    Close {
        name: usize,
        end: usize,
    },
}

struct Scanner<'a> {
    bytes: &'a [u8],
    /// Cached answer for "first `>` at or after some position": `(from, found)`.
    next_gt: Option<(usize, Option<usize>)>,
}

impl<'a> Scanner<'a> {
    fn new(s: &'a str) -> Self {
        Self {
            bytes: s.as_bytes(),
            next_gt: None,
        }
    }

    /// First `>` at or after `from`; amortised linear because queries move forward.
    fn next_gt(&mut self, from: usize) -> Option<usize> {
        if let Some((cached_from, found)) = self.next_gt {
            let still_valid = cached_from <= from && found.is_none_or(|gt| gt >= from);
            if still_valid {
                return found;
            }
        }
        let found = self
            .bytes
            .get(from..)
            .and_then(|rest| rest.iter().position(|&b| b == b'>'))
            .map(|i| from + i);
        self.next_gt = Some((from, found));
        found
    }

    /// Index of the stripped name starting at `at`, with the byte after it.
    fn name_at(&self, at: usize) -> Option<(usize, usize)> {
        let rest = self.bytes.get(at..)?;
        STRIPPED_TAGS.iter().enumerate().find_map(|(index, name)| {
            let candidate = rest.get(..name.len())?;
            candidate.eq_ignore_ascii_case(name.as_bytes()).then_some((index, at + name.len()))
        })
    }

    /// Parses the tag starting at the `<` at `at`, if it is one of ours.
    fn tag_at(&mut self, at: usize) -> Option<Tag> {
        let len = self.bytes.len();
        if self.bytes.get(at + 1) == Some(&b'/') {
            let (name, mut end) = self.name_at(at + 2)?;
            while self.bytes.get(end).is_some_and(u8::is_ascii_whitespace) {
                end += 1;
            }
            return (self.bytes.get(end) == Some(&b'>')).then_some(Tag::Close { name, end: end + 1 });
        }
        let (name, after) = self.name_at(at + 1)?;
        match self.bytes.get(after) {
            Some(b'>') => Some(Tag::Open { name, end: after + 1 }),
            Some(b'/') if self.bytes.get(after + 1) == Some(&b'>') => Some(Tag::SelfClosing { end: after + 2 }),
            // Unfinished opening tag at the end of the string: fail-closed.
            None => Some(Tag::Open { name, end: len }),
            Some(b) if b.is_ascii_whitespace() => match self.next_gt(after) {
                Some(gt) if self.bytes.get(gt - 1) == Some(&b'/') => Some(Tag::SelfClosing { end: gt + 1 }),
                Some(gt) => Some(Tag::Open { name, end: gt + 1 }),
                None => Some(Tag::Open { name, end: len }),
            },
            Some(_) => None,
        }
    }

    /// End (exclusive) of the region whose opening tag of `name` ends at `from`.
    fn region_end(&mut self, name: usize, from: usize) -> usize {
        let mut depth = 1usize;
        let mut at = from;
        while let Some(lt) = self.next_lt(at) {
            match self.tag_at(lt) {
                Some(Tag::Open { name: n, end }) if n == name => {
                    depth += 1;
                    at = end;
                }
                Some(Tag::Close { name: n, end }) if n == name => {
                    depth -= 1;
                    if depth == 0 {
                        return end;
                    }
                    at = end;
                }
                _ => at = lt + 1,
            }
        }
        self.bytes.len()
    }

    fn next_lt(&self, from: usize) -> Option<usize> {
        let rest = self.bytes.get(from..)?;
        rest.iter().position(|&b| b == b'<').map(|i| from + i)
    }
}

/// Removes every stripped-tag region; text outside regions is kept byte for byte.
pub fn strip_tags(s: &str) -> Stripped {
    let mut scanner = Scanner::new(s);
    let mut text = String::with_capacity(s.len());
    let mut regions = 0;
    let mut kept_from = 0;
    let mut at = 0;
    while let Some(lt) = scanner.next_lt(at) {
        let region_end = match scanner.tag_at(lt) {
            Some(Tag::Open { name, end }) => scanner.region_end(name, end),
            Some(Tag::SelfClosing { end }) => end,
            // Orphan closing tags and other `<` are text.
            Some(Tag::Close { .. }) | None => {
                at = lt + 1;
                continue;
            }
        };
        // `lt` and `region_end` sit on ASCII bytes or the end, so both are char boundaries.
        text.push_str(&s[kept_from..lt]);
        regions += 1;
        kept_from = region_end;
        at = region_end;
    }
    text.push_str(&s[kept_from..]);
    Stripped { text, regions }
}

/// §4 rule 1: the prompt is exactly one `<task-notification …>…</task-notification>` element.
pub fn is_task_notification(prompt: &str) -> bool {
    const OPEN: &str = "<task-notification";
    const CLOSE: &str = "</task-notification";
    if prompt.chars().nth(TASK_NOTIFICATION_MAX_CHARS).is_some() {
        return false;
    }
    let lower = prompt.trim().to_ascii_lowercase();
    let opens_properly = lower
        .strip_prefix(OPEN)
        .and_then(|rest| rest.bytes().next())
        .is_some_and(|b| b == b'>' || b.is_ascii_whitespace());
    let closes_properly = lower
        .strip_suffix('>')
        .is_some_and(|body| body.trim_end_matches(|c: char| c.is_ascii_whitespace()).ends_with(CLOSE));
    // `CLOSE` does not contain `OPEN`, so each count sees only its own kind of tag.
    opens_properly && closes_properly && lower.matches(OPEN).count() == 1 && lower.matches(CLOSE).count() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T1–T13 (strings; `trim` marks the prompt cases, which are trimmed afterwards).
    #[rustfmt::skip]
    const CASES: [(&str, &str, bool); 14] = [
        ("public content <private>secret stuff</private> more public", "public content  more public", false),
        ("A <private>a<private>b</private>c</private> Z", "A  Z", false),
        ("x <PRIVATE>s</Private> y", "x  y", false),
        ("<private-notes>keep</private-notes>", "<private-notes>keep</private-notes>", false),
        ("<privately>keep", "<privately>keep", false),
        ("a <private note=\"1\">s</private > b", "a  b", false),
        ("before <private>never closed", "before", true),
        ("x </private> y", "x </private> y", false),
        ("<private/>kept", "kept", false),
        ("<system-reminder>r<claude-mem-context>c</claude-mem-context></system-reminder>after", "after", false),
        ("<memd-context>o</memd-context><system_instruction>i</system_instruction>\
          <system-instruction>j</system-instruction><persisted-output>p</persisted-output>done", "done", false),
        ("<private>a <system-reminder>b</private> c</system-reminder> d", "c</system-reminder> d", true),
        ("if a < b then <private>c</private>", "if a < b then", true),
        ("&lt;private&gt;x&lt;/private&gt;", "&lt;private&gt;x&lt;/private&gt;", false),
    ];

    fn strip(s: &str) -> String {
        strip_tags(s).text
    }

    #[test]
    fn conformance_t1_to_t13() {
        for (input, expected, trim) in CASES {
            let stripped = strip(input);
            let actual = if trim { stripped.trim() } else { stripped.as_str() };
            assert_eq!(actual, expected, "{input}");
        }
    }

    #[test]
    fn t14_whole_prompt_private_leaves_nothing() {
        let stripped = strip_tags("<private>all of it</private>");
        assert_eq!(stripped.text.trim(), "");
        assert_eq!(stripped.regions, 1);
    }

    #[test]
    fn keeps_entities_non_ascii_and_counts_regions() {
        assert_eq!(strip("密钥<private>秘密</private>文本"), "密钥文本");
        let stripped = strip_tags("<private>a</private>b<memd-context/>c<private attr='x' />d");
        assert_eq!((stripped.text.as_str(), stripped.regions), ("bcd", 3));
    }

    #[test]
    fn unfinished_opening_tags_fail_closed() {
        assert_eq!(strip("keep <private"), "keep ");
        assert_eq!(strip("keep <private note=\"x"), "keep ");
        assert_eq!(strip("keep <private/"), "keep <private/");
    }

    #[test]
    fn only_same_name_tags_balance() {
        assert_eq!(strip("<private><system-reminder></private>x"), "x");
        assert_eq!(strip("<private a=<private>>b</private>c"), "c");
    }

    #[test]
    fn hostile_input_is_linear() {
        let nested = "<private>".repeat(10_000) + &"</private>".repeat(10_000) + "tail";
        assert_eq!(strip(&nested), "tail");
        let unclosed = "<private x ".repeat(100_000);
        assert_eq!(strip(&unclosed), "");
        let huge = format!("a{}b", "<private>".repeat(5_000_000 / 9));
        assert_eq!(strip(&huge), "a");
        let attributes = format!("<private>{}>b", "<memd-context a ".repeat(200_000));
        assert_eq!(strip(&attributes), "");
        let orphans = "</private>".repeat(200_000);
        assert_eq!(strip(&orphans).len(), orphans.len());
        let many = "<private/>".repeat(1_000);
        assert!(strip_tags(&many).should_warn());
    }

    #[test]
    fn task_notification() {
        assert!(is_task_notification("<task-notification id=\"1\">done</task-notification>"));
        assert!(is_task_notification("  \n<TASK-NOTIFICATION>x</task-notification >\n"));
        assert!(!is_task_notification("hi <task-notification>x</task-notification>"));
        assert!(!is_task_notification("<task-notification>x</task-notification> more"));
        assert!(!is_task_notification(
            "<task-notification>a</task-notification><task-notification>b</task-notification>"
        ));
        assert!(!is_task_notification("<task-notification><task-notification>x</task-notification>"));
        assert!(!is_task_notification("<task-notifications>x</task-notification>"));
        let long = format!("<task-notification>{}</task-notification>", "x".repeat(262_144));
        assert!(!is_task_notification(&long));
        assert!(!is_task_notification(""));
    }
}
