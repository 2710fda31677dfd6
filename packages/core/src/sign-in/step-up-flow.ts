/**
 * A step-up sign-in's part of the pending flow (issue 36, item 3): what the challenge asked the
 * provider for, when, and for which user. Sealed into the flow's correlation cookie with the
 * protocol's own values (pending-flows.ts), so the callback checks the response against the
 * server-side policy the challenge read, never against anything the browser sends; and the
 * returning user must be the session's own (scheme, issuer, subject), else the sign-in is refused
 * as `step_up_user` (sign-in/pipeline.ts). Read once per callback, when the flow is taken
 * (pipeline.ts `TakenFlow.stepUp`). Plain data, no Fastify types.
 */
import { requirementProblem, type AuthenticationRequirement } from '../session/authentication-proof.js'
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

/**
 * The flow data that carries a step-up asked for at `requestedAtSeconds`, to merge with the
 * protocol's own values. A JSON array in a fixed order, as {@link stepUpOfFlow} reads it: the
 * correlation cookie has room for 640 bytes of flow state (sign-in/correlation-slots.ts).
 */
export function stepUpFlowData (stepUp: Omit<StepUpFlow, 'requestedAtSeconds'>, requestedAtSeconds: number): Record<string, string> {
  const { requirement, identity } = stepUp
  const sealed: SealedStepUp = [
    requestedAtSeconds,
    [identity.scheme, identity.issuer, identity.subject],
    requirement.acrValues ?? null,
    requirement.amr ?? null,
    requirement.maxAgeSeconds ?? null,
    requirement.authnContextComparison ?? null
  ]
  return { [STEP_UP_KEY]: JSON.stringify(sealed) }
}

/** The sealed order: when, who, then the requirement's fields (null when absent). */
type SealedStepUp = [number, [string, string, string], readonly string[] | null, readonly string[] | null, number | null, string | null]

/**
 * The step-up a flow's data carries, undefined for an ordinary sign-in. A value that does not
 * parse (it was sealed by this app, so only a bug makes one) is a step-up that nothing satisfies.
 */
export function stepUpOfFlow (data: Readonly<Record<string, string>>): StepUpFlow | undefined {
  const sealed = data[STEP_UP_KEY]
  if (sealed === undefined) return undefined
  const unusable: StepUpFlow = { requirement: { acrValues: [''] }, requestedAtSeconds: Number.MAX_SAFE_INTEGER, identity: { scheme: '', issuer: '', subject: '' } }
  let parsed: unknown
  try {
    parsed = JSON.parse(sealed)
  } catch {
    return unusable
  }
  if (!Array.isArray(parsed) || parsed.length !== 6) return unusable
  const [requestedAtSeconds, identity, acrValues, amr, maxAgeSeconds, authnContextComparison] = parsed as unknown[]
  if (typeof requestedAtSeconds !== 'number' || !Array.isArray(identity) || identity.length !== 3 || !identity.every((part) => typeof part === 'string')) return unusable
  const requirement = {
    ...(acrValues === null ? {} : { acrValues }),
    ...(amr === null ? {} : { amr }),
    ...(maxAgeSeconds === null ? {} : { maxAgeSeconds }),
    ...(authnContextComparison === null ? {} : { authnContextComparison })
  } as AuthenticationRequirement
  if (requirementProblem(requirement) !== undefined) return unusable
  const [scheme, issuer, subject] = identity as [string, string, string]
  return { requirement, requestedAtSeconds, identity: { scheme, issuer, subject } }
}
