
// ---------- team memory (issue 40): the sync with the team's PostgreSQL server, on the status page ----------
function teamCard(t) {
  return h('div', { class: 'card team' }, h('h2', { text: 'Team' }),
    kv([['state', t.state], ['origin', t.origin], ['projects', (t.projects || []).join(', ') || 'none shared'],
      ['last push', t.last_push_at || 'never'], ['last pull', t.last_pull_at || 'never'], ['lag', t.lag], ['queue', t.queue],
      ['pushed', t.pushed], ['pulled', t.pulled], ['forgets refused', t.tombstones_refused], ['server schema', t.schema_version]]),
    t.last_error ? h('p', { class: 'error', text: `last error: ${t.last_error}` }) : null);
}
