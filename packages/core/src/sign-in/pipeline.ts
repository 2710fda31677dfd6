/**
 * The sign-in pipeline: how a provider's callback becomes a session, as plain steps read top-down
 * in this file. A protocol handler (plugins/providers/openid-connect-sign-in.ts, saml2-sign-in.ts,
 * oauth-vendors.ts) drives it through `app.externalSignIn` (plugins/external-sign-in.ts), which
 * only adapts Fastify to it: cookies in and out, the request's logger, the reply.
 *
 *   begin     the challenge seals a pending flow into a correlation cookie (pending-flows.ts)
 *   take      the callback takes the flow its `state` / `RelayState` names and gets a
 *             {@link TakenFlow}: all the protocol and `complete` need of the flow. Nothing is left
 *             on the request; the handle is passed on by hand.
 *   (verify)  the protocol checks the provider's response (oidc/, saml2/, oauth/) and hands over
 *             its {@link SignInResult} (completion.ts)
 *   complete  1. group overage: refused unless AcceptGroupOverage (group-overage.ts)
 *             2. claims normalization: no subject, no sign-in (completion.ts `applicationClaimsOf`)
 *             3. the flow recorded as completed: a second completion is a `replay` (pending-flows.ts);
 *                a step-up must sign in the session's own user (scheme, issuer, subject), else
 *                `step_up_user` (step-up-flow.ts)
 *             4. the application's sign-in hook: allow, change claims or refuse (sign-in-hook.ts);
 *                for a runtime provider it sees the source's tenant, never the IdP's
 *                (completion.ts `withSourceTenant`)
 *             5. the tenant claim and index keys of a runtime provider (completion.ts
 *                `sessionClaimsOf`); after the hook too, so that only the provider source speaks
 *                for the tenant
 *             6. session issue through the {@link SessionIssuer} port (`reply.signIn`), with what
 *                the provider proved of the authentication (`acr`, `amr`, `auth_time`), then the
 *                session the browser had at the challenge ends (previous-session.ts): a step-up
 *                upgrades the session so, a new id for the same user
 *             7. the audit line, the once-per-process group-path report, the return URL
 *
 * `complete` answers with a {@link Completion}: signed in (redirect to the return URL), failed (the
 * plugin's `fail` logs the failure class and shows the login page's message) or refused by the
 * application (the access-denied page with its reason). Plain inputs and results: no Fastify types.
 */
import type { AuthorizationConfiguration } from '../config/schema.js'
import { isLocalUrl } from '../http/local-url.js'
import type { Claim, Principal } from '../session/principal.js'
import { TENANT_CLAIM_TYPE } from './completion.js'
import type { SignInRequest } from '../session/renewal.js'
import { auditFieldsOf, identityAuditFields, identityOfTicket, sameIdentity, userKeyOf, type UserIdentity } from '../session/user-identity.js'
import { applicationClaimsOf, sessionClaimsOf, withSourceTenant, type ClaimsTransformation, type SignInResult } from './completion.js'
import { findGroupPathMismatch } from './group-paths.js'
import type { FlowStart, FlowState, PendingFlows, RequestCookies, StartedFlow } from './pending-flows.js'
import { previousSessionToEnd } from './previous-session.js'
import type { SignInFailure } from './sign-in-failure.js'
import type { ProvisioningAdmission, ProvisioningDecision } from './provisioning-admission.js'
import { runSignInHook, type SignInHookSettings } from './sign-in-hook.js'
import { stepUpOfFlow, type StepUpFlow } from './step-up-flow.js'

/** The log levels the pipeline writes (pino's, as `request.log` has them). */
export interface SignInLog {
  debug: (fields: Record<string, unknown>, message: string) => void
  info: (fields: Record<string, unknown>, message: string) => void
  warn: (fields: Record<string, unknown>, message: string) => void
}

/**
 * What `take` hands to the protocol and to `complete`: the pending flow a callback named, or why
 * there is none. Plain data; the adapter passes it on by hand.
 */
export interface TakenFlow {
  /** The flow, when its cookie was there, intact, unexpired, of this scheme and not completed yet. */
  readonly flow?: FlowState
  /**
   * The failure class a missing or unusable flow is reported as: `replay` when the flow named was
   * completed already (a replayed callback), else `correlation`.
   */
  readonly correlationFailure: 'correlation' | 'replay'
  /** The step-up the flow carries (step-up-flow.ts), read once here: the protocol checks its proof, `complete` its user. */
  readonly stepUp?: StepUpFlow
}

