import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleAsset } from '../lib/http/console-route.js';

/**
 * Builds the console's static bundle (docs/console.md) with the esbuild the project already
 * uses: `app.js` (Preact + htm and the views, minified), `app.css` and `index.html`. Built in
 * memory when the local server first serves /console and by the CDK app at synth time, so
 * nothing generated is committed and `npm ci && npm start` serves it on a clean clone.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

export function buildConsoleAssetsSync(): Map<string, ConsoleAsset> {
  // esbuild is loaded only when the console is first asked for: the API never needs it.
  const esbuild = requireEsbuild();
  const result = esbuild.buildSync({
    entryPoints: [path.join(here, 'src/main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2022',
    write: false,
    legalComments: 'none',
  });
  const js = result.outputFiles[0]!.contents;
  return new Map<string, ConsoleAsset>([
    ['index.html', { type: 'text/html; charset=utf-8', body: readFileSync(path.join(here, 'index.html')) }],
    ['app.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(js) }],
    ['app.css', { type: 'text/css; charset=utf-8', body: readFileSync(path.join(here, 'src/style.css')) }],
  ]);
}

/** The bundle, built once per process on first call. */
export function consoleAssets(): () => Promise<ReadonlyMap<string, ConsoleAsset>> {
  let built: Promise<ReadonlyMap<string, ConsoleAsset>> | undefined;
  return () => (built ??= Promise.resolve().then(buildConsoleAssetsSync));
}

/** A synchronous build for the CDK app, which synthesizes synchronously. */
function requireEsbuild(): typeof import('esbuild') {
  return createRequire(import.meta.url)('esbuild');
}
