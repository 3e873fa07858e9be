/** The names of `T`'s methods that answer a promise: those a deferred port can stand in for. */
type AsyncMethod<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof T];

/**
 * A port whose adapter module is imported at the port's first call, not at cold start. The bundler puts
 * what `load` imports (an AWS client, Stripe, the AI SDK) into a chunk of its own, so a function whose
 * routes only sometimes send an email or queue a message does not load that client on every cold start
 * (bench/bundles.ts prints what each cold start loads). Every listed method waits for the adapter, then
 * calls it; `fixed` gives the port's plain fields. A failed import is tried again at the next call.
 *
 * @example
 * deferred(async () => {
 *   const { sesClient, sesEmail } = await import('#lib/adapters/aws/ses-email');
 *   return sesEmail(sesClient(config.region), config.emailFrom);
 * }, ['send'], {})
 */
export function deferred<T extends object, K extends AsyncMethod<T>>(
  load: () => Promise<T>,
  methods: readonly K[],
  fixed: Omit<T, K>,
): T {
  let loading: Promise<T> | undefined;
  const adapter = (): Promise<T> => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  const port: Record<PropertyKey, unknown> = { ...fixed };
  for (const name of methods) {
    port[name] = async (...args: unknown[]) => {
      const loaded = await adapter();
      return (loaded[name] as (...args: unknown[]) => Promise<unknown>).apply(loaded, args);
    };
  }
  return port as T;
}
