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