/** `take`'s answer: the handle, and what the adapter does with the browser's cookies. */
export interface FlowTaking {
  readonly taken: TakenFlow
  /** The correlation cookie that held the flow id (delete it, whatever the outcome). */
  readonly cookieToDelete?: string
  /** The browser sent no correlation cookie at all (over plain http: the cookie was not kept). */
  readonly noCookies: boolean
}

/**
 * How the pipeline issues and ends sessions: the session plugin's `reply.signIn` and
 * `app.session.revokeSession` (plugins/session.ts), adapted to one request by
 * plugins/external-sign-in.ts `sessionIssuerOf`.
 */
export interface SessionIssuer {
  /** A new session and its cookie (`reply.signIn`); a RangeError when the claims do not fit in one. */
  readonly issue: (request: SignInRequest) => Promise<Principal>
  /** The id of the session whose cookie the callback carried, if any. */
  readonly carriedSessionId: () => string | undefined
  /** Ends a session on every instance. */
  readonly end: (sessionId: string) => Promise<void>
}

/** How `complete` ended. */
export type Completion =
  | { readonly signedIn: Principal, readonly returnUrl: string }
  | { readonly failed: SignInFailure, readonly error?: unknown, readonly identity?: UserIdentity }
  | { readonly refusedByApplication: string }

export interface SignInPipelineOptions {
  readonly flows: PendingFlows
  readonly claimsTransformation: ClaimsTransformation
  /** For the group-path report (sign-in/group-paths.ts). */
  readonly authorization: AuthorizationConfiguration
  /** The configuration root key, for keys named in log lines. */
  readonly rootKey: string
  /** The colon path of the section that configures a scheme (providers/provider-instances.ts `sectionKeyOf` under the root key). */
  readonly sectionKeyOf: (scheme: string) => string
  /** The application's sign-in hook and its time limit; without one the claims pass unchanged. */
  readonly signInHook?: SignInHookSettings
  /** SCIM provisioning's step (provisioning-admission.ts); absent when provisioning is off. */
  readonly provisioning?: ProvisioningAdmission
}

/** Step 3b's log: a SCIM user linked at this sign-in, or why linking by e-mail linked none. */
function logLinking (decision: ProvisioningDecision, identity: UserIdentity, log: SignInLog): void {
  const linking = decision.linking
  if (linking === undefined) return
  if ('linked' in linking) log.info({ event: 'provisioning.sign_in.linked', connection: decision.connection, by: linking.linked, ...identityAuditFields(identity) }, 'a provisioned user was linked to the person signing in')
  else log.info({ event: 'provisioning.sign_in.email_not_linked', connection: decision.connection, reason: linking.emailNotLinked, ...identityAuditFields(identity) }, 'no provisioned user linked by e-mail address')
}

/** The sign-in pipeline of one app: begin, take, complete (the header lists the steps). */
export class SignInPipeline {
  readonly #options: SignInPipelineOptions
  /** The group-path report is written once per process. */
  #groupPathsReported = false

  constructor (options: SignInPipelineOptions) {
    this.#options = options
  }

  /** Whether the cookies hold a correlation cookie (a sign-in of this browser is pending). */
  holds (cookies: RequestCookies): boolean {
    return this.#options.flows.holds(cookies)
  }

  /** Seals a new flow (nothing is written to the state store) and logs what it displaced. */
  begin (cookies: RequestCookies, start: FlowStart, log: SignInLog): StartedFlow {
    const started = this.#options.flows.start(cookies, start)
    if (started.shortened !== undefined) log.info({ event: 'external.flow.return_url_shortened', ...started.shortened }, 'the return URL is too long for the correlation cookie: the sign-in returns to a shorter one')
    if (started.replacedOlder) log.debug({ event: 'external.flow.pruned', count: 1 }, 'an older sign-in flow of this browser abandoned')
    return started
  }

