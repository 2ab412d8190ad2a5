import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, objectCall, type Answer } from './api.js';
import { newestFirst } from './changes.js';
import { dotted, type Route } from './route.js';
import { Breadcrumbs, Confirm, Link, Loaded, Problem, useAnswer, when } from './ui.js';

const crumbs = (project: string, label: string): [string, Route | undefined][] => [
  ['Projects', { view: 'projects' }],
  [project, { view: 'project', project }],
  [label, undefined],
];

/** Change events read per page of the trash and change views, newest first. */
const FEED_PAGE = 200;

/**
 * Trash and tasks: the tables dropped recently (the feed's drop events, newest first), each asked
 * for its trash entry (ListTableTasks), which says until when it can be undropped. "Look further
 * back" reads the next older page of the feed.
 */
export function Trash({ project }: { project: string }) {
  const [tick, setTick] = useState(0);
  const [pages, setPages] = useState<{ entries: any[]; older?: string; problem?: Answer } | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  /** The trash entries of the tables dropped in one feed page; `seen` keeps a table shown once. */
  const load = async (before: string | undefined, seen: Set<string>) => {
    const page = await newestFirst(project, FEED_PAGE, before);
    if (!page.ok) return { entries: [], problem: page as Answer };
    const dropped: string[][] = [];
    for (const e of page.body.events) {
      const k = JSON.stringify(e.data.id);
      if (e.type === 'dev.rask.table.dropped' && !seen.has(k)) {
        seen.add(k);
        dropped.push(e.data.id);
      }
    }
    const tasks = await Promise.all(dropped.map((id) => objectCall(project, 'table', id, 'GET', 'tasks')));
    const entries = tasks.flatMap((t) => (t.ok ? t.body.tasks.filter((k: any) => k.kind === 'trash') : []));
    return { entries, older: page.body.older };
  };
  const seen = useRef(new Set<string>());
  useEffect(() => {
    let live = true;
    seen.current = new Set();
    load(undefined, seen.current).then((p) => live && setPages(p));
    return () => {
      live = false;
    };
  }, [project, tick]);
  const further = async () => {
    if (!pages?.older) return;
    setLoading(true);
    const more = await load(pages.older, seen.current);
    setLoading(false);
    setPages({ entries: [...pages.entries, ...more.entries], ...(more.older ? { older: more.older } : {}), ...(more.problem ? { problem: more.problem } : {}) });
  };
  const reload = () => setTick((t) => t + 1);
  const answer: Answer<any[]> | undefined = pages === undefined ? undefined : pages.problem && pages.entries.length === 0 ? pages.problem : { status: 200, ok: true, body: pages.entries };
  const [undropping, setUndropping] = useState<any>(undefined);
  const [outcome, setOutcome] = useState<Answer | undefined>(undefined);
  const undrop = async () => {
    const entry = undropping;
    setUndropping(undefined);
    const a = await objectCall(project, 'table', entry.id, 'POST', 'undrop', { body: {} });
    setOutcome(a.ok ? { ...a, body: `Table ${dotted(entry.id)} is back.` } : a);
    reload();
  };
  return html`
    <${Breadcrumbs} items=${crumbs(project, 'Trash')} />
    <h1 tabindex="-1">Trash</h1>
    <div aria-live="polite">${outcome ? (outcome.ok ? html`<p class="ok" role="status">${outcome.body}</p>` : html`<${Problem} answer=${outcome} />`) : ''}</div>
    <${Loaded} answer=${answer}>${(entries: any[]) =>
      entries.length === 0
        ? html`<p class="muted">Nothing in the trash.</p>`
        : html`<table data-testid="trash"><thead><tr><th scope="col">Table</th><th scope="col">Dropped</th><th scope="col">By</th><th scope="col">Recoverable until</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
            <tbody>${entries.map((e) => html`<tr><td>${dotted(e.id)}</td><td>${when(e.dropped_at)}</td><td>${e.dropped_by ?? '—'}</td><td>${when(e.expires_at)}</td>
              <td><button type="button" onClick=${() => setUndropping(e)} aria-label=${`Undrop ${dotted(e.id)}`}>Undrop</button></td></tr>`)}</tbody></table>`}<//>
    ${pages?.older ? html`<p><button type="button" onClick=${further} disabled=${loading}>Look further back</button> <span class="muted">(older drops, from the change feed)</span></p>` : ''}
    <${Confirm} open=${undropping !== undefined} title=${`Undrop table ${undropping ? dotted(undropping.id) : ''}?`}
      detail=${`Table ${undropping ? dotted(undropping.id) : ''} of project ${project} comes back under its name, with every version and tag.`}
      action=${`Undrop ${undropping ? dotted(undropping.id) : ''}`} onConfirm=${undrop} onClose=${() => setUndropping(undefined)} />
  `;
}

