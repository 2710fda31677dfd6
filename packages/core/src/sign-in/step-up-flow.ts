/**
 * A step-up sign-in's part of the pending flow (issue 36, item 3): what the challenge asked the
 * provider for, when, and for which user. Sealed into the flow's correlation cookie with the
 * protocol's own values (pending-flows.ts), so the callback checks the response against the
 * server-side policy the challenge read, never against anything the browser sends; and the
 * returning user must be the session's own (scheme, issuer, subject), else the sign-in is refused
 * as `step_up_user` (sign-in/pipeline.ts). Plain data, no Fastify types.
 */
import type { AuthenticationRequirement } from '../session/authentication-proof.js'
import type { UserIdentity } from '../session/user-identity.js'

/** The flow data key that holds the step-up. */
const STEP_UP_KEY = 'stepUp'

/** A step-up the challenge started. */
export interface StepUpFlow {
  readonly requirement: AuthenticationRequirement
  /** When the challenge asked, seconds since the epoch (a maximum age of 0 needs a later authentication). */
  readonly requestedAtSeconds: number
  /** The session's user: the returning user must be the same. */
  readonly identity: UserIdentity
}

/** The flow data that carries `stepUp`, to merge with the protocol's own values. */
export function stepUpFlowData (stepUp: StepUpFlow): Record<string, string> {
  const { requirement, identity } = stepUp
  return {
    [STEP_UP_KEY]: JSON.stringify({
      r: {
        ...(requirement.acrValues === undefined ? {} : { a: requirement.acrValues }),
        ...(requirement.amr === undefined ? {} : { m: requirement.amr }),
        ...(requirement.maxAgeSeconds === undefined ? {} : { t: requirement.maxAgeSeconds }),
        ...(requirement.authnContextComparison === undefined ? {} : { c: requirement.authnContextComparison })
      },
      at: stepUp.requestedAtSeconds,
      u: [identity.scheme, identity.issuer, identity.subject]
    })
  }
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string')

/**
 * The step-up a flow's data carries, undefined for an ordinary sign-in. A value that does not
 * parse (it was sealed by this app, so only a bug makes one) is a step-up that nothing satisfies.
 */
export function stepUpOfFlow (data: Readonly<Record<string, string>>): StepUpFlow | undefined {
  const sealed = data[STEP_UP_KEY]
  if (sealed === undefined) return undefined
  const unusable: StepUpFlow = { requirement: { acrValues: [''] }, requestedAtSeconds: Number.MAX_SAFE_INTEGER, identity: { scheme: '', issuer: '', subject: '' } }
  let parsed: { r?: { a?: unknown, m?: unknown, t?: unknown, c?: unknown }, at?: unknown, u?: unknown }
  try {
    parsed = JSON.parse(sealed) as typeof parsed
  } catch {
    return unusable
  }
  const { r, at, u } = parsed
  if (r === undefined || typeof at !== 'number' || !isStrings(u) || u.length !== 3) return unusable
  if ((r.a !== undefined && !isStrings(r.a)) || (r.m !== undefined && !isStrings(r.m)) || (r.t !== undefined && typeof r.t !== 'number') ||
    (r.c !== undefined && r.c !== 'exact' && r.c !== 'minimum')) return unusable
  return {
    requirement: {
      ...(r.a === undefined ? {} : { acrValues: r.a as string[] }),
      ...(r.m === undefined ? {} : { amr: r.m as string[] }),
      ...(r.t === undefined ? {} : { maxAgeSeconds: r.t as number }),
      ...(r.c === undefined ? {} : { authnContextComparison: r.c as 'exact' | 'minimum' })
    },
    requestedAtSeconds: at,
    identity: { scheme: u[0]!, issuer: u[1]!, subject: u[2]! }
  }
}