  /** The flow a callback's `state` / `RelayState` names. Reads the store, never writes: `complete` records it. */
  async take (cookies: RequestCookies, scheme: string, flowId: unknown): Promise<FlowTaking> {
    const found = await this.#options.flows.find(cookies, scheme, flowId)
    const stepUp = found.flow === undefined ? undefined : stepUpOfFlow(found.flow.data)
    return {
      taken: {
        ...(found.flow === undefined ? {} : { flow: found.flow }),
        correlationFailure: found.replayed ? 'replay' : 'correlation',
        ...(stepUp === undefined ? {} : { stepUp })
      },
      ...(found.cookieToDelete === undefined ? {} : { cookieToDelete: found.cookieToDelete }),
      noCookies: found.noCookies
    }
  }

  /**
   * Steps 1 to 7 for a verified provider response. `taken`: the callback's flow; undefined for an
   * unsolicited SAML2 response that AllowUnsolicitedResponses admits (no flow to record).
   */
  async complete (taken: TakenFlow | undefined, result: SignInResult, session: SessionIssuer, log: SignInLog): Promise<Completion> {
    if (!this.#acceptsGroupOverage(result, log)) return { failed: 'group_overage' }
    const claims = applicationClaimsOf(result, this.#options.claimsTransformation)
    if (claims === undefined) return { failed: 'claims' }
    // The response is verified: its identity may be logged with a refusal from here on.
    const identity = identityOfTicket({ scheme: result.scheme, claims })
    const flow = taken?.flow
    if (flow !== undefined && !await this.#options.flows.markCompleted(flow)) return { failed: 'replay', ...(identity === undefined ? {} : { identity }) }
    // A step-up upgrades the session of the user who started it, never another user's.
    const stepUp = taken?.stepUp
    if (stepUp !== undefined && (identity === undefined || !sameIdentity(identity, stepUp.identity))) return { failed: 'step_up_user', ...(identity === undefined ? {} : { identity }) }
    const provisioned = await this.#admitProvisioned(result, identity, withSourceTenant(result, claims), log)
    if ('failed' in provisioned) return provisioned
    // The hook sees the provider source's tenant, never one the provider's response carried.
    const hooked = await this.#applySignInHook(result.scheme, identity, withSourceTenant(result, provisioned.claims), log)
    if ('refusedByApplication' in hooked) return hooked
    const sessionClaims = sessionClaimsOf(result, hooked.claims)
    let principal
    try {
      principal = await session.issue({
        scheme: result.scheme,
        claims: sessionClaims.claims,
        ...(result.tokens === undefined ? {} : { tokens: result.tokens }),
        ...(result.authentication === undefined ? {} : { authentication: result.authentication }),
        ...(sessionClaims.indexKeys === undefined ? {} : { indexKeys: sessionClaims.indexKeys })
      })
    } catch (error) {
      // More claims than a session record may hold (far beyond hundreds of groups): a failed
      // sign-in, not a 500. Nothing has been written yet. Store failures answer 503.
      if (error instanceof RangeError) return { failed: 'claims', error, ...(identity === undefined ? {} : { identity }) }
      throw error
    }
    await endPreviousSession(flow, session, log)
    log.info({ event: 'external.sign_in.succeeded', ...auditFieldsOf(principal.ticket), ...(stepUp === undefined ? {} : { stepUp: true }) }, 'external sign-in succeeded')
    this.#reportGroupPaths(result.scheme, claims, log)
    return { signedIn: principal, returnUrl: isLocalUrl(result.returnUrl) ? result.returnUrl : '/' }
  }

  /**
   * Step 1. Logs group overage; true when the sign-in goes on (no overage, or
   * `AcceptGroupOverage`). Without its groups the user would pass every group-based deny rule:
   * refused by default.
   */
  #acceptsGroupOverage (result: SignInResult, log: SignInLog): boolean {
    if (result.groupOverage === undefined) return true
    const accepted = result.acceptGroupOverage === true
    log[accepted ? 'info' : 'warn']({
      event: 'external.sign_in.group_overage',
      provider: result.scheme,
      indicator: result.groupOverage,
      accepted,
      setting: `${this.#options.sectionKeyOf(result.scheme)}:AcceptGroupOverage`
    }, accepted ? 'group overage accepted: the user has no group claims' : 'group overage: the provider left the groups out; sign-in refused')
    return accepted
  }

  /**
   * Step 3b. A sign-in of a tenant a SCIM connection provisions: refused when its user is
   * deactivated (`deprovisioned`) or, where the connection requires it, unknown
   * (`not_provisioned`); else its directory groups' application roles added as role claims.
   */
  async #admitProvisioned (result: SignInResult, identity: UserIdentity | undefined, claims: readonly Claim[], log: SignInLog): Promise<{ readonly claims: readonly Claim[] } | { readonly failed: 'deprovisioned' | 'not_provisioned', readonly identity?: UserIdentity }> {
    const provisioning = this.#options.provisioning
    if (provisioning === undefined || identity === undefined) return { claims }
    const tenant = claims.find((claim) => claim.type === TENANT_CLAIM_TYPE && claim.issuer === result.scheme)?.value
    const decision = await provisioning.admit({ scheme: result.scheme, identity, ...(tenant === undefined ? {} : { tenant }), providerClaims: result.claims, claims, ...(result.protocol === undefined ? {} : { protocol: result.protocol }) })
    logLinking(decision, identity, log)
    if ('refused' in decision) return { failed: decision.refused, identity }
    if (decision.roles.length === 0) return { claims }
    const roleType = this.#options.authorization.RoleClaimType
    log.info({ event: 'provisioning.sign_in.roles', connection: decision.connection, roles: decision.roles }, 'application roles granted by directory groups')
    return { claims: [...claims, ...decision.roles.map((value) => ({ type: roleType, value, issuer: `Provisioning:${decision.connection ?? ''}` }))] }
  }

  /** Step 4. The claims to sign in with, or the application's refusal (logged as `external.sign_in.refused_by_application`). */
  async #applySignInHook (scheme: string, identity: UserIdentity | undefined, claims: readonly Claim[], log: SignInLog): Promise<{ readonly claims: readonly Claim[] } | { readonly refusedByApplication: string }> {
    const settings = this.#options.signInHook
    if (settings === undefined) return { claims }
    const who = identity ?? { scheme, issuer: '', subject: '' }
    const decision = await runSignInHook(settings.hook, { ...who, userKey: identity === undefined ? '' : userKeyOf(identity), claims }, settings.timeoutMs)
    if (decision.allowed) return { claims: decision.claims }
    const error = decision.error
    log.warn({
      event: 'external.sign_in.refused_by_application',
      ...(identity === undefined ? { provider: scheme } : identityAuditFields(identity)),
      refusal: decision.refusal,
      ...(decision.refusal === 'refused' ? { reason: decision.reason } : {}),
      ...(decision.refusal === 'invalid' && error instanceof Error ? { detail: error.message } : {}),
      ...(decision.refusal === 'failed' && error instanceof Error ? { errorName: error.name } : {}),
      ...(decision.refusal === 'timeout' ? { timeoutMs: settings.timeoutMs } : {})
    }, decision.refusal === 'refused' ? 'the application refused the sign-in' : 'the application\'s sign-in hook failed; sign-in refused')
    return { refusedByApplication: decision.reason }
  }

  /** Step 7, once per process: group claims that arrive as paths (/admins) while policies name bare groups. */
  #reportGroupPaths (provider: string, claims: readonly Claim[], log: SignInLog): void {
    if (this.#groupPathsReported) return
    const mismatch = findGroupPathMismatch(claims, this.#options.authorization, this.#options.rootKey)
    if (mismatch === undefined) return
    this.#groupPathsReported = true
    const entry = { event: 'authorization.group_path_mismatch', provider, keys: mismatch.keys }
    if (mismatch.keys.length > 0) log.warn(entry, 'a policy names a group without the leading slash of the group paths the provider sends')
    else log.info(entry, 'the provider sends group paths: name groups in policies with their leading slash')
  }
}

/** Step 6. The session the browser had at the challenge, when the callback did not carry it (a cross-site POST). */
async function endPreviousSession (flow: FlowState | undefined, session: SessionIssuer, log: SignInLog): Promise<void> {
  const sessionId = previousSessionToEnd(flow?.previousSessionId, session.carriedSessionId())
  if (sessionId === undefined) return
  await session.end(sessionId).catch((error: unknown) => {
    log.warn({ event: 'session.end_failed', errorName: (error as Error).name }, 'previous session not ended')
  })
}
