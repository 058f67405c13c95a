
// ---------- team memory (issue 40): the sync with the team's PostgreSQL server, on the status page ----------
function teamCard(t) {
  const slot = h('div', { class: 'team-work-slot' });
  api('/api/team').then((v) => { const list = teamWork(v.work); if (list) slot.append(h('h3', { text: "Teammates' work" }), list); }).catch(() => {});
  return h('div', { class: 'card team' }, h('h2', { text: 'Team' }),
    kv([['state', t.state], ['origin', t.origin], ['projects', (t.projects || []).join(', ') || 'none shared'],
      ['last push', t.last_push_at || 'never'], ['last pull', t.last_pull_at || 'never'], ['lag', t.lag], ['queue', t.queue],
      ['pushed', t.pushed], ['pulled', t.pulled], ['forgets refused', t.tombstones_refused], ['server schema', t.schema_version]]),
    t.last_error ? h('p', { class: 'error', text: `last error: ${t.last_error}` }) : null, slot);
}

// Teammates' work states: each origin's task and open items.
function teamWork(work) {
  if (!work || !work.length) return null;
  return h('ul', { class: 'team-work' }, work.map((w) => h('li', {},
    h('strong', { text: `${w.origin} · ${w.project}${w.branch ? ` (${w.branch})` : ''}` }), ` ${w.task || 'no task'}`,
    h('ul', {}, (w.items || []).filter((i) => i.status !== 'done').map((i) => h('li', { text: `${i.key} [${i.status}] ${i.text}` }))))));
}
