/**
 * A distinctive secret planted in every secret-bearing place of an invalid configuration; tests
 * assert that it never appears in any output.
 */
export const PLANTED_SECRET = 'PLANTED-SECRET-7f3a9c'

/** Invalid configuration carrying the planted secret in every secret-bearing place. */
export const INVALID_WITH_PLANTED_SECRET: Record<string, string> = {
  ProjectTemplate__Authentication__Providers__OpenIdConnect__Enabled: 'true',
  ProjectTemplate__Authentication__Providers__OpenIdConnect__Authority: `http://user:${PLANTED_SECRET}@idp.example.test`,
  ProjectTemplate__Authentication__Providers__OpenIdConnect__ClientSecret: PLANTED_SECRET,
  ProjectTemplate__Authentication__Providers__VendorA__Enabled: 'true',
  ProjectTemplate__Authentication__Providers__VendorA__ClientSecret: PLANTED_SECRET,
  ProjectTemplate__Authentication__Providers__VendorB__ClientSecert: PLANTED_SECRET,
  ProjectTemplate__DataProtection__Keys__0: PLANTED_SECRET,
  ProjectTemplate__Authentication__Cookie__ExpireMinutes: PLANTED_SECRET
}

const P = 'ProjectTemplate:Authentication:Providers'
export const EXPECTED_SENTENCES = [
  'ProjectTemplate:Authentication:Cookie:ExpireMinutes must be an integer from 1 to 43200.',
  `${P}:OpenIdConnect:ClientId is required when the provider is enabled.`,
  `${P}:OpenIdConnect:Authority must be an absolute https URL (http is allowed only for a loopback host in Development).`,
  `${P}:VendorA:ClientId is required when the provider is enabled.`,
  `${P}:VendorA:AuthorizationEndpoint is required when the provider is enabled.`,
  `${P}:VendorA:TokenEndpoint is required when the provider is enabled.`,
  `${P}:VendorA:UserInformationEndpoint is required when the provider is enabled.`,
  'ProjectTemplate:DataProtection:Keys:0 must be base64 of at least 32 random bytes.',
  'ProjectTemplate:Hosting:PublicOrigin is required outside Development when an external provider is enabled; every redirect_uri and SAML endpoint URL is built from it.'
]
