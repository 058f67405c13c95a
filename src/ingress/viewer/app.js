// memd viewer: a dependency-free single-page app over the worker's own API (docs/spec/viewer.md).
// Every stored text is inserted with textContent, never as HTML. Mutating requests carry the
// session's CSRF token; the session itself is an HttpOnly cookie this script cannot read.
'use strict';

const CSRF = document.querySelector('meta[name=csrf]').content;
const TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'security_alert', 'security_note'];
const PAGE = 50;
// A page left open for days keeps this many items (live ones push out the oldest); 'Load older'
// fetches the rest, and what it fetched stays.
const FEED_MAX = 500;
const perf = (window.memdPerf = { firstRender: null, searches: [], liveLatency: [] });
const state = { feed: [], seen: new Set(), feedNext: null, feedCap: FEED_MAX, view: null, cache: new Map(), sse: null };

// ---------- helpers ----------
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

function svg(tag, attrs) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

async function api(path, opts = {}) {
  const init = { method: opts.method || 'GET', credentials: 'same-origin', headers: {} };
  if (init.method !== 'GET') init.headers['X-CSRF-Token'] = CSRF;
  if (opts.body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  if (!r.ok) {
    const detail = (data && data.detail) || r.statusText;
    if (r.status === 401) toast('Session ended: run `memd open` for a new link.');
    throw new Error(`${r.status}: ${detail}`);
  }
  return data;
}

// A list column: an array (memd's own routes) or a string holding one (claude-mem-compatible rows).
function list(s) {
  if (Array.isArray(s)) return s;
  try { const v = JSON.parse(s || '[]'); return Array.isArray(v) ? v : []; } catch (_) { return []; }
}

function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) + ' ' +
    d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

function bytes(n) {
  if (n === null || n === undefined) return '–';
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
}

let toastTimer = 0;
function toast(msg) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 3000);
}

function main(...kids) {
  const m = document.getElementById('main');
  // replaceChildren writes a null as the text "null": leave out what a view did not show.
  m.replaceChildren(...kids.filter((k) => k !== null && k !== undefined && k !== false));
  return m;
}

function params() {
  const q = location.hash.split('?')[1] || '';
  return new URLSearchParams(q);
}

// ---------- records ----------
function titleOf(kind, r) {
  if (kind === 'observation') return r.title || r.subtitle || `Observation #${r.id}`;
  if (kind === 'summary') return r.request || 'Session summary';
  return r.prompt_text || `Prompt ${r.prompt_number}`;
}

function remember(kind, r) {
  state.cache.set(`${kind}:${r.id}`, r);
}

// What a card shows under an observation's title: its subtitle, first facts, concepts and files.
function cardBody(kind, r) {
  if (kind !== 'observation') return null;
  const facts = list(r.facts).slice(0, 3);
  const tags = [...list(r.concepts).map((c) => h('span', { class: 'chip', text: c })),
    ...[...new Set([...list(r.files_modified), ...list(r.files_read)])].slice(0, 4).map((f) => h('code', { class: 'file', text: f }))];
  if (!r.subtitle && !facts.length && !tags.length) return null;
  return h('div', { class: 'card-body' }, r.subtitle ? h('div', { class: 'subtitle', text: r.subtitle }) : null,
    facts.length ? h('ul', { class: 'facts' }, facts.map((f) => h('li', { text: f }))) : null,
    tags.length ? h('div', { class: 'tags' }, tags) : null);
}

function row(kind, r, extra = {}) {
  remember(kind, r);
  const href = kind === 'observation' ? `#/obs/${r.id}` : `#/record/${kind}/${r.id}`;
  const badge = kind === 'observation' ? r.type : kind;
  return h('li', { tabindex: 0, class: extra.cls || null, 'data-href': href, 'data-key': `${kind}:${r.id}`,
    onclick: () => { location.hash = href; } },
  h('span', { class: `badge ${kind}`, text: badge }),
  h('span', { class: 'title', text: titleOf(kind, r) }),
  r.quarantined ? h('span', { class: 'badge quarantined', text: 'quarantined' }) : null,
  h('span', { class: 'meta', text: `${r.project || ''} · ${r.provenance || 'user'} · ${when(r.created_at_epoch)}` }),
  cardBody(kind, r));
}

