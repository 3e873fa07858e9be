/**
 * One-off: indexes the tasks written before task search had its term index (lib/tasks/search-migration.ts),
 * so that GET /tasks?q= and GET /search find them, and deletes the whole-word postings nothing reads any
 * more. Until it has run, such a task is found once it is next written. Safe to run again and while the
 * service runs.
 *
 *   TABLE_NAME=<table> node --import tsx infra/migrations/task-search-terms.ts
 *
 * with AWS credentials for a deployed table, or `DYNAMODB_ENDPOINT=http://localhost:<port>` for the
 * DynamoDB Local of `npm start`.
 */
import { indexAllTasksWithoutTerms } from '#lib/tasks/search-migration';

const result = await indexAllTasksWithoutTerms();
console.log(
  `${result.organizations} organizations: ${result.indexed} tasks indexed, ` +
    `${result.legacyRemoved} whole-word postings deleted`,
);
