/**
 * The integrations the service knows and the fields each needs. Every field is kept in the
 * organization's credential store: under `integration.<id>.<field>`, or under the well-known name the
 * service itself reads (the inbound webhook secrets).
 */
export type FieldFormat = 'text' | 'url' | 'email' | 'secret';

export interface IntegrationField {
  name: string;
  label: string;
  required: boolean;
  format: FieldFormat;
  /** The credential the field is stored as, when the service reads it by a well-known name. */
  credential?: string;
}

export interface Integration {
  id: string;
  name: string;
  category: 'source-control' | 'payments' | 'hosting' | 'messaging' | 'ai' | 'email';
  description: string;
  fields: IntegrationField[];
}

export const INTEGRATIONS: Integration[] = [
  {
    id: 'git',
    name: 'Git host',
    category: 'source-control',
    description: 'Push events start deployments; the access token lets agents read and write repositories.',
    fields: [
      { name: 'access_token', label: 'Access token', required: true, format: 'secret' },
      {
        name: 'webhook_secret',
        label: 'Webhook secret',
        required: true,
        format: 'secret',
        credential: 'webhook.git.secret',
      },
      {
        name: 'default_repository',
        label: 'Default repository (owner/name)',
        required: false,
        format: 'text',
      },
    ],
  },
  {
    id: 'payments',
    name: 'Payments provider',
    category: 'payments',
    description: 'Subscriptions, checkout and token purchases.',
    fields: [
      { name: 'secret_key', label: 'Secret API key', required: true, format: 'secret' },
      { name: 'webhook_secret', label: 'Webhook signing secret', required: true, format: 'secret' },
    ],
  },
  {
    id: 'deploy',
    name: 'Deploy host',
    category: 'hosting',
    description: 'Deployment status events and deploy triggers.',
    fields: [
      { name: 'api_token', label: 'API token', required: true, format: 'secret' },
      {
        name: 'webhook_secret',
        label: 'Webhook secret',
        required: true,
        format: 'secret',
        credential: 'webhook.deploy.secret',
      },
      { name: 'project_id', label: 'Project id', required: false, format: 'text' },
    ],
  },
  {
    id: 'chat',
    name: 'Chat platform',
    category: 'messaging',
    description: 'Inbound customer messages and replies from the support workflow.',
    fields: [
      { name: 'bot_token', label: 'Bot token', required: true, format: 'secret' },
      {
        name: 'webhook_secret',
        label: 'Webhook secret',
        required: true,
        format: 'secret',
        credential: 'webhook.chat.secret',
      },
    ],
  },
  {
    id: 'llm',
    name: 'LLM provider (OpenAI-compatible API)',
    category: 'ai',
    description: 'The chat-completions endpoint agents run on.',
    fields: [
      { name: 'base_url', label: 'Base URL', required: true, format: 'url' },
      { name: 'api_key', label: 'API key', required: true, format: 'secret' },
      { name: 'default_model', label: 'Default model', required: false, format: 'text' },
    ],
  },
  {
    id: 'email',
    name: 'Email',
    category: 'email',
    description: 'The sender address of invites, resets and alerts.',
    fields: [
      { name: 'from_address', label: 'From address', required: true, format: 'email' },
      { name: 'reply_to', label: 'Reply-to address', required: false, format: 'email' },
    ],
  },
];

export const findIntegration = (id: string): Integration | undefined =>
  INTEGRATIONS.find((integration) => integration.id === id);

export const credentialNameOf = (integration: Integration, field: IntegrationField): string =>
  field.credential ?? `integration.${integration.id}.${field.name}`;
