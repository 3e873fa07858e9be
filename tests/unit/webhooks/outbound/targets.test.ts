import { describe, expect, it, vi } from 'vitest';
import { TargetRefusedError, vetTarget } from '#lib/webhooks/outbound/targets';

/** The delivery's target check with a fake DNS port: no network, no database. */
describe('vetTarget', () => {
  it('resolves a name once and answers the address it checked', async () => {
    const lookup = vi.fn(async () => [{ address: '93.184.216.34', family: 4 }]);
    const target = await vetTarget(new URL('https://hooks.example.com/x'), { allowPrivateTargets: false, lookup });
    expect(target).toEqual({ address: '93.184.216.34', family: 4 });
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('refuses a name when any address it resolves to is private', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    await expect(
      vetTarget(new URL('https://mixed.example.com/x'), { allowPrivateTargets: false, lookup }),
    ).rejects.toBeInstanceOf(TargetRefusedError);
  });

  it('lets private addresses through where the deployment allows them', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const target = await vetTarget(new URL('http://receiver.test/x'), { allowPrivateTargets: true, lookup });
    expect(target.address).toBe('127.0.0.1');
  });
});
