import { describe, expect, it } from 'vitest';
import { isSensitiveKey, REDACTED, redact, TOO_DEEP } from '#lib/webhooks/inbound/redaction';

describe('redact', () => {
  it('replaces the values of sensitive keys at any depth, whatever they hold', () => {
    // Prepare
    const payload = {
      token: 'tok-1',
      access_token: 'tok-2',
      nested: {
        client_secret: 'sec-1',
        Password: 'pw-1',
        passwd: 'pw-2',
        Authorization: 'Bearer abc',
        api_key: 'key-1',
        apiKey: 'key-2',
        'X-Api-Key': 'key-3',
        signature: 'v1=deadbeef',
        email: 'someone@example.com',
        secrets: { a: 1, b: [2, 3] },
      },
      list: [{ refresh_token: 'tok-3', keep: 'me' }],
    };

    // Act
    const redacted = redact(payload);

    // Assess
    expect(redacted).toEqual({
      token: REDACTED,
      access_token: REDACTED,
      nested: {
        client_secret: REDACTED,
        Password: REDACTED,
        passwd: REDACTED,
        Authorization: REDACTED,
        api_key: REDACTED,
        apiKey: REDACTED,
        'X-Api-Key': REDACTED,
        signature: REDACTED,
        email: REDACTED,
        secrets: REDACTED,
      },
      list: [{ refresh_token: REDACTED, keep: 'me' }],
    });
  });

  it('replaces email addresses inside any string value and keeps the rest of the text', () => {
    const redacted = redact({
      author: 'Mira Chen <mira.chen@example.com>',
      text: 'write to a.b+tag@mail.example.co.uk or c@d.io, thanks',
      whole: 'someone@example.org',
      list: ['x@y.dev', 'no address here'],
    });

    expect(redacted).toEqual({
      author: `Mira Chen <${REDACTED}>`,
      text: `write to ${REDACTED} or ${REDACTED}, thanks`,
      whole: REDACTED,
      list: [REDACTED, 'no address here'],
    });
  });

  it('leaves other values as they are and does not change its input', () => {
    // Prepare
    const payload = { id: 42, ok: true, nothing: null, ref: 'refs/heads/main', at: '2026-01-05T10:00:00Z' };
    const copy = structuredClone(payload);

    // Act
    const redacted = redact(payload);

    // Assess
    expect(redacted).toEqual(copy);
    expect(redacted).not.toBe(payload);
    expect(payload).toEqual(copy);
  });

  it('keeps a key named __proto__ as a key, redacted inside, never as the copy’s prototype', () => {
    const payload = JSON.parse('{"__proto__":{"password":"hunter2","note":"x"},"a":1}');
    const copy = redact(payload) as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(copy))).toEqual(
      JSON.parse(`{"__proto__":{"password":"${REDACTED}","note":"x"},"a":1}`),
    );
    expect(Object.getPrototypeOf(copy)).not.toEqual({ password: REDACTED, note: 'x' });
  });

  it('cuts payloads nested deeper than the table can store', () => {
    // Prepare
    let deep: unknown = 'bottom';
    for (let level = 0; level < 40; level += 1) deep = { level: deep };

    // Act
    const text = JSON.stringify(redact(deep));

    // Assess
    expect(text).toContain(TOO_DEEP);
    expect(text).not.toContain('bottom');
  });

  it.each([
    ['token', true],
    ['github_token', true],
    ['webhook_secret', true],
    ['password', true],
    ['PASSWD', true],
    ['authorization', true],
    ['api-key', true],
    ['APIKEY', true],
    ['x-hub-signature-256', true],
    ['e-mail', true],
    ['name', false],
    ['ref', false],
    ['commits', false],
  ])('treats the key %s as sensitive: %s', (key, sensitive) => {
    expect(isSensitiveKey(key)).toBe(sensitive);
  });
});
