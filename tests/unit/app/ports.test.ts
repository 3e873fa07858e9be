import { describe, expect, it, vi } from 'vitest';
import { wirePorts } from '#lib/app/ports';
import { fixedClock } from '#lib/kernel/clock';
import type { MessageQueue } from '#lib/kernel/ports';

describe('wirePorts, the composition root', () => {
  it('builds a port from its factory at its first use, once', () => {
    // Prepare
    const queue: MessageQueue = { send: async () => undefined };
    const factory = vi.fn(() => queue);
    const ports = wirePorts({ queue: factory });

    // Act / Assess
    expect(factory).not.toHaveBeenCalled();
    expect(ports.queue).toBe(queue);
    expect(ports.queue).toBe(queue);
    expect(factory).toHaveBeenCalledTimes(1);
  });

  it('takes a test’s own implementation as it is', () => {
    const clock = fixedClock(new Date('2026-01-02T03:04:05Z'));
    expect(wirePorts({ clock }).clock.now().toISOString()).toBe('2026-01-02T03:04:05.000Z');
  });

  it('names a port the function did not wire when the domain asks for it', () => {
    const ports = wirePorts({});
    expect(() => ports.payments).toThrow(/The payments port is not wired into this function/);
  });

  it('always wires the clock, the configured secrets and the system’s resolver', async () => {
    const ports = wirePorts();
    expect(ports.clock.now()).toBeInstanceOf(Date);
    expect(ports.secrets.accessTokenKey.byteLength).toBeGreaterThanOrEqual(32);
    const addresses = (await ports.resolver.lookup('localhost')).map((answer) => answer.address);
    expect(addresses.some((address) => address === '127.0.0.1' || address === '::1')).toBe(true);
  });
});
