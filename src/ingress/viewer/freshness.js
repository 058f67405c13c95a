
// ---------- freshness (issue 38): stale and superseded marks, contradictions, consolidation log ----------
function freshnessNote(o) {
  const notes = [];
  if (o.stale) {
    notes.push(h('p', { class: 'error', id: 'stale-note',
      text: `Changed since: ${o.stale_file || 'a file it is about'} was changed by commit ${String(o.stale_commit || '').slice(0, 12)}` +
        (o.stale_at ? ` (${o.stale_at})` : '') + '. memd injects it only while nothing newer covers that file.' }));
  }
  if (o.superseded_by) {
    notes.push(h('p', { class: 'error', id: 'superseded-note' }, 'Superseded by ',
      h('a', { href: `#/obs/${o.superseded_by}`, text: `#${o.superseded_by}` }),
      ` (${o.supersede_reason || 'replaced'}); it is no longer injected.`));
  }
  return notes.length ? notes : null;
}

async function resolveContradiction(c, body, what) {
  if (!confirm(`${what}?`)) return;
  try {
    await api(`/api/contradictions/${c.id}/resolve`, { method: 'POST', body });
    toast('Resolved.');
    viewFreshness();
  } catch (e) { toast(e.message); }
}

function contradictionItem(c) {
  const link = (id, title) => h('a', { href: `#/obs/${id}`, text: `#${id} ${title || ''}` });
  return h('li', { class: 'contradiction', 'data-id': c.id },
    h('div', {}, link(c.older_id, c.older_title), ' vs ', link(c.newer_id, c.newer_title)),
    h('span', { class: 'meta', text: `${c.reason} · ${when(c.created_at_epoch)}` }),
    h('div', { class: 'actions' },
      h('button', { class: 'keep-newer', onclick: () => resolveContradiction(c, { keep: c.newer_id }, `Keep #${c.newer_id} and supersede #${c.older_id}`), text: `Keep #${c.newer_id}` }),
      h('button', { class: 'keep-older', onclick: () => resolveContradiction(c, { keep: c.older_id }, `Keep #${c.older_id} and supersede #${c.newer_id}`), text: `Keep #${c.older_id}` }),
      h('button', { class: 'keep-both', onclick: () => resolveContradiction(c, { both: true }, 'Keep both'), text: 'Keep both' }),
      h('button', { class: 'danger forget-older', onclick: () => resolveContradiction(c, { forget: c.older_id }, `Forget #${c.older_id}`), text: `Forget #${c.older_id}` })));
}

function logItem(e) {
  const target = e.observation_id ? h('a', { href: `#/obs/${e.observation_id}`, text: `#${e.observation_id}` }) : '';
  return h('li', { class: `log ${e.action}` },
    h('span', { class: 'badge', text: e.action.replace('_', ' ') }), ' ', target,
    e.other_id ? [' → ', h('a', { href: `#/obs/${e.other_id}`, text: `#${e.other_id}` })] : null,
    h('span', { class: 'meta', text: ` ${e.reason} · ${when(e.at_epoch)}` }),
    h('details', {}, h('summary', { text: 'before / after' }), h('pre', { text: `${e.before || ''}\n→\n${e.after || ''}` })));
}

async function viewFreshness() {
  const [c, log] = await Promise.all([api('/api/contradictions?limit=200'), api('/api/consolidation?limit=200')]);
  main(h('div', {},
    h('div', { class: 'card', id: 'contradictions' },
      h('h2', { text: `Contradictions (${c.items.length} open)` }),
      h('p', { class: 'meta', text: 'Two live memories on the same subject that disagree. Keep one (the other is superseded), keep both, or forget one.' }),
      c.items.length ? h('ul', { class: 'items' }, c.items.map(contradictionItem)) : h('p', { class: 'empty', text: 'No open contradictions.' })),
    h('div', { class: 'card', id: 'consolidation-log' },
      h('h2', { text: 'Consolidation log' }),
      h('p', { class: 'meta', text: 'Every change the consolidation pass made: duplicates merged, relative dates made absolute, chains folded.' }),
      log.entries.length ? h('ul', { class: 'items' }, log.entries.map(logItem)) : h('p', { class: 'empty', text: 'No consolidation has changed anything yet.' }))));
}
