/**
 * What Node's HTTP parser rejects before Fastify sees a request (Fastify's `clientErrorHandler`):
 * headers over the size limit (431), a request not received within the request or header timeout
 * (408), and unparsable requests (400). There is no request object, so no negotiation: the answer
 * is always a small `application/problem+json` (RFC 9457), written to the socket with
 * `Connection: close`, `nosniff` and `no-store`, then the connection is closed. The parser's
 * error detail and the received bytes never reach the response or the log (docs/security.md,
 * "Connections").
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'

const STATUS_OF: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408
}

/** The raw HTTP/1.1 answer for a client error status (exported for tests). */
export function clientErrorResponse (statusCode: number): string {
  const title = STATUS_CODES[statusCode] ?? 'Bad Request'
  const body = JSON.stringify({ type: 'about:blank', title, status: statusCode })
  return `HTTP/1.1 ${statusCode} ${title}\r\n` +
    'Content-Type: application/problem+json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Cache-Control: no-store\r\n' +
    'X-Content-Type-Options: nosniff\r\n' +
    'Connection: close\r\n\r\n' +
    body
}

/** Fastify's `clientErrorHandler` (called with the Fastify instance as `this`). */
export function createClientErrorHandler (logger: FastifyBaseLogger): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const statusCode = STATUS_OF[error.code ?? ''] ?? 400
    logger.info({ event: 'request.client_error', statusCode, errorCode: error.code }, 'request rejected by the HTTP parser')
    // As Node does: never write into a response that has already started on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
    if (socket.writable && inFlight?.headersSent !== true) socket.end(clientErrorResponse(statusCode), () => { socket.destroy() })
    else socket.destroy()
  }
}
