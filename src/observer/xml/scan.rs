//! Linear-time tag scanner and text decoding for the tolerant observer-reply parser.
//!
//! The scanner never fails: anything that is not a well-formed tag (`<` + name + attributes + `>`
//! before the next `<`) is text. CDATA sections, comments and `<!…>`/`<?…?>` constructs are
//! skipped as text, so markup inside them never becomes a tag. Every search is bounded so the
//! whole scan is O(n) even on adversarial input (an unterminated `<![CDATA[` is remembered and
//! not searched for again).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TagKind {
    Open,
    SelfClosing,
    Close,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Tag {
    pub kind: TagKind,
    /// Byte offset of `<`.
    pub start: usize,
    /// Byte offset just past `>`.
    pub end: usize,
    /// Byte range of the tag name.
    pub name: (usize, usize),
}

/// A scanned reply: the text and its tags in document order.
pub(super) struct Doc<'a> {
    pub text: &'a str,
    pub tags: Vec<Tag>,
}

const CDATA_OPEN: &str = "<![CDATA[";

/// Root element names of an observer reply (§12 rule 2).
const ROOTS: [&str; 3] = ["observation", "summary", "skip_summary"];

impl<'a> Doc<'a> {
    pub fn scan(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut tags = Vec::new();
        let mut i = 0;
        let mut cdata_unterminated = false;
        let mut comment_unterminated = false;
        while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
            let lt = i + off;
            let rest = &text[lt..];
            if rest.starts_with(CDATA_OPEN) {
                i = skip_to(text, lt, CDATA_OPEN.len(), "]]>", &mut cdata_unterminated);
                continue;
            }
            if rest.starts_with("<!--") {
                i = skip_to(text, lt, 4, "-->", &mut comment_unterminated);
                continue;
            }
            if rest.starts_with("<!") || rest.starts_with("<?") {
                // Declarations and processing instructions: skip to `>` when it comes before `<`.
                i = tag_end(bytes, lt + 2).map_or(lt + 1, |gt| gt + 1);
                continue;
            }
            let (kind, name_start) = if bytes.get(lt + 1) == Some(&b'/') {
                (TagKind::Close, lt + 2)
            } else {
                (TagKind::Open, lt + 1)
            };
            let name_end = name_start
                + bytes[name_start..]
                    .iter()
                    .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
                    .count();
            let starts_well = bytes.get(name_start).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
            let ends_well = bytes
                .get(name_end)
                .is_some_and(|b| matches!(b, b'>' | b'/') || b.is_ascii_whitespace());
            let Some(gt) = (starts_well && ends_well).then(|| tag_end(bytes, name_end)).flatten() else {
                i = lt + 1;
                continue;
            };
            let kind = if kind == TagKind::Open && gt > name_end && bytes[gt - 1] == b'/' {
                TagKind::SelfClosing
            } else {
                kind
            };
            tags.push(Tag {
                kind,
                start: lt,
                end: gt + 1,
                name: (name_start, name_end),
            });
            i = gt + 1;
        }
        Doc { text, tags }
    }

    pub fn name(&self, index: usize) -> &'a str {
        let (a, b) = self.tags[index].name;
        &self.text[a..b]
    }

    pub fn is(&self, index: usize, kind: TagKind, name: &str) -> bool {
        self.tags[index].kind == kind && self.name(index).eq_ignore_ascii_case(name)
    }

    /// First `<name>` in `lo..hi` (tag indices) with its first closing tag after it, also in range.
    pub fn element(&self, lo: usize, hi: usize, name: &str) -> Option<(usize, usize)> {
        let open = (lo..hi).find(|&k| self.is(k, TagKind::Open, name))?;
        let close = (open + 1..hi).find(|&k| self.is(k, TagKind::Close, name))?;
        Some((open, close))
    }

    /// Raw text between an opening and a closing tag.
    pub fn inner(&self, open: usize, close: usize) -> &'a str {
        &self.text[self.tags[open].end..self.tags[close].start]
    }

    /// Raw attribute text of a tag (between the name and `>`/`/>`).
    pub fn attributes(&self, index: usize) -> &'a str {
        let tag = self.tags[index];
        let raw = &self.text[tag.name.1..tag.end - 1];
        raw.strip_suffix('/').unwrap_or(raw)
    }
}

/// Skips a `<![CDATA[`/`<!--` section starting at `lt`; when it is unterminated the opener is text.
fn skip_to(text: &str, lt: usize, open_len: usize, terminator: &str, unterminated: &mut bool) -> usize {
    if !*unterminated {
        match text[lt + open_len..].find(terminator) {
            Some(p) => return lt + open_len + p + terminator.len(),
            None => *unterminated = true,
        }
    }
    lt + 1
}

