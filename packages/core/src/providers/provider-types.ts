/**
 * The provider types, one registration each (config/provider-type.ts), listed once in
 * {@link PROVIDER_TYPES}: the application schema (application-schema.ts), the startup and runtime
 * validation (settings-rules.ts, configuration-rules.ts, runtime-definitions.ts), the generated
 * configuration reference and every provider instance the configuration declares all come from
 * this list. A new provider type is its folder (`settings-schema.ts`, `settings-rules.ts`,
 * `provider-type.ts`) plus one entry here; its opening is then asked for by the compiler in
 * plugins/providers/open-provider.ts (DEVELOPING.md, "Add a provider type"). Plain data.
 */
import type { ProviderType } from '../config/provider-type.js'
import { apiKeyType } from '../api-keys/provider-type.js'
import { jwtBearerType } from '../bearer/provider-type.js'
import { vendorType } from '../oauth/provider-type.js'
import { openIdConnectType } from '../oidc/provider-type.js'
import { saml2Type } from '../saml2/provider-type.js'

/** Every provider type, keyed by its protocol, in registration order (their sections and instances follow it). */
export const PROVIDER_TYPES = {
  OpenIdConnect: openIdConnectType,
  Saml2: saml2Type,
  OAuth: vendorType,
  JwtBearer: jwtBearerType,
  ApiKey: apiKeyType
} as const

type Types = typeof PROVIDER_TYPES
/** @public @experimental */
export type ProviderProtocol = keyof Types
// The parts of a registration, read from its type.
type InstanceOf<T> = T extends { readonly rule: (instance: infer I, environmentName: string) => unknown } ? I : never
type SectionsOf<T> = T extends { readonly sections: infer P } ? P : never
type SchemeSchemaOf<T> = T extends { readonly namedScheme: { readonly schema: infer S } | undefined } ? S : never
type OwnSectionsOf<T> = T extends { readonly authenticationSections?: infer A } ? A : never
type UnionToIntersection<U> = (U extends unknown ? (union: U) => void : never) extends (intersection: infer I) => void ? I : never

/** The list, each entry keyed by its own protocol (the compiler refuses an entry under another key). */
const KEYED_BY_PROTOCOL: { readonly [P in ProviderProtocol]: { readonly protocol: P } } = PROVIDER_TYPES

/** A provider instance of any type: the contract section, a named scheme or a definition from the provider source. @public @experimental */
export type ProviderInstance = { [P in ProviderProtocol]: InstanceOf<Types[P]> }[ProviderProtocol]
/** The contract sections of every type (`Authentication:Providers:<Name>`), name -> schema. */
export type ProviderSections = UnionToIntersection<SectionsOf<Types[ProviderProtocol]>>
/** The section schema of each type a named scheme (`Authentication:Schemes:<Name>`) may be. */
export type SchemeSchema = SchemeSchemaOf<Types[ProviderProtocol]>
/** The protocols a named scheme (Authentication:Schemes:<Name>:Type) may be. @public */
export type SchemeType = { [P in ProviderProtocol]: [SchemeSchemaOf<Types[P]>] extends [never] ? never : P }[ProviderProtocol]
/** @public */
export type ProviderName = keyof ProviderSections & string
/** The types' own sections directly under `Authentication` (JwtBearer's `Bearer`), name -> schema. */
export type AuthenticationSections = UnionToIntersection<Exclude<OwnSectionsOf<Types[ProviderProtocol]>, undefined>>

/** A registration as the composition reads it (each entry's own types aside). */
type AnyProviderType = ProviderType<any, any, any>
const registrations = (): AnyProviderType[] => Object.values(PROVIDER_TYPES) as AnyProviderType[]
const registrationOf = (protocol: ProviderProtocol): AnyProviderType => KEYED_BY_PROTOCOL[protocol] as AnyProviderType

/** Every contract section (name -> schema), in registration order. */
export const PROVIDER_SECTIONS = Object.assign({}, ...registrations().map((type) => type.sections)) as ProviderSections

/** Every type's own sections under `Authentication`, after `Schemes`, in registration order. */
export const AUTHENTICATION_SECTIONS = Object.assign({}, ...registrations().map((type) => type.authenticationSections ?? {})) as AuthenticationSections

/** Every external provider section: the OpenID Connect and SAML2 handlers, then the vendor slots, in registration order. @public */
export const PROVIDER_NAMES = Object.keys(PROVIDER_SECTIONS) as readonly ProviderName[]

/** The protocols a named scheme (Authentication:Schemes:<Name>:Type) may be, in registration order. @public */
export const SCHEME_TYPES = registrations().filter((type) => type.namedScheme !== undefined).map((type) => type.protocol) as readonly SchemeType[]

/** Names a named scheme may not take: the cookie scheme and the contract's provider sections. @public */
export const RESERVED_SCHEME_NAMES: readonly string[] = ['Cookies', ...PROVIDER_NAMES]

/** Every named scheme's section schema, in the order of {@link SCHEME_TYPES}. */
export const SCHEME_SCHEMAS = SCHEME_TYPES.flatMap((type) => registrationOf(type).namedScheme?.schema ?? []) as readonly SchemeSchema[]

/** The registration of `protocol`, with its instance type. */
export function providerTypeOf<P extends ProviderProtocol> (protocol: P): ProviderType<Extract<ProviderInstance, { protocol: P }>, SectionsOf<Types[P]>, SchemeSchemaOf<Types[P]> extends never ? never : SchemeSchemaOf<Types[P]>> {
  return registrationOf(protocol)
}

/** The default paths of a named scheme of `type` called `name` (unless its path keys say otherwise). */
export function defaultPathsOf (type: SchemeType, name: string): Record<string, string> {
  return registrationOf(type).namedScheme?.defaultPaths(name) ?? {}
}

/** Whether an instance signs users in (a challenge, a login-page entry); a JwtBearer scheme only authenticates API calls. */
export const signsIn = (instance: Pick<ProviderInstance, 'protocol'>): boolean => registrationOf(instance.protocol).signsIn

/** The paths an enabled instance serves, each with the key that sets it. */
export const endpointPathsOf = (instance: ProviderInstance): ReadonlyArray<{ readonly key: string, readonly path: string }> =>
  registrationOf(instance.protocol).endpointPaths(instance)

/** The problems of one instance's settings, by its type's rule. */
export const typeRuleProblems = (instance: ProviderInstance, environmentName: string): ReturnType<AnyProviderType['rule']> =>
  registrationOf(instance.protocol).rule(instance, environmentName)
