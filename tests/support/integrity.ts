import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, TABLE } from '#lib/db/client';
import { pad, tenantPk } from '#lib/db/keys';
import { taskKeys, titleKey } from '#lib/tasks/task-keys';
import { isOpen, type TaskStatus } from '#lib/tasks/task-status';

/**
 * The test table read whole and held against the invariants the service keeps with its transactions:
 * every uniqueness guard names a record that exists and holds that value, every record has its guard,
 * pointers point at records, and every count kept beside records (organization and instance totals,
 * member counts, task and file counts, the token balance) equals the records counted. A write that
 * landed half (a record without its guard or count, a guard or count without its record) shows here.
 *
 * Tests only: a Scan of the file's own table, never a request path.
 */

// biome-ignore lint/suspicious/noExplicitAny: items of every record type of the table
export type Item = Record<string, any>;

/** Every item of the test file's table (strongly consistent, paged). */
export async function scanTable(): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

const TENANT = /^T#([^#]+)$/;

/** The organizations' partitions (`T#<org>`), by organization id. */
function tenants(items: Item[]): Map<string, Item[]> {
  const byOrg = new Map<string, Item[]>();
  for (const item of items) {
    const org = TENANT.exec(String(item.pk))?.[1];
    if (org === undefined) continue;
    byOrg.set(org, [...(byOrg.get(org) ?? []), item]);
  }
  return byOrg;
}

const startsWith = (prefix: string) => (item: Item) => String(item.sk).startsWith(prefix);

/** The number attributes of a sharded counter's items summed. */
function sums(shards: Item[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const shard of shards) {
    for (const [name, value] of Object.entries(shard)) {
      if (typeof value === 'number' && name !== 'expires_at') total[name] = (total[name] ?? 0) + value;
    }
  }
  return total;
}

/** What does not add up in `items` (a whole table), one sentence per problem; empty when all is well. */
export function integrityProblems(items: Item[]): string[] {
  const problems: string[] = [];
  const byKey = new Map(items.map((item) => [`${item.pk}\n${item.sk}`, item]));
  const get = (pk: string, sk: string) => byKey.get(`${pk}\n${sk}`);
  const expectEqual = (what: string, actual: unknown, expected: unknown) => {
    if (actual !== expected) problems.push(`${what}: ${String(actual)}, expected ${String(expected)}`);
  };
  const orgs = tenants(items);

  checkIdentity(items, get, problems, expectEqual);
  for (const [orgId, partition] of orgs) {
    const of = (prefix: string) => partition.filter(startsWith(prefix));
    const at = (sk: string) => get(tenantPk(orgId), sk);
    const totals = sums(
      items.filter((item) => item.pk === `${tenantPk(orgId)}#METRICS` && startsWith('TOTALS#')(item)),
    );
    const org = at('ORG');
    if (org && !org.deleted_at) {
      expectEqual(`${orgId} member_count`, org.member_count, of('MEMBER#').length);
    }
    for (const team of of('TEAM#')) {
      expectEqual(`${orgId} ${team.sk} member_count`, team.member_count, of(`TEAMMEMBER#${pad(team.id)}#`).length);
    }
    checkGuards(problems, orgId, {
      records: of('AGENT#'),
      guards: of('AGENTNAME#'),
      guardOf: (agent) => at(`AGENTNAME#${agent.name}`),
      holds: (guard, agent) => guard.agent_id === agent.id && guard.sk === `AGENTNAME#${agent.name}`,
      recordOf: (guard) => at(`AGENT#${pad(guard.agent_id)}`),
    });
    checkGuards(problems, orgId, {
      records: of('TEMPLATE#'),
      guards: of('TEMPLATESLUG#'),
      guardOf: (template) => at(`TEMPLATESLUG#${template.slug}`),
      holds: (guard, template) => guard.template_id === template.id,
      recordOf: (guard) => at(`TEMPLATE#${pad(guard.template_id)}`),
    });
    checkGuards(problems, orgId, {
      records: of('PIPELINE#'),
      guards: of('PIPELINENAME#'),
      guardOf: (pipeline) => at(`PIPELINENAME#${String(pipeline.name).toLowerCase()}`),
      holds: (guard, pipeline) => guard.pipeline_id === pipeline.id,
      recordOf: (guard) => at(`PIPELINE#${pad(guard.pipeline_id)}`),
    });
    checkGuards(problems, orgId, {
      records: of('PRODUCT#'),
      guards: of('PRODUCTID#'),
      guardOf: (product) => at(`PRODUCTID#${pad(product.id)}`),
      holds: (pointer, product) => pointer.slug === product.slug,
      recordOf: (pointer) => at(`PRODUCT#${pointer.slug}`),
    });
    const automations = of('AUTOMATION#').filter((item) => !String(item.sk).endsWith('#tick'));
    checkGuards(problems, orgId, {
      records: automations,
      guards: of('AUTOMATIONID#'),
      guardOf: (automation) => at(`AUTOMATIONID#${pad(automation.id)}`),
      holds: (pointer, automation) => pointer.automation_sk === automation.sk,
      recordOf: (pointer) => at(String(pointer.automation_sk)),
    });
    for (const guard of of('INVITEFOR#')) {
      if (!at(`INVITE#${guard.invite_id}`)) problems.push(`${orgId} ${guard.sk} names no invite`);
    }
    expectEqual(`${orgId} products total`, totals.products ?? 0, of('PRODUCT#').length);
    expectEqual(
      `${orgId} pipelines total`,
      totals.pipelines ?? 0,
      of('PIPELINE#').filter((item) => item.counted).length,
    );
    checkTasks(orgId, of, at, totals, problems, expectEqual, items);
    checkLedger(orgId, of, at, totals, problems, expectEqual);
    checkFiles(orgId, items, problems, expectEqual);
    const entries = items.filter((item) => new RegExp(`^${tenantPk(orgId)}#ACTIVITY#[a-z_]+$`).test(item.pk));
    const hours = items.filter((item) => item.pk === `${tenantPk(orgId)}#ACTIVITYCOUNT` && startsWith('HOUR#')(item));
    expectEqual(`${orgId} activity hour counts`, sums(hours).total ?? 0, entries.length);
  }
  checkInstanceTotals(items, expectEqual);
  return problems;
}

