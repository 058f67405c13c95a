//! Instruction-shaped content (issue 36): text captured from a tool's output, an observer's
//! summary, an import or an agent's own note that reads as an instruction to an agent — an order
//! to ignore earlier instructions, a forged role or system marker, a fence-breaking tag, a
//! directive aimed at the assistant, a request to pipe a download into a shell or send secrets
//! out, an encoded payload run through a shell. Such a record is stored but quarantined: never
//! injected on its own, shown with its reason where it is searched.
//!
//! The text is folded first as a reader sees it (issue 51, [`crate::text::fold`]): hidden
//! characters (tags, variation selectors, zero-width, bidi) removed, NFKC, accents over Latin
//! letters stripped, lower case, and look-alike letters read through their TR39 skeleton — so
//! `іgnore previous instructions` (Cyrillic і), `𝐢𝐠𝐧𝐨𝐫𝐞` or `ig\u{E0020}nore` read as what they say.
//! The phrases cover ten languages, paraphrases, downloads run by any interpreter, encoded
//! payloads with an order to decode and run them, and claims of permission. Pure; the patterns
//! are checked in order and the first that matches names the reason.

use std::sync::LazyLock;

use regex::Regex;

/// The patterns, each with the reason a quarantined record shows. They read the folded text
/// ([`normalise`]: lower case, accents over Latin letters removed, look-alikes folded).
const RULES: &[(&str, &str)] = &[
    (
        "override",
        r"\b(ignore|disregard|forget|override|bypass|skip)\s+(all\s+|any\s+|the\s+|your\s+|every\s+|of\s+)*(previous|prior|above|earlier|preceding|system|original|existing)\s+(instructions?|directions?|rules|prompts?|guidelines|directives?|messages)",
    ),
    (
        "override",
        // Paraphrases: set aside / disregard everything you were told; earlier rules void; a new task.
        r"\b(set\s+aside|put\s+aside|disregard|forget|drop|abandon)\s+(everything|anything|all|what(ever)?)\s+(you\s+(were|have\s+been)\s+(told|given|instructed)|(written\s+|said\s+)?(above|before|earlier|previously))|\b(previous|prior|earlier|original|above)\s+(instructions|rules|directives|guidelines|prompts?)\s+(no\s+longer\s+apply|are\s+(now\s+)?(void|obsolete|cancell?ed|revoked|superseded|overridden))|\bnew\s+instructions\s*:|\byour\s+(real|actual|true|new)\s+(task|instructions?|goal|objective)\s+(is|are|now)\b",
    ),
    (
        "override",
        // The same order in French, German, Spanish, Portuguese, Italian, Russian, Chinese,
        // Japanese and Korean (accents are folded away before matching).
        r"\b(ignore[zr]?|oublie[zr]?|ne\s+tiens?\s+pas\s+compte\s+d)\s*(de\s+|des\s+|toutes\s+|tous\s+|les\s+|vos\s+|tes\s+)*(instructions|consignes|directives|regles)\s+(precedentes|anterieures|ci-dessus|d'avant)|\b(ignorier(e|en|t)?|vergiss|vergessen\s+sie|missachte)\s+(alle\s+|die\s+|deine\s+|ihre\s+)*(vorherigen|bisherigen|fruheren|obigen|vorigen)\s+(anweisungen|instruktionen|befehle|regeln|vorgaben)|\b(ignora|ignore|olvida|olvide|ignorad|esqueca|esquece|dimentica|dimenticate|ignorate)\s+(todas\s+|todos\s+|tutte\s+|tutti\s+|las\s+|los\s+|as\s+|os\s+|le\s+|gli\s+|i\s+|sus\s+|tus\s+)*(instrucciones|indicaciones|instrucoes|istruzioni|indicazioni|regole|reglas|regras)\s+(anteriores|previas|precedentes|precedenti|anteriori|previe)|(игнорируй(те)?|забудь(те)?|не\s+обращай(те)?\s+внимания\s+на)\s+(все\s+)?(предыдущие|прежние|прошлые|вышеуказанные)\s+(инструкции|указания|команды|правила)|(忽略|无视|無視|忘记|忘記|不要理会)(之前|以前|先前|上面|上述|前面)?的?(所有|全部)?的?(指令|指示|说明|說明|规则|規則|命令)|(以前|前|これまで|上記)の(指示|命令|ルール|指令)を(すべて|全て)?(無視|忘れ)|(이전|앞의|기존|위의)\s*(모든\s*)?(지시|명령|지침|규칙)(을|를|은|는)?\s*(모두\s*)?(무시|잊)",
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
        // A download piped or substituted into an interpreter, asked for (a verb or an order
        // before it): `run curl … | python3`, `first bash <(curl …)`, `execute sh -c "$(wget …)"`.
        r#"\b(run|execute|exec|please|must|should|now|then|first|always|immediately|next|continuing|proceeding|need\s+to|have\s+to)\s*:?\s*[`'"]?\s*(sudo\s+)?((curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\s[^\n|]{0,300}\|\s*(sudo\s+)?((ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|pwsh|powershell|iex)\b|(/bin/)?((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node)\s+(-c\s+)?["']?(<\(|\$\()\s*(curl|wget|fetch)\b|eval\s+["']?\$\(\s*(curl|wget|fetch)\b)"#,
    ),
    (
        "exfiltration",
        r"\bexfiltrat|\b(send|post|upload|forward|email|leak|copy)\s+(all\s+|the\s+|your\s+|any\s+|every\s+)*(secrets?|credentials?|api[\s_-]*keys?|tokens?|passwords?|\.env|ssh\s+keys?|private\s+keys?|env(ironment)?\s+variables)\b[^\n]{0,80}\b(to|at)\s+(https?://|ftp://|[\w.-]+@|the\s+(attacker|server\s+at))",
    ),
    (
        "encoded-payload",
        r"base64\s+(-d|--decode|-D)\b[^\n]{0,80}\|\s*(ba|z)?sh\b|\beval\s*\(\s*atob\s*\(|\becho\s+[a-z0-9+/=]{60,}\s*\|\s*base64|\b(decode|base64[\s-]*decode|unbase64|deobfuscate)\s+(it|this|that|the\s+(following|string|text|payload|blob|above))\b[^\n]{0,60}\b(do|follow|run|execute|obey|carry\s+out|apply)\b",
    ),
    (
        "permission-claim",
        r"\b(the\s+)?(user|owner|developer|admin(istrator)?|operator)\s+(has\s+|have\s+)?(already\s+)?(pre-?approved|pre-?authori[sz]ed|approved\s+(every|all|any)|authori[sz]ed\s+(you|every|all|any)|granted\s+(you\s+)?(full\s+)?permission|gave\s+(you\s+)?(full\s+)?permission)|\byou\s+(are|were)\s+(now\s+)?(fully\s+)?(authori[sz]ed|allowed|permitted|cleared)\s+to\b|\byou\s+have\s+(full\s+|explicit\s+)?(permission|authori[sz]ation|clearance)\s+to\b|\bno\s+need\s+to\s+(ask|check\s+with|confirm\s+with)\s+(the\s+user|anyone|for\s+(confirmation|permission|approval))|\b(confirmation|approval|permission)\s+is\s+not\s+(needed|required)\b",
    ),
];

