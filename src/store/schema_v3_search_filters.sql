-- v3: covering indexes for keyword search (docs/spec/retrieval.md §4.3). A search joins every FTS5 match
-- to its table to apply the filters and read the time; through these indexes (keyed by id, holding
-- every column an indexable filter reads) that join touches small index pages instead of whole rows.
CREATE INDEX observations_search_filter ON observations(id, project, merged_into_project, platform_source, type, created_at_epoch);
CREATE INDEX session_summaries_search_filter ON session_summaries(id, project, merged_into_project, platform_source, created_at_epoch);
CREATE INDEX user_prompts_search_filter ON user_prompts(id, project, platform_source, created_at_epoch);
