/**
 * One-off: moves the dependent links an installation wrote before tasks carried `blocks` onto the tasks
 * (lib/tasks/task-blocks-migration.ts). Safe to run again and while the service runs; run it right after
 * the upgrade: until then GET /tasks/{id} leaves the dependents linked before it out of `blocking.blocks`.
 *
 *   TABLE_NAME=<table> node --import tsx infra/migrations/task-blocks.ts
 *
 * with AWS credentials for a deployed table, or `DYNAMODB_ENDPOINT=http://localhost:<port>` for the
 * DynamoDB Local of `npm start`.
 */
import { moveAllLegacyLinks } from '#lib/tasks/task-blocks-migration';

const result = await moveAllLegacyLinks();
console.log(
  `${result.organizations} organizations: ${result.moved} dependent links moved onto their tasks, ` +
    `${result.dropped} no longer true deleted`,
);