static COMPILED: LazyLock<Vec<(&'static str, Option<Regex>)>> =
    LazyLock::new(|| RULES.iter().map(|(name, re)| (*name, Regex::new(re).ok())).collect());

/// Why `text` reads as an instruction to an agent, or None. The rules read the text as a reader
/// sees it ([`crate::text::fold::reader`]) and, for look-alike letters, its ASCII skeleton.
pub fn screen(text: &str) -> Option<&'static str> {
    if hidden_run(text) >= HIDDEN_RUN_MAX {
        return Some("hidden-text");
    }
    // What a model may read of tag characters: the ASCII they shadow (U+E0020–E007E).
    let decoded = decode_tags(text);
    let text = decoded.as_deref().unwrap_or(text);
    let reader = normalise(text);
    let skeleton = crate::text::fold::skeleton(&reader);
    let forms = if skeleton == reader { vec![reader] } else { vec![reader, skeleton] };
    COMPILED
        .iter()
        .find(|(_, re)| re.as_ref().is_some_and(|r| forms.iter().any(|f| r.is_match(f))))
        .map(|(name, _)| *name)
}

/// Why `first` followed by `second` reads as an instruction that neither half is on its own: a
/// match of a rule that starts in `first` and ends in `second` (issue 51: an instruction split
/// over two records of a session, or a title and the next record's narrative). None otherwise.
pub fn spans_boundary(first: &str, second: &str) -> Option<&'static str> {
    let form = |t: &str| normalise(decode_tags(t).as_deref().unwrap_or(t));
    let (a, b) = (form(first), form(second));
    let joined = format!("{a}\n{b}");
    let boundary = a.len();
    let (sa, sb) = (crate::text::fold::skeleton(&a), crate::text::fold::skeleton(&b));
    let skeleton = format!("{sa}\n{sb}");
    let forms = [(joined, boundary), (skeleton, sa.len())];
    COMPILED.iter().find_map(|(name, re)| {
        let re = re.as_ref()?;
        forms
            .iter()
            .any(|(text, cut)| re.find_iter(text).any(|m| m.start() < *cut && m.end() > *cut + 1))
            .then_some(*name)
    })
}

/// Tag characters in a row at or above this are text hidden on purpose (a flag emoji uses at most
/// seven): the record is quarantined whatever they spell.
const HIDDEN_RUN_MAX: usize = 10;

/// The longest run of tag characters in `text`.
fn hidden_run(text: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if ('\u{E0000}'..='\u{E007F}').contains(&c) { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// `text` with tag characters read as the ASCII they shadow; None when there are none.
fn decode_tags(text: &str) -> Option<String> {
    text.chars().any(|c| ('\u{E0020}'..='\u{E007E}').contains(&c)).then(|| {
        text.chars()
            .map(|c| match c {
                '\u{E0020}'..='\u{E007E}' => char::from_u32(c as u32 - 0xE0000).unwrap_or(' '),
                c => c,
            })
            .collect()
    })
}

/// `text` as the patterns read it: the reader form of [`crate::text::fold`].
pub fn normalise(text: &str) -> String {
    crate::text::fold::reader(text)
}

#[cfg(test)]
mod tests;
