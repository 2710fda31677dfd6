/**
 * What a deactivation closes, in order (scim/deprovisioning.ts): the mark, then the person's API
 * keys revoked with their own reason (before `revokeUser`, which would revoke them as
 * `owner_revoked`), then the sessions; the audit line counts both. Without API keys the port is
 * absent and nothing else changes.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { DirectoryUser } from '../../src/directory/directory-store.js'
import type { DeprovisionedIdentities } from '../../src/scim/deprovisioned-identities.js'
import { deprovisioningEffects } from '../../src/scim/deprovisioning.js'
import type { UserIdentity } from '../../src/session/user-identity.js'

const identity: UserIdentity = { scheme: 'ContosoSso', issuer: 'https://login.contoso.test', subject: 'ada' }
const user = { id: 'u1', identity } as unknown as DirectoryUser

function recorder (withKeys: boolean): { calls: string[], audits: Array<Record<string, unknown>>, effects: ReturnType<typeof deprovisioningEffects> } {
  const calls: string[] = []
  const audits: Array<Record<string, unknown>> = []
  const deprovisioned = { mark: async () => { calls.push('mark') }, clear: async () => { calls.push('clear') } } as unknown as DeprovisionedIdentities
  const effects = deprovisioningEffects({
    deprovisioned,
    revokeUser: async (who) => { calls.push(`sessions:${who.subject}`); return 2 },
    ...(withKeys ? { revokeApiKeys: async (who: UserIdentity) => { calls.push(`keys:${who.subject}`); return 3 } } : {}),
    audit: (fields) => { audits.push(fields) }
  })
  return { calls, audits, effects }
}

test('a deactivation revokes the person\'s API keys as deprovisioned before their sessions end, and the audit line counts them', async () => {
  const { calls, audits, effects } = recorder(true)
  await effects.closeDoors('Contoso', user, 'deactivated')
  assert.deepEqual(calls, ['mark', 'keys:ada', 'sessions:ada'])
  assert.deepEqual((audits[0]?.revoked as Record<string, unknown>)?.apiKeys, 3)
  assert.deepEqual((audits[0]?.revoked as Record<string, unknown>)?.sessions, 2)
})

test('without API keys: the mark and the sessions only; an unlinked user revokes nothing', async () => {
  const { calls, audits, effects } = recorder(false)
  await effects.closeDoors('Contoso', user, 'deleted')
  assert.deepEqual(calls, ['mark', 'sessions:ada'])
  assert.equal((audits[0]?.revoked as Record<string, unknown>)?.apiKeys, 0)
  const unlinked = recorder(true)
  await unlinked.effects.closeDoors('Contoso', { id: 'u2' } as unknown as DirectoryUser, 'deactivated')
  assert.deepEqual(unlinked.calls, [])
})
