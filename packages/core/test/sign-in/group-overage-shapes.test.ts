/**
 * Every form in which a provider says "the groups were left out" is detected (issue 26, item 7),
 * from a data table: `hasgroups` as boolean, string in any case, number and one-item array;
 * `_claim_names` as an object or a JSON string naming `groups` in any case; the SAML
 * `groups.link` attribute with a value, an empty value or none, and a SAML `hasgroups` attribute.
 * Shapes that say nothing (false values, other claim names, malformed JSON) are controls.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { GROUPS_LINK_ATTRIBUTE, groupOverageInClaims, groupOverageInJson, type GroupOverageIndicator } from '../../src/sign-in/group-overage.js'
import type { Claim } from '../../src/session/principal.js'

const JSON_SHAPES: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>, GroupOverageIndicator | undefined]> = [
  ['hasgroups true', { hasgroups: true }, 'hasgroups'],
  ['hasgroups "true"', { hasgroups: 'true' }, 'hasgroups'],
  ['hasgroups "True"', { hasgroups: 'True' }, 'hasgroups'],
  ['hasgroups "TRUE" with blanks', { hasgroups: ' TRUE ' }, 'hasgroups'],
  ['hasgroups 1', { hasgroups: 1 }, 'hasgroups'],
  ['hasgroups "1"', { hasgroups: '1' }, 'hasgroups'],
  ['hasgroups [true]', { hasgroups: [true] }, 'hasgroups'],
  ['hasgroups ["True"]', { hasgroups: ['True'] }, 'hasgroups'],
  ['HasGroups true (a vendor capitalizing)', { HasGroups: true }, 'hasgroups'],
  ['_claim_names { groups }', { _claim_names: { groups: 'src1' } }, 'claim_names'],
  ['_claim_names { Groups }', { _claim_names: { Groups: 'src1' } }, 'claim_names'],
  ['_claim_names { GROUPS }', { _claim_names: { GROUPS: 'src1' } }, 'claim_names'],
  ['_claim_names as a JSON string', { _claim_names: '{"groups":"src1"}' }, 'claim_names'],
  ['_claim_names as a JSON string, Groups', { _claim_names: '{"Groups":"src1"}' }, 'claim_names'],
  ['_Claim_Names { groups }', { _Claim_Names: { groups: 'src1' } }, 'claim_names'],
  ['control: hasgroups false', { hasgroups: false }, undefined],
  ['control: hasgroups "false"', { hasgroups: 'false' }, undefined],
  ['control: hasgroups 0', { hasgroups: 0 }, undefined],
  ['control: hasgroups "yes" (not a form any provider sends)', { hasgroups: 'yes' }, undefined],
  ['control: hasgroups null', { hasgroups: null }, undefined],
  ['control: groups present', { groups: ['staff'] }, undefined],
  ['control: _claim_names for another claim', { _claim_names: { roles: 'src1' } }, undefined],
  ['control: _claim_names malformed JSON', { _claim_names: '{"groups"' }, undefined],
  ['control: _claim_names a JSON array', { _claim_names: '["groups"]' }, undefined],
  ['control: _claim_names an array', { _claim_names: ['groups'] }, undefined],
  ['control: nothing', {}, undefined]
]

const claim = (type: string, value: string): Claim => ({ type, value, issuer: 'https://idp.example.test' })
const SAML_SHAPES: ReadonlyArray<readonly [string, readonly Claim[], readonly string[], GroupOverageIndicator | undefined]> = [
  ['groups.link with a value', [claim(GROUPS_LINK_ATTRIBUTE, 'https://graph.windows.net/t/users/u/getMemberObjects')], [GROUPS_LINK_ATTRIBUTE], 'groups_link'],
  ['groups.link with an empty value (no claim, the attribute named)', [], [GROUPS_LINK_ATTRIBUTE], 'groups_link'],
  ['groups.link in another case', [], ['HTTP://schemas.microsoft.com/Claims/Groups.Link'], 'groups_link'],
  ['groups.link with a leading space (as Microsoft\'s SAML token reference prints it)', [], [' http://schemas.microsoft.com/claims/groups.link'], 'groups_link'],
  ['groups.link under another claims namespace', [], ['http://schemas.microsoft.com/ws/2008/06/identity/claims/groups.link'], 'groups_link'],
  ['hasgroups attribute "true"', [claim('http://schemas.microsoft.com/claims/hasgroups', 'true')], ['http://schemas.microsoft.com/claims/hasgroups'], 'hasgroups'],
  ['hasgroups attribute "True"', [claim('hasgroups', 'True')], ['hasgroups'], 'hasgroups'],
  ['hasgroups attribute "1"', [claim('hasgroups', '1')], ['hasgroups'], 'hasgroups'],
  ['control: hasgroups attribute "false"', [claim('hasgroups', 'false')], ['hasgroups'], undefined],
  ['control: groups as values', [claim('http://schemas.microsoft.com/ws/2008/06/identity/claims/groups', 'g-1')], ['http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'], undefined],
  ['control: no attributes', [], [], undefined]
]

describe('group overage indicators', () => {
  for (const [name, claims, expected] of JSON_SHAPES) {
    test(`JSON claims: ${name} → ${expected ?? 'none'}`, () => {
      assert.equal(groupOverageInJson(claims), expected)
    })
  }
  for (const [name, claims, attributeNames, expected] of SAML_SHAPES) {
    test(`SAML attributes: ${name} → ${expected ?? 'none'}`, () => {
      assert.equal(groupOverageInClaims(claims, attributeNames), expected)
    })
  }
})
