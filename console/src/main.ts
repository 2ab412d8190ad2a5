import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { call, signIn, signOut, signedIn } from './api.js';
import { Namespace, Project, Projects, Warehouse } from './browse.js';
import { Admin, Changes, Jobs, Reports, Trash } from './operations.js';
import { href, parseRoute, type Route } from './route.js';
import { Table } from './table.js';

/**
 * The rask console (docs/console.md): Preact + htm, served by rask at /console, calling the
 * same doors as every client, so what a principal sees is what the catalog lets it read.
 */

function SignIn({ onDone }: { onDone: () => void }) {
  const [kind, setKind] = useState<'key' | 'token'>('key');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    signIn({ kind, secret });
    // Any door answers 401 to a credential it does not know; a 403 is a known caller.
    const probe = await call(undefined, 'GET', 'projects', { query: { limit: '1' } });
    if (probe.status === 401 || probe.status === 0) {
      signOut();
      setError(probe.error ?? 'the credential was refused');
      return;
    }
    setSecret('');
    onDone();
  };
  return html`
    <main id="main" class="signin">
      <h1 tabindex="-1">Sign in to rask</h1>
      <p class="muted">The credential is kept in this tab's memory only: reloading or closing the tab signs you out.</p>
      <form onSubmit=${submit}>
        <fieldset>
          <legend>Credential</legend>
          <input type="radio" id="kind-key" name="kind" checked=${kind === 'key'} onChange=${() => setKind('key')} />
          <label for="kind-key">API key</label>
          <input type="radio" id="kind-token" name="kind" checked=${kind === 'token'} onChange=${() => setKind('token')} />
          <label for="kind-token">Bearer token (OIDC)</label>
        </fieldset>
        <label for="secret">${kind === 'key' ? 'API key' : 'Bearer token'}</label>
        <input id="secret" type="password" autocomplete="off" spellcheck="false" required value=${secret} onInput=${(e: any) => setSecret(e.currentTarget.value)} />
        <button type="submit">Sign in</button>
        ${error ? html`<p class="problem" role="alert">${error}</p>` : ''}
      </form>
    </main>`;
}

function Nav({ route }: { route: Route }) {
  const project = 'project' in route ? route.project : undefined;
  const item = (to: Route, label: string) => html`<li><a href=${href(to)} aria-current=${route.view === to.view ? 'page' : undefined}>${label}</a></li>`;
  return html`
    <nav aria-label="Console">
      <ul>
        ${item({ view: 'projects' }, 'Projects')}
        ${project
          ? html`${item({ view: 'project', project }, `Browse ${project}`)}${item({ view: 'trash', project }, 'Trash')}${item({ view: 'jobs', project }, 'Jobs')}${item(
              { view: 'reports', project },
              'Maintenance',
            )}${item({ view: 'changes', project }, 'Changes')}${item({ view: 'admin', project }, 'Access')}`
          : ''}
      </ul>
    </nav>`;
}

function Page({ route }: { route: Route }) {
  switch (route.view) {
    case 'projects':
      return html`<${Projects} />`;
    case 'project':
      return html`<${Project} project=${route.project} />`;
    case 'warehouse':
      return html`<${Warehouse} project=${route.project} warehouse=${route.warehouse} />`;
    case 'namespace':
      return html`<${Namespace} project=${route.project} id=${route.id} />`;
    case 'table':
      return html`<${Table} project=${route.project} id=${route.id} />`;
    case 'trash':
      return html`<${Trash} project=${route.project} />`;
    case 'jobs':
      return html`<${Jobs} project=${route.project} />`;
    case 'reports':
      return html`<${Reports} project=${route.project} />`;
    case 'changes':
      return html`<${Changes} project=${route.project} />`;
    case 'admin':
      return html`<${Admin} project=${route.project} />`;
  }
}

function App() {
  const [route, setRoute] = useState<Route>(parseRoute(location.hash));
  const [, setSession] = useState(0);
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  // Each new page moves focus to its heading, so a screen reader announces it.
  useEffect(() => {
    (document.querySelector('main h1') as HTMLElement | null)?.focus();
  }, [route, signedIn()]);
  if (!signedIn()) return html`<${SignIn} onDone=${() => setSession((n) => n + 1)} />`;
  const key = JSON.stringify(route);
  return html`
    <header class="top">
      <a class="skip" href="#main" onClick=${(e: Event) => {
        e.preventDefault();
        (document.querySelector('main h1') as HTMLElement | null)?.focus();
      }}>Skip to content</a>
      <span class="brand">rask console</span>
      <${Nav} route=${route} />
      <button type="button" onClick=${() => {
        signOut();
        setSession((n) => n + 1);
      }}>Sign out</button>
    </header>
    <main id="main" key=${key}><${Page} route=${route} /></main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
