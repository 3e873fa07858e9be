import { describe, expect, it } from 'vitest';
import { allowanceFor, assertNoLeaks, findLeaks, registerCanary } from '#tests/support/leak-scan';

const rawKey = `osk_live_${'A1b2C3d4E5'.repeat(4)}xyz`;

describe('findLeaks', () => {
  it.each([
    [{ data: [{ id: 1 }, { id: 2, pk: 'T#o' }] }, 'data[1].pk'],
    [{ data: { gsi1sk: 'x' } }, 'data.gsi1sk'],
    [{ data: { GSI2PK: 'x' } }, 'data.GSI2PK'],
    [{ data: { key_hash: 'abc' } }, 'data.key_hash'],
    [{ data: { user: { password_hash: 'abc' } } }, 'data.user.password_hash'],
    [{ data: { envelope: { key_id: 'k' } } }, 'data.envelope'],
    [{ data: { wrapped_key: 'w' } }, 'data.wrapped_key'],
    [{ data: { encrypted_value: 'w' } }, 'data.encrypted_value'],
    [{ error: { message: 'Error: boom\n    at run (/srv/lib/a.ts:3:9)' } }, 'error.message'],
    [{ data: { note: `key ${rawKey}` } }, 'data.note'],
    [{ data: ['correct horse battery'] }, 'data[0]'],
  ])('finds the leak in %j at %s', (body, path) => {
    // Act
    const leaks = findLeaks(body);

    // Assess
    expect(leaks.map((leak) => leak.path)).toContain(path);
  });

  it.each([
    [{ data: { id: 'a', sku: 'x', tags: ['pk'], skip: 1, gsi: 'name' } }],
    [{ data: { key: 'osk_live_…AbCd', message: 'at noon (see docs)' } }],
    [{ data: [], meta: { total: 0 } }],
    ['plain'],
    [null],
  ])('finds nothing in %j', (body) => {
    expect(findLeaks(body)).toEqual([]);
  });

  it('takes a registered canary as a secret', () => {
    // Prepare
    registerCanary('sk-canary-credential');

    // Act
    const leaks = findLeaks({ data: { description: 'holds sk-canary-credential' } });

    // Assess
    expect(leaks).toEqual([{ path: 'data.description', what: 'the test secret "sk-canary-credential"' }]);
  });
});

describe('credential canaries', () => {
  it('fail any response but the credential’s own read', () => {
    // Prepare
    registerCanary('cred-canary-value', 'credential');
    const body = { data: { key: 'k', value: 'cred-canary-value' } };

    // Act
    const leaks = (path: string) => findLeaks(body, allowanceFor('GET', path));

    // Assess
    expect(leaks('/credentials/k')).toEqual([]);
    expect(leaks('/credentials')).toEqual([{ path: 'data.value', what: 'the test credential "cred-canary-value"' }]);
  });
});

describe('the allowlist', () => {
  it('lets the create, rotate and roll responses show a raw API key, and no other', () => {
    expect(allowanceFor('POST', '/organizations/org_1/api-keys')).toEqual({ rawApiKey: true });
    expect(allowanceFor('POST', '/api/v1/organizations/org_1/api-keys/k1/rotate')).toEqual({ rawApiKey: true });
    expect(allowanceFor('POST', '/organizations/org_1/api-keys/k1/roll')).toEqual({ rawApiKey: true });
    expect(allowanceFor('GET', '/organizations/org_1/api-keys')).toEqual({});
    expect(allowanceFor('POST', '/organizations/org_1/api-keys/k1/revoke')).toEqual({});
  });

  it('still refuses storage attributes on an allowed route', () => {
    expect(() => assertNoLeaks('POST', '/organizations/o/api-keys', 201, { data: { key: rawKey, pk: 'x' } })).toThrow(
      'POST /organizations/o/api-keys answered 201 with a leak: data.pk: the storage attribute "pk"',
    );
    expect(() => assertNoLeaks('POST', '/organizations/o/api-keys', 201, { data: { key: rawKey } })).not.toThrow();
  });
});
