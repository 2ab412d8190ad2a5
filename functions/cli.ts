/**
 * The `rask` CLI: one more thin entry over the same services as the server and the Lambdas.
 *
 *   rask maintenance sweep|index|reconcile|orphans [--namespace a.b] [--table a.b.t]
 *        [--dry-run] [--json] [--older-than-days N] [--retain-versions N] [--repair] [--delete]
 *        [--cursor C] [--deadline-seconds N]
 *        [--registry-bucket B [--registry-prefix P] [--region R]] [--project P]
 *   rask registry inspect|export|import|restore …   (functions/registry-cli.ts)
 *
 * Against the local data directory (RASK_DATA_DIR, as for the server) by default; with
 * --registry-bucket, against an S3 registry (credentials from the usual AWS environment).
 * A progress bar on a terminal, machine-readable JSON otherwise (or with --json).
 * Exit status: 0 done, 1 the pass found problems or could not cover everything, 2 bad usage,
 * 3 the pass is not available in this build.
 */
import { parseArgs } from 'node:util';
import { createLocalApp } from '../lib/app/local.js';
import { ConfigError, loadLocalConfig } from '../lib/config.js';
import type { PassName, PassOptions, PassReport } from '../lib/maintenance/pass.js';
import { isPassName, loadPass, PASS_NAMES } from '../lib/maintenance/passes.js';
import { s3Services } from './cli-services.js';

const USAGE = `usage: rask maintenance <${PASS_NAMES.join('|')}> [options]
       rask registry <inspect|export|import|restore> [options]   (rask registry --help)

  --namespace a.b          only tables under this namespace (parts split on --delimiter)
  --table a.b.t            only this table
  --delimiter D            separator of --namespace/--table parts (default ".")
  --dry-run                report what would be done; change nothing
  --json                   print the report as JSON (the default when stdout is not a terminal)
  --older-than-days N      this run only: reclaim versions older than N days (0 = every untagged old version)
  --retain-versions N      this run only: always keep the N newest versions
  --repair                 reconcile: run each door's own repair path
  --delete                 orphan scan: delete candidates older than the grace period
  --cursor C               resume after a previous run's cursor
  --deadline-seconds N     stop starting new tables after N seconds and print a cursor
  --registry-bucket B      use the S3 registry in bucket B instead of RASK_DATA_DIR
  --registry-prefix P      key prefix of the S3 registry (default "registry/")
  --region R               AWS region of the S3 registry
  --project P              project to scope --namespace/--table to (default RASK_PROJECT or "default")
`;

class UsageError extends Error {}

function count(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} must be a whole number of at least ${min} (got ${JSON.stringify(value)})`);
  return Number(value);
}

function parse(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      namespace: { type: 'string' },
      table: { type: 'string' },
      delimiter: { type: 'string', default: '.' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'older-than-days': { type: 'string' },
      'retain-versions': { type: 'string' },
      repair: { type: 'boolean', default: false },
      delete: { type: 'boolean', default: false },
      cursor: { type: 'string' },
      'deadline-seconds': { type: 'string' },
      'registry-bucket': { type: 'string' },
      'registry-prefix': { type: 'string', default: 'registry/' },
      region: { type: 'string' },
      project: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return { help: true as const };
  const [command, pass, ...rest] = positionals;
  if (command !== 'maintenance') throw new UsageError(command ? `unknown command ${JSON.stringify(command)}` : 'missing command');
  if (!pass || !isPassName(pass)) throw new UsageError(`unknown pass ${JSON.stringify(pass ?? '')}; passes: ${PASS_NAMES.join(', ')}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  if (values.namespace !== undefined && values.table !== undefined) throw new UsageError('give --namespace or --table, not both');
  const delimiter = values.delimiter!;
  if (delimiter === '') throw new UsageError('--delimiter must not be empty');
  const split = (v: string, flag: string) => {
    const parts = v.split(delimiter);
    if (parts.some((p) => p === '')) throw new UsageError(`${flag} ${JSON.stringify(v)} has an empty part`);
    return parts;
  };
  const deadlineSeconds = count(values['deadline-seconds'], '--deadline-seconds', 1);
  const olderThanDays = count(values['older-than-days'], '--older-than-days', 0);
  const retainVersions = count(values['retain-versions'], '--retain-versions', 1);
  const options: PassOptions = {
    ...(values.namespace !== undefined ? { scope: { namespace: split(values.namespace, '--namespace') } } : {}),
    ...(values.table !== undefined ? { scope: { table: split(values.table, '--table') } } : {}),
    dryRun: values['dry-run'],
    repair: values.repair,
    delete: values.delete,
    ...(values.cursor ? { cursor: values.cursor } : {}),
    ...(deadlineSeconds ? { deadline: Date.now() + deadlineSeconds * 1000 } : {}),
    ...(olderThanDays !== undefined || retainVersions !== undefined ? { overrides: { olderThanDays, retainVersions } } : {}),
  };
  return {
    help: false as const,
    pass: pass as PassName,
    options,
    json: values.json || !process.stdout.isTTY,
    s3: values['registry-bucket'] ? { bucket: values['registry-bucket'], prefix: values['registry-prefix']!, region: values.region } : undefined,
    project: values.project,
  };
}

