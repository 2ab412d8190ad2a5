import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { layerSourceDir } from '../asset-source.js';

/**
 * x86_64: @lancedb/lancedb publishes linux-x64-gnu binaries for every release (arm64 builds
 * stopped after 0.31.0), so the data function stays on x86_64 whatever version is pinned.
 */
export const LAYER_ARCHITECTURE = lambda.Architecture.X86_64;

const NPM_FLAGS = [
  'ci',
  // Drops openai, @huggingface/transformers and every other platform's binary; the linux-x64
  // binary survives because the layer's package.json depends on it directly.
  '--omit=optional',
  '--omit=dev',
  // Install for Lambda whatever the build machine is: npm picks packages by these, not by the host.
  '--os=linux',
  '--cpu=x64',
  '--libc=glibc',
  // LanceDB ships prebuilt binaries; nothing needs to run at install time.
  '--ignore-scripts',
  '--no-audit',
  '--no-fund',
  // Reuse the npm cache without revalidating: after one online build, synth works offline.
  '--prefer-offline',
  '--loglevel=error',
];

/** Where the layer's native module lies, relative to `nodejs/`. */
const NATIVE_DIR = 'node_modules/@lancedb/lancedb-linux-x64-gnu';

/**
 * The native module ships with its static symbol table and debug sections, which nothing loads
 * at runtime: stripping them keeps the dynamic symbols Node's loader resolves (napi_register_module_v1)
 * and takes ~20 MB off Lambda's 250 MB budget for function plus layers (docs/deploy.md, "The LanceDB layer").
 */
const STRIP_FLAGS = ['--strip-unneeded'];

/**
 * @lancedb/lancedb and apache-arrow as a Lambda layer (`/opt/nodejs/node_modules`), built by
 * CDK local bundling with npm — no Docker. The data bundle marks both as external and loads
 * them with `require`, which resolves through Lambda's NODE_PATH into the layer.
 *
 * Size: ~150 MB unzipped for 0.31.0 (the native module 141 MB once stripped, 161 MB before),
 * inside Lambda's 250 MB limit for function plus layers. The Docker image below is used only if npm is unavailable.
 */
export class LanceDbLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const npmCommand = `npm ${NPM_FLAGS.join(' ')}`;
    const source = layerSourceDir();
    this.layer = new lambda.LayerVersion(this, 'Layer', {
      description: 'rask: @lancedb/lancedb + apache-arrow for linux x86_64 (see infra/lancedb-layer/package.json)',
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [LAYER_ARCHITECTURE],
      // Old layer versions stay usable by function versions that still reference them.
      removalPolicy: RemovalPolicy.RETAIN,
      code: lambda.Code.fromAsset(source, {
        // The hash covers package.json + package-lock.json (and the bundling options), so the
        // ~170 MB asset is rebuilt and re-uploaded only when a pinned version changes.
        assetHashType: AssetHashType.SOURCE,
        exclude: ['node_modules'],
        bundling: {
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          command: [
            'bash',
            '-c',
            `mkdir -p /asset-output/nodejs && cp /asset-input/package.json /asset-input/package-lock.json /asset-output/nodejs/ && cd /asset-output/nodejs && ${npmCommand} && rm -rf node_modules/@types && (strip ${STRIP_FLAGS.join(' ')} ${NATIVE_DIR}/*.node || echo 'LanceDB layer: not stripped' >&2)`,
          ],
          local: { tryBundle: (outputDir) => bundleLocally(source, outputDir) },
        },
      }),
    });
  }
}

function bundleLocally(source: string, outputDir: string): boolean {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  try {
    execFileSync(npm, ['--version'], { stdio: 'ignore' });
  } catch {
    return false; // no npm here: fall back to the Docker image
  }
  const dir = path.join(outputDir, 'nodejs');
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(source, file), path.join(dir, file));
  // npm's own output goes to stderr so that `cdk synth` (template on stdout) stays clean.
  execFileSync(npm, NPM_FLAGS, { cwd: dir, stdio: ['ignore', process.stderr, process.stderr], shell: process.platform === 'win32' });
  // Type declarations are dead weight at runtime.
  rmSync(path.join(dir, 'node_modules', '@types'), { recursive: true, force: true });
  const binaryDir = path.join(dir, NATIVE_DIR);
  const natives = existsSync(binaryDir) ? readdirSync(binaryDir).filter((f) => f.endsWith('.node')) : [];
  if (natives.length === 0) {
    throw new Error(`LanceDB layer: no linux-x64 native module under ${binaryDir}; the layer would fail at runtime`);
  }
  for (const native of natives) stripNative(path.join(binaryDir, native));
  return true;
}

/**
 * Strips a native module in place with binutils' `strip` when the build machine has it (Linux
 * and most CI images do); without it the layer is only larger, so the build goes on and says so.
 */
export function stripNative(file: string): boolean {
  try {
    execFileSync('strip', [...STRIP_FLAGS, file], { stdio: ['ignore', 'ignore', 'pipe'] });
    return true;
  } catch (err) {
    process.stderr.write(`LanceDB layer: ${file} not stripped (${(err as Error).message.split('\n')[0]}); the layer is ~20 MB larger\n`);
    return false;
  }
}
