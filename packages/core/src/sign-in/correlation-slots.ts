/**
 * The correlation cookies' budget (docs/security.md, "Correlation cookies"; issue 26, item 2):
 * bounded in count and in bytes by construction, whatever the order or concurrency of challenges.
 *
 * - **Count:** a pending sign-in lives in one of {@link CORRELATION_SLOTS} cookies with fixed
 *   names (`<prefix>0` … `<prefix>3`). A new challenge writes a slot, it never adds a name: it
 *   takes a free slot (absent or expired) when the request shows one, else the oldest. Concurrent
 *   challenges sent with the same Cookie header can only overwrite each other, so a browser never
 *   holds more than four, however many a page (even a cross-site one) starts at once.
 * - **Bytes:** the sealed state is at most {@link MAX_FLOW_STATE_BYTES} bytes of JSON. A return
 *   URL that would not fit is shortened to its path, else to `/` ({@link fitFlowState}); so a
 *   cookie's `name=value` is at most {@link MAX_CORRELATION_COOKIE_BYTES} and all four together at
 *   most {@link MAX_CORRELATION_BYTES}, far below nginx's 8 KB header line and Node's 32 KB.
 *
 * Plain inputs and results: no Fastify types here (pending-flows.ts uses them; plugins/external-sign-in.ts sets the cookies).
 */

/** Fixed correlation cookie names per browser: a challenge overwrites one, never adds one. */
export const CORRELATION_SLOTS = 4
/** Largest sealed flow state (JSON, UTF-8 bytes); a longer return URL is shortened. */
export const MAX_FLOW_STATE_BYTES = 640
/** Key id (8), separator, base64url of IV (12) + state + GCM tag (16). */
export const MAX_SEALED_FLOW_LENGTH = 8 + 1 + Math.ceil((12 + MAX_FLOW_STATE_BYTES + 16) * 4 / 3)
/** `<issued at, base 36 (at most 11)>.<sealed state>` */
export const MAX_CORRELATION_VALUE_LENGTH = 11 + 1 + MAX_SEALED_FLOW_LENGTH
/** One `name=value` pair in the Cookie header, with the longest prefix (`__Host-` and a 50-character application name). */
export const MAX_CORRELATION_COOKIE_BYTES = '__Host-'.length + 50 + '.Correlation.'.length + 1 + 1 + MAX_CORRELATION_VALUE_LENGTH
/** Every correlation cookie of one browser together in the Cookie header (with `; ` between them). */
export const MAX_CORRELATION_BYTES = CORRELATION_SLOTS * (MAX_CORRELATION_COOKIE_BYTES + 2)

/** The slot a cookie name stands for (`<prefix>0` … `<prefix>3`), or undefined for any other name. */
export function slotOfCookieName (name: string, prefix: string): number | undefined {
  if (name.length !== prefix.length + 1 || !name.startsWith(prefix)) return undefined
  const slot = name.charCodeAt(prefix.length) - 0x30
  return slot >= 0 && slot < CORRELATION_SLOTS ? slot : undefined
}

/**
 * The slot a new flow takes. `issuedAt`: the issue time of each slot the request carries (0 when
 * unreadable), in the unit of `now` and `lifetime` (milliseconds in the plugin). A free slot (absent, or older than the flow lifetime) is chosen at
 * random among the free ones, so challenges sent at once with the same cookies spread over them;
 * with none free, the oldest is overwritten (its sign-in, if still wanted, fails as `correlation`
 * and is started again).
 */
export function chooseSlot (issuedAt: ReadonlyMap<number, number>, now: number, lifetime: number, random: (count: number) => number): number {
  const free: number[] = []
  let oldest = 0
  let oldestAt = Number.POSITIVE_INFINITY
  for (let slot = 0; slot < CORRELATION_SLOTS; slot++) {
    const at = issuedAt.get(slot)
    if (at === undefined || at + lifetime <= now) { free.push(slot); continue }
    if (at < oldestAt) { oldest = slot; oldestAt = at }
  }
  return free.length > 0 ? free[random(free.length)] ?? free[0] ?? 0 : oldest
}

/** What a return URL that does not fit becomes: its path (no query, no fragment), else `/`. */
function shorterReturnUrls (returnUrl: string): string[] {
  const end = returnUrl.search(/[?#]/)
  return end > 0 ? [returnUrl.slice(0, end), '/'] : ['/']
}

/**
 * The flow state's JSON within {@link MAX_FLOW_STATE_BYTES}: `serialize` is called with the
 * return URL, then (when too long) with its path, then with `/`. `shortened` says a shorter
 * return URL was sealed. Throws when even `/` does not fit (protocol data beyond the budget: a
 * programming error, never input).
 */
export function fitFlowState (serialize: (returnUrl: string) => string, returnUrl: string): { readonly json: string, readonly returnUrl: string, readonly shortened: boolean } {
  for (const candidate of [returnUrl, ...shorterReturnUrls(returnUrl)]) {
    const json = serialize(candidate)
    if (Buffer.byteLength(json, 'utf8') <= MAX_FLOW_STATE_BYTES) return { json, returnUrl: candidate, shortened: candidate !== returnUrl }
  }
  throw new RangeError(`a sign-in flow's state exceeds ${MAX_FLOW_STATE_BYTES} bytes even with the return URL '/'`)
}
