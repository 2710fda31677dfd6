/**
 * The sign-in pipeline without Fastify (sign-in/pipeline.ts): `take` hands back a handle (the
 * flow, or `replay` / `correlation` as the failure to report) and `complete` runs the steps in
 * order on it: group overage, claims, the flow recorded once, the application's hook, the tenant
 * claim after the hook, the session issue through its port, the previous session ended.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createKeyRing } from '../../src/data-protection/key-ring.js'
import { EmbeddedStateStore } from '../../src/state/embedded-store.js'
import { ReplayCache } from '../../src/state/replay-cache.js'
import { PendingFlows, type RequestCookies } from '../../src/sign-in/pending-flows.js'
import { SignInPipeline, type SessionIssuer, type SignInLog, type SignInPipelineOptions } from '../../src/sign-in/pipeline.js'
import { TENANT_CLAIM_TYPE, type SignInResult } from '../../src/sign-in/completion.js'
import { Principal } from '../../src/session/principal.js'
import type { SignInRequest } from '../../src/session/renewal.js'
import { loadTestConfiguration } from '../helpers/app.js'
import { sectionKeyOf } from '../../src/providers/provider-instances.js'

const PREFIX = '__Host-ProjectTemplate.Correlation.'
const config = loadTestConfiguration().config

function pipelineOf (options: Partial<SignInPipelineOptions> = {}): SignInPipeline {
  const store = new EmbeddedStateStore({ maxEntries: { session: 10, index: 10, flow: 10, replay: 10, lock: 10 }, maxCharacters: 100_000 }, Date.now)
  return new SignInPipeline({
    flows: new PendingFlows({ cookiePrefix: PREFIX, keyRing: createKeyRing([randomBytes(32)]), now: Date.now, completed: new ReplayCache(store, 'sign-in-flow') }),
    claimsTransformation: config.Authentication.ClaimsTransformation,
    authorization: config.Authorization,
    rootKey: 'ProjectTemplate',
    sectionKeyOf: (scheme) => sectionKeyOf(scheme, 'ProjectTemplate'),
    ...options
  })
}

/** A log that keeps its lines. */
function recordingLog (): SignInLog & { readonly lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const keep = (fields: Record<string, unknown>): void => { lines.push(fields) }
  return { lines, debug: keep, info: keep, warn: keep }
}

/** A session port that keeps what it issued and ended. */
function recordingSessions (carried?: string): SessionIssuer & { readonly issued: SignInRequest[], readonly ended: string[] } {
  const issued: SignInRequest[] = []
  const ended: string[] = []
  return {
    issued,
    ended,
    issue: async (request) => {
      issued.push(request)
      return new Principal({ sessionId: 's-new', scheme: request.scheme, claims: request.claims, issuedAt: 0, expiresAt: 1, absoluteExpiresAt: 1 })
    },
    carriedSessionId: () => carried,
    end: async (sessionId) => { ended.push(sessionId) }
  }
}

async function started (pipeline: SignInPipeline, previousSessionId?: string): Promise<{ cookies: RequestCookies, flowId: string }> {
  const flow = pipeline.begin({}, { scheme: 'TestIdP', returnUrl: '/orders', data: {}, ...(previousSessionId === undefined ? {} : { previousSessionId }) }, recordingLog())
  return { cookies: { [flow.cookieName]: flow.cookieValue }, flowId: flow.flowId }
}

const result = (extra: Partial<SignInResult> = {}): SignInResult => ({ scheme: 'TestIdP', claims: [{ type: 'sub', value: 'user-1', issuer: 'TestIdP' }], returnUrl: '/orders', ...extra })

