/**
 * The pending sign-in flow that binds a provider's callback to the browser that started it
 * (docs/security.md, "Correlation cookies"). A flow's state (scheme, return URL, protocol data,
 * expiry, the session the browser had) is sealed into one of the browser's correlation cookies
 * with its own purpose, as ASP.NET Core's remote authentication handlers do: starting a sign-in
 * writes nothing on the server, so anonymous traffic cannot fill the state store. The cookie,
 * `<prefix><slot 0-3>` = `<issued at (ms), base 36>.<sealed state>`, takes a fixed slot
 * (correlation-slots.ts). The flow id travels as OAuth `state` or SAML `RelayState` and must equal
 * the id sealed in one of the browser's slots. Only after the provider's response has been
 * verified is the flow recorded as used (a `replay:sign-in-flow:` record until the flow's expiry),
 * so a replayed callback is refused as `replay` on every instance.
 *
 * Plain inputs and results: the request's parsed cookies in, the cookie to write or delete out;
 * no Fastify types here (sign-in/pipeline.ts begins, takes and records flows and logs;
 * plugins/external-sign-in.ts sets and deletes the cookies).
 */
import { randomBytes } from 'node:crypto'
import { openJson, sealBytes } from '../data-protection/authenticated-encryption.js'
import { purposesOf, type KeyRing } from '../data-protection/key-ring.js'
import { isLocalUrl } from '../http/local-url.js'
import type { ReplayCache } from '../state/replay-cache.js'
import { chooseSlot, CORRELATION_SLOTS, fitFlowState, MAX_SEALED_FLOW_LENGTH, slotOfCookieName } from './correlation-slots.js'

/** Correlation state of one flow, as sealed in its cookie. */
export interface FlowState {
  readonly scheme: string
  readonly flowId: string
  /** Validated local return URL. */
  readonly returnUrl: string
  /** Seconds since the epoch. */
  readonly expiresAt: number
  /** Protocol values: PKCE verifier, nonce, SAML request id... */
  readonly data: Readonly<Record<string, string>>
  /** The session the browser had at the challenge (ended on completion: a cross-site POST callback does not carry it). */
  readonly previousSessionId?: string
}

export const FLOW_LIFETIME_SECONDS = 600
/** Most correlation cookies one browser holds (fixed slots); starting another flow overwrites a free or the oldest one. */
export const MAX_FLOWS_PER_BROWSER = CORRELATION_SLOTS

/** The request's parsed cookies. */
export type RequestCookies = Readonly<Record<string, string | undefined>>

/** A flow to start: what the challenge seals. */
export interface FlowStart {
  readonly scheme: string
  readonly returnUrl: string
  readonly data: Readonly<Record<string, string>>
  /** The id of the session the challenge request carried. */
  readonly previousSessionId?: string
}

/** A started flow: the cookie to set, and what happened to the return URL and to an older flow. */
export interface StartedFlow {
  readonly flowId: string
  readonly cookieName: string
  readonly cookieValue: string
  /** Set when the return URL did not fit: its length and the length of the one sealed instead. */
  readonly shortened?: { readonly length: number, readonly kept: number }
  /** An older pending flow of this browser was overwritten. */
  readonly replacedOlder: boolean
}

/** What a callback's flow id found among the browser's correlation cookies. */
export interface FlowLookup {
  /** The flow, when its cookie is there, intact, unexpired, of this scheme and not completed yet. */
  readonly flow?: FlowState
  /** The cookie that held the flow id (delete it, whatever the outcome). */
  readonly cookieToDelete?: string
  /** The browser sent no correlation cookie at all. */
  readonly noCookies: boolean
  /** The flow was found but has already been completed (a replayed callback). */
  readonly replayed: boolean
}

const FLOW_ID = /^[A-Za-z0-9_-]{22}$/
const COOKIE_VALUE = /^([0-9a-z]{1,11})\.(.+)$/s

/** The state as sealed in the cookie: short names keep the cookie small. */
interface SealedFlow {
  readonly s: string
  readonly f: string
  readonly r: string
  readonly e: number
  readonly d: Readonly<Record<string, string>>
  /** The previous session's id, when the challenge carried a session cookie. */
  readonly p?: string
}

function isStringRecord (value: unknown): value is Readonly<Record<string, string>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
}

/** The sealed state as a flow, when every field has its type and the flow is still valid. */
function flowOf (state: Partial<SealedFlow>, scheme: string, flowId: string, nowSeconds: number): FlowState | undefined {
  if (state.s !== scheme || state.f !== flowId || typeof state.e !== 'number' ||
    state.e <= nowSeconds || typeof state.r !== 'string' || !isLocalUrl(state.r) || !isStringRecord(state.d) ||
    (state.p !== undefined && typeof state.p !== 'string')) return undefined
  return { scheme: state.s, flowId: state.f, returnUrl: state.r, expiresAt: state.e, data: state.d, ...(state.p === undefined ? {} : { previousSessionId: state.p }) }
}