function itemList(items) {
  if (!items.length) return h('p', { class: 'empty', text: 'Nothing here yet.' });
  return h('ul', { class: 'items' }, items.map(([kind, r, extra]) => row(kind, r, extra)));
}

// ---------- live feed ----------
function connect() {
  if (state.sse) state.sse.close();
  const es = new EventSource('/stream');
  state.sse = es;
  const live = document.getElementById('live');
  es.onopen = () => { live.textContent = '● live'; live.classList.add('on'); };
  es.onerror = () => { live.textContent = '○ reconnecting'; live.classList.remove('on'); };
  es.onmessage = (m) => {
    let e;
    try { e = JSON.parse(m.data); } catch (_) { return; }
    const add = { new_observation: ['observation', e.observation], new_summary: ['summary', e.summary], new_prompt: ['prompt', e.prompt] }[e.type];
    if (!add) return;
    const [kind, r] = add;
    if (e.timestamp && r.created_at_epoch) perf.liveLatency.push(e.timestamp - r.created_at_epoch);
    pushFeed(kind, r, true);
  };
}

function pushFeed(kind, r, fresh) {
  const key = `${kind}:${r.id}`;
  if (state.seen.has(key)) return;
  state.seen.add(key);
  state.feed.unshift([kind, r]);
  const only = params().get('project');
  if (state.view === 'feed' && !(only && r.project !== only)) {
    const ul = document.querySelector('#main ul.items');
    if (ul) ul.prepend(row(kind, r, { cls: fresh ? 'fresh' : null }));
    else renderFeed();
  }
  trimFeed();
}

function trimFeed() {
  if (state.feed.length <= state.feedCap) return;
  for (const [kind, r] of state.feed.splice(state.feedCap)) { state.seen.delete(`${kind}:${r.id}`); state.cache.delete(`${kind}:${r.id}`); }
  const oldest = state.feed.filter(([k]) => k === 'observation').map(([, r]) => r.id);
  if (oldest.length) state.feedNext = Math.min(...oldest);
  const ul = document.querySelector('#main ul.items');
  if (state.view === 'feed' && ul) while (ul.children.length > state.feedCap) ul.lastElementChild.remove();
}

async function loadFeedPage() {
  const q = state.feedNext ? `&before=${state.feedNext}` : '';
  const page = await api(`/api/observations?limit=${PAGE}${q}`);
  for (const o of page.items) {
    const key = `observation:${o.id}`;
    if (state.seen.has(key)) continue;
    state.seen.add(key);
    state.feed.push(['observation', o]);
  }
  state.feedNext = page.nextBefore;
  state.feedLoaded = true;
  state.feedCap = Math.max(state.feedCap, state.feed.length); // pages asked for stay
}

async function viewFeed() {
  if (!state.feedLoaded) await loadFeedPage();
  state.projects = (await api('/api/projects')).projects;
  renderFeed();
}

function renderFeed() {
  const p = params();
  const only = p.get('project');
  const items = only ? state.feed.filter(([, r]) => r.project === only) : state.feed;
  const more = state.feedNext ? h('button', { class: 'more', onclick: async () => { await loadFeedPage(); renderFeed(); } }, 'Load older') : null;
  main(h('h1', { text: 'Live feed' }), projectFilter('feed', p), itemList(items), more);
}

// ---------- search ----------
function searchForm(p) {
  const field = (label, name, attrs = {}) => h('label', {}, label, h('input', { name, value: p.get(name) || '', ...attrs }));
  const sel = (label, name, options) => h('label', {}, label, h('select', { name },
    options.map(([v, t]) => h('option', { value: v, selected: (p.get(name) || '') === v, text: t }))));
  return h('form', { class: 'filters', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(ev.target)) if (v) q.set(k, v);
    performance.mark('memd-search-start');
    location.hash = `#/search?${q}`;
  } },
  field('Search', 'query', { type: 'search', id: 'q', placeholder: 'words, files, errors…', autocomplete: 'off' }),
  sel('Kind', 'kind', [['', 'everything'], ['observations', 'observations'], ['sessions', 'summaries'], ['prompts', 'prompts']]),
  sel('Type', 'obs_type', [['', 'any type'], ...TYPES.map((t) => [t, t])]),
  field('Concept', 'concept'), field('File', 'file'),
  sel('Project', 'project', [['', 'all projects'], ...(state.projects || []).map((n) => [n, n])]),
  field('From', 'from', { type: 'date' }), field('To', 'to', { type: 'date' }),
  h('button', { class: 'primary', type: 'submit', text: 'Search' }));
}

