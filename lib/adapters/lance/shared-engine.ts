import { LanceDataEngine } from './engine.js';

let engine: LanceDataEngine | undefined;

/**
 * The process's one data engine, built on first use. One instance means one connection cache
 * and one loaded native module per Lambda container (or local server); building it costs
 * nothing until the first data operation loads LanceDB. Storage access comes from the
 * environment (the function's role on AWS, the file system locally), never from a request.
 */
export function sharedEngine(): LanceDataEngine {
  engine ??= new LanceDataEngine();
  return engine;
}
