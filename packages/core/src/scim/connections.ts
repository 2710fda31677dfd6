/**
 * SCIM connections (issue 41, item 1): one customer's directory, bound to exactly one application
 * tenant and, through it, to that tenant's sign-in schemes (`Provisioning:Connections:<Name>`).
 * What a connection is, which connection a sign-in belongs to, and the startup rule. Plain data.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { isMissing, problem, type Rule } from '../config/rules.js'
import type { ProvisioningConnectionConfiguration } from '../config/schema.js'
import { foldCase } from '../directory/attributes.js'
import { emailLinkingOf, emailLinkingProblems, type EmailLinking } from './email-linking.js'

/** One connection, as the SCIM endpoints and the sign-in step use it. @experimental */
export interface ScimConnection {
  /** `<Name>` of `Provisioning:Connections:<Name>`: the path segment of `/scim/v2/<Name>/`. */
  readonly name: string
  readonly tenant: string
  /** Configured schemes whose users belong here without a tenant claim. */
  readonly schemes: readonly string[]
  /** The sign-in claim compared with `externalId`; undefined: the subject. */
  readonly externalIdClaim?: string
  readonly requireProvisionedUsers: boolean
  /** `LinkByEmail` with its `VerifiedDomains` (email-linking.ts); undefined: never by e-mail. */
  readonly linkByEmail?: EmailLinking
  /** Folded group externalId or displayName -> application roles. */
  readonly groupRoles: ReadonlyMap<string, readonly string[]>
}

/** `"<group>=<role>"` entries as a map (the group folded: matched case-insensitively). */
export function groupRolesOf (entries: readonly string[]): Map<string, string[]> {
  const roles = new Map<string, string[]>()
  for (const entry of entries) {
    const separator = entry.lastIndexOf('=')
    const group = foldCase(entry.slice(0, separator).trim())
    const role = entry.slice(separator + 1).trim()
    roles.set(group, [...new Set([...(roles.get(group) ?? []), role])])
  }
  return roles
}

function linkByEmailOf (section: ProvisioningConnectionConfiguration): { linkByEmail?: EmailLinking } {
  const linking = emailLinkingOf(section)
  return linking === undefined ? {} : { linkByEmail: linking }
}

/** The configured connections, by name. */
export function connectionsOf (sections: Readonly<Record<string, ProvisioningConnectionConfiguration>>): Map<string, ScimConnection> {
  return new Map(Object.entries(sections).map(([name, section]) => [name, {
    name,
    tenant: section.Tenant.trim(),
    schemes: section.Schemes.map((scheme) => scheme.trim()).filter((scheme) => scheme !== ''),
    ...(section.ExternalIdClaim.trim() === '' ? {} : { externalIdClaim: section.ExternalIdClaim.trim() }),
    requireProvisionedUsers: section.RequireProvisionedUsers,
    ...linkByEmailOf(section),
    groupRoles: groupRolesOf(section.GroupRoles)
  }]))
}

/**
 * The connection a sign-in belongs to: the one of its tenant (the `application:tenant` claim the
 * scheme issued), else the one listing its scheme; undefined when none does.
 */
export function connectionOfSignIn (connections: Iterable<ScimConnection>, scheme: string, tenant: string | undefined): ScimConnection | undefined {
  const all = [...connections]
  return (tenant === undefined ? undefined : all.find((connection) => connection.tenant === tenant)) ??
    all.find((connection) => connection.schemes.includes(scheme))
}

const CONNECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/** The refusal of a tenant another connection provisions (`key`: the `:Tenant` key). */
export const tenantTakenMessage = (key: string, owner: string): string => `${key} names the tenant of connection ${owner}; a tenant has one connection.`

/** The refusal of a scheme another connection lists (`key`: the `:Schemes:<i>` key). */
export const schemeTakenMessage = (key: string, owner: string): string => `${key} names a scheme of connection ${owner}; a scheme belongs to one connection.`

/** The refusal of a `Schemes` entry that names no enabled sign-in scheme (startup and each reload of the provider source). */
export const schemeNotEnabledMessage = (key: string): string => `${key} names no enabled sign-in scheme; list the name of an enabled provider that signs users in.`

/** The problems of one connection's own keys (`key(sub)`: its colon path and `sub`); configured and provider-source connections alike. */
export function connectionProblems (name: string, section: ProvisioningConnectionConfiguration, key: (sub: string) => string): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  if (!CONNECTION_NAME.test(name)) problems.push(problem(key(''), `${key('')}: a connection name is 1 to 64 letters, digits, - and _, starting with a letter (it is a path segment).`))
  if (isMissing(section.Tenant)) problems.push(problem(key(':Tenant'), `${key(':Tenant')} is required: the application tenant this connection provisions.`))
  section.GroupRoles.forEach((entry, index) => {
    const separator = entry.lastIndexOf('=')
    if (separator <= 0 || entry.slice(0, separator).trim() === '' || entry.slice(separator + 1).trim() === '') {
      problems.push(problem(key(`:GroupRoles:${index}`), `${key(`:GroupRoles:${index}`)} must be "<group externalId or displayName>=<role>".`))
    }
  })
  problems.push(...emailLinkingProblems(section, key))
  return problems
}

/** A tenant or a scheme named by two connections: a sign-in would belong to both. */
function sharedProblems (sections: Readonly<Record<string, ProvisioningConnectionConfiguration>>, key: (name: string, sub: string) => string): ConfigurationProblem[] {
  const problems: ConfigurationProblem[] = []
  const tenants = new Map<string, string>()
  const schemes = new Map<string, string>()
  for (const [name, section] of Object.entries(sections)) {
    const tenant = section.Tenant.trim()
    if (tenant !== '' && tenants.has(tenant)) problems.push(problem(key(name, ':Tenant'), tenantTakenMessage(key(name, ':Tenant'), tenants.get(tenant) ?? '')))
    if (tenant !== '' && !tenants.has(tenant)) tenants.set(tenant, name)
    section.Schemes.forEach((scheme, index) => {
      const owner = schemes.get(scheme.trim())
      if (owner !== undefined && owner !== name) problems.push(problem(key(name, `:Schemes:${index}`), schemeTakenMessage(key(name, `:Schemes:${index}`), owner)))
      else schemes.set(scheme.trim(), name)
    })
  }
  return problems
}

/** The startup rule of `Provisioning:Connections` (checked whether or not provisioning is enabled). */
export const provisioningConnectionSettings: Rule = ({ config, rootKey }) => {
  const sections = config.Provisioning.Connections
  const key = (name: string, sub: string): string => `${rootKey}:Provisioning:Connections:${name}${sub}`
  return [
    ...Object.entries(sections).flatMap(([name, section]) => connectionProblems(name, section, (sub) => key(name, sub))),
    ...sharedProblems(sections, key)
  ]
}