async function viewSearch() {
  state.projects = (await api('/api/projects')).projects;
  const p = params();
  const form = searchForm(p);
  const results = h('section', { id: 'results' });
  main(h('h1', { text: 'Search' }), form, results);
  const q = new URLSearchParams({ format: 'json', limit: PAGE });
  const map = { query: 'query', kind: 'type', obs_type: 'obs_type', concept: 'concepts', file: 'files', from: 'dateStart', to: 'dateEnd', project: 'project' };
  let any = false;
  for (const [k, v] of Object.entries(map)) if (p.get(k)) { q.set(v, p.get(k)); any = true; }
  if (!any) { document.getElementById('q').focus(); return; }
  if (!performance.getEntriesByName('memd-search-start').length) performance.mark('memd-search-start');
  const res = await api(`/api/search?${q}`);
  const byKey = new Map();
  for (const o of res.observations || []) byKey.set(`observation:${o.id}`, ['observation', o]);
  for (const s of res.sessions || []) byKey.set(`summary:${s.id}`, ['summary', s]);
  for (const r of res.prompts || []) byKey.set(`prompt:${r.id}`, ['prompt', r]);
  const order = (res.ranked || []).map((r) => byKey.get(`${r.kind}:${r.id}`)).filter(Boolean);
  results.replaceChildren(h('p', { class: 'meta', text: `${res.totalResults} results${(res.degraded || []).length ? ' (keyword only: semantic search unavailable)' : ''}` }), itemList(order));
  const m = performance.measure('memd-search', 'memd-search-start');
  perf.searches.push(m.duration);
  performance.clearMarks('memd-search-start');
}

// ---------- detail, edit, forget, timeline ----------
function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]));
}

function toolUse(t) {
  return h('details', {}, h('summary', { text: `${t.tool_name}${t.is_error ? ' (failed)' : ''} · ${when(t.occurred_at_epoch)}` }),
    h('h3', { text: 'Input' }), h('pre', { text: t.tool_input }), h('h3', { text: 'Response' }), h('pre', { text: t.tool_response }));
}

async function viewObservation(id) {
  const [o, uses] = await Promise.all([api(`/api/observation/${id}`), api(`/api/tool-uses?observation=${id}`).catch(() => ({ items: [] }))]);
  remember('observation', o);
  const facts = list(o.facts);
  const body = h('div', { class: 'card', id: 'detail' },
    h('h2', { text: o.title || `Observation #${o.id}` }),
    o.subtitle ? h('p', { class: 'meta', text: o.subtitle }) : null,
    o.quarantined ? h('p', { class: 'error', id: 'quarantine-note',
      text: `Quarantined (${o.quarantine_reason || 'instruction-shaped'}): this reads as an instruction to an agent, so memd does not inject it. Release it only if you trust it.` }) : null,
    freshnessNote(o),
    h('div', { class: 'actions' },
      o.quarantined ? h('button', { id: 'release', onclick: () => release(o), text: 'Release' }) : null,
      h('button', { id: 'edit', onclick: () => editForm(o), text: 'Edit' }),
      h('button', { class: 'danger', id: 'forget', onclick: () => forget(o), text: 'Forget' }),
      h('a', { href: `#/timeline/${o.id}`, text: 'Timeline around it' })),
    facts.length ? [h('h3', { text: 'Facts' }), h('ul', {}, facts.map((f) => h('li', { text: f })))] : null,
    o.narrative ? [h('h3', { text: 'Narrative' }), h('p', { text: o.narrative })] : null,
    h('h3', { text: 'About' }),
    kv([['id', `#${o.id}`], ['type', o.type], ['project', o.project], ['concepts', list(o.concepts).join(', ')],
      ['files read', list(o.files_read).join(', ')], ['files modified', list(o.files_modified).join(', ')],
      ['session', o.memory_session_id], ['prompt', o.prompt_number], ['origin', o.origin], ['provenance', o.imported_from ? `${o.provenance} (${o.imported_from})` : o.provenance],
      ['model', o.generated_by_model],
      ['stored', when(o.created_at_epoch)], ['seen', `${o.occurrence_count}×`]]),
    list(o.files_modified).length ? [h('h3', { text: 'Related' }), h('p', { id: 'related-files' }, list(o.files_modified).map((f) => [relatedLink(f, o.project), ' ']))] : null,
    h('h3', { text: `Tool uses (${uses.items.length})` }),
    h('div', { id: 'tool-uses' }, uses.items.length ? uses.items.map(toolUse) : h('p', { class: 'empty', text: 'None recorded (saved by hand, imported, or made from a summary).' })));
  main(body);
}

