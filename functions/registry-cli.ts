/**
 * `rask registry`: look at, back up and roll back the catalog's registry without a database
 * console (docs/operations.md, "Registry backup and restore"). Against the local data directory
 * (RASK_DATA_DIR) by default, or the S3 registry with --registry-bucket; JSON with --json (the
 * default when stdout is not a terminal); progress on stderr when it is a terminal.
 * Exit status: 0 done, 1 done with problems (or refused), 2 bad usage.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CatalogServices } from '../lib/catalog/services.js';
import { ConfigError, loadLocalConfig } from '../lib/config.js';
import { exportRegistry, importRegistry, parseStorageRoot, type StorageMapping } from '../lib/maintenance/registry/export-file.js';
import { inspect, type Inspection } from '../lib/maintenance/registry/inspect.js';
import { manifestsPresent, restoreRegistry, type RestoreResult } from '../lib/maintenance/registry/restore.js';
import type { Scope } from '../lib/maintenance/registry/state-at.js';
import type { RegistryHistory } from '../lib/ports/registry-history.js';
import { s3History, s3Services } from './cli-services.js';

export const REGISTRY_USAGE = `usage: rask registry <command> [options]

commands:
  inspect <id>        show every record naming a namespace or table (claims whose record is gone too), its state and the repair
  export <file>       write a consistent copy of the registry (or --project, with its principals, keys and roots) to one file
  import <file>       load an export into an empty registry (local or S3, either way; a project's beside others)
  restore --at <T>    put every registry key of the scope back to its content at time T (RFC 3339)

options:
  --project P              scope: one project (inspect: the id's project; default RASK_PROJECT or "default");
                           export: its keys, the principals granted in it, their API keys, its storage roots
  --all                    export/restore: the whole registry rather than --project
  --delimiter D            separator of <id> parts (default ".")
  --history                inspect: list the records' past versions (time, who, operation)
  --at T                   restore/export: the instant (RFC 3339, e.g. 2026-12-02T20:15:00Z); export default: now
  --dry-run                restore: report what would change; change nothing
  --json                   print JSON (the default when stdout is not a terminal)
  --registry-bucket B      use the S3 registry in bucket B instead of RASK_DATA_DIR
  --registry-prefix P      key prefix of the S3 registry (default "registry/")
  --region R               AWS region of the S3 registry
  --map-storage FROM=TO    import: rewrite a warehouse root (file:<path> or s3://bucket/prefix/), e.g. to move local → AWS
  --retained-days N        S3: days the bucket keeps noncurrent versions (the stack's prop; default 30)
`;

class UsageError extends Error {}

export interface RegistryTarget {
  readonly services: CatalogServices;
  readonly history?: RegistryHistory;
  readonly close: () => Promise<void>;
}

interface Args {
  readonly command: string;
  readonly positional?: string;
  readonly json: boolean;
  readonly project: string;
  readonly all: boolean;
  readonly delimiter: string;
  readonly history: boolean;
  readonly at?: Date;
  readonly dryRun: boolean;
  readonly s3?: { bucket: string; prefix: string; region?: string };
  readonly retainedDays: number;
  readonly mapStorage: readonly StorageMapping[];
}

function parse(argv: readonly string[]): Args | 'help' {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      project: { type: 'string' },
      all: { type: 'boolean', default: false },
      delimiter: { type: 'string', default: '.' },
      history: { type: 'boolean', default: false },
      at: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'registry-bucket': { type: 'string' },
      'registry-prefix': { type: 'string', default: 'registry/' },
      region: { type: 'string' },
      'retained-days': { type: 'string', default: '30' },
      'map-storage': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) return 'help';
  const [command, positional, ...rest] = positionals;
  if (!['inspect', 'export', 'import', 'restore'].includes(command!)) throw new UsageError(`unknown registry command ${JSON.stringify(command)}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  if ((command === 'inspect' || command === 'export' || command === 'import') && !positional) {
    throw new UsageError(`registry ${command} needs ${command === 'inspect' ? 'an <id>' : 'a <file>'}`);
  }
  if (command === 'restore' && positional) throw new UsageError(`unexpected argument ${JSON.stringify(positional)}`);
  if (command === 'restore' && values.at === undefined) throw new UsageError('registry restore needs --at <RFC 3339 time>');
  let at: Date | undefined;
  if (values.at !== undefined) {
    // RFC 3339: a full date and time with an offset; Date.parse alone would take "2026" or a local time.
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(values.at) || Number.isNaN(Date.parse(values.at))) {
      throw new UsageError(`--at must be an RFC 3339 time with an offset, e.g. 2026-12-02T20:15:00Z (got ${JSON.stringify(values.at)})`);
    }
    at = new Date(values.at);
  }
  if (values.delimiter === '') throw new UsageError('--delimiter must not be empty');
  if (!/^\d+$/.test(values['retained-days']!)) throw new UsageError('--retained-days must be a whole number');
  if (values.all && values.project !== undefined) throw new UsageError('give --project or --all, not both');
  return {
    command: command!,
    positional,
    json: values.json || !process.stdout.isTTY,
    project: values.project ?? process.env.RASK_PROJECT ?? 'default',
    all: values.all,
    delimiter: values.delimiter!,
    history: values.history,
    at,
    dryRun: values['dry-run'],
    s3: values['registry-bucket'] ? { bucket: values['registry-bucket'], prefix: values['registry-prefix']!, region: values.region } : undefined,
    retainedDays: Number(values['retained-days']),
    mapStorage: (values['map-storage'] as string[]).map((m) => {
      const cut = m.indexOf('=');
      if (cut <= 0) throw new UsageError(`--map-storage is FROM=TO (got ${JSON.stringify(m)})`);
      try {
        return { from: parseStorageRoot(m.slice(0, cut)), to: parseStorageRoot(m.slice(cut + 1)) };
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    }),
  };
}

/** The registry the command works on: the local data directory's (with its journal) or the S3 one. */
async function openTarget(args: Args): Promise<RegistryTarget> {
  const config = loadLocalConfig({ ...process.env, RASK_PROJECT: args.project });
  if (args.s3) {
    const services = await s3Services(args.s3, config.RASK_PROJECT, config.RASK_WAREHOUSE);
    return { services, history: await s3History(args.s3, args.retainedDays), close: async () => {} };
  }
  const { createLocalApp } = await import('../lib/app/local.js');
  const app = await createLocalApp(config);
  return { services: app.services, ...(app.history ? { history: app.history } : {}), close: async () => app.history?.close() };
}

