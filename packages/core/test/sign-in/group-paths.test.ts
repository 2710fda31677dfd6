/**
 * findGroupPathMismatch (src/sign-in/group-paths.ts) as a data table: which signed-in group claims,
 * against which configured policies, are reported as arriving as paths (`/admins`) and which keys
 * name such a group without its slash.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AuthorizationConfiguration } from '../../src/config/schema.js'
import type { Claim } from '../../src/session/principal.js'
import { findGroupPathMismatch } from '../../src/sign-in/group-paths.js'
import { ROOT_KEY } from '../../src/config/schema.js'

const ROLES = 'ProjectTemplate:Authorization:AdministratorRoles'
const PERMISSIONS = 'ProjectTemplate:Authorization:ManageApplicationPermissions'

const authorization = (overrides: Partial<AuthorizationConfiguration> = {}): AuthorizationConfiguration => ({
  RequireAuthenticatedUserByDefault: true,
  RoleClaimType: 'application:role',
  PermissionClaimType: 'application:permission',
  AdministratorRoles: ['Administrator'],
  ManageApplicationPermissions: ['application.manage'],
  ...overrides
})
const groups = (...values: string[]): Claim[] => values.map((value) => ({ type: 'application:group', value, issuer: 'idp' }))

const CASES: ReadonlyArray<readonly [string, Claim[], AuthorizationConfiguration, readonly string[] | undefined]> = [
  ['no group claims', [], authorization(), undefined],
  ['groups without paths', groups('admins', 'staff'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['admins'] }), undefined],
  ['a path in an original (unmapped) claim only', [{ type: 'member', value: '/admins', issuer: 'idp' }], authorization(), undefined],
  ['paths, no configured policy reads groups', groups('/admins'), authorization(), []],
  ['paths, the role policy names the bare group', groups('/admins'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['admins'] }), [ROLES]],
  ['a subgroup path, the role policy names its last segment', groups('/staff/admins'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: [' admins '] }), [ROLES]],
  ['paths, both policies read groups and name bare groups', groups('/admins', '/managers'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['admins'], PermissionClaimType: 'application:group', ManageApplicationPermissions: ['managers'] }), [ROLES, PERMISSIONS]],
  ['paths, the role policy names the path', groups('/admins'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['/admins'] }), undefined],
  ['paths, the role policy names another path', groups('/admins'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['/ops'] }), undefined],
  ['paths, the role policy names an unrelated bare group', groups('/admins'), authorization({ RoleClaimType: 'application:group', AdministratorRoles: ['ops'] }), []]
]

for (const [name, claims, settings, keys] of CASES) {
  test(`${name}: ${keys === undefined ? 'nothing reported' : `reported with keys [${keys.join(', ')}]`}`, () => {
    const result = findGroupPathMismatch(claims, settings, ROOT_KEY)
    assert.deepEqual(result === undefined ? undefined : [...result.keys], keys === undefined ? undefined : [...keys])
  })
}
