/**
 * The startup rules of `<Root>:DataProtection` (docs/security.md): keys that are strong enough,
 * a key directory startup can use, a discriminator of bounded length. Each problem names the full
 * colon path and never a configured value.
 */
import { problem, type Rule } from '../config/rules.js'
import { ROOT_KEY } from '../config/schema.js'
import { inspectKeyStore, keyMaterialOf } from './key-ring.js'

const DATA_PROTECTION = `${ROOT_KEY}:DataProtection`

export const dataProtectionKeysAreStrong: Rule = ({ config }) =>
  config.DataProtection.Keys.flatMap((key, index) => {
    const path = `${DATA_PROTECTION}:Keys:${index}`
    return keyMaterialOf(key.reveal()) !== undefined ? [] : [problem(path, `${path} must be base64 of at least 32 random bytes.`)]
  })

/** The key directory as startup would find it (read-only here): permissions, a missing, malformed or weak key file. */
export const dataProtectionKeyStoreIsUsable: Rule = ({ config, contentRoot }) =>
  contentRoot === undefined ? [] : inspectKeyStore(config.DataProtection.Keys, config.DataProtection.KeyDirectory, contentRoot)

export const applicationDiscriminatorIsShort: Rule = ({ config }) =>
  config.DataProtection.ApplicationDiscriminator.length > 200
    ? [problem(`${DATA_PROTECTION}:ApplicationDiscriminator`, `${DATA_PROTECTION}:ApplicationDiscriminator must be at most 200 characters.`)]
    : []
