/**
 * A stand-in downstream API for the DownstreamApis tests: node:http on loopback that records every
 * request (path and Authorization header) and answers as the test sets `behave`: 200 with what it
 * saw, 401 to the first token it sees or to every token, a redirect, or a body larger than a cap.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SeenRequest { readonly method: string, readonly path: string, readonly authorization: string | undefined }

export type Behaviour =
  | { readonly kind: 'ok' }
  | { readonly kind: 'refuse_first_token' }
  | { readonly kind: 'refuse_always' }
  | { readonly kind: 'redirect', readonly location: string }
  | { readonly kind: 'large', readonly bytes: number }

export interface DownstreamServer {
  readonly origin: string
  readonly seen: SeenRequest[]
  /** Every Authorization header ever received (not cleared with `seen`). */
  readonly authorizations: Set<string>
  behave: Behaviour
  /** When set, a token it refuses is answered 401 (for example one the IdP's userinfo endpoint refuses). */
  verify?: (authorization: string) => Promise<boolean>
  close: () => Promise<void>
}

export async function startDownstreamServer (): Promise<DownstreamServer> {
  // The token each refuse_first_token behaviour refused (a new behaviour object starts afresh).
  const refusedBy = new WeakMap<Behaviour, string>()
  const state: DownstreamServer = {
    origin: '',
    seen: [],
    authorizations: new Set(),
    behave: { kind: 'ok' },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => { answer(request, response).catch(() => { response.destroy() }) })
  async function answer (request: IncomingMessage, response: ServerResponse): Promise<void> {
    const authorization = request.headers.authorization
    state.seen.push({ method: request.method ?? '', path: request.url ?? '', authorization })
    if (authorization !== undefined) state.authorizations.add(authorization)
    const behave = state.behave
    const json = (status: number, body: unknown): void => { response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)) }
    if (behave.kind === 'refuse_always') return json(401, { error: 'invalid_token' })
    if (behave.kind === 'refuse_first_token') {
      if (!refusedBy.has(behave) && authorization !== undefined) refusedBy.set(behave, authorization)
      if (authorization === undefined || refusedBy.get(behave) === authorization) return json(401, { error: 'invalid_token' })
    }
    if (behave.kind === 'redirect') {
      response.writeHead(302, { location: behave.location }).end()
      return
    }
    if (behave.kind === 'large') {
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      response.end(Buffer.alloc(behave.bytes, 0x61))
      return
    }
    if (state.verify !== undefined && (authorization === undefined || !await state.verify(authorization))) return json(401, { error: 'invalid_token' })
    json(200, { path: request.url, method: request.method })
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return Object.assign(state, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
}
