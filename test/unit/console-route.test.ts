import { describe, expect, it } from 'vitest';
import { buildConsoleAssetsSync } from '../../console/build.js';
import { withConsole } from '../../lib/http/console-route.js';
import type { HttpRequest } from '../../lib/contract/http.js';

/** /console in front of the API's router (lib/http/console-route.ts, docs/console.md). */
describe('the console route', () => {
  const assets = buildConsoleAssetsSync();
  const seen: string[] = [];
  const router = withConsole(
    async (r) => {
      seen.push(`${r.method} ${r.rawPath}`);
      return { status: 404, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"code":0}') };
    },
    async () => assets,
  );
  const req = (method: string, rawPath: string): HttpRequest => ({ method, rawPath, rawQuery: '', headers: {}, body: Buffer.alloc(0), requestId: 'r' });

  it('builds a bundle with Preact inside and no outside reference', () => {
    const js = assets.get('app.js')!.body.toString('utf8');
    expect(js.length).toBeGreaterThan(10_000);
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    const page = assets.get('index.html')!.body.toString('utf8');
    expect(page).toContain('src="app.js"');
    expect(page).not.toMatch(/<script>[^<]/);
  });

  it('serves the page at /console too, its files named through console/, under any base path', async () => {
    for (const p of ['/console', '/prod/console']) {
      const r = await router(req('GET', p));
      expect(r.status).toBe(200);
      expect(r.body.toString('utf8')).toContain('src="console/app.js"');
      expect(r.body.toString('utf8')).toContain('href="console/app.css"');
    }
    expect((await router(req('GET', '/console/'))).body.toString('utf8')).toContain('src="app.js"');
  });

  it('serves the page and its files with a strict policy', async () => {
    const page = await router(req('GET', '/console/'));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await router(req('GET', '/prod/console/app.js'))).headers['content-type']).toMatch(/^text\/javascript/);
    const head = await router(req('HEAD', '/console/app.css'));
    expect([head.status, head.body.length]).toEqual([200, 0]);
  });

  it('leaves everything else to the API', async () => {
    seen.length = 0;
    for (const [m, p] of [
      ['GET', '/console/nothing.js'],
      ['POST', '/console/'],
      ['GET', '/v1/console'],
      ['GET', '/v1/namespace/console'],
      ['GET', '/consoles'],
    ] as const) {
      expect((await router(req(m, p))).status).toBe(404);
    }
    expect(seen).toEqual(['GET /console/nothing.js', 'POST /console/', 'GET /v1/console', 'GET /v1/namespace/console', 'GET /consoles']);
  });
});
