/**
 * The bundles' `cls-hooked` (infra/bundle-stubs/cls-hooked.cjs, issue #37): the X-Ray SDK, as
 * Powertools' Tracer uses it in Lambda, must keep the same current segment with the stub as
 * with cls-hooked itself. Each variant is the SDK bundled with the stack's aliases (or without
 * the stub's), run in a fresh `node` in the SDK's Lambda mode (LAMBDA_TASK_ROOT and a trace
 * header set, as the runtime does), through the patterns rask's functions go through: the
 * facade segment at load, Powertools' handler middleware replacing the segment from an
 * invocation's callback and restoring it, concurrent `captureAsyncFunc` subsegments (what
 * `captureAWSv3Client` and the HTTP patcher open per call) across timers and awaits, nesting.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_ALIASES, REPO_ROOT } from '../../infra/bundling.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'rask-cls-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What the scenario observes: each step's current segment name (and, for nested ones, whether the parent is right). */
const SCENARIO = `
import { createRequire } from 'node:module';
const log = [];
let xray;
const name = () => xray.getSegment()?.name ?? null;
const tick = (ms) => new Promise((r) => setTimeout(r, ms));
// As in Lambda's runtime, the invocation does not descend from the handler module's load: its
// callback is scheduled first (as the runtime's request for the next event is its own), then the
// SDK is loaded in a callback of its own.
const invocation = new Promise((r) => setTimeout(r, 20));
setTimeout(() => {
  xray = createRequire(import.meta.url)(process.argv[2]);
  log.push(['at load', name()]);
}, 0);
await invocation;
log.push(['invoked', name()]);
// Powertools' captureLambdaHandler: the handler subsegment replaces the segment from the
// invocation's callback, outside any run, and every later callback sees it.
const facade = xray.getSegment();
const handler = facade.addNewSubsegment('## index.handler');
xray.setSegment(handler);
log.push(['handler set, next immediate', await new Promise((r) => setImmediate(() => r(name())))]);
log.push(['handler set, next timer', await new Promise((r) => setTimeout(() => r(name()), 1))]);
// Each branch logs apart: how the two interleave is up to the timers, not what is checked.
const branches = { a: [], b: [] };
await Promise.all(['a', 'b'].map((n) => xray.captureAsyncFunc(n, async (sub) => {
  const log = branches[n];
  log.push([n + ' entered', name()]);
  await tick(n === 'a' ? 8 : 1);
  log.push([n + ' after a timer', name()]);
  await xray.captureAsyncFunc(n + '.inner', async (inner) => {
    await null;
    log.push([n + '.inner', name(), (sub.subsegments ?? []).includes(inner)]);
    inner.close();
  });
  log.push([n + ' after its inner', name()]);
  await new Promise((r) => setImmediate(r));
  log.push([n + ' after an immediate', name()]);
  sub.close();
})));
log.push(...branches.a, ...branches.b);
log.push(['after both', name()]);
log.push(['sync captureFunc', xray.captureFunc('s', (sub) => { const seen = name(); sub.close(); return seen; })]);
log.push(['after captureFunc', name()]);
handler.close();
xray.setSegment(facade);
log.push(['restored', name(), await tick(1).then(name)]);
process.stdout.write(JSON.stringify(log));
process.exit(0);
`;

function observe(aliases: Record<string, string>): unknown {
  const sdk = path.join(scratch, `xray-${Object.keys(aliases).length}.cjs`);
  buildSync({
    stdin: { contents: "module.exports = require('aws-xray-sdk-core');", resolveDir: REPO_ROOT, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    alias: aliases,
    absWorkingDir: REPO_ROOT,
    outfile: sdk,
    logLevel: 'silent',
  });
  const script = path.join(scratch, 'scenario.mjs');
  writeFileSync(script, SCENARIO);
  const out = execFileSync(process.execPath, [script, sdk], {
    env: {
      PATH: process.env.PATH,
      LAMBDA_TASK_ROOT: scratch,
      AWS_LAMBDA_FUNCTION_NAME: 'cls-test',
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
      // Nothing listens there: the closed subsegments are sent over UDP and dropped.
      AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:9',
      AWS_XRAY_DEBUG_MODE: '',
    },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('the cls-hooked stub of the bundles', () => {
  it('is what the bundles alias cls-hooked/context to', () => {
    expect(BUNDLE_ALIASES['cls-hooked/context']).toBe('./infra/bundle-stubs/cls-hooked.cjs');
  });

  it('gives the X-Ray SDK the same current segment as cls-hooked, step by step', () => {
    const { 'cls-hooked/context': _stub, ...withoutStub } = BUNDLE_ALIASES;
    const real = observe(withoutStub);
    const stubbed = observe({ ...BUNDLE_ALIASES });
    expect(real).toEqual([
      ['at load', 'facade'],
      ['invoked', 'facade'],
      ['handler set, next immediate', '## index.handler'],
      ['handler set, next timer', '## index.handler'],
      ['a entered', 'a'],
      ['a after a timer', 'a'],
      ['a.inner', 'a.inner', true],
      ['a after its inner', 'a'],
      ['a after an immediate', 'a'],
      ['b entered', 'b'],
      ['b after a timer', 'b'],
      ['b.inner', 'b.inner', true],
      ['b after its inner', 'b'],
      ['b after an immediate', 'b'],
      ['after both', '## index.handler'],
      ['sync captureFunc', 's'],
      ['after captureFunc', '## index.handler'],
      ['restored', 'facade', 'facade'],
    ]);
    expect(stubbed).toEqual(real);
  });
});
