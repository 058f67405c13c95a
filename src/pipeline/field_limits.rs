//! How long each stored field of an observation and a summary may be, written once: the
//! observer's output bounds (`observer/bounds.rs`), a person's edit (`worker/edit.rs`), a saved
//! memory (`worker/memory.rs`) and a claude-mem import (`import/clean.rs`) all read these.
//! A text field is cut at its `chars`; a list keeps its first `count` items, each cut at
//! `item_chars`.

/// A list column: at most `count` items of at most `item_chars` characters each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimit {
    pub item_chars: usize,
    pub count: usize,
}

/// An observation's type name.
pub const OBS_TYPE_CHARS: usize = 64;
pub const TITLE_CHARS: usize = 200;
pub const SUBTITLE_CHARS: usize = 300;
pub const NARRATIVE_CHARS: usize = 8_000;
pub const FACTS: ListLimit = ListLimit {
    item_chars: 1_000,
    count: 30,
};
pub const CONCEPTS: ListLimit = ListLimit { item_chars: 64, count: 10 };
/// `files_read` and `files_modified`.
pub const FILES: ListLimit = ListLimit {
    item_chars: 1_024,
    count: 100,
};
pub const RELATIONS: ListLimit = ListLimit {
    item_chars: 512,
    count: 20,
};
/// Each field of a session summary (request, investigated, learned, completed, next steps, notes).
pub const SUMMARY_FIELD_CHARS: usize = 4_000;
