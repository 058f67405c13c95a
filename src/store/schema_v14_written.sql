-- v14 (issue 54): the raw index keeps the text a call *wrote* apart — an edit's new strings, a
-- written file's content, a patch's added lines (src/observer/written.rs) — so search ranks the
-- call that wrote a word above calls that only showed it (a read, a grep, a test log). The table
-- is made again with three columns; every call an observation came from is indexed again by the
-- resumable backfill of v5 (its marker is set back to the start).
DROP TABLE IF EXISTS tool_uses_vocab;
DROP TABLE IF EXISTS tool_uses_fts;
CREATE VIRTUAL TABLE tool_uses_fts USING fts5(
  written, input, response,
  content='', contentless_delete=1,
  tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
);
CREATE VIRTUAL TABLE tool_uses_vocab USING fts5vocab(tool_uses_fts, 'row');
INSERT OR REPLACE INTO meta(key, value) VALUES ('raw_index_backfill_after', '0');
