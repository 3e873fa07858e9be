/**
 * The tenancy rule of the service's own log lines, shared by every log source and the logs domain: a
 * line belongs to the organization its `org_id` or `orgId` field names (the logger's call sites use
 * either). A line that names none (start-up, service-wide work) belongs to no organization, and a line
 * whose two fields disagree to none either: no caller is ever shown it.
 *
 * @example
 * lineOrg({ level: 'INFO', message: 'agent tick', orgId: 'org_1' }) // 'org_1'
 * lineOrg({ level: 'WARN', message: 'queue record failed' }) // undefined
 */
export const LOG_ORG_FIELDS = ['org_id', 'orgId'] as const;

export function lineOrg(record: Record<string, unknown>): string | undefined {
  const named = LOG_ORG_FIELDS.map((field) => record[field]).filter((value) => value !== undefined);
  if (named.length === 0 || !named.every((value) => typeof value === 'string' && value === named[0])) return undefined;
  return named[0] as string;
}

/** Whether the line belongs to `orgId`. */
export const belongsTo = (record: Record<string, unknown>, orgId: string): boolean => lineOrg(record) === orgId;
