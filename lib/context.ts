export type { Principal, RequestContext } from '#lib/kernel/context';
