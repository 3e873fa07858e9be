import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '#lib/logger';
import { captureLogs } from '#tests/support/logs';

/** The logger's sinks: what the local runtime's log file receives beside the console. */
afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

describe('logger.addSink', () => {
  it('gives the sink every line at its level as JSON while the console keeps its own level', () => {
    // Prepare
    const console = captureLogs('WARN');
    const lines: string[] = [];
    const remove = logger.addSink((line) => lines.push(line), 'INFO');

    // Act
    logger.info('agent tick', { orgId: 'org_a' });
    logger.debug('too detailed');
    logger.warn('slow answer', { org_id: 'org_a' });
    remove();

    // Assess
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'agent tick', orgId: 'org_a', timestamp: expect.any(String) }),
      expect.objectContaining({ level: 'WARN', message: 'slow answer', org_id: 'org_a' }),
    ]);
    expect(console.join('')).not.toContain('agent tick');
    expect(console.join('')).toContain('slow answer');
  });

  it('stops writing to a removed sink and gives the console its level back', () => {
    // Prepare
    const console = captureLogs('WARN');
    const lines: string[] = [];
    logger.addSink((line) => lines.push(line), 'INFO')();

    // Act
    logger.info('after removal');
    logger.warn('at the console level');

    // Assess
    expect(lines).toEqual([]);
    expect(console.join('')).not.toContain('after removal');
    expect(console.join('')).toContain('at the console level');
  });

  it('keeps the sink’s level when the console is set quieter', () => {
    // Prepare
    const lines: string[] = [];
    const remove = logger.addSink((line) => lines.push(line), 'INFO');
    const console = captureLogs('ERROR');

    // Act
    logger.info('for the file only');
    remove();

    // Assess
    expect(lines.join('')).toContain('for the file only');
    expect(console.join('')).not.toContain('for the file only');
  });

  it('keeps logging when a sink throws', () => {
    // Prepare
    const console = captureLogs('INFO');
    const remove = logger.addSink(() => {
      throw new Error('disk full');
    }, 'INFO');

    // Act
    const logging = () => logger.info('still here');

    // Assess
    expect(logging).not.toThrow();
    remove();
    expect(console.join('')).toContain('still here');
  });
});
