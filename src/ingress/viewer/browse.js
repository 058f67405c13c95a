
// ---------- browse ----------
async function viewBrowse() {
  const p = params();
  const project = p.get('project');
  const [projects, sessions] = await Promise.all([
    api('/api/projects'),
    api(`/api/sessions?limit=${PAGE}${project ? `&project=${encodeURIComponent(project)}` : ''}${p.get('before') ? `&before=${p.get('before')}` : ''}`),
  ]);
  const side = h('nav', { class: 'side', 'aria-label': 'Projects' }, h('h2', { text: 'Projects' }), h('ul', {},
    h('li', {}, h('a', { href: '#/browse', class: project ? null : 'active', text: 'All projects' })),
    projects.projects.map((name) => h('li', {}, h('a', { href: `#/browse?project=${encodeURIComponent(name)}`, class: name === project ? 'active' : null, text: name })))));
  const items = sessions.items.map((s) => h('li', { tabindex: 0, 'data-href': `#/session/${s.id}`, onclick: () => { location.hash = `#/session/${s.id}`; } },
    h('span', { class: 'badge', text: s.status }),
    h('span', { class: 'title', text: s.title || s.content_session_id }),
    h('span', { class: 'meta', text: `${s.project} · ${s.observations} obs · ${when(s.started_at_epoch)}` })));
  const next = sessions.nextBefore
    ? h('a', { class: 'more', href: `#/browse?${project ? `project=${encodeURIComponent(project)}&` : ''}before=${sessions.nextBefore}`, text: 'Older sessions' }) : null;
  main(h('div', { class: 'cols' }, side, h('section', {}, h('h1', { text: project || 'All sessions' }),
    items.length ? h('ul', { class: 'items' }, items) : h('p', { class: 'empty', text: 'No sessions.' }), next)));
}

async function viewSession(id) {
  const d = await api(`/api/session/${id}`);
  const s = d.session;
  // Titled by its first prompt or summary (issue 37); a missing field is left out, never "null".
  main(h('div', { class: 'card' }, h('h2', { class: 'session-title', text: s.title || `Session ${s.content_session_id}` }),
    kv([['session', s.content_session_id], ['project', s.project], ['platform', s.platform_source], ['status', s.status],
      ['started', when(s.started_at_epoch)]])),
  d.truncated ? h('p', { class: 'meta', text: 'Showing the first 1,000 prompts and observations of this session; search finds the rest.' }) : null,
  itemList(d.items.map((r) => [r.kind, r])));
}

// ---------- the project filter of the feed and the search (issue 37) ----------
// A project picker that keeps the rest of the hash's query (issue 37).
function projectFilter(view, p) {
  const only = p.get('project') || '';
  return h('label', { class: 'project-filter' }, 'Project ',
    h('select', { name: 'project', id: `${view}-project`, onchange: (ev) => {
      const q = new URLSearchParams(p);
      if (ev.target.value) q.set('project', ev.target.value); else q.delete('project');
      location.hash = `#/${view}${q.toString() ? `?${q}` : ''}`;
    } },
    h('option', { value: '', selected: !only, text: 'all projects' }),
    (state.projects || []).map((name) => h('option', { value: name, selected: name === only, text: name }))));
}
