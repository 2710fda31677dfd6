/**
 * A full state store answers 503 naming what is full, and logs which setting bounds it (issue 21,
 * item 7): per kind of record, and for the character bound over every kind.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildForSuite } from '../helpers/app.js'
import { STATE_KINDS, StateStoreFullError, type StateKind } from '../../src/state/state-store.js'

const EXPECTED: Record<StateKind, { detail: string, setting: string }> = {
  session: { detail: 'sessions', setting: 'MaxSessions' },
  index: { detail: 'session index entries', setting: 'MaxSessions' },
  flow: { detail: 'pending SAML2 sign-outs', setting: 'MaxPendingSignIns' },
  replay: { detail: 'replay records', setting: 'MaxReplayRecords' },
  lock: { detail: 'token refreshes in progress', setting: 'MaxSessions' }
}

describe('APP_ERR_STATE_FULL names what is full and the setting that bounds it', () => {
  const t = buildForSuite({
    configure: (app) => {
      app.get<{ Querystring: { kind: StateKind, bound?: 'characters' } }>('/test-only/full', { config: { allowAnonymous: true } }, async (request) => {
        throw new StateStoreFullError(request.query.kind, request.query.bound ?? 'entries')
      })
    }
  })

  for (const kind of STATE_KINDS) {
    test(`${kind}: "${EXPECTED[kind].detail}", ProjectTemplate:State:Embedded:${EXPECTED[kind].setting}`, async () => {
      const response = await t.app.inject({ url: `/test-only/full?kind=${kind}`, headers: { accept: 'application/json' } })
      assert.equal(response.statusCode, 503)
      assert.equal(response.headers['retry-after'], '10')
      assert.equal(response.json().code, 'APP_ERR_STATE_FULL')
      assert.equal(response.json().detail, `The server holds as many ${EXPECTED[kind].detail} as it may. Please try again in a few minutes.`)
      const line = t.logs.events('state.full').at(-1)
      assert.equal(line?.kind, kind)
      assert.equal(line?.setting, `ProjectTemplate:State:Embedded:${EXPECTED[kind].setting}`)
    })
  }

  test('the character bound names MaxMegabytes', async () => {
    const response = await t.app.inject({ url: '/test-only/full?kind=replay&bound=characters', headers: { accept: 'application/json' } })
    assert.equal(response.json().detail, 'The server holds as many records as it may. Please try again in a few minutes.')
    assert.equal(t.logs.events('state.full').at(-1)?.setting, 'ProjectTemplate:State:Embedded:MaxMegabytes')
  })
})