export interface PendingFlowsOptions {
  /** The correlation cookie name without its slot digit. */
  readonly cookiePrefix: string
  readonly keyRing: KeyRing
  /** Milliseconds since the epoch. */
  readonly now: () => number
  /** Where completed flows are recorded (scope `sign-in-flow`). */
  readonly completed: ReplayCache
}

/** Starts, finds and completes the pending flows sealed in a browser's correlation cookies. */
export class PendingFlows {
  readonly #prefix: string
  readonly #keyRing: KeyRing
  readonly #purpose: Buffer
  readonly #now: () => number
  readonly #completed: ReplayCache

  constructor (options: PendingFlowsOptions) {
    this.#prefix = options.cookiePrefix
    this.#keyRing = options.keyRing
    // The ring's application's purpose (data-protection/key-ring.ts).
    this.#purpose = Buffer.from(purposesOf(options.keyRing).correlation)
    this.#now = options.now
    this.#completed = options.completed
  }

  /** Whether the cookies hold a correlation cookie (a sign-in of this browser is pending). */
  holds (cookies: RequestCookies): boolean {
    for (const name in cookies) if (name.startsWith(this.#prefix)) return true
    return false
  }

  /** Seals a new flow into a free slot (else the oldest one's). */
  start (cookies: RequestCookies, start: FlowStart): StartedFlow {
    const issuedAt = Math.floor(this.#now() / 1000)
    const flowId = randomBytes(16).toString('base64url')
    const { previousSessionId } = start
    const sealed = fitFlowState((r) => JSON.stringify({
      s: start.scheme, f: flowId, r, e: issuedAt + FLOW_LIFETIME_SECONDS, d: { ...start.data }, ...(previousSessionId === undefined ? {} : { p: previousSessionId })
    } satisfies SealedFlow), start.returnUrl)
    const slots = new Map([...this.#presentSlots(cookies)].map(([slot, [at]]) => [slot, at]))
    // Milliseconds in the cookie's clear prefix: which slot is the oldest, even within one second.
    const issuedAtMs = this.#now()
    const slot = chooseSlot(slots, issuedAtMs, FLOW_LIFETIME_SECONDS * 1000, (count) => randomBytes(1)[0]! % count)
    return {
      flowId,
      cookieName: `${this.#prefix}${slot}`,
      cookieValue: `${issuedAtMs.toString(36)}.${sealBytes(sealed.json, this.#keyRing, this.#purpose)}`,
      ...(sealed.shortened ? { shortened: { length: start.returnUrl.length, kept: sealed.returnUrl.length } } : {}),
      replacedOlder: slots.has(slot)
    }
  }

  /**
   * The flow whose id a callback carries (`state`, `RelayState`), opening at most one cookie per
   * slot. Reads the store (was it completed?), never writes: {@link markCompleted} records it.
   */
  async find (cookies: RequestCookies, scheme: string, flowId: unknown): Promise<FlowLookup> {
    if (typeof flowId !== 'string' || !FLOW_ID.test(flowId)) return { noCookies: false, replayed: false }
    const slots = this.#presentSlots(cookies)
    if (slots.size === 0) return { noCookies: true, replayed: false }
    for (const [slot, [, value]] of slots) {
      const sealed = COOKIE_VALUE.exec(value)?.[2]
      const opened = sealed === undefined ? undefined : openJson<SealedFlow>(sealed, this.#keyRing, this.#purpose, MAX_SEALED_FLOW_LENGTH)
      if (opened?.f !== flowId) continue
      const cookieToDelete = `${this.#prefix}${slot}`
      const flow = flowOf(opened, scheme, flowId, Math.floor(this.#now() / 1000))
      if (flow === undefined) return { cookieToDelete, noCookies: false, replayed: false }
      // A completed flow stays completed on every instance.
      if (await this.#completed.seen(flowId)) return { cookieToDelete, noCookies: false, replayed: true }
      return { flow, cookieToDelete, noCookies: false, replayed: false }
    }
    return { noCookies: false, replayed: false }
  }

  /** Records the flow as completed; false when it already was (a replay, on any instance). */
  async markCompleted (flow: FlowState): Promise<boolean> {
    return await this.#completed.remember(flow.flowId, flow.expiresAt * 1000, this.#now())
  }

  /** The correlation slots the cookies hold: slot → [issued at in ms (0 when unreadable), value]. */
  #presentSlots (cookies: RequestCookies): Map<number, [number, string]> {
    const slots = new Map<number, [number, string]>()
    for (const [name, value] of Object.entries(cookies)) {
      const slot = slotOfCookieName(name, this.#prefix)
      if (slot === undefined || value === undefined || value === '') continue
      const match = COOKIE_VALUE.exec(value)
      slots.set(slot, [match === null ? 0 : Number.parseInt(match[1] ?? '0', 36), value])
    }
    return slots
  }
}
