-- v5: the raw archive is searchable (issue 35). One contentless FTS5 row per tool call, rowid =
-- tool_uses.id, holding the call's terms (src/pipeline/terms.rs: distinct words of its input and
-- response, identifiers whole and split into parts). `_` is a word character here, so
-- `clean_up_tokenization_spaces` stays one token. The terms are written when the observations
-- made from a call are stored (through the queue below; for calls stored before v5, by the
-- backfill after this migration); a deleted call leaves the index through the trigger; `forget`
-- of an observation removes its calls.
CREATE VIRTUAL TABLE tool_uses_fts USING fts5(
  input, response,
  content='', contentless_delete=1,
  tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
);
-- Document frequency per term: the search asks the index only for the query's selective terms.
CREATE VIRTUAL TABLE tool_uses_vocab USING fts5vocab(tool_uses_fts, 'row');
-- Calls waiting to be indexed: a batch's store queues the calls its observations came from, and
-- the queue is drained while no ingest is in flight (src/store/raw_index.rs), so indexing never
-- slows an acknowledgement.
CREATE TABLE raw_index_queue (tool_use_row_id INTEGER PRIMARY KEY);
CREATE TRIGGER tool_uses_fts_ad AFTER DELETE ON tool_uses BEGIN
  DELETE FROM tool_uses_fts WHERE rowid = old.id;
  DELETE FROM raw_index_queue WHERE tool_use_row_id = old.id;
END;
-- Calls stored before v5 are indexed after this migration, resumably: the marker holds the last
-- call id done and is removed when the backfill ends (src/store/raw_index.rs).
INSERT INTO meta(key, value) VALUES ('raw_index_backfill_after', '0');
