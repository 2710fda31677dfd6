/**
 * Content negotiation for every error, challenge and forbid response: one place decides between an
 * HTML page (or redirect) and `application/problem+json` (RFC 9457).
 */
import { STATUS_CODES } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ERRORS, type ErrorCode } from '../errors.js'
import { DEFAULT_PAGES, type Pages } from '../views/pages.js'

/** The branded pages of the app serving `request` (plugins/branding.ts decorates them). */
function pagesOf (request: FastifyRequest): Pages {
  return (request.server as { pages?: Pages } | undefined)?.pages ?? DEFAULT_PAGES
}

function qualityOf (accept: string, matches: (type: string) => boolean): number {
  let best = -1
  for (const range of accept.slice(0, 1024).split(',')) {
    const [type = '', ...parameters] = range.split(';')
    if (!matches(type.trim().toLowerCase())) continue
    let quality = 1
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=')
      if (name?.trim() === 'q' && value !== undefined) quality = Number.parseFloat(value) || 0
    }
    best = Math.max(best, quality)
  }
  return best
}

const isJsonType = (type: string): boolean => type === 'application/json' || type === 'application/problem+json' || type === 'application/*'
const isHtmlType = (type: string): boolean => type === 'text/html' || type === 'text/*' || type === '*/*'

/**
 * Accept-header answers by header value. Clients send a handful of distinct Accept values, and
 * parsing one costs microseconds on every challenged or failed request (docs/performance.md).
 * Bounded: when full it starts over, so unusual values cost a parse, never memory.
 */
class AcceptAnswers {
  readonly #answers = new Map<string, boolean>()
  readonly #decide: (accept: string) => boolean

  constructor (decide: (accept: string) => boolean) {
    this.#decide = decide
  }

  get (accept: string): boolean {
    let answer = this.#answers.get(accept)
    if (answer === undefined) {
      answer = this.#decide(accept)
      if (this.#answers.size >= MAX_REMEMBERED_ACCEPT_VALUES) this.#answers.clear()
      if (accept.length <= MAX_REMEMBERED_ACCEPT_LENGTH) this.#answers.set(accept, answer)
    }
    return answer
  }
}

const MAX_REMEMBERED_ACCEPT_VALUES = 128
const MAX_REMEMBERED_ACCEPT_LENGTH = 512

const prefersJson = new AcceptAnswers((accept) => {
  const json = qualityOf(accept, isJsonType)
  return json > 0 && json > qualityOf(accept, isHtmlType)
})

const prefersHtml = new AcceptAnswers((accept) => {
  const html = qualityOf(accept, (type) => type === 'text/html')
  return html > 0 && html >= qualityOf(accept, isJsonType)
})

/**
 * True when the caller wants JSON: a path under `/api/`, `X-Requested-With: XMLHttpRequest`, or
 * an Accept header that prefers JSON over HTML.
 *
 * @public
 */
export function wantsJson (request: FastifyRequest): boolean {
  const url = request.url
  if (url === '/api' || url.startsWith('/api/') || url.startsWith('/api?')) return true
  if (request.headers['x-requested-with'] === 'XMLHttpRequest') return true
  const accept = request.headers.accept
  if (accept === undefined || accept === '') return false
  return prefersJson.get(accept)
}

/**
 * True for a browser page navigation: no `X-Requested-With: XMLHttpRequest` and an Accept header
 * that names `text/html` at least as highly as JSON. Used for forbid only: an authenticated browser
 * that navigates to an API URL it may not use is shown the AccessDenied page (the contract's
 * Errors table), while API calls, including anonymous ones, keep their problem documents.
 */
export function isPageNavigation (request: FastifyRequest): boolean {
  if (request.headers['x-requested-with'] === 'XMLHttpRequest') return false
  const accept = request.headers.accept
  if (accept === undefined || accept === '') return false
  return prefersHtml.get(accept)
}

export function titleOf (statusCode: number): string {
  return STATUS_CODES[statusCode] ?? 'Error'
}

/** @public */
export interface ProblemOptions {
  readonly code?: ErrorCode
  /** Safe, value-free detail. */
  readonly detail?: string
}

/**
 * The problem document up to its last member, by status and code: the same few documents are sent
 * over and over (every anonymous API call gets the 401), so they are serialized once. A detail
 * varies, so a document with one is serialized each time.
 */
const problemHeads = new Map<string, string>()

function problemHead (statusCode: number, options: ProblemOptions): string {
  const key = options.detail === undefined ? `${statusCode} ${options.code ?? ''}` : undefined
  const known = key === undefined ? undefined : problemHeads.get(key)
  if (known !== undefined) return known
  const title = options.code === undefined ? titleOf(statusCode) : ERRORS[options.code].title
  const document = JSON.stringify({
    type: 'about:blank',
    title,
    status: statusCode,
    ...(options.detail === undefined ? {} : { detail: options.detail }),
    ...(options.code === undefined ? {} : { code: options.code })
  })
  const head = `${document.slice(0, -1)},`
  // Status codes (400-599) and catalogue codes are both finite: the map stays small.
  if (key !== undefined) problemHeads.set(key, head)
  return head
}

/** Sends `application/problem+json` with the request id as an extension member. @public */
export function sendProblem (request: FastifyRequest, reply: FastifyReply, statusCode: number, options: ProblemOptions = {}): FastifyReply {
  return reply.code(statusCode).type('application/problem+json; charset=utf-8')
    .send(`${problemHead(statusCode, options)}"requestId":${JSON.stringify(request.id)}}`)
}

/** Sends the terminal error page (HTML) or a problem, by negotiation. Never a stack outside Development. @public */
export function sendError (request: FastifyRequest, reply: FastifyReply, statusCode: number, options: ProblemOptions & { developmentDetail?: string } = {}): FastifyReply {
  if (wantsJson(request)) return sendProblem(request, reply, statusCode, options)
  const title = options.code === undefined ? titleOf(statusCode) : ERRORS[options.code].title
  return reply.code(statusCode).type('text/html; charset=utf-8').send(pagesOf(request).errorPage({
    statusCode,
    title,
    requestId: request.id,
    detail: options.developmentDetail ?? options.detail
  }))
}

/** An authentication answer computed below the plugins (bearer/bearer-answers.ts): status, code and `WWW-Authenticate`. */
export interface ChallengeAnswer {
  readonly status: number
  readonly code: ErrorCode
  readonly wwwAuthenticate: string | readonly string[]
}

/** Sends `answer` as problem+json with its `WWW-Authenticate` challenge(s). */
export function sendAnswer (request: FastifyRequest, reply: FastifyReply, answer: ChallengeAnswer): FastifyReply {
  reply.header('www-authenticate', answer.wwwAuthenticate)
  return sendProblem(request, reply, answer.status, { code: answer.code })
}
