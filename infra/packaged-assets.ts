import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as source from './asset-source.js';

/**
 * infra/asset-source.ts as the package has it (scripts/package.ts puts this module in its place):
 * every function asset, the layer's lockfile and the job task image's context were built when the
 * package was, and lie in `assets/` beside the package's entry. Nothing is built at synth, so
 * a team's app needs neither this repository nor esbuild (docs/deploy.md, "Rask in your own CDK app").
 */
const ASSETS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

function assetDir(name: string): string {
  const dir = path.join(ASSETS, name);
  if (!existsSync(dir)) throw new Error(`rask: the package has no prebuilt asset "${name}" (looked in ${dir}); reinstall the package`);
  return dir;
}

export const functionCode: typeof source.functionCode = (asset) => lambda.Code.fromAsset(assetDir(asset));

export const layerSourceDir: typeof source.layerSourceDir = () => assetDir('lancedb-layer');

export const jobTaskImageContext: typeof source.jobTaskImageContext = () => assetDir('job-task-image');
