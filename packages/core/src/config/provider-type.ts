/**
 * What a provider type is to the configuration, as generic building blocks: the part of an
 * instance every type shares, the rule of one instance, and the one registration a type's folder
 * exports ({@link ProviderType}: its sections' schema, its named schemes' schema and default paths,
 * its instances, its rule). config/ knows no type; providers/provider-types.ts lists the
 * registrations and everything the configuration needs of providers is composed from that list.
 * Plain data.
 */
import type { Static, TObject, TProperties } from '@sinclair/typebox'
import type { ConfigurationProblem } from './bind.js'

/** @public @experimental */
export interface ProviderInstanceBase {
  /** The scheme: `/External/Challenge?provider=`, the principal's provider, part of the user's identity. */
  readonly scheme: string
  /** Colon path of the section under the application's root key (`ProjectTemplate:Authentication:Schemes:Partners`). */
  readonly keyPrefix: string
  /** True for a contract section (Providers:<Name>), false for a named scheme (Schemes:<Name>). */
  readonly contract: boolean
}

/** The colon path of one key of a provider's section. */
export const keyOfInstance = (instance: Pick<ProviderInstanceBase, 'keyPrefix'>, key: string): string => `${instance.keyPrefix}:${key}`

/**
 * The rule of one provider type's settings, for one instance (enabled) of its protocol: the
 * contract section or a named scheme, configured or from the provider source. Keys are named
 * under the instance's `keyPrefix`; a problem never contains a configured value.
 */
export type SettingsRule<I> = (instance: I, environmentName: string) => ConfigurationProblem[]

/** How a provider type is declared as `Authentication:Schemes:<Name>` (its `Type`). */
export interface NamedSchemeType<S extends TObject, I> {
  /** The section's schema, `Type` included. */
  readonly schema: S
  /** The endpoint paths a scheme `name` has unless its path keys say otherwise. */
  readonly defaultPaths: (name: string) => Record<string, string>
  /** The instance of the bound section `name` (its defaults already filled in from the name). */
  readonly instance: (name: string, section: Static<S>, base: ProviderInstanceBase) => I
}

/**
 * One provider type's registration, exported by its folder (`<folder>/provider-type.ts`) and
 * listed once in providers/provider-types.ts: the settings schema, validation and instances of
 * the type all come from it. Its opening (Fastify glue) is keyed by the same `protocol` in
 * plugins/providers/open-provider.ts, where the compiler asks for it.
 */
export interface ProviderType<I extends ProviderInstanceBase & { readonly protocol: string }, P extends TProperties, S extends TObject, A extends TProperties = Record<never, never>> {
  readonly protocol: I['protocol']
  /** Its sections under `Authentication:Providers`, in order (none for a type declared only as named schemes). */
  readonly sections: P
  /**
   * Sections of its own directly under `Authentication`, after `Schemes` (JwtBearer: `Bearer`, the
   * keys every bearer scheme shares); none for most types.
   */
  readonly authenticationSections?: A
  /** The instances of those sections, in order, from the bound `Authentication:Providers`. */
  readonly contractInstances: (providers: Static<TObject<P>>, base: (name: string) => ProviderInstanceBase) => I[]
  /** How it is declared as a named scheme; undefined for a type with contract sections only. */
  readonly namedScheme: NamedSchemeType<S, I> | undefined
  /** The rule of one enabled instance's settings (startup and runtime validation alike). */
  readonly rule: SettingsRule<I>
  /** Whether it signs users in (a challenge, a login-page entry, Domains); a bearer type only authenticates API calls. */
  readonly signsIn: boolean
  /** The paths an enabled instance serves, each with the key that sets it (checked local and distinct at startup). */
  readonly endpointPaths: (instance: I) => ReadonlyArray<{ readonly key: string, readonly path: string }>
}