/** Progress on a terminal's stderr: one line rewritten in place. */
function progressLine(enabled: boolean) {
  let last = 0;
  return {
    show(text: string) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      process.stderr.write(`\r${text}\x1b[K`);
    },
    done() {
      if (enabled) process.stderr.write('\r\x1b[K');
    },
  };
}

function printInspection(r: Inspection): void {
  console.log(`${r.project}: ${r.id.join('.')}`);
  if (r.records.length === 0) console.log('  nothing on record under this id');
  for (const f of r.findings) console.log(`  ${f.state}: ${f.detail}${f.repair ? `\n    repair: ${f.repair}` : ''}`);
  for (const g of r.grants) console.log(`  grant: ${g.principal} is ${g.role} on ${g.scope}`);
  if (r.claimScan) console.log(`  location claims naming it: found by reading the project's ${r.claimScan.claims} claims (${r.claimScan.lists} listing(s))`);
  console.log('  records:');
  for (const rec of r.records) {
    const who = rec.change ? ` (last ${rec.change.operation} by ${rec.change.by} at ${rec.change.at})` : '';
    console.log(`    ${rec.role.padEnd(18)} ${rec.key}  ${rec.etag}${who}`);
  }
  if (r.history) {
    console.log('  history (newest first):');
    for (const h of r.history) console.log(`    ${h.time}  ${h.deleted ? 'deleted' : 'written'}${h.current ? ' (current)' : ''}  ${h.key}${h.operation ? `  ${h.operation} by ${h.by}` : ''}`);
  }
}

function printRestore(r: RestoreResult): void {
  const scope = 'all' in r.scope ? 'the whole registry' : `project ${r.scope.project}`;
  console.log(`${r.dryRun ? 'would restore' : 'restored'} ${scope} to ${r.at}: ${r.changes.length} of ${r.keysInScope} keys differ`);
  for (const c of r.changes) console.log(`  ${c.change.padEnd(7)} ${c.what.padEnd(28)} ${c.key}`);
  if (r.tablesRestored.length > 0) console.log(`tables back: ${r.tablesRestored.join(', ')}`);
  if (r.tablesRemoved.length > 0) console.log(`tables whose records go (created or renamed in after ${r.at}; their files stay): ${r.tablesRemoved.join(', ')}`);
  for (const g of r.dataGone) console.log(`NOT restored, data gone: ${g.table} (was at ${g.location})`);
  for (const k of r.conflicts) console.log(`conflict, left as it is (changed meanwhile): ${k}`);
  if (r.dryRun) console.log('dry run: nothing was changed');
  else console.log(`${r.applied} keys written`);
}

