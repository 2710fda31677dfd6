/**
 * The one bounded reader of every outbound response (issue 33, item 1): an identity provider,
 * above all a customer's one added at runtime, is an untrusted party, and every document it
 * answers with (discovery, signing keys, token, user information, introspection, SAML metadata)
 * is hostile input. Each response is read here, after decompression, up to the size cap of its
 * kind ({@link OUTBOUND_RESPONSE_LIMITS}, docs/security/federation.md "Outbound responses are read through one bounded reader"), and the whole
 * call (connect, headers, body) runs under one deadline. Reading stops as soon as the cap is
 * passed: the stream is cancelled, so a gzip bomb of 300 MB costs at most the cap plus one
 * decompressed chunk, and JSON or XML is only ever parsed from at most the cap.
 *
 * Every protocol reads through {@link fetchBounded} (SAML metadata, the vendor slots, the ID token
 * keys) or hands {@link boundedFetch} to its library as the fetch it must use (openid-client's
 * `customFetch` for discovery, token, user information and refresh; jose's for the back-channel
 * logout key set). A response over its cap is {@link OutboundResponseTooLargeError}: the caller
 * fails that provider the way it fails any unusable answer, and its log line carries the kind and
 * the cap ({@link tooLargeFields}), never the body.
 *
 * No Fastify types here.
 */
import type { Dispatcher } from 'undici'
import { CoreError, type LogCode } from '../errors.js'

/** What an outbound response is, which decides its size cap. */
export type OutboundResponseKind = 'discovery' | 'jwks' | 'token' | 'userinfo' | 'introspection' | 'saml_metadata' | 'api' | 'other'

/**
 * Largest body (bytes, after decompression) read per kind. Real documents are far smaller:
 * discovery documents of Entra ID, Okta, Keycloak and Auth0 are 2 to 7 KB, key sets under 10 KB,
 * token responses with large group claims under 32 KB; SAML metadata of one IdP is tens of KB
 * (a federation aggregate of thousands of IdPs is not read from a URL here).
 */
export const OUTBOUND_RESPONSE_LIMITS: Readonly<Record<OutboundResponseKind, number>> = {
  discovery: 128 * 1024,
  jwks: 256 * 1024,
  token: 256 * 1024,
  userinfo: 256 * 1024,
  introspection: 64 * 1024,
  saml_metadata: 1024 * 1024,
  /** A downstream API's answer (DownstreamApis:<Name>:MaxResponseBytes sets its own). */
  api: 1024 * 1024,
  other: 64 * 1024
}

/** The response was larger than the cap of its kind; nothing of it was kept. */
export class OutboundResponseTooLargeError extends CoreError {
  readonly code = 'RESPONSE_TOO_LARGE' satisfies LogCode
  readonly kind: OutboundResponseKind
  readonly limitBytes: number

  constructor (kind: OutboundResponseKind, limitBytes: number) {
    super(`${kind} response body over its size limit`)
    this.name = 'OutboundResponseTooLargeError'
    this.kind = kind
    this.limitBytes = limitBytes
  }
}

/** The too-large refusal along an error's `cause` chain (libraries wrap what a fetch throws), or undefined. */
export function tooLargeOf (error: unknown): OutboundResponseTooLargeError | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    if (current instanceof OutboundResponseTooLargeError) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Log fields of a too-large refusal (`responseKind`, `responseLimitBytes`), or none. */
export function tooLargeFields (error: unknown): { responseKind?: OutboundResponseKind, responseLimitBytes?: number } {
  const tooLarge = tooLargeOf(error)
  return tooLarge === undefined ? {} : { responseKind: tooLarge.kind, responseLimitBytes: tooLarge.limitBytes }
}

/**
 * Reads `response`'s body (decompressed, as fetch delivers it) up to `limitBytes` and stops there:
 * a declared Content-Length over the cap is refused before reading, and a chunked or compressed
 * body is cancelled as soon as the running total passes the cap.
 */
export async function readBounded (response: Response, kind: OutboundResponseKind, limitBytes = OUTBOUND_RESPONSE_LIMITS[kind]): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > limitBytes) {
    await response.body?.cancel().catch(() => {})
    throw new OutboundResponseTooLargeError(kind, limitBytes)
  }
  if (response.body === null) return Buffer.alloc(0)
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of response.body) {
    total += chunk.byteLength
    // Leaving the loop by throwing cancels the stream (and with it the connection and the decompressor).
    if (total > limitBytes) throw new OutboundResponseTooLargeError(kind, limitBytes)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, total)
}

export interface BoundedCall {
  readonly kind: OutboundResponseKind
  /** Milliseconds for the whole call: connect, headers and the body. */
  readonly timeoutMs: number
  /** A smaller or larger cap than the kind's (tests, a vendor slot's own setting). */
  readonly limitBytes?: number
  /**
   * The connections to use (undici's fetch with this dispatcher instead of the global fetch): a
   * provider from the provider source reaches only public addresses (outbound-address.ts).
   */
  readonly dispatcher?: Dispatcher
}

type UndiciFetch = typeof import('undici').fetch
type UndiciInit = Parameters<UndiciFetch>[1]
let undiciFetchLoaded: Promise<UndiciFetch> | undefined

/**
 * undici's fetch, loaded on the first call with a dispatcher (a provider from the provider source):
 * an app without one never loads undici (public-address-dispatcher.ts).
 */
async function undiciFetch (): Promise<UndiciFetch> {
  undiciFetchLoaded ??= import('undici').then((undici) => undici.fetch)
  return await undiciFetchLoaded
}

/** Statuses whose Response cannot carry a body (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/**
 * `fetch`, with the body read through {@link readBounded} under one deadline (joined with the
 * caller's own signal), returned as a Response whose body is the bytes read. Headers are kept but
 * for Content-Encoding and Content-Length, which described the wire and no longer apply.
 */
export async function fetchBounded (url: string | URL, init: RequestInit, call: BoundedCall): Promise<Response> {
  const deadline = AbortSignal.timeout(call.timeoutMs)
  const signal = init.signal === undefined || init.signal === null ? deadline : AbortSignal.any([init.signal, deadline])
  const response = call.dispatcher === undefined
    ? await fetch(url, { ...init, signal })
    : await (await undiciFetch())(url, { ...init, signal, dispatcher: call.dispatcher } as UndiciInit) as unknown as Response
  const body = await readBounded(response, call.kind, call.limitBytes)
  const headers = new Headers(response.headers)
  headers.delete('content-encoding')
  headers.delete('content-length')
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, { status: response.status, statusText: response.statusText, headers })
}

/** A fetch-compatible function (openid-client's and jose's `customFetch`) for calls of `kind`, or of the kind `kindOf` gives each URL. */
export function boundedFetch (kind: OutboundResponseKind | ((url: string) => OutboundResponseKind), timeoutMs: number, dispatcher?: Dispatcher): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init = {}) => await fetchBounded(url, init, { kind: typeof kind === 'function' ? kind(String(url)) : kind, timeoutMs, ...(dispatcher === undefined ? {} : { dispatcher }) })
}
