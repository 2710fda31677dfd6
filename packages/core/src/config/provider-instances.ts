/**
 * Every provider the configuration declares, as one list: the contract sections
 * (`Authentication:Providers:<Name>`, their historical names and paths) and the named schemes
 * (`Authentication:Schemes:<Name>`). Each entry names its protocol, its settings and the colon
 * path of its section, so startup rules, the registration of handlers, the configuration summary
 * and readiness all read the same list. Plain data.
 */
import {
  PROVIDER_NAMES, ROOT_KEY, VENDOR_NAMES,
  type ApplicationConfiguration, type JwtBearerSchemeConfiguration, type OpenIdConnectConfiguration, type Saml2Configuration, type SchemeConfiguration, type VendorConfiguration, type VendorName
} from './schema.js'

/** The SAML2 settings with the endpoint paths every SAML2 instance has. */
export type Saml2InstanceSettings = Saml2Configuration & { readonly MetadataPath: string, readonly LogoutPath: string }

export interface ProviderInstanceBase {
  /** The scheme: `/External/Challenge?provider=`, the principal's provider, part of the user's identity. */
  readonly scheme: string
  /** Colon path of the section under the application's root key (`ProjectTemplate:Authentication:Schemes:Partners`). */
  readonly keyPrefix: string
  /** True for a contract section (Providers:<Name>), false for a named scheme (Schemes:<Name>). */
  readonly contract: boolean
}

export type ProviderInstance =
  | ProviderInstanceBase & { readonly protocol: 'OpenIdConnect', readonly settings: OpenIdConnectConfiguration }
  | ProviderInstanceBase & { readonly protocol: 'Saml2', readonly settings: Saml2InstanceSettings }
  | ProviderInstanceBase & { readonly protocol: 'OAuth', readonly vendor: VendorName, readonly settings: VendorConfiguration }
  | ProviderInstanceBase & { readonly protocol: 'JwtBearer', readonly settings: JwtBearerSettingsOfInstance }

/** A JwtBearer scheme's settings (no Type): bearer tokens on API routes, no sign-in (bearer/). */
export type JwtBearerSettingsOfInstance = Omit<JwtBearerSchemeConfiguration, 'Type'>

export type ProviderProtocol = ProviderInstance['protocol']

/** Anonymous path of the contract Saml2 provider's SP metadata (reserved in config/rules.ts RESERVED_PATHS). */
export const SAML2_METADATA_PATH = '/Saml2/Metadata'

/** The contract Saml2 provider's Single Logout endpoint; reserved like the metadata path. */
export const SAML2_LOGOUT_PATH = '/Saml2/Logout'

function contractInstances (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  const providers = config.Authentication.Providers
  const base = (name: string): ProviderInstanceBase => ({ scheme: name, keyPrefix: `${rootKey}:Authentication:Providers:${name}`, contract: true })
  return PROVIDER_NAMES.map((name): ProviderInstance => {
    if (name === 'OpenIdConnect') return { ...base(name), protocol: 'OpenIdConnect', settings: providers.OpenIdConnect }
    if (name === 'Saml2') return { ...base(name), protocol: 'Saml2', settings: { ...providers.Saml2, MetadataPath: SAML2_METADATA_PATH, LogoutPath: SAML2_LOGOUT_PATH } }
    return { ...base(name), protocol: 'OAuth', vendor: name, settings: providers[name] }
  })
}

/**
 * The instance of the named scheme `name` (`<Root>:Authentication:Schemes:<Name>` under `rootKey`),
 * its protocol the one its Type names.
 */
export function namedSchemeInstance (name: string, section: SchemeConfiguration, rootKey: string = ROOT_KEY): ProviderInstance {
  const base: ProviderInstanceBase = { scheme: name, keyPrefix: `${rootKey}:Authentication:Schemes:${name}`, contract: false }
  if (section.Type === 'OpenIdConnect') {
    const { Type: _type, ...settings } = section
    return { ...base, protocol: 'OpenIdConnect', settings: { ...settings, Scheme: name } }
  }
  if (section.Type === 'JwtBearer') {
    const { Type: _type, ...settings } = section
    return { ...base, protocol: 'JwtBearer', settings: { ...settings, Scheme: name } }
  }
  const { Type: _type, ...settings } = section
  return { ...base, protocol: 'Saml2', settings: { ...settings, Scheme: name } }
}

function namedInstances (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return Object.entries(config.Authentication.Schemes).map(([name, section]) => namedSchemeInstance(name, section, rootKey))
}

/** Every declared provider, enabled or not: the contract sections in their order, then the named schemes. */
export function providerInstancesOf (config: ApplicationConfiguration): ProviderInstance[] {
  return providerInstancesUnder(config, ROOT_KEY)
}

/** {@link providerInstancesOf}, each `keyPrefix` under the application's `rootKey`. */
export function providerInstancesUnder (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return [...contractInstances(config, rootKey), ...namedInstances(config, rootKey)]
}

/** Whether an instance signs users in (a challenge, a login-page entry); a JwtBearer scheme only authenticates API calls. */
export const signsIn = (instance: Pick<ProviderInstance, 'protocol'>): boolean => instance.protocol !== 'JwtBearer'

/** The providers whose Enabled is true (whatever Authentication:Enabled says). */
export function enabledProviderInstances (config: ApplicationConfiguration): ProviderInstance[] {
  return enabledProviderInstancesUnder(config, ROOT_KEY)
}

/** {@link enabledProviderInstances}, each `keyPrefix` under the application's `rootKey`. */
export function enabledProviderInstancesUnder (config: ApplicationConfiguration, rootKey: string): ProviderInstance[] {
  return providerInstancesUnder(config, rootKey).filter((instance) => instance.settings.Enabled)
}

/** The colon path of one key of a provider's section. */
export const keyOfInstance = (instance: Pick<ProviderInstance, 'keyPrefix'>, key: string): string => `${instance.keyPrefix}:${key}`

/**
 * The colon path of the section that configures `scheme` under `rootKey`: a contract provider's
 * `Authentication:Providers:<Name>`, else the named scheme's `Authentication:Schemes:<Name>`.
 */
export function sectionKeyOf (scheme: string, rootKey: string = ROOT_KEY): string {
  return `${rootKey}:Authentication:${(PROVIDER_NAMES as readonly string[]).includes(scheme) ? 'Providers' : 'Schemes'}:${scheme}`
}

/** Whether `name` is a vendor slot. */
export const isVendorName = (name: string): name is VendorName => (VENDOR_NAMES as readonly string[]).includes(name)
