import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { call, idPath, objectCall, type Answer } from './api.js';
import { versionStamps, type VersionStamp } from './changes.js';
import { dotted, href, type Route } from './route.js';
import { Breadcrumbs, Confirm, Loaded, Loading, Problem, useAnswer, when } from './ui.js';

interface Field {
  readonly name: string;
  readonly nullable?: boolean;
  readonly type: { readonly type: string; readonly fields?: readonly Field[]; readonly length?: number };
}

/** A field's type in words: nested structs and lists open up, fixed-size lists show their dimension. */
function typeText(t: Field['type']): string {
  if (t.type === 'fixed_size_list') return `vector[${t.length}] of ${t.fields?.[0] ? typeText(t.fields[0].type) : '?'}`;
  if (t.type === 'list' || t.type === 'large_list') return `list of ${t.fields?.[0] ? typeText(t.fields[0].type) : '?'}`;
  return t.type;
}

function Fields({ fields, depth }: { fields: readonly Field[]; depth: number }): any {
  return fields.map(
    (f) => html`
      <tr>
        <td style=${`padding-left:${0.5 + depth * 1.25}rem`}>${f.name}</td>
        <td><code>${typeText(f.type)}</code></td>
        <td>${f.nullable === false ? 'no' : 'yes'}</td>
      </tr>
      ${f.type.type === 'struct' && f.type.fields ? html`<${Fields} fields=${f.type.fields} depth=${depth + 1} />` : ''}
    `,
  );
}

/** Several reads at once; the page shows each section as its answer comes in. */
function useTable(project: string, id: readonly string[]) {
  const key = [project, id.join('\0')];
  const get = (door: string) => objectCall(project, 'table', id, 'GET', door);
  const post = (door: string, body: unknown = {}) => objectCall(project, 'table', id, 'POST', door, { body });
  return {
    describe: useAnswer(() => post('describe', { load_detailed_metadata: true }), key),
    versions: useAnswer(() => versionsWithStamps(project, id, () => post('version/list')), key),
    tags: useAnswer(() => post('tags/list'), key),
    branches: useAnswer(() => post('branches/list'), key),
    indices: useAnswer(() => post('index/list'), key),
    stats: useAnswer(() => post('stats'), key),
    protection: useAnswer(() => get('protection'), key),
    policy: useAnswer(() => get('maintenance-policy'), key),
    reports: useAnswer(() => lastReports(project, id), key),
  };
}

/** The versions, newest first, each with its change stamp from the feed when one was found. */
async function versionsWithStamps(project: string, id: readonly string[], list: () => Promise<Answer>): Promise<Answer> {
  const a = await list();
  if (!a.ok) return a;
  const versions = [...a.body.versions].reverse();
  const stamps = versions.length > 0 ? await versionStamps(project, id, versions) : undefined;
  return { ...a, body: { versions, stamps: stamps?.ok ? stamps.body : new Map(), stampProblem: stamps && !stamps.ok ? stamps : undefined } };
}

function StampText({ stamp }: { stamp?: VersionStamp }) {
  if (!stamp) return html`<span class="muted">not in the recent change feed</span>`;
  if (stamp.storage) return html`<span>committed straight to storage <span class="muted">(no catalog door: seen by the change relay)</span></span>`;
  return html`<span title=${stamp.requestId ? `request ${stamp.requestId}` : ''}>${stamp.principal} · ${stamp.operation} · ${when(stamp.time)}</span>`;
}

/** The newest report of each maintenance pass that touched this table. */
async function lastReports(project: string, id: readonly string[]): Promise<Answer<any[]>> {
  const { delimiter } = idPath(id);
  const a = await call(project, 'GET', 'maintenance/reports', { query: { table: id.join(delimiter), delimiter, limit: '50' } });
  if (!a.ok) return a as Answer<any>;
  const newest = new Map<string, any>();
  for (const r of a.body.reports) if (!newest.has(r.pass)) newest.set(r.pass, r);
  return { ...a, body: [...newest.values()] };
}

