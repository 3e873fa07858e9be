import { secrets } from '#lib/app/secrets';
import { systemClock } from '#lib/kernel/clock';
import type { Ports } from '#lib/kernel/ports';
import { systemResolver } from '#lib/kernel/resolver';

/**
 * The composition root: `wirePorts` builds the ports one entry point uses, each at its first use and
 * once per cold start. An entry point names the adapters its routes need (`{ queue, keys }` from
 * lib/app/*), so that its bundle carries no client it never calls; tests hand in their own
 * implementations through the same door. The clock, the configured secrets and the system's resolver are
 * always wired.
 *
 * @example
 * export const handler = groupHandler('tasks', routes, { ports: { queue } });
 * const handler = tasksHandler({ ports: { queue: testQueue, clock: fixedClock(start) } });
 */
export type PortSpec = { [K in keyof Ports]?: Ports[K] | (() => Ports[K]) };

const always: PortSpec = { clock: systemClock, secrets, resolver: systemResolver };

export function wirePorts(spec: PortSpec = {}): Ports {
  const wired: PortSpec = { ...always, ...spec };
  const built = new Map<keyof Ports, unknown>();
  const ports = {} as Ports;
  for (const name of [
    'clock',
    'email',
    'keys',
    'queue',
    'payments',
    'secrets',
    'scheduler',
    'runner',
    'logs',
    'blobs',
    'resolver',
  ] as const) {
    Object.defineProperty(ports, name, {
      enumerable: true,
      get() {
        if (!built.has(name)) {
          const source = wired[name];
          if (source === undefined) {
            throw new Error(`The ${name} port is not wired into this function; name it where its handler is built`);
          }
          built.set(name, typeof source === 'function' ? (source as () => unknown)() : source);
        }
        return built.get(name);
      },
    });
  }
  return ports;
}
