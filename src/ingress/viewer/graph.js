
// ---------- an entity's neighbourhood in the graph (issue 41): GET /api/related ----------
function relatedLink(entity, project) {
  return h('a', { class: 'related-link', href: `#/related?entity=${encodeURIComponent(entity)}${project ? `&project=${encodeURIComponent(project)}` : ''}`, text: entity });
}

function neighbour(n, asked, project) {
  const edge = n.direction === 'out' ? [asked, ` ${n.relation} `, relatedLink(n.entity, project)] : [relatedLink(n.entity, project), ` ${n.relation} `, asked];
  return h('li', { class: `neighbour ${n.relation}`, 'data-entity': n.entity },
    h('span', { class: 'badge', text: n.kind }), ' ', ...edge,
    n.stale ? h('span', { class: 'badge stale', text: 'stale' }) : null,
    h('span', { class: 'meta' }, ` · ${n.strength} observation(s): `,
      n.evidence.slice(0, 8).map((id) => [h('a', { href: `#/obs/${id}`, text: `#${id}` }), ' ']), ` · last ${when(Date.parse(n.last_seen))}`));
}

async function viewRelated() {
  const p = params();
  const entity = p.get('entity') || '';
  const project = p.get('project') || '';
  const form = h('form', { class: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const v = new FormData(ev.target).get('entity');
    location.hash = `#/related?entity=${encodeURIComponent(v)}${project ? `&project=${encodeURIComponent(project)}` : ''}`;
  } }, h('input', { name: 'entity', id: 'entity', value: entity, placeholder: 'a file, symbol, command or error' }), h('button', { type: 'submit', text: 'Show' }));
  if (!entity) { main(h('h1', { text: 'Related' }), form); return; }
  const r = await api(`/api/related?entity=${encodeURIComponent(entity)}${project ? `&project=${encodeURIComponent(project)}` : ''}&limit=50`);
  const list = r.related.length ? h('ul', { class: 'items related', id: 'related' }, r.related.map((n) => neighbour(n, entity, project)))
    : h('p', { class: 'empty', text: 'Nothing related has been observed yet.' });
  main(h('h1', { text: `Related to ${entity}` }), form,
    h('p', { class: 'meta', text: r.matched.map((m) => `${m.kind} ${m.name} (${m.project})`).join(' · ') }), list);
}
