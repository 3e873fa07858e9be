import type { Ports } from '#lib/kernel/ports';

/** Ports a handler may use before its request is admitted: they change nothing and cost nothing. */
const FREE: ReadonlySet<keyof Ports> = new Set(['clock', 'secrets', 'resolver']);

/**
 * One request's view of the ports: every call to the outside (a queue message, an email, a schedule, a
 * key service call, a payment, a file, a run) waits until the request is admitted (`admitted()` settles)
 * and is never made when it is refused, as the request's table writes wait (lib/db/request-scope.ts).
 * The clock, the secrets and the resolver answer at once. Ports are built at their first use, as
 * `wirePorts` builds them.
 */
export function gatedPorts(ports: Ports, admitted: () => Promise<void> | undefined): Ports {
  const view = {} as Ports;
  for (const name of Object.keys(ports) as Array<keyof Ports>) {
    let gated: unknown;
    Object.defineProperty(view, name, {
      enumerable: true,
      get() {
        if (FREE.has(name)) return ports[name];
        gated ??= gate(ports[name] as object, admitted);
        return gated;
      },
    });
  }
  return view;
}

function gate<T extends object>(port: T, admitted: () => Promise<void> | undefined): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await admitted();
        return value.apply(target, args);
      };
    },
  });
}
