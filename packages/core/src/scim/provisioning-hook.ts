/**
 * The provisioning hook (issue 41, item 8): functions an app registers with
 * `app.provisioning.onProvision(hook)` that are asked before a SCIM request grants something, and
 * may refuse it (no seats left, a licence that does not cover the group). A grant is:
 *
 * - `user.create`: a user is created (active or not);
 * - `user.activate`: an inactive user becomes active (a PATCH or PUT with `active` true);
 * - `group.roles`: people gain application roles through a group (`GroupRoles`): members added to
 *   a group that maps to roles, a group created with members, or a group renamed so that its
 *   members gain roles they did not have.
 *
 * Never asked for a deactivation, a deletion, a membership removal or a change that grants
 * nothing: those always go through. A refusal answers the SCIM error the hook chose from a safe
 * set (400 `invalidValue`, 403, 409 `uniqueness`) and changes nothing. A hook that throws,
 * answers something that is not a decision, or has not answered within
 * {@link PROVISIONING_HOOK_TIMEOUT_MS} fails the request with 503 and `Retry-After` (the
 * provisioning client sends it again later), changes nothing and is logged with its error's name
 * only. Plain data, no Fastify types.
 */
import type { DirectoryUser, DirectoryUserInput } from '../directory/directory-store.js'
import { CoreError } from '../errors.js'
import { ScimError, type ScimType } from './scim-errors.js'

/** What every grant says: the connection asking and the application tenant it provisions. @public @experimental */
export interface ProvisioningGrantBase {
  readonly connection: string
  readonly tenant: string
}

/** A group as a grant shows it (no `id` when it is being created). @public @experimental */
export interface ProvisioningGrantGroup {
  readonly id?: string
  readonly displayName: string
  readonly externalId?: string
}

/**
 * What a SCIM request is about to grant (see the module comment). `user.create` carries the user
 * as it will be created (no id yet); `user.activate` the user as it is now (inactive);
 * `group.roles` the group as it will be, every role it maps to, and the users who gain roles.
 *
 * @public @experimental
 */
export type ProvisioningGrant =
  | (ProvisioningGrantBase & { readonly type: 'user.create', readonly user: Omit<DirectoryUserInput, 'identity'> })
  | (ProvisioningGrantBase & { readonly type: 'user.activate', readonly user: DirectoryUser })
  | (ProvisioningGrantBase & { readonly type: 'group.roles', readonly group: ProvisioningGrantGroup, readonly roles: readonly string[], readonly users: readonly DirectoryUser[] })

/** The statuses a hook may refuse with. @public @experimental */
export type ProvisioningRefusalStatus = 400 | 403 | 409

/**
 * A provisioning hook's answer: `{ allow: true }`, or `{ allow: false }` with the SCIM status
 * (default 403) and a `detail` the customer's directory shows its administrators (at most
 * {@link MAX_PROVISIONING_REFUSAL_DETAIL_LENGTH} characters, control characters removed; say what to do, never
 * anything of another customer).
 *
 * @public @experimental
 */
export type ProvisioningHookResult =
  | { readonly allow: true }
  | { readonly allow: false, readonly status?: ProvisioningRefusalStatus, readonly detail?: string }

/** The hook's second argument. @public @experimental */
export interface ProvisioningHookContext {
  /** Fires at the time limit: stop the work, the request has failed already. */
  readonly signal: AbortSignal
}

/**
 * Asked before a SCIM request grants something (see the module comment); hooks are asked in the
 * order registered, and the first refusal wins. It sees a copy of the grant. It may be asked
 * about a grant that then does not happen (the store refuses a duplicate userName, the client
 * gives up): count what the store holds, not the calls.
 *
 * @public @experimental
 */
export type ProvisioningHook = (grant: ProvisioningGrant, context: ProvisioningHookContext) => ProvisioningHookResult | Promise<ProvisioningHookResult>

/** The time a hook has to answer. @public @experimental */
export const PROVISIONING_HOOK_TIMEOUT_MS = 10_000

