//! Instruction-shaped content (issue 36): text captured from a tool's output, an observer's
//! summary, an import or an agent's own note that reads as an instruction to an agent — an order
//! to ignore earlier instructions, a forged role or system marker, a fence-breaking tag, a
//! directive aimed at the assistant, a request to pipe a download into a shell or send secrets
//! out, an encoded payload run through a shell. Such a record is stored but quarantined: never
//! injected on its own, shown with its reason where it is searched.
//!
//! The text is normalised first — invisible and bidi characters removed, full-width and common
//! Cyrillic/Greek look-alike letters folded to ASCII, lower-cased, spaces collapsed — so
//! `іgnore previous instructions` (Cyrillic і) or `ig\u{200B}nore` read as what they say. Pure;
//! the patterns are checked in order and the first that matches names the reason.

use std::sync::LazyLock;

use regex::Regex;

/// The patterns, each with the reason a quarantined record shows.
const RULES: &[(&str, &str)] = &[
    (
        "override",
        r"\b(ignore|disregard|forget|override|bypass|skip)\s+(all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*(previous|prior|above|earlier|preceding|system|original|existing)\s+(instructions?|directions?|rules|prompts?|guidelines|directives?|messages)",
    ),
    (
        "fence-break",
        r"<\s*/?\s*(system[\s_-]*reminder|memd[\s_-]*(recall|context)|system[\s_-]*prompt|im_start|im_end)\b|\[/?inst\]|<\|im_(start|end)\|>",
    ),
    (
        "role-marker",
        r"(?m)^\s*(human|assistant|system)\s*:|important\s+system\s+(notice|message|instruction|update)|\bnew\s+system\s+prompt\b|#{2,}\s*(system|instructions?)\s*#*\s*$|\bdeveloper\s+mode\s+(enabled|on)\b",
    ),
    (
        "agent-directive",
        r"\b(assistant|claude|ai\s+agent|ai\s+assistant|the\s+agent|the\s+model|llm|coding\s+agent)s?\s*[,:]?\s*(you\s+)?(must|should|shall|need\s+to|are\s+(now\s+)?(required|instructed|ordered)\s+to|have\s+to|will\s+now)\b|\bfrom\s+now\s+on\s*,?\s*(you|always|never|ignore|run|do)\b|\b(before\s+anything\s+else|without\s+(telling|informing|asking)\s+the\s+user|do\s+not\s+(tell|inform|mention\s+(this\s+)?to)\s+the\s+user|silently\s+(run|execute|send|delete))\b",
    ),
    (
        "run-download",
        r"\b(run|execute|please|must|should|now|then|first)\s*:?\s*[`'\x22]?\s*(sudo\s+)?(curl|wget)\s[^\n|]{0,300}\|\s*(sudo\s+)?(ba|z|da)?sh\b",
    ),
    (
        "exfiltration",
        r"\bexfiltrat|\b(send|post|upload|forward|email|leak|copy)\s+(all\s+|the\s+|your\s+|any\s+|every\s+)*(secrets?|credentials?|api[\s_-]*keys?|tokens?|passwords?|\.env|ssh\s+keys?|private\s+keys?|env(ironment)?\s+variables)\b[^\n]{0,80}\b(to|at)\s+(https?://|ftp://|[\w.-]+@|the\s+(attacker|server\s+at))",
    ),
    (
        "encoded-payload",
        r"base64\s+(-d|--decode|-D)\b[^\n]{0,80}\|\s*(ba|z)?sh\b|\beval\s*\(\s*atob\s*\(|\becho\s+[a-z0-9+/=]{60,}\s*\|\s*base64",
    ),
];

static COMPILED: LazyLock<Vec<(&'static str, Option<Regex>)>> =
    LazyLock::new(|| RULES.iter().map(|(name, re)| (*name, Regex::new(re).ok())).collect());

/// Why `text` reads as an instruction to an agent, or None.
pub fn screen(text: &str) -> Option<&'static str> {
    let norm = normalise(text);
    COMPILED
        .iter()
        .find(|(_, re)| re.as_ref().is_some_and(|r| r.is_match(&norm)))
        .map(|(name, _)| *name)
}

/// Characters that change how text reads without being seen: controls (but the newline), bidi
/// embeddings, overrides and isolates, zero-width characters, joiners, the BOM, soft hyphens.
fn invisible(c: char) -> bool {
    (c.is_control() && !c.is_whitespace())
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}')
}

/// A look-alike letter's ASCII twin (Cyrillic and Greek letters that render like Latin ones).
fn fold(c: char) -> char {
    match c {
        'а' | 'α' => 'a',
        'в' | 'β' => 'b',
        'с' | 'ϲ' => 'c',
        'е' | 'ё' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ї' | 'ι' | 'ı' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'м' => 'm',
        'н' | 'η' => 'n',
        'о' | 'ο' | 'σ' => 'o',
        'р' | 'ρ' => 'p',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ѡ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        'ᴢ' => 'z',
        // Full-width ASCII.
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

/// `text` as the patterns read it (see the module header).
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars().filter(|c| !invisible(*c)) {
        let c = fold(c);
        if c == '\n' {
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
            space = false;
        } else if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase().map(fold));
        }
    }
    out
}

#[cfg(test)]
mod tests;
