/**
 * One-off: moves the API key uses an installation wrote into its organizations' partitions, before
 * they had partitions of their own, into them (lib/identity/api-key-use-migration.ts). Safe to run
 * again and while the service runs; until it has run, the usage list of a key shows only the uses made
 * since the upgrade.
 *
 *   TABLE_NAME=<table> node --import tsx infra/migrations/api-key-uses.ts
 *
 * with AWS credentials for a deployed table, or `DYNAMODB_ENDPOINT=http://localhost:<port>` for the
 * DynamoDB Local of `npm start`.
 */
import { moveAllLegacyApiKeyUses } from '#lib/identity/api-key-use-migration';

const result = await moveAllLegacyApiKeyUses(new Date());
console.log(
  `${result.organizations} organizations: ${result.moved} API key uses moved, ` +
    `${result.expired} past the retention window deleted`,
);