function editForm(o) {
  const form = h('form', { class: 'stack', id: 'edit-form', onsubmit: async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    try {
      await api(`/api/observation/${o.id}`, { method: 'PATCH', body: {
        title: f.get('title'), narrative: f.get('narrative'),
        facts: String(f.get('facts')).split('\n').map((x) => x.trim()).filter(Boolean) } });
      toast('Saved.');
      viewObservation(o.id);
    } catch (e) { toast(e.message); }
  } },
  h('label', {}, 'Title', h('input', { name: 'title', value: o.title || '', required: true, maxlength: 200 })),
  h('label', {}, 'Facts (one per line)', h('textarea', { name: 'facts', text: list(o.facts).join('\n') })),
  h('label', {}, 'Narrative', h('textarea', { name: 'narrative', text: o.narrative || '' })),
  h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit', text: 'Save changes' }),
    h('button', { type: 'button', onclick: () => viewObservation(o.id), text: 'Cancel' })));
  main(h('div', { class: 'card' }, h('h2', { text: `Edit #${o.id}` }), form));
  form.querySelector('input').focus();
}

async function release(o) {
  if (!confirm(`Release observation #${o.id}? memd will inject it into new sessions again.`)) return;
  try {
    await api(`/api/observation/${o.id}/release`, { method: 'POST', body: {} });
    toast(`Released #${o.id}.`);
    viewObservation(o.id);
  } catch (e) { toast(e.message); }
}

// ---------- quarantine ----------
async function viewQuarantine() {
  const q = await api('/api/quarantine?limit=200');
  const items = q.items.map((i) => h('li', { tabindex: 0, 'data-href': i.kind === 'observation' ? `#/obs/${i.id}` : `#/record/summary/${i.id}`,
    onclick: () => { location.hash = i.kind === 'observation' ? `#/obs/${i.id}` : `#/record/summary/${i.id}`; } },
  h('span', { class: `badge ${i.kind}`, text: i.kind }),
  h('span', { class: 'title', text: i.title || `#${i.id}` }),
  h('span', { class: 'meta', text: `${i.project} · ${i.provenance} · ${i.reason}` })));
  main(h('div', { class: 'card', id: 'quarantine' },
    h('h2', { text: `Quarantine (${q.total})` }),
    h('p', { class: 'meta', text: 'Records that read as instructions to an agent. memd keeps them searchable but never injects them. Open one to release or forget it.' }),
    items.length ? h('ul', { class: 'items' }, items) : h('p', { class: 'empty', text: 'Nothing is quarantined.' })));
}

async function forget(o) {
  if (!confirm(`Forget observation #${o.id}? It will be removed from search and context.`)) return;
  try {
    await api(`/api/observation/${o.id}`, { method: 'DELETE' });
    const key = `observation:${o.id}`;
    state.feed = state.feed.filter(([k, r]) => `${k}:${r.id}` !== key);
    state.cache.delete(key);
    toast(`Forgot #${o.id}.`);
    location.hash = '#/feed';
  } catch (e) { toast(e.message); }
}

async function viewTimeline(id) {
  const t = await api(`/api/timeline?anchor=${id}&depth_before=10&depth_after=10&format=json`);
  const items = (t.items || []).map((it) => [it.kind, it.row, { cls: it.kind === 'observation' && it.row.id === Number(id) ? 'anchor' : null }]);
  main(h('h1', { text: `Around #${id}` }), itemList(items));
}

