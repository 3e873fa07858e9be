import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pinnedLookup } from '#lib/webhooks/outbound/targets';

/**
 * A fetch that connects to one address, the one the service checked (lib/agents/agent-tick.ts
 * `llmConnection`), whatever the URL's host would resolve to by then: a name that answered a public
 * address to the check and a private one to the connection (DNS rebinding) still reaches the checked
 * address. TLS verifies the certificate against the host name, and the Host header is the URL's.
 *
 * Redirects are not followed: a 3xx is answered as it is, since its Location was never checked. One
 * connection per request, so that no pooled socket outlives the check.
 *
 * @example
 * createOpenAICompatible({ name: 'llm', baseURL, apiKey, fetch: pinnedFetch({ address: '203.0.113.7', family: 4 }) });
 */
export function pinnedFetch(target: { address: string; family: 4 | 6 }): typeof fetch {
  const lookup = pinnedLookup(target);

  return async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = Object.fromEntries(request.headers);
    if (body) headers['content-length'] = String(body.length);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Response>((resolve, reject) => {
      const outgoing = send(
        {
          method: request.method,
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          headers,
          lookup: lookup as never,
          agent: false,
          signal: request.signal,
        },
        (incoming) => resolve(toResponse(incoming, request.method)),
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  };
}

function toResponse(incoming: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const status = incoming.statusCode ?? 502;
  const empty = method === 'HEAD' || [101, 204, 205, 304].includes(status);
  if (empty) incoming.resume();
  const body = empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: incoming.statusMessage ?? '', headers });
}
