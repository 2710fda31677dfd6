/**
 * The failure class -> what the user reads mapping (src/sign-in/sign-in-failure.ts), as data
 * (issue 40, item 11): every class a provider can report has its outcome written out here, so a
 * changed mapping fails this test; the organisation refusal (`tenant`: AllowedTenants does not
 * list the user's organisation) is a page of its own with the request id, never the login page's
 * "Please try again"; and the login page cannot be made to show a refusal's text.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OUTCOME_OF, SIGN_IN_FAILURES, SIGN_IN_OUTCOMES, outcomeMessage, outcomeOf, type SignInFailure, type SignInOutcome } from '../../src/sign-in/sign-in-failure.js'

/** Every failure class and what the user is shown. */
const EXPECTED: Readonly<Record<SignInFailure, SignInOutcome>> = {
  cancelled: 'cancelled',
  correlation: 'correlation',
  replay: 'correlation',
  unavailable: 'unavailable',
  group_overage: 'group_overage',
  tenant: 'organisation',
  provider_error: 'failed',
  claims: 'failed',
  token: 'failed',
  id_token: 'failed',
  nonce: 'failed',
  issuer: 'failed',
  audience: 'failed',
  expired: 'failed',
  signature: 'failed',
  unknown_key: 'failed',
  userinfo: 'failed',
  pushed_authorization: 'failed',
  auth_time: 'failed',
  acr: 'failed',
  amr: 'failed',
  authn_context: 'failed',
  step_up_user: 'failed',
  assertion_unsigned: 'failed',
  destination: 'failed',
  certificate: 'failed',
  unsolicited: 'failed',
  malformed: 'failed',
  decryption: 'failed',
  deprovisioned: 'deprovisioned',
  not_provisioned: 'not_provisioned'
}

test('every failure class has the outcome written out here, and no other', () => {
  assert.deepEqual([...SIGN_IN_FAILURES].sort(), Object.keys(EXPECTED).sort())
  assert.deepEqual(OUTCOME_OF, EXPECTED)
  for (const failure of SIGN_IN_FAILURES) assert.equal(outcomeOf(failure), EXPECTED[failure], failure)
  assert.equal(outcomeOf('not-a-class' as SignInFailure), 'failed')
})

test('what each outcome says and where: only the organisation refusal is a page of its own, and it says the organisation is not set up and asks for the request id', () => {
  assert.deepEqual(Object.fromEntries(Object.entries(SIGN_IN_OUTCOMES).map(([outcome, shown]) => [outcome, shown.page])),
    { cancelled: 'login', correlation: 'login', unavailable: 'login', group_overage: 'login', organisation: 'refusal', deprovisioned: 'refusal', not_provisioned: 'refusal', failed: 'login' })
  const organisation = SIGN_IN_OUTCOMES.organisation.message
  assert.match(organisation, /your organisation is not set up to use this application/)
  assert.match(organisation, /request id/)
  assert.doesNotMatch(organisation, /Please try again/)
  assert.equal(SIGN_IN_OUTCOMES.organisation.code, 'APP_ERR_AUTH_PROVIDER_FAILED')
})

test('a deprovisioned person is told their organisation turned off their access, on a page of its own with the request id (issue 41, item 4)', () => {
  const shown = SIGN_IN_OUTCOMES.deprovisioned
  assert.equal(shown.page, 'refusal')
  assert.match(shown.message, /your organisation has turned off your access to this application/)
  assert.match(shown.message, /request id/)
  assert.doesNotMatch(shown.message, /Please try again/)
  assert.equal(outcomeMessage('deprovisioned'), SIGN_IN_OUTCOMES.failed.message, 'never on the login page')
  assert.match(SIGN_IN_OUTCOMES.not_provisioned.message, /your organisation has not given you access/)
})

test('the login page shows only login outcomes: ?failure=organisation (or anything unknown) reads as failed', () => {
  assert.equal(outcomeMessage('organisation'), SIGN_IN_OUTCOMES.failed.message)
  assert.equal(outcomeMessage('tenant'), SIGN_IN_OUTCOMES.failed.message)
  assert.equal(outcomeMessage('cancelled'), SIGN_IN_OUTCOMES.cancelled.message)
})