function viewRecord(kind, id) {
  const r = state.cache.get(`${kind}:${id}`);
  if (!r) return main(h('p', { class: 'empty', text: 'Not in this page any more; search for it again.' }));
  const fields = kind === 'summary'
    ? [['request', r.request], ['investigated', r.investigated], ['learned', r.learned], ['completed', r.completed], ['next steps', r.next_steps], ['notes', r.notes]]
    : [['prompt', r.prompt_text], ['number', r.prompt_number], ['session', r.content_session_id]];
  main(h('div', { class: 'card' }, h('h2', { text: titleOf(kind, r) }),
    r.quarantined ? h('p', { class: 'error', text: `Quarantined (${r.quarantine_reason || 'instruction-shaped'}): not injected.` }) : null,
    kv([...fields, ['project', r.project], ['provenance', r.provenance || 'user'], ['stored', when(r.created_at_epoch)]]),
    h('div', { class: 'actions' }, h('button', { class: 'danger', onclick: async () => {
      if (!confirm(`Forget this ${kind}?`)) return;
      await api(`/api/${kind}/${id}`, { method: 'DELETE' }).then(() => { toast('Forgotten.'); history.back(); }, (e) => toast(e.message));
    }, text: 'Forget' }))));
}

// ---------- save ----------
function viewSave() {
  const form = h('form', { class: 'stack', onsubmit: async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const body = { text: f.get('text'), provenance: 'user' };
    for (const k of ['title', 'project', 'type']) if (f.get(k)) body[k] = f.get(k);
    try {
      const r = await api('/api/memory/save', { method: 'POST', body });
      toast(r.message);
      location.hash = `#/obs/${r.id}`;
    } catch (e) { toast(e.message); }
  } },
  h('label', {}, 'What to remember', h('textarea', { name: 'text', required: true })),
  h('label', {}, 'Title (optional)', h('input', { name: 'title', maxlength: 200 })),
  h('label', {}, 'Project (optional)', h('input', { name: 'project' })),
  h('label', {}, 'Type', h('select', { name: 'type' }, TYPES.map((t) => h('option', { value: t, selected: t === 'discovery', text: t })))),
  h('div', { class: 'actions' }, h('button', { class: 'primary', type: 'submit', text: 'Save memory' })));
  main(h('h1', { text: 'Save a memory' }), form);
}

// ---------- status ----------
async function viewStatus() {
  const [s, c] = await Promise.all([api('/api/status'), api('/api/charts?days=30')]);
  const card = (title, ...kids) => h('div', { class: 'card' }, h('h2', { text: title }), ...kids);
  const sup = s.supervisor || {};
  const breakers = Object.entries((s.provider && s.provider.breakers) || {}).map(([k, v]) => [k, v.state]);
  const st = s.store || {};
  main(h('h1', { text: `memd ${s.version}` }), h('div', { class: 'grid' },
    card('Actors', kv([['uptime', `${sup.uptime_s}s`], ['restarts', sup.child_restarts], ['down', Object.keys(sup.down || {}).join(', ') || 'none'],
      ['dead', sup.dead || 'no'], ['sessions live', s.sessions.live], ['sessions failed', s.sessions.failed], ['started by', sup.service_manager]]),
    h('ul', {}, (s.sessions.items || []).slice(0, 20).map((x) => h('li', { text: `${x.project} ${x.content_session_id.slice(0, 8)} · ${x.state} · queue ${x.queue_depth}` })))),
    card('Queues', kv([['write queue', st.write_queue_depth], ['pending', s.pending && s.pending.pending], ['processing', s.pending && s.pending.processing],
      ['failed', s.pending && s.pending.failed], ['spooled', s.spool && s.spool.pending_files]])),
    card('Observer', kv([['provider', s.provider && s.provider.name], ['model', s.provider && s.provider.model], ['tokens today', s.provider && s.provider.tokens_today],
      ['budget left', s.provider && s.provider.budget_left], ...breakers.map(([k, v]) => [`breaker ${k}`, v])])),
    card('Database', kv([['database', bytes(st.db_bytes)], ['WAL', bytes(st.wal_bytes)], ['observations', st.rows && st.rows.observations],
      ['sessions', st.rows && st.rows.sdk_sessions], ['backups', s.backups.count], ['newest backup', s.backups.newest || 'none'], ['backup size', bytes(s.backups.newest_bytes)]])),
    card('Redactions', kv(Object.entries((s.privacy && s.privacy.redactions) || {}).map(([k, v]) => [k, v])),
      Object.keys((s.privacy && s.privacy.redactions) || {}).length ? null : h('p', { class: 'empty', text: 'none yet' })),
    s.team ? teamCard(s.team) : null),
  h('div', { class: 'grid' }, statusCharts(c)));
}

