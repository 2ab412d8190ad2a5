import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildConsoleAssetsSync } from '../console/build.js';

/**
 * Writes the web console's built files into `dir` (the metadata function's asset), where
 * `consoleAssetsIn` (lib/http/console-route.ts) serves them at /console (docs/console.md).
 */
export function writeConsole(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, asset] of buildConsoleAssetsSync()) writeFileSync(path.join(dir, name), asset.body);
}
