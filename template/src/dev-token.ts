/**
 * `NODE_ENV=development npm run dev-token --silent -- [--scope <scope>]... [--sub <subject>]`: prints an
 * access token for this app's JwtBearer scheme with `DevelopmentTokens: true`, signed with a key
 * kept under `.state/dev-tokens/` (created on first use). Development only: it refuses to run
 * elsewhere, and the app never accepts such a token outside Development. Not bundled.
 */
import { runDevToken } from '@project-template/core'
import { APPLICATION_NAME } from './application-name.js'
import { CONTENT_ROOT } from './content-root.js'

await runDevToken({ contentRoot: CONTENT_ROOT, applicationName: APPLICATION_NAME })
