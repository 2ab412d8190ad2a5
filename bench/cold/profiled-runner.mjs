// A cold start under a CPU profile (bench/cold-start.ts `--profile DIR`): starts V8's sampling
// profiler through node:inspector in this very process (no `--cpu-prof` flag, which this
// workplace's NODE_OPTIONS policy does not allow), then runs bench/cold/runner.mjs unchanged and
// writes the profile (`*.cpuprofile`, Chrome DevTools' format) when the runner exits.
// bench/cold/profile-summary.mjs reads it. The profiler's own cost (~1 ms start, sampling every
// 100 µs by default here) inflates the timings a little: profiled runs are not the bench's figures.
// argv: outDir taskRoot handler eventsFile
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector';
import path from 'node:path';

const outDir = process.argv[2];
// The runner's marks (wall-clock ms: performance.timeOrigin + now), kept with the profile with
// the offset to the profiler's clock (monotonic µs, the same clock as process.hrtime), so the
// summary can take the samples of one phase (profile-summary.mjs --phase first-call).
let marks;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const text = String(chunk);
  const at = text.indexOf('@@COLD@@');
  if (at >= 0) marks = JSON.parse(text.slice(at + '@@COLD@@'.length));
  return write(chunk, ...rest);
};
const clockOffsetUs = Number(process.hrtime.bigint() / 1000n) - (performance.timeOrigin + performance.now()) * 1000;
process.argv.splice(2, 1);
const session = new Session();
session.connect();
// An in-process session answers synchronously, so the profile can be taken in 'exit'.
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: Number(process.env.COLD_PROFILE_INTERVAL_US ?? 100) });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (err, result) => {
    if (err) throw err;
    // The bundles' source maps go along (the bench deletes the task roots after the run), so
    // the summary can name original files; Chrome DevTools ignores the extra field.
    const sourceMaps = {};
    for (const { callFrame } of result.profile.nodes) {
      const { url } = callFrame;
      if (!url.startsWith('file://') || url in sourceMaps) continue;
      const map = `${fileURLToPath(url)}.map`;
      sourceMaps[url] = existsSync(map) ? JSON.parse(readFileSync(map, 'utf8')) : null;
    }
    const file = path.join(outDir, `cold-${process.env.COLD_PROFILE_TAG ?? 'rask'}-${process.pid}.cpuprofile`);
    writeFileSync(file, JSON.stringify({ ...result.profile, sourceMaps, marks, clockOffsetUs }));
  });
});
await import('./runner.mjs');
