import { randomBytes } from 'node:crypto';
import { keys as keyManagement } from '#lib/app/keys';
import { saveCredential } from '#lib/credentials/store';
import { contextWith } from '#tests/support/context';

export type InboundSecrets = Record<'git' | 'deploy' | 'chat', string>;

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('hex')}`;

/** Stores new git, deploy and chat webhook secrets in an organization's credential store, as its owner would. */
export async function storeInboundSecrets(owner: { id: number; orgId: string }): Promise<InboundSecrets> {
  const secrets = { git: newWebhookSecret(), deploy: newWebhookSecret(), chat: newWebhookSecret() };
  for (const [source, value] of Object.entries(secrets)) {
    await saveCredential(contextWith({ keys: keyManagement }), {
      orgId: owner.orgId,
      key: `webhook.${source}.secret`,
      value,
      actor: `user:${owner.id}`,
    });
  }
  return secrets;
}