export function Jobs({ project }: { project: string }) {
  const { answer } = useAnswer(() => call(project, 'GET', 'jobs', { query: { limit: '100' } }), [project]);
  const rows = (jobs: any[]) =>
    jobs.map((j) => html`<tr><td><code>${j.id}</code></td><td>${j.type}</td><td class=${`status-${j.status}`}>${j.status}</td><td>${j.table ? dotted(j.table) : '—'}</td>
      <td>${j.attempts}</td><td>${when(j.updated_at)}</td><td>${j.error ? html`<span class="problem">${j.error.message}</span>` : ''}</td></tr>`);
  const head = html`<thead><tr><th scope="col">Job</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Table</th><th scope="col">Attempts</th><th scope="col">Updated</th><th scope="col">Error</th></tr></thead>`;
  return html`
    <${Breadcrumbs} items=${crumbs(project, 'Jobs')} />
    <h1 tabindex="-1">Jobs</h1>
    <${Loaded} answer=${answer}>${(b: any) => html`
      <h2>Queued and running</h2>
      ${b.live.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="jobs-live">${head}<tbody>${rows(b.live)}</tbody></table>`}
      <h2>Finished (newest first)</h2>
      ${b.finished.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="jobs-finished">${head}<tbody>${rows(b.finished)}</tbody></table>`}`}<//>
  `;
}

/** Fragments and versions reclaimed per run, oldest on the left: a bar pair per run. */
function ReclaimChart({ reports }: { reports: any[] }) {
  const runs = [...reports].reverse();
  const max = Math.max(1, ...runs.flatMap((r) => [r.totals.fragments_reclaimed, r.totals.versions_removed]));
  const w = 24;
  const h = 120;
  return html`
    <figure>
      <svg role="img" aria-labelledby="chart-title" width=${Math.max(200, runs.length * w + 40)} height=${h + 30} class="chart">
        <title id="chart-title">Fragments and versions reclaimed per run, oldest first</title>
        ${runs.map((r, i) => {
          const f = (r.totals.fragments_reclaimed / max) * h;
          const v = (r.totals.versions_removed / max) * h;
          return html`<g transform=${`translate(${20 + i * w},0)`}>
            <rect class="bar-fragments" x="0" y=${h - f} width="9" height=${f}><title>${`${when(r.started_at)}: ${r.totals.fragments_reclaimed} fragments`}</title></rect>
            <rect class="bar-versions" x="10" y=${h - v} width="9" height=${v}><title>${`${when(r.started_at)}: ${r.totals.versions_removed} versions`}</title></rect>
          </g>`;
        })}
        <line x1="16" x2=${20 + runs.length * w} y1=${h} y2=${h} class="axis" />
        <text x="16" y=${h + 20} class="axis-label">max ${max}</text>
      </svg>
      <figcaption><span class="key-fragments">■</span> fragments reclaimed <span class="key-versions">■</span> versions removed</figcaption>
    </figure>`;
}