export async function registryMain(argv: readonly string[]): Promise<number> {
  let args: Args | 'help';
  try {
    args = parse(argv);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`rask: ${(err as Error).message}\n\n${REGISTRY_USAGE}`);
      return 2;
    }
    throw err;
  }
  if (args === 'help') {
    console.log(REGISTRY_USAGE);
    return 0;
  }
  const target = await openTarget(args);
  const progress = progressLine(!args.json && process.stderr.isTTY === true);
  try {
    return await run(args, target, progress);
  } catch (err) {
    progress.done();
    const message = err instanceof ConfigError ? err.message : (err as Error).message;
    if (args.json) console.log(JSON.stringify({ command: args.command, error: message }));
    else console.error(`rask: ${message}`);
    return 1;
  } finally {
    await target.close();
  }
}

function needHistory(target: RegistryTarget): NonNullable<RegistryTarget['history']> {
  if (!target.history) throw new Error('this registry keeps no history (RASK_REGISTRY_HISTORY_DAYS=0), so no consistent instant can be read');
  return target.history;
}

async function run(args: Args, target: RegistryTarget, progress: ReturnType<typeof progressLine>): Promise<number> {
  const store = target.services.registry.store;
  const scope: Scope = args.all ? { all: true } : { project: args.project };
  switch (args.command) {
    case 'inspect': {
      const id = args.positional!.split(args.delimiter);
      if (id.some((p) => p === '')) throw new UsageError(`<id> ${JSON.stringify(args.positional)} has an empty part`);
      if (args.history && !target.history) throw new Error('this registry keeps no history (RASK_REGISTRY_HISTORY_DAYS=0)');
      const report = await inspect(store, args.project, id, args.history && target.history ? { history: target.history } : {});
      if (args.json) console.log(JSON.stringify(report, null, 2));
      else printInspection(report);
      return 0;
    }
    case 'export': {
      const file = args.positional!;
      const fd = file === '-' ? 1 : openSync(file, 'w');
      try {
        const summary = await exportRegistry(needHistory(target), scope, args.at ?? new Date(), (line) => void writeSync(fd, line), {
          onProgress: (n) => progress.show(`export: ${n} keys`),
        });
        progress.done();
        if (file === '-') console.error(JSON.stringify({ exported: summary }));
        else if (args.json) console.log(JSON.stringify({ exported: { ...summary, file } }, null, 2));
        else console.log(`exported ${summary.keys} keys (${summary.bytes} bytes) of ${'all' in scope ? 'the whole registry' : `project ${args.project}`} as at ${summary.at} to ${file}`);
      } finally {
        if (fd !== 1) closeSync(fd);
      }
      return 0;
    }
    case 'import': {
      const summary = await importRegistry(store, readFileSync(args.positional!, 'utf8'), {
        mapStorage: args.mapStorage,
        onProgress: (n) => progress.show(`import: ${n} keys`),
      });
      progress.done();
      if (args.json) console.log(JSON.stringify({ imported: summary }, null, 2));
      else console.log(`imported ${summary.keys} keys (${summary.created} created, ${summary.replaced} start-up records replaced, ${summary.remapped} storage roots rewritten) as at ${summary.at} into ${store.url}`);
      return 0;
    }
    case 'restore': {
      const result = await restoreRegistry(store, needHistory(target), scope, args.at!, {
        dryRun: args.dryRun,
        dataExists: manifestsPresent(target.services),
        onProgress: (done, total, phase) => progress.show(`restore: ${phase} ${done}${total === undefined ? '' : `/${total}`}`),
      });
      progress.done();
      if (args.json) console.log(JSON.stringify({ restore: result }, null, 2));
      else printRestore(result);
      return result.conflicts.length === 0 && result.dataGone.length === 0 ? 0 : 1;
    }
    default:
      throw new UsageError(`registry ${args.command} is not available in this build`);
  }
}
