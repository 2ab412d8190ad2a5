import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { call, objectCall, type Answer } from './api.js';
import { dotted, type Route } from './route.js';
import { Breadcrumbs, Link, Loaded, Problem, useAnswer } from './ui.js';

/** Page size of the table list: one LIST per page however many tables the namespace holds. */
export const PAGE_SIZE = 100;

export function Projects() {
  const { answer } = useAnswer(() => call(undefined, 'GET', 'projects', { query: { limit: '1000' } }), []);
  const [name, setName] = useState('');
  return html`
    <h1 tabindex="-1">Projects</h1>
    ${answer && !answer.ok && answer.status === 403
      ? html`<p>Listing every project needs a platform administrator. Open a project you hold a grant in:</p>`
      : html`<${Loaded} answer=${answer}>${(b: { projects: string[] }) =>
          html`<ul class="list" aria-label="Projects">${b.projects.map((p) => html`<li><${Link} to=${{ view: 'project', project: p }}>${p}<//></li>`)}</ul>`}<//>`}
    <form class="row" onSubmit=${(e: Event) => {
      e.preventDefault();
      if (name) location.hash = `#/p/${encodeURIComponent(name)}`;
    }}>
      <label for="open-project">Open project</label>
      <input id="open-project" value=${name} onInput=${(e: any) => setName(e.currentTarget.value)} placeholder="default" />
      <button type="submit">Open</button>
    </form>
  `;
}

export function Project({ project }: { project: string }) {
  const described = useAnswer(() => call(undefined, 'GET', `projects/${encodeURIComponent(project)}`), [project]);
  const warehouses = useAnswer(() => call(project, 'GET', 'warehouses', { query: { limit: '1000' } }), [project]);
  return html`
    <${Breadcrumbs} items=${[['Projects', { view: 'projects' }], [project, undefined]]} />
    <h1 tabindex="-1">Project ${project}</h1>
    <${Loaded} answer=${described.answer}>${(p: any) => html`
      <dl class="facts">
        <dt>Default warehouse</dt><dd>${p.default_warehouse ?? '—'}</dd>
        <dt>Protected</dt><dd>${p.protected ? 'yes' : 'no'}</dd>
        <dt>Created</dt><dd>${p.created_at}${p.created_by ? ` by ${p.created_by}` : ''}</dd>
      </dl>`}<//>
    <h2>Warehouses</h2>
    <${Loaded} answer=${warehouses.answer}>${(b: { warehouses: string[] }) =>
      html`<ul class="list" aria-label="Warehouses">${b.warehouses.map((w) => html`<li><${Link} to=${{ view: 'warehouse', project, warehouse: w }}>${w}<//></li>`)}</ul>`}<//>
    <h2>Namespaces</h2>
    <${Children} project=${project} id=${[]} />
  `;
}

export function Warehouse({ project, warehouse }: { project: string; warehouse: string }) {
  const { answer } = useAnswer(() => call(project, 'GET', `warehouses/${encodeURIComponent(warehouse)}`), [project, warehouse]);
  return html`
    <${Breadcrumbs} items=${[['Projects', { view: 'projects' }], [project, { view: 'project', project }], [`warehouse ${warehouse}`, undefined]]} />
    <h1 tabindex="-1">Warehouse ${warehouse}</h1>
    <${Loaded} answer=${answer}>${(w: any) => html`
      <dl class="facts">
        <dt>Storage root</dt><dd><code>${w.storage_root}</code></dd>
        <dt>State</dt><dd>${w.state}</dd>
        <dt>Managed versioning</dt><dd>${w.managed_versioning ? 'on' : 'off'}</dd>
        <dt>Trash grace</dt><dd>${w.trash_grace_days} days</dd>
        <dt>Protected</dt><dd>${w.protected ? 'yes' : 'no'}</dd>
      </dl>`}<//>
    <p>Top-level namespaces bound to this warehouse are listed on the <${Link} to=${{ view: 'project', project }}>project page<//>.</p>
  `;
}

/** The child namespaces of `id` (the root when empty). */
function Children({ project, id }: { project: string; id: readonly string[] }) {
  const { answer } = useAnswer(() => objectCall(project, 'namespace', id, 'GET', 'list', { query: { limit: '1000' } }), [project, id.join('\0')]);
  return html`<${Loaded} answer=${answer}>${(b: { namespaces: string[] }) =>
    b.namespaces.length === 0
      ? html`<p class="muted">No namespaces.</p>`
      : html`<ul class="list" aria-label="Namespaces">${b.namespaces.map((n) => html`<li><${Link} to=${{ view: 'namespace', project, id: [...id, n] }}>${n}<//></li>`)}</ul>`}<//>`;
}

export function Namespace({ project, id }: { project: string; id: readonly string[] }) {
  const described = useAnswer(() => objectCall(project, 'namespace', id, 'POST', 'describe'), [project, id.join('\0')]);
  const crumbs: [string, Route | undefined][] = [['Projects', { view: 'projects' }], [project, { view: 'project', project }]];
  id.forEach((part, i) => crumbs.push([part, i === id.length - 1 ? undefined : { view: 'namespace', project, id: id.slice(0, i + 1) }]));
  return html`
    <${Breadcrumbs} items=${crumbs} />
    <h1 tabindex="-1">Namespace ${dotted(id)}</h1>
    ${described.answer && !described.answer.ok
      ? html`<${Problem} answer=${described.answer} />`
      : ''}
    ${described.answer && !described.answer.ok && described.answer.status === 404
      ? ''
      : html`
        ${described.answer?.ok && described.answer.body.protected ? html`<p class="badge">Protected</p>` : ''}
        <h2>Namespaces</h2>
        <${Children} project=${project} id=${id} />
        <h2 id="tables-heading">Tables</h2>
        <${TableList} project=${project} namespace=${id} />`}
  `;
}

interface ListPage {
  readonly names: string[];
  readonly next?: string;
}

/**
 * One page of a namespace's tables: ListTables with the spec's start-after token, so a page deep
 * in 10,000 tables costs one LIST. The search finds names that begin with the text: names sort
 * in byte order, so they follow the text itself as one run, read from a token equal to the text.
 */
async function tablePage(project: string, namespace: readonly string[], search: string, after: string | undefined): Promise<Answer<ListPage>> {
  const token = after ?? (search === '' ? undefined : search);
  const listed = await objectCall(project, 'namespace', namespace, 'GET', 'table/list', { query: { limit: String(PAGE_SIZE), page_token: token } });
  if (!listed.ok) return listed as Answer<any>;
  let names: string[] = listed.body.tables;
  let next: string | undefined = listed.body.page_token ?? undefined;
  if (search !== '') {
    const run = names.filter((n) => n.startsWith(search));
    if (run.length < names.length) next = undefined;
    names = run;
    // The text itself is a name the start-after token skips: asked for on the first page only.
    if (after === undefined) {
      const exact = await objectCall(project, 'table', [...namespace, search], 'POST', 'exists');
      if (exact.ok) names = [search, ...names];
    }
  }
  return { ...listed, body: { names, ...(next ? { next } : {}) } };
}

function TableList({ project, namespace }: { project: string; namespace: readonly string[] }) {
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  // Tokens of the pages before this one: "Previous" pops, "Next" pushes.
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const at = tokens[tokens.length - 1];
  const { answer } = useAnswer(() => tablePage(project, namespace, search, at), [project, namespace.join('\0'), search, at]);
  // A new search text starts again at page 1, once typing pauses; an unchanged text (the first
  // render) leaves the pages alone, or a quick "Next page" would be undone.
  useEffect(() => {
    if (typed === search) return;
    const t = setTimeout(() => {
      setSearch(typed);
      setTokens([undefined]);
    }, 250);
    return () => clearTimeout(t);
  }, [typed]);
  return html`
    <form class="row" role="search" onSubmit=${(e: Event) => e.preventDefault()}>
      <label for="table-search">Tables whose name begins with</label>
      <input id="table-search" type="search" value=${typed} onInput=${(e: any) => setTyped(e.currentTarget.value)} autocomplete="off" />
    </form>
    <${Loaded} answer=${answer}>${(page: ListPage) => html`
      <p class="muted" aria-live="polite">Page ${tokens.length}: ${page.names.length} table${page.names.length === 1 ? '' : 's'}${search ? ` beginning with “${search}”` : ''}</p>
      <ul class="list columns" aria-labelledby="tables-heading" data-testid="table-list">
        ${page.names.map((n) => html`<li><${Link} to=${{ view: 'table', project, id: [...namespace, n] }}>${n}<//></li>`)}
      </ul>
      <div class="row">
        <button type="button" disabled=${tokens.length === 1} onClick=${() => setTokens(tokens.slice(0, -1))}>Previous page</button>
        <button type="button" disabled=${!page.next} onClick=${() => setTokens([...tokens, page.next])}>Next page</button>
      </div>`}<//>
  `;
}
