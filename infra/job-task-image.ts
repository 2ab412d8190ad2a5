import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { ESBUILD_TARGET, ESM_REQUIRE_BANNER, LAYER_MODULES, LAYER_SOURCE_DIR, REPO_ROOT } from './bundling.js';

/**
 * Writes the image's build context into `dir`; the entry is bundled only when `bundle` (a synth
 * that skips bundling gets a placeholder). Exported so a test can run the bundled entry under
 * node without Docker (test/infra/job-task-image.test.ts).
 */
export function writeJobTaskImageContext(dir: string, bundle: boolean): string {
  mkdirSync(path.join(dir, 'app'), { recursive: true });
  mkdirSync(path.join(dir, 'layer'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) writeFileSync(path.join(dir, 'layer', f), readFileSync(path.join(LAYER_SOURCE_DIR, f)));
  writeFileSync(
    path.join(dir, 'Dockerfile'),
    [
      '# rask job task (infra/constructs/job-tasks.ts): functions/job-task.ts with the LanceDB layer packages',
      'FROM public.ecr.aws/docker/library/node:22-bookworm-slim',
      'WORKDIR /app',
      'COPY layer/package.json layer/package-lock.json ./',
      'RUN npm ci --omit=optional --omit=dev --ignore-scripts --no-audit --no-fund',
      'COPY app/ ./',
      'USER node',
      'CMD ["node", "--enable-source-maps", "index.mjs"]',
      '',
    ].join('\n'),
  );
  if (bundle) {
    buildSync({
      entryPoints: [path.join(REPO_ROOT, 'functions', 'job-task.ts')],
      outfile: path.join(dir, 'app', 'index.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: ESBUILD_TARGET,
      sourcemap: true,
      external: [...LAYER_MODULES],
      banner: { js: ESM_REQUIRE_BANNER },
      logLevel: 'error',
    });
  } else {
    writeFileSync(path.join(dir, 'app', 'index.mjs'), '// bundling skipped for this synth\n');
  }
  return dir;
}

