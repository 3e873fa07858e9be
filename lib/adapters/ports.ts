/**
 * Ports: what the domain needs from the outside world. Implementations live beside each other in
 * `lib/adapters/aws` and `lib/adapters/local`; a port never imports its adapters.
 */

/** Time, injectable so that tests can move it (key rotation grace, token expiry, leases). */
export interface Clock {
  now(): Date;
}

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends one email (invites, password resets, alerts). */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

/** Context that binds a wrapped data key to what it protects (KMS EncryptionContext). */
export type KeyContext = Record<string, string>;

/**
 * Key management for envelope encryption: a fresh data key per write, wrapped by a master key that
 * never leaves the key service (AWS KMS) or the local key file.
 */
export interface KeyManagement {
  /** A new 32-byte data key, in plain and wrapped form, and the id of the master key that wrapped it. */
  generateDataKey(
    context: KeyContext,
  ): Promise<{ plaintext: Uint8Array; wrapped: Uint8Array; keyId: string }>;
  /** Unwraps a data key; throws when the key id, context or wrapped bytes do not match. */
  decryptDataKey(wrapped: Uint8Array, keyId: string, context: KeyContext): Promise<Uint8Array>;
}

/** The queues the service sends to; each name maps to one SQS queue (aws) or local queue. */
export type QueueName = 'webhook-delivery';

/**
 * Sends a message to a queue for a consumer function to process later. `send` resolves once the queue
 * has accepted the message, never after it is processed; the body must be JSON-serializable.
 */
export interface MessageQueue {
  /** `delaySeconds` holds the message back before its first delivery (SQS allows at most 900). */
  send(queue: QueueName, body: unknown, options?: { delaySeconds?: number }): Promise<void>;
}
