import { build, type BuildOptions, type Metafile } from 'esbuild';

/** esbuild's metafile of `entryPoints` bundled in memory for Node (ESM), nothing written. */
export async function metafileOf(entryPoints: string[], options: Pick<BuildOptions, 'packages'> = {}): Promise<Metafile> {
  const result = await build({
    entryPoints,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    metafile: true,
    logLevel: 'silent',
    outdir: 'out',
    ...options,
  });
  return result.metafile as Metafile;
}
