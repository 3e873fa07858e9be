import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one structured JSON logger. Request middleware adds `trace_id` to every line it writes while a
 * request runs. Never log a credential, token, password or request body.
 */
export const logger = new Logger({ serviceName: 'agent-operations' });
