/**
 * Connection limits (issue 13, "Connections") against a real server listening on 127.0.0.1: a
 * request whose body stalls (Content-Length 60000, one byte sent), to the SAML ACS and elsewhere,
 * or whose headers stall, is answered 408 and its connection closed within the configured
 * timeouts, twenty at once as well; the parser's own 400/431/408 answers are problem+json naming
 * nothing that was sent; a request without Host gets the application's own 400. The defaults
 * restore Node's limits that Fastify turns off.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type AddressInfo } from 'node:net'
import { build, buildTestApp, type TestApp } from '../helpers/app.js'
import { createSigningKey } from '../helpers/saml2/certificates.js'

interface Exchange {
  /** Everything the server sent before closing. */
  readonly response: string
  /** Milliseconds from the first byte sent to the close. */
  readonly closedAfterMs: number
}

/** Sends `data` and waits (bounded by `limitMs`) for the server to close the connection. */
async function exchange (port: number, data: string | Buffer, limitMs: number): Promise<Exchange> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    const chunks: Buffer[] = []
    let started = 0
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the connection open for more than ${limitMs} ms`))
    }, limitMs)
    socket.on('connect', () => { started = Date.now(); socket.write(data) })
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ response: Buffer.concat(chunks).toString('utf8'), closedAfterMs: Date.now() - started })
    })
  })
}

const stalledPost = (path: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\nS`

function assertProblem (response: string, status: number): Record<string, unknown> {
  assert.match(response, new RegExp(`^HTTP/1\\.1 ${status} `))
  const [head = '', body = ''] = response.split('\r\n\r\n')
  assert.match(head, /\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/i)
  assert.match(head, /\r\nconnection: close(\r\n|$)/i)
  const problem = JSON.parse(body) as Record<string, unknown>
  assert.equal(problem.status, status)
  return problem
}

const REQUEST_TIMEOUT_S = 2
const HEADERS_TIMEOUT_S = 1
/** Timeout plus Node's checking interval (half the header timeout) plus slack for a loaded machine. */
const BOUND_MS = (REQUEST_TIMEOUT_S + HEADERS_TIMEOUT_S) * 1000 + 5000

describe('connection timeouts on a listening server', () => {
  let t: TestApp
  let port: number
  before(async () => {
    t = await buildTestApp({
      nodeEnv: 'development',
      testSignIn: false,
      settings: {
        Hosting: { RequestTimeoutSeconds: REQUEST_TIMEOUT_S, HeadersTimeoutSeconds: HEADERS_TIMEOUT_S },
        Authentication: {
          Providers: {
            Saml2: {
              Enabled: true,
              EntityId: 'http://127.0.0.1/sp',
              LoadMetadata: false,
              IdpEntityId: 'https://idp.example.test',
              IdpSingleSignOnUrl: 'https://idp.example.test/sso',
              IdpSigningCertificates: [createSigningKey('connections-idp').certificateBase64]
            }
          }
        }
      }
    })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    port = (t.app.server.address() as AddressInfo).port
  })
  after(async () => { await t.app.close() })

  // Each of these waits out a timeout; they wait at the same time (the server handles each
  // connection on its own), so the file takes one request timeout instead of five.
  describe('stalled requests', { concurrency: true }, () => {
    for (const path of ['/Saml2/Acs', '/Account/Logout', '/']) {
      test(`a stalled body to ${path} is answered 408 and cut off within the request timeout`, async () => {
        const { response, closedAfterMs } = await exchange(port, stalledPost(path), BOUND_MS)
        // A route that answers before reading the body (anonymous logout: the challenge) has sent
        // that answer first; the connection is still cut off, with a 408.
        assertProblem(response.slice(response.lastIndexOf('HTTP/1.1 ')), 408)
        assert.ok(closedAfterMs >= REQUEST_TIMEOUT_S * 1000 - 100, `not before the request timeout (${closedAfterMs} ms)`)
      })
    }

    test('twenty stalled bodies at once are all cut off', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, async () => await exchange(port, stalledPost('/Saml2/Acs'), BOUND_MS)))
      for (const { response } of results) assertProblem(response, 408)
    })

    test('stalled headers are answered 408 within the header timeout', async () => {
      const { response } = await exchange(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a', HEADERS_TIMEOUT_S * 1000 + 5000)
      assertProblem(response, 408)
    })
  })

  test('oversized headers: 431 as problem+json, nothing of the headers echoed', async () => {
    const marker = 'PLANTEDHEADER'
    const { response } = await exchange(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${marker}${'h'.repeat(40 * 1024)}\r\n\r\n`, 10_000)
    const problem = assertProblem(response, 431)
    assert.equal(problem.title, 'Request Header Fields Too Large')
    assert.ok(!response.includes(marker))
  })

  test('an unparsable request: 400 as problem+json, nothing echoed', async () => {
    const { response } = await exchange(port, 'GARBAGE <script>x</script>\r\n\r\n', 10_000)
    assertProblem(response, 400)
    assert.ok(!response.includes('script'))
  })

  test('HTTP/1.1 without Host reaches the application: its 400 with the security headers', async () => {
    const { response } = await exchange(port, 'GET /health HTTP/1.1\r\nAccept: application/json\r\nConnection: close\r\n\r\n', 10_000)
    assert.match(response, /^HTTP\/1\.1 400 /)
    assert.match(response, /\r\ncontent-security-policy: /i)
    assert.match(response, /"code":"APP_ERR_HOST_NOT_ALLOWED"/)
  })

  test('parser rejections are logged with their status and code, nothing sent', () => {
    const lines = t.logs.events('request.client_error')
    assert.ok(lines.some((line) => line.statusCode === 408 && line.errorCode === 'ERR_HTTP_REQUEST_TIMEOUT'))
    assert.ok(lines.some((line) => line.statusCode === 431 && line.errorCode === 'HPE_HEADER_OVERFLOW'))
    assert.ok(!t.logs.text().includes('PLANTEDHEADER'))
    // The aborted bodies end their requests without an unhandled error.
    assert.deepEqual(t.logs.events('request.failed'), [])
  })
})

describe('connection timeout defaults', () => {
  test('request 30 s, headers 10 s, keep-alive 72 s, idle 60 s (Fastify alone would leave requests unlimited)', async (context) => {
    const t = await build(context)
    const server = t.app.server
    assert.equal(server.requestTimeout, 30_000)
    assert.equal(server.headersTimeout, 10_000)
    assert.equal(server.keepAliveTimeout, 72_000)
    assert.equal(server.timeout, 60_000)
  })
})
