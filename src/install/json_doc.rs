//! An order-preserving JSON document for editing other programs' settings files: keys keep their
//! order, numbers keep their text, and printing uses Claude Code's own format (2-space indent,
//! `JSON.stringify(x, null, 2)`), so an untouched part of a file is written back byte for byte.

use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    Null,
    Bool(bool),
    /// The number's source text.
    Num(String),
    Str(String),
    Arr(Vec<Doc>),
    Obj(Vec<(String, Doc)>),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at byte {at}: {what}")]
pub struct ParseError {
    pub at: usize,
    pub what: &'static str,
}

impl Doc {
    pub fn str(s: &str) -> Self {
        Doc::Str(s.to_string())
    }
    pub fn num(n: u64) -> Self {
        Doc::Num(n.to_string())
    }
    pub fn get(&self, key: &str) -> Option<&Doc> {
        match self {
            Doc::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Doc> {
        match self {
            Doc::Obj(fields) => fields.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    /// Sets `key`, in place when present, else appended.
    pub fn set(&mut self, key: &str, value: Doc) {
        if let Doc::Obj(fields) = self {
            match fields.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => fields.push((key.to_string(), value)),
            }
        }
    }
    pub fn remove(&mut self, key: &str) -> Option<Doc> {
        match self {
            Doc::Obj(fields) => {
                let i = fields.iter().position(|(k, _)| k == key)?;
                Some(fields.remove(i).1)
            }
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Doc::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn parse(text: &str) -> Result<Doc, ParseError> {
        let mut p = Parser { s: text.as_bytes(), at: 0 };
        let v = p.value()?;
        p.ws();
        if p.at != p.s.len() {
            return Err(p.err("trailing characters"));
        }
        Ok(v)
    }

    /// 2-space pretty printing, no trailing newline.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = |n: usize| "  ".repeat(n);
        match self {
            Doc::Null => out.push_str("null"),
            Doc::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Doc::Num(n) => out.push_str(n),
            Doc::Str(s) => quote(s, out),
            Doc::Arr(items) if items.is_empty() => out.push_str("[]"),
            Doc::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Doc::Arr(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    item.write(out, depth + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
            Doc::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    quote(k, out);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
        }
    }
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn err(&self, what: &'static str) -> ParseError {
        ParseError { at: self.at, what }
    }
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }
    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.at..].starts_with(lit.as_bytes()) {
            self.at += lit.len();
            true
        } else {
            false
        }
    }
    fn value(&mut self) -> Result<Doc, ParseError> {
        self.ws();
        match self.s.get(self.at) {
            None => Err(self.err("unexpected end")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Doc::Str),
            Some(b't') if self.eat("true") => Ok(Doc::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Doc::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(Doc::Null),
            Some(b) if *b == b'-' || b.is_ascii_digit() => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|b| b"+-.eE".contains(b) || b.is_ascii_digit()) {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).map_err(|_| self.err("number"))?;
                text.parse::<f64>().map_err(|_| self.err("number"))?;
                Ok(Doc::Num(text.to_string()))
            }
            Some(_) => Err(self.err("unexpected character")),
        }
    }
    fn object(&mut self) -> Result<Doc, ParseError> {
        self.at += 1;
        let mut fields = Vec::new();
        self.ws();
        if self.eat("}") {
            return Ok(Doc::Obj(fields));
        }
        loop {
            self.ws();
            if self.s.get(self.at) != Some(&b'"') {
                return Err(self.err("expected a key"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return Err(self.err("expected ':'"));
            }
            let v = self.value()?;
            fields.push((k, v));
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(Doc::Obj(fields));
            }
            return Err(self.err("expected ',' or '}'"));
        }
    }
    fn array(&mut self) -> Result<Doc, ParseError> {
        self.at += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat("]") {
            return Ok(Doc::Arr(items));
        }
        loop {
            items.push(self.value()?);
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(Doc::Arr(items));
            }
            return Err(self.err("expected ',' or ']'"));
        }
    }
    fn hex4(&mut self) -> Result<u32, ParseError> {
        let h = self.s.get(self.at..self.at + 4).ok_or_else(|| self.err("short \\u escape"))?;
        let h = std::str::from_utf8(h).map_err(|_| self.err("bad \\u escape"))?;
        let n = u32::from_str_radix(h, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.at += 4;
        Ok(n)
    }
    fn string(&mut self) -> Result<String, ParseError> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.at) else {
                return Err(self.err("unterminated string"));
            };
            self.at += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|_| self.err("invalid UTF-8")),
                b'\\' => {
                    let Some(&e) = self.s.get(self.at) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF)
                            } else {
                                hi
                            };
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(self.err("unknown escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(b),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_claude_code_format() {
        let text = "{\n  \"b\": 1.50,\n  \"a\": [\n    \"x\\n\\\"y\",\n    {}\n  ],\n  \"c\": [],\n  \"d\": null,\n  \"é\": true\n}";
        let doc = Doc::parse(text).unwrap();
        assert_eq!(doc.pretty(), text);
        assert!(Doc::parse("{").is_err());
        assert!(Doc::parse("{} x").is_err());
    }
}
