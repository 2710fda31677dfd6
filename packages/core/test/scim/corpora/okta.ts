/**
 * Requests shaped as Okta's provisioning integration sends them, from Okta's "SCIM 2.0 protocol
 * reference" (developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20): the `userName eq`
 * query before a create, the create with a `password`, the full-resource PUT, the path-less
 * `replace` of `active`, and the group operations. `{id}` placeholders are filled by the test.
 */
export const OKTA_SOURCE = 'developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20'

export const oktaUserNameQuery = '?filter=userName%20eq%20%22test.user%40okta.local%22&startIndex=1&count=100'

export const oktaCreateUser = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: 'test.user@okta.local',
  name: { givenName: 'Test', familyName: 'User' },
  emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
  displayName: 'Test User',
  locale: 'en-US',
  externalId: '00ujl29u0le5T6Aj10h7',
  groups: [],
  password: '1mz050nq',
  active: true
}

export const oktaReplaceUser = (id: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id,
  userName: 'test.user@okta.local',
  name: { givenName: 'Another', middleName: 'Bob', familyName: 'User' },
  emails: [{ primary: true, value: 'test.user@okta.local', type: 'work' }],
  displayName: 'Another User',
  locale: 'en-US',
  externalId: '00ujl29u0le5T6Aj10h7',
  groups: [],
  password: '1mz050nq',
  active: true
})

export const oktaDeactivateUser = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'replace', value: { active: false } }]
}

export const oktaCreateGroup = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Test SCIMv2', members: [] }

export const oktaRenameGroup = (id: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'replace', value: { id, displayName: 'Test SCIMv2 renamed' } }]
})

export const oktaAddMember = (userId: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'add', path: 'members', value: [{ value: userId, display: 'test.user@okta.local' }] }]
})

export const oktaRemoveMember = (userId: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'remove', path: `members[value eq "${userId}"]` }]
})
