/**
 * A load balancer in front of several app processes for the tests: a real HTTP proxy on
 * 127.0.0.1 that forwards each request, Host header unchanged (as a balancer that preserves the
 * host does), to the instance the request names in `x-test-instance`, else to the {@link
 * Balancer.pinned} instance (a browser that cannot send the header: its whole sign-in goes to
 * one instance), else round robin. The header is removed before forwarding. Bounded: each forwarded request times out after 10 s.
 */
import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export const INSTANCE_HEADER = 'x-test-instance'

export class Balancer {
  readonly #server: Server
  readonly #upstreams = new Map<string, number>()
  #next = 0
  /** Where a request that names no instance goes; undefined: round robin. */
  pinned: string | undefined

  constructor () {
    this.#server = createServer((request, response) => { this.#forward(request, response) })
  }

  async listen (): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    return this.origin
  }

  get origin (): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  /** Adds (or replaces) the instance `name` listening on 127.0.0.1:`port`. */
  add (name: string, port: number): void {
    this.#upstreams.set(name, port)
  }

  #forward (request: IncomingMessage, response: ServerResponse): void {
    const named = request.headers[INSTANCE_HEADER]
    const names = [...this.#upstreams.keys()]
    const name = typeof named === 'string' ? named : this.pinned ?? names[this.#next++ % names.length]
    const port = name === undefined ? undefined : this.#upstreams.get(name)
    if (port === undefined) {
      response.writeHead(502).end()
      return
    }
    const headers = { ...request.headers }
    delete headers[INSTANCE_HEADER]
    const upstream = forward({ host: '127.0.0.1', port, method: request.method, path: request.url, headers, timeout: 10_000 }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    upstream.on('timeout', () => { upstream.destroy(new Error('upstream timeout')) })
    upstream.on('error', () => { if (!response.headersSent) response.writeHead(502); response.end() })
    request.pipe(upstream)
  }

  async close (): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }
}
