#!/usr/bin/env node
// The `rask` command (package.json "bin"): runs the TypeScript CLI in functions/cli.ts through
// tsx, exactly as `npm start` runs the server. Usage: rask maintenance --help
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../functions/cli.ts');
process.exit(await main(process.argv.slice(2)));
