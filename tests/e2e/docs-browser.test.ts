import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '#infra/local/gateway';

/**
 * Opens /api/docs in a real headless Chromium (Debian's package) and reads the operations Swagger UI
 * lists. CI installs chromium, so there this test never skips; elsewhere it says why it skipped.
 */
const CHROMIUM = '/usr/bin/chromium';

/** The part of Swagger UI's page object the test reads. */
interface SwaggerUi {
  specSelectors: { operations(): { toJS(): Array<{ path: string; method: string }> } };
}
const available = existsSync(CHROMIUM);

if (!available) {
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing; .ci/run installs it, so CI must not skip the docs test`);
  console.warn(`SKIPPED docs browser test: ${CHROMIUM} not found (apt-get install -y chromium)`);
}

describe.skipIf(!available)('the documentation page in a browser', () => {
  let gateway: Gateway;

  beforeAll(async () => {
    gateway = await startGateway({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('lists the API operations, loaded from the service itself', async () => {
    // Playwright launches headless with a fresh temporary profile of its own.
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      const failed: string[] = [];
      page.on('requestfailed', (request) => failed.push(request.url()));
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });

      await page.goto(`http://127.0.0.1:${gateway.port}/api/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 15_000 });

      // A large document's operations are rendered as a virtual list (only those in view are in the
      // DOM), so the operations Swagger UI loaded are read from its own state.
      const rendered = await page.locator('.opblock-summary-path').allInnerTexts();
      const loaded: string[] = await page.evaluate(() =>
        (globalThis as unknown as { ui: SwaggerUi }).ui.specSelectors
          .operations()
          .toJS()
          .map((operation) => operation.path),
      );
      expect(rendered.length).toBeGreaterThan(0);
      expect(loaded).toEqual(expect.arrayContaining(['/health', '/version', '/docs/openapi.json']));
      expect(await page.locator('.info .title').textContent()).toContain('Agent Operations Service');
      expect(failed).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
