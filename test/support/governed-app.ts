import { randomUUID } from 'node:crypto';
import { MemoryObjectStore } from '../../lib/adapters/memory/object-store.js';
import { buildApp, type BuildOptions } from '../../lib/app/build.js';
import type { CatalogServices } from '../../lib/catalog/services.js';
import type { GuardSettings } from '../../lib/governance/settings.js';
import { sha256Hex } from '../../lib/catalog/control/principals.js';
import type { Router } from '../../lib/http/router.js';
import type { HttpResponse } from '../../lib/contract/http.js';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import type { HandlerMap } from '../../lib/contract/request.js';
import type { AccessMode, CredentialVendor } from '../../lib/ports/credential-vendor.js';
import type { ObjectStore } from '../../lib/ports/object-store.js';

export const ADMIN_KEY = 'platform-admin-key-0123456789';

export interface Answer {
  status: number;
  body: any;
  raw: HttpResponse;
}

/**
 * Two routers over one in-memory registry: `setup` with the real handlers and authentication
 * off (to arrange state), and `governed` with authentication on (keys) and the handlers given.
 * Authorization decisions are captured; vended access modes are recorded.
 */
/** What buildApp needs for an app over in-memory stores: the default project and warehouse (at /warehouses/default). */
export function memoryAppOptions(registryStore: ObjectStore, storageFor: BuildOptions['storageFor'], vendor: CredentialVendor) {
  return {
    registryStore,
    storageFor,
    project: 'default',
    warehouse: 'default',
    warehouseRoot: { kind: 'file' as const, path: '/warehouses/default' },
    managedVersioning: true,
    trashGraceDays: 0,
    maxBodyBytes: 1 << 20,
    vendor,
  };
}

export async function governedApp(handlers: HandlerMap<CatalogServices> = allHandlers) {
  const registryStore = new MemoryObjectStore();
  const stores = new Map<string, ObjectStore>();
  const storageFor = (root: { kind: string; path?: string; bucket?: string; prefix?: string }) => {
    const id = JSON.stringify(root);
    if (!stores.has(id)) stores.set(id, new MemoryObjectStore());
    return stores.get(id)!;
  };
  const decisions: Record<string, unknown>[] = [];
  const vended: AccessMode[] = [];
  const vendor: CredentialVendor = {
    vend: async (request) => {
      vended.push(request.mode);
      return { 'test.mode': request.mode };
    },
  };
  const common = {
    ...memoryAppOptions(registryStore, storageFor as never, vendor),
    // Project P may put warehouses under /w/P (docs/governance.md, "Storage allotment").
    storage: { roots: [{ kind: 'file' as const, path: '/w' }] },
  };
  const auth: GuardSettings = { mode: 'keys', adminKeySha256: sha256Hex(ADMIN_KEY), log: (e) => decisions.push(e) };
  const setup = (await buildApp({ ...common, handlers: allHandlers })).router;
  const governed = (await buildApp({ ...common, handlers, auth })).router;

  const send = async (router: Router, method: string, path: string, body?: unknown, key?: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const raw = await router({
      method,
      rawPath: path.split('?')[0],
      rawQuery: path.includes('?') ? path.slice(path.indexOf('?') + 1) : '',
      // A JSON client: bodies go as application/json (lib/http/content-type.ts).
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers, ...(key ? { 'x-api-key': key } : {}) },
      body: body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      requestId: randomUUID(),
    });
    const text = raw.body.toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* Arrow or empty */
    }
    return { status: raw.status, body: parsed, raw };
  };
  const arrange = async (method: string, path: string, body?: unknown) => {
    const res = await send(setup, method, path, body);
    if (res.status !== 200) throw new Error(`setup ${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  return {
    decisions,
    vended,
    /** The registry's store (to count the reads a request makes). */
    registryStore,
    /** The (in-memory) object store of a warehouse's storage root, to place datasets. */
    storageFor: storageFor as (root: { kind: 'file'; path: string }) => ObjectStore,
    arrange,
    call: (method: string, path: string, body?: unknown, key?: string, headers?: Record<string, string>) => send(governed, method, path, body, key, headers),
    /** A principal with a key, optionally granted a role on a project. */
    async principal(name: string, grant?: { project: string; role: string; namespace?: string[]; table?: string[] }) {
      await arrange('POST', '/v1/principals', { name });
      if (grant) await arrange('POST', '/v1/grants', { principal: name, ...grant });
      return ((await arrange('POST', `/v1/principals/${name}/keys`, {})) as { api_key: string }).api_key;
    },
  };
}
