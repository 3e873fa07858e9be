import { config } from '#lib/config';
import { type GroupOptions, groupHandler, route } from '#lib/http/group-handler';
import { withStatus } from '#lib/http/results';
import { getArchHealth, getHealth, getPublicHealth, getReady, getVersion } from '#lib/routes/service';
import { archHealth, health, publicHealth, readiness } from '#lib/service/health';
import { APP_VERSION, uptimeSeconds } from '#lib/version';

const probe = { timeoutMs: config.healthCheckTimeoutMs };

/** How long a client that saw a failing probe is asked to wait, like every other 503. */
const PROBE_RETRY_AFTER_SECONDS = 5;

const probeAnswer = (ok: boolean, record: unknown) =>
  ok ? withStatus(200, record) : withStatus(503, record, { 'Retry-After': String(PROBE_RETRY_AFTER_SECONDS) });

/** The service function; tests pass options (real rate limits). */
export const serviceHandler = (options: GroupOptions = {}) =>
  groupHandler(
    'service',
    [
      route(getVersion, async () => ({ version: APP_VERSION, uptime: uptimeSeconds() })),
      route(getHealth, async () => {
        const record = await health(probe);
        return probeAnswer(record.status === 'ok', record);
      }),
      route(getReady, async () => {
        const record = await readiness(probe);
        return probeAnswer(record.ready, record);
      }),
      route(getArchHealth, async () => {
        const record = await archHealth({ ...probe, gitSha: config.gitSha });
        return probeAnswer(record.status === 'ok', record);
      }),
      route(getPublicHealth, async () => {
        const record = await publicHealth(probe);
        return probeAnswer(record.status === 'ok', record);
      }),
    ],
    options,
  );

export const handler = serviceHandler();