type Get = (pk: string, sk: string) => Item | undefined;
type ExpectEqual = (what: string, actual: unknown, expected: unknown) => void;

/** Records and the guards (or pointers) that belong to them, each way round. */
function checkGuards(
  problems: string[],
  orgId: string,
  pair: {
    records: Item[];
    guards: Item[];
    guardOf: (record: Item) => Item | undefined;
    holds: (guard: Item, record: Item) => boolean;
    recordOf: (guard: Item) => Item | undefined;
  },
): void {
  for (const record of pair.records) {
    const guard = pair.guardOf(record);
    if (!guard || !pair.holds(guard, record)) problems.push(`${orgId} ${record.sk} has no guard or pointer of its own`);
  }
  for (const guard of pair.guards) {
    const record = pair.recordOf(guard);
    if (!record || !pair.holds(guard, record)) problems.push(`${orgId} ${guard.sk} names no record that holds it`);
  }
}

/** Users and organizations against their instance-wide guards (`UNIQUE#…`). */
function checkIdentity(items: Item[], get: Get, problems: string[], expectEqual: ExpectEqual): void {
  const users = items.filter((item) => String(item.pk).startsWith('USER#') && item.sk === 'USER');
  for (const user of users) {
    for (const [scope, value] of [
      ['email', user.email],
      ['username', user.username],
    ]) {
      const guard = get(`UNIQUE#${scope}#${String(value).toLowerCase()}`, 'UNIQUE');
      expectEqual(`user ${user.id}'s ${scope} guard owner`, guard?.owner, String(user.id));
    }
    if (!get(tenantPk(user.personal_org_id), 'ORG'))
      problems.push(`user ${user.id}'s personal organization is missing`);
  }
  const orgs = items.filter((item) => TENANT.test(String(item.pk)) && item.sk === 'ORG');
  for (const org of orgs.filter((item) => !item.deleted_at)) {
    const guard = get(`UNIQUE#org-slug#${String(org.slug).toLowerCase()}`, 'UNIQUE');
    expectEqual(`organization ${org.id}'s slug guard owner`, guard?.owner, org.id);
    if (org.personal && get(`USER#${org.owner_id}`, 'USER')?.personal_org_id !== org.id) {
      problems.push(`personal organization ${org.id} belongs to no user`);
    }
  }
  for (const guard of items.filter((item) => String(item.pk).startsWith('UNIQUE#'))) {
    const [, scope, ...rest] = String(guard.pk).split('#');
    const value = rest.join('#');
    if (scope === 'email' || scope === 'username') {
      const user = get(`USER#${guard.owner}`, 'USER');
      if (!user || String(user[scope]).toLowerCase() !== value)
        problems.push(`${guard.pk} names no user that holds it`);
    } else if (scope === 'org-slug') {
      const org = get(tenantPk(guard.owner), 'ORG');
      if (!org || org.deleted_at || String(org.slug).toLowerCase() !== value) {
        problems.push(`${guard.pk} names no organization that holds it`);
      }
    }
  }
}

