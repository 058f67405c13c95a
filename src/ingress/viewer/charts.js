
// ---------- status charts (GET /api/charts): axes, values, a legend ----------
// LLM tokens (what counts against the daily budget) are drawn apart from the local embedding
// model's tokens, which cost nothing; a day with nothing draws no bar.
function barChart(label, rows, unit, cls, budget) {
  const W = 600, H = 140, left = 56, bottom = 18;
  const values = rows.map((r) => r.count);
  const max = Math.max(1, ...values, budget || 0);
  const el = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H + bottom}`, role: 'img', 'aria-label': label });
  const text = (x, y, s, anchor) => { const t = svg('text', { x, y, 'text-anchor': anchor || 'start' }); t.textContent = s; el.append(t); };
  el.append(svg('line', { class: 'axis', x1: left, y1: 0, x2: left, y2: H }));
  el.append(svg('line', { class: 'axis', x1: left, y1: H, x2: W, y2: H }));
  text(left - 4, 10, max.toLocaleString(), 'end');
  text(left - 4, H, '0', 'end');
  const w = (W - left) / Math.max(rows.length, 1);
  rows.forEach((r, i) => {
    if (r.count <= 0) return;
    const hh = (r.count / max) * H;
    const bar = svg('rect', { class: cls, x: left + i * w + 1, y: H - hh, width: Math.max(w - 2, 1), height: hh });
    const tip = svg('title', {}); tip.textContent = `${r.day || r.label}: ${r.count.toLocaleString()} ${unit}`; bar.append(tip);
    el.append(bar);
  });
  if (budget) {
    const y = H - (budget / max) * H;
    el.append(svg('line', { class: 'budget', x1: left, y1: y, x2: W, y2: y }));
    text(W - 2, y - 3, `daily budget ${budget.toLocaleString()}`, 'end');
  }
  if (rows.length) {
    text(left, H + 14, rows[0].day || rows[0].label);
    text(W, H + 14, rows[rows.length - 1].day || rows[rows.length - 1].label, 'end');
  }
  const total = values.reduce((a, b) => a + b, 0);
  return h('figure', { class: 'chart-box' }, el,
    h('figcaption', {}, h('span', { class: `swatch ${cls}` }), ` ${label}: ${total.toLocaleString()} ${unit} in all`,
      total ? `, most ${Math.max(...values).toLocaleString()} in a day` : ' (none yet)'));
}

function projectBars(items) {
  if (!items.length) return h('p', { class: 'empty', text: 'no memories yet' });
  const max = Math.max(1, ...items.map((p) => p.count));
  return h('div', { class: 'hbars', role: 'img', 'aria-label': 'memories per project' },
    items.map((p) => {
      const bar = h('span', { class: 'bar' });
      bar.style.width = `${Math.max(2, (p.count / max) * 70)}%`; // CSSOM: the CSP allows no style attribute
      return h('div', { class: 'hbar' }, h('span', { class: 'name', text: p.project }), bar, h('span', { class: 'n', text: p.count.toLocaleString() }));
    }));
}

// Issue 53: what memd put in front of the agent, and what the agent used, per source and project.
function memoryUse(u) {
  const sources = ['index', 'prompt', 'file', 'action'];
  const projects = Object.keys((u && u.projects) || {});
  if (!projects.length) return h('p', { class: 'empty', text: 'nothing injected yet' });
  const cell = (c) => h('td', { text: c ? `injected ${c.injected.toLocaleString()}, used ${c.used.toLocaleString()}` : '–' });
  return h('table', { class: 'use' },
    h('thead', {}, h('tr', {}, h('th', { text: 'project' }), ...sources.map((s) => h('th', { text: s })))),
    h('tbody', {}, h('tr', {}, h('td', { text: 'all' }), ...sources.map((s) => cell(u.sources[s]))),
      ...projects.map((p) => h('tr', {}, h('td', { text: p }), ...sources.map((s) => cell(u.projects[p][s]))))));
}

function statusCharts(c) {
  const o = c.observer || {};
  const lat = (o.latency_ms && o.latency_ms.recent) || [];
  const latRows = lat.map((ms, i) => ({ label: `call ${i + 1}`, count: ms }));
  const card = (title, ...kids) => h('div', { class: 'card wide' }, h('h2', { text: title }), ...kids);
  return [
    card('Captured tool calls per day', barChart('captured calls', c.captures_per_day, 'calls', 'in')),
    card('Observer tokens per day', barChart('LLM tokens (count against the budget)', c.llm_tokens_per_day, 'tokens', 'out', o.budget),
      barChart('local embedding tokens (no cost)', c.embedding_tokens_per_day, 'tokens', 'embed'),
      h('p', { class: 'muted', text: `today: ${(o.tokens_today || 0).toLocaleString()} LLM tokens in ${o.calls_today || 0} calls · observer ${o.provider || '?'}${o.model && o.model !== o.provider ? ` (${o.model})` : ''}` })),
    card('Observer latency, last calls', lat.length ? barChart('latency per call', latRows, 'ms', 'in')
      : h('p', { class: 'empty', text: 'no observer calls since the worker started' })),
    card('Memories per project', projectBars(c.memories_per_project || [])),
    card('Memory use (injected, used by the agent)', memoryUse(c.memory_use)),
  ];
}