// ---------- router, keys, theme ----------
const routes = [
  [/^#\/obs\/(\d+)/, (m) => ['feed', () => viewObservation(m[1])]],
  [/^#\/record\/(summary|prompt)\/(\d+)/, (m) => ['search', () => viewRecord(m[1], m[2])]],
  [/^#\/timeline\/(\d+)/, (m) => ['search', () => viewTimeline(m[1])]],
  [/^#\/session\/(\d+)/, (m) => ['browse', () => viewSession(m[1])]],
  [/^#\/browse/, () => ['browse', viewBrowse]],
  [/^#\/search/, () => ['search', viewSearch]],
  [/^#\/save/, () => ['save', viewSave]],
  [/^#\/quarantine/, () => ['quarantine', viewQuarantine]],
  [/^#\/status/, () => ['status', viewStatus]],
  [/^#\/freshness/, () => ['freshness', viewFreshness]],
  [/^#\/work/, () => ['work', viewWork]],
  [/^#\/related/, () => ['search', viewRelated]],
  [/^#\/corpus\/([^?]+)/, (m) => ['corpora', () => viewCorpus(decodeURIComponent(m[1]))]],
  [/^#\/corpora/, () => ['corpora', viewCorpora]],
  [/^/, () => ['feed', viewFeed]],
];

let statusTimer = 0;
async function route() {
  const hash = location.hash || '#/feed';
  for (const [re, make] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    const [nav, run] = make(m);
    state.view = hash.startsWith('#/obs') ? 'detail' : nav;
    document.querySelectorAll('header nav a').forEach((a) => a.classList.toggle('active', a.dataset.view === nav));
    clearInterval(statusTimer);
    try {
      await run();
      if (nav === 'status') statusTimer = setInterval(() => { if (state.view === 'status') viewStatus().catch(() => {}); }, 5000);
    } catch (e) {
      main(h('p', { class: 'error', text: e.message }));
    }
    if (perf.firstRender === null) {
      performance.mark('memd-first-render');
      perf.firstRender = performance.getEntriesByName('memd-first-render')[0].startTime;
    }
    return;
  }
}

let pendingG = false;
document.addEventListener('keydown', (ev) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (ev.key === 'Escape') { if (typing) document.activeElement.blur(); else history.back(); return; }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (pendingG) {
    pendingG = false;
    const to = { f: '#/feed', b: '#/browse', s: '#/search', t: '#/status' }[ev.key];
    if (to) { location.hash = to; ev.preventDefault(); }
    return;
  }
  if (ev.key === 'g') { pendingG = true; return; }
  if (ev.key === '/') { ev.preventDefault(); location.hash.startsWith('#/search') ? document.getElementById('q').focus() : (location.hash = '#/search'); return; }
  const items = [...document.querySelectorAll('#main ul.items li')];
  if (!items.length) return;
  const i = items.indexOf(document.activeElement);
  if (ev.key === 'j') { items[Math.min(i + 1, items.length - 1)].focus(); ev.preventDefault(); }
  if (ev.key === 'k') { items[Math.max(i - 1, 0)].focus(); ev.preventDefault(); }
  if (ev.key === 'Enter' && i >= 0) { location.hash = items[i].dataset.href; }
});

function theme(next) {
  const root = document.documentElement;
  if (next) { root.dataset.theme = next; localStorage.setItem('memd-theme', next); return; }
  const saved = localStorage.getItem('memd-theme');
  if (saved) root.dataset.theme = saved;
}

document.getElementById('theme').addEventListener('click', () => {
  const dark = document.documentElement.dataset.theme
    ? document.documentElement.dataset.theme === 'dark'
    : matchMedia('(prefers-color-scheme: dark)').matches;
  theme(dark ? 'light' : 'dark');
});