export function Reports({ project }: { project: string }) {
  const [pass, setPass] = useState('sweep');
  const { answer } = useAnswer(() => call(project, 'GET', 'maintenance/reports', { query: { pass: pass || undefined, limit: '50' } }), [project, pass]);
  return html`
    <${Breadcrumbs} items=${crumbs(project, 'Maintenance reports')} />
    <h1 tabindex="-1">Maintenance reports</h1>
    <div class="row">
      <label for="pass">Pass</label>
      <select id="pass" value=${pass} onChange=${(e: any) => setPass(e.currentTarget.value)}>
        <option value="sweep">sweep</option><option value="index">index build</option><option value="reconcile">reconcile</option><option value="orphans">orphan scan</option><option value="">every pass</option>
      </select>
    </div>
    <${Loaded} answer=${answer}>${(b: any) =>
      b.reports.length === 0
        ? html`<p class="muted">No report names a table of this project yet.</p>`
        : html`<${ReclaimChart} reports=${b.reports} />
          <table data-testid="reports"><thead><tr><th scope="col">Pass</th><th scope="col">Started</th><th scope="col">Tables</th><th scope="col">Fragments reclaimed</th><th scope="col">Versions removed</th><th scope="col">Bytes removed</th><th scope="col">Complete</th></tr></thead>
            <tbody>${b.reports.map((r: any) => html`<tr><td>${r.pass}</td><td>${when(r.started_at)}</td><td>${r.items.map((i: any) => html`<${Link} to=${{ view: 'table', project, id: i.table }}>${dotted(i.table)}<//> `)}</td>
              <td>${r.totals.fragments_reclaimed}</td><td>${r.totals.versions_removed}</td><td>${r.totals.bytes_removed}</td><td>${r.complete ? 'yes' : 'no'}</td></tr>`)}</tbody></table>`}<//>
  `;
}

export function Changes({ project }: { project: string }) {
  const [filter, setFilter] = useState('');
  const [follow, setFollow] = useState(false);
  const [loading, setLoading] = useState(false);
  /** Events newest first; `older` pages back, `cursor` follows forward from the newest read. */
  const [state, setState] = useState<Answer<{ events: any[]; older?: string; cursor: string }> | undefined>(undefined);
  useEffect(() => {
    setState(undefined);
    newestFirst(project, FEED_PAGE).then((a) => setState(a.ok ? { ...a, body: { events: a.body.events, ...(a.body.older ? { older: a.body.older } : {}), cursor: a.body.follow } } : (a as Answer<any>)));
  }, [project]);
  // Live: the feed polled forward from its cursor every few seconds while "Follow" is on.
  useEffect(() => {
    if (!follow || !state?.ok) return;
    const timer = setTimeout(async () => {
      const more = await call(project, 'GET', 'changes', { query: { limit: '500', since: state.body.cursor } });
      if (more.ok) setState({ ...state, body: { ...state.body, events: [...[...more.body.events].reverse(), ...state.body.events], cursor: more.body.next_cursor } });
    }, 3000);
    return () => clearTimeout(timer);
  }, [follow, state]);
  const older = async () => {
    if (!state?.ok || !state.body.older) return;
    setLoading(true);
    const a = await newestFirst(project, FEED_PAGE, state.body.older);
    setLoading(false);
    if (!a.ok) return setState(a as Answer<any>);
    const { older: _gone, ...rest } = state.body;
    setState({ ...state, body: { ...rest, events: [...state.body.events, ...a.body.events], ...(a.body.older ? { older: a.body.older } : {}) } });
  };
  const shown = (events: any[]) => events.filter((e) => filter === '' || `${e.type} ${e.subject} ${e.data.principal}`.includes(filter));
  return html`
    <${Breadcrumbs} items=${crumbs(project, 'Changes')} />
    <h1 tabindex="-1">Change events</h1>
    <div class="row">
      <label for="change-filter">Filter</label>
      <input id="change-filter" type="search" value=${filter} onInput=${(e: any) => setFilter(e.currentTarget.value)} placeholder="type, object or principal" />
      <input type="checkbox" id="follow" checked=${follow} onChange=${(e: any) => setFollow(e.currentTarget.checked)} />
      <label for="follow">Follow live</label>
    </div>
    <${Loaded} answer=${state}>${(b: any) => html`
      <table data-testid="changes"><thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Object</th><th scope="col">Principal</th><th scope="col">Operation</th></tr></thead>
        <tbody>${shown(b.events).map((e) => html`<tr><td>${when(e.time)}</td><td><code>${e.type}</code></td><td>${e.subject ?? '—'}</td><td>${e.data.principal ?? '—'}</td><td>${e.data.operation ?? '—'}</td></tr>`)}</tbody></table>
      ${b.older ? html`<p><button type="button" onClick=${older} disabled=${loading}>Older events</button></p>` : html`<p class="muted">The oldest event held is shown.</p>`}`}<//>
  `;
}

/** Principals, their keys (create shows the secret once; revoke asks first) and the project's grants. */
export function Admin({ project }: { project: string }) {
  const principals = useAnswer(() => call(undefined, 'GET', 'principals'), []);
  const grants = useAnswer(() => call(project, 'GET', 'grants'), [project]);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [secret, setSecret] = useState<any>(undefined);
  const [outcome, setOutcome] = useState<Answer | undefined>(undefined);
  const [newPrincipal, setNewPrincipal] = useState('');
  const [grant, setGrant] = useState({ principal: '', role: 'reader', namespace: '' });
  const [revoking, setRevoking] = useState<any>(undefined);
  const keys = useAnswer(async () => (selected ? call(undefined, 'GET', `principals/${encodeURIComponent(selected)}/keys`) : ({ status: 200, ok: true, body: { keys: [] } } as Answer)), [selected]);
  const act = async (a: Promise<Answer>, done: string, after: () => void) => {
    const r = await a;
    setOutcome(r.ok ? { ...r, body: done } : r);
    after();
    return r;
  };
  return html`
    <${Breadcrumbs} items=${crumbs(project, 'Access')} />
    <h1 tabindex="-1">Principals, keys and grants</h1>
    <div aria-live="polite">${outcome ? (outcome.ok ? html`<p class="ok" role="status">${outcome.body}</p>` : html`<${Problem} answer=${outcome} />`) : ''}</div>
    ${secret ? html`<div class="secret" role="alert"><p>New key <code>${secret.key_id}</code> for ${secret.principal}. Copy it now: it is shown this once and never again.</p>
      <label for="new-secret">Secret</label> <input id="new-secret" readonly value=${secret.api_key} size="60" />
      <button type="button" onClick=${() => setSecret(undefined)}>I have copied it</button></div>` : ''}
    <h2>Principals</h2>
    <${Loaded} answer=${principals.answer}>${(b: any) => html`
      <ul class="list" aria-label="Principals">${b.principals.map((p: string) => html`<li><button type="button" class="link" aria-pressed=${selected === p} onClick=${() => setSelected(p)}>${p}</button></li>`)}</ul>
      <form class="row" onSubmit=${async (e: Event) => {
        e.preventDefault();
        await act(call(undefined, 'POST', 'principals', { body: { name: newPrincipal } }), `Principal ${newPrincipal} created.`, principals.reload);
      }}>
        <label for="new-principal">New principal</label>
        <input id="new-principal" value=${newPrincipal} onInput=${(e: any) => setNewPrincipal(e.currentTarget.value)} required />
        <button type="submit">Create principal</button>
      </form>`}<//>
    ${selected ? html`
      <h2>Keys of ${selected}</h2>
      <${Loaded} answer=${keys.answer}>${(b: any) => html`
        <table data-testid="keys"><thead><tr><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Revoked</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
          <tbody>${b.keys.map((k: any) => html`<tr><td><code>${k.key_id}</code></td><td>${when(k.created_at)}</td><td>${k.expires_at ? when(k.expires_at) : 'never'}</td><td>${k.revoked_at ? when(k.revoked_at) : '—'}</td>
            <td>${k.revoked_at ? '' : html`<button type="button" onClick=${() => setRevoking(k)} aria-label=${`Revoke key ${k.key_id}`}>Revoke</button>`}</td></tr>`)}</tbody></table>`}<//>
      <button type="button" onClick=${async () => {
        const r = await act(call(undefined, 'POST', `principals/${encodeURIComponent(selected)}/keys`, { body: {} }), `Key created for ${selected}.`, keys.reload);
        if (r.ok) setSecret(r.body);
      }}>Create key for ${selected}</button>` : ''}
    <${Confirm} open=${revoking !== undefined} title=${`Revoke key ${revoking?.key_id ?? ''}?`} detail=${`Key ${revoking?.key_id ?? ''} of ${selected} stops working at once.`}
      action="Revoke key" onConfirm=${async () => {
        const k = revoking;
        setRevoking(undefined);
        await act(call(undefined, 'POST', `principals/${encodeURIComponent(selected!)}/keys/${encodeURIComponent(k.key_id)}/revoke`), `Key ${k.key_id} revoked.`, keys.reload);
      }} onClose=${() => setRevoking(undefined)} />
    <h2>Grants in ${project}</h2>
    <${Loaded} answer=${grants.answer}>${(b: any) => html`
      <table data-testid="grants"><thead><tr><th scope="col">Principal</th><th scope="col">Role</th><th scope="col">On</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
        <tbody>${b.grants.map((g: any) => html`<tr><td>${g.principal}</td><td>${g.role}</td><td>${g.table ? `table ${dotted(g.table)}` : g.namespace ? `namespace ${dotted(g.namespace)}` : 'the project'}${g.stale ? ' (stale)' : ''}</td>
          <td><button type="button" aria-label=${`Revoke ${g.role} of ${g.principal}`} onClick=${() => act(call(project, 'POST', 'grants/revoke', { body: { principal: g.principal, role: g.role, ...(g.namespace ? { namespace: g.namespace } : {}), ...(g.table ? { table: g.table } : {}) } }), `Grant revoked.`, grants.reload)}>Revoke</button></td></tr>`)}</tbody></table>`}<//>
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      const namespace = grant.namespace ? grant.namespace.split('.') : undefined;
      act(call(project, 'POST', 'grants', { body: { principal: grant.principal, role: grant.role, ...(namespace ? { namespace } : {}) } }), `Granted ${grant.role} to ${grant.principal}.`, grants.reload);
    }}>
      <label for="grant-principal">Principal</label>
      <input id="grant-principal" value=${grant.principal} onInput=${(e: any) => setGrant({ ...grant, principal: e.currentTarget.value })} required />
      <label for="grant-role">Role</label>
      <select id="grant-role" value=${grant.role} onChange=${(e: any) => setGrant({ ...grant, role: e.currentTarget.value })}><option>reader</option><option>writer</option><option>admin</option></select>
      <label for="grant-namespace">Namespace (optional, dotted)</label>
      <input id="grant-namespace" value=${grant.namespace} onInput=${(e: any) => setGrant({ ...grant, namespace: e.currentTarget.value })} />
      <button type="submit">Grant</button>
    </form>
  `;
}
