/**
 * A hostile authorization server on loopback (issue 40, items 18 and 21): its discovery document
 * names whatever endpoints the test chooses (another server's token endpoint, keys elsewhere) and
 * its own PAR endpoint keeps every form body it receives (the client assertions it could replay)
 * and answers with the `request_uri` the test chooses. Nothing else is served.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HostileIssuer {
  /** `http://127.0.0.1:<port>`: the issuer its discovery names, and the Authority to configure. */
  readonly issuer: string
  /** The discovery document's members over the defaults (issuer, authorization, PAR, jwks on its own origin). */
  document: Record<string, unknown>
  /** The PAR answer's `request_uri` (default a short URN). */
  requestUri: unknown
  /** Every form body its PAR endpoint received. */
  readonly pushed: URLSearchParams[]
  /** Paths requested, in order (discovery included). */
  readonly requests: string[]
  close: () => Promise<void>
}

async function readBody (request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > 65_536) break
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function startHostileIssuer (): Promise<HostileIssuer> {
  const pushed: URLSearchParams[] = []
  const requests: string[] = []
  const state: { document: Record<string, unknown>, requestUri: unknown } = { document: {}, requestUri: 'urn:ietf:params:oauth:request_uri:hostile' }
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0]!
    requests.push(path)
    if (path === '/.well-known/openid-configuration') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        pushed_authorization_request_endpoint: `${issuer}/par`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['private_key_jwt', 'client_secret_basic'],
        ...state.document
      }))
      return
    }
    if (path === '/par' && request.method === 'POST') {
      readBody(request).then((body) => {
        pushed.push(new URLSearchParams(body))
        response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ request_uri: state.requestUri, expires_in: 60 }))
      }).catch(() => { response.writeHead(500).end() })
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    get document () { return state.document },
    set document (value) { state.document = value },
    get requestUri () { return state.requestUri },
    set requestUri (value) { state.requestUri = value },
    pushed,
    requests,
    close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => { resolve() })) }
  }
}
