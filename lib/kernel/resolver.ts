import { lookup } from 'node:dns/promises';
import type { HostResolver } from '#lib/kernel/ports';

/** The system's resolver, as the connection itself would ask it (every address, in its order). */
export const systemResolver: HostResolver = { lookup: (host) => lookup(host, { all: true, verbatim: true }) };