/** Longest `detail` sent to the client; a longer one is cut. @public @experimental */
export const MAX_PROVISIONING_REFUSAL_DETAIL_LENGTH = 200

const REFUSAL_SCIM_TYPES: Readonly<Record<ProvisioningRefusalStatus, ScimType | undefined>> = { 400: 'invalidValue', 403: undefined, 409: 'uniqueness' }
const DEFAULT_DETAIL = 'The application refused this change.'

/** The log lines the hooks' outcome writes. */
export interface ProvisioningHookLog {
  readonly info: (fields: Record<string, unknown>, message: string) => void
  readonly error: (fields: Record<string, unknown>, message: string) => void
}

/** A hook that did not answer in time, or answered something that is not a decision. */
class HookAnswerError extends CoreError {
  override readonly name = 'HookAnswerError'
  readonly failure: 'timeout' | 'invalid'

  constructor (failure: 'timeout' | 'invalid', message: string) {
    super(message)
    this.failure = failure
  }
}

/** The SCIM error of a refusal. */
function refusalOf (answer: { readonly status?: unknown, readonly detail?: unknown }): ScimError {
  const status = answer.status === undefined ? 403 : answer.status
  if (status !== 400 && status !== 403 && status !== 409) throw new HookAnswerError('invalid', 'the status is not 400, 403 or 409')
  // eslint-disable-next-line no-control-regex
  const detail = typeof answer.detail === 'string' ? answer.detail.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim().slice(0, MAX_PROVISIONING_REFUSAL_DETAIL_LENGTH) : ''
  return new ScimError(status, detail === '' ? DEFAULT_DETAIL : detail, REFUSAL_SCIM_TYPES[status])
}

/** One hook's answer as a refusal, or undefined when it allows; throws when it fails. */
async function ask (hook: ProvisioningHook, grant: ProvisioningGrant, timeoutMs: number): Promise<ScimError | undefined> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => { controller.abort(); resolve('timeout') }, timeoutMs)
  })
  try {
    const answer: unknown = await Promise.race([Promise.resolve().then(async () => await hook(structuredClone(grant), { signal: controller.signal })), timedOut])
    if (answer === 'timeout') throw new HookAnswerError('timeout', 'no answer within the time limit')
    if (answer === null || typeof answer !== 'object') throw new HookAnswerError('invalid', 'the answer is not an object')
    const { allow } = answer as { allow?: unknown }
    if (allow === true) return undefined
    if (allow !== false) throw new HookAnswerError('invalid', 'the answer has no allow: true or false')
    return refusalOf(answer)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Asks every hook about `grant`; resolves when all allow it, rejects with the {@link ScimError}
 * of the first refusal, or with a 503 when a hook fails (each logged; never the hook's message).
 */
export async function askProvisioningHooks (hooks: readonly ProvisioningHook[], grant: ProvisioningGrant, log: ProvisioningHookLog, timeoutMs = PROVISIONING_HOOK_TIMEOUT_MS): Promise<void> {
  const fields = { connection: grant.connection, grant: grant.type }
  for (const hook of hooks) {
    let refusal: ScimError | undefined
    try {
      refusal = await ask(hook, grant, timeoutMs)
    } catch (error) {
      const failure = error instanceof HookAnswerError ? error.failure : 'failed'
      log.error({ event: 'provisioning.hook.failed', ...fields, failure, ...(error instanceof HookAnswerError ? { detail: error.message } : { errorName: error instanceof Error ? error.name : typeof error }) }, 'the provisioning hook failed; nothing was changed')
      throw new ScimError(503, 'The application could not decide on this change; nothing was changed. Try again later.', undefined, { 'retry-after': '5' })
    }
    if (refusal !== undefined) {
      log.info({ event: 'provisioning.hook.refused', ...fields, status: refusal.status }, 'the provisioning hook refused a grant; nothing was changed')
      throw refusal
    }
  }
}
