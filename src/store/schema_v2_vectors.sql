-- v2: vector bookkeeping for two targets at once (the embedded index `sqlite` is always kept; a
-- Chroma target `chroma:<collection>` mirrors it) and the sqlite-vec garbage list.
--
-- A replaced summary is re-embedded for `sqlite` as well as for the Chroma target named in
-- meta.vector_target (v1's trigger only queued the latter).
DROP TRIGGER session_summaries_vec_au;
CREATE TRIGGER session_summaries_vec_au AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON session_summaries BEGIN
  DELETE FROM vectors WHERE doc_kind = 'summary' AND row_id = new.id;
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    VALUES ('sqlite', 'summary', new.id, 'pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER));
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    SELECT value, 'summary', new.id, 'pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
    FROM meta WHERE key = 'vector_target' AND value LIKE 'chroma:%';
END;

-- Documents removed from `vectors` whose sqlite-vec entries (`vectors_vec`, a virtual table that
-- exists only where the extension loads) are still to be deleted by the VectorSync actor.
CREATE TABLE vectors_vec_gc (doc_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER vectors_ad AFTER DELETE ON vectors BEGIN
  INSERT OR IGNORE INTO vectors_vec_gc(doc_id) VALUES (old.doc_id);
END;
