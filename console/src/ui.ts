import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Answer } from './api.js';
import { href, type Route } from './route.js';

/** Loads `fetcher` whenever `deps` change; `reload` runs it again after an action. */
export function useAnswer<T>(fetcher: () => Promise<Answer<T>>, deps: readonly unknown[]): { answer?: Answer<T>; reload: () => void } {
  const [answer, setAnswer] = useState<Answer<T> | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const shown = useRef('');
  useEffect(() => {
    let live = true;
    // A reload after an action keeps the old answer on screen until the new one is in (a
    // control being toggled does not vanish under the pointer); new deps start blank.
    const key = JSON.stringify(deps);
    if (shown.current !== key) setAnswer(undefined);
    shown.current = key;
    fetcher().then((a) => live && setAnswer(a));
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { answer, reload: () => setTick((t) => t + 1) };
}

export const Link = ({ to, children }: { to: Route; children: unknown }) => html`<a href=${href(to)}>${children}</a>`;

/** An API error as the API said it (the same words for a missing object and a hidden one). */
export const Problem = ({ answer }: { answer: Answer }) =>
  html`<p class="problem" role="alert">${answer.status === 404 || answer.code === 1 || answer.code === 4 ? 'Not found: ' : ''}${answer.error}</p>`;

export const Loading = () => html`<p class="muted" aria-live="polite">Loading…</p>`;

/** Renders `body` once the answer is in, the error otherwise. */
export function Loaded<T>({ answer, children }: { answer?: Answer<T>; children: (body: T) => unknown }) {
  if (!answer) return html`<${Loading} />`;
  if (!answer.ok) return html`<${Problem} answer=${answer} />`;
  return children(answer.body) as any;
}

export const Breadcrumbs = ({ items }: { items: readonly [string, Route | undefined][] }) => html`
  <nav aria-label="Breadcrumb" class="crumbs">
    <ol>
      ${items.map(([label, to], i) => html`<li>${to && i < items.length - 1 ? html`<${Link} to=${to}>${label}<//>` : html`<span aria-current="page">${label}</span>`}</li>`)}
    </ol>
  </nav>
`;

/**
 * A confirmation that names the object (issue #31): a modal dialog, focus on Cancel, Escape
 * closes it; the action runs only from its confirm button.
 */
export function Confirm({ open, title, detail, action, onConfirm, onClose }: {
  open: boolean;
  title: string;
  detail: string;
  action: string;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return html`
    <dialog ref=${ref} aria-labelledby="confirm-title" onClose=${onClose}>
      <h2 id="confirm-title">${title}</h2>
      <p>${detail}</p>
      <div class="row">
        <button type="button" autofocus onClick=${onClose}>Cancel</button>
        <button type="button" class="danger" onClick=${onConfirm}>${action}</button>
      </div>
    </dialog>
  `;
}

export const when = (iso?: string | number) => (iso === undefined || iso === null ? '—' : new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'));
