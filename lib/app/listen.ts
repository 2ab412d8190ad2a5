import type { Server } from 'node:http';
import { ConfigError } from '../config.js';

/**
 * Binds the port before anything else happens, so a port already in use is a one-line
 * configuration error (like a bad RASK_* value) and the data directory is untouched.
 */
export function listenOrExplain(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') {
        reject(new ConfigError(`invalid configuration: RASK_PORT: ${where} is already in use; stop the other process or choose another RASK_PORT`));
      } else if (err.code === 'EACCES') {
        reject(new ConfigError(`invalid configuration: RASK_PORT: not allowed to listen on ${where}; choose a port above 1023`));
      } else if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
        reject(new ConfigError(`invalid configuration: RASK_HOST: ${host} is not an address of this machine`));
      } else {
        reject(err);
      }
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
