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
