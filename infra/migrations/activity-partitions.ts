/**
 * One-off: moves the activity entries an installation wrote before the activity log had partitions of
 * its own into them (lib/activity/activity-migration.ts). Safe to run again and while the service runs.
 *
 *   TABLE_NAME=<table> node --import tsx infra/migrations/activity-partitions.ts
 *
 * with AWS credentials for a deployed table, or `DYNAMODB_ENDPOINT=http://localhost:<port>` for the
 * DynamoDB Local of `npm start`.
 */
import { moveAllLegacyActivity } from '#lib/activity/activity-migration';

const result = await moveAllLegacyActivity(new Date());
console.log(
  `${result.organizations} organizations: ${result.moved} entries moved, ` +
    `${result.expired} past the retention window deleted`,
);