/** A step's report as words: `compact done (fragments_removed=21 …)`; lists and objects left out. */
function stepLine(name: string, step: Record<string, unknown>): string {
  const details = Object.entries(step)
    .filter(([k, v]) => k !== 'status' && k !== 'reason' && (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 40)))
    .map(([k, v]) => `${k}=${String(v)}`);
  const inner = [typeof step.reason === 'string' ? step.reason : '', details.join(' ')].filter(Boolean).join('; ');
  return `${name} ${String(step.status ?? '')}${inner ? ` (${inner})` : ''}`;
}

/**
 * The report for a person: one line per table, its steps in words, then the summary; a dry
 * run's summary line says so (its counts are what a real run would do).
 */
export function humanLines(report: PassReport, options: { dryRun?: boolean } = {}): string[] {
  const lines: string[] = [];
  for (const item of report.items) {
    const name = [item.project, ...((item.table as string[] | undefined) ?? [])].join('.');
    const steps = (item.steps ?? item.indices) as Record<string, Record<string, unknown>> | undefined;
    const detail = item.skipped
      ? `skipped (${String(item.skipped)}): ${String(item.reason ?? '')}`
      : steps && typeof steps === 'object'
        ? Object.entries(steps).map(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? stepLine(k, v) : `${k}=${String(v)}`)).join('; ')
        : Object.entries(item).filter(([k]) => k !== 'project' && k !== 'table').map(([k, v]) => `${k}=${typeof v === 'object' ? '…' : String(v)}`).join(' ');
    lines.push(`${name}: ${detail}`);
  }
  const what = options.dryRun ? `${report.pass} (dry run, nothing was changed)` : report.pass;
  lines.push(`${what}: ${Object.entries(report.summary).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (report.cursor) lines.push(`stopped at the deadline; continue with --cursor ${report.cursor}`);
  if (report.reportKey) lines.push(`report: ${report.reportKey}`);
  return lines;
}

function printHuman(report: PassReport, dryRun: boolean): void {
  for (const line of humanLines(report, { dryRun })) console.log(line);
  for (const p of report.problems) console.error(`problem: ${p}`);
}

interface Bar {
  start(total: number, value: number, payload?: object): void;
  update(value: number, payload?: object): void;
  setTotal(total: number): void;
  stop(): void;
}

/**
 * Feeds a progress bar from a pass's progress. A walk does not know its total in advance, so
 * the bar runs one ahead of the tables done and is set to exactly what was done at the end
 * (100 %), before it stops.
 */
export function tableProgress(bar: Bar): { onProgress: NonNullable<PassOptions['onProgress']>; finish(): void } {
  const noun = (n: number) => (n === 1 ? 'table' : 'tables');
  let done = 0;
  bar.start(1, 0, { unit: '', noun: noun(0) });
  return {
    onProgress: (p) => {
      done = p.done;
      bar.setTotal(p.total ?? p.done + 1);
      bar.update(p.done, { unit: p.unit, noun: noun(p.done) });
    },
    finish: () => {
      bar.setTotal(Math.max(done, 1));
      bar.update(done, { unit: '', noun: noun(done) });
      bar.stop();
    },
  };
}

/** The progress bar a terminal gets (cli-progress on `stream`), fed by tableProgress. */
export async function terminalProgress(pass: PassName, stream: NodeJS.WritableStream): Promise<ReturnType<typeof tableProgress>> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { format: `${pass} {bar} {percentage}% | {value} {noun} | {unit}`, stream, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  return tableProgress(bar);
}

export async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'registry') return (await import('./registry-cli.js')).registryMain(argv.slice(1));
  let args;
  try {
    args = parse(argv);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`rask: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const pass = await loadPass(args.pass);
  if (!pass) {
    const message = `the ${args.pass} pass is not available in this build`;
    if (args.json) console.log(JSON.stringify({ pass: args.pass, available: false, error: message }));
    else console.error(`rask: ${message}`);
    return 3;
  }
  const config = loadLocalConfig(args.project ? { ...process.env, RASK_PROJECT: args.project } : process.env);
  const services = args.s3
    ? await s3Services(args.s3, config.RASK_PROJECT, config.RASK_WAREHOUSE)
    : (await createLocalApp(config)).services;

  const progress = !args.json && process.stderr.isTTY ? await terminalProgress(args.pass, process.stderr) : undefined;
  const report = await pass(services, { ...args.options, ...(progress ? { onProgress: progress.onProgress } : {}) });
  progress?.finish();
  if (args.json) console.log(JSON.stringify(report, null, 2));
  else printHuman(report, args.options.dryRun === true);
  return report.complete && report.problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(`rask: ${err instanceof ConfigError ? err.message : String((err as Error)?.stack ?? err)}`);
      process.exit(1);
    },
  );
}