/// Position of the `>` ending a tag whose name ends at `from`. Quotes are respected, but the
/// search never passes the next `<` (so a broken tag costs at most the distance to it); with an
/// unbalanced quote the first `>` before that `<` is taken.
fn tag_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut quote = None;
    let mut first_gt = None;
    for (j, &b) in bytes.iter().enumerate().skip(from) {
        match (b, quote) {
            (b'<', _) => break,
            (b'>', None) => return Some(j),
            (b'>', Some(_)) => {
                first_gt.get_or_insert(j);
            }
            (b'"' | b'\'', None) => quote = Some(b),
            (q, Some(open)) if q == open => quote = None,
            _ => {}
        }
    }
    first_gt
}

/// Unwraps CDATA sections and decodes the five XML entities and numeric references; everything
/// else (including inner markup) stays as text. Not trimmed.
pub(super) fn decode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    let mut cdata_unterminated = false;
    while let Some(pos) = rest.find(['&', '<']) {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if rest.starts_with(CDATA_OPEN) && !cdata_unterminated {
            if let Some(end) = rest[CDATA_OPEN.len()..].find("]]>") {
                out.push_str(&rest[CDATA_OPEN.len()..CDATA_OPEN.len() + end]);
                rest = &rest[CDATA_OPEN.len() + end + 3..];
                continue;
            }
            cdata_unterminated = true;
        }
        if rest.starts_with('&')
            && let Some((ch, len)) = entity(rest)
        {
            out.push(ch);
            rest = &rest[len..];
            continue;
        }
        // A literal `&` or `<`: both are one byte.
        out.push_str(&rest[..1]);
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
}

/// Decodes an entity at the start of `s` (`&lt;`, `&#60;`, `&#x3C;` …): the char and its length.
fn entity(s: &str) -> Option<(char, usize)> {
    let semi = s.as_bytes().iter().take(12).position(|&b| b == b';')?;
    let body = &s[1..semi];
    let ch = match body {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let digits = body.strip_prefix('#')?;
            let code = match digits.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => digits.parse::<u32>().ok()?,
            };
            char::from_u32(code).filter(|&c| c != '\0')?
        }
    };
    Some((ch, semi + 1))
}

/// Value of attribute `name` (ASCII case-insensitive) in a raw attribute string, decoded.
/// An unterminated quoted value runs to the end of the attribute text.
pub(super) fn attribute(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        let key_len = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
        let key = &rest[..key_len];
        rest = rest[key_len..].trim_start();
        let Some(after_eq) = rest.strip_prefix('=') else {
            // A bare attribute: skip its name (guarantees progress).
            if key_len == 0 {
                rest = &rest[rest.chars().next().map_or(0, char::len_utf8)..];
            }
            continue;
        };
        let after_eq = after_eq.trim_start();
        let (value, remainder) = match after_eq.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = &after_eq[1..];
                match body.find(q) {
                    Some(end) => (&body[..end], &body[end + 1..]),
                    None => (body, ""),
                }
            }
            _ => {
                let end = after_eq.find(char::is_whitespace).unwrap_or(after_eq.len());
                (&after_eq[..end], &after_eq[end..])
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(decode(value));
        }
        rest = remainder;
    }
}

/// Rules 2–3: every root opening tag with the exclusive tag index where its content ends — its
/// matching close tag when one comes before the next opening of the same root, else the next
/// root opening of any kind (salvage of a cut-off element), else the end. One reverse pass.
pub(super) fn root_extents(doc: &Doc<'_>) -> Vec<(usize, usize)> {
    let n = doc.tags.len();
    let mut next_open = [usize::MAX; 3];
    let mut next_close = [usize::MAX; 3];
    let mut next_root = n;
    let mut out = Vec::new();
    for i in (0..n).rev() {
        let Some(r) = ROOTS.iter().position(|root| doc.name(i).eq_ignore_ascii_case(root)) else {
            continue;
        };
        match doc.tags[i].kind {
            TagKind::Close => next_close[r] = i,
            kind => {
                let end = if kind == TagKind::SelfClosing {
                    i + 1
                } else if next_close[r] < next_open[r] {
                    next_close[r]
                } else {
                    next_root
                };
                out.push((i, end));
                next_open[r] = i;
                next_root = i;
            }
        }
    }
    out.reverse();
    out
}
