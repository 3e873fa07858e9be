/**
 * One agent's tick, started by its schedule with `{ org_id, agent_id }` as the event. Not written yet:
 * the declaration in serverless.yml needs its entry point to package.
 */
export async function handler(_event: { org_id: string; agent_id: number }): Promise<never> {
  throw new Error('not implemented');
}