export function Table({ project, id }: { project: string; id: readonly string[] }) {
  const t = useTable(project, id);
  const [confirming, setConfirming] = useState<'drop' | 'sweep' | undefined>(undefined);
  const [sweep, setSweep] = useState<SweepProgress | undefined>(undefined);
  const [outcome, setOutcome] = useState<Answer | undefined>(undefined);
  const name = dotted(id);
  const crumbs: [string, Route | undefined][] = [['Projects', { view: 'projects' }], [project, { view: 'project', project }]];
  id.slice(0, -1).forEach((part, i) => crumbs.push([part, { view: 'namespace', project, id: id.slice(0, i + 1) }]));
  crumbs.push([id[id.length - 1]!, undefined]);

  const setProtected = async (value: boolean) => {
    const a = await objectCall(project, 'table', id, 'POST', 'protection', { body: { protected: value } });
    setOutcome(a.ok ? { ...a, body: value ? `Table ${name} is now protected.` : `Table ${name} is no longer protected.` } : a);
    t.protection.reload();
  };
  const drop = async () => {
    setConfirming(undefined);
    const a = await objectCall(project, 'table', id, 'POST', 'drop');
    if (a.ok) {
      location.hash = href({ view: 'trash', project });
      return;
    }
    setOutcome(a);
  };

  const sweepNow = async () => {
    setConfirming(undefined);
    const a = await objectCall(project, 'table', id, 'POST', 'maintenance/sweep');
    if (!a.ok) {
      setOutcome(a);
      return;
    }
    const job: string = a.body.transaction_id;
    setSweep({ job, status: 'Queued' });
    const done = await followJob(project, job, (status) => setSweep({ job, status }));
    setSweep(done);
    if (!done.problem) {
      t.stats.reload();
      t.reports.reload();
      t.versions.reload();
    }
  };

  const d = t.describe.answer;
  // Nothing of the table until its describe is in: a refused or missing table shows only that.
  if (!d) return html`<${Breadcrumbs} items=${crumbs} /><h1 tabindex="-1">Table ${name}</h1><${Loading} />`;
  if (!d.ok) return html`<${Breadcrumbs} items=${crumbs} /><h1 tabindex="-1">Table ${name}</h1><${Problem} answer=${d} />`;
  return html`
    <${Breadcrumbs} items=${crumbs} />
    <h1 tabindex="-1">Table ${name}</h1>
    <div aria-live="polite">${outcome ? (outcome.ok ? html`<p class="ok" role="status">${outcome.body}</p>` : html`<${Problem} answer=${outcome} />`) : ''}</div>
    <section aria-labelledby="overview">
      <h2 id="overview">Overview</h2>
      <${Loaded} answer=${d}>${(b: any) => html`
        <dl class="facts">
          <dt>Version</dt><dd>${b.version ?? '—'}</dd>
          <dt>Location</dt><dd><code>${b.location}</code></dd>
          <dt>Managed versioning</dt><dd>${b.managed_versioning ? 'on' : 'off'}</dd>
          ${t.stats.answer?.ok
            ? html`<dt>Rows</dt><dd data-testid="rows">${t.stats.answer.body.num_rows}</dd>
                   <dt>Fragments</dt><dd>${t.stats.answer.body.fragment_stats?.num_fragments} (${t.stats.answer.body.fragment_stats?.num_small_fragments} small)</dd>
                   <dt>Size</dt><dd>${t.stats.answer.body.total_bytes} bytes</dd>`
            : ''}
        </dl>`}<//>
      <h3>Protection</h3>
      <${Loaded} answer=${t.protection.answer}>${(p: any) => html`
        <div class="row">
          <input type="checkbox" id="protected" checked=${p.protected} onChange=${(e: any) => setProtected(e.currentTarget.checked)} />
          <label for="protected">Protected${p.protected && p.set_by ? ` (set by ${p.set_by} at ${when(p.set_at)})` : ''}</label>
        </div>`}<//>
      <div class="row actions">
        <button type="button" onClick=${() => setConfirming('sweep')} disabled=${sweep !== undefined && !sweep.finished}>Run a sweep now…</button>
        <button type="button" class="danger" onClick=${() => setConfirming('drop')}>Drop table…</button>
      </div>
      ${sweep ? html`<${SweepStatus} sweep=${sweep} />` : ''}

      ${/* One dialog for both actions: its title's id (confirm-title) must be unique on the page. */ ''}
      <${Confirm}
        open=${confirming !== undefined}
        title=${confirming === 'sweep' ? `Sweep table ${name} now?` : `Drop table ${name}?`}
        detail=${confirming === 'sweep'
          ? `Table ${name} of project ${project} is compacted, its indices optimized and its old versions cleaned up under its maintenance policy, as the scheduled sweep would.`
          : `Table ${name} of project ${project} goes to the trash; it can be undropped until its warehouse's grace period ends.`}
        action=${confirming === 'sweep' ? `Sweep ${name}` : `Drop ${name}`}
        onConfirm=${confirming === 'sweep' ? sweepNow : drop}
        onClose=${() => setConfirming(undefined)} />
    </section>
    <section aria-labelledby="schema">
      <h2 id="schema">Schema</h2>
      <${Loaded} answer=${d}>${(b: any) => html`
        <table data-testid="schema"><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Nullable</th></tr></thead>
          <tbody><${Fields} fields=${b.schema?.fields ?? []} depth=${0} /></tbody></table>`}<//>
    </section>
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <${Loaded} answer=${t.versions.answer}>${(b: any) => html`
        ${b.stampProblem ? html`<p class="muted">No change stamps: the change feed answered “${b.stampProblem.error}”.</p>` : ''}
        <table data-testid="versions"><thead><tr><th scope="col">Version</th><th scope="col">Committed</th><th scope="col">Manifest bytes</th><th scope="col">Changed by</th></tr></thead>
          <tbody>${b.versions.map((v: any) => html`<tr><td>${v.version}</td><td>${when(v.timestamp_millis)}</td><td>${v.manifest_size ?? '—'}</td><td data-testid="stamp"><${StampText} stamp=${b.stamps.get(v.version)} /></td></tr>`)}</tbody></table>`}<//>
    </section>
    <section aria-labelledby="refs">
      <h2 id="refs">Tags and branches</h2>
      <${Loaded} answer=${t.tags.answer}>${(b: any) => html`
        <table data-testid="tags"><thead><tr><th scope="col">Tag</th><th scope="col">Version</th></tr></thead>
          <tbody>${Object.entries(b.tags ?? {}).map(([n, v]: [string, any]) => html`<tr><td>${n}</td><td>${v.version}</td></tr>`)}</tbody></table>`}<//>
      <${Loaded} answer=${t.branches.answer}>${(b: any) =>
        Object.keys(b.branches ?? {}).length === 0
          ? html`<p class="muted">No branches.</p>`
          : html`<table><thead><tr><th scope="col">Branch</th><th scope="col">Parent version</th></tr></thead>
              <tbody>${Object.entries(b.branches).map(([n, v]: [string, any]) => html`<tr><td>${n}</td><td>${v.parent_version ?? '—'}</td></tr>`)}</tbody></table>`}<//>
    </section>
    <section aria-labelledby="indices">
      <h2 id="indices">Indices</h2>
      <${Loaded} answer=${t.indices.answer}>${(b: any) =>
        (b.indexes ?? []).length === 0
          ? html`<p class="muted">No indices.</p>`
          : html`<table><thead><tr><th scope="col">Index</th><th scope="col">Columns</th><th scope="col">Type</th><th scope="col">Indexed rows</th><th scope="col">Unindexed rows</th></tr></thead>
              <tbody>${b.indexes.map((i: any) => html`<tr><td>${i.index_name}</td><td>${i.columns.join(', ')}</td><td>${i.index_type}</td><td>${i.num_indexed_rows}</td><td>${i.num_unindexed_rows}</td></tr>`)}</tbody></table>`}<//>
    </section>
    <section aria-labelledby="maintenance">
      <h2 id="maintenance">Maintenance</h2>
      <${Loaded} answer=${t.policy.answer}>${(p: any) => html`
        <p>Effective policy from <strong data-testid="policy-source">${sourceText(p.source)}</strong>:</p>
        <dl class="facts">${Object.entries(p.effective).map(([k, v]) => html`<dt>${k}</dt><dd>${JSON.stringify(v)}</dd>`)}</dl>`}<//>
      <h3>Last report of each pass</h3>
      <${Loaded} answer=${t.reports.answer}>${(reports: any[]) =>
        reports.length === 0
          ? html`<p class="muted">No maintenance pass has reported on this table yet.</p>`
          : html`<table data-testid="table-reports"><thead><tr><th scope="col">Pass</th><th scope="col">Started</th><th scope="col">Fragments</th><th scope="col">Versions removed</th><th scope="col">Steps</th></tr></thead>
              <tbody>${reports.map((r) => {
                const item = r.items[0] ?? {};
                return html`<tr><td>${r.pass}</td><td>${when(r.started_at)}</td><td>${item.fragments_before ?? '—'} → ${item.fragments_after ?? '—'}</td><td>${item.versions_removed ?? 0}</td>
                  <td>${Object.entries(item.steps ?? {}).map(([s, v]: [string, any]) => `${s}: ${v.status}`).join('; ') || item.job || '—'}</td></tr>`;
              })}</tbody></table>`}<//>
    </section>
  `;
}

function sourceText(source: any): string {
  if (!source || source.level === 'builtin') return 'the built-in defaults';
  return `the ${source.level} record${source.id ? ` ${dotted(source.id)}` : ''}`;
}

/** Where a "Run a sweep now" job is: its status while it runs, its counters or error once finished. */
interface SweepProgress {
  readonly job: string;
  readonly status: string;
  readonly finished?: boolean;
  readonly properties?: Record<string, string>;
  readonly problem?: Answer;
}

const SWEEP_POLL_MS = 1000;
/** A sweep job that has not finished after this long is left to the Jobs view. */
const SWEEP_WAIT_MS = 10 * 60_000;
const TERMINAL = new Set(['Succeeded', 'Failed', 'Canceled']);

/** Polls DescribeTransaction until the job is terminal (or SWEEP_WAIT_MS has passed). */
async function followJob(project: string, job: string, onStatus: (status: string) => void): Promise<SweepProgress> {
  const until = Date.now() + SWEEP_WAIT_MS;
  for (;;) {
    const a = await call(project, 'POST', `transaction/${encodeURIComponent(job)}/describe`);
    if (!a.ok) return { job, status: 'unknown', finished: true, problem: a };
    const status: string = a.body.status;
    if (TERMINAL.has(status)) return { job, status, finished: true, properties: a.body.properties ?? {} };
    if (Date.now() > until) return { job, status, finished: true, properties: a.body.properties ?? {} };
    onStatus(status);
    await new Promise((r) => setTimeout(r, SWEEP_POLL_MS));
  }
}

function SweepStatus({ sweep }: { sweep: SweepProgress }) {
  const p = sweep.properties ?? {};
  return html`
    <div class="sweep" data-testid="sweep-now" role="status" aria-live="polite">
      ${!sweep.finished
        ? html`<p><progress aria-label="Sweep in progress"></progress> Sweep job <code>${sweep.job}</code>: ${sweep.status.toLowerCase()}…</p>`
        : sweep.problem
          ? html`<${Problem} answer=${sweep.problem} />`
          : sweep.status !== 'Succeeded'
            ? html`<p class="error">Sweep job <code>${sweep.job}</code> ${TERMINAL.has(sweep.status) ? sweep.status.toLowerCase() : `is still ${sweep.status.toLowerCase()}; see Jobs`}${p['rask.error'] ? `: ${p['rask.error']}` : ''}</p>`
            : p['rask.skipped']
              ? html`<p class="ok">Sweep skipped: ${p['rask.reason'] ?? p['rask.skipped']}</p>`
              : html`<p class="ok">Sweep done: fragments ${p['rask.fragments_before']} → ${p['rask.fragments_after']}, ${p['rask.versions_removed']} versions and ${p['rask.bytes_removed']} bytes removed${p['rask.report'] ? html`; report <code>${p['rask.report']}</code>` : ' (nothing changed, no report)'}.</p>`}
    </div>`;
}
