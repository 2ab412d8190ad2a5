import path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Bundle } from '../lib/contract/operation-columns.js';
import { LAYER_SOURCE_DIR, REPO_ROOT, bundleFunction } from './bundling.js';
import type { BundleKind } from './bundle-kinds.js';
import { writeJobTaskImageContext } from './job-task-image.js';
import { bundleOperations } from './operation-bundles.js';

/**
 * Where the constructs' code and build contexts come from: this checkout, built at synth with
 * esbuild. `npm run package` (scripts/package.ts) builds the same things once and swaps this
 * module for infra/packaged-assets.ts, which reads them from the package (docs/deploy.md,
 * "Rask in your own CDK app"); the two export the same functions.
 */

/** A function's asset: a fixed entry's bundle, or every per-operation entry of one bundle. */
export type FunctionAsset = BundleKind | `operations-${Bundle}`;

/**
 * The function's code, bundled on this machine by `bundleFunction` (infra/bundling.ts) with code
 * splitting, which NodejsFunction cannot do. The asset is hashed by its output, so the source
 * directory (the repository) is never fingerprinted; with bundling skipped (template tests) CDK
 * substitutes a placeholder. The image is never used: local bundling either succeeds or throws
 * (esbuild is a dependency of this repository, so no Docker is needed).
 */
export function functionCode(asset: FunctionAsset): lambda.Code {
  return lambda.Code.fromAsset(REPO_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
      // CDK caches bundling results by source path and these options, not by the `tryBundle`
      // closure: without a per-asset value every function would get the first one's bundle.
      // Every operation of a bundle has the same value, so CDK stages and uploads it once.
      environment: { RASK_BUNDLE_KIND: asset },
      local: {
        tryBundle(outputDir: string): boolean {
          if (asset.startsWith('operations-')) bundleOperations(asset.slice('operations-'.length) as Bundle, outputDir);
          else bundleFunction(asset as BundleKind, outputDir);
          return true;
        },
      },
    },
  });
}

/** The LanceDB layer's pinned package.json and lockfile (infra/constructs/lancedb-layer.ts installs them). */
export function layerSourceDir(): string {
  return LAYER_SOURCE_DIR;
}

/** The job task image's build context (infra/job-task-image.ts); its entry is bundled only when `bundle`. */
export function jobTaskImageContext(bundle: boolean): string {
  return writeJobTaskImageContext(path.join(REPO_ROOT, 'cdk.out', 'job-task-image'), bundle);
}
