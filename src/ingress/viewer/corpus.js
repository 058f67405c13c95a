
// ---------- corpora (issue 41): the list, a corpus's contents, a question to its knowledge agent ----------
function corpusRow(c) {
  const s = c.stats || {};
  return h('li', { class: 'corpus', 'data-name': c.name },
    h('a', { href: `#/corpus/${encodeURIComponent(c.name)}`, text: c.name }),
    h('span', { class: 'badge', text: c.session_id ? 'primed' : 'not primed' }),
    h('span', { class: 'meta', text: ` · ${s.observation_count} observations · ~${s.token_estimate} tokens · ${c.description || ''}` }));
}

async function viewCorpora() {
  const v = await api('/api/corpus');
  main(h('div', { id: 'corpora' }, h('h1', { text: 'Corpora' }),
    h('p', { class: 'meta', text: 'Named sets of observations a knowledge agent answers questions from (build one with build_corpus or memd corpus build).' }),
    v.corpora.length ? h('ul', { class: 'items' }, v.corpora.map(corpusRow)) : h('p', { class: 'empty', text: 'No corpora yet.' })));
}

function citedLinks(ids) {
  return ids.map((id) => [h('a', { href: `#/obs/${id}`, text: `#${id}` }), ' ']);
}

function answerCard(a) {
  return h('div', { class: 'card answer', id: 'answer' },
    h('p', { class: 'answer-text', text: a.answer }),
    h('p', { class: 'meta' }, a.cited.length ? ['Cited: ', ...citedLinks(a.cited)] : 'The answer cites no observation of the corpus.'),
    a.flagged ? h('p', { class: 'badge warn', id: 'outside-corpus', text: `Not in the corpus: ${a.outside_corpus.map((i) => `#${i}`).join(' ')} — do not trust what the answer says about them.` }) : null,
    h('p', { class: 'meta', text: `session ${a.session_id}${a.primed ? ' (primed for this question)' : ''} · ${a.usage.input_tokens} tokens in (${a.usage.cached_input_tokens} cached), ${a.usage.output_tokens} out` }));
}

async function viewCorpus(name) {
  const c = await api(`/api/corpus/${encodeURIComponent(name)}?observations=true`);
  const out = h('div', { id: 'corpus-answer' });
  const ask = h('form', { class: 'filters', id: 'ask', onsubmit: async (ev) => {
    ev.preventDefault();
    const question = new FormData(ev.target).get('question');
    out.replaceChildren(h('p', { class: 'meta', text: 'Asking…' }));
    try {
      const a = await api(`/api/corpus/${encodeURIComponent(name)}/query`, { method: 'POST', body: { question } });
      out.replaceChildren(answerCard(a));
    } catch (e) { out.replaceChildren(h('p', { class: 'empty', id: 'ask-error', text: e.message })); }
  } }, h('input', { name: 'question', id: 'question', placeholder: 'Ask this corpus a question', required: true }), h('button', { type: 'submit', text: 'Ask' }));
  const s = c.stats || {};
  const ex = c.excluded || {};
  main(h('div', { id: 'corpus' }, h('h1', { text: `Corpus ${c.name}` }),
    h('p', { class: 'meta', text: `${c.description || ''} · ${s.observation_count} observations · ~${s.token_estimate} tokens · ${(s.date_range || {}).earliest || ''} to ${(s.date_range || {}).latest || ''} · left out: ${ex.quarantined || 0} quarantined, ${ex.superseded || 0} superseded` }),
    ask, out,
    h('ul', { class: 'items', id: 'corpus-observations' }, c.observations.map((o) => h('li', {},
      h('a', { href: `#/obs/${o.id}`, text: `#${o.id}` }), ' ', h('span', { class: 'badge', text: o.type }), ` ${o.title}`,
      o.stale ? h('span', { class: 'badge stale', text: 'changed since' }) : null)))));
}
