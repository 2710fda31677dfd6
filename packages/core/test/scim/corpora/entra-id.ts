/**
 * Requests shaped as Microsoft Entra ID's provisioning service sends them, from Microsoft's
 * "Tutorial: Develop and plan provisioning for a SCIM endpoint in Microsoft Entra ID"
 * (learn.microsoft.com/entra/identity/app-provisioning/use-scim-to-provision-users-and-groups,
 * "User operations" and "Group operations" request examples) and its "Known issues and
 * resolutions with SCIM 2.0 protocol compliance" (the `"False"` string and capitalised ops the
 * default, non-flagged behaviour sends). `{id}` placeholders are filled by the test.
 */
export const ENTRA_SOURCE = 'learn.microsoft.com/entra/identity/app-provisioning/use-scim-to-provision-users-and-groups'

export const entraCreateUser = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
  externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
  userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
  active: true,
  emails: [{ primary: true, type: 'work', value: 'Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com' }],
  meta: { resourceType: 'User' },
  name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
  roles: []
}

/** GET /Users?filter=... before a create (Entra's matching query). */
export const entraUserNameFilter = 'userName eq "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1"'

export const entraUpdateMultiValued = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [
    { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
    { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' }
  ]
}

/** A filtered replace whose target does not exist yet (the user has no "home" e-mail). */
export const entraReplaceMissingTarget = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Replace', path: 'emails[type eq "home"].value', value: 'home@example.test' }]
}

export const entraUpdateSingleValued = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Replace', path: 'userName', value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com' }]
}

/** The non-compliant default: the boolean as a capitalised string. */
export const entraDisableUserString = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Replace', path: 'active', value: 'False' }]
}

export const entraEnableUserString = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Replace', path: 'active', value: 'True' }]
}

/** The compliant form (aadOptscim062020). */
export const entraDisableUser = {
  Operations: [{ op: 'Replace', path: 'active', value: false }],
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp']
}

/** An incremental-cycle query. */
export const entraActiveSinceFilter = 'active eq true and meta.lastModified ge "2020-01-01T00:00:00Z"'

export const entraCreateGroup = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group', 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/Group'],
  externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
  displayName: 'Orders Admins',
  meta: { resourceType: 'Group' }
}

export const entraAddMember = (userId: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: userId }] }]
})

export const entraRemoveMember = (userId: string): Record<string, unknown> => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: userId }] }]
})

export const entraRenameGroup = {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
  Operations: [{ op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' }]
}
