/**
 * The OAuth 2.0 vendor slots' provider type registration (config/provider-type.ts): one contract
 * section per slot (settings-schema.ts), its rule (settings-rules.ts), no named schemes. Listed
 * once in providers/provider-types.ts; opened by plugins/providers/oauth-vendors.ts.
 */
import { keyOfInstance, type ProviderType } from '../config/provider-type.js'
import { vendorSettingsRule } from './settings-rules.js'
import { VENDOR_NAMES, vendorSections, type VendorInstance, type VendorName, type VendorSchema } from './settings-schema.js'

export const vendorType: ProviderType<VendorInstance, Record<VendorName, VendorSchema>, never> = {
  protocol: 'OAuth',
  sections: vendorSections(),
  contractInstances: (providers, base) => VENDOR_NAMES.map((name) => ({ ...base(name), protocol: 'OAuth', vendor: name, settings: providers[name] })),
  namedScheme: undefined,
  rule: vendorSettingsRule,
  signsIn: true,
  endpointPaths: (instance) => [{ key: keyOfInstance(instance, 'CallbackPath'), path: instance.settings.CallbackPath }]
}
