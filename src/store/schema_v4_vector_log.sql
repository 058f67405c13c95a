-- v4: a log of the rows whose documents changed in `vectors`, one entry per inserted, deleted or
-- updated document, keyed by its row (doc_kind, row_id). The worker's in-memory sign-code index
-- (src/vectors/codes.rs) follows `vectors` by re-reading the rows logged since it last looked, in
-- whichever process or transaction they were written. The vector sync trims the oldest entries; an
-- index that finds entries it needed trimmed rebuilds from `vectors`.
CREATE TABLE vectors_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  doc_kind TEXT NOT NULL,
  row_id INTEGER NOT NULL
);
CREATE TRIGGER vectors_log_ai AFTER INSERT ON vectors BEGIN
  INSERT INTO vectors_log(doc_kind, row_id) VALUES (new.doc_kind, new.row_id);
END;
CREATE TRIGGER vectors_log_ad AFTER DELETE ON vectors BEGIN
  INSERT INTO vectors_log(doc_kind, row_id) VALUES (old.doc_kind, old.row_id);
END;
CREATE TRIGGER vectors_log_au AFTER UPDATE ON vectors BEGIN
  INSERT INTO vectors_log(doc_kind, row_id) VALUES (old.doc_kind, old.row_id);
  INSERT INTO vectors_log(doc_kind, row_id) VALUES (new.doc_kind, new.row_id);
END;