/** Tasks against their count, title guards, product counts, organization totals and queues. */
function checkTasks(
  orgId: string,
  of: (prefix: string) => Item[],
  at: (sk: string) => Item | undefined,
  totals: Record<string, number>,
  problems: string[],
  expectEqual: ExpectEqual,
  items: Item[],
): void {
  const tasks = of('TASK#');
  expectEqual(`${orgId} TASKCOUNT`, at('TASKCOUNT')?.total ?? 0, tasks.length);
  const byStatus = new Map<string, number>();
  for (const task of tasks.filter((item) => item.counted)) {
    byStatus.set(task.status, (byStatus.get(task.status) ?? 0) + 1);
  }
  for (const name of new Set([...byStatus.keys(), ...Object.keys(totals).filter((key) => key.startsWith('tasks_'))])) {
    const status = name.replace(/^tasks_/, '');
    expectEqual(`${orgId} tasks_${status} total`, totals[`tasks_${status}`] ?? 0, byStatus.get(status) ?? 0);
  }
  const guards = new Map(of('TASKTITLE#').map((guard) => [guard.sk, guard]));
  for (const task of tasks.filter((item) => isOpen(item.status as TaskStatus))) {
    const key = taskKeys.openTitle(orgId, task.product_id ?? null, titleKey(task.title));
    const guard = guards.get(key.sk);
    if (guard?.task_id !== task.id) problems.push(`${orgId} open task ${task.id} does not hold its title guard`);
    guards.delete(key.sk);
  }
  for (const guard of guards.values()) problems.push(`${orgId} title guard held by ${guard.task_id}, no open task`);
  for (const product of of('PRODUCT#')) {
    const counts: Record<string, number> = {};
    for (const task of tasks.filter((item) => item.product_id === product.id)) {
      counts[task.status] = (counts[task.status] ?? 0) + 1;
    }
    for (const [status, count] of Object.entries(product.task_counts ?? {})) {
      expectEqual(`${orgId} product ${product.slug} task_counts.${status}`, count, counts[status] ?? 0);
    }
  }
  const queues = items.filter((item) => String(item.pk).startsWith(`${tenantPk(orgId)}#QUEUE#`));
  for (const pk of new Set(queues.map((item) => String(item.pk)))) {
    const entries = queues.filter((item) => item.pk === pk && startsWith('TASK#')(item));
    const count = sums(queues.filter((item) => item.pk === pk && startsWith('COUNT#')(item))).count ?? 0;
    expectEqual(`${pk} count`, count, entries.length);
    for (const entry of entries) {
      const task = at(`TASK#${pad(entry.task_id)}`);
      if (task?.status !== 'todo') problems.push(`${pk} queues task ${entry.task_id}, which is not todo`);
    }
  }
}

/** The balance against its ledger, and the tokens used against the consumes. */
function checkLedger(
  orgId: string,
  of: (prefix: string) => Item[],
  at: (sk: string) => Item | undefined,
  totals: Record<string, number>,
  problems: string[],
  expectEqual: ExpectEqual,
): void {
  const entries = of('TOKENTX#');
  const balance = at('TOKENS')?.balance ?? 0;
  expectEqual(
    `${orgId} token balance`,
    balance,
    entries.reduce((sum, entry) => sum + entry.amount, 0),
  );
  if (balance < 0) problems.push(`${orgId} token balance is negative: ${balance}`);
  const consumed = entries.filter((entry) => entry.type === 'consume').reduce((sum, entry) => sum - entry.amount, 0);
  expectEqual(`${orgId} tokens_used total`, totals.tokens_used ?? 0, consumed);
  for (const reference of of('TOKENREF#')) {
    if (!at(reference.entry_sk)) problems.push(`${orgId} ${reference.sk} names no ledger entry`);
  }
}

/** Files against their path guards and counts (`T#<org>#FILES`). */
function checkFiles(orgId: string, items: Item[], problems: string[], expectEqual: ExpectEqual): void {
  const pk = `${tenantPk(orgId)}#FILES`;
  const partition = items.filter((item) => item.pk === pk);
  const files = partition.filter(startsWith('FILE#'));
  const paths = partition.filter(startsWith('PATH#'));
  expectEqual(`${orgId} file count`, partition.find((item) => item.sk === 'COUNTS')?.total ?? 0, files.length);
  for (const file of files) {
    if (!paths.some((path) => path.sk === `PATH#${file.path}` && path.id === file.id)) {
      problems.push(`${orgId} file ${file.id} has no path guard`);
    }
  }
  for (const path of paths) {
    if (!files.some((file) => file.id === path.id)) problems.push(`${orgId} ${path.sk} names no file`);
  }
}

/** The instance totals against the organizations, agents and tasks counted. */
function checkInstanceTotals(items: Item[], expectEqual: ExpectEqual): void {
  const totals = sums(items.filter((item) => item.pk === 'METRICS' && startsWith('TOTALS#')(item)));
  const tenant = (item: Item) => TENANT.test(String(item.pk));
  expectEqual(
    'instance organizations total',
    totals.organizations ?? 0,
    items.filter((item) => tenant(item) && item.sk === 'ORG' && item.counted && !item.deleted_at).length,
  );
  expectEqual(
    'instance agents total',
    totals.agents ?? 0,
    items.filter((item) => tenant(item) && startsWith('AGENT#')(item)).length,
  );
  expectEqual(
    'instance tasks total',
    totals.tasks ?? 0,
    items.filter((item) => tenant(item) && startsWith('TASK#')(item) && item.counted).length,
  );
}
