
// ---------- work state (issue 39): each project's task, items and notes, as the next session sees them ----------
async function markDone(s, item) {
  try {
    await api('/api/work-state', { method: 'POST', body: { project: s.project, branch: s.branch, items: [{ key: item.key, text: item.text, status: 'done' }] } });
    toast(`${item.key} done.`);
    viewWork();
  } catch (e) { toast(e.message); }
}

function workItem(s, item) {
  return h('li', { class: `work-item ${item.status}`, 'data-key': item.key },
    h('span', { class: 'badge', text: item.status }), ' ', h('strong', { text: item.key }), ` ${item.text}`,
    h('span', { class: 'meta', text: ` · updated ${when(item.updatedAt)}` }),
    item.status === 'done' ? null : h('button', { class: 'mark-done', onclick: () => markDone(s, item), text: 'Done' }));
}

function workCard(s) {
  const open = s.items.filter((i) => i.status !== 'done');
  const done = s.items.filter((i) => i.status === 'done');
  return h('div', { class: 'card work-state', 'data-project': s.project },
    h('h2', { text: `${s.project}${s.branch ? ` · ${s.branch}` : ''}` }),
    h('p', { class: 'meta', text: `updated ${when(s.updatedAt)} · ${open.length} open, ${done.length} done` }),
    s.task ? h('p', { class: 'task', text: `Task: ${s.task}` }) : null,
    open.length ? h('ul', { class: 'items open' }, open.map((i) => workItem(s, i))) : null,
    done.length ? h('details', {}, h('summary', { text: `${done.length} done` }), h('ul', { class: 'items done' }, done.map((i) => workItem(s, i)))) : null,
    s.notes ? h('p', { class: 'notes', text: `Notes: ${s.notes}` }) : null);
}

async function viewWork() {
  const v = await api('/api/work-state');
  main(h('div', { id: 'work' },
    h('p', { class: 'meta', text: 'What agents recorded with work_state_write: the next session of each project (and git branch) starts from its open items.' }),
    v.states.length ? v.states.map(workCard) : h('p', { class: 'empty', text: 'No work state recorded yet.' })));
}
