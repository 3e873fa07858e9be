import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkHubSignature, checkTimestampedSignature } from '#lib/webhooks/inbound/signatures';

// Signatures are built here from the providers' public formats, never with the code under test.
const SECRET = 'unit-test-webhook-secret';
const BODY = '{"ref":"refs/heads/main","after":"4f2a7c9e1b3d5f8a0c6e2b4d7f9a1c3e5b8d0f2a"}';
const hex = (secret: string, message: string) => createHmac('sha256', secret).update(message).digest('hex');

describe('checkHubSignature', () => {
  it('accepts sha256=<hex HMAC of the raw body>', () => {
    expect(checkHubSignature(SECRET, BODY, `sha256=${hex(SECRET, BODY)}`)).toEqual({ ok: true });
  });

  it('accepts upper-case hex', () => {
    expect(checkHubSignature(SECRET, BODY, `sha256=${hex(SECRET, BODY).toUpperCase()}`)).toEqual({
      ok: true,
    });
  });

  it.each([
    ['no header', undefined, 'missing_header'],
    ['an empty header', '', 'missing_header'],
    ['the sha1 scheme', `sha1=${createHmac('sha1', SECRET).update(BODY).digest('hex')}`, 'malformed_header'],
    ['a bare hex value', hex(SECRET, BODY), 'malformed_header'],
    ['a truncated signature', `sha256=${hex(SECRET, BODY).slice(0, 63)}`, 'malformed_header'],
    ['another secret', `sha256=${hex('another-secret', BODY)}`, 'bad_signature'],
    ['another body', `sha256=${hex(SECRET, `${BODY} `)}`, 'bad_signature'],
  ])('refuses %s', (_case, header, reason) => {
    expect(checkHubSignature(SECRET, BODY, header)).toEqual({ ok: false, reason });
  });
});

describe('checkTimestampedSignature', () => {
  const now = new Date('2026-01-05T12:00:00Z');
  const seconds = Math.floor(now.getTime() / 1000);
  const sign = (timestamp: number | string, body = BODY, secret = SECRET) =>
    `v1=${hex(secret, `${timestamp}.${body}`)}`;
  const check = (timestamp: string | undefined, signature: string | undefined, body = BODY) =>
    checkTimestampedSignature({ secret: SECRET, rawBody: body, timestamp, signature, now });

  it('accepts v1=<hex HMAC of "timestamp.body"> within five minutes either way', () => {
    expect(check(String(seconds), sign(seconds))).toEqual({ ok: true });
    expect(check(String(seconds - 300), sign(seconds - 300))).toEqual({ ok: true });
    expect(check(String(seconds + 300), sign(seconds + 300))).toEqual({ ok: true });
  });

  it('accepts any one of several v1 signatures (secret rotation)', () => {
    const header = `v1=${hex('old-secret', `${seconds}.${BODY}`)}, ${sign(seconds)}`;
    expect(check(String(seconds), header)).toEqual({ ok: true });
  });

  it('refuses timestamps older or newer than five minutes', () => {
    expect(check(String(seconds - 301), sign(seconds - 301))).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    expect(check(String(seconds + 301), sign(seconds + 301))).toEqual({
      ok: false,
      reason: 'future_timestamp',
    });
  });

  it.each([
    ['no timestamp', undefined, () => sign(seconds), 'missing_header'],
    ['no signature', String(seconds), () => undefined, 'missing_header'],
    ['a timestamp that is not a number', 'yesterday', () => sign('yesterday'), 'malformed_header'],
    ['a signature without v1=', String(seconds), () => hex(SECRET, `${seconds}.${BODY}`), 'malformed_header'],
    ['another secret', String(seconds), () => sign(seconds, BODY, 'another-secret'), 'bad_signature'],
    ['a signature over another timestamp', String(seconds), () => sign(seconds - 1), 'bad_signature'],
    ['a signature over another body', String(seconds), () => sign(seconds, `${BODY} `), 'bad_signature'],
  ])('refuses %s', (_case, timestamp, signature, reason) => {
    expect(check(timestamp, signature())).toEqual({ ok: false, reason });
  });
});
