-- v6: provenance and quarantine (issue 36). Every observation says where its content came from —
-- `user` (the user's prompt or `memd remember`), `agent` (an agent's own `save_memory`),
-- `observer` (an LLM's summary of tool calls), `tool_output` (extracted from tool output by the
-- deterministic observer), `import` (with `imported_from` naming the source) — and whether it was
-- quarantined at write time as instruction-shaped (src/pipeline/instruction.rs), with the reason.
-- Rows stored before v6 take the provenance their `origin` implies (a manual memory: `user`) and
-- are screened by the worker after migrating (src/store/quarantine.rs). A summary's provenance
-- follows its origin.
ALTER TABLE observations ADD COLUMN provenance TEXT NOT NULL DEFAULT 'observer'
  CHECK (provenance IN ('user','agent','observer','tool_output','import'));
ALTER TABLE observations ADD COLUMN imported_from TEXT;
ALTER TABLE observations ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0,1));
ALTER TABLE observations ADD COLUMN quarantine_reason TEXT;
UPDATE observations SET provenance = CASE origin
  WHEN 'extractive' THEN 'tool_output' WHEN 'import' THEN 'import' WHEN 'manual' THEN 'user' ELSE 'observer' END;
UPDATE observations SET imported_from = 'claude-mem' WHERE origin = 'import';
CREATE INDEX observations_quarantined ON observations(quarantined, id) WHERE quarantined = 1;

ALTER TABLE session_summaries ADD COLUMN provenance TEXT GENERATED ALWAYS AS (CASE origin
  WHEN 'extractive' THEN 'tool_output' WHEN 'import' THEN 'import' ELSE 'observer' END) VIRTUAL;
ALTER TABLE session_summaries ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0,1));
ALTER TABLE session_summaries ADD COLUMN quarantine_reason TEXT;
CREATE INDEX session_summaries_quarantined ON session_summaries(quarantined, id) WHERE quarantined = 1;

-- Rows stored before v6 are screened once after the migration (the marker is removed when done).
INSERT INTO meta(key, value) VALUES ('quarantine_screen_after', '0');