describe('SignInPipeline', () => {
  test('take hands back the flow and its cookie; complete issues the session and ends the one sealed at the challenge', async () => {
    const pipeline = pipelineOf()
    const { cookies, flowId } = await started(pipeline, 'session-old')
    const taking = await pipeline.take(cookies, 'TestIdP', flowId)
    assert.equal(taking.taken.flow?.flowId, flowId)
    assert.equal(taking.cookieToDelete, Object.keys(cookies)[0])
    const sessions = recordingSessions()
    const log = recordingLog()
    const completed = await pipeline.complete(taking.taken, result(), sessions, log)
    assert.ok('signedIn' in completed)
    assert.equal(completed.returnUrl, '/orders')
    assert.equal(sessions.issued.length, 1)
    assert.deepEqual(sessions.ended, ['session-old'])
    assert.equal(log.lines.at(-1)?.event, 'external.sign_in.succeeded')
  })

  test('a second completion of one flow fails as replay, and taking it again reports replay', async () => {
    const pipeline = pipelineOf()
    const { cookies, flowId } = await started(pipeline)
    const { taken } = await pipeline.take(cookies, 'TestIdP', flowId)
    assert.ok('signedIn' in await pipeline.complete(taken, result(), recordingSessions(), recordingLog()))
    const again = await pipeline.complete(taken, result(), recordingSessions(), recordingLog())
    assert.ok('failed' in again)
    assert.equal(again.failed, 'replay')
    const retaken = await pipeline.take(cookies, 'TestIdP', flowId)
    assert.equal(retaken.taken.flow, undefined)
    assert.equal(retaken.taken.correlationFailure, 'replay')
    assert.equal((await pipeline.take({}, 'TestIdP', flowId)).taken.correlationFailure, 'correlation')
  })

  test('claims without a subject fail as claims, an unaccepted group overage as group_overage, before the flow is spent', async () => {
    const pipeline = pipelineOf()
    const { cookies, flowId } = await started(pipeline)
    const { taken } = await pipeline.take(cookies, 'TestIdP', flowId)
    const sessions = recordingSessions()
    assert.deepEqual(await pipeline.complete(taken, result({ groupOverage: 'hasgroups' }), sessions, recordingLog()), { failed: 'group_overage' })
    assert.deepEqual(await pipeline.complete(taken, result({ claims: [] }), sessions, recordingLog()), { failed: 'claims' })
    assert.equal(sessions.issued.length, 0)
    assert.ok('signedIn' in await pipeline.complete(taken, result(), sessions, recordingLog()))
  })

  test('the application\'s refusal is answered with its reason; the tenant claim is set after the hook', async () => {
    const refusing = pipelineOf({ signInHook: { hook: async () => ({ allow: false, reason: 'Not yet.' }), timeoutMs: 1000 } })
    const log = recordingLog()
    assert.deepEqual(await refusing.complete(undefined, result(), recordingSessions(), log), { refusedByApplication: 'Not yet.' })
    assert.equal(log.lines.at(-1)?.event, 'external.sign_in.refused_by_application')

    const tenantSetting = pipelineOf({ signInHook: { hook: async () => ({ allow: true, add: { [TENANT_CLAIM_TYPE]: 'other' } }), timeoutMs: 1000 } })
    const sessions = recordingSessions()
    await tenantSetting.complete(undefined, result({ runtime: { tenant: 'acme' } }), sessions, recordingLog())
    const tenants = sessions.issued[0]?.claims.filter((claim) => claim.type === TENANT_CLAIM_TYPE)
    assert.deepEqual(tenants, [{ type: TENANT_CLAIM_TYPE, value: 'acme', issuer: 'TestIdP' }])
  })

  test('the hook sees the provider source\'s tenant, never a tenant claim the IdP\'s response carried (issue 33, item 5)', async () => {
    const seen: Array<Array<{ type: string, value: string }>> = []
    const pipeline = pipelineOf({ signInHook: { hook: async (context) => { seen.push(context.claims.filter((claim) => claim.type === TENANT_CLAIM_TYPE).map(({ type, value }) => ({ type, value }))); return { allow: true } }, timeoutMs: 1000 } })
    const forged = result({ runtime: { tenant: 'acme' }, claims: [{ type: 'sub', value: 'user-1', issuer: 'TestIdP' }, { type: TENANT_CLAIM_TYPE, value: 'forged-by-idp', issuer: 'TestIdP' }] })
    const sessions = recordingSessions()
    assert.ok('signedIn' in await pipeline.complete(undefined, forged, sessions, recordingLog()))
    assert.deepEqual(seen, [[{ type: TENANT_CLAIM_TYPE, value: 'acme' }]])
    assert.deepEqual(sessions.issued[0]?.claims.filter((claim) => claim.type === TENANT_CLAIM_TYPE).map((claim) => claim.value), ['acme'])
    // A runtime provider without a tenant: the hook sees none at all.
    seen.length = 0
    await pipeline.complete(undefined, { ...forged, runtime: {} }, recordingSessions(), recordingLog())
    assert.deepEqual(seen, [[]])
  })

  test('claims too many for a session record fail as claims, not as an error', async () => {
    const pipeline = pipelineOf()
    const sessions = { ...recordingSessions(), issue: async () => { throw new RangeError('too large') } }
    const completed = await pipeline.complete(undefined, result(), sessions, recordingLog())
    assert.ok('failed' in completed)
    assert.equal(completed.failed, 'claims')
    assert.ok(completed.error instanceof RangeError)
  })
})
