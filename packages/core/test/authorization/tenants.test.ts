/** tenantOf / requireTenant: only the one tenant claim issued by the principal's own scheme counts. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { requireTenant, tenantOf, tenantPolicy } from '../../src/authorization/tenants.js'
import { evaluatePolicy } from '../../src/authorization/policies.js'
import { Principal } from '../../src/session/principal.js'
import type { Claim } from '../../src/session/claims.js'

function principal (scheme: string, claims: Claim[]): Principal {
  return new Principal({ sessionId: 's', scheme, claims: [{ type: 'application:sub', value: 'u', issuer: scheme }, ...claims], issuedAt: 0, expiresAt: 1, absoluteExpiresAt: 1 })
}

test('the tenant is the one application:tenant claim issued by the signing-in scheme', () => {
  assert.equal(tenantOf(principal('Contoso', [{ type: 'application:tenant', value: 'a', issuer: 'Contoso' }])), 'a')
  assert.equal(tenantOf(principal('Contoso', [{ type: 'application:tenant', value: 'a', issuer: 'Fabrikam' }])), undefined)
  assert.equal(tenantOf(principal('Contoso', [{ type: 'application:tenant', value: 'a', issuer: 'Contoso' }, { type: 'application:tenant', value: 'b', issuer: 'Contoso' }])), undefined)
  assert.equal(tenantOf(principal('Contoso', [])), undefined)
})

test('a tenant policy allows its tenant and forbids another, and a principal without one', () => {
  const policy = tenantPolicy('a.Orders', 'a')
  assert.equal(evaluatePolicy(policy, principal('Contoso', [{ type: 'application:tenant', value: 'a', issuer: 'Contoso' }])), 'allow')
  assert.equal(evaluatePolicy(policy, principal('Fabrikam', [{ type: 'application:tenant', value: 'b', issuer: 'Fabrikam' }])), 'forbid')
  assert.equal(evaluatePolicy(policy, principal('Fabrikam', [])), 'forbid')
  assert.equal(evaluatePolicy(policy, undefined), 'challenge')
  assert.throws(() => requireTenant(''), TypeError)
})
