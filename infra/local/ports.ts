import { createServer } from 'node:net';

/** A TCP port that is free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Whether something already listens on the port (any interface). The probe listens for a moment; a
 * client that connects in that moment (a health poller) is cut off at once, or it would hang and hold
 * the probe open.
 */
export function portInUse(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' || error.code === 'EACCES'),
    );
    server.once('listening', () => server.close(() => resolve(false)));
    server.listen(port, host);
  });
}
