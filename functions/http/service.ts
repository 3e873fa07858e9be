import { config } from '#lib/config';
import { groupHandler, route } from '#lib/http/group-handler';
import { withStatus } from '#lib/http/results';
import { getArchHealth, getHealth, getPublicHealth, getReady, getVersion } from '#lib/routes/service';
import { archHealth, health, publicHealth, readiness } from '#lib/service/health';
import { APP_VERSION, uptimeSeconds } from '#lib/version';

const probe = { timeoutMs: config.healthCheckTimeoutMs };

export const handler = groupHandler('service', [
  route(getVersion, async () => ({ version: APP_VERSION, uptime: uptimeSeconds() })),
  route(getHealth, async () => {
    const record = await health(probe);
    return withStatus(record.status === 'ok' ? 200 : 503, record);
  }),
  route(getReady, async () => {
    const record = await readiness(probe);
    return withStatus(record.ready ? 200 : 503, record);
  }),
  route(getArchHealth, async () => {
    const record = await archHealth({ ...probe, gitSha: config.gitSha });
    return withStatus(record.status === 'ok' ? 200 : 503, record);
  }),
  route(getPublicHealth, async () => {
    const record = await publicHealth(probe);
    return withStatus(record.status === 'ok' ? 200 : 503, record);
  }),
]);
